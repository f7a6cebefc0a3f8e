//! Claims on the webhook queue's run attempts (`queue_claims`), so that several `serve`
//! replicas sharing one PostgreSQL store each ingest an attempt once.
//!
//! A claim is a lease on one run attempt, not on one queue row: several deliveries can name
//! one attempt (a repository's and an organization's hook, a replayed body), and one ingest
//! serves them all. The attempt's key is the table's primary key, so taking a claim is one
//! upsert that either makes the row, or takes over one whose lease has ended, or changes
//! nothing: on both engines two workers cannot both take it, whatever they read before.
//! `FOR UPDATE SKIP LOCKED` would hold a transaction open for the whole ingest (minutes of
//! HTTP); a lease holds nothing between statements, and a replica that dies mid-ingest leaves
//! a claim that ends by itself, after which another replica takes the attempt again.
//!
//! The holder renews its lease while it works ([`renew_claim`](Store::renew_claim)) and lets
//! it go when the ingest fails ([`release_claim`](Store::release_claim)), so another try may
//! come from any replica. After a finished ingest the claim is left to run out (the queue rows
//! are `done` by then, so nobody takes the attempt again) and is deleted after its end by the
//! next claim taken: a claim is never deleted while a worker that read the queue before the
//! ingest finished could still take it.
//!
//! Times are the claimant's clock, in seconds: replicas' clocks must agree to well within a
//! lease (NTP does).

use std::time::Duration;

use super::{StoreError, secs};
use crate::Store;
use crate::db::params;
use crate::queue::QueuedRun;
use flakestat_core::model::{RunId, Timestamp};

impl Store {
    /// The oldest queued run attempt no other claimant holds, claimed by `claimant` until
    /// `now + lease`; `None` when every queued attempt is held by another (or none is queued).
    /// A claimant's own live claim does not keep it out: a worker started again after a panic
    /// takes up the attempt it held.
    pub fn claim_queued_run(
        &mut self,
        claimant: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Option<QueuedRun>, StoreError> {
        let (now, until) = (secs(now), secs(now) + lease_secs(lease));
        loop {
            let Some(run) = self.oldest_queued_run(Some((claimant, now)))? else {
                return Ok(None);
            };
            // The row is still queued when the claim is taken: a worker that read it before
            // another's ingest finished does not take the attempt again. `WHERE EXISTS` also
            // ends the `SELECT` that SQLite's parser needs ended before `ON CONFLICT`.
            let taken = self.query(
                "INSERT INTO queue_claims (run_id, run_attempt, claimed_by, claimed_until)
                 SELECT ?1, ?2, ?3, ?4
                 WHERE EXISTS (
                    SELECT 1 FROM webhook_queue WHERE delivery = ?5 AND state = 'queued')
                 ON CONFLICT (run_id, run_attempt) DO UPDATE
                    SET claimed_by = excluded.claimed_by, claimed_until = excluded.claimed_until
                    WHERE queue_claims.claimed_until <= ?6
                        OR queue_claims.claimed_by = excluded.claimed_by
                 RETURNING claimed_by",
                params![
                    run.run.0,
                    run.run_attempt,
                    claimant,
                    until,
                    &run.delivery,
                    now
                ],
            )?;
            if !taken.is_empty() {
                // Claims that ended: finished ingests' and dead replicas'.
                self.execute(
                    "DELETE FROM queue_claims WHERE claimed_until <= ?1",
                    params![now],
                )?;
                return Ok(Some(run));
            }
            // Another took it between the read and the claim: the next read passes it by.
        }
    }

    /// Extends `claimant`'s claim on the attempt to `now + lease`; `false` when it holds none
    /// (its lease ran out and another replica took the attempt).
    pub fn renew_claim(
        &mut self,
        claimant: &str,
        run: RunId,
        run_attempt: u32,
        now: Timestamp,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let renewed = self.execute(
            "UPDATE queue_claims SET claimed_until = ?4
             WHERE run_id = ?1 AND run_attempt = ?2 AND claimed_by = ?3",
            params![run.0, run_attempt, claimant, secs(now) + lease_secs(lease)],
        )?;
        Ok(renewed > 0)
    }

    /// Lets `claimant`'s claim on the attempt go (a failed ingest: the next try may be any
    /// replica's).
    pub fn release_claim(
        &mut self,
        claimant: &str,
        run: RunId,
        run_attempt: u32,
    ) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM queue_claims WHERE run_id = ?1 AND run_attempt = ?2 AND claimed_by = ?3",
            params![run.0, run_attempt, claimant],
        )?;
        Ok(())
    }
}

/// A lease in whole seconds, at least one.
fn lease_secs(lease: Duration) -> i64 {
    i64::try_from(lease.as_secs())
        .unwrap_or(i64::MAX / 2)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{Delivery, Queued};
    use crate::{Store, from_secs};
    use flakestat_core::model::Repo;

    const LEASE: Duration = Duration::from_secs(60);

    fn deliver(store: &mut Store, id: &str, run: u64, received: i64) {
        let delivery = Delivery {
            id: id.to_string(),
            event: "workflow_run".to_string(),
            action: "completed".to_string(),
            repo: Repo::parse("octo/demo").unwrap(),
            run: RunId(run),
            run_attempt: 1,
            run_created_at: Some(from_secs(1_000)),
            received_at: from_secs(received),
            work: true,
        };
        assert_eq!(store.queue_delivery(&delivery).unwrap(), Queued::New);
    }

    fn claim(store: &mut Store, who: &str, now: i64) -> Option<String> {
        store
            .claim_queued_run(who, from_secs(now), LEASE)
            .unwrap()
            .map(|run| run.delivery)
    }

    /// Two replicas share the queue: an attempt one holds is passed by, whichever of its
    /// deliveries the other reads; a failed try lets it go to anyone; a finished one is never
    /// taken again, even once its claim has run out.
    #[test]
    fn a_claimed_attempt_is_passed_by_until_it_is_let_go() {
        for (engine, _dir, mut store) in crate::tests::engines() {
            eprintln!("{engine}");
            deliver(&mut store, "a", 7, 10);
            deliver(&mut store, "b", 8, 11);
            // A second delivery of run 7's attempt (another hook): one claim covers both.
            deliver(&mut store, "c", 7, 12);

            assert_eq!(claim(&mut store, "one", 100).as_deref(), Some("a"));
            assert_eq!(claim(&mut store, "two", 100).as_deref(), Some("b"));
            assert_eq!(
                claim(&mut store, "three", 101),
                None,
                "a and b held, run 7's c too"
            );
            // Its holder takes it up again (a worker restarted after a panic).
            assert_eq!(claim(&mut store, "one", 101).as_deref(), Some("a"));

            // A failed try of run 8: let go, anyone may take it.
            store.fail_queued_run("b", "network", false).unwrap();
            store.release_claim("two", RunId(8), 1).unwrap();
            assert_eq!(claim(&mut store, "three", 102).as_deref(), Some("b"));
            // Only the holder lets a claim go.
            store.release_claim("two", RunId(8), 1).unwrap();
            assert_eq!(claim(&mut store, "two", 102), None);

            // Run 7 finished: no one takes it again, even after its claim ran out.
            assert_eq!(store.finish_queued_run(RunId(7), 1).unwrap(), 2);
            assert_eq!(
                claim(&mut store, "two", 161),
                None,
                "three holds run 8 until 162"
            );
            assert_eq!(claim(&mut store, "two", 162).as_deref(), Some("b"));
            let claims: Vec<(i64, String)> = store
                .query_map(
                    "SELECT run_id, claimed_by FROM queue_claims ORDER BY run_id",
                    params![],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            assert_eq!(
                claims,
                [(8, "two".to_string())],
                "run 7's ended claim was deleted, run 8's taken over"
            );
        }
    }

    /// A replica that died mid-ingest: its claim holds the attempt until the lease ends, unless
    /// renewed; then another replica takes the attempt, and the dead one's renewal says it lost
    /// it.
    #[test]
    fn a_lease_that_runs_out_is_taken_over_and_a_renewed_one_is_not() {
        for (engine, _dir, mut store) in crate::tests::engines() {
            eprintln!("{engine}");
            deliver(&mut store, "a", 7, 10);
            assert_eq!(claim(&mut store, "one", 100).as_deref(), Some("a"));
            assert!(
                store
                    .renew_claim("one", RunId(7), 1, from_secs(150), LEASE)
                    .unwrap()
            );
            assert_eq!(claim(&mut store, "two", 200), None, "renewed until 210");
            assert_eq!(claim(&mut store, "two", 210).as_deref(), Some("a"));
            assert!(
                !store
                    .renew_claim("one", RunId(7), 1, from_secs(211), LEASE)
                    .unwrap(),
                "lost to two"
            );
            assert_eq!(claim(&mut store, "one", 211), None);
        }
    }

    /// Two workers, each with a connection of its own, drain a queue where every attempt has
    /// two deliveries: each attempt is claimed by one of them, once, on both engines.
    #[test]
    fn two_workers_on_one_store_claim_each_attempt_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut stores = vec![(
            "sqlite",
            Store::open(dir.path()).unwrap(),
            Store::open(dir.path()).unwrap(),
        )];
        if let Some(url) = crate::tests::postgres_url() {
            let url = crate::PostgresUrl::parse(&url).unwrap();
            stores.push((
                "postgres",
                Store::open_postgres(&url).unwrap(),
                Store::open_postgres(&url).unwrap(),
            ));
        }
        for (engine, mut one, two) in stores {
            eprintln!("{engine}");
            for run in 1..=40 {
                deliver(&mut one, &format!("a{run:02}"), run, run as i64);
                deliver(&mut one, &format!("b{run:02}"), run, 100 + run as i64);
            }
            let drain = |mut store: Store, who: &'static str| {
                std::thread::spawn(move || {
                    let mut took = Vec::new();
                    let now = from_secs(1_000);
                    while let Some(run) = store.claim_queued_run(who, now, LEASE).unwrap() {
                        took.push(run.run.0);
                        store.finish_queued_run(run.run, run.run_attempt).unwrap();
                    }
                    took
                })
            };
            let (a, b) = (drain(one, "one"), drain(two, "two"));
            let (a, b) = (a.join().unwrap(), b.join().unwrap());
            let mut all: Vec<u64> = a.iter().chain(&b).copied().collect();
            all.sort_unstable();
            assert_eq!(
                all,
                (1..=40).collect::<Vec<u64>>(),
                "one: {a:?}, two: {b:?}"
            );
        }
    }
}
