//! `flakestat serve`: a receiver of GitHub's `workflow_run` and `workflow_job` webhooks that
//! keeps the store current without listing runs.
//!
//! GitHub waits 10 seconds for an answer and never retries a failed delivery, so the receiver
//! does the least before answering: check the signature (`verify`, as the body streams in),
//! read the few fields it needs (`payload`, every id checked), store the delivery in the
//! store's queue table (`flakestat_store::Delivery`, once per `X-GitHub-Delivery`; a write
//! waits at most `queue_wait`, then 503) and answer. The front (`http`) bounds what anyone can
//! hold: open connections, the time to send a header and a body, the memory of a body. A
//! worker thread (`worker`) then hands each queued
//! completed run attempt to an [`IngestRun`], the one seam to the GitHub side: the caller (the
//! `cli`) implements it over the survey's own path (flakestat-sync's `Upkeep`), so the
//! rate-limit, redirect and token rules are the survey's. A stop (SIGTERM) ends the listener and lets the worker finish the attempt
//! in hand; what is still queued stays in the store and the next start drains it.
//!
//! A worker that panics is restarted (its delivery counted as a failed try), and after
//! [`WORKER_PANICS`] panics in a row `serve` ends with an error (a supervisor restarts the
//! process). `/healthz` (`health`) says whether the store, the worker and the queue are well.
//!
//! This crate knows HTTP, the queue and the trait; it never talks to GitHub and reads neither
//! the environment nor the terminal (settings arrive in [`ServeConfig`]).

mod health;
mod http;
mod metrics;
pub mod payload;
pub mod verify;
mod worker;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flakestat_core::model::Repo;
use flakestat_store::{QueuedRun, Store, StoreHandle};

pub use metrics::Metrics;
pub use verify::WebhookSecret;

/// The largest body GitHub sends ("Payloads are capped at 25 MB"): the default cap.
pub const DEFAULT_MAX_BODY: u64 = 25_000_000;
/// The most of a body kept in memory to be read after its signature checks: the
/// `workflow_run` and `workflow_job` payloads are tens of kilobytes. A larger body is still
/// read to the end for its signature (nothing of it kept); a verified one of those events is
/// answered 413.
pub const KEPT_BODY: usize = 1 << 20;
/// Open connections at once, by default (the rest are answered 503); well under the usual
/// 1,024 file descriptors.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// How long a sender has to send a request's header (from its first byte, or the connection's
/// start), and then its body, by default.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a delivery waits for the store (its queue row), by default: then 503. Twice this
/// stays under GitHub's 10 seconds.
pub const DEFAULT_QUEUE_WAIT: Duration = Duration::from_secs(4);
/// Panics of the worker in a row after which `serve` ends (with an error).
pub const WORKER_PANICS: u32 = 5;

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
    /// Open connections at once; one past it closes the oldest idle one, or is answered 503.
    pub max_connections: usize,
    /// How long a request's header may take to arrive (an idle connection is closed after it).
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive.
    pub body_timeout: Duration,
    /// How long a delivery waits for the store to take its queue row, then 503.
    pub queue_wait: Duration,
    /// `/healthz` is unhealthy while the oldest queued delivery is older than this.
    pub max_queue_age: Duration,
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
    #[error(
        "the worker panicked {0} times in a row (see the lines above); serve stopped so that a supervisor restarts it"
    )]
    WorkerDied(u32),
}

/// The shared state of the listener and the worker.
pub(crate) struct Shared {
    pub config: ServeConfig,
    /// The worker's store (shared with the ingest; the worker is a thread of its own and
    /// reaches it with `StoreHandle::blocking`).
    pub store: StoreHandle,
    /// The front's own connection, on a thread of its own: queue writes and the queue's
    /// figures, never held by an ingest, so a delivery waits only for other writers, and no
    /// runtime thread ever waits on it.
    pub front: StoreHandle,
    pub metrics: Metrics,
    pub health: health::Health,
    pub wake: worker::Wake,
    pub say: Throttled,
}

/// Lines said at most once per [`THROTTLE`] for each kind, with how many were left unsaid: a
/// flood of refused deliveries (a full disk) writes a line every few seconds, not thousands.
pub(crate) struct Throttled {
    say: Arc<dyn Say>,
    last: Mutex<HashMap<&'static str, (Instant, u64)>>,
}

/// The least time between two lines of one kind.
const THROTTLE: Duration = Duration::from_secs(10);

impl Throttled {
    fn new(say: Arc<dyn Say>) -> Throttled {
        Throttled {
            say,
            last: Mutex::new(HashMap::new()),
        }
    }

    /// Always said.
    pub(crate) fn say(&self, line: String) {
        self.say.say(line);
    }

    /// Said unless a line of `kind` was said less than [`THROTTLE`] ago.
    pub(crate) fn say_now_and_then(&self, kind: &'static str, line: impl FnOnce() -> String) {
        let now = Instant::now();
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let unsaid = match last.get_mut(kind) {
            Some((at, unsaid)) if now.duration_since(*at) < THROTTLE => {
                *unsaid += 1;
                return;
            }
            Some((_, unsaid)) => *unsaid,
            None => 0,
        };
        last.insert(kind, (now, 0));
        drop(last);
        let line = line();
        self.say.say(if unsaid > 0 {
            format!("{line} (and {unsaid} more like it since the last such line)")
        } else {
            line
        });
    }
}

/// Serves until `stop` resolves (the caller's SIGTERM or Ctrl-C), then ends the listener, waits
/// for the worker to finish the attempt in hand, and returns. `front` is a second connection
/// to the same store, for the queue writes (its busy timeout is set to `queue_wait`). `bound`
/// is called once with the address listened on (port 0 picks one). A worker that panicked
/// [`WORKER_PANICS`] times in a row ends it too, with [`ServeError::WorkerDied`].
pub fn serve(
    config: ServeConfig,
    store: StoreHandle,
    mut front: Store,
    ingest: Arc<dyn IngestRun>,
    say: Arc<dyn Say>,
    bound: impl FnOnce(SocketAddr),
    stop: impl std::future::Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    front.set_busy_timeout(config.queue_wait)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let shared = Arc::new(Shared {
        config: config.clone(),
        store,
        front: StoreHandle::new(front),
        metrics: Metrics::default(),
        health: health::Health::default(),
        wake: worker::Wake::default(),
        say: Throttled::new(say),
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
    // `stop` is polled once before the address is said: a signal handler it installs on its
    // first poll (SIGTERM's) is in place before anyone who read the address can signal, so a
    // SIGTERM right after start is a graceful stop, never the default action's kill.
    let mut stop = Box::pin(stop);
    let stopped_early = runtime.block_on(std::future::poll_fn(|cx| {
        std::task::Poll::Ready(stop.as_mut().poll(cx).is_ready())
    }));
    let (died_tx, died) = tokio::sync::oneshot::channel();
    let worker = worker::start(shared.clone(), ingest, died_tx);
    runtime.spawn(http::read_queue_figures(shared.clone()));
    bound(addr);
    let stop = async move {
        if !stopped_early {
            stop.await;
        }
    };
    let died = runtime.block_on(http::accept_until(listener, shared.clone(), stop, died));
    shared.wake.stop();
    let _ = worker.join();
    // A store read stuck on its lock must not hold up the exit.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match died {
        Some(panics) => Err(ServeError::WorkerDied(panics)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lines(Mutex<Vec<String>>);

    impl Say for Lines {
        fn say(&self, line: String) {
            self.0.lock().unwrap().push(line);
        }
    }

    /// Issue 41 §8: thousands of refused deliveries in a moment write one line per kind, and
    /// the next one said tells how many were left unsaid; other kinds and plain lines are not
    /// held back.
    #[test]
    fn a_flood_of_one_kind_of_line_is_said_once_with_the_count_later() {
        let lines = Arc::new(Lines(Mutex::new(Vec::new())));
        let throttled = Throttled::new(lines.clone());
        for i in 0..2988 {
            throttled.say_now_and_then("queue_error", || format!("refused {i}"));
        }
        throttled.say_now_and_then("accept", || "accept failed".to_string());
        throttled.say("always".to_string());
        assert_eq!(
            *lines.0.lock().unwrap(),
            ["refused 0", "accept failed", "always"]
        );
        // Ten seconds later (the clock moved back by hand): said, with the count.
        throttled
            .last
            .lock()
            .unwrap()
            .get_mut("queue_error")
            .unwrap()
            .0 -= THROTTLE;
        throttled.say_now_and_then("queue_error", || "refused again".to_string());
        assert_eq!(
            lines.0.lock().unwrap().last().unwrap(),
            "refused again (and 2987 more like it since the last such line)"
        );
    }
}
