//! `/metrics` in Prometheus' text format: deliveries by event and outcome (counted in this
//! process), the queue's depth and the age of its oldest entry (read from the store, so they
//! survive a restart), logs fetched and the rate limit left (from the ingests).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

use super::Ingested;
use super::payload::Event;
use flakestat_core::model::Timestamp;
use flakestat_store::QueueStats;

#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    deliveries: BTreeMap<(&'static str, &'static str), u64>,
    ingests: BTreeMap<&'static str, u64>,
    logs_fetched: u64,
    rate_limit_remaining: Option<u64>,
}

impl Metrics {
    pub(crate) fn delivery(&self, event: Event, outcome: &'static str) {
        *self
            .inner
            .lock()
            .expect("metrics lock")
            .deliveries
            .entry((event.as_str(), outcome))
            .or_default() += 1;
    }

    /// One ingest (or resync) ended: `outcome` is `done`, `retry` or `failed`.
    pub(crate) fn ingest(&self, outcome: &'static str, done: Option<Ingested>) {
        let mut inner = self.inner.lock().expect("metrics lock");
        *inner.ingests.entry(outcome).or_default() += 1;
        if let Some(done) = done {
            inner.logs_fetched += done.logs_fetched;
            if done.rate_limit_remaining.is_some() {
                inner.rate_limit_remaining = done.rate_limit_remaining;
            }
        }
    }

    /// The text; `queue` is `None` when the store could not be read (the gauges are left out).
    pub(crate) fn render(&self, queue: Option<QueueStats>, now: Timestamp) -> String {
        let inner = self.inner.lock().expect("metrics lock");
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
            "# HELP flakestat_ingests_total Run attempts handed to the ingest, by outcome.\n\
             # TYPE flakestat_ingests_total counter\n",
        );
        for (outcome, n) in &inner.ingests {
            let _ = writeln!(out, "flakestat_ingests_total{{outcome=\"{outcome}\"}} {n}");
        }
        if let Some(queue) = queue {
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
        let text = metrics.render(Some(queue), now);
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "flakestat_webhook_deliveries_total{event=\"other\",outcome=\"unauthorized\"} 1",
                "flakestat_webhook_deliveries_total{event=\"workflow_run\",outcome=\"queued\"} 2",
                "flakestat_ingests_total{outcome=\"done\"} 1",
                "flakestat_queue_depth 2",
                "flakestat_queue_oldest_age_seconds 42",
                "flakestat_queue_failed 0",
                "flakestat_logs_fetched_total 3",
                "flakestat_rate_limit_remaining 4990",
            ]
        );
    }
}
