//! The only place octocrab and tokio appear: the GitHub client and the survey that fills the store.
//!
//! `client` talks to GitHub (budget, retries, secondary limits, conditional requests, log
//! redirects); `pages` walks a paginated listing along `Link: rel="next"`; `survey` walks a
//! repository's runs, attempts, jobs and failed-job logs into the `store`, classifying each log
//! as it arrives; `Session` owns the runtime so callers stay synchronous. Nothing here reads the
//! environment or the terminal: settings arrive in `ClientConfig` and `SurveyPlan`, and progress
//! leaves through the `Progress` trait.

mod ancestry;
mod client;
pub mod comments;
mod green;
mod pages;
mod pulls;
mod survey;
mod wire;

use std::sync::{Arc, Mutex};

pub use ancestry::AncestrySummary;
pub use client::{
    Blob, ClientConfig, DEFAULT_CONCURRENCY, DEFAULT_MAX_LOG_SIZE, DEFAULT_MAX_RESPONSE_SIZE,
    GitHubClient, Response, SPOOL_AT, StatsSnapshot, check_api_url,
};
pub use green::GreenFetch;
pub use pulls::{PULL_HEADS_SCOPE, PullHeadNeeds};
pub use survey::{KindCost, Session, SurveyCost, SurveyPlan, SurveySummary};

use flakestat_core::model::{Classification, Repo, Timestamp};
use flakestat_store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{0}")]
    Config(String),
    #[error(
        "GitHub refused the credentials ({status}: {message}); check GITHUB_TOKEN / GH_TOKEN or run `gh auth login`"
    )]
    Unauthorized { status: u16, message: String },
    #[error(
        "GitHub denied access ({status}: {message}); the token needs read access to the repository's Actions (repo or public_repo scope, or `actions: read`)"
    )]
    Forbidden { status: u16, message: String },
    #[error("{0}")]
    NotFound(String),
    #[error(
        "the GitHub rate limit is spent until {reset}; what was collected is stored: run the same command again after that"
    )]
    RateLimited { reset: Timestamp },
    #[error(
        "GitHub's secondary rate limit kept refusing ({0}); what was collected is stored: run the same command again in a few minutes"
    )]
    SecondaryLimit(String),
    #[error(
        "GitHub did not answer: {0}; check the network or --api-url, then run the same command again (what was collected is stored)"
    )]
    Network(String),
    #[error("GitHub answered {status} to {url}: {message}")]
    Unexpected {
        url: String,
        status: u16,
        message: String,
    },
    #[error(
        "the answer to {url} is {size} bytes or more, over the {limit}-byte limit for an API answer; refused (GitHub's pages are far smaller: check --api-url)"
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

/// What classifies a raw log; `signatures::SignatureSet` in the product, anything in tests.
pub trait Classifier: Send + Sync {
    /// Changes whenever classification would change: stored classifications are keyed by it.
    fn fingerprint(&self) -> String;
    fn classify(&self, log: &[u8]) -> Classification;
    /// The same from a reader (a log spooled to a file); read whole by default.
    fn classify_reader(&self, log: &mut dyn std::io::Read) -> std::io::Result<Classification> {
        let mut raw = Vec::new();
        log.read_to_end(&mut raw)?;
        Ok(self.classify(&raw))
    }
}

impl Classifier for flakestat_core::signatures::SignatureSet {
    fn fingerprint(&self) -> String {
        flakestat_core::signatures::SignatureSet::fingerprint(self)
    }
    fn classify(&self, log: &[u8]) -> Classification {
        flakestat_core::signatures::SignatureSet::classify(self, log)
    }
    fn classify_reader(&self, log: &mut dyn std::io::Read) -> std::io::Result<Classification> {
        // Streams in chunks: memory stays bounded whatever the log's size.
        flakestat_core::signatures::SignatureSet::classify_reader(self, log)
    }
}

/// Classifies, from the store alone, every stored log of `repo` that has no classification for
/// the classifier's fingerprint (signatures changed, or a survey stopped between download and
/// classification). Returns how many were classified. No network.
pub fn reclassify_stored(
    store: &Arc<Mutex<Store>>,
    repo: &Repo,
    classifier: &dyn Classifier,
) -> Result<u64, StoreError> {
    let fingerprint = classifier.fingerprint();
    let todo = store
        .lock()
        .expect("store lock")
        .logs_to_classify(repo, &fingerprint)?;
    for job in &todo {
        let Some(raw) = store.lock().expect("store lock").load_log(*job)? else {
            continue;
        };
        let classification = classifier.classify(&raw);
        store.lock().expect("store lock").store_classification(
            *job,
            &fingerprint,
            &classification,
        )?;
    }
    Ok(todo.len() as u64)
}
