//! What `--green-logs` read in green jobs' logs (schema version 11): per job execution, only
//! the outcome (`read`, or why the log could not be had) and what the log said of its tests
//! (the tests retried to a pass, the passed count, the retries: `GreenOutcome`), never the log
//! itself (`--keep-green-logs` keeps it in `green_logs`, `green.rs`).
//!
//! A job with a row is never asked again, whatever its outcome: a stopped survey resumes with
//! the jobs it had not reached, and no green log is fetched twice. The snapshot reads the
//! outcomes of the jobs it holds (`Snapshot::green`); no failure figure reads this table.

use std::collections::{BTreeMap, BTreeSet};

use super::{StoreError, from_json, json_column, to_json};
use crate::Store;
use crate::db::params;
use flakestat_core::model::{
    Conclusion, GreenOutcome, Job, JobId, LogStatus, Repo, Run, Timestamp, WorkflowId,
};

/// What became of one green job's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GreenRead {
    /// Downloaded and read (the log itself is not kept here).
    Read(GreenOutcome),
    /// Not had: expired, missing, another execution's, or refused.
    Gone(LogStatus),
}

impl Store {
    /// Records what became of one green job's log.
    pub fn store_green_outcome(&mut self, job: JobId, read: &GreenRead) -> Result<(), StoreError> {
        let (status, passed, retries, json) = match read {
            GreenRead::Read(o) => (
                "read",
                o.passed.map(|p| p as i64),
                o.retries as i64,
                to_json(&o.retried),
            ),
            GreenRead::Gone(status) => (gone_word(*status), None, 0, "[]".to_string()),
        };
        self.execute(
            "INSERT INTO green_outcomes (job_id, status, passed, retries, retried)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (job_id) DO UPDATE SET status = excluded.status,
                passed = excluded.passed, retries = excluded.retries, retried = excluded.retried",
            params![job.0, status, passed, retries, json],
        )?;
        Ok(())
    }

    /// The green (successful) job executions of the runs created in `[since, until)` whose log
    /// was never read nor found missing: the ones `--green-logs` may still ask for, by id.
    pub fn green_jobs_unread(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
    ) -> Result<Vec<Job>, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(Vec::new());
        };
        let jobs: Vec<Job> = self.query_map(
            "SELECT jobs.json FROM jobs JOIN runs ON runs.id = jobs.run_id
             LEFT JOIN green_outcomes g ON g.job_id = jobs.id
             WHERE runs.repo_id = ?1 AND runs.created_at >= ?2 AND runs.created_at < ?3
               AND NOT jobs.failed AND g.job_id IS NULL
             ORDER BY jobs.id",
            params![repo_id, since.timestamp(), until.timestamp()],
            json_column,
        )?;
        Ok(jobs
            .into_iter()
            .filter(|j| j.conclusion == Some(Conclusion::Success))
            .collect())
    }

    /// The runs created in `[since, until)` of the workflows none of whose runs there needs its
    /// jobs (`Run::needs_workflow_jobs`: none failed nor was re-run, so the survey listed no
    /// jobs for them), by id, each with whether its attempt's jobs are stored.
    pub fn quiet_window_runs(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
    ) -> Result<Vec<(Run, bool)>, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(Vec::new());
        };
        let runs: Vec<(Run, bool)> = self.query_map(
            "SELECT json, jobs_attempt FROM runs
             WHERE repo_id = ?1 AND created_at >= ?2 AND created_at < ?3 ORDER BY id",
            params![repo_id, since.timestamp(), until.timestamp()],
            |r| {
                let run: Run = json_column(r)?;
                let listed = r
                    .get::<Option<i64>>(1)?
                    .is_some_and(|a| a >= i64::from(run.run_attempt));
                Ok((run, listed))
            },
        )?;
        let noisy: BTreeSet<WorkflowId> = runs
            .iter()
            .filter(|(r, _)| r.needs_workflow_jobs())
            .map(|(r, _)| r.workflow_id)
            .collect();
        Ok(runs
            .into_iter()
            .filter(|(r, _)| !noisy.contains(&r.workflow_id))
            .collect())
    }

    /// The jobs among `jobs` whose green log has an outcome (read or gone).
    pub fn green_outcome_known(&self, jobs: &[JobId]) -> Result<BTreeSet<JobId>, StoreError> {
        Ok(self
            .per_job(
                "SELECT job_id, status FROM green_outcomes WHERE job_id IN ({ids})",
                jobs,
                |_, _| Ok(()),
            )?
            .into_keys()
            .collect())
    }

    /// What the logs read said, for the jobs of the runs created in `[from, to)` (seconds).
    pub(crate) fn load_green_outcomes(
        &self,
        repo_id: i64,
        from: i64,
        to: i64,
    ) -> Result<BTreeMap<JobId, GreenOutcome>, StoreError> {
        let mut out = BTreeMap::new();
        for r in self.query(
            "SELECT g.job_id, g.passed, g.retries, g.retried
             FROM green_outcomes g JOIN jobs ON jobs.id = g.job_id JOIN runs ON runs.id = jobs.run_id
             WHERE runs.repo_id = ?1 AND runs.created_at >= ?2 AND runs.created_at < ?3
               AND g.status = 'read'
             ORDER BY g.job_id",
            params![repo_id, from, to],
        )? {
            let job = JobId(r.get(0)?);
            let outcome = GreenOutcome {
                passed: r.get::<Option<i64>>(1)?.map(|p| p as u64),
                retries: r.get::<i64>(2)? as u64,
                retried: from_json(&r.get::<String>(3)?)?,
            };
            out.insert(job, outcome);
        }
        Ok(out)
    }
}

fn gone_word(status: LogStatus) -> &'static str {
    match status {
        LogStatus::Expired => "expired",
        LogStatus::Missing => "missing",
        LogStatus::Mismatched => "mismatched",
        _ => "unavailable",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use flakestat_core::model::{RunId, Sha, TestRecord};

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn job(id: u64, conclusion: &str) -> Job {
        Job {
            id: JobId(id),
            run_id: RunId(1),
            run_attempt: 1,
            name: "test".into(),
            status: "completed".into(),
            conclusion: Some(conclusion.into()),
            created_at: t("2026-06-15T10:00:00Z"),
            started_at: None,
            completed_at: None,
            html_url: None,
            head_sha: Sha("a".repeat(40)),
            labels: Vec::new(),
        }
    }

    /// A green job is offered until its outcome is stored, then never again (read or gone); a
    /// failed job is never offered; the snapshot holds what was read, and only that.
    #[test]
    fn a_green_outcome_is_asked_once_and_reaches_the_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let repo = Repo::parse("octo/demo").unwrap();
        let run = crate::tests::run(1, "2026-06-15T10:00:00Z", 1, "completed");
        store.store_repo(&repo, "main").unwrap();
        store.store_runs(&repo, &[run]).unwrap();
        store
            .store_jobs(
                RunId(1),
                1,
                true,
                &[job(10, "success"), job(11, "success"), job(12, "failure")],
            )
            .unwrap();
        let (since, until) = (t("2026-06-01T00:00:00Z"), t("2026-07-01T00:00:00Z"));
        let unread = |s: &Store| -> Vec<u64> {
            s.green_jobs_unread(&repo, since, until)
                .unwrap()
                .iter()
                .map(|j| j.id.0)
                .collect()
        };
        assert_eq!(unread(&store), [10, 11]);
        let outcome = GreenOutcome {
            passed: Some(41),
            retries: 2,
            retried: vec![TestRecord {
                id: "tests/a.py::test_b[x]".into(),
                family: "tests/a.py::test_b".into(),
                runner: "pytest".into(),
                line: 12,
            }],
        };
        store
            .store_green_outcome(JobId(10), &GreenRead::Read(outcome.clone()))
            .unwrap();
        store
            .store_green_outcome(JobId(11), &GreenRead::Gone(LogStatus::Expired))
            .unwrap();
        assert!(unread(&store).is_empty());
        assert_eq!(
            store
                .green_outcome_known(&[JobId(10), JobId(11), JobId(12)])
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            [JobId(10), JobId(11)]
        );
        let snapshot = store.load_snapshot(&repo, since, until, "fp").unwrap();
        assert_eq!(
            snapshot.green.into_iter().collect::<Vec<_>>(),
            vec![(JobId(10), outcome)]
        );
        // Never a failure log.
        assert!(!store.has_log(JobId(10)).unwrap());
    }
}
