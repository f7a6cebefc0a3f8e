//! The only place the HTTP client and tokio appear: the GitHub client and the survey that fills
//! the store.
//!
//! `client` talks to GitHub (budget, retries, secondary limits, conditional requests, log
//! redirects) over its own small transport (`client/transport.rs`: hyper-util and rustls); `pages`
//! walks a paginated listing along `Link: rel="next"`; `survey` lists a repository's runs and hands
//! each that can have changed to `ingest`, which stores its jobs and its failed jobs' logs,
//! classifying each log as it arrives (`Ingest`, the one public way from a run attempt to the
//! store, which a webhook worker calls too); `Session` owns the runtime so the survey's callers
//! stay synchronous. Nothing here reads the environment or the terminal: settings arrive in
//! `ClientConfig` and `SurveyPlan`, and progress leaves through the `Progress` trait.

mod ancestry;
mod archive;
mod artifacts;
pub mod checks;
mod client;
pub mod comments;
mod green;
mod hidden;
mod ingest;
mod joblogs;
mod owners;
mod pages;
mod pr;
mod pulls;
mod spool;
mod survey;
mod tasks;
mod wire;

pub use ancestry::AncestrySummary;
pub use artifacts::{DEFAULT_ARTIFACT_CAPS, DEFAULT_MAX_ARTIFACT_SIZE, JunitArtifacts};
pub use client::{
    AppAuth, AppKey, AppKeyError, Blob, ClientConfig, DEFAULT_CONCURRENCY, DEFAULT_MAX_LOG_SIZE,
    DEFAULT_MAX_RESPONSE_SIZE, GitHubClient, Response, SPOOL_AT, StatsSnapshot, check_api_url,
};
pub use green::GreenFetch;
pub use hidden::{GreenLogs, GreenLogsFetch};
pub use ingest::{Ingest, Ingested, LeftBehind, RunAttempt, parse_run};
pub use owners::{OwnerListing, OwnerRepo};
pub use pr::{PrCost, PrFetched, PrPlan};
pub use pulls::{PULL_HEADS_SCOPE, PullHeadNeeds};
pub use survey::{ArtifactSummary, KindCost, Session, SurveyCost, SurveyPlan, SurveySummary};

// Where the survey's callers have always found them: the trait lives in the core (the store
// re-classifies through it too), the re-classification in the store (it fetches nothing).
pub use flakestat_core::signatures::Classifier;
pub use flakestat_store::reclassify_stored;

use flakestat_core::model::Timestamp;
use flakestat_store::StoreError;

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
    #[error(transparent)]
    Store(#[from] StoreError),
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

/// Runs blocking work (classification, compression, reading an archive) off the async threads.
/// A survey stopped by Ctrl-C shuts its runtime down, which cancels such work before it starts:
/// that is the interruption, not a failure (`FetchError::Interrupted`, exit 130). A panic in
/// the work is re-raised as it was.
pub(crate) async fn blocking<T, E>(
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, FetchError>
where
    T: Send + 'static,
    E: Send + 'static,
    FetchError: From<E>,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done.map_err(FetchError::from),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(FetchError::Interrupted),
    }
}
