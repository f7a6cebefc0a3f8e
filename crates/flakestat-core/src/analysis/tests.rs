//! Flake evidence per test, from what the survey already holds: the tests each failed job's log
//! names ([`Classification::tests`](crate::model::Classification)), and the other executions
//! of the same job. A test is **flaky** when it failed and passed on the same code: the same
//! job passed in a later attempt of the run (re-run to green), the same job passed on the same
//! head commit in another run (same-commit green), or its runner retried it to a pass inside the
//! job (flaky in the job). Without such evidence the verdict is **unknown**: `broken` and `new`
//! (which need the bisection over a test, not yet wired here) are never guessed.
//!
//! Counts are over the runs created in the snapshot's window, like every other figure.

use std::collections::{BTreeMap, BTreeSet};

use super::in_survey_window;
use crate::matrix::{Dimensions, parse_job_name};
use crate::model::{Conclusion, Job, RunId, SignatureId, Snapshot, Timestamp};

/// What the evidence says of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Failed and passed on the same code.
    Flaky,
    /// No evidence either way in the window.
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Flaky => "flaky",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One test's evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct TestEvidence {
    pub id: String,
    pub family: String,
    pub runner: String,
    /// Failed job executions (every attempt) whose log names the test as failed.
    pub jobs_failed: u64,
    /// Distinct runs among them.
    pub runs_failed: u64,
    /// Job executions in which the test failed and then passed on a retry of its runner.
    pub flaky_in_job: u64,
    /// Runs in which the test failed and the same job passed in a later attempt.
    pub rerun_to_green: u64,
    /// Failed job executions whose job passed on the same head commit in another run.
    pub same_commit_green: u64,
    /// The first run (by creation time) in which it failed.
    pub first_failure: Option<(RunId, Timestamp)>,
    /// Matrix dimension → the values of the jobs it failed in.
    pub cells: BTreeMap<String, BTreeSet<String>>,
    /// Signatures matched in the jobs it failed in, with how many of those jobs.
    pub signatures: BTreeMap<SignatureId, u64>,
    pub verdict: Verdict,
}

fn succeeded(job: &Job) -> bool {
    job.conclusion == Some(Conclusion::Success)
}

/// Every test named by a failed job of the window, most jobs failed first, then by id.
pub fn analyze_tests(snapshot: &Snapshot) -> Vec<TestEvidence> {
    let created: BTreeMap<RunId, Timestamp> = snapshot
        .runs
        .iter()
        .filter(|r| in_survey_window(snapshot, r.created_at))
        .map(|r| (r.id, r.created_at))
        .collect();
    // Green executions: per (run, job name) the attempts that passed; per (sha, job name) the
    // runs in which it passed.
    let mut green_attempts: BTreeMap<(RunId, &str), Vec<u32>> = BTreeMap::new();
    let mut green_on_sha: BTreeMap<(&str, &str), BTreeSet<RunId>> = BTreeMap::new();
    for job in snapshot.jobs.iter().filter(|j| succeeded(j)) {
        green_attempts
            .entry((job.run_id, job.name.as_str()))
            .or_default()
            .push(job.run_attempt);
        green_on_sha
            .entry((job.head_sha.0.as_str(), job.name.as_str()))
            .or_default()
            .insert(job.run_id);
    }
    #[derive(Default)]
    struct Acc {
        family: String,
        runner: String,
        jobs: u64,
        runs: BTreeSet<RunId>,
        flaky_in_job: u64,
        rerun_runs: BTreeSet<RunId>,
        same_commit: u64,
        first: Option<(Timestamp, RunId)>,
        cells: BTreeMap<String, BTreeSet<String>>,
        signatures: BTreeMap<SignatureId, u64>,
    }
    let mut tests: BTreeMap<&str, Acc> = BTreeMap::new();
    for job in &snapshot.jobs {
        let Some(&at) = created.get(&job.run_id) else {
            continue;
        };
        let Some(c) = snapshot.classifications.get(&job.id) else {
            continue;
        };
        for t in &c.tests.flaky {
            let acc = tests.entry(t.id.as_str()).or_default();
            acc.family.clone_from(&t.family);
            acc.runner.clone_from(&t.runner);
            acc.flaky_in_job += 1;
        }
        if c.tests.failed.is_empty() {
            continue;
        }
        let rerun_green = green_attempts
            .get(&(job.run_id, job.name.as_str()))
            .is_some_and(|a| a.iter().any(|&n| n > job.run_attempt));
        let same_commit = green_on_sha
            .get(&(job.head_sha.0.as_str(), job.name.as_str()))
            .is_some_and(|runs| runs.iter().any(|&r| r != job.run_id));
        let dims: Dimensions = parse_job_name(&job.name);
        for t in &c.tests.failed {
            let acc = tests.entry(t.id.as_str()).or_default();
            acc.family.clone_from(&t.family);
            acc.runner.clone_from(&t.runner);
            acc.jobs += 1;
            acc.runs.insert(job.run_id);
            if rerun_green {
                acc.rerun_runs.insert(job.run_id);
            }
            acc.same_commit += u64::from(same_commit);
            if acc.first.is_none_or(|f| (at, job.run_id) < f) {
                acc.first = Some((at, job.run_id));
            }
            for (k, v) in &dims {
                acc.cells.entry(k.clone()).or_default().insert(v.clone());
            }
            for m in &c.matches {
                *acc.signatures.entry(m.signature.clone()).or_default() += 1;
            }
        }
    }
    let mut out: Vec<TestEvidence> = tests
        .into_iter()
        .map(|(id, a)| {
            let rerun_to_green = a.rerun_runs.len() as u64;
            let flaky = rerun_to_green + a.same_commit + a.flaky_in_job > 0;
            TestEvidence {
                id: id.to_string(),
                family: a.family,
                runner: a.runner,
                jobs_failed: a.jobs,
                runs_failed: a.runs.len() as u64,
                flaky_in_job: a.flaky_in_job,
                rerun_to_green,
                same_commit_green: a.same_commit,
                first_failure: a.first.map(|(t, r)| (r, t)),
                cells: a.cells,
                signatures: a.signatures,
                verdict: if flaky {
                    Verdict::Flaky
                } else {
                    Verdict::Unknown
                },
            }
        })
        .collect();
    out.sort_by(|a, b| b.jobs_failed.cmp(&a.jobs_failed).then(a.id.cmp(&b.id)));
    out
}
