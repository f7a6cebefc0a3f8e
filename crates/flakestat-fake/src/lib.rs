//! A fake GitHub REST API on 127.0.0.1, for tests, benchmarks and `survey --replay`.
//!
//! [`FakeGitHub`] serves a [`Dataset`] over real HTTP/1.1 the way GitHub's OpenAPI description
//! and `shared/GITHUB.md` say: run listings (`/actions/runs`, `/actions/workflows/{id|file}/runs`)
//! with the `created`, `event`, `branch`, `status`, `head_sha` filters and the 1,000-result cap,
//! runs and attempts, jobs (`filter=latest|all`, per attempt), job logs behind a 302 to a second
//! listener that records whether a token arrived, pull requests and their files, commits and
//! compare over the dataset's commit graph, issue comments; `Link` pagination with absolute URLs,
//! rate-limit headers and budgets, ETags and free 304s, auth, and deterministic fault injection
//! ([`Faults`]). Paths under `/api/v3` (GitHub Enterprise Server) are served too.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use flakestat_fake::{Dataset, FakeGitHub, Faults, RouteKind};
//! let dataset = Dataset::load("fixtures/cuda-python-flake".as_ref())?;
//! let github = FakeGitHub::start(dataset, Faults::default()).await?;
//! let api = github.api_url(); // point the client's base URL here
//! // ... run the code under test ...
//! assert!(github.requests().iter().all(|r| r.kind != RouteKind::LogBlob || !r.authorization));
//! # Ok(()) }
//! ```
//!
//! [`scenario`] builds datasets: a small regular one for tests ([`scenario::synthetic`]) and the
//! bundled `fixtures/<scenario>/` folders ([`scenario::cuda_python`]). Nothing here is used by the
//! product's own code paths except `--replay`, which starts this server
//! ([`FakeGitHub::start_blocking`] when the caller has no runtime).
//!
//! Several repositories can share one server ([`FakeGitHub::start_many`]: one budget, one fault
//! counter), with their owners' listings (`/orgs/{org}/repos`, `/users/{user}/repos`).
//!
//! Simplifications, where GitHub's behaviour does not matter to flakestat: job steps and runner
//! labels are derived from the job's name and conclusion; the secondary limit is only injected,
//! never triggered by concurrency; comments get timestamps from the dataset's `now`, not the
//! clock.

mod app;
mod checks;
mod created;
mod dataset;
pub mod hidden_flakes;
pub mod minimum;
mod owners;
mod rng;
mod routes;
pub mod scenario;
mod server;
mod stamp;
pub mod webhooks;

pub use app::FakeApp;
pub use checks::FakeCheckRun;
pub use created::{CreatedRange, parse_created};
pub use dataset::{
    ArtifactBody, Auth, BOT_WORKFLOW_ID, BOT_WORKFLOW_PATH, Dataset, DatasetError, FakeArtifact,
    FakeAttempt, FakeComment, FakeCommit, FakeFile, FakeIssue, FakeLog, FakePull, FakeRun,
    FakeRunner,
};
pub use minimum::SurveyMinimum;
pub use routes::RouteKind;
pub use server::{FakeGitHub, Faults, Hop, Listener, RecordedRequest};

/// The size the fake lists for an artifact (`size_in_bytes`): its zip's length, 0 past retention.
pub fn artifact_zip_size(artifact: &FakeArtifact) -> usize {
    routes::artifact_bytes(artifact).map_or(0, |zip| zip.len())
}
