//! The worker: one thread that takes the oldest queued completed run attempt, hands it to the
//! [`IngestRun`], and marks every delivery of that attempt done; a failure leaves the delivery
//! queued for another try (after a pause, so a spent rate limit or a network outage is not
//! hammered) until `max_tries`, then `failed`. Between attempts it runs the resync when due. It
//! sleeps until a new delivery wakes it; a stop lets it finish the attempt in hand (the rest
//! stays queued in the store for the next start).

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{IngestRun, Shared};

/// The pause after a failed ingest before the queue is read again.
const BACKOFF: Duration = Duration::from_secs(5);
/// How often an idle worker looks at the queue anyway (a delivery queued by another process
/// sharing the store, a due resync).
const IDLE: Duration = Duration::from_secs(30);

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

pub(crate) fn start(shared: Arc<Shared>, ingest: Arc<dyn IngestRun>) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("flakestat-serve-worker".to_string())
        .spawn(move || run(&shared, ingest.as_ref()))
        .expect("a thread for the worker")
}

fn run(shared: &Shared, ingest: &dyn IngestRun) {
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
                Ok(done) => shared.metrics.ingest("resync", Some(done)),
                Err(e) => {
                    shared.metrics.ingest("resync_failed", None);
                    shared.say.say(format!("resync failed: {}", e.message));
                }
            }
            continue;
        }
        let next = shared.store.lock().expect("store lock").next_queued_run();
        let run = match next {
            Ok(Some(run)) => run,
            Ok(None) => {
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
                shared
                    .say
                    .say(format!("cannot read the webhook queue: {e}"));
                if !shared.wake.sleep(BACKOFF) {
                    return;
                }
                continue;
            }
        };
        match ingest.ingest(&run) {
            Ok(done) => {
                let finished = shared
                    .store
                    .lock()
                    .expect("store lock")
                    .finish_queued_run(run.run, run.run_attempt);
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
                let recorded = shared.store.lock().expect("store lock").fail_queued_run(
                    &run.delivery,
                    &failure.message,
                    give_up,
                );
                if let Err(e) = recorded {
                    shared.say.say(format!("cannot record the failure: {e}"));
                }
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
