//! `report --tests`: one row per test with its flake evidence, in every format, for one
//! repository or several ([`TestsView`]: over several, each repository's tests on their own,
//! after a line per repository). The text formats go through the shared
//! [`layout`](super::layout) blocks (so escaping and table width are the other reports'); JSON
//! has wire types of its own, schema 1 like every document.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::layout::{self, Block, Line, Span, Table, text};
use super::{Format, RenderOptions};
use crate::analysis::Completeness;
use crate::analysis::hidden::HiddenFlakes;
use crate::analysis::incidents::Incident;
use crate::analysis::tests::{Culprit, Onset, TestEvidence, Verdict};
use crate::model::{Repo, Timestamp};

pub use crate::analysis::tests::file_of;

/// What `report --tests` renders.
#[derive(Debug, Clone)]
pub struct TestsReport {
    pub repo: Option<Repo>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    /// Every test with a failure in the window, counted or left out
    /// ([`analysis::tests::analyze_tests`](crate::analysis::tests::analyze_tests)).
    pub tests: Vec<TestEvidence>,
    /// The window's incidents, whose tests `tests` leaves out.
    pub incidents: Vec<Incident>,
    /// What the store leaves out of the window (the first line of an incomplete report).
    pub completeness: Completeness,
    /// The command that fills the gap ([`TestsReport::survey_gap`]), worded by the caller.
    pub fill_gap: Option<String>,
    /// The hidden flakes and retry budget of the green logs read (`--green-logs`); empty when
    /// none was read, and then nothing of it is shown.
    pub hidden: HiddenFlakes,
}

impl TestsReport {
    /// The survey that would fill this report's gap: its repository over its window.
    pub fn survey_gap(&self) -> crate::analysis::gap::SurveyGap {
        crate::analysis::gap::SurveyGap {
            repo: self.repo.clone(),
            since: self.since,
            until: self.until,
        }
    }
}

/// `report --tests` over several repositories (`--org`, `--repo` repeated): each one's tests,
/// analysed on their own, by name.
#[derive(Debug, Clone)]
pub struct TestsMany {
    /// The owner named with `--org`, when one was.
    pub owner: Option<String>,
    pub repos: Vec<TestsReport>,
}

impl TestsMany {
    pub fn new(mut repos: Vec<TestsReport>, owner: Option<String>) -> TestsMany {
        repos.sort_by_key(|r| r.repo.as_ref().map(Repo::sort_key));
        TestsMany { owner, repos }
    }
}

/// What `report --tests` shows: one repository's tests, or several repositories' (one `--repo`
/// is a scope of one, and keeps this single-repository shape). The same shape as the report's
/// [`View`](super::View).
#[derive(Debug, Clone, Copy)]
pub enum TestsView<'a> {
    Repo(&'a TestsReport),
    Org(&'a TestsMany),
}

impl<'a> From<&'a TestsReport> for TestsView<'a> {
    fn from(r: &'a TestsReport) -> TestsView<'a> {
        TestsView::Repo(r)
    }
}

impl<'a> From<&'a TestsMany> for TestsView<'a> {
    fn from(many: &'a TestsMany) -> TestsView<'a> {
        TestsView::Org(many)
    }
}

impl<'a> TestsView<'a> {
    /// The view's repositories: a list of one for `Repo`.
    pub fn repos(self) -> &'a [TestsReport] {
        match self {
            TestsView::Repo(r) => std::slice::from_ref(r),
            TestsView::Org(many) => &many.repos,
        }
    }

    /// What the store does not hold yet, over the view's repositories.
    pub fn completeness(self) -> Completeness {
        match self {
            TestsView::Repo(r) => r.completeness.clone(),
            TestsView::Org(many) => {
                crate::analysis::org::merge_completeness(many.repos.iter().map(|r| &r.completeness))
            }
        }
    }
}

/// The JSON document of `report --tests` over several repositories: each one's document as one
/// repository's would be, in `repos`; schema 1, fields only ever added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestsManyWire {
    pub schema: u32,
    /// The owner named with `--org`, when one was.
    pub owner: Option<String>,
    /// Whether the store holds the whole window for every repository; when not, the figures
    /// leave out `runs_left_out` runs over them all.
    pub complete: bool,
    pub runs_left_out: u64,
    pub repos: Vec<TestsWire>,
}

/// The JSON document of `report --tests`, schema 1; fields are only ever added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestsWire {
    pub schema: u32,
    pub repo: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    /// Whether the store holds the whole window; when not, the figures leave out
    /// `runs_left_out` runs (as in the report's JSON).
    #[serde(default = "yes")]
    pub complete: bool,
    #[serde(default)]
    pub runs_left_out: u64,
    /// The tests with a counted failure in the window.
    pub tests: Vec<TestWire>,
    /// The tests whose every failure in the window was left out (related or unknown PRs' runs,
    /// or incidents): no counted failure, verdict `left_out`.
    #[serde(default)]
    pub left_out: Vec<TestWire>,
    /// Machine- and job-wide incidents, whose tests are left out of `tests`.
    #[serde(default)]
    pub incidents: Vec<super::incidents::IncidentWire>,
    /// With `--green-logs`: the green job executions read, every test's executions passed,
    /// failed and retried to a pass (`hidden`: inside green jobs), and the retry budget per
    /// workflow and job. Absent when no green log was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_flakes: Option<HiddenFlakes>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestWire {
    pub id: String,
    pub family: String,
    pub runner: String,
    /// The file part of the id, when it has one (`tests/x.py` of `tests/x.py::test_y`).
    pub file: Option<String>,
    pub jobs_failed: u64,
    pub runs_failed: u64,
    pub rerun_to_green: u64,
    pub same_commit_green: u64,
    pub flaky_in_job: u64,
    pub first_failure: Option<FirstFailureWire>,
    /// Matrix dimension → the values of the jobs it failed in.
    pub cells: std::collections::BTreeMap<String, Vec<String>>,
    /// Matrix dimension → the values of the impact window's jobs it never failed in.
    #[serde(default)]
    pub cells_never_hit: std::collections::BTreeMap<String, Vec<String>>,
    /// Signature id → failed jobs of this test it matched in.
    pub signatures: std::collections::BTreeMap<String, u64>,
    /// Failed jobs left out of the figures: runs of PRs related to the test (changing a file
    /// beside it) or whose PR is unknown.
    #[serde(default)]
    pub jobs_left_out: u64,
    /// Failed jobs left out as part of an incident (the report's `incidents`).
    #[serde(default)]
    pub jobs_in_incidents: u64,
    /// Executions (every attempt, passed or failed) of the jobs it failed in, over the counted
    /// runs of the window: failed in `jobs_failed` of `executions`.
    #[serde(default)]
    pub executions: u64,
    /// `flaky`, `broken`, `new`, `unknown`, or `left_out` (no counted failure).
    pub verdict: String,
    /// What a `broken` or `new` verdict names: the PR it fails on, the PRs whose own runs it
    /// fails on, or the merge it followed.
    #[serde(default)]
    pub culprit: Option<CulpritWire>,
    /// Since when it fails: its first-occurrence analysis (as a signature's).
    #[serde(default)]
    pub onset: Option<OnsetWire>,
    /// Green job executions in which its runner retried it to a pass (`--green-logs`); absent
    /// when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hidden_flaky: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A test's first-occurrence analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnsetWire {
    /// `placed`, `present_before_window`, `too_rare_to_place`, `pull_requests`, or the
    /// bisection's reason for not placing it (`no_merge_in_every_hit_run`, …).
    pub kind: String,
    /// `since merge of #2371`, `on PRs #1, #2 (their own runs)`, ….
    pub text: String,
    /// Placed: the merge.
    pub pr: Option<u64>,
    pub sha: Option<String>,
    pub title: Option<String>,
    pub merged_at: Option<String>,
    /// The evidence: no failure in `clean_runs_before` counted runs before; had it been there,
    /// seeing none would have had probability `probability`.
    pub clean_runs_before: Option<u64>,
    pub probability: Option<f64>,
    /// `pull_requests`: the PRs whose own runs hold every failure.
    #[serde(default)]
    pub prs: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CulpritWire {
    /// `pull_request` (fails on this PR's runs only), `pull_requests` (only on these PRs' own
    /// runs: `prs`) or `merge` (first failed after it).
    pub kind: String,
    pub pr: Option<u64>,
    pub title: Option<String>,
    pub sha: Option<String>,
    pub merged_at: Option<String>,
    #[serde(default)]
    pub prs: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirstFailureWire {
    pub run_id: u64,
    pub created_at: String,
}

/// RFC 3339 in UTC with `Z`, as every timestamp of the JSON documents.
fn rfc(t: Timestamp) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A test's onset in JSON (also the nightly's newly flaky tests').
pub fn onset_wire(o: &Onset) -> OnsetWire {
    let mut w = OnsetWire {
        kind: o.kind(),
        text: o.describe(),
        pr: None,
        sha: None,
        title: None,
        merged_at: None,
        clean_runs_before: None,
        probability: None,
        prs: Vec::new(),
    };
    if let Some((clean_runs_before, probability)) = o.clean_runs_before() {
        w.clean_runs_before = Some(clean_runs_before);
        w.probability = Some(probability);
    }
    match o {
        Onset::Merge {
            pr,
            title,
            sha,
            merged_at,
            ..
        } => {
            w.pr = pr.map(|p| p.0);
            w.title = Some(title.clone());
            w.sha = Some(sha.0.clone());
            w.merged_at = Some(rfc(*merged_at));
        }
        Onset::PullRequests { prs } => w.prs = prs.iter().map(|p| p.0).collect(),
        Onset::Unplaced(_) => {}
    }
    w
}

fn culprit_wire(c: &Culprit) -> CulpritWire {
    match c {
        Culprit::PullRequests { prs } => CulpritWire {
            kind: "pull_requests".into(),
            pr: None,
            title: None,
            sha: None,
            merged_at: None,
            prs: prs.iter().map(|p| p.0).collect(),
        },
        Culprit::PullRequest { pr, title } => CulpritWire {
            kind: "pull_request".into(),
            pr: Some(pr.0),
            title: title.clone(),
            sha: None,
            merged_at: None,
            prs: Vec::new(),
        },
        Culprit::Merge {
            pr,
            title,
            sha,
            merged_at,
        } => CulpritWire {
            kind: "merge".into(),
            pr: pr.map(|p| p.0),
            title: Some(title.clone()),
            sha: Some(sha.0.clone()),
            merged_at: Some(rfc(*merged_at)),
            prs: Vec::new(),
        },
    }
}

/// The test's name within `file` (`path.py::test_x[3.14t]` → `test_x[3.14t]`), for the table
/// whose File column already names the file; the whole id where the runner puts no file first.
/// JSON and `--ids` keep the whole id.
fn name_in_file<'a>(id: &'a str, file: Option<&str>) -> &'a str {
    file.and_then(|f| id.strip_prefix(f))
        .and_then(|rest| rest.strip_prefix("::").or_else(|| rest.strip_prefix(" > ")))
        .filter(|name| !name.is_empty())
        .unwrap_or(id)
}

fn test_wire(t: &TestEvidence) -> TestWire {
    TestWire {
        id: t.id.clone(),
        family: t.family.clone(),
        runner: t.runner.clone(),
        file: file_of(&t.id).map(String::from),
        jobs_failed: t.jobs_failed,
        runs_failed: t.runs_failed,
        rerun_to_green: t.rerun_to_green,
        same_commit_green: t.same_commit_green,
        flaky_in_job: t.flaky_in_job,
        first_failure: t.first_failure.map(|(run, at)| FirstFailureWire {
            run_id: run.0,
            created_at: rfc(at),
        }),
        cells: t
            .cells
            .iter()
            .map(|(k, v)| (k.clone(), v.iter().cloned().collect()))
            .collect(),
        cells_never_hit: t
            .cells_never_hit
            .iter()
            .map(|(k, v)| (k.clone(), v.iter().cloned().collect()))
            .collect(),
        jobs_left_out: t.jobs_left_out,
        jobs_in_incidents: t.jobs_in_incidents,
        executions: t.executions,
        culprit: t.culprit.as_ref().map(culprit_wire),
        onset: t.onset.as_ref().map(onset_wire),
        signatures: t
            .signatures
            .iter()
            .map(|(k, v)| (k.0.clone(), *v))
            .collect(),
        verdict: t.verdict.as_str().to_string(),
        hidden_flaky: t.hidden_flaky,
    }
}

fn to_wire(r: &TestsReport) -> TestsWire {
    TestsWire {
        schema: super::SCHEMA_VERSION,
        repo: r.repo.as_ref().map(ToString::to_string),
        since: r.since.map(rfc),
        until: r.until.map(rfc),
        complete: r.completeness.is_complete(),
        runs_left_out: r.completeness.runs_left_out,
        tests: counted(r).map(test_wire).collect(),
        left_out: left_out(r).map(test_wire).collect(),
        incidents: super::incidents::to_wire(&r.incidents),
        hidden_flakes: (r.hidden.green_read > 0).then(|| r.hidden.clone()),
    }
}

/// The tests with a counted failure.
fn counted(r: &TestsReport) -> impl Iterator<Item = &TestEvidence> {
    r.tests.iter().filter(|t| t.verdict != Verdict::LeftOut)
}

/// The tests whose every failure was left out.
fn left_out(r: &TestsReport) -> impl Iterator<Item = &TestEvidence> {
    r.tests.iter().filter(|t| t.verdict == Verdict::LeftOut)
}

/// The repository reported on, or `the store` when the store does not name one.
fn repo_label(r: &TestsReport) -> String {
    r.repo
        .as_ref()
        .map_or_else(|| "the store".to_string(), ToString::to_string)
}

/// The blocks of `view`: over several repositories, a line per repository, then each
/// repository's tests (over several, one heading level down).
fn document(view: TestsView<'_>) -> Vec<Block> {
    let several = matches!(view, TestsView::Org(_));
    let mut blocks = per_repository(view);
    for r in view.repos() {
        let tests = repo_document(r).into_iter();
        if several {
            blocks.extend(tests.map(layout::demote));
        } else {
            blocks.extend(tests);
        }
    }
    blocks
}

/// What the view covers: the repository, or "3 repositories of octo-org" or their names.
fn scope_label(view: TestsView<'_>) -> String {
    match view {
        TestsView::Repo(r) => repo_label(r),
        TestsView::Org(many) => match &many.owner {
            Some(owner) => format!(
                "{} of {owner}",
                layout::plural(many.repos.len() as u64, "repository", "repositories")
            ),
            None => many
                .repos
                .iter()
                .map(repo_label)
                .collect::<Vec<_>>()
                .join(", "),
        },
    }
}

/// Over several repositories, the title and each repository's tests failed and flaky; nothing
/// over one (its own tests say it).
fn per_repository(view: TestsView<'_>) -> Vec<Block> {
    let TestsView::Org(many) = view else {
        return Vec::new();
    };
    let rows = many
        .repos
        .iter()
        .map(|r| {
            let flaky = r
                .tests
                .iter()
                .filter(|t| t.verdict == Verdict::Flaky)
                .count();
            vec![
                vec![text(repo_label(r))],
                vec![text(counted(r).count().to_string())],
                vec![text(flaky.to_string())],
            ]
        })
        .collect();
    vec![
        Block::Heading(
            1,
            vec![text(format!("Failing tests in {}", scope_label(view)))],
        ),
        Block::Table(Table {
            headers: vec!["Repository", "Tests failed", "Flaky"],
            numeric: vec![false, true, true],
            rows,
        }),
    ]
}

/// One repository's tests: its incomplete line, how many failed and how many are flaky, and
/// one row per test.
fn repo_document(r: &TestsReport) -> Vec<Block> {
    let repo = repo_label(r);
    let flaky = r
        .tests
        .iter()
        .filter(|t| t.verdict == Verdict::Flaky)
        .count();
    let mut blocks: Vec<Block> = layout::incomplete_line(&r.completeness, r.fill_gap.as_deref())
        .into_iter()
        .collect();
    let failed = counted(r).count();
    blocks.extend([
        Block::Heading(1, vec![text(format!("Failing tests in {repo}"))]),
        Block::Paragraph(vec![text(format!(
            "{} failed in the window{}{}; {flaky} of them flaky (failed and passed on the same code).",
            layout::plural(failed as u64, "test", "tests"),
            r.since
                .map_or_else(String::new, |s| format!(" from {}", layout::date(s))),
            r.until
                .map_or_else(String::new, |u| format!(" to {}", layout::date(u))),
        ))]),
    ]);
    let tail = |mut blocks: Vec<Block>| {
        blocks.extend(super::hidden::section(&r.hidden, 2));
        blocks.extend(left_out_lines(r));
        blocks.extend(super::incidents::section(&r.incidents, 2));
        blocks
    };
    if failed == 0 {
        return tail(blocks);
    }
    // The green logs' column, only when `--green-logs` read some.
    let green = r.hidden.green_read > 0;
    let rows: Vec<Vec<Line>> = counted(r)
        .map(|t| {
            let cells: Vec<String> = t
                .cells
                .iter()
                .filter(|(k, _)| k.as_str() != crate::matrix::JOB)
                .map(|(k, v)| {
                    let hit = v.iter().cloned().collect::<Vec<_>>().join(",");
                    match t.cells_never_hit.get(k) {
                        Some(never) => format!(
                            "{k}={hit} (never {})",
                            never.iter().cloned().collect::<Vec<_>>().join(",")
                        ),
                        None => format!("{k}={hit}"),
                    }
                })
                .collect();
            let signatures: Vec<String> = t
                .signatures
                .iter()
                .map(|(s, n)| format!("{s} ({n})"))
                .collect();
            let file = file_of(&t.id);
            let mut row = vec![
                vec![Span::Code(name_in_file(&t.id, file).to_string())],
                vec![text(file.unwrap_or_default())],
                vec![text(format!("{} of {}", t.jobs_failed, t.executions))],
                vec![text(t.runs_failed.to_string())],
                vec![text(t.rerun_to_green.to_string())],
                vec![text(t.same_commit_green.to_string())],
                vec![text(t.flaky_in_job.to_string())],
                vec![text(
                    t.first_failure.map_or_else(String::new, |(run, at)| {
                        format!("{} (run {run})", layout::date(at))
                    }),
                )],
                vec![text(cells.join("; "))],
                vec![text(signatures.join(", "))],
                verdict_cell(t),
            ];
            if green {
                row.insert(7, vec![text(t.hidden_flaky.to_string())]);
            }
            row
        })
        .collect();
    blocks.push(Block::Paragraph(vec![text(
        "Failed in: the job executions the test failed in, of the executions (every attempt) of \
         the jobs that ran it; related PRs' runs and incidents left out.",
    )]));
    let mut headers = vec![
        "Test",
        "File",
        "Failed in",
        "Runs failed",
        "Re-run to green",
        "Same-commit green",
        "Flaky in job",
        "First failure",
        "Matrix cells",
        "Signatures",
        "Verdict",
    ];
    let mut numeric = vec![
        false, false, true, true, true, true, true, false, false, false, false,
    ];
    if green {
        headers.insert(7, "Retried in green");
        numeric.insert(7, true);
    }
    blocks.push(Block::Table(Table {
        headers,
        numeric,
        rows,
    }));
    blocks.extend(onset_lines(r));
    tail(blocks)
}

/// One line per test with a counted failure and an onset, the table's "Since" cell in full:
/// "`test`: flaky since merge of #2371 (no failure in 168 runs before (P 3.1e-18))", or why it
/// is not placed: "`test`: flaky, not placed: too few hits …".
fn onset_lines(r: &TestsReport) -> Vec<Block> {
    let lines: Vec<Line> = counted(r)
        .filter_map(|t| {
            let onset = t.onset.as_ref()?;
            let evidence = onset
                .evidence()
                .map_or_else(String::new, |e| format!(" ({e})"));
            let joint = if onset.says_when() { " " } else { ", " };
            Some(vec![
                Span::Code(t.id.clone()),
                text(format!(
                    ": {}{joint}{}{evidence}",
                    t.verdict.as_str(),
                    onset.describe()
                )),
            ])
        })
        .collect();
    if lines.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Paragraph(vec![text("Since when:")]),
        Block::Bullets(lines),
    ]
}

/// What was left out: each test whose every failure was in related or unknown PRs' runs, and
/// how many failed only in incidents.
fn left_out_lines(r: &TestsReport) -> Vec<Block> {
    let mut lines: Vec<Line> = left_out(r)
        .filter(|t| t.jobs_left_out > 0)
        .map(|t| {
            vec![
                Span::Code(t.id.clone()),
                text(format!(
                    ": {} in related or unknown PRs' runs, left out{}",
                    layout::plural(t.jobs_left_out, "failure", "failures"),
                    if t.jobs_in_incidents > 0 {
                        format!(
                            "; {} in incidents",
                            layout::plural(t.jobs_in_incidents, "failure", "failures")
                        )
                    } else {
                        String::new()
                    }
                )),
            ]
        })
        .collect();
    let only_incidents = left_out(r)
        .filter(|t| t.jobs_left_out == 0 && t.jobs_in_incidents > 0)
        .count() as u64;
    if only_incidents > 0 {
        lines.push(vec![text(format!(
            "{} failed only in the incidents below, left out",
            layout::plural(only_incidents, "test", "tests")
        ))]);
    }
    if lines.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Paragraph(vec![text(
            "No counted failure in the window (not failed tests of it):",
        )]),
        Block::Bullets(lines),
    ]
}

/// The verdict in bold, with the PR or merge a `broken` or `new` one names.
/// The verdict and since when, in one cell (the table is wide already): a broken test's
/// culprit, or else the onset in brief ("**flaky** since #2371"); the onset in full is under
/// the table.
fn verdict_cell(t: &TestEvidence) -> Line {
    let mut line = vec![Span::Strong(t.verdict.as_str().to_string())];
    if let Some(c) = &t.culprit {
        let at = match c {
            Culprit::PullRequest { .. } | Culprit::PullRequests { .. } => "on",
            Culprit::Merge { .. } => "since",
        };
        line.push(text(format!(" {at} {}", c.describe())));
    } else if let Some(onset) = &t.onset {
        line.push(text(format!(" {}", onset.brief())));
    }
    line
}

/// Renders `view` (a `&TestsReport`, a `&TestsMany`, or a [`TestsView`]); `Format::Html` is
/// the one page of the other reports. JSON over several repositories holds each one's own
/// document.
pub fn render<'a>(
    view: impl Into<TestsView<'a>>,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    let view = view.into();
    match format {
        Format::Json => match view {
            TestsView::Repo(r) => super::sanitize::write_json(out, &to_wire(r)),
            TestsView::Org(many) => {
                let completeness = view.completeness();
                let wire = TestsManyWire {
                    schema: super::SCHEMA_VERSION,
                    owner: many.owner.clone(),
                    complete: completeness.is_complete(),
                    runs_left_out: completeness.runs_left_out,
                    repos: many.repos.iter().map(to_wire).collect(),
                };
                super::sanitize::write_json(out, &wire)
            }
        },
        Format::Markdown => super::markdown::render(&document(view), out),
        Format::Table => super::table::render(&document(view), options, out),
        Format::Html => {
            let title = format!("Failing tests in {} (flakestat)", scope_label(view));
            super::html::render(&title, &document(view), out)
        }
    }
}

/// One test id per line, flaky ones with at least `min_failures` counted failures or retries
/// to a pass (in failed jobs, or in green ones when `--green-logs` read some) only: a
/// quarantine list (an incident's tests are never on it: their failures are not counted).
/// Tests that never failed but were retried to a pass inside green jobs follow, most hidden
/// first, as the "Hidden flakes" section orders them.
pub fn render_ids(r: &TestsReport, min_failures: u64, out: &mut dyn Write) -> io::Result<()> {
    for t in &r.tests {
        if t.verdict == Verdict::Flaky && t.failures() + t.hidden_flaky >= min_failures {
            writeln!(out, "{}", super::sanitize::terminal_line(&t.id))?;
        }
    }
    // The tests above are every one that failed: those that only hid their retries follow.
    let failed: std::collections::BTreeSet<&str> = r.tests.iter().map(|t| t.id.as_str()).collect();
    for t in r.hidden.hidden() {
        if !failed.contains(t.id.as_str()) && t.hidden >= min_failures {
            writeln!(out, "{}", super::sanitize::terminal_line(&t.id))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod unit {
    use super::{file_of, name_in_file};

    #[test]
    fn the_test_column_names_the_test_within_the_file_column() {
        let cases = [
            ("tests/a/test_b.py::test_x[3.14t]", "test_x[3.14t]"),
            ("tests/a/test_b.py::TestC::test_y", "TestC::test_y"),
            ("src/a.test.ts > Suite > name", "Suite > name"),
            // No separator after the file: the whole id.
            ("./spec/x_spec.rb:12", "./spec/x_spec.rb:12"),
            // No file at all.
            ("TestX/sub", "TestX/sub"),
        ];
        for (id, name) in cases {
            assert_eq!(name_in_file(id, file_of(id)), name, "{id}");
        }
    }
}
