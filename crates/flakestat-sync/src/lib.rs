//! Brings the store up to date from GitHub: the one engine behind `survey`, `nightly`, `pr` and
//! `serve`. It asks through flakestat-github's client (which only talks HTTP) and writes what it
//! learns to flakestat-store.
//!
//! `survey` lists a repository's runs and covers the window (`Session::survey`), handing each
//! run that can have changed to `ingest`, which stores its jobs and its failed jobs' logs,
//! classifying each log as it arrives (`Ingest`, the one public way from a run attempt to the
//! store, which serve's worker takes too through [`Upkeep`]); `ancestry`, `pulls` and
//! `rounds` fetch what the bisection and the PR relevance need after it (the default branch's
//! history, fork points, fork PRs, changed files); `hidden` and `green` read green jobs' logs;
//! `owners` lists an owner's repositories; `pr` fetches one PR's runs. `Session` owns the
//! runtime so its callers stay synchronous. Nothing here reads the environment or the terminal:
//! settings arrive in `ClientConfig` and `SurveyPlan`, and progress leaves through the `Progress`
//! trait.
//!
//! The client's types its callers need are re-exported here, so one path (`flakestat::fetch`)
//! names both.

mod ancestry;
mod archive;
mod artifacts;
mod green;
mod hidden;
mod ingest;
mod joblogs;
mod kept;
mod owners;
mod pr;
mod pulls;
mod rounds;
mod spool;
mod survey;
mod tasks;
mod upkeep;

pub use ancestry::AncestrySummary;
pub use artifacts::{DEFAULT_ARTIFACT_CAPS, DEFAULT_MAX_ARTIFACT_SIZE, JunitArtifacts};
pub use green::GreenFetch;
pub use hidden::{GreenLogs, GreenLogsFetch};
pub use ingest::{Ingest, Ingested, LeftBehind, RunAttempt, parse_run};
pub use owners::{OwnerListing, OwnerRepo};
pub use pr::{PrCost, PrFetched, PrPlan};
pub use pulls::{PULL_HEADS_SCOPE, PullHeadNeeds};
pub use rounds::{AncestryPlan, fetch_ancestry, fetch_for_nightly, prs_of_runs};
pub use survey::{ArtifactSummary, KindCost, Session, SurveyCost, SurveyPlan, SurveySummary};
pub use upkeep::{Fetched, Upkeep, may_pass};

// The client's, for the engine's callers (and for the modules here, as `super::…`).
pub use flakestat_github::{
    AppAuth, AppKey, AppKeyError, Blob, ClientConfig, DEFAULT_CONCURRENCY, DEFAULT_MAX_LOG_SIZE,
    DEFAULT_MAX_RESPONSE_SIZE, FetchError, GitHubClient, Progress, ProgressEvent, Response,
    SPOOL_AT, StatsSnapshot, check_api_url, checks, comments,
};
use flakestat_github::{pages, wire};

// Where the survey's callers have always found them: the trait lives in the core (the store
// re-classifies through it too), the re-classification in the store (it fetches nothing).
pub use flakestat_core::signatures::Classifier;
pub use flakestat_store::reclassify_stored;

use flakestat_store::StoreError;

/// The store's error as the engine's: the client's `FetchError`, which carries it boxed (the
/// client does not know the store).
pub(crate) fn store_error(e: StoreError) -> FetchError {
    FetchError::Store(Box::new(e))
}

/// What blocking work may fail with: the client's error, or the store's.
pub(crate) trait Failure: Send + 'static {
    fn into_fetch(self) -> FetchError;
}

impl Failure for FetchError {
    fn into_fetch(self) -> FetchError {
        self
    }
}

impl Failure for StoreError {
    fn into_fetch(self) -> FetchError {
        store_error(self)
    }
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
    E: Failure,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done.map_err(Failure::into_fetch),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(FetchError::Interrupted),
    }
}
