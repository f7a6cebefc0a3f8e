//! Settings every command resolves the same way, once, at the edge, before any work starts.
//! Precedence: flag, then environment, then `flakestat.toml`, then default (written next to
//! each). A value that cannot be used is a [`CliError`] naming its flag (exit 3).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::config::load_config;
use super::error::CliError;
use crate::analysis::AnalysisConfig;
use crate::model::{Repo, SignatureId};

use crate::store::{PostgresUrl, StoreLocation};

/// The public API root.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// A GitHub token. Its `Debug` and `Display` never show it.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// The secret itself, for the client that sends it to the API host. Nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// Where a token came from, for messages (never the token itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    GithubToken,
    GhToken,
    GhCli,
}

impl fmt::Display for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TokenSource::GithubToken => "GITHUB_TOKEN",
            TokenSource::GhToken => "GH_TOKEN",
            TokenSource::GhCli => "`gh auth token`",
        })
    }
}

/// `--cache-dir`, else `FLAKESTAT_CACHE_DIR`, else the platform cache folder
/// (`~/.cache/flakestat` on Linux, `~/Library/Caches/flakestat` on macOS,
/// `%LOCALAPPDATA%\flakestat\cache` on Windows).
pub fn resolve_cache_dir(flag: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(dir) = flag {
        return Ok(dir.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("FLAKESTAT_CACHE_DIR").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "flakestat")
        .map(|dirs| dirs.cache_dir().to_path_buf())
        .ok_or_else(|| {
            CliError::CacheDir(
                "no home folder to put the cache in: pass --cache-dir or set FLAKESTAT_CACHE_DIR"
                    .into(),
            )
        })
}

/// Where the store is: `--store URL` (a PostgreSQL server), else `--cache-dir DIR` (the SQLite
/// store in that folder), else `FLAKESTAT_STORE` (a PostgreSQL URL), else the SQLite store in
/// `FLAKESTAT_CACHE_DIR` or the platform cache folder. A malformed URL is invalid input.
pub fn resolve_store(
    store: Option<&str>,
    cache_dir: Option<&Path>,
) -> Result<StoreLocation, CliError> {
    let postgres = |text: &str, name: &str| {
        PostgresUrl::parse(text)
            .map(StoreLocation::Postgres)
            .map_err(|e| CliError::Invalid(format!("{name}: {e}")))
    };
    if let Some(url) = store {
        return postgres(url, "--store");
    }
    if cache_dir.is_none()
        && let Ok(url) = std::env::var("FLAKESTAT_STORE")
        && !url.trim().is_empty()
    {
        return postgres(&url, "FLAKESTAT_STORE");
    }
    let cache_dir = resolve_cache_dir(cache_dir)?;
    Ok(StoreLocation::Sqlite { cache_dir })
}

/// Where a command's store is, `--replay` considered: `--store`, else `--cache-dir`, else with
/// `--replay DIR` the replay's own store ([`replay_store`]; `FLAKESTAT_STORE` is not read: a
/// replay never mixes with real data), else [`resolve_store`].
pub fn resolve_store_or_replay(
    store: Option<&str>,
    cache_dir: Option<&Path>,
    replay: Option<&Path>,
) -> Result<super::source::ResolvedStore, CliError> {
    let (location, replay_store) = match replay {
        Some(dir) if store.is_none() && cache_dir.is_none() => (replay_store(dir)?, true),
        _ => (resolve_store(store, cache_dir)?, false),
    };
    Ok(super::source::ResolvedStore {
        location,
        replay_store,
    })
}

/// The folder of the cache folder (`FLAKESTAT_CACHE_DIR`, else the platform's) that holds the
/// replays' stores, one per recording.
pub const REPLAY_STORES: &str = "replay";

/// The store of a replay of `dir`: `replay/<folder>-<digest>` in the cache folder, the digest
/// (SHA-256, 16 hex digits) of the recording's files. `survey --replay DIR` writes it and
/// `report --replay DIR` reads it; two recordings (or two versions of one) never share a store,
/// and a copy of the same recording elsewhere finds the same one.
pub fn replay_store(dir: &Path) -> Result<StoreLocation, CliError> {
    let digest = recording_digest(dir)
        .map_err(|e| CliError::Invalid(format!("--replay {}: {e}", dir.display())))?;
    let name: String = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "replay".to_string())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cache_dir = resolve_cache_dir(None)?
        .join(REPLAY_STORES)
        .join(format!("{name}-{digest}"));
    Ok(StoreLocation::Sqlite { cache_dir })
}

/// SHA-256 over every file under `dir` (its path relative to `dir`, its length, its bytes), in
/// path order: the same recording gives the same digest wherever it lies.
fn recording_digest(dir: &Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    fn walk(dir: &Path, into: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                walk(&path, into)?;
            } else {
                into.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    let mut hash = Sha256::new();
    for file in &files {
        let relative = file.strip_prefix(dir).unwrap_or(file);
        let bytes = std::fs::read(file)?;
        hash.update(relative.to_string_lossy().as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    let digest = hash.finalize();
    Ok(digest[..8].iter().map(|b| format!("{b:02x}")).collect())
}

/// A path or value as a shell word: as is when it holds only safe characters, else in single
/// quotes (a fix-it command pastes as printed).
pub fn shell_word(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=+@,%".contains(c));
    if safe {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// `--repo OWNER/NAME`.
pub fn parse_repo(text: &str) -> Result<Repo, CliError> {
    Repo::parse(text).ok_or_else(|| {
        CliError::Invalid(format!(
            "--repo {text:?} is not OWNER/NAME (for example NVIDIA/cuda-python)"
        ))
    })
}

/// The repository a command works on: `--repo`, else the replay's.
pub fn resolve_repo(
    flag: Option<&str>,
    replay: Option<&super::source::Replay>,
) -> Result<Repo, CliError> {
    match (flag, replay) {
        (Some(text), _) => parse_repo(text),
        (None, Some(ds)) => Ok(ds.repo()),
        (None, None) => unreachable!("clap requires --repo without --replay"),
    }
}

/// What "now" is: `--until` (a `WHEN`, measured from the clock or the replay's present) where
/// the command has it, else the replay's present, else the clock.
pub fn resolve_now(
    until: Option<&str>,
    replay: Option<&super::source::Replay>,
) -> Result<crate::model::Timestamp, CliError> {
    let clock = match replay {
        Some(ds) => ds.now(),
        None => super::when::now_to_the_second(),
    };
    match until {
        Some(text) => Ok(super::when::parse_when(
            text,
            super::when::Bound::Until,
            clock,
        )?),
        None => Ok(clock),
    }
}

/// A window's end never lies past the present (the clock, or with `--replay` the end of the
/// recording): no listing can hold runs after it, so a survey would record the future as
/// listed, and a report would name a gap that no survey can fill. An end past the present is
/// moved back to it; one line on stderr says so when it lay past today (`--until` today's date
/// means "through today", which is now).
pub fn end_by_now(
    until: crate::model::Timestamp,
    now: crate::model::Timestamp,
    replay: bool,
) -> crate::model::Timestamp {
    if until <= now {
        return until;
    }
    let tomorrow = now
        .date_naive()
        .succ_opt()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc());
    if tomorrow.is_some_and(|t| until <= t) {
        return now;
    }
    let present = if replay {
        "the end of the replay's recording"
    } else {
        "now"
    };
    let at = |t: crate::model::Timestamp| t.format("%Y-%m-%d %H:%M UTC").to_string();
    say!(
        "flakestat: --until {} is after {present} ({}): the window ends there",
        at(until),
        at(now)
    );
    now
}

/// A webhook's secret: `--webhook-secret-file FILE` (a trailing newline is not part of it),
/// else `FLAKESTAT_WEBHOOK_SECRET`; never empty, never printed. `needed` and `why` open and
/// close the message when neither is given (`serve` refuses to run unsigned).
pub fn resolve_webhook_secret(
    file: Option<&Path>,
    needed: &str,
    why: &str,
) -> Result<Vec<u8>, CliError> {
    let (bytes, from) = match file {
        Some(file) => {
            let mut bytes = std::fs::read(file).map_err(|e| {
                CliError::Invalid(format!(
                    "--webhook-secret-file {}: cannot read it: {e}",
                    file.display()
                ))
            })?;
            while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                bytes.pop();
            }
            (bytes, format!("--webhook-secret-file {}", file.display()))
        }
        None => match std::env::var_os("FLAKESTAT_WEBHOOK_SECRET") {
            Some(value) => (
                value.into_encoded_bytes(),
                "FLAKESTAT_WEBHOOK_SECRET".to_string(),
            ),
            None => {
                return Err(CliError::Invalid(format!(
                    "{needed}: --webhook-secret-file FILE or FLAKESTAT_WEBHOOK_SECRET ({why})"
                )));
            }
        },
    };
    if bytes.is_empty() {
        return Err(CliError::Invalid(format!(
            "{from}: the webhook secret is empty"
        )));
    }
    Ok(bytes)
}

/// `--wait`: a span (`0`, `45`, `30s`, `5m`, `1h`). The flag is kept for old scripts and its
/// value checked as before, but nothing waits for it: several runs share a store, no lock.
pub fn parse_wait(text: &str) -> Result<Duration, CliError> {
    parse_duration("--wait", text)
}

/// A duration flag (`serve --resync 1h`, `--resync-window 30d`): a span in the one syntax
/// `--since` reads too ([`super::when::parse_span`]).
pub fn parse_duration(flag: &str, text: &str) -> Result<Duration, CliError> {
    wait_duration(text).ok_or_else(|| {
        CliError::Invalid(format!(
            "{flag} {text:?} is not a duration: use a number and its unit ({})",
            super::when::SPAN_FORMS
        ))
    })
}

fn wait_duration(text: &str) -> Option<Duration> {
    super::when::parse_span(text)?.to_std().ok()
}

/// What the analysis reads from `--config FILE`, else `./flakestat.toml` when present, else the
/// defaults; `focus` is the one signature reported alone (`report --signature`).
pub fn analysis_config(
    config: Option<&Path>,
    focus: Option<SignatureId>,
) -> Result<AnalysisConfig, CliError> {
    let file = load_config(config, Path::new("."))?;
    Ok(AnalysisConfig {
        pr_conventions: file.pr_conventions,
        matrix: file.matrix,
        focus,
        cost: file.cost,
    })
}

/// `--api-url`, else `GITHUB_API_URL`, else `https://api.github.com`; no trailing slash.
pub fn resolve_api_url(flag: Option<&str>) -> String {
    let url = flag
        .map(str::to_string)
        .or_else(|| {
            std::env::var("GITHUB_API_URL")
                .ok()
                .filter(|v| !v.is_empty())
        })
        .unwrap_or_else(|| DEFAULT_API_URL.to_string());
    url.trim_end_matches('/').to_string()
}

/// How a command authenticates to GitHub: as a GitHub App's installation, with a token, or not.
#[derive(Debug)]
pub enum Credentials {
    App(AppSettings),
    Token(Token, TokenSource),
    Anonymous,
}

/// A GitHub App's id and key, and where they came from (for messages). Its `Debug` never
/// shows the key.
#[derive(Debug)]
pub struct AppSettings {
    pub auth: crate::fetch::AppAuth,
    /// `--app-key FILE` or `PRIVATE_KEY_PATH FILE`.
    pub key_from: String,
}

/// The environment variables of GitHub App authentication: Probot's (`APP_ID`,
/// `PRIVATE_KEY_PATH`), which GitHub's own `actions/create-github-app-token` examples name too.
pub const APP_ID_VAR: &str = "APP_ID";
pub const PRIVATE_KEY_PATH_VAR: &str = "PRIVATE_KEY_PATH";

/// A GitHub App when `--app-id`/`--app-key` are given (each else from `APP_ID` /
/// `PRIVATE_KEY_PATH`), or when both variables are set (one alone is another program's, and
/// ignored); else the token ([`resolve_token`]). Flags beat the environment, and an App beats a
/// token: who sets both means the App. `--installation-id` names the installation; without it
/// each repository's account's installation is looked up.
pub fn resolve_credentials(
    api_url: &str,
    app: &super::source::AppArgs,
) -> Result<Credentials, CliError> {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let (env_id, env_key) = (env(APP_ID_VAR), env(PRIVATE_KEY_PATH_VAR));
    let flagged = app.app_id.is_some() || app.app_key.is_some();
    if !flagged && (env_id.is_none() || env_key.is_none()) {
        if app.installation_id.is_some() {
            return Err(CliError::Invalid(
                "--installation-id is a GitHub App's: pass --app-id and --app-key too (or set APP_ID and PRIVATE_KEY_PATH)".into(),
            ));
        }
        return Ok(match resolve_token(api_url) {
            Some((token, source)) => Credentials::Token(token, source),
            None => Credentials::Anonymous,
        });
    }
    let app_id = match (app.app_id, env_id) {
        (Some(id), _) => id,
        (None, Some(text)) => text.parse().map_err(|_| {
            CliError::Invalid(format!(
                "{APP_ID_VAR} {text:?} is not a GitHub App id (the number on the App's settings page)"
            ))
        })?,
        (None, None) => {
            return Err(CliError::Invalid(
                "--app-key needs the App's id: pass --app-id ID (or set APP_ID)".into(),
            ));
        }
    };
    let (key_path, from) = match (&app.app_key, env_key) {
        (Some(path), _) => (path.clone(), "--app-key"),
        (None, Some(path)) => (PathBuf::from(path), PRIVATE_KEY_PATH_VAR),
        (None, None) => {
            return Err(CliError::Invalid(
                "--app-id needs the App's private key: pass --app-key FILE, the .pem file GitHub generated (or set PRIVATE_KEY_PATH)".into(),
            ));
        }
    };
    let key_from = format!("{from} {}", key_path.display());
    let pem = std::fs::read(&key_path).map_err(|e| {
        CliError::Invalid(format!(
            "{key_from}: cannot read the GitHub App's private key: {e}"
        ))
    })?;
    let key = crate::fetch::AppKey::parse_pem(&pem)
        .map_err(|e| CliError::Invalid(format!("{key_from}: {e}")))?;
    Ok(Credentials::App(AppSettings {
        auth: crate::fetch::AppAuth {
            app_id,
            key: std::sync::Arc::new(key),
            installation: app.installation_id,
        },
        key_from,
    }))
}

/// `GITHUB_TOKEN`, else `GH_TOKEN`, else what `gh auth token` prints when gh is installed and
/// logged in (for the API's host: `--hostname HOST` for GitHub Enterprise Server); `None` means
/// anonymous requests.
pub fn resolve_token(api_url: &str) -> Option<(Token, TokenSource)> {
    for (var, source) in [
        ("GITHUB_TOKEN", TokenSource::GithubToken),
        ("GH_TOKEN", TokenSource::GhToken),
    ] {
        if let Some(value) = std::env::var(var).ok().map(|v| v.trim().to_string())
            && !value.is_empty()
        {
            return Some((Token(value), source));
        }
    }
    let mut gh = Command::new("gh");
    gh.args(["auth", "token"]);
    if let Some(host) = enterprise_host(api_url) {
        gh.args(["--hostname", host]);
    }
    let output = gh
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let token = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && !token.is_empty()).then_some((Token(token), TokenSource::GhCli))
}

/// The host of a GitHub Enterprise Server API root (`https://HOST/api/v3`); `None` for github.com.
fn enterprise_host(api_url: &str) -> Option<&str> {
    let rest = api_url.split_once("://").map_or(api_url, |(_, r)| r);
    let host = rest.split(['/', ':']).next().filter(|h| !h.is_empty())?;
    (host != "api.github.com").then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gh_is_asked_for_the_enterprise_host_only() {
        assert_eq!(enterprise_host("https://api.github.com"), None);
        assert_eq!(
            enterprise_host("https://ghe.example.com/api/v3"),
            Some("ghe.example.com")
        );
    }

    #[test]
    fn token_never_shows_in_debug() {
        let token = Token("ghp_secret".into());
        assert_eq!(format!("{token:?}"), "Token(***)");
        assert_eq!(token.expose(), "ghp_secret");
    }

    #[test]
    fn waits_parse() {
        assert_eq!(wait_duration("0"), Some(Duration::ZERO));
        assert_eq!(wait_duration("45"), Some(Duration::from_secs(45)));
        assert_eq!(wait_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(wait_duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(wait_duration("1h"), Some(Duration::from_secs(3600)));
        // Days and weeks as `--since` reads them: one syntax for every flag.
        assert_eq!(wait_duration("2d"), Some(Duration::from_secs(2 * 86_400)));
        assert_eq!(
            wait_duration("200d"),
            Some(Duration::from_secs(200 * 86_400))
        );
        assert_eq!(wait_duration("1w"), Some(Duration::from_secs(7 * 86_400)));
        for bad in ["", "m", "-1", "5 m", "2y", "1.5m", "99999999999999999999w"] {
            assert_eq!(wait_duration(bad), None, "{bad:?}");
            let err = parse_wait(bad).unwrap_err().to_string();
            assert!(err.contains("--wait"), "{err}");
        }
    }

    #[test]
    fn flags_win_and_api_url_loses_its_trailing_slash() {
        assert_eq!(
            resolve_cache_dir(Some(Path::new("/tmp/x"))).unwrap(),
            PathBuf::from("/tmp/x")
        );
        assert_eq!(
            resolve_api_url(Some("https://ghe.example/api/v3/")),
            "https://ghe.example/api/v3"
        );
    }
}
