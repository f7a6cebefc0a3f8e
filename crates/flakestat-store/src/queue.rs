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
use crate::Store;
use crate::db::params;
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

/// What [`queue_delivery`](Store::queue_delivery) did with a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// A new row: `queued` for the worker, or `noted`.
    New,
    /// A delivery of this id is stored already (GitHub's "Redeliver"): left as it was.
    Duplicate,
    /// A new delivery id naming a completed run attempt the worker has already ingested (a
    /// replayed body: the delivery id is not signed): kept as `done`, costing no request.
    AlreadyIngested,
}

/// The largest run id a queue row may hold: GitHub's ids are below 2^53.
const MAX_RUN_ID: i64 = (1 << 53) - 1;

impl Store {
    /// Stores one delivery, in one statement (so its wait for other writers is the
    /// connection's busy timeout, nothing more). A completed run attempt whose ingest is
    /// already `done` is stored `done` at once.
    pub fn queue_delivery(&mut self, delivery: &Delivery) -> Result<Queued, StoreError> {
        let state = if delivery.work { "queued" } else { "noted" };
        // `WHERE true`: SQLite's parser needs it between `INSERT … SELECT` and `ON CONFLICT`.
        let added = self.query(
            "INSERT INTO webhook_queue (delivery, event, action, owner, name, run_id,
                run_attempt, run_created_at, received_at, state)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,
                CASE WHEN ?10 = 'queued' AND EXISTS (
                    SELECT 1 FROM webhook_queue
                    WHERE run_id = ?6 AND run_attempt = ?7 AND state = 'done'
                        AND lower(owner) = lower(?4) AND lower(name) = lower(?5))
                THEN 'done' ELSE ?10 END
             WHERE true
             ON CONFLICT (delivery) DO NOTHING
             RETURNING state",
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
                state,
            ],
        )?;
        Ok(match added.first() {
            None => Queued::Duplicate,
            Some(row) if row.get::<String>(0)? == "done" => Queued::AlreadyIngested,
            Some(_) => Queued::New,
        })
    }

    /// The oldest queued run attempt, if any (ties by delivery id, byte by byte). A row that
    /// cannot be read back as a run attempt (a run id outside GitHub's range, stored by an
    /// older `serve` that did not check) is set aside as `failed` with what is wrong with it,
    /// and the next row is read: one bad row never holds up the rows after it. One worker's
    /// read: workers sharing a store claim their rows instead (`claim_queued_run`).
    pub fn next_queued_run(&self) -> Result<Option<QueuedRun>, StoreError> {
        self.oldest_queued_run(None)
    }

    /// [`next_queued_run`](Self::next_queued_run), among the rows no other claimant holds a
    /// live claim on (`claims.rs`) when `free_for` is `Some((claimant, now))`.
    pub(crate) fn oldest_queued_run(
        &self,
        free_for: Option<(&str, i64)>,
    ) -> Result<Option<QueuedRun>, StoreError> {
        let bytewise = self.dialect().bytewise();
        loop {
            let rows = match free_for {
                None => self.query(
                    &format!(
                        "SELECT delivery, owner, name, run_id, run_attempt, run_created_at,
                            received_at, tries
                         FROM webhook_queue WHERE state = 'queued'
                         ORDER BY received_at, delivery {bytewise} LIMIT 1"
                    ),
                    params![],
                )?,
                Some((claimant, now)) => self.query(
                    &format!(
                        "SELECT q.delivery, q.owner, q.name, q.run_id, q.run_attempt,
                            q.run_created_at, q.received_at, q.tries
                         FROM webhook_queue q WHERE q.state = 'queued' AND NOT EXISTS (
                            SELECT 1 FROM queue_claims c
                            WHERE c.run_id = q.run_id AND c.run_attempt = q.run_attempt
                                AND c.claimed_until > ?2 AND c.claimed_by <> ?1)
                         ORDER BY q.received_at, q.delivery {bytewise} LIMIT 1"
                    ),
                    params![claimant, now],
                )?,
            };
            let Some(row) = rows.first() else {
                return Ok(None);
            };
            let delivery: String = row.get(0)?;
            match queued_run(row) {
                Ok(run) => return Ok(Some(run)),
                Err(why) => {
                    self.execute(
                        "UPDATE webhook_queue SET state = 'failed', error = ?2
                         WHERE delivery = ?1 AND state = 'queued'",
                        params![&delivery, format!("set aside, cannot be read: {why}")],
                    )?;
                }
            }
        }
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

/// One row of `next_queued_run`'s query as a run attempt, or what is wrong with it (in words
/// for the row's `error`, not the store's advice for a damaged file).
fn queued_run(r: &crate::db::Row) -> Result<QueuedRun, String> {
    let detail = |e: StoreError| match e {
        StoreError::Corrupt(detail) => detail,
        other => other.to_string(),
    };
    let run: i64 = r.get(3).map_err(detail)?;
    if !(1..=MAX_RUN_ID).contains(&run) {
        return Err(format!("run id {run} is not a GitHub id"));
    }
    let run_attempt: u32 = r.get(4).map_err(detail)?;
    if run_attempt == 0 {
        return Err("run attempt 0".to_string());
    }
    Ok(QueuedRun {
        repo: Repo {
            owner: r.get(1).map_err(detail)?,
            name: r.get(2).map_err(detail)?,
        },
        run: RunId(run as u64),
        run_attempt,
        run_created_at: r.get::<Option<i64>>(5).map_err(detail)?.map(from_secs),
        received_at: from_secs(r.get(6).map_err(detail)?),
        tries: r.get(7).map_err(detail)?,
        delivery: r.get(0).map_err(detail)?,
    })
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
            let new = Queued::New;
            assert_eq!(
                store.queue_delivery(&delivery("b", 7, true, 20)).unwrap(),
                new
            );
            assert_eq!(
                store.queue_delivery(&delivery("b", 8, true, 5)).unwrap(),
                Queued::Duplicate
            );
            assert_eq!(
                store.queue_delivery(&delivery("a", 9, true, 20)).unwrap(),
                new
            );
            assert_eq!(
                store.queue_delivery(&delivery("c", 7, true, 30)).unwrap(),
                new
            );
            assert_eq!(
                store.queue_delivery(&delivery("n", 7, false, 1)).unwrap(),
                new
            );
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
            // Run 7's attempt is done: the same body under a new delivery id is kept done,
            // not queued again (no ingest, no request); a run not yet done is queued.
            assert_eq!(
                store
                    .queue_delivery(&delivery("replay", 7, true, 40))
                    .unwrap(),
                Queued::AlreadyIngested
            );
            assert_eq!(store.next_queued_run().unwrap(), None);
            assert_eq!(
                store.queue_delivery(&delivery("z", 9, true, 41)).unwrap(),
                new
            );
            assert_eq!(store.next_queued_run().unwrap().unwrap().delivery, "z");
        }
    }

    /// Issue 41's poison row: a run id an older `serve` stored wrapped to a negative number
    /// (2^63+5) is set aside as `failed` with what is wrong with it, on both engines, and the
    /// rows after it are read; the error names no cache folder to delete.
    #[test]
    fn an_unreadable_row_is_set_aside_and_never_blocks_the_rows_after_it() {
        for (engine, _dir, mut store) in crate::tests::engines() {
            eprintln!("{engine}");
            let poison = delivery("0-poison", (1 << 63) + 5, true, 10);
            assert_eq!(store.queue_delivery(&poison).unwrap(), Queued::New);
            let huge = delivery("1-huge", 1 << 60, true, 11);
            assert_eq!(store.queue_delivery(&huge).unwrap(), Queued::New);
            assert_eq!(
                store
                    .queue_delivery(&delivery("2-good", 7, true, 12))
                    .unwrap(),
                Queued::New
            );
            let next = store.next_queued_run().unwrap().unwrap();
            assert_eq!((next.delivery.as_str(), next.run), ("2-good", RunId(7)));
            let stats = store.queue_stats().unwrap();
            assert_eq!((stats.queued, stats.failed), (1, 2));
            let errors: Vec<String> = store
                .query_map(
                    "SELECT error FROM webhook_queue WHERE state = 'failed' ORDER BY delivery",
                    params![],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(
                errors,
                [
                    "set aside, cannot be read: run id -9223372036854775803 is not a GitHub id",
                    "set aside, cannot be read: run id 1152921504606846976 is not a GitHub id",
                ]
            );
        }
    }
}
