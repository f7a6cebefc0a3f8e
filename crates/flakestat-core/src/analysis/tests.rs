//! Flake evidence per test, from what the survey already holds: the tests each failed job's log
//! names ([`Classification::tests`](crate::model::Classification)), and the other executions
//! of the same job.
//!
//! A test is a failure class like a signature: its hits (the jobs whose log names it failed)
//! go through the signature's analysis ([`signature::analyze_class`]), so its figures leave out
//! what a signature's leave out — runs outside the survey window, runs of PRs whose changes are
//! related to it, runs of PRs that cannot be found — and its bisection, re-runs and matrix are
//! the signature's, not a copy. A test's related paths are the files beside its own: a PR that
//! changes a file in the test's directory (`tests/graph/` for
//! `tests/graph/test_x.py::test_y`, at any depth of the repository, since runners print ids
//! relative to their root) is the test's own work, not evidence about it. A test whose id names
//! no file has no paths, so no PR is related to it. Nothing here depends on the signatures:
//! the figures are the same from a survey without any.
//!
//! Verdicts, first that holds:
//! - **flaky**: failed and passed on the same code — the same job passed in a later attempt of
//!   the run (re-run to green), the same job passed on the same head commit in another run
//!   (same-commit green), or its runner retried it to a pass inside the job (flaky in the job);
//! - **broken**: at least [`MIN_BROKEN_JOBS`] failed jobs, never green on the same code, and
//!   either every failure is on one PR's runs (that PR named), or the bisection places the first
//!   failure after a merge and the test failed in every counted run from then on (that merge
//!   named);
//! - **new**: the bisection places the first failure inside the window after a merge (named);
//! - **unknown**: no evidence either way.

use std::collections::{BTreeMap, BTreeSet};

use super::bisect::Verdict as Placement;
use super::signature::{self, FailureClass, SignatureReport};
use super::{AnalysisConfig, in_survey_window};
use crate::model::{
    Conclusion, Job, PrNumber, RunId, Sha, SignatureId, SignatureInfo, Snapshot, Timestamp,
};

/// Failed jobs a `broken` verdict needs at least: one failure says nothing about "every time".
pub const MIN_BROKEN_JOBS: u64 = 2;

/// What the evidence says of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Failed and passed on the same code.
    Flaky,
    /// Fails every time on one PR's code, or from one merge on.
    Broken,
    /// First failed inside the window, after a merge.
    New,
    /// No evidence either way in the window.
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Flaky => "flaky",
            Verdict::Broken => "broken",
            Verdict::New => "new",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The PR or merge a `broken` or `new` verdict names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Culprit {
    /// The test fails on this PR's runs, and only there.
    PullRequest { pr: PrNumber, title: Option<String> },
    /// The merge the test's first failure followed (the bisection's top suspect).
    Merge {
        pr: Option<PrNumber>,
        title: String,
        sha: Sha,
        merged_at: Timestamp,
    },
}

impl Culprit {
    /// `PR #2371 "title"`, `merge abc1234 "title"`.
    pub fn describe(&self) -> String {
        match self {
            Culprit::PullRequest { pr, title } => match title {
                Some(t) => format!("PR #{} \"{t}\"", pr.0),
                None => format!("PR #{}", pr.0),
            },
            Culprit::Merge { pr, title, sha, .. } => match pr {
                Some(pr) => format!("merge of PR #{} \"{title}\"", pr.0),
                None => format!(
                    "merge {} \"{title}\"",
                    sha.0.get(..7).unwrap_or(sha.0.as_str())
                ),
            },
        }
    }
}

/// One test's evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct TestEvidence {
    pub id: String,
    pub family: String,
    pub runner: String,
    /// Counted failed job executions (every attempt) whose log names the test as failed.
    pub jobs_failed: u64,
    /// Distinct runs among them.
    pub runs_failed: u64,
    /// Counted job executions in which the test failed and then passed on a retry of its
    /// runner.
    pub flaky_in_job: u64,
    /// Runs in which the test failed and whose latest attempt passed.
    pub rerun_to_green: u64,
    /// Failed job executions whose job passed on the same head commit in another run.
    pub same_commit_green: u64,
    /// The first counted run (by creation time) in which it failed.
    pub first_failure: Option<(RunId, Timestamp)>,
    /// Matrix dimension → the values of the jobs it failed in.
    pub cells: BTreeMap<String, BTreeSet<String>>,
    /// Matrix dimension → the values of the impact window's jobs it never failed in.
    pub cells_never_hit: BTreeMap<String, BTreeSet<String>>,
    /// Signatures matched in the jobs it failed in, with how many of those jobs.
    pub signatures: BTreeMap<SignatureId, u64>,
    /// Failed job executions left out: runs of PRs related to the test, or whose PR is unknown.
    pub jobs_left_out: u64,
    pub verdict: Verdict,
    /// What a `broken` or `new` verdict names.
    pub culprit: Option<Culprit>,
}

/// The file a test id names, for the runners whose ids start with one.
pub fn file_of(id: &str) -> Option<&str> {
    if let Some((file, _)) = id.split_once("::")
        && file.contains('.')
        && !file.contains(' ')
    {
        return Some(file);
    }
    if let Some((file, _)) = id.split_once(" > ")
        && (file.contains(".test.") || file.contains(".spec."))
    {
        return Some(file);
    }
    if id.starts_with("./") {
        return Some(id.split([':', '[']).next().unwrap_or(id));
    }
    None
}

/// The globs of the files beside the test's own (its directory, at any depth), or of the file
/// itself when it lies at the root; none when the id names no file.
pub fn related_paths(id: &str) -> Vec<String> {
    let Some(file) = file_of(id) else {
        return Vec::new();
    };
    let file = file.trim_start_matches("./");
    match file.rsplit_once('/') {
        Some((dir, _)) if !dir.is_empty() => {
            let dir = globset::escape(dir);
            vec![format!("{dir}/*"), format!("**/{dir}/*")]
        }
        _ => {
            let file = globset::escape(file);
            vec![file.clone(), format!("**/{file}")]
        }
    }
}

fn succeeded(job: &Job) -> bool {
    job.conclusion == Some(Conclusion::Success)
}

/// Every test named by a job of the window, most jobs failed first, then by id.
pub fn analyze_tests(snapshot: &Snapshot, config: &AnalysisConfig) -> Vec<TestEvidence> {
    // Every id named, with its family and runner (the first record seen).
    let mut named: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    let window: BTreeSet<RunId> = snapshot
        .runs
        .iter()
        .filter(|r| in_survey_window(snapshot, r.created_at))
        .map(|r| r.id)
        .collect();
    for job in snapshot.jobs.iter().filter(|j| window.contains(&j.run_id)) {
        let Some(c) = snapshot.classifications.get(&job.id) else {
            continue;
        };
        for t in c.tests.failed.iter().chain(&c.tests.flaky) {
            named
                .entry(t.id.as_str())
                .or_insert((t.family.as_str(), t.runner.as_str()));
        }
    }
    let greens = Greens::new(snapshot);
    let mut out: Vec<TestEvidence> = named
        .into_iter()
        .map(|(id, (family, runner))| {
            analyze_test(snapshot, config, &greens, &window, (id, family, runner))
        })
        .filter(|t| t.jobs_failed + t.flaky_in_job + t.jobs_left_out > 0)
        .collect();
    out.sort_by(|a, b| b.jobs_failed.cmp(&a.jobs_failed).then(a.id.cmp(&b.id)));
    out
}

/// Green executions: per (sha, job name) the runs in which the job passed.
struct Greens<'a> {
    on_sha: BTreeMap<(&'a str, &'a str), BTreeSet<RunId>>,
}

impl<'a> Greens<'a> {
    fn new(snapshot: &'a Snapshot) -> Greens<'a> {
        let mut on_sha: BTreeMap<(&str, &str), BTreeSet<RunId>> = BTreeMap::new();
        for job in snapshot.jobs.iter().filter(|j| succeeded(j)) {
            on_sha
                .entry((job.head_sha.0.as_str(), job.name.as_str()))
                .or_default()
                .insert(job.run_id);
        }
        Greens { on_sha }
    }

    fn same_commit(&self, job: &Job) -> bool {
        self.on_sha
            .get(&(job.head_sha.0.as_str(), job.name.as_str()))
            .is_some_and(|runs| runs.iter().any(|&r| r != job.run_id))
    }
}

fn analyze_test(
    snapshot: &Snapshot,
    config: &AnalysisConfig,
    greens: &Greens<'_>,
    window: &BTreeSet<RunId>,
    (id, family, runner): (&str, &str, &str),
) -> TestEvidence {
    let info = SignatureInfo {
        id: SignatureId(id.to_string()),
        title: id.to_string(),
        paths: related_paths(id),
        issue: None,
    };
    let report = signature::analyze_class(snapshot, &info, FailureClass::Test(id), config);
    let counted = signature::counted_runs(snapshot, &info, config);
    let jobs: BTreeMap<_, &Job> = snapshot.jobs.iter().map(|j| (j.id, j)).collect();

    let mut same_commit_green = 0;
    let mut cells: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut signatures: BTreeMap<SignatureId, u64> = BTreeMap::new();
    for hit in &report.hits {
        let Some(job) = jobs.get(&hit.job_id) else {
            continue;
        };
        same_commit_green += u64::from(greens.same_commit(job));
        for (k, v) in config.matrix.parse(&job.name).iter() {
            cells
                .entry(k.to_string())
                .or_default()
                .insert(v.to_string());
        }
        if let Some(c) = snapshot.classifications.get(&job.id) {
            for m in &c.matches {
                *signatures.entry(m.signature.clone()).or_default() += 1;
            }
        }
    }
    let cells_never_hit = report
        .dimensions
        .iter()
        .filter(|d| cells.contains_key(&d.name))
        .map(|d| {
            let never: BTreeSet<String> = d
                .values
                .iter()
                .filter(|v| v.jobs_hit == 0)
                .map(|v| v.value.clone())
                .collect();
            (d.name.clone(), never)
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();

    // Flaky in the job, and the failures left out, over the window's runs.
    let mut flaky_in_job = 0;
    let mut jobs_left_out = 0;
    for job in &snapshot.jobs {
        if !window.contains(&job.run_id) {
            continue;
        }
        let Some(c) = snapshot.classifications.get(&job.id) else {
            continue;
        };
        if counted.contains(&job.run_id) {
            flaky_in_job += u64::from(c.tests.flaky.iter().any(|t| t.id == id));
        } else {
            jobs_left_out += u64::from(c.tests.failed.iter().any(|t| t.id == id));
        }
    }

    let rerun_to_green = report.runs_rerun_to_green;
    let (verdict, culprit) = if rerun_to_green + same_commit_green + flaky_in_job > 0 {
        (Verdict::Flaky, None)
    } else {
        judge(snapshot, &report)
    };
    TestEvidence {
        id: id.to_string(),
        family: family.to_string(),
        runner: runner.to_string(),
        jobs_failed: report.jobs_hit,
        runs_failed: report.runs_hit,
        flaky_in_job,
        rerun_to_green,
        same_commit_green,
        first_failure: report
            .first_hit
            .as_ref()
            .map(|h| (h.run_id, h.run_created_at)),
        cells,
        cells_never_hit,
        signatures,
        jobs_left_out,
        verdict,
        culprit,
    }
}

/// `broken`, `new` or `unknown`, for a test with no evidence of passing on the same code.
fn judge(snapshot: &Snapshot, report: &SignatureReport) -> (Verdict, Option<Culprit>) {
    let placed = report.bisection.as_ref().and_then(|b| match b.verdict {
        Placement::Placed { .. } => b.suspects.first().map(|s| (b, s)),
        _ => None,
    });
    if report.jobs_hit >= MIN_BROKEN_JOBS {
        // Every failure on one PR's runs.
        let prs: BTreeSet<Option<PrNumber>> = report.hits.iter().map(|h| h.pr).collect();
        if let [Some(pr)] = prs.into_iter().collect::<Vec<_>>()[..] {
            // A PR only known by number (an open PR the survey had no reason to list) is
            // stored without a title: unknown, not empty.
            let title = snapshot
                .pulls
                .get(&pr)
                .map(|p| p.title.clone())
                .filter(|t| !t.is_empty());
            return (Verdict::Broken, Some(Culprit::PullRequest { pr, title }));
        }
        // Every counted run from the merge on failed.
        if let Some((b, top)) = placed
            && b.runs_after > 0
            && b.hits_after == b.runs_after
        {
            return (Verdict::Broken, Some(merge(top)));
        }
    }
    match placed {
        Some((_, top)) => (Verdict::New, Some(merge(top))),
        None => (Verdict::Unknown, None),
    }
}

fn merge(s: &super::bisect::Suspect) -> Culprit {
    Culprit::Merge {
        pr: s.pr,
        title: s.title.clone(),
        sha: s.sha.clone(),
        merged_at: s.merged_at,
    }
}

#[cfg(test)]
mod unit {
    use super::{file_of, related_paths};
    use crate::analysis::prs::PathMatcher;

    #[test]
    fn a_test_is_related_to_the_files_beside_it_at_any_depth() {
        let id = "tests/graph/test_graph_definition_lifetime.py::test_x[3.14t]";
        assert_eq!(
            file_of(id),
            Some("tests/graph/test_graph_definition_lifetime.py")
        );
        let paths = PathMatcher::new(&related_paths(id));
        assert!(paths.invalid.is_empty());
        let related = |f: &str| paths.first_match(&[f.to_string()]).is_some();
        assert!(related(
            "cuda_core/tests/graph/test_graph_definition_lifetime.py"
        ));
        assert!(related("cuda_core/tests/graph/test_graph_capture.py"));
        assert!(related("tests/graph/conftest.py"));
        assert!(!related("cuda_core/tests/graph/sub/test_deeper.py"));
        assert!(!related("cuda_core/cuda/core/_graph.py"));
        assert!(!related("cuda_core/tests/test_context.py"));
        // A file at the root: that file only; glob characters in the path are literal.
        let root = PathMatcher::new(&related_paths("test_a[b].py::test_c"));
        assert!(
            root.first_match(&["pkg/test_a[b].py".to_string()])
                .is_some()
        );
        assert!(root.first_match(&["pkg/test_ab.py".to_string()]).is_none());
        // No file in the id: no related PR.
        assert!(related_paths("TestX/sub").is_empty());
    }
}
