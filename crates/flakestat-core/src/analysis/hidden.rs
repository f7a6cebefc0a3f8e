//! Hidden flakes: the tests a runner retried to a pass inside jobs that ended green, read by
//! `--green-logs` from a sample of green jobs' logs (`Snapshot::green`), and every test's
//! executions passed, failed and retried to a pass; and the retry budget, per workflow and job:
//! how many green jobs needed a retry to pass and what share of their runner time went to
//! retries.
//!
//! The counts, over the survey window's job executions (every attempt):
//! - **failed**: executions whose (failed) log names the test failed;
//! - **retried**: executions in which it failed and passed on a retry of its runner, in a
//!   failed job's log or a green one's; **hidden** counts those in green jobs only (nothing
//!   else shows them: the job is green);
//! - **passed**: green executions whose log was read, of a job (workflow and job name) in which
//!   the test was seen, that did not retry it: a green job ran its tests and they passed. A
//!   test skipped in such a job is counted passed: the figure is an upper bound where skips are
//!   common.
//!
//! Runner time of retries: a job's duration times its share of test executions that were
//! retries, `retries / (passed + retries)` (the runner's summary gives both); a log without a
//! passed count gives no estimate (its time is left out of both sides of the share). A test's
//! retry minutes are its jobs' retry minutes shared equally among the tests each retried.

use std::collections::{BTreeMap, BTreeSet};

use super::cost::duration_seconds;
use super::window_runs;
use crate::model::{GreenOutcome, Job, JobId, RunId, Snapshot};

/// Whether job `job` is in a `--green-logs` sample of share `rate`: a hash of its id against
/// the rate, so a repeat picks the same jobs and a higher rate's sample holds a lower one's.
pub fn in_green_sample(job: JobId, rate: f64) -> bool {
    if rate <= 0.0 {
        return false;
    }
    if rate >= 1.0 {
        return true;
    }
    // splitmix64: a fixed, well-mixed hash of the id (no per-process seed).
    let mut z = job.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((z >> 11) as f64) / ((1u64 << 53) as f64) < rate
}

/// Whether run `run`'s green jobs are all in a `--green-logs` sample of share `rate` (the runs
/// of a workflow that never failed in the window, whose jobs the survey does not list, are
/// sampled whole): [`in_green_sample`]'s hash of the run id.
pub fn in_green_run_sample(run: RunId, rate: f64) -> bool {
    in_green_sample(JobId(run.0), rate)
}

/// One test's executions.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct TestExecutions {
    pub id: String,
    pub family: String,
    pub runner: String,
    pub passed: u64,
    pub failed: u64,
    pub retried: u64,
    /// Of `retried`, those inside green jobs.
    pub hidden: u64,
    /// Job name → green executions of it that retried the test to a pass.
    pub cells: BTreeMap<String, u64>,
    /// Runner minutes its retries in green jobs cost (estimated, see the module).
    pub retry_minutes: f64,
}

/// One workflow's job: its green executions read and what their retries cost.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct RetryBudget {
    pub workflow: String,
    pub job: String,
    /// Green executions whose log was read.
    pub green_read: u64,
    /// Of them, those that needed a retry to pass.
    pub green_retried: u64,
    /// Retries made in them.
    pub retries: u64,
    /// Runner minutes of the green executions read with a passed count (the share's whole).
    pub minutes: f64,
    /// Of `minutes`, the estimate spent on retries.
    pub retry_minutes: f64,
}

impl RetryBudget {
    /// The share of runner time that went to retries; `None` with no time known.
    pub fn share(&self) -> Option<f64> {
        (self.minutes > 0.0).then(|| self.retry_minutes / self.minutes)
    }
}

/// The window's hidden flakes and retry budget.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct HiddenFlakes {
    /// Green job executions of the window whose log was read.
    pub green_read: u64,
    /// Every test seen, hidden flakes first (most hidden first), then by id.
    pub tests: Vec<TestExecutions>,
    /// Per workflow and job, those with a green execution read, most retried first.
    pub budget: Vec<RetryBudget>,
}

impl HiddenFlakes {
    /// The tests retried to a pass inside green jobs.
    pub fn hidden(&self) -> impl Iterator<Item = &TestExecutions> {
        self.tests.iter().filter(|t| t.hidden > 0)
    }
}

/// A green job's runner minutes and the estimate of those spent on retries; `None` without a
/// duration or a passed count.
pub fn retry_minutes(job: &Job, outcome: &GreenOutcome) -> Option<(f64, f64)> {
    let seconds = duration_seconds(job)? as f64;
    let passed = outcome.passed?;
    let executions = passed + outcome.retries;
    let share = if executions == 0 {
        0.0
    } else {
        outcome.retries as f64 / executions as f64
    };
    Some((seconds / 60.0, seconds / 60.0 * share))
}

/// The window's hidden flakes; empty when no green log was read.
pub fn analyze_hidden(snapshot: &Snapshot) -> HiddenFlakes {
    if snapshot.green.is_empty() {
        return HiddenFlakes::default();
    }
    let window = window_runs(snapshot);
    let workflows: BTreeMap<RunId, &str> = snapshot
        .runs
        .iter()
        .map(|r| (r.id, r.workflow_name.as_str()))
        .collect();
    let key = |job: &Job| {
        (
            workflows
                .get(&job.run_id)
                .copied()
                .unwrap_or_default()
                .to_string(),
            job.name.clone(),
        )
    };
    let jobs: Vec<&Job> = snapshot
        .jobs
        .iter()
        .filter(|j| window.contains(&j.run_id))
        .collect();

    let mut tests: BTreeMap<String, TestExecutions> = BTreeMap::new();
    // The jobs (workflow, name) each test was seen in.
    let mut seen_in: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    let entry = |tests: &mut BTreeMap<String, TestExecutions>, r: &crate::model::TestRecord| {
        tests.entry(r.id.clone()).or_insert_with(|| TestExecutions {
            id: r.id.clone(),
            family: r.family.clone(),
            runner: r.runner.clone(),
            ..TestExecutions::default()
        });
    };
    for job in &jobs {
        if let Some(c) = snapshot.classifications.get(&job.id) {
            for r in &c.tests.failed {
                entry(&mut tests, r);
                tests.get_mut(&r.id).expect("entered").failed += 1;
                seen_in.entry(r.id.clone()).or_default().insert(key(job));
            }
            for r in &c.tests.flaky {
                entry(&mut tests, r);
                tests.get_mut(&r.id).expect("entered").retried += 1;
                seen_in.entry(r.id.clone()).or_default().insert(key(job));
            }
        }
        if let Some(g) = snapshot.green.get(&job.id) {
            let minutes = retry_minutes(job, g).map_or(0.0, |(_, r)| r);
            for r in &g.retried {
                entry(&mut tests, r);
                let t = tests.get_mut(&r.id).expect("entered");
                t.retried += 1;
                t.hidden += 1;
                *t.cells.entry(job.name.clone()).or_default() += 1;
                t.retry_minutes += minutes / g.retried.len() as f64;
                seen_in.entry(r.id.clone()).or_default().insert(key(job));
            }
        }
    }
    // Clean passes: green executions read of the jobs each test was seen in.
    let mut budget: BTreeMap<(String, String), RetryBudget> = BTreeMap::new();
    let mut read_by_key: BTreeMap<(String, String), Vec<&GreenOutcome>> = BTreeMap::new();
    let mut green_read = 0;
    for job in &jobs {
        let Some(g) = snapshot.green.get(&job.id) else {
            continue;
        };
        green_read += 1;
        let k = key(job);
        read_by_key.entry(k.clone()).or_default().push(g);
        let b = budget.entry(k.clone()).or_insert_with(|| RetryBudget {
            workflow: k.0.clone(),
            job: k.1.clone(),
            ..RetryBudget::default()
        });
        b.green_read += 1;
        b.green_retried += u64::from(g.retries > 0 || !g.retried.is_empty());
        b.retries += g.retries;
        if let Some((all, retries)) = retry_minutes(job, g) {
            b.minutes += all;
            b.retry_minutes += retries;
        }
    }
    for (id, keys) in &seen_in {
        let t = tests.get_mut(id).expect("entered");
        for k in keys {
            for g in read_by_key.get(k).into_iter().flatten() {
                t.passed += u64::from(!g.retried.iter().any(|r| &r.id == id));
            }
        }
    }
    let mut tests: Vec<TestExecutions> = tests.into_values().collect();
    tests.sort_by(|a, b| b.hidden.cmp(&a.hidden).then(a.id.cmp(&b.id)));
    let mut budget: Vec<RetryBudget> = budget.into_values().collect();
    budget.sort_by(|a, b| {
        b.green_retried
            .cmp(&a.green_retried)
            .then((&a.workflow, &a.job).cmp(&(&b.workflow, &b.job)))
    });
    HiddenFlakes {
        green_read,
        tests,
        budget,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Classification, Run, Sha, TestRecord, WorkflowId};

    fn at(s: &str) -> crate::model::Timestamp {
        s.parse().unwrap()
    }

    fn record(id: &str) -> TestRecord {
        TestRecord {
            id: id.into(),
            family: id.into(),
            runner: "pytest".into(),
            line: 1,
        }
    }

    fn job(id: u64, run: u64, name: &str, conclusion: &str) -> Job {
        Job {
            id: JobId(id),
            run_id: RunId(run),
            run_attempt: 1,
            name: name.into(),
            status: "completed".into(),
            conclusion: Some(conclusion.into()),
            created_at: at("2026-06-15T10:00:00Z"),
            started_at: Some(at("2026-06-15T10:00:00Z")),
            completed_at: Some(at("2026-06-15T10:10:00Z")),
            html_url: None,
            head_sha: Sha("a".repeat(40)),
            labels: Vec::new(),
        }
    }

    fn run(id: u64) -> Run {
        Run {
            id: RunId(id),
            workflow_id: WorkflowId(1),
            workflow_name: "CI".into(),
            workflow_path: ".github/workflows/ci.yml".into(),
            display_title: "t".into(),
            event: "push".into(),
            head_branch: Some("main".into()),
            head_sha: Sha("a".repeat(40)),
            run_number: id,
            run_attempt: 1,
            status: "completed".into(),
            conclusion: Some("success".into()),
            created_at: at("2026-06-15T10:00:00Z"),
            updated_at: at("2026-06-15T10:00:00Z"),
            run_started_at: None,
            html_url: String::new(),
            pull_requests: vec![],
            head_repository: None,
        }
    }

    /// Three green executions of `test (a)` read (one retried `t1` twice out of 8 test
    /// executions), one failed execution naming `t2` failed: `t1` is hidden flaky in that cell,
    /// passed in the two others; `t2` failed once and passed in the three green ones; the
    /// budget says one of three green jobs retried, 2/8 of its 10 minutes.
    #[test]
    fn counts_hidden_flakes_passes_and_the_budget() {
        let mut s = Snapshot {
            since: Some(at("2026-06-01T00:00:00Z")),
            until: Some(at("2026-07-01T00:00:00Z")),
            runs: (1..=4).map(run).collect(),
            jobs: vec![
                job(1, 1, "test (a)", "success"),
                job(2, 2, "test (a)", "success"),
                job(3, 3, "test (a)", "success"),
                job(4, 4, "test (a)", "failure"),
                job(5, 4, "lint", "success"),
            ],
            ..Snapshot::default()
        };
        s.green.insert(
            JobId(1),
            GreenOutcome {
                passed: Some(6),
                retries: 2,
                retried: vec![record("t1")],
            },
        );
        for j in [2, 3] {
            s.green.insert(
                JobId(j),
                GreenOutcome {
                    passed: Some(7),
                    retries: 0,
                    retried: vec![],
                },
            );
        }
        let mut c = Classification::default();
        c.tests.failed.push(record("t2"));
        s.classifications.insert(JobId(4), c);

        let h = analyze_hidden(&s);
        assert_eq!(h.green_read, 3);
        let t1 = &h.tests[0];
        assert_eq!(
            (t1.id.as_str(), t1.passed, t1.failed, t1.retried, t1.hidden),
            ("t1", 2, 0, 1, 1)
        );
        assert_eq!(t1.cells, BTreeMap::from([("test (a)".to_string(), 1)]));
        assert!(
            (t1.retry_minutes - 2.5).abs() < 1e-9,
            "{}",
            t1.retry_minutes
        );
        let t2 = &h.tests[1];
        assert_eq!(
            (t2.id.as_str(), t2.passed, t2.failed, t2.hidden),
            ("t2", 3, 1, 0)
        );
        assert_eq!(h.hidden().count(), 1);
        let b = &h.budget[0];
        assert_eq!(
            (b.job.as_str(), b.green_read, b.green_retried, b.retries),
            ("test (a)", 3, 1, 2)
        );
        assert!((b.share().unwrap() - 2.5 / 30.0).abs() < 1e-9);
    }

    /// `analyze_tests` reads the hidden flakes its caller computed once (and reports): a test
    /// they name retried to a pass is flaky with their count, whatever its one failure says; with
    /// none read it is not.
    #[test]
    fn test_verdicts_read_the_hidden_flakes_passed_in() {
        use crate::analysis::AnalysisConfig;
        use crate::analysis::tests::{Verdict, analyze_tests};
        let mut s = Snapshot {
            since: Some(at("2026-06-01T00:00:00Z")),
            until: Some(at("2026-07-01T00:00:00Z")),
            runs: vec![run(4)],
            jobs: vec![job(4, 4, "test (a)", "failure")],
            ..Snapshot::default()
        };
        let mut c = Classification::default();
        c.tests.failed.push(record("t2"));
        s.classifications.insert(JobId(4), c);
        let config = AnalysisConfig::default();
        let hidden = HiddenFlakes {
            green_read: 2,
            tests: vec![TestExecutions {
                id: "t2".into(),
                hidden: 2,
                retried: 2,
                ..TestExecutions::default()
            }],
            budget: vec![],
        };
        let with = analyze_tests(&s, &config, &[], &hidden);
        assert_eq!((with[0].id.as_str(), with[0].hidden_flaky), ("t2", 2));
        assert_eq!(with[0].verdict, Verdict::Flaky);
        let without = analyze_tests(&s, &config, &[], &HiddenFlakes::default());
        assert_eq!(without[0].hidden_flaky, 0);
        assert_ne!(without[0].verdict, Verdict::Flaky);
    }

    /// Nothing read, nothing said.
    #[test]
    fn no_green_log_no_figures() {
        assert_eq!(
            analyze_hidden(&Snapshot::default()),
            HiddenFlakes::default()
        );
    }

    /// The sample is a pure function of the id and the rate, nested across rates, and near the
    /// rate over many ids.
    #[test]
    fn the_sample_is_deterministic_nested_and_near_the_rate() {
        let ids = (0..20_000u64).map(|i| JobId(40_000_000_000 + i * 7919));
        let (mut low, mut high) = (0, 0);
        for id in ids {
            let (a, b) = (in_green_sample(id, 0.1), in_green_sample(id, 0.3));
            assert_eq!(a, in_green_sample(id, 0.1));
            assert!(!a || b, "a higher rate holds the lower one's jobs");
            low += u64::from(a);
            high += u64::from(b);
        }
        assert!((1_700..2_300).contains(&low), "{low}");
        assert!((5_500..6_500).contains(&high), "{high}");
        assert!(!in_green_sample(JobId(1), 0.0));
        assert!(in_green_sample(JobId(1), 1.0));
    }
}
