//! What tests need of this crate, here and in the crates above it (feature `testing`, which
//! only their dev-dependencies turn on): a fake GitHub whose listings take several pages, and a
//! client for it.

use std::sync::Arc;

use flakestat_fake::scenario::{SyntheticSpec, synthetic, synthetic_run_id};
use flakestat_fake::{FakeGitHub, Faults};

use crate::{ClientConfig, GitHubClient, Progress};

/// Jobs in each run of [`paged_jobs`]: three pages of 100.
pub const JOBS: usize = 250;

/// A fake with one run of [`JOBS`] jobs.
pub struct PagedJobs {
    pub fake: FakeGitHub,
    /// The runtime the client was made in (one thread).
    pub runtime: tokio::runtime::Runtime,
    pub client: GitHubClient,
    /// The URL of the run's first page of jobs.
    pub first: String,
}

/// A fake whose run has [`JOBS`] jobs, a runtime and a client for it, and the URL of the jobs'
/// first page.
pub fn paged_jobs() -> PagedJobs {
    let spec = SyntheticSpec {
        runs: 1,
        jobs_per_run: JOBS,
        ..SyntheticSpec::default()
    };
    let fake = FakeGitHub::start_blocking(synthetic(&spec), Faults::default())
        .expect("the fake GitHub starts");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let client = {
        let _guard = runtime.enter();
        let config = ClientConfig::new(fake.api_url(), None);
        GitHubClient::new(config, Arc::new(()) as Arc<dyn Progress>).expect("a client")
    };
    let first = client.url(&format!(
        "/repos/octo/demo/actions/runs/{}/jobs?filter=all&per_page=100",
        synthetic_run_id(0).0
    ));
    PagedJobs {
        fake,
        runtime,
        client,
        first,
    }
}
