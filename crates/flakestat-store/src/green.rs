//! Logs of *successful* jobs, sampled by `signatures audit --green-sample` (elastic-recheck's
//! rule: a fingerprint that matches passing jobs is too broad).
//!
//! They live in `green_logs`, a table of their own (schema version 6), never in `logs`: the
//! snapshot, the re-classification and every failure figure read `logs` only, so a green log
//! can never be counted as a failure's. Kept zstd-compressed like the others, so a repeated
//! audit (or one with `--offline`) needs no download for what it sampled before.

use std::collections::BTreeMap;

use super::{LogEntry, StoreError, log_row};
use crate::Store;
use crate::db::params;
use flakestat_core::model::{JobId, LogStatus};

impl Store {
    /// Records what became of one sampled green log (stored, expired, missing, …).
    pub fn store_green_log(&mut self, job: JobId, entry: &LogEntry) -> Result<(), StoreError> {
        let (status, size, blob) = log_row(entry);
        self.execute(
            "INSERT INTO green_logs (job_id, status, raw_size, zstd) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (job_id) DO UPDATE SET
                status = excluded.status, raw_size = excluded.raw_size, zstd = excluded.zstd",
            params![job.0, status, size, blob],
        )?;
        Ok(())
    }

    /// What the store knows of these jobs' green logs; a job absent from the map was never
    /// sampled.
    pub fn green_log_statuses(
        &self,
        jobs: &[JobId],
    ) -> Result<BTreeMap<JobId, LogStatus>, StoreError> {
        self.per_job(
            "SELECT job_id, status FROM green_logs WHERE job_id IN ({ids})",
            jobs,
            parse_green_status,
        )
    }

    /// A stored green log, decompressed; `None` when not stored.
    pub fn load_green_log(&self, job: JobId) -> Result<Option<Vec<u8>>, StoreError> {
        self.query_row(
            "SELECT zstd FROM green_logs WHERE job_id = ?1 AND status = 'stored'",
            params![job.0],
            crate::zstd_column,
        )
    }
}

/// A stored green log status, read back.
fn parse_green_status(job: JobId, status: &str) -> Result<LogStatus, StoreError> {
    Ok(match status {
        "stored" => LogStatus::Stored,
        "expired" => LogStatus::Expired,
        "missing" => LogStatus::Missing,
        "mismatched" => LogStatus::Mismatched,
        "unavailable" => LogStatus::Unavailable,
        other => {
            return Err(StoreError::Corrupt(format!(
                "green log status {other:?} of job {job}"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Store, compress_log};
    use flakestat_core::model::{Job, Repo, Run, RunId, Sha};

    fn t(s: &str) -> flakestat_core::model::Timestamp {
        s.parse().unwrap()
    }

    /// A green log is kept and read back, and nothing a failure figure reads sees it: not the
    /// snapshot's logs or classifications, not the logs to re-classify, not the store counts.
    #[test]
    fn green_logs_are_kept_apart_from_failure_logs() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let repo = Repo::parse("octo/demo").unwrap();
        let run = Run {
            conclusion: Some("success".into()),
            ..crate::tests::run(1, "2026-06-15T10:00:00Z", 1, "completed")
        };
        let job = Job {
            id: JobId(10),
            run_id: RunId(1),
            run_attempt: 1,
            name: "test".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            created_at: t("2026-06-15T10:00:00Z"),
            started_at: None,
            completed_at: None,
            html_url: None,
            head_sha: Sha("a".repeat(40)),
            labels: Vec::new(),
        };
        store.store_repo(&repo, "main").unwrap();
        store.store_runs(&repo, &[run]).unwrap();
        store.store_jobs(RunId(1), 1, true, &[job]).unwrap();
        let raw = b"2026-06-15T10:00:01.0000000Z test_error_path PASSED\n";
        store
            .store_green_log(JobId(10), &LogEntry::Stored(compress_log(raw)))
            .unwrap();
        store
            .store_green_log(JobId(11), &LogEntry::Expired)
            .unwrap();

        assert_eq!(
            store.load_green_log(JobId(10)).unwrap().as_deref(),
            Some(&raw[..])
        );
        assert_eq!(store.load_green_log(JobId(11)).unwrap(), None);
        let statuses = store
            .green_log_statuses(&[JobId(10), JobId(11), JobId(12)])
            .unwrap();
        assert_eq!(
            statuses.into_iter().collect::<Vec<_>>(),
            vec![
                (JobId(10), LogStatus::Stored),
                (JobId(11), LogStatus::Expired)
            ]
        );
        // Never a failure's log.
        assert_eq!(store.load_log(JobId(10)).unwrap(), None);
        assert!(!store.has_log(JobId(10)).unwrap());
        assert!(store.logs_to_classify(&repo, "fp").unwrap().is_empty());
        assert_eq!(store.counts(&repo).unwrap().logs_stored, 0);
        let snapshot = store
            .load_snapshot(
                &repo,
                t("2026-06-01T00:00:00Z"),
                t("2026-07-01T00:00:00Z"),
                "fp",
            )
            .unwrap();
        assert_eq!(snapshot.jobs.len(), 1);
        assert!(snapshot.logs.is_empty());
        assert!(snapshot.classifications.is_empty());
    }
}
