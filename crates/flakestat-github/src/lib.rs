//! The GitHub client: the only place the HTTP client appears. It talks HTTP and nothing else:
//! what is asked for is kept by its callers (flakestat-sync brings the store up to date through
//! it; `flakestat pr` posts comments and check runs through it).
//!
//! `client` talks to GitHub (budget, retries, secondary limits, conditional requests, log
//! redirects) over its own small transport (`client/transport.rs`: hyper-util and rustls);
//! `pages` walks a paginated listing along `Link: rel="next"` (a conditional walk keeps its
//! pages where its caller says, [`pages::KeptPages`]); `wire` holds GitHub's JSON shapes;
//! `checks` and `comments` write a PR's check runs and comments. Nothing here reads the
//! environment, the terminal or the store: settings arrive in `ClientConfig`, and progress
//! leaves through the `Progress` trait.

pub mod checks;
mod client;
pub mod comments;
pub mod pages;
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod testing;
pub mod wire;

pub use client::{
    AppAuth, AppKey, AppKeyError, Blob, ClientConfig, DEFAULT_CONCURRENCY, DEFAULT_MAX_LOG_SIZE,
    DEFAULT_MAX_RESPONSE_SIZE, GitHubClient, Response, SPOOL_AT, StatsSnapshot, check_api_url,
};

use flakestat_core::model::Timestamp;

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A setting that cannot be used (a token an HTTP header cannot carry, an artifact pattern
    /// that is not a glob): the user's input.
    #[error("{0}")]
    Config(String),
    /// Something flakestat could not do for itself, whatever the input: start its async
    /// runtime, set up TLS (the system's roots), sign a GitHub App's JWT, send a request it
    /// built off the API host.
    #[error("{0}")]
    Internal(String),
    /// The API root is not something flakestat can talk to (not a URL, not http(s), no host).
    #[error("{0}")]
    ApiRoot(String),
    /// A token would go over plain http to another machine.
    #[error(
        "refusing to send the token over plain http to {api_url}: anyone on the way could read it; use https"
    )]
    InsecureHttp { api_url: String },
    #[error(
        "GitHub refused the credentials ({status}: {message}); check GITHUB_TOKEN / GH_TOKEN or run `gh auth login`"
    )]
    Unauthorized { status: u16, message: String },
    #[error(
        "GitHub denied access ({status}: {message}); the token needs read access to the repository's Actions (repo or public_repo scope, or `actions: read`)"
    )]
    Forbidden { status: u16, message: String },
    /// GitHub refused the App's JWT (a key not the App's, an unknown App id, a clock far off).
    #[error(
        "GitHub refused the GitHub App's credentials ({status}: {message}); check that the App id and the private key belong to the same App, that the key is still listed in the App's settings, and that this machine's clock is right"
    )]
    AppRefused { status: u16, message: String },
    #[error("{0}")]
    NotFound(String),
    /// An owner's repository listing found no organisation or user of that name.
    #[error("GitHub knows no organisation or user {owner:?} (or the token cannot see it)")]
    NoSuchOwner { owner: String },
    #[error(
        "the GitHub rate limit is spent until {reset}; what was collected is stored: run the same command again after that"
    )]
    RateLimited { reset: Timestamp },
    #[error(
        "GitHub's secondary rate limit kept refusing ({0}); what was collected is stored: run the same command again in a few minutes"
    )]
    SecondaryLimit(String),
    #[error(
        "GitHub did not answer: {0}; check the network and the API root, then run the same command again (what was collected is stored)"
    )]
    Network(String),
    #[error("GitHub answered {status} to {url}: {message}")]
    Unexpected {
        url: String,
        status: u16,
        message: String,
    },
    #[error(
        "the answer to {url} is {size} bytes or more, over the {limit}-byte limit for an API answer; refused (GitHub's pages are far smaller: check the API root)"
    )]
    TooLarge { url: String, size: u64, limit: u64 },
    #[error("{0}")]
    Spool(String),
    /// A download that cannot be had (a redirect not followed): the caller records it and goes on.
    #[error("{0}")]
    Unavailable(String),
    #[error("GitHub's answer to {url} does not parse: {error}")]
    Parse { url: String, error: String },
    /// The store failed under a caller that keeps what it fetched there (flakestat-sync): the
    /// store's own error (`flakestat_store::StoreError`), which this crate does not know.
    #[error(transparent)]
    Store(Box<dyn std::error::Error + Send + Sync>),
    #[error("interrupted; what was collected is stored: run the same command again to resume")]
    Interrupted,
}

/// What the survey reports as it goes; the `cli` draws bars from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressEvent {
    /// Runs seen in listings so far (distinct).
    RunsListed(u64),
    /// Runs whose jobs must be fetched (added to the total).
    JobsQueued(u64),
    /// One run's jobs stored.
    JobsDone,
    /// Failed-job logs to fetch (added to the total).
    LogsQueued(u64),
    /// One log settled (stored, expired or missing), with the bytes downloaded.
    LogDone { bytes: u64 },
    /// Waiting until a time (rate limit reset, secondary limit).
    Waiting { until: Timestamp, why: &'static str },
    /// A phase starts.
    Phase(&'static str),
    /// Something worth one line.
    Note(String),
    /// A log (or an attempt's archive) over the client's log size limit (`max_log_size`,
    /// bytes): `kept` its first bytes that were stored and classified, `None` when it was not
    /// read at all. The caller words it (naming its own setting for the limit).
    LogTooLarge {
        what: String,
        limit: u64,
        kept: Option<u64>,
    },
    /// Something worth one line at `-v`.
    Detail(String),
    /// One request answered (`-vv`): status and URL (never a header).
    Request { status: u16, url: String },
}

/// Receives progress; `()` ignores it.
pub trait Progress: Send + Sync {
    fn event(&self, event: ProgressEvent);
}

impl Progress for () {
    fn event(&self, _event: ProgressEvent) {}
}
