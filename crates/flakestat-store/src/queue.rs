//! The webhook queue (schema version 8): every GitHub delivery `flakestat serve` accepts,
//! stored before it is answered, so an answer never waits for GitHub and a stopped server loses
//! nothing (a restart drains what is still queued).
//!
//! One row per `X-GitHub-Delivery`: GitHub redelivers under the same id, so a redelivery is
//! stored once (`queue_delivery` says whether the row is new). A delivery that names a
//! completed run attempt is `queued` until the worker has ingested that attempt (`done`) or
//! given up on it (`failed`, with the error); any other accepted delivery is `noted`: kept for
//! the record, nothing to do. The rows are read oldest first, ties by delivery id, on both
//! engines alike.

use super::{StoreError, from_secs, secs};
use crate::db::{Db, params};
use flakestat_core::model::{Repo, RunId, Timestamp};

/// One accepted delivery, as `serve` read it from the headers and the payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `X-GitHub-Delivery`.
    pub id: String,
    /// `X-GitHub-Event`: `workflow_run`, `workflow_job`.
    pub event: String,
    /// The payload's `action`: `requested`, `in_progress`, `completed`, `queued`, …
    pub action: String,
    pub repo: Repo,
    pub run: RunId,
    pub run_attempt: u32,
    /// The run's `created_at`, when the payload names it (`workflow_run` does, `workflow_job`
    /// does not).
    pub run_created_at: Option<Timestamp>,
    pub received_at: Timestamp,
    /// `true`: a completed run attempt, for the worker to ingest; `false`: kept, nothing to do.
    pub work: bool,
}

/// A queued completed run attempt, for the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedRun {
    pub delivery: String,
    pub repo: Repo,
    pub run: RunId,
    pub run_attempt: u32,
    pub run_created_at: Option<Timestamp>,
    pub received_at: Timestamp,
    /// Failed ingests so far.
    pub tries: u32,
}

/// What the queue holds, for `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Deliveries waiting for the worker.
    pub queued: u64,
    /// When the oldest of them arrived.
    pub oldest: Option<Timestamp>,
    pub done: u64,
    pub failed: u64,
    pub noted: u64,
}

impl dyn Db + '_ {
    /// Stores one delivery; `false` when a delivery of this id is stored already (a
    /// redelivery), which is then left as it was.
    pub fn queue_delivery(&mut self, delivery: &Delivery) -> Result<bool, StoreError> {
        let added = self.execute(
            "INSERT INTO webhook_queue (delivery, event, action, owner, name, run_id,
                run_attempt, run_created_at, received_at, state)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (delivery) DO NOTHING",
            params![
                &delivery.id,
                &delivery.event,
                &delivery.action,
                &delivery.repo.owner,
                &delivery.repo.name,
                delivery.run.0,
                delivery.run_attempt,
                delivery.run_created_at.map(secs),
                secs(delivery.received_at),
                if delivery.work { "queued" } else { "noted" },
            ],
        )?;
        Ok(added == 1)
    }

    /// The oldest queued run attempt, if any (ties by delivery id, byte by byte).
    pub fn next_queued_run(&self) -> Result<Option<QueuedRun>, StoreError> {
        self.query_row(
            "SELECT delivery, owner, name, run_id, run_attempt, run_created_at, received_at,
                tries
             FROM webhook_queue WHERE state = 'queued'
             ORDER BY received_at, delivery COLLATE BINARY LIMIT 1",
            params![],
            |r| {
                Ok(QueuedRun {
                    repo: Repo {
                        owner: r.get(1)?,
                        name: r.get(2)?,
                    },
                    run: RunId(r.get(3)?),
                    run_attempt: r.get(4)?,
                    run_created_at: r.get::<Option<i64>>(5)?.map(from_secs),
                    received_at: from_secs(r.get(6)?),
                    tries: r.get(7)?,
                    delivery: r.get(0)?,
                })
            },
        )
    }

    /// Marks every queued delivery of this run attempt done (several deliveries can name one
    /// attempt: one ingest serves them all).
    pub fn finish_queued_run(&mut self, run: RunId, run_attempt: u32) -> Result<u64, StoreError> {
        self.execute(
            "UPDATE webhook_queue SET state = 'done', error = NULL
             WHERE state = 'queued' AND run_id = ?1 AND run_attempt = ?2",
            params![run.0, run_attempt],
        )
    }

    /// Records a failed ingest of a queued delivery: it stays queued for another try, or with
    /// `give_up` it is `failed` (the resync fills the run in later).
    pub fn fail_queued_run(
        &mut self,
        delivery: &str,
        error: &str,
        give_up: bool,
    ) -> Result<(), StoreError> {
        let state = if give_up { "failed" } else { "queued" };
        self.execute(
            "UPDATE webhook_queue SET tries = tries + 1, error = ?2, state = ?3
             WHERE delivery = ?1 AND state = 'queued'",
            params![delivery, error, state],
        )?;
        Ok(())
    }

    /// How many deliveries are in each state, and when the oldest queued one arrived.
    pub fn queue_stats(&self) -> Result<QueueStats, StoreError> {
        let mut stats = QueueStats::default();
        for r in self.query(
            "SELECT state, count(*), min(received_at) FROM webhook_queue GROUP BY state",
            params![],
        )? {
            stats.add(&r.get::<String>(0)?, r.get(1)?, r.get(2)?)?;
        }
        Ok(stats)
    }
}

impl QueueStats {
    /// Adds one state's row of `SELECT state, count(*), min(received_at)`.
    fn add(&mut self, state: &str, count: u64, oldest: i64) -> Result<(), StoreError> {
        match state {
            "queued" => {
                self.queued = count;
                self.oldest = Some(from_secs(oldest));
            }
            "done" => self.done = count,
            "failed" => self.failed = count,
            "noted" => self.noted = count,
            other => {
                return Err(StoreError::Corrupt(format!(
                    "webhook queue state {other:?}"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery(id: &str, run: u64, work: bool, received: i64) -> Delivery {
        Delivery {
            id: id.to_string(),
            event: "workflow_run".to_string(),
            action: if work { "completed" } else { "requested" }.to_string(),
            repo: Repo::parse("octo/demo").unwrap(),
            run: RunId(run),
            run_attempt: 1,
            run_created_at: Some(from_secs(1_000)),
            received_at: from_secs(received),
            work,
        }
    }

    /// Queue, redeliver, take oldest first, finish every delivery of one attempt, fail and
    /// give up: what the worker and `/metrics` read back.
    #[test]
    fn a_delivery_is_stored_once_and_taken_oldest_first() {
        for (engine, _dir, mut store) in crate::tests::engines() {
            eprintln!("{engine}");
            assert!(store.queue_delivery(&delivery("b", 7, true, 20)).unwrap());
            assert!(!store.queue_delivery(&delivery("b", 8, true, 5)).unwrap());
            assert!(store.queue_delivery(&delivery("a", 9, true, 20)).unwrap());
            assert!(store.queue_delivery(&delivery("c", 7, true, 30)).unwrap());
            assert!(store.queue_delivery(&delivery("n", 7, false, 1)).unwrap());
            let stats = store.queue_stats().unwrap();
            assert_eq!((stats.queued, stats.noted), (3, 1));
            assert_eq!(stats.oldest, Some(from_secs(20)));

            let first = store.next_queued_run().unwrap().unwrap();
            assert_eq!((first.delivery.as_str(), first.run), ("a", RunId(9)));
            store.fail_queued_run("a", "network", false).unwrap();
            let again = store.next_queued_run().unwrap().unwrap();
            assert_eq!((again.delivery.as_str(), again.tries), ("a", 1));
            store.fail_queued_run("a", "network", true).unwrap();

            let next = store.next_queued_run().unwrap().unwrap();
            assert_eq!((next.delivery.as_str(), next.run), ("b", RunId(7)));
            assert_eq!(store.finish_queued_run(RunId(7), 1).unwrap(), 2);
            assert_eq!(store.next_queued_run().unwrap(), None);
            let stats = store.queue_stats().unwrap();
            assert_eq!(
                (
                    stats.queued,
                    stats.done,
                    stats.failed,
                    stats.noted,
                    stats.oldest
                ),
                (0, 2, 1, 1, None)
            );
        }
    }
}
