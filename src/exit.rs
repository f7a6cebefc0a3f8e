//! Named exit codes: the contract with shell scripts, cron and CI. Documented in the README;
//! never renumber one.

/// Success; for `classify`, at least one log matched a signature.
pub const SUCCESS: u8 = 0;
/// `classify`: no log matched any signature (like grep's 1).
pub const NO_MATCH: u8 = 1;
/// `pr`: a failed job is likely the PR's own or unknown (every other failure a known flake,
/// broken on the default branch, or infrastructure exits 0).
pub const PR_FAILURE: u8 = 1;
/// An error that fits no narrower code, and command-line usage errors (clap's own code).
pub const ERROR: u8 = 2;
/// Bad input: a broken signature file or config, a malformed date, an unreadable or binary log.
pub const INVALID_INPUT: u8 = 3;
/// GitHub refused the credentials (401) or access (403).
pub const GITHUB_AUTH: u8 = 4;
/// GitHub does not know the repository or resource (404).
pub const GITHUB_NOT_FOUND: u8 = 5;
/// The rate limit ran out: what was collected is stored; run the same command again later.
pub const RATE_LIMITED: u8 = 6;
/// The API host did not answer (DNS, connection, timeouts after retries).
pub const NETWORK: u8 = 7;
/// The cache directory or store cannot be opened or written, or the store is busy: a write
/// waited more than 30 s for other writers' transactions (several runs may share a store; no
/// lock is held for a whole run).
pub const STORE: u8 = 8;
/// `report`, `nightly`: the report was written, but the store does not hold the whole window
/// yet (a survey stopped early or is still running); its figures leave the rest out. Run the
/// survey again, or pass `--allow-incomplete` to accept it (exit 0).
pub const INCOMPLETE: u8 = 9;
/// `nightly --fail-on`: the kind of change asked about was found.
pub const ALERT: u8 = 10;
/// flakestat could not do something of its own, whatever the input: start its async runtime
/// (threads), set up TLS (the system's root certificates), sign a GitHub App's JWT, send a
/// request it built off the API host. Not the user's input (3): the message says what failed.
pub const INTERNAL: u8 = 11;
/// Interrupted by Ctrl-C (SIGINT): 128 + 2, as shells report it.
pub const INTERRUPTED: u8 = 130;
