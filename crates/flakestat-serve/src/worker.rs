//! The worker: one thread that claims the oldest queued completed run attempt, hands it to the
//! [`IngestRun`], and marks every delivery of that attempt done; a failure leaves the delivery
//! queued for another try (after a pause, so a spent rate limit or a network outage is not
//! hammered) until `max_tries`, then `failed`. Between attempts it runs the resync when due. It
//! sleeps until a new delivery wakes it; a stop lets it finish the attempt in hand (the rest
//! stays queued in the store for the next start).
//!
//! Several replicas may share one PostgreSQL store: each worker claims the attempt it takes
//! (`flakestat_store`'s `claims.rs`: a lease of [`LEASE`], renewed every [`RENEW`] while the
//! ingest runs, let go when it fails), so the others pass it by and an attempt is ingested
//! once; a replica that dies mid-ingest leaves a claim that runs out, and another takes the
//! attempt then.
//!
//! A panic (a bug, met on some delivery) does not end it silently: it is caught, counted
//! (`/metrics`, `/healthz` unhealthy until the worker comes through a pass again), the delivery
//! in hand is charged a failed try (so one that always panics is given up after `max_tries`,
//! like any failing one) and the loop starts again after a pause. [`WORKER_PANICS`] panics in a
//! row end `serve` with an error: a supervisor restarts the process.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chrono::Utc;
use flakestat_store::QueuedRun;

use super::{IngestRun, Shared, WORKER_PANICS};

/// The pause after a failed ingest before the queue is read again.
const BACKOFF: Duration = Duration::from_secs(5);
/// How often an idle worker looks at the queue anyway (a delivery queued by another process
/// sharing the store, a due resync).
const IDLE: Duration = Duration::from_secs(30);
/// The pause before the loop starts again after a panic, doubled after each one in a row.
const PANIC_PAUSE: Duration = Duration::from_millis(500);
/// How long a claim on a run attempt holds without renewal: how long a dead replica's
/// attempt waits before another replica takes it.
const LEASE: Duration = Duration::from_secs(120);
/// How often the claim in hand is renewed while its ingest runs (a quarter of the lease: a
/// store busy for a renewal or two does not lose it).
const RENEW: Duration = Duration::from_secs(30);

/// This process's name in its claims: unique among replicas (a random part, as two hosts'
/// containers may both be pid 1), and the pid for whoever reads the table.
fn claimant() -> String {
    format!("pid {} {:016x}", std::process::id(), fastrand::u64(..))
}

/// Wakes the worker (a new delivery) or stops it.
#[derive(Debug, Default)]
pub(crate) struct Wake {
    state: Mutex<WakeState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct WakeState {
    pending: bool,
    stop: bool,
}

impl Wake {
    pub(crate) fn wake(&self) {
        self.state.lock().expect("wake lock").pending = true;
        self.changed.notify_all();
    }

    pub(crate) fn stop(&self) {
        self.state.lock().expect("wake lock").stop = true;
        self.changed.notify_all();
    }

    fn stopped(&self) -> bool {
        self.state.lock().expect("wake lock").stop
    }

    /// Sleeps up to `timeout` unless woken; `false` once stopped.
    fn sleep(&self, timeout: Duration) -> bool {
        let state = self.state.lock().expect("wake lock");
        let (mut state, _) = self
            .changed
            .wait_timeout_while(state, timeout, |s| !s.pending && !s.stop)
            .expect("wake lock");
        state.pending = false;
        !state.stop
    }
}

/// Starts the worker's thread; `died` is sent the number of panics in a row when the worker
/// gives up ([`WORKER_PANICS`]).
pub(crate) fn start(
    shared: Arc<Shared>,
    ingest: Arc<dyn IngestRun>,
    died: tokio::sync::oneshot::Sender<u32>,
) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("flakestat-serve-worker".to_string())
        .spawn(move || supervise(&shared, ingest.as_ref(), &claimant(), died))
        .expect("a thread for the worker")
}

/// Runs the loop, starting it again after a panic (see the module's doc).
fn supervise(
    shared: &Shared,
    ingest: &dyn IngestRun,
    claimant: &str,
    died: tokio::sync::oneshot::Sender<u32>,
) {
    let in_hand: Mutex<Option<QueuedRun>> = Mutex::new(None);
    let mut pause = PANIC_PAUSE;
    loop {
        let ran =
            std::panic::catch_unwind(AssertUnwindSafe(|| run(shared, ingest, claimant, &in_hand)));
        let Err(panic) = ran else {
            return;
        };
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        // Whoever held the store when it panicked left nothing half-done in it (each write is
        // a transaction): the handle takes it again as it was.
        let times = shared.health.worker_panicked(message.clone());
        shared.metrics.ingest("panicked", None);
        let run = in_hand
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(run) = run {
            let give_up = run.tries + 1 >= shared.config.max_tries;
            let failure = format!("the worker panicked: {message}");
            let recorded = shared
                .store
                .blocking(|s| s.fail_queued_run(&run.delivery, &failure, give_up));
            if let Err(e) = recorded {
                shared.say.say(format!("cannot record the failure: {e}"));
            }
            let_go(shared, claimant, &run);
        }
        if times >= WORKER_PANICS {
            shared.health.worker_dead(format!(
                "panicked {times} times in a row, the last: {message}"
            ));
            shared.say.say(format!(
                "the worker panicked {times} times in a row ({message}); stopping"
            ));
            let _ = died.send(times);
            return;
        }
        shared.say.say(format!(
            "the worker panicked ({message}); starting it again in {pause:?}"
        ));
        if !shared.wake.sleep(pause) {
            return;
        }
        pause *= 2;
    }
}

/// Lets the claim on `run`'s attempt go (a failed try: the next may be any replica's).
fn let_go(shared: &Shared, claimant: &str, run: &QueuedRun) {
    let released = shared
        .store
        .blocking(|s| s.release_claim(claimant, run.run, run.run_attempt));
    if let Err(e) = released {
        shared.say.say(format!(
            "cannot let the claim on run {} go (it runs out by itself): {e}",
            run.run
        ));
    }
}

/// Runs `work` while a thread renews the claim on `run`'s attempt every [`RENEW`].
fn holding_claim<T>(
    shared: &Shared,
    claimant: &str,
    run: &QueuedRun,
    work: impl FnOnce() -> T,
) -> T {
    std::thread::scope(|scope| {
        // Dropped when `work` returns or panics: the renewal ends.
        let (done, ended) = std::sync::mpsc::channel::<()>();
        scope.spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = ended.recv_timeout(RENEW) {
                let renewed = shared.store.blocking(|s| {
                    s.renew_claim(claimant, run.run, run.run_attempt, Utc::now(), LEASE)
                });
                match renewed {
                    Ok(true) => {}
                    Ok(false) => shared.say.say(format!(
                        "the claim on run {} attempt {} ran out and another replica took it",
                        run.run, run.run_attempt
                    )),
                    Err(e) => shared.say.say_now_and_then("worker_claim", || {
                        format!("cannot renew the claim on run {}: {e}", run.run)
                    }),
                }
            }
        });
        let out = work();
        drop(done);
        out
    })
}

fn run(
    shared: &Shared,
    ingest: &dyn IngestRun,
    claimant: &str,
    in_hand: &Mutex<Option<QueuedRun>>,
) {
    let mut last_resync = Instant::now();
    loop {
        if shared.wake.stopped() {
            return;
        }
        if let Some(every) = shared.config.resync
            && last_resync.elapsed() >= every
        {
            last_resync = Instant::now();
            match ingest.resync() {
                Ok(done) => {
                    shared.metrics.ingest("resync", Some(done));
                    shared.health.worker_ok();
                }
                Err(e) => {
                    shared.metrics.ingest("resync_failed", None);
                    shared.say.say(format!("resync failed: {}", e.message));
                }
            }
            continue;
        }
        let next = shared
            .store
            .blocking(|s| s.claim_queued_run(claimant, Utc::now(), LEASE));
        let run = match next {
            Ok(Some(run)) => run,
            Ok(None) => {
                shared.health.worker_ok();
                // Idle until a delivery, the next look at the queue, or the resync's time.
                let resync_due = shared
                    .config
                    .resync
                    .map_or(IDLE, |every| every.saturating_sub(last_resync.elapsed()));
                if !shared.wake.sleep(IDLE.min(resync_due)) {
                    return;
                }
                continue;
            }
            Err(e) => {
                shared.health.store_failed(Utc::now(), e.to_string());
                shared.say.say_now_and_then("worker_queue", || {
                    format!("cannot read the webhook queue: {e} (trying again every {BACKOFF:?})")
                });
                if !shared.wake.sleep(BACKOFF) {
                    return;
                }
                continue;
            }
        };
        *in_hand.lock().unwrap_or_else(PoisonError::into_inner) = Some(run.clone());
        let ingested = holding_claim(shared, claimant, &run, || ingest.ingest(&run));
        *in_hand.lock().unwrap_or_else(PoisonError::into_inner) = None;
        match ingested {
            Ok(done) => {
                shared.health.worker_ok();
                let finished = shared
                    .store
                    .blocking(|s| s.finish_queued_run(run.run, run.run_attempt));
                if let Err(e) = finished {
                    shared
                        .say
                        .say(format!("cannot mark run {} done: {e}", run.run));
                }
                shared.metrics.ingest("done", Some(done));
                shared.say.say(format!(
                    "ingested {} run {} attempt {} ({} logs)",
                    run.repo, run.run, run.run_attempt, done.logs_fetched
                ));
            }
            Err(failure) => {
                let give_up = !failure.retry || run.tries + 1 >= shared.config.max_tries;
                let recorded = shared
                    .store
                    .blocking(|s| s.fail_queued_run(&run.delivery, &failure.message, give_up));
                if let Err(e) = recorded {
                    shared.say.say(format!("cannot record the failure: {e}"));
                }
                let_go(shared, claimant, &run);
                shared
                    .metrics
                    .ingest(if give_up { "failed" } else { "retry" }, None);
                shared.say.say(format!(
                    "run {} attempt {} of {}: {}{}",
                    run.run,
                    run.run_attempt,
                    run.repo,
                    failure.message,
                    if give_up {
                        " (given up; the resync fills it in)"
                    } else {
                        " (tried again later)"
                    }
                ));
                if !give_up && !shared.wake.sleep(BACKOFF) {
                    return;
                }
            }
        }
    }
}
