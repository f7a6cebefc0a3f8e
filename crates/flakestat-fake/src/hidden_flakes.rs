//! Hidden flakes for the fake (`hidden_flakes = true` in a scenario's `scenario.toml`): some
//! green test jobs whose logs show a test their runner retried to a pass, in several runners'
//! formats (pytest-rerunfailures, nextest, gotestsum `--rerun-fails`, surefire's `Flakes:`),
//! each with the runner's summary line (how many tests passed, how many retries).
//!
//! Which jobs: every [`EVERY`]-th green execution (by job id) of a job whose name starts with
//! `Test`, or of the bot workflow's job when the scenario has it (`bot_workflow`: a workflow
//! that never fails, whose jobs a survey does not list; its job ids follow the others', so the
//! story's own plan is the same with or without it); the runner and the test go round the tables below. [`plan`] says what it chose, from
//! the dataset's jobs alone, so a test computes the expected figures from the same plan the
//! logs were written from. The logs are new only for those green jobs: every failed job, its
//! log, and every other job's log are as before; a survey that reads no green log sees the same
//! data except for the bytes of the attempt archives holding them.

use std::collections::BTreeSet;

use flakestat_core::model::{Conclusion, Job, JobId, RunId, Timestamp, WorkflowId};

use crate::dataset::{BOT_WORKFLOW_ID, Dataset, FakeLog};
use crate::stamp::log_line;

/// One green job in [`EVERY`] (of those whose name starts with `Test`) retried a test.
pub const EVERY: usize = 97;

/// The runners, and the tests each retries (ids as the runner prints them).
const RUNNERS: &[(&str, &[&str])] = &[
    (
        "pytest",
        &[
            "tests/test_memory.py::test_vmm_allocator_grow[device0]",
            "tests/test_launcher.py::test_launch_after_reset[stream1]",
        ],
    ),
    ("nextest", &["graph::tests::capture_replays_in_order"]),
    ("gotestsum", &["internal/driver.TestContextReset"]),
    (
        "surefire",
        &["com.nvidia.cuda.KernelLaunchIT.launchesTwice"],
    ),
];

/// What one green job's log shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRetry {
    pub job: JobId,
    pub job_name: String,
    /// The runner (`pytest`, `nextest`, `gotestsum`, `surefire`).
    pub runner: &'static str,
    /// The test retried to a pass.
    pub test: &'static str,
    /// Tests that passed, as the runner's summary says.
    pub passed: u64,
    /// Retries the runner made (failed tries before the pass).
    pub retries: u64,
}

fn eligible(job: &Job, bot: bool) -> bool {
    job.conclusion == Some(Conclusion::Success)
        && (job.name.starts_with("Test") || bot)
        && job.started_at.is_some()
        && job.completed_at.is_some()
}

/// The green jobs given a retried test, by job id.
pub fn plan(ds: &Dataset) -> Vec<PlannedRetry> {
    let bots: BTreeSet<RunId> = ds
        .runs
        .iter()
        .filter(|r| r.run.workflow_id == WorkflowId(BOT_WORKFLOW_ID))
        .map(|r| r.run.id)
        .collect();
    let mut jobs: Vec<&Job> = ds
        .jobs()
        .filter(|j| eligible(j, bots.contains(&j.run_id)))
        .collect();
    jobs.sort_by_key(|j| j.id);
    jobs.dedup_by_key(|j| j.id);
    let mut out = Vec::new();
    for (k, job) in jobs.iter().enumerate().filter(|(i, _)| i % EVERY == 0) {
        let n = k / EVERY;
        let (runner, tests) = RUNNERS[n % RUNNERS.len()];
        let test = tests[(n / RUNNERS.len()) % tests.len()];
        out.push(PlannedRetry {
            job: job.id,
            job_name: job.name.clone(),
            runner,
            test,
            passed: 1_200 + (n as u64 % 7),
            retries: 1 + (n as u64 % 2),
        });
    }
    out
}

impl Dataset {
    /// Gives each job of [`plan`] a log showing its retried test.
    pub fn add_hidden_flakes(&mut self) {
        for p in plan(self) {
            let job = self
                .jobs()
                .find(|j| j.id == p.job)
                .expect("planned from the dataset's jobs")
                .clone();
            let (Some(start), Some(end)) = (job.started_at, job.completed_at) else {
                continue;
            };
            self.logs
                .insert(p.job, FakeLog::Text(green_log(&p, start, end)));
        }
    }
}

/// The lines of a runner that retried `p.test` to a pass, stamped inside `[start, end]`.
fn runner_lines(p: &PlannedRetry) -> Vec<String> {
    let (t, passed, retries) = (p.test, p.passed, p.retries);
    match p.runner {
        "pytest" => {
            let mut lines: Vec<String> =
                (0..retries).map(|_| format!("{t} RERUN [ 42%]")).collect();
            lines.push(format!("{t} PASSED [ 42%]"));
            lines.push(
                "==================================== RERUNS ===================================="
                    .into(),
            );
            lines.push(format!(
                "============ {passed} passed, 81 skipped, {retries} rerun in 812.40s (0:13:32) ============"
            ));
            lines
        }
        "nextest" => {
            let (krate, name) = ("cuda-graph", t);
            let mut lines: Vec<String> = (1..=retries)
                .map(|k| format!("  TRY {k} FAIL [   0.412s] {krate} {name}"))
                .collect();
            lines.push(format!(
                "  TRY {} PASS [   0.398s] {krate} {name}",
                retries + 1
            ));
            lines.push("------------".into());
            lines.push(format!(
                "     Summary [  41.203s] {passed} tests run: {passed} passed (1 flaky), 0 skipped"
            ));
            lines.push(format!(
                "       FLAKY {}/{} [   0.398s] {krate} {name}",
                retries + 1,
                retries + 1
            ));
            lines
        }
        "gotestsum" => {
            let (pkg, name) = t.rsplit_once('.').expect("pkg.Test");
            let mut lines = vec![format!("=== FAIL: {pkg} {name} (0.02s)")];
            for k in 1..retries {
                lines.push(format!("=== FAIL: {pkg} {name} (re-run {k}) (0.02s)"));
            }
            lines.push(format!(
                "DONE {} runs, {} tests, 3 skipped, {retries} failures in 31.2s",
                retries + 1,
                passed + 3 + retries
            ));
            lines
        }
        _ => {
            let mut lines = vec![
                "[INFO] Results:".into(),
                "[INFO] ".into(),
                "[WARNING] Flakes: ".into(),
                format!("[WARNING] {t}"),
            ];
            for k in 1..=retries {
                lines.push(format!(
                    "[ERROR]   Run {k}: KernelLaunchIT.launchesTwice:42 expected: <0> but was: <700>"
                ));
            }
            lines.push(format!("[INFO]   Run {}: PASS", retries + 1));
            lines.push("[INFO] ".into());
            lines.push(format!(
                "[WARNING] Tests run: {}, Failures: 0, Errors: 0, Skipped: 2, Flakes: 1",
                passed + 2
            ));
            lines
        }
    }
}

fn green_log(p: &PlannedRetry, start: Timestamp, end: Timestamp) -> String {
    let mut lines = vec![
        "Current runner version: '2.329.0'".to_string(),
        "##[group]Run tests".to_string(),
    ];
    lines.extend(runner_lines(p));
    lines.push("Cleaning up orphan processes".into());
    let span = (end - start).num_milliseconds().max(1);
    let last = (lines.len() - 1).max(1) as i64;
    let mut out = String::from("\u{feff}");
    for (i, line) in lines.iter().enumerate() {
        let at = start + chrono::TimeDelta::milliseconds(span * i as i64 / last);
        out.push_str(&log_line(at));
        out.push(' ');
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use flakestat_core::signatures::testids::green::read_green;

    /// Each runner's log is read back as written: the test retried, the passed count, the
    /// retries.
    #[test]
    fn every_runner_s_log_reads_back_as_planned() {
        let start: Timestamp = "2026-07-01T10:00:00Z".parse().unwrap();
        let end: Timestamp = "2026-07-01T10:20:00Z".parse().unwrap();
        for (runner, tests) in RUNNERS {
            for retries in [1, 2] {
                let p = PlannedRetry {
                    job: JobId(1),
                    job_name: "Test".into(),
                    runner,
                    test: tests[0],
                    passed: 1_203,
                    retries,
                };
                let o = read_green(&green_log(&p, start, end));
                let ids: Vec<&str> = o.retried.iter().map(|r| r.id.as_str()).collect();
                assert_eq!(ids, [tests[0]], "{runner}");
                assert_eq!((o.passed, o.retries), (Some(1_203), retries), "{runner}");
            }
        }
    }
}
