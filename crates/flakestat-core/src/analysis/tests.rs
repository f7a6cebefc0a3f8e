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
//! What is not a counted failure: a failure in an [incident](super::incidents) (a runner pool
//! or a whole job failing at once) is the incident's, not the test's; a failure in a related or
//! unknown PR's run is left out. A test whose failures were all left out has the verdict
//! `left_out` and is no failed test of the window (the reports say what was left out).
//!
//! Since when (`onset`): the signature's first-occurrence analysis ([`bisect`](super::bisect))
//! run over the test's own failures — the merge its first failure followed, with the clean runs
//! before it and their probability, or that it was there before the window, or too rare to
//! place. A merge is blamed only when runs containing it fail outside the PRs whose own runs
//! hold the failures: a test failing only on several PRs' own runs while the other counted runs
//! from its first failure on (the default branch's, other PRs') are too many and all clean for
//! luck (the signatures' significance threshold) fails on those PRs (each broke it on its
//! branch), and no merge is named.
//!
//! Where in the matrix: "never on V" only where the signatures' significance rule holds
//! ([`DimensionFinding::significant`](super::DimensionFinding)); and how often: failed in X of
//! Y executions of the jobs that ran it (`executions`).
//!
//! Verdicts, first that holds:
//! - **flaky**: failed and passed on the same code — the same job passed in a later attempt of
//!   the run (re-run to green), the same job passed on the same head commit in another run
//!   (same-commit green), or its runner retried it to a pass inside the job (flaky in the job),
//!   a failed job's or, with `--green-logs`, a green one's (a hidden flake: `hidden_flaky`);
//! - **broken**: at least [`MIN_BROKEN_JOBS`] failed jobs, never green on the same code, and
//!   either every failure is on one PR's runs (that PR named), or the bisection places the first
//!   failure after a merge and the test failed in every counted run from then on (that merge
//!   named);
//! - **new**: the bisection places the first failure inside the window after a merge (named);
//! - **unknown**: no evidence either way;
//! - **left_out**: no counted failure: every failure was in a left-out run or an incident.

use std::collections::{BTreeMap, BTreeSet};

use super::bisect::Verdict as Placement;
use super::incidents::{self, Incident};
use super::signature::{self, FailureClass, FindingKind, HitOrigin, SignatureReport};
use super::{AnalysisConfig, window_runs};
use crate::model::{
    Conclusion, Job, JobId, PrNumber, RunId, Sha, SignatureId, SignatureInfo, Snapshot, Timestamp,
};

/// The quarantine list's default `--min-failures`: a test goes on it only after this many
/// counted failures (one failure and one green on the same commit is not enough to switch a
/// test off).
pub const DEFAULT_MIN_FAILURES: u64 = 2;

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
    /// No counted failure: every failure was left out (related or unknown PRs' runs, incidents).
    LeftOut,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Flaky => "flaky",
            Verdict::Broken => "broken",
            Verdict::New => "new",
            Verdict::Unknown => "unknown",
            Verdict::LeftOut => "left_out",
        }
    }
}

/// The PR or merge a `broken` or `new` verdict names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Culprit {
    /// The test fails on this PR's runs, and only there.
    PullRequest { pr: PrNumber, title: Option<String> },
    /// The test fails only on these PRs' own runs (each broke it on its branch): no merge.
    PullRequests { prs: Vec<PrNumber> },
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
            Culprit::PullRequests { prs } => own_runs_of(prs),
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

/// Since when a test fails: the first-occurrence analysis of its failures.
#[derive(Debug, Clone, PartialEq)]
pub enum Onset {
    /// Its first failure followed this merge (the bisection's top suspect): no failure in
    /// `clean_runs_before` counted runs before it; had it been there, seeing none would have
    /// had probability `probability`.
    Merge {
        pr: Option<PrNumber>,
        title: String,
        sha: Sha,
        merged_at: Timestamp,
        clean_runs_before: u64,
        probability: f64,
    },
    /// Every failure on PRs' own runs: since no merge.
    PullRequests { prs: Vec<PrNumber> },
    /// On no merge, for the bisection's verdict: there before the window, too rare to place,
    /// or not placed (`no_merge_in_every_hit_run`, …).
    Unplaced(Placement),
}

impl Onset {
    /// `placed`, `pull_requests`, or the bisection's verdict name (`present_before_window`,
    /// `too_rare_to_place`, …).
    pub fn kind(&self) -> String {
        match self {
            Onset::Merge { .. } => "placed".into(),
            Onset::PullRequests { .. } => "pull_requests".into(),
            Onset::Unplaced(verdict) => verdict.name(),
        }
    }

    /// Whether it says since when (a merge, before the window, too rare to place, or PRs'
    /// own runs) rather than why it cannot.
    pub fn says_when(&self) -> bool {
        match self {
            Onset::Unplaced(verdict) => matches!(
                verdict,
                Placement::PresentBeforeWindow { .. } | Placement::TooRareToPlace { .. }
            ),
            Onset::Merge { .. } | Onset::PullRequests { .. } => true,
        }
    }

    /// `since merge of #2371`, `since before the window`, `too rare to place`,
    /// `on PRs #1, #2 (their own runs)`, `not placed: …`.
    pub fn describe(&self) -> String {
        match self {
            Onset::Merge { pr: Some(pr), .. } => format!("since merge of #{}", pr.0),
            Onset::Merge { sha, .. } => {
                format!("since merge {}", sha.0.get(..7).unwrap_or(sha.0.as_str()))
            }
            Onset::Unplaced(Placement::PresentBeforeWindow { .. }) => {
                "since before the window".into()
            }
            Onset::Unplaced(Placement::TooRareToPlace { .. }) => "too rare to place".into(),
            Onset::PullRequests { prs } => format!("on {}", own_runs_of(prs)),
            Onset::Unplaced(verdict) => format!("not placed: {}", verdict.reason()),
        }
    }

    /// [`describe`](Self::describe) in the few words a table cell gives it after the verdict:
    /// `since #2371`, `since merge 1a2b3c4`, `since before the window`, `(too rare to place)`,
    /// `on PRs #1, #2 (own runs)`, `(not placed)` (the reason is [`describe`](Self::describe)'s,
    /// written under the table).
    pub fn brief(&self) -> String {
        match self {
            Onset::Merge { pr: Some(pr), .. } => format!("since #{}", pr.0),
            Onset::Merge { sha, .. } => {
                format!("since merge {}", sha.0.get(..7).unwrap_or(sha.0.as_str()))
            }
            Onset::Unplaced(Placement::PresentBeforeWindow { .. }) => {
                "since before the window".into()
            }
            Onset::Unplaced(Placement::TooRareToPlace { .. }) => "(too rare to place)".into(),
            Onset::PullRequests { prs } => format!(
                "on PRs {} (own runs)",
                prs.iter()
                    .map(|p| format!("#{}", p.0))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Onset::Unplaced(_) => "(not placed)".into(),
        }
    }

    /// The clean runs before its first failure and their probability, when it says them.
    pub fn clean_runs_before(&self) -> Option<(u64, f64)> {
        match self {
            Onset::Merge {
                clean_runs_before,
                probability,
                ..
            }
            | Onset::Unplaced(
                Placement::PresentBeforeWindow {
                    clean_runs_before,
                    probability,
                }
                | Placement::TooRareToPlace {
                    clean_runs_before,
                    probability,
                },
            ) => Some((*clean_runs_before, *probability)),
            _ => None,
        }
    }

    /// The evidence in words: `no failure in 168 runs before, P 3.1e-18`.
    pub fn evidence(&self) -> Option<String> {
        self.clean_runs_before()
            .map(|(clean_runs_before, probability)| {
                format!("no failure in {clean_runs_before} runs before, P {probability:.1e}")
            })
    }
}

/// `PRs #1, #2 (their own runs)`.
fn own_runs_of(prs: &[PrNumber]) -> String {
    format!(
        "PRs {} (their own runs)",
        prs.iter()
            .map(|p| format!("#{}", p.0))
            .collect::<Vec<_>>()
            .join(", ")
    )
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
    /// Failed job executions left out as part of an incident (machine- or job-wide).
    pub jobs_in_incidents: u64,
    /// Executions (every attempt, passed or failed) of the jobs it failed in, over the counted
    /// runs of the window: "failed in `jobs_failed` of `executions`".
    pub executions: u64,
    pub verdict: Verdict,
    /// What a `broken` or `new` verdict names.
    pub culprit: Option<Culprit>,
    /// Since when it fails (see the module); `None` with no counted failure.
    pub onset: Option<Onset>,
    /// Green job executions (`--green-logs`) in which its runner retried it to a pass: hidden
    /// flakes ([`hidden`](super::hidden)); 0 when no green log was read.
    pub hidden_flaky: u64,
}

impl TestEvidence {
    /// Counted failures: failed job executions and retries to a pass inside a job.
    pub fn failures(&self) -> u64 {
        self.jobs_failed + self.flaky_in_job
    }
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

/// Every test named by a job of the window, most jobs failed first, then by id (those with no
/// counted failure last), with the failures in the window's `incidents`' jobs
/// ([`incidents::find_incidents`], or `ReportData::incidents`) left out: counted in
/// `jobs_in_incidents`, never as failures of the test. `hidden`: the window's hidden flakes
/// ([`super::hidden::analyze_hidden`] of the same snapshot), computed once by the caller, who
/// reports them too.
pub fn analyze_tests(
    snapshot: &Snapshot,
    config: &AnalysisConfig,
    incidents: &[Incident],
    hidden: &super::hidden::HiddenFlakes,
) -> Vec<TestEvidence> {
    let apart = incidents::incident_jobs(incidents);
    // Each test failed in an incident: its family and runner, and in how many of its jobs.
    let mut in_incidents: BTreeMap<String, (String, String, u64)> = BTreeMap::new();
    for id in &apart {
        if let Some(c) = snapshot.classifications.get(id) {
            for t in &c.tests.failed {
                in_incidents
                    .entry(t.id.clone())
                    .or_insert_with(|| (t.family.clone(), t.runner.clone(), 0))
                    .2 += 1;
            }
        }
    }
    let cleared = without_incidents(snapshot, &apart);
    let snapshot: &Snapshot = &cleared;
    let mut out = analyze_counted(snapshot, config);
    for t in &mut out {
        t.jobs_in_incidents = in_incidents.get(&t.id).map_or(0, |v| v.2);
    }
    with_hidden_flakes(&mut out, hidden);
    // The tests failing only in incidents: the incident's section counts them.
    let named: BTreeSet<String> = out.iter().map(|t| t.id.clone()).collect();
    for (id, (family, runner, n)) in in_incidents {
        if !named.contains(&id) {
            out.push(left_out_only(id, family, runner, n));
        }
    }
    out.sort_by(|a, b| {
        (a.verdict == Verdict::LeftOut)
            .cmp(&(b.verdict == Verdict::LeftOut))
            .then(b.jobs_failed.cmp(&a.jobs_failed))
            .then(a.id.cmp(&b.id))
    });
    out
}

/// A verdict input from the green logs read (`--green-logs`): a test with a counted failure
/// that its runner also retried to a pass inside a green job failed and passed on the same
/// code, so it is flaky (the first verdict), whatever else its failures say. Nothing changes
/// when no green log was read. (The hidden counts come from the green logs alone: the same
/// whether or not an incident's failed jobs were cleared from the snapshot.)
fn with_hidden_flakes(out: &mut [TestEvidence], hidden: &super::hidden::HiddenFlakes) {
    if hidden.green_read == 0 {
        return;
    }
    let by_id: BTreeMap<&str, u64> = hidden.hidden().map(|t| (t.id.as_str(), t.hidden)).collect();
    for t in out.iter_mut() {
        t.hidden_flaky = by_id.get(t.id.as_str()).copied().unwrap_or(0);
        if t.hidden_flaky > 0 && t.verdict != Verdict::LeftOut {
            t.verdict = Verdict::Flaky;
            t.culprit = None;
        }
    }
}

/// A test whose only failures were in incidents.
fn left_out_only(id: String, family: String, runner: String, in_incidents: u64) -> TestEvidence {
    TestEvidence {
        id,
        family,
        runner,
        jobs_failed: 0,
        runs_failed: 0,
        flaky_in_job: 0,
        rerun_to_green: 0,
        same_commit_green: 0,
        first_failure: None,
        cells: BTreeMap::new(),
        cells_never_hit: BTreeMap::new(),
        signatures: BTreeMap::new(),
        jobs_left_out: 0,
        jobs_in_incidents: in_incidents,
        executions: 0,
        verdict: Verdict::LeftOut,
        culprit: None,
        onset: None,
        hidden_flaky: 0,
    }
}

/// `snapshot` with the tests of the incidents' jobs (`apart`) cleared: their failures are the
/// incident's, never the test's.
fn without_incidents<'a>(
    snapshot: &'a Snapshot,
    apart: &BTreeSet<JobId>,
) -> std::borrow::Cow<'a, Snapshot> {
    if apart.is_empty() {
        return std::borrow::Cow::Borrowed(snapshot);
    }
    let mut s = snapshot.clone();
    for id in apart {
        if let Some(c) = s.classifications.get_mut(id) {
            c.tests = Default::default();
        }
    }
    std::borrow::Cow::Owned(s)
}

/// Every test id a job of the window names (failed, or retried to a pass), with its family and
/// runner (the first record seen).
fn named_tests<'a>(
    snapshot: &'a Snapshot,
    window: &BTreeSet<RunId>,
) -> BTreeMap<&'a str, (&'a str, &'a str)> {
    let mut named: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
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
    named
}

/// A test as a failure class: its id, and the files beside it as its related paths.
fn class_of(id: &str) -> SignatureInfo {
    SignatureInfo {
        id: SignatureId(id.to_string()),
        title: id.to_string(),
        paths: related_paths(id),
        issue: None,
    }
}

/// The runs each test counts ([`signature::counted_runs`]), which depend on its paths alone:
/// tests of one file share them, worked out once.
#[derive(Default)]
struct CountedByPaths(BTreeMap<Vec<String>, BTreeSet<RunId>>);

impl CountedByPaths {
    fn of(
        &mut self,
        snapshot: &Snapshot,
        info: &SignatureInfo,
        config: &AnalysisConfig,
    ) -> &BTreeSet<RunId> {
        self.0
            .entry(info.paths.clone())
            .or_insert_with(|| signature::counted_runs(snapshot, info, config))
    }
}

/// The first-occurrence analyses the tests' onsets read: the class report (its bisection
/// among it) of every test with a counted failure whose onset is not its PRs' own runs, the
/// `incidents`' failures left out as [`analyze_tests`] leaves them out. What the survey's
/// ancestry fetch ([`bisect::needs`](super::bisect::needs)) covers for the tests as it does
/// for the signatures: a test no signature matches is placed on the same evidence.
pub fn onset_reports(
    snapshot: &Snapshot,
    config: &AnalysisConfig,
    incidents: &[Incident],
) -> Vec<SignatureReport> {
    let cleared = without_incidents(snapshot, &incidents::incident_jobs(incidents));
    let snapshot: &Snapshot = &cleared;
    let window = window_runs(snapshot);
    let bisecting = signature::Bisecting::of(snapshot);
    let mut counted = CountedByPaths::default();
    named_tests(snapshot, &window)
        .into_keys()
        .filter_map(|id| {
            let info = class_of(id);
            let report = signature::analyze_class(
                snapshot,
                &bisecting,
                &info,
                FailureClass::Test(id),
                config,
            );
            let counted = counted.of(snapshot, &info, config);
            (report.jobs_hit > 0 && own_runs_only(snapshot, config, counted, &report).is_none())
                .then_some(report)
        })
        .collect()
}

/// The tests whose failures this view gives to PRs' own runs, each with those PRs: failing
/// on several PRs' own runs while the other counted runs ran it clean (the onset `on PRs #A,
/// #B (their own runs)`, see [`own_runs_only`]). A signature's hits on those PRs' runs whose
/// failed tests are all theirs are that PR's own breakage, not the signature's hits on an
/// unrelated PR ([`signature`]'s account leaves them out and says so). A test failing on one
/// PR's runs alone (`broken on PR #N`) is not taken: with one PR, nothing tells its breakage
/// from a flake only that PR's runs happened to run. Only the tests that failed on PRs' runs
/// alone are analysed.
pub fn own_breakage(
    snapshot: &Snapshot,
    config: &AnalysisConfig,
    incidents: &[Incident],
) -> signature::OwnBreakage {
    let apart = incidents::incident_jobs(incidents);
    let window = window_runs(snapshot);
    let forks = super::prs::ForkHeads::new(&snapshot.pulls);
    let runs: BTreeMap<RunId, &crate::model::Run> = snapshot
        .runs
        .iter()
        .filter(|r| window.contains(&r.id))
        .map(|r| (r.id, r))
        .collect();
    // Each test failed in the window: whether every failure was on a PR's run.
    let mut on_prs_only: BTreeMap<&str, bool> = BTreeMap::new();
    for job in snapshot.jobs.iter().filter(|j| !apart.contains(&j.id)) {
        let (Some(run), Some(c)) = (runs.get(&job.run_id), snapshot.classifications.get(&job.id))
        else {
            continue;
        };
        let on_pr = matches!(
            super::prs::resolve_origin(
                run,
                &snapshot.default_branch,
                &config.pr_conventions,
                &forks
            ),
            super::prs::RunOrigin::PullRequest(_)
        );
        for t in &c.tests.failed {
            *on_prs_only.entry(t.id.as_str()).or_insert(true) &= on_pr;
        }
    }
    let candidates: Vec<&str> = on_prs_only
        .into_iter()
        .filter_map(|(id, only)| only.then_some(id))
        .collect();
    if candidates.is_empty() {
        return signature::OwnBreakage::new();
    }
    // The incidents' failures are left out as `analyze_tests` leaves them out (the copy is
    // made only now: most windows have no candidate).
    let cleared = without_incidents(snapshot, &apart);
    let snapshot: &Snapshot = &cleared;
    let named = named_tests(snapshot, &window);
    let shared = Shared {
        greens: Greens::new(snapshot),
        window,
        jobs: snapshot.jobs.iter().map(|j| (j.id, j)).collect(),
        bisecting: signature::Bisecting::of(snapshot),
    };
    let mut counted = CountedByPaths::default();
    let mut own = signature::OwnBreakage::new();
    for id in candidates {
        let (family, runner) = named.get(id).copied().unwrap_or(("", ""));
        let info = class_of(id);
        let counted = counted.of(snapshot, &info, config);
        let t = analyze_test(
            snapshot,
            config,
            &shared,
            &info,
            counted,
            (id, family, runner),
        );
        if let Some(Onset::PullRequests { prs }) = &t.onset {
            own.insert(id.to_string(), prs.iter().copied().collect());
        }
    }
    own
}

fn analyze_counted(snapshot: &Snapshot, config: &AnalysisConfig) -> Vec<TestEvidence> {
    let window = window_runs(snapshot);
    let named = named_tests(snapshot, &window);
    let shared = Shared {
        greens: Greens::new(snapshot),
        window,
        jobs: snapshot.jobs.iter().map(|j| (j.id, j)).collect(),
        bisecting: signature::Bisecting::of(snapshot),
    };
    let mut counted = CountedByPaths::default();
    let mut out: Vec<TestEvidence> = named
        .into_iter()
        .map(|(id, (family, runner))| {
            let info = class_of(id);
            let counted = counted.of(snapshot, &info, config);
            analyze_test(
                snapshot,
                config,
                &shared,
                &info,
                counted,
                (id, family, runner),
            )
        })
        .filter(|t| t.failures() + t.jobs_left_out > 0)
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

/// What every test's analysis reads, read once per snapshot.
struct Shared<'a> {
    greens: Greens<'a>,
    /// The survey window's runs.
    window: BTreeSet<RunId>,
    jobs: BTreeMap<JobId, &'a Job>,
    bisecting: signature::Bisecting,
}

/// One test's evidence; `info` is the test as a failure class (its id and related paths),
/// `counted` the runs that class counts (`signature::counted_runs`).
fn analyze_test(
    snapshot: &Snapshot,
    config: &AnalysisConfig,
    shared: &Shared<'_>,
    info: &SignatureInfo,
    counted: &BTreeSet<RunId>,
    (id, family, runner): (&str, &str, &str),
) -> TestEvidence {
    let report = signature::analyze_class(
        snapshot,
        &shared.bisecting,
        info,
        FailureClass::Test(id),
        config,
    );
    let (greens, window, jobs) = (&shared.greens, &shared.window, &shared.jobs);

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
    // "Never on V" only where it is significant, by the signatures' rule: confined to some
    // values over every job, with enough failures and a small chance of being luck.
    let cells_never_hit = report
        .findings
        .iter()
        .filter(|f| {
            f.significant
                && f.within.is_none()
                && f.kind == FindingKind::Confined
                && cells.contains_key(&f.dimension)
        })
        .map(|f| {
            (
                f.dimension.clone(),
                f.never_values.iter().cloned().collect(),
            )
        })
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

    // The executions of the jobs it failed in, over the counted runs of the window.
    let failed_in: BTreeSet<&str> = report
        .hits
        .iter()
        .filter_map(|h| jobs.get(&h.job_id).map(|j| j.name.as_str()))
        .collect();
    let executions = snapshot
        .jobs
        .iter()
        .filter(|j| {
            window.contains(&j.run_id)
                && counted.contains(&j.run_id)
                && failed_in.contains(j.name.as_str())
                && (succeeded(j) || j.is_failed())
        })
        .count() as u64;

    let rerun_to_green = report.runs_rerun_to_green;
    let own_prs = own_runs_only(snapshot, config, counted, &report);
    let onset = onset(&report, own_prs.clone());
    let (verdict, culprit) = if report.jobs_hit + flaky_in_job == 0 {
        (Verdict::LeftOut, None)
    } else if rerun_to_green + same_commit_green + flaky_in_job > 0 {
        (Verdict::Flaky, None)
    } else {
        judge(snapshot, &report, own_prs)
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
        jobs_in_incidents: 0,
        executions,
        verdict,
        culprit,
        onset: (report.jobs_hit > 0).then_some(onset),
        hidden_flaky: 0,
    }
}

/// The PRs whose own runs hold every counted failure, when the failures are theirs: several
/// PRs, no failure outside them, and the other counted runs from the first failure on (the
/// default branch's, other PRs', each holding the merges before it) so many and all clean that
/// at the test's rate this would be luck: chance below the signatures' `MAX_CHANCE`
/// (`(1 − p)^n`, `p` the failed share of the counted runs from the first failure on). A merge
/// that brought the test's failure fails outside its PR too; these failures do not.
fn own_runs_only(
    snapshot: &Snapshot,
    config: &AnalysisConfig,
    counted: &BTreeSet<RunId>,
    report: &SignatureReport,
) -> Option<Vec<PrNumber>> {
    let mut prs = BTreeSet::new();
    for h in &report.hits {
        match (h.origin, h.pr) {
            (HitOrigin::PullRequest, Some(pr)) => {
                prs.insert(pr);
            }
            _ => return None,
        }
    }
    if prs.len() < 2 {
        return None;
    }
    let first = report.hits.iter().map(|h| h.run_created_at).min()?;
    let forks = super::prs::ForkHeads::new(&snapshot.pulls);
    let (mut runs_after, mut others) = (0u64, 0u64);
    for run in snapshot
        .runs
        .iter()
        .filter(|r| counted.contains(&r.id) && r.created_at >= first)
    {
        runs_after += 1;
        let origin = super::prs::resolve_origin(
            run,
            &snapshot.default_branch,
            &config.pr_conventions,
            &forks,
        );
        if !matches!(origin, super::prs::RunOrigin::PullRequest(n) if prs.contains(&n)) {
            others += 1;
        }
    }
    let runs_hit = report.runs_hit as f64;
    let p = runs_hit / (runs_after.max(1) as f64);
    let chance = (1.0 - p.min(1.0)).powf(others as f64);
    (others > 0 && chance < signature::MAX_CHANCE).then(|| prs.into_iter().collect())
}

/// Since when: the bisection of the test's failures, unless every failure lies on PRs' own
/// runs (then no merge is blamed).
fn onset(report: &SignatureReport, own_prs: Option<Vec<PrNumber>>) -> Onset {
    if let Some(prs) = own_prs {
        return Onset::PullRequests { prs };
    }
    let Some(b) = &report.bisection else {
        return Onset::Unplaced(Placement::NoHits);
    };
    match (&b.verdict, b.suspects.first()) {
        (
            Placement::Placed {
                clean_runs_before,
                probability,
                ..
            },
            Some(top),
        ) => Onset::Merge {
            pr: top.pr,
            title: top.title.clone(),
            sha: top.sha.clone(),
            merged_at: top.merged_at,
            clean_runs_before: *clean_runs_before,
            probability: *probability,
        },
        (verdict, _) => Onset::Unplaced(verdict.clone()),
    }
}

/// `broken`, `new` or `unknown`, for a test with no evidence of passing on the same code.
fn judge(
    snapshot: &Snapshot,
    report: &SignatureReport,
    own_prs: Option<Vec<PrNumber>>,
) -> (Verdict, Option<Culprit>) {
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
        // Every failure on several PRs' own runs: each broke it on its branch, no merge.
        if let Some(prs) = own_prs.clone() {
            return (Verdict::Broken, Some(Culprit::PullRequests { prs }));
        }
        // Every counted run from the merge on failed.
        if let Some((b, top)) = placed
            && b.runs_after > 0
            && b.hits_after == b.runs_after
        {
            return (Verdict::Broken, Some(merge(top)));
        }
    }
    // A merge is blamed only when a run outside those PRs' own runs failed.
    if let Some(prs) = own_prs {
        return (Verdict::Unknown, Some(Culprit::PullRequests { prs }));
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
