//! What a stopped survey must not forget about the failed-job logs it has not stored yet: the
//! next download each needs when that is not the job's own endpoint (`log_plans`, schema
//! version 7), and the logs of one attempt archive stored together.
//!
//! A survey can stop anywhere (a spent rate limit, Ctrl-C, SIGKILL). A log learnt to be another
//! execution's (GitHub's stale-attempt-log bug) needs its attempt's archive; a job that the
//! archive, asked first, lacked needs its own endpoint. Both facts cost a download to learn: kept
//! here until the job's log outcome is stored (which removes them), the next survey goes straight
//! to the download that is still needed instead of repeating the one that taught it. An
//! archive's logs, and the plans of the jobs it lacked, are one transaction: a stop never leaves
//! half an archive stored, which would change what the next survey asks for.

use std::collections::BTreeMap;

use super::{LogEntry, StoreError, log_row};
use crate::Store;
use crate::db::{Tx, params};
use flakestat_core::model::{Classification, JobId};

/// The next download a failed job's log needs, when it is not the job's own endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogPlan {
    /// The job's endpoint served another execution's log: its attempt's archive is asked.
    Archive,
    /// Its attempt's archive, asked first, lacked it: the job's endpoint is asked.
    Job,
}

impl LogPlan {
    /// The word in `log_plans.next` (both engines).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LogPlan::Archive => "archive",
            LogPlan::Job => "job",
        }
    }

    pub(crate) fn parse(job: JobId, word: &str) -> Result<LogPlan, StoreError> {
        match word {
            "archive" => Ok(LogPlan::Archive),
            "job" => Ok(LogPlan::Job),
            other => Err(StoreError::Corrupt(format!(
                "log plan {other:?} of job {job}"
            ))),
        }
    }
}

/// One log outcome to store, with its classification when it is a stored log.
#[derive(Debug, Clone)]
pub struct LogOutcome {
    pub job: JobId,
    pub entry: LogEntry,
    pub classification: Option<Classification>,
}

impl Store {
    /// Stores log outcomes (each with its classification under `fingerprint`), forgets their
    /// plans, and records `plans` for jobs whose log is still to come, in one transaction.
    pub fn store_logs(
        &mut self,
        fingerprint: &str,
        logs: &[LogOutcome],
        plans: &[(JobId, LogPlan)],
    ) -> Result<(), StoreError> {
        self.transaction(Tx::Write, |db| {
            for log in logs {
                let classification = log.classification.as_ref().map(|c| (fingerprint, c));
                db.write_log(log.job, &log.entry, classification)?;
            }
            for (job, plan) in plans {
                db.execute(
                    "INSERT INTO log_plans (job_id, next) VALUES (?1, ?2)
                     ON CONFLICT (job_id) DO UPDATE SET next = excluded.next",
                    params![job.0, plan.as_str()],
                )?;
            }
            Ok(())
        })
    }

    /// The plans recorded for these jobs; a job absent from the map has none.
    pub fn load_log_plans(&self, jobs: &[JobId]) -> Result<BTreeMap<JobId, LogPlan>, StoreError> {
        self.per_job(
            "SELECT job_id, next FROM log_plans WHERE job_id IN ({ids})",
            jobs,
            LogPlan::parse,
        )
    }

    /// Writes one log outcome and its classification (inside the caller's transaction), and
    /// forgets the job's plan. A stored log is never replaced by another outcome (another
    /// writer's download that found it expired meanwhile).
    pub(crate) fn write_log(
        &self,
        job: JobId,
        entry: &LogEntry,
        classification: Option<(&str, &Classification)>,
    ) -> Result<(), StoreError> {
        let (status, size, blob) = log_row(entry);
        self.execute(
            "INSERT INTO logs (job_id, status, raw_size, zstd) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (job_id) DO UPDATE SET
                status = excluded.status, raw_size = excluded.raw_size, zstd = excluded.zstd
             WHERE logs.status <> 'stored' OR excluded.status = 'stored'",
            params![job.0, status, size, blob],
        )?;
        if let Some((fingerprint, classification)) = classification {
            self.upsert_classification(job, fingerprint, classification)?;
        }
        self.execute("DELETE FROM log_plans WHERE job_id = ?1", params![job.0])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compress_log;
    use crate::tests::engines;

    /// A plan is kept until the job's log outcome is stored; an archive's logs and the plans
    /// of the jobs it lacked are written together. On every engine.
    #[test]
    fn a_plan_lasts_until_the_log_is_stored() {
        for (engine, _dir, mut store) in engines() {
            let (a, b, c) = (JobId(1), JobId(2), JobId(3));
            store
                .store_logs("fp", &[], &[(a, LogPlan::Archive), (b, LogPlan::Archive)])
                .unwrap();
            assert_eq!(
                store.load_log_plans(&[a, b, c]).unwrap(),
                BTreeMap::from([(a, LogPlan::Archive), (b, LogPlan::Archive)]),
                "{engine}"
            );
            // The archive held `a`'s log and lacked `b`'s: `b` goes to its endpoint next.
            let outcome = LogOutcome {
                job: a,
                entry: LogEntry::Stored(compress_log(b"log of a\n")),
                classification: Some(Classification::default()),
            };
            store
                .store_logs("fp", &[outcome], &[(b, LogPlan::Job)])
                .unwrap();
            assert_eq!(
                store.load_log_plans(&[a, b, c]).unwrap(),
                BTreeMap::from([(b, LogPlan::Job)]),
                "{engine}"
            );
            assert_eq!(store.load_log(a).unwrap().unwrap(), b"log of a\n");
            // One log stored the usual way forgets its plan too.
            store.store_log(b, &LogEntry::Missing, None).unwrap();
            assert!(
                store.load_log_plans(&[a, b, c]).unwrap().is_empty(),
                "{engine}"
            );
            assert!(store.has_log(b).unwrap());
        }
    }
}
