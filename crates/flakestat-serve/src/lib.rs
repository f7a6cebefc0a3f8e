//! `flakestat serve`: a receiver of GitHub's `workflow_run` and `workflow_job` webhooks that
//! keeps the store current without listing runs.
//!
//! GitHub waits 10 seconds for an answer and never retries a failed delivery, so the receiver
//! does the least before answering: check the signature (`verify`), read the few fields it needs
//! (`payload`), store the delivery in the store's queue table (`flakestat_store::Delivery`,
//! once per `X-GitHub-Delivery`) and answer. A worker thread (`worker`) then hands each queued
//! completed run attempt to an [`IngestRun`], the one seam to the GitHub side: the caller (the
//! `cli`) implements it over the survey's own path, so the rate-limit, redirect and token rules
//! are the survey's. A stop (SIGTERM) ends the listener and lets the worker finish the attempt
//! in hand; what is still queued stays in the store and the next start drains it.
//!
//! This crate knows HTTP, the queue and the trait; it never talks to GitHub and reads neither
//! the environment nor the terminal (settings arrive in [`ServeConfig`]).

mod http;
mod metrics;
pub mod payload;
pub mod verify;
mod worker;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flakestat_core::model::Repo;
use flakestat_store::{QueuedRun, Store};

pub use metrics::Metrics;
pub use verify::WebhookSecret;

/// The largest body GitHub sends ("Payloads are capped at 25 MB"): the default cap.
pub const DEFAULT_MAX_BODY: u64 = 25_000_000;

/// Which repositories' deliveries are queued; others are acknowledged and ignored.
#[derive(Debug, Clone)]
pub enum Repos {
    /// These (compared without case, as GitHub compares names).
    Some(Vec<Repo>),
    /// Every repository of this owner.
    Owner(String),
}

impl Repos {
    pub fn contains(&self, repo: &Repo) -> bool {
        match self {
            Repos::Some(repos) => repos.iter().any(|r| {
                r.owner.eq_ignore_ascii_case(&repo.owner) && r.name.eq_ignore_ascii_case(&repo.name)
            }),
            Repos::Owner(owner) => owner.eq_ignore_ascii_case(&repo.owner),
        }
    }
}

/// Everything the server needs, decided by the caller.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub secret: WebhookSecret,
    pub repos: Repos,
    /// Bodies larger than this are refused with 413.
    pub max_body: u64,
    /// How often the worker runs [`IngestRun::resync`]; `None`: never.
    pub resync: Option<Duration>,
    /// Failed ingests of one delivery before it is given up (`failed`; the resync fills it in).
    pub max_tries: u32,
}

/// What one ingest did, for `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ingested {
    pub logs_fetched: u64,
    /// GitHub's rate limit left after it, when known.
    pub rate_limit_remaining: Option<u64>,
}

/// Why an ingest failed: said in the queue row and on stderr, and tried again unless `retry`
/// is false or the tries are spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestFailure {
    pub message: String,
    pub retry: bool,
}

/// "Ingest this run attempt": its jobs, its failed jobs' logs, classified and stored. Called
/// on the worker thread, one attempt at a time; it may block for as long as the work takes.
pub trait IngestRun: Send + Sync {
    fn ingest(&self, run: &QueuedRun) -> Result<Ingested, IngestFailure>;

    /// The periodic survey of the recent window that fills in what a dropped delivery missed.
    fn resync(&self) -> Result<Ingested, IngestFailure>;
}

/// Progress lines for the caller to print (stderr in the `cli`).
pub trait Say: Send + Sync {
    fn say(&self, line: String);
}

impl Say for () {
    fn say(&self, _line: String) {}
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error(transparent)]
    Store(#[from] flakestat_store::StoreError),
}

/// The shared state of the listener and the worker.
pub(crate) struct Shared {
    pub config: ServeConfig,
    pub store: Arc<Mutex<Store>>,
    pub metrics: Metrics,
    pub wake: worker::Wake,
    pub say: Arc<dyn Say>,
}

/// Serves until `stop` resolves (the caller's SIGTERM or Ctrl-C), then ends the listener, waits
/// for the worker to finish the attempt in hand, and returns. `bound` is called once with the
/// address listened on (port 0 picks one).
pub fn serve(
    config: ServeConfig,
    store: Arc<Mutex<Store>>,
    ingest: Arc<dyn IngestRun>,
    say: Arc<dyn Say>,
    bound: impl FnOnce(SocketAddr),
    stop: impl std::future::Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let shared = Arc::new(Shared {
        config: config.clone(),
        store,
        metrics: Metrics::default(),
        wake: worker::Wake::default(),
        say,
    });
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(config.listen))
        .map_err(|source| ServeError::Listen {
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ServeError::Listen {
        addr: config.listen,
        source,
    })?;
    let worker = worker::start(shared.clone(), ingest);
    bound(addr);
    runtime.block_on(http::accept_until(listener, shared.clone(), stop));
    shared.wake.stop();
    let _ = worker.join();
    Ok(())
}
