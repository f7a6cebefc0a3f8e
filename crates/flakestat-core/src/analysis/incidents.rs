//! Incidents: failures of a machine or of a whole job, not of the tests in them.
//!
//! A runner pool that lost its GPU, or a job whose every test errored at setup, fails dozens
//! of tests at once. Counted test by test, one such night makes each of them "flaky" (it failed
//! there and passed on the same commit elsewhere) and would put the whole suite on the
//! quarantine list. Such an execution is one *incident* instead, reported on its own:
//!
//! - **machine-wide**: in one run attempt (its jobs as GitHub lists them: the attempt's own
//!   executions, and for jobs it did not re-run their latest earlier execution), every job on
//!   one runner pool failed — at least [`MIN_POOL_JOBS`] of them, at least one executed in that
//!   attempt —, a job on another pool of the same attempt passed (so the code was not broken
//!   everywhere), and the pool's failed jobs share their cause (a signature, or with none the
//!   same telling line). Which pool a job ran on is what `report --hosts` says
//!   ([`hosts::place_job`](super::hosts::place_job): its stored runner, else the labels it
//!   asked for); a job whose runner is unknown is on no pool and never judged. [`failed_pools`]
//!   is the one judgement of "every job on one pool failed": a signature's machine-wide
//!   verdict ([`hosts::machine_wide`](super::hosts::machine_wide)) asks it too.
//! - **job-wide**: one job execution whose log names at least [`JOB_WIDE_MIN_TESTS`] failed
//!   tests and at least [`JOB_WIDE_FACTOR`] times what that job (by name) usually fails: the
//!   median count of failed tests over its other failed executions in the window that name any
//!   (1 when it has none). The runners' totals are not stored, so the share is read against the
//!   job's own failures rather than against its passes.
//!
//! The tests of an incident's jobs are not counted as failures of those tests
//! ([`super::tests::analyze_tests`]): not flaky on its account, never on the quarantine list nor
//! among a nightly's newly flaky tests.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::in_survey_window;
use crate::model::{Conclusion, Job, JobId, RunId, SignatureId, Snapshot, Timestamp};

/// A pool needs at least this many jobs in a run attempt for "every job on it failed" to say
/// more than one job's failure.
pub const MIN_POOL_JOBS: usize = 2;
/// A job execution is job-wide only when its log names at least this many failed tests.
pub const JOB_WIDE_MIN_TESTS: u64 = 10;
/// … and at least this many times what the job usually fails.
pub const JOB_WIDE_FACTOR: u64 = 5;

/// What kind of incident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IncidentKind {
    /// Every job on one runner pool of a run attempt failed.
    MachineWide,
    /// One job execution failed an unusual number of tests.
    JobWide,
}

impl IncidentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IncidentKind::MachineWide => "machine-wide",
            IncidentKind::JobWide => "job-wide",
        }
    }
}

/// One job execution of an incident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IncidentJob {
    pub job_id: JobId,
    pub name: String,
    pub attempt: u32,
    /// Tests its log names as failed.
    pub tests_failed: u64,
    pub html_url: Option<String>,
}

/// One incident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Incident {
    pub kind: IncidentKind,
    pub run_id: RunId,
    pub run_created_at: Timestamp,
    pub run_url: String,
    /// The run attempt it happened in.
    pub attempt: u32,
    /// The runner pool (machine-wide) or the pool the job ran on (job-wide), when known.
    pub pool: Option<String>,
    pub jobs: Vec<IncidentJob>,
    /// Machine-wide: the attempt's jobs on other pools that passed.
    pub jobs_passed_elsewhere: u64,
    /// Job-wide: how many tests the job usually fails (see the module's rule).
    pub usual_tests_failed: Option<u64>,
    /// The distinct tests its jobs name as failed (each counted once).
    pub tests: u64,
    /// The telling line most of its jobs share.
    pub line: Option<String>,
    /// The signature most of its jobs match.
    pub signature: Option<SignatureId>,
}

impl Incident {
    pub fn job_ids(&self) -> impl Iterator<Item = JobId> + '_ {
        self.jobs.iter().map(|j| j.job_id)
    }
}

/// One job execution as the pool judgement sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolExecution {
    pub run_id: RunId,
    /// The attempt the execution belongs to.
    pub attempt: u32,
    pub job_id: JobId,
    /// The job's name: an attempt's jobs are its own executions and, for names it did not
    /// re-run, their latest earlier execution.
    pub name: String,
    /// Where it ran (a pool, a host); `None` when unknown, never judged.
    pub pool: Option<String>,
    pub failed: bool,
    pub passed: bool,
}

/// A pool whose every job of one run attempt failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedPool {
    pub run_id: RunId,
    pub attempt: u32,
    pub pool: String,
    /// Its failed jobs, by id.
    pub jobs: Vec<JobId>,
    /// The attempt's jobs on other pools that passed (at least one).
    pub passed_elsewhere: u64,
}

/// `jobs` as the pool judgement sees them, each on the pool [`hosts::place_job`] places it on
/// (none when its runner is unknown).
///
/// [`hosts::place_job`]: super::hosts::place_job
pub fn pool_executions<'a>(
    snapshot: &Snapshot,
    jobs: impl IntoIterator<Item = &'a Job>,
) -> Vec<PoolExecution> {
    jobs.into_iter()
        .map(|j| PoolExecution {
            run_id: j.run_id,
            attempt: j.run_attempt,
            job_id: j.id,
            name: j.name.clone(),
            pool: super::hosts::place_job(j, snapshot.placements.get(&j.id)).map(|p| p.pool),
            failed: j.is_failed(),
            passed: j.conclusion == Some(Conclusion::Success),
        })
        .collect()
}

/// Every (run attempt, pool) whose every job failed, by the rule of the module (cause aside):
/// at least [`MIN_POOL_JOBS`] jobs on it, one of them executed in that attempt, and a job on
/// another pool of the attempt passed. Over any assignment of executions to pools or hosts.
pub fn failed_pools(executions: &[PoolExecution]) -> Vec<FailedPool> {
    let mut by_run: BTreeMap<RunId, Vec<&PoolExecution>> = BTreeMap::new();
    for e in executions {
        by_run.entry(e.run_id).or_default().push(e);
    }
    let mut out = Vec::new();
    for (run_id, execs) in by_run {
        let attempts: BTreeSet<u32> = execs.iter().map(|e| e.attempt).collect();
        for attempt in attempts {
            // The attempt's jobs: per name, the latest execution up to this attempt.
            let mut listed: BTreeMap<&str, &PoolExecution> = BTreeMap::new();
            for e in execs.iter().filter(|e| e.attempt <= attempt) {
                let slot = listed.entry(e.name.as_str()).or_insert(e);
                if (e.attempt, e.job_id) > (slot.attempt, slot.job_id) {
                    *slot = e;
                }
            }
            let mut pools: BTreeMap<&str, Vec<&PoolExecution>> = BTreeMap::new();
            for e in listed.values() {
                if let Some(pool) = &e.pool {
                    pools.entry(pool.as_str()).or_default().push(e);
                }
            }
            for (pool, jobs) in &pools {
                let own_attempt = jobs.iter().any(|e| e.attempt == attempt);
                if jobs.len() < MIN_POOL_JOBS || !own_attempt || !jobs.iter().all(|e| e.failed) {
                    continue;
                }
                let passed_elsewhere = pools
                    .iter()
                    .filter(|(p, _)| p != &pool)
                    .flat_map(|(_, js)| js.iter())
                    .filter(|e| e.passed)
                    .count() as u64;
                if passed_elsewhere == 0 {
                    continue;
                }
                let mut ids: Vec<JobId> = jobs.iter().map(|e| e.job_id).collect();
                ids.sort();
                out.push(FailedPool {
                    run_id,
                    attempt,
                    pool: (*pool).to_string(),
                    jobs: ids,
                    passed_elsewhere,
                });
            }
        }
    }
    out
}

/// The most common value, ties by the smallest.
fn most_common<T: Ord + Clone>(items: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: BTreeMap<T, u64> = BTreeMap::new();
    for i in items {
        *counts.entry(i).or_default() += 1;
    }
    let best = counts.values().copied().max()?;
    counts.into_iter().find(|(_, n)| *n == best).map(|(k, _)| k)
}

fn median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    (!v.is_empty()).then(|| v[(v.len() - 1) / 2])
}

/// The incidents of the survey window, machine-wide first, then by run and attempt.
pub fn find_incidents(snapshot: &Snapshot) -> Vec<Incident> {
    let runs: BTreeMap<RunId, &crate::model::Run> = snapshot
        .runs
        .iter()
        .filter(|r| in_survey_window(snapshot, r.created_at))
        .map(|r| (r.id, r))
        .collect();
    let jobs: Vec<&Job> = snapshot
        .jobs
        .iter()
        .filter(|j| runs.contains_key(&j.run_id))
        .collect();
    let by_id: BTreeMap<JobId, &Job> = jobs.iter().map(|j| (j.id, *j)).collect();
    let failed_tests = |j: &Job| -> u64 {
        snapshot
            .classifications
            .get(&j.id)
            .map_or(0, |c| c.tests.failed.len() as u64)
    };
    let first_signature = |j: JobId| -> Option<SignatureId> {
        snapshot
            .classifications
            .get(&j)
            .and_then(|c| c.matches.first().map(|m| m.signature.clone()))
    };
    let first_line = |j: JobId| -> Option<String> {
        snapshot
            .classifications
            .get(&j)
            .and_then(|c| c.error_lines.first().map(|l| l.text.clone()))
    };
    let make = |kind, run_id: RunId, attempt, pool, ids: &[JobId], elsewhere, usual| {
        let run = runs[&run_id];
        let mut tests: BTreeSet<&str> = BTreeSet::new();
        for id in ids {
            if let Some(c) = snapshot.classifications.get(id) {
                tests.extend(c.tests.failed.iter().map(|t| t.id.as_str()));
            }
        }
        Incident {
            kind,
            run_id,
            run_created_at: run.created_at,
            run_url: run.html_url.clone(),
            attempt,
            pool,
            jobs: ids
                .iter()
                .map(|id| {
                    let j = by_id[id];
                    IncidentJob {
                        job_id: j.id,
                        name: j.name.clone(),
                        attempt: j.run_attempt,
                        tests_failed: failed_tests(j),
                        html_url: j.html_url.clone(),
                    }
                })
                .collect(),
            jobs_passed_elsewhere: elsewhere,
            usual_tests_failed: usual,
            tests: tests.len() as u64,
            line: most_common(ids.iter().filter_map(|&id| first_line(id))),
            signature: most_common(ids.iter().filter_map(|&id| first_signature(id))),
        }
    };

    // Machine-wide.
    let executions = pool_executions(snapshot, jobs.iter().copied());
    let mut out = Vec::new();
    let mut taken: BTreeSet<JobId> = BTreeSet::new();
    for p in failed_pools(&executions) {
        // One cause: a signature every job matches, or with none the same telling line.
        let signatures: BTreeSet<Option<SignatureId>> =
            p.jobs.iter().map(|&id| first_signature(id)).collect();
        let lines: BTreeSet<Option<String>> = p.jobs.iter().map(|&id| first_line(id)).collect();
        let one_cause = match signatures.iter().next() {
            Some(Some(_)) => signatures.len() == 1,
            _ => signatures.len() == 1 && lines.len() == 1 && lines.iter().all(Option::is_some),
        };
        if !one_cause || p.jobs.iter().any(|id| taken.contains(id)) {
            continue;
        }
        taken.extend(p.jobs.iter().copied());
        out.push(make(
            IncidentKind::MachineWide,
            p.run_id,
            p.attempt,
            Some(p.pool),
            &p.jobs,
            p.passed_elsewhere,
            None,
        ));
    }

    // Job-wide.
    let mut counts_by_name: BTreeMap<&str, Vec<(JobId, u64)>> = BTreeMap::new();
    for j in jobs.iter().filter(|j| j.is_failed()) {
        let n = failed_tests(j);
        if n > 0 {
            counts_by_name
                .entry(j.name.as_str())
                .or_default()
                .push((j.id, n));
        }
    }
    for j in jobs
        .iter()
        .filter(|j| j.is_failed() && !taken.contains(&j.id))
    {
        let n = failed_tests(j);
        if n < JOB_WIDE_MIN_TESTS {
            continue;
        }
        let others: Vec<u64> = counts_by_name
            .get(j.name.as_str())
            .map(|v| {
                v.iter()
                    .filter(|(id, _)| *id != j.id)
                    .map(|(_, n)| *n)
                    .collect()
            })
            .unwrap_or_default();
        let usual = median(others).unwrap_or(1).max(1);
        if n < JOB_WIDE_FACTOR * usual {
            continue;
        }
        out.push(make(
            IncidentKind::JobWide,
            j.run_id,
            j.run_attempt,
            super::hosts::place_job(j, snapshot.placements.get(&j.id)).map(|p| p.pool),
            &[j.id],
            0,
            Some(usual),
        ));
    }
    out.sort_by(|a, b| {
        (a.kind, a.run_created_at, a.run_id, a.attempt, &a.pool).cmp(&(
            b.kind,
            b.run_created_at,
            b.run_id,
            b.attempt,
            &b.pool,
        ))
    });
    out
}

/// The job executions of `incidents`.
pub fn incident_jobs(incidents: &[Incident]) -> BTreeSet<JobId> {
    incidents.iter().flat_map(Incident::job_ids).collect()
}

#[cfg(test)]
mod unit {
    use super::{FailedPool, MIN_POOL_JOBS, PoolExecution, failed_pools};
    use crate::model::{JobId, RunId};

    fn exec(
        run: u64,
        attempt: u32,
        id: u64,
        name: &str,
        pool: &str,
        failed: bool,
    ) -> PoolExecution {
        PoolExecution {
            run_id: RunId(run),
            attempt,
            job_id: JobId(id),
            name: name.to_string(),
            pool: Some(pool.to_string()),
            failed,
            passed: !failed,
        }
    }

    #[test]
    fn a_pool_whose_every_job_failed_while_another_passed_is_one_failed_pool() {
        let execs = [
            exec(1, 1, 10, "a1", "arm-a100", true),
            exec(1, 1, 11, "a2", "arm-a100", true),
            exec(1, 1, 12, "a3", "arm-a100", true),
            exec(1, 1, 13, "x1", "amd-t4", false),
            exec(1, 1, 14, "x2", "amd-t4", true),
        ];
        assert_eq!(
            failed_pools(&execs),
            vec![FailedPool {
                run_id: RunId(1),
                attempt: 1,
                pool: "arm-a100".into(),
                jobs: vec![JobId(10), JobId(11), JobId(12)],
                passed_elsewhere: 1,
            }]
        );
    }

    #[test]
    fn no_failed_pool_without_a_pass_elsewhere_or_with_one_job_or_one_pass_on_it() {
        // Everything failed: the code, not a machine.
        let all = [
            exec(1, 1, 10, "a1", "p", true),
            exec(1, 1, 11, "a2", "p", true),
            exec(1, 1, 12, "b1", "q", true),
        ];
        assert!(failed_pools(&all).is_empty());
        // One job on the pool.
        assert_eq!(MIN_POOL_JOBS, 2);
        let one = [
            exec(1, 1, 10, "a1", "p", true),
            exec(1, 1, 11, "b1", "q", false),
        ];
        assert!(failed_pools(&one).is_empty());
        // One job on the pool passed.
        let mixed = [
            exec(1, 1, 10, "a1", "p", true),
            exec(1, 1, 11, "a2", "p", false),
            exec(1, 1, 12, "b1", "q", false),
        ];
        assert!(failed_pools(&mixed).is_empty());
    }

    #[test]
    fn a_rerun_attempt_is_judged_with_the_jobs_it_did_not_rerun() {
        // Attempt 2 re-ran only the two failed jobs of pool p; p's third job passed in attempt 1.
        let execs = [
            exec(1, 1, 10, "a1", "p", true),
            exec(1, 1, 11, "a2", "p", true),
            exec(1, 1, 12, "a3", "p", false),
            exec(1, 1, 13, "b1", "q", false),
            exec(1, 2, 20, "a1", "p", true),
            exec(1, 2, 21, "a2", "p", true),
        ];
        assert!(failed_pools(&execs).is_empty());
        // Hosts instead of pools (a later issue feeds them): the same judgement.
        let hosts = [
            exec(2, 1, 30, "a1", "host-7", true),
            exec(2, 1, 31, "a2", "host-7", true),
            exec(2, 1, 32, "a3", "host-8", false),
        ];
        assert_eq!(failed_pools(&hosts).len(), 1);
        assert_eq!(failed_pools(&hosts)[0].pool, "host-7");
    }
}
