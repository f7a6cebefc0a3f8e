//! The webhook queue on PostgreSQL: the same rows, states and order as `queue.rs` (SQLite).

use super::{PgStore, id, uid};
use crate::queue::{Delivery, QueueStats, QueuedRun, initial_state, parse_attempt};
use crate::{StoreError, from_secs, secs};
use flakestat_core::model::{Repo, RunId};

impl PgStore {
    /// See `SqliteStore::queue_delivery`.
    pub fn queue_delivery(&self, delivery: &Delivery) -> Result<bool, StoreError> {
        let d = delivery.clone();
        let state = initial_state(delivery);
        self.conn.call(move |c| {
            let added = c.execute(
                "INSERT INTO webhook_queue (delivery, event, action, owner, name, run_id,
                    run_attempt, run_created_at, received_at, state)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                 ON CONFLICT (delivery) DO NOTHING",
                &[
                    &d.id,
                    &d.event,
                    &d.action,
                    &d.repo.owner,
                    &d.repo.name,
                    &id(d.run.0),
                    &i64::from(d.run_attempt),
                    &d.run_created_at.map(secs),
                    &secs(d.received_at),
                    &state,
                ],
            )?;
            Ok(added == 1)
        })
    }

    /// See `SqliteStore::next_queued_run`.
    pub fn next_queued_run(&self) -> Result<Option<QueuedRun>, StoreError> {
        let row = self.conn.call(|c| {
            Ok(c.query_opt(
                "SELECT delivery, owner, name, run_id, run_attempt, run_created_at, received_at,
                    tries
                 FROM webhook_queue WHERE state = 'queued'
                 ORDER BY received_at, delivery COLLATE \"C\" LIMIT 1",
                &[],
            )?
            .map(|r| {
                (
                    r.get::<_, String>(0),
                    r.get::<_, String>(1),
                    r.get::<_, String>(2),
                    uid(&r, 3),
                    r.get::<_, i64>(4),
                    r.get::<_, Option<i64>>(5),
                    r.get::<_, i64>(6),
                    r.get::<_, i32>(7),
                )
            }))
        })?;
        let Some((delivery, owner, name, run, attempt, created, received, tries)) = row else {
            return Ok(None);
        };
        let run_attempt = parse_attempt(&delivery, attempt)?;
        Ok(Some(QueuedRun {
            delivery,
            repo: Repo { owner, name },
            run: RunId(run),
            run_attempt,
            run_created_at: created.map(from_secs),
            received_at: from_secs(received),
            tries: tries.max(0) as u32,
        }))
    }

    /// See `SqliteStore::finish_queued_run`.
    pub fn finish_queued_run(&self, run: RunId, run_attempt: u32) -> Result<u64, StoreError> {
        self.conn.call(move |c| {
            Ok(c.execute(
                "UPDATE webhook_queue SET state = 'done', error = NULL
                 WHERE state = 'queued' AND run_id = $1 AND run_attempt = $2",
                &[&id(run.0), &i64::from(run_attempt)],
            )?)
        })
    }

    /// See `SqliteStore::fail_queued_run`.
    pub fn fail_queued_run(
        &self,
        delivery: &str,
        error: &str,
        give_up: bool,
    ) -> Result<(), StoreError> {
        let (delivery, error) = (delivery.to_string(), error.to_string());
        let state = if give_up { "failed" } else { "queued" };
        self.conn.call(move |c| {
            c.execute(
                "UPDATE webhook_queue SET tries = tries + 1, error = $2, state = $3
                 WHERE delivery = $1 AND state = 'queued'",
                &[&delivery, &error, &state],
            )?;
            Ok(())
        })
    }

    /// See `SqliteStore::queue_stats`.
    pub fn queue_stats(&self) -> Result<QueueStats, StoreError> {
        let rows: Vec<(String, i64, i64)> = self.conn.call(|c| {
            Ok(c.query(
                "SELECT state, count(*), min(received_at) FROM webhook_queue GROUP BY state",
                &[],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect())
        })?;
        let mut stats = QueueStats::default();
        for (state, count, oldest) in rows {
            stats.add(&state, count.max(0) as u64, oldest)?;
        }
        Ok(stats)
    }
}
