//! `/metrics` in Prometheus' text format: deliveries by event and outcome and connections by
//! outcome (counted in this process), the queue's depth and the age of its oldest entry (read
//! from the store every second, so they survive a restart; the last figures read are kept
//! while the store does not answer, never waited for), whether the store and the worker are
//! up and how often the worker panicked, logs fetched and the rate limit left (from the
//! ingests).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

use super::Ingested;
use super::health::Figures;
use super::payload::Event;
use flakestat_core::model::Timestamp;

#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    deliveries: BTreeMap<(&'static str, &'static str), u64>,
    connections: BTreeMap<&'static str, u64>,
    ingests: BTreeMap<&'static str, u64>,
    logs_fetched: u64,
    rate_limit_remaining: Option<u64>,
}

impl Metrics {
    pub(crate) fn delivery(&self, event: Event, outcome: &'static str) {
        *self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .deliveries
            .entry((event.as_str(), outcome))
            .or_default() += 1;
    }

    /// A connection `accepted`, `closed_idle` (the oldest idle one, for a newer), or
    /// `refused_full` (503: every open one was in a request).
    pub(crate) fn connection(&self, outcome: &'static str) {
        *self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .connections
            .entry(outcome)
            .or_default() += 1;
    }

    /// One ingest (or resync) ended: `outcome` is `done`, `retry` or `failed`.
    pub(crate) fn ingest(&self, outcome: &'static str, done: Option<Ingested>) {
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *inner.ingests.entry(outcome).or_default() += 1;
        if let Some(done) = done {
            inner.logs_fetched += done.logs_fetched;
            if done.rate_limit_remaining.is_some() {
                inner.rate_limit_remaining = done.rate_limit_remaining;
            }
        }
    }

    /// The text; `figures.queue` is `None` until the store's queue was first read (the gauges
    /// are left out).
    pub(crate) fn render(&self, figures: Figures, now: Timestamp) -> String {
        let inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out = String::new();
        out.push_str(
            "# HELP flakestat_webhook_deliveries_total Webhook deliveries answered, by event and outcome.\n\
             # TYPE flakestat_webhook_deliveries_total counter\n",
        );
        for ((event, outcome), n) in &inner.deliveries {
            let _ = writeln!(
                out,
                "flakestat_webhook_deliveries_total{{event=\"{event}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        out.push_str(
            "# HELP flakestat_connections_total Connections, by outcome (accepted, closed_idle, refused_full).\n\
             # TYPE flakestat_connections_total counter\n",
        );
        for (outcome, n) in &inner.connections {
            let _ = writeln!(
                out,
                "flakestat_connections_total{{outcome=\"{outcome}\"}} {n}"
            );
        }
        out.push_str(
            "# HELP flakestat_ingests_total Run attempts handed to the ingest, by outcome.\n\
             # TYPE flakestat_ingests_total counter\n",
        );
        for (outcome, n) in &inner.ingests {
            let _ = writeln!(out, "flakestat_ingests_total{{outcome=\"{outcome}\"}} {n}");
        }
        let _ = write!(
            out,
            "# HELP flakestat_store_up Whether the last operation on the store succeeded.\n\
             # TYPE flakestat_store_up gauge\n\
             flakestat_store_up {}\n\
             # HELP flakestat_store_failures_total Failed operations on the store.\n\
             # TYPE flakestat_store_failures_total counter\n\
             flakestat_store_failures_total {}\n\
             # HELP flakestat_worker_up Whether the worker is running (not panicked since its last pass).\n\
             # TYPE flakestat_worker_up gauge\n\
             flakestat_worker_up {}\n\
             # HELP flakestat_worker_panics_total Panics of the worker (each restarted it).\n\
             # TYPE flakestat_worker_panics_total counter\n\
             flakestat_worker_panics_total {}\n",
            u8::from(figures.store_up),
            figures.store_failures,
            u8::from(figures.worker_up),
            figures.worker_panics,
        );
        if let Some(queue) = figures.queue {
            let age = queue
                .oldest
                .map_or(0, |oldest| (now - oldest).num_seconds().max(0));
            let _ = write!(
                out,
                "# HELP flakestat_queue_depth Completed run attempts queued for the worker.\n\
                 # TYPE flakestat_queue_depth gauge\n\
                 flakestat_queue_depth {}\n\
                 # HELP flakestat_queue_oldest_age_seconds Age of the oldest queued delivery (0 when none).\n\
                 # TYPE flakestat_queue_oldest_age_seconds gauge\n\
                 flakestat_queue_oldest_age_seconds {age}\n\
                 # HELP flakestat_queue_failed Deliveries whose ingest was given up (the resync fills them in).\n\
                 # TYPE flakestat_queue_failed gauge\n\
                 flakestat_queue_failed {}\n",
                queue.queued, queue.failed
            );
        }
        let _ = write!(
            out,
            "# HELP flakestat_logs_fetched_total Job logs downloaded by the ingests.\n\
             # TYPE flakestat_logs_fetched_total counter\n\
             flakestat_logs_fetched_total {}\n",
            inner.logs_fetched
        );
        if let Some(left) = inner.rate_limit_remaining {
            let _ = write!(
                out,
                "# HELP flakestat_rate_limit_remaining GitHub's rate limit left after the last ingest.\n\
                 # TYPE flakestat_rate_limit_remaining gauge\n\
                 flakestat_rate_limit_remaining {left}\n"
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;
    use flakestat_store::QueueStats;

    #[test]
    fn metrics_render_counters_in_order_and_the_queue_gauges() {
        let metrics = Metrics::default();
        metrics.delivery(Event::WorkflowRun, "queued");
        metrics.delivery(Event::WorkflowRun, "queued");
        metrics.delivery(Event::Other, "unauthorized");
        metrics.ingest(
            "done",
            Some(Ingested {
                logs_fetched: 3,
                rate_limit_remaining: Some(4990),
            }),
        );
        let now = DateTime::from_timestamp(100, 0).unwrap();
        let queue = QueueStats {
            queued: 2,
            oldest: DateTime::from_timestamp(58, 0),
            ..QueueStats::default()
        };
        metrics.connection("accepted");
        let figures = Figures {
            queue: Some(queue),
            store_up: true,
            store_failures: 1,
            worker_up: false,
            worker_panics: 2,
        };
        let text = metrics.render(figures, now);
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "flakestat_webhook_deliveries_total{event=\"other\",outcome=\"unauthorized\"} 1",
                "flakestat_webhook_deliveries_total{event=\"workflow_run\",outcome=\"queued\"} 2",
                "flakestat_connections_total{outcome=\"accepted\"} 1",
                "flakestat_ingests_total{outcome=\"done\"} 1",
                "flakestat_store_up 1",
                "flakestat_store_failures_total 1",
                "flakestat_worker_up 0",
                "flakestat_worker_panics_total 2",
                "flakestat_queue_depth 2",
                "flakestat_queue_oldest_age_seconds 42",
                "flakestat_queue_failed 0",
                "flakestat_logs_fetched_total 3",
                "flakestat_rate_limit_remaining 4990",
            ]
        );
    }
}
