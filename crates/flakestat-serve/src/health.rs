//! What `/healthz` answers, and the queue's figures `/metrics` shows: kept in memory and
//! updated by those who meet the store (the queue writes, the worker, a read of the queue's
//! figures every second on a task of its own), so neither answer ever waits on the store.
//!
//! Three parts, each healthy or not: the store (the last operation on it failed), the worker
//! (it panicked and has not since come through a pass of its loop; or it gave up) and the queue
//! (its oldest delivery is older than `max_queue_age`, or its figures could not be read for a
//! while). `/healthz` says each on a line of its own and answers 503 when any is unhealthy:
//! systemd's watchdog, Kubernetes' probe or a load balancer then see what `/metrics` shows.

use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

use flakestat_core::model::Timestamp;
use flakestat_store::QueueStats;

/// Queue figures older than this are not trusted (their reads failed or hang).
const STALE_FIGURES: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
pub(crate) struct Health {
    inner: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The last store failure (when, what), cleared by the next success.
    store_error: Option<(Timestamp, String)>,
    store_failures: u64,
    /// The queue's figures and when they were read.
    queue: Option<(QueueStats, Timestamp)>,
    worker: Worker,
    worker_panics: u64,
}

#[derive(Debug, Default, Clone)]
enum Worker {
    #[default]
    Running,
    /// Panicked `times` in a row (the last with `message`); restarted after a pause.
    Panicked { times: u32, message: String },
    /// Ended for good (the process ends with it).
    Dead(String),
}

/// A snapshot of the figures `/metrics` shows.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Figures {
    pub queue: Option<QueueStats>,
    pub store_up: bool,
    pub store_failures: u64,
    pub worker_up: bool,
    pub worker_panics: u64,
}

impl Health {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere never takes the health page with it.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn store_ok(&self) {
        self.state().store_error = None;
    }

    pub(crate) fn store_failed(&self, now: Timestamp, error: String) {
        let mut state = self.state();
        state.store_failures += 1;
        state.store_error = Some((now, error));
    }

    pub(crate) fn queue_read(&self, stats: QueueStats, now: Timestamp) {
        let mut state = self.state();
        state.store_error = None;
        state.queue = Some((stats, now));
    }

    /// The worker came through a pass of its loop: whatever panicked before is behind it.
    pub(crate) fn worker_ok(&self) {
        let mut state = self.state();
        if matches!(state.worker, Worker::Panicked { .. }) {
            state.worker = Worker::Running;
        }
    }

    /// The worker panicked; returns how many times in a row.
    pub(crate) fn worker_panicked(&self, message: String) -> u32 {
        let mut state = self.state();
        state.worker_panics += 1;
        let times = match &state.worker {
            Worker::Panicked { times, .. } => times + 1,
            _ => 1,
        };
        state.worker = Worker::Panicked { times, message };
        times
    }

    pub(crate) fn worker_dead(&self, message: String) {
        self.state().worker = Worker::Dead(message);
    }

    pub(crate) fn figures(&self) -> Figures {
        let state = self.state();
        Figures {
            queue: state.queue.map(|(stats, _)| stats),
            store_up: state.store_error.is_none(),
            store_failures: state.store_failures,
            worker_up: matches!(state.worker, Worker::Running),
            worker_panics: state.worker_panics,
        }
    }

    /// `/healthz`: whether all is well, and one line per part.
    pub(crate) fn report(&self, now: Timestamp, max_queue_age: Duration) -> (bool, String) {
        let state = self.state();
        let mut healthy = true;
        let mut out = String::new();
        match &state.store_error {
            None => out.push_str("store: ok\n"),
            Some((at, error)) => {
                healthy = false;
                let _ = writeln!(
                    out,
                    "store: failing for {} s: {error}",
                    (now - *at).num_seconds().max(0)
                );
            }
        }
        match &state.worker {
            Worker::Running => out.push_str("worker: ok\n"),
            Worker::Panicked { times, message } => {
                healthy = false;
                let _ = writeln!(
                    out,
                    "worker: panicked ({times} in a row), restarting: {message}"
                );
            }
            Worker::Dead(message) => {
                healthy = false;
                let _ = writeln!(out, "worker: stopped: {message}");
            }
        }
        match state.queue {
            None => {
                healthy = false;
                out.push_str("queue: not read yet\n");
            }
            Some((stats, read_at)) => {
                let age = stats
                    .oldest
                    .map_or(0, |oldest| (now - oldest).num_seconds().max(0));
                let figures_age = (now - read_at).num_seconds().max(0);
                let stale = figures_age as u64 > STALE_FIGURES.as_secs();
                let old = age as u64 > max_queue_age.as_secs();
                healthy &= !stale && !old;
                let _ = writeln!(
                    out,
                    "queue: {}; {} queued, the oldest {age} s old{}{}",
                    if stale || old { "unhealthy" } else { "ok" },
                    stats.queued,
                    if old {
                        format!(" (more than {} s)", max_queue_age.as_secs())
                    } else {
                        String::new()
                    },
                    if stale {
                        format!(" (figures {figures_age} s old: the store does not answer)")
                    } else {
                        String::new()
                    },
                );
            }
        }
        (healthy, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn at(secs: i64) -> Timestamp {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    /// Each part turns the answer unhealthy on its own, and a success (a store read, a worker
    /// pass) turns it back.
    #[test]
    fn each_part_makes_the_answer_unhealthy_and_recovers() {
        let health = Health::default();
        let max = Duration::from_secs(60);
        assert!(!health.report(at(100), max).0, "no queue figures yet");
        let stats = QueueStats {
            queued: 2,
            oldest: Some(at(90)),
            ..QueueStats::default()
        };
        health.queue_read(stats, at(100));
        assert_eq!(
            health.report(at(100), max),
            (
                true,
                "store: ok\nworker: ok\nqueue: ok; 2 queued, the oldest 10 s old\n".to_string()
            )
        );
        let (healthy, text) = health.report(at(161), max);
        assert!(!healthy);
        assert!(
            text.contains("the oldest 71 s old (more than 60 s)"),
            "{text}"
        );
        assert!(text.contains("(figures 61 s old"), "{text}");

        health.store_failed(at(100), "the connection to the server was lost".into());
        let (healthy, text) = health.report(at(103), max);
        assert!(!healthy);
        assert!(
            text.contains("store: failing for 3 s: the connection to the server was lost"),
            "{text}"
        );
        health.queue_read(stats, at(103));
        assert!(health.report(at(103), max).0);

        assert_eq!(health.worker_panicked("boom".into()), 1);
        assert_eq!(health.worker_panicked("boom".into()), 2);
        let (healthy, text) = health.report(at(103), max);
        assert!(!healthy);
        assert!(
            text.contains("worker: panicked (2 in a row), restarting: boom"),
            "{text}"
        );
        health.worker_ok();
        assert!(health.report(at(103), max).0);
        assert_eq!(health.figures().worker_panics, 2);
        health.worker_dead("gone".into());
        health.worker_ok();
        assert!(
            health
                .report(at(103), max)
                .1
                .contains("worker: stopped: gone")
        );
    }
}
