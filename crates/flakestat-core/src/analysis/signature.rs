//! One failure class's account: hits, impact window, where the hits come from (default branch,
//! PRs that touch none of its paths), re-runs to green, clean runs before, and the matrix. A
//! class is a signature (the jobs it matched) or a test (the jobs whose log names it failed,
//! [`analysis::tests`](super::tests)): both go through [`analyze_class`], so a test's figures
//! leave out exactly what a signature's leave out (related and unknown PRs, runs outside the
//! survey window) and its bisection is the signature's.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::share::percent;

use serde::Serialize;

use super::bisect::{self, Ancestry, BisectRun, Bisection, Merge, Verdict};
use super::cost::{Cost, cost_of};
use super::heatmap::{HeatMap, heatmaps};
use super::prs::{self, ForkHeads, PathMatcher, PrRelevance, RunOrigin};
use super::timeline::{Timeline, timeline};
use super::{AnalysisConfig, JobVerdict, in_survey_window, verdict};
use crate::matrix::{self, Dimensions};
use crate::model::{
    Conclusion, Event, Job, JobId, PrNumber, Run, RunId, Sha, SignatureId, SignatureInfo,
    SignatureMatch, Snapshot, Timestamp, WorkflowId,
};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignatureReport {
    pub id: SignatureId,
    pub title: String,
    pub issue: Option<String>,
    pub paths: Vec<String>,
    /// `paths` entries that are not valid globs (ignored).
    pub invalid_paths: Vec<String>,
    /// Names of the workflows it occurs in.
    pub workflows: Vec<String>,
    /// Runs (one id = all its attempts) in the survey window with a counted hit.
    pub runs_hit: u64,
    /// Job executions (every attempt) with a counted hit.
    pub jobs_hit: u64,
    /// Failed jobs in the impact window whose log cannot be read (expired, missing, not
    /// downloaded or not classified): each could be a hit, unseen.
    pub jobs_unknown: u64,
    /// `None` when nothing was hit.
    pub impact_window: Option<ImpactWindow>,
    /// First occurrence relative to merges: the merges that may have introduced it, with the
    /// evidence, and how strong the conclusion is. `None` when nothing was hit.
    pub bisection: Option<Bisection>,
    pub runs_hit_default_branch: u64,
    /// Runs of PRs (mirror and merge-queue branches included), related ones excluded.
    pub runs_hit_pr: u64,
    /// Of `runs_hit_pr`: PRs whose changed files are known and match none of `paths`.
    pub runs_hit_pr_unrelated: u64,
    /// Of `runs_hit_pr`: PRs whose relevance cannot be told, with the reason.
    pub pr_relevance_unknown: Vec<RelevanceGap>,
    /// Runs of other branches and tags.
    pub runs_hit_other: u64,
    /// Hit in some attempt, latest attempt succeeded.
    pub runs_rerun_to_green: u64,
    /// The most attempts a run re-run to green needed (0 when none was).
    pub max_attempts: u32,
    /// Hit runs whose latest attempt did not succeed.
    pub runs_hit_still_failing: u64,
    /// Runs of the same workflows before the impact window with no hit and nothing unknown.
    pub clean_runs_before: u64,
    /// Runs before the impact window with a failed job whose log cannot be read.
    pub runs_before_unknown: u64,
    /// Runs before the impact window (so before the survey window) that were hit.
    pub runs_hit_before: u64,
    /// The earliest run counted before the impact window.
    pub before_from: Option<Timestamp>,
    pub first_hit: Option<Hit>,
    /// Runs of PRs whose changes touch `paths`, left out of every count.
    pub excluded_runs: Vec<ExcludedRun>,
    /// Runs of a PR that cannot be found (fork runs naming no PR that no listed PR heads): left
    /// out of every count, since they may be a related PR's, and listed with the reason.
    pub unknown_runs: Vec<UnknownRun>,
    /// Hit runs of PRs whose every hit is that PR's own breakage: the failed tests of each
    /// matched job are ones the tests view finds failing on PRs' own runs
    /// ([`tests::own_breakage`](super::tests::own_breakage)). Left out of every count, like a
    /// related PR's runs, and listed with the tests.
    pub own_breakage_runs: Vec<OwnBreakageRun>,
    /// Per dimension, per value, over the jobs of the impact window; natural order.
    pub dimensions: Vec<DimensionReport>,
    /// What the dimensions say: confined to some values, or everywhere.
    pub findings: Vec<DimensionFinding>,
    /// The matrix again, among the jobs of the primary confinement (`python=3.14t`), when the
    /// hits are significantly confined.
    pub within: Option<WithinReport>,
    /// Test id → hits.
    pub tests: BTreeMap<String, u64>,
    /// Every counted hit, oldest first.
    pub hits: Vec<Hit>,
    /// Runner time the hits cost: the failed jobs, and the attempts that re-ran their runs.
    pub cost: Cost,
    /// Runs and runs hit per day of the survey window, with markers; `None` when nothing was
    /// hit.
    pub timeline: Option<Timeline>,
    /// The matrix two dimensions at a time (rows: where the hits are confined).
    pub heatmaps: Vec<HeatMap>,
}

/// What the impact window starts at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImpactStart {
    /// The first counted hit's run: no merge could be named.
    FirstHit,
    /// The merge the bisection names (its top suspect's `merged_at`).
    Merge,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImpactWindow {
    pub starts_at: ImpactStart,
    pub start: Timestamp,
    pub end: Timestamp,
    /// Runs of the workflows where it occurs, created in `[start, end)`, related PRs excluded.
    pub runs: u64,
    /// `runs_hit / runs`, in percent, one decimal.
    pub percent: Option<f64>,
    /// Runs of the window not completed and not hit (yet): left out of `runs`.
    pub runs_in_progress: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RelevanceGap {
    pub pr: Option<PrNumber>,
    pub runs: u64,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HitOrigin {
    DefaultBranch,
    PullRequest,
    UnknownPullRequest,
    Other,
}

/// One job execution a signature hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    pub run_id: RunId,
    pub attempt: u32,
    pub job_id: JobId,
    pub job: String,
    /// When the job was created.
    pub created_at: Timestamp,
    pub run_created_at: Timestamp,
    pub workflow: String,
    pub event: Event,
    pub branch: Option<String>,
    pub origin: HitOrigin,
    pub pr: Option<PrNumber>,
    pub pr_url: Option<String>,
    /// The job's page, when GitHub gave one.
    pub html_url: Option<String>,
    pub run_url: String,
    /// The run's latest attempt and its conclusion.
    pub run_attempts: u32,
    pub run_conclusion: Option<Conclusion>,
    /// The first matching line.
    pub line: String,
    pub tests: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExcludedRun {
    pub run_id: RunId,
    pub pr: PrNumber,
    pub pr_url: Option<String>,
    pub created_at: Timestamp,
    pub html_url: String,
    /// Whether the signature hit this run.
    pub hit: bool,
    pub file: String,
    pub glob: String,
    pub reason: String,
}

/// A run of a PR whose hits are its own breakage: counted nowhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OwnBreakageRun {
    pub run_id: RunId,
    pub pr: PrNumber,
    pub pr_url: Option<String>,
    pub created_at: Timestamp,
    pub html_url: String,
    /// The failed tests of its matched jobs: each fails on PRs' own runs only.
    pub tests: Vec<String>,
}

/// The tests the tests view finds failing on PRs' own runs, each with those PRs
/// ([`tests::own_breakage`](super::tests::own_breakage)).
pub type OwnBreakage = BTreeMap<String, BTreeSet<PrNumber>>;

/// A run whose PR is unknown: counted nowhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownRun {
    pub run_id: RunId,
    pub created_at: Timestamp,
    pub html_url: String,
    /// Whether the signature hit this run.
    pub hit: bool,
    pub head_repository: Option<String>,
    pub branch: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WithinReport {
    /// `dimension=value, …`.
    pub label: String,
    /// Every other dimension, over those jobs only.
    pub dimensions: Vec<DimensionReport>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DimensionReport {
    pub name: String,
    pub values: Vec<DimensionValue>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DimensionValue {
    pub value: String,
    pub jobs_hit: u64,
    pub jobs_total: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Hits only on `hit_values`; `never_values` ran and were never hit.
    Confined,
    /// Every value that ran was hit.
    Everywhere,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DimensionFinding {
    pub dimension: String,
    pub kind: FindingKind,
    /// Read among the jobs of this primary finding (`python=3.14t`), or over all jobs.
    pub within: Option<String>,
    pub hit_values: Vec<String>,
    /// Hits and jobs over `hit_values`.
    pub jobs_hit: u64,
    pub jobs_total: u64,
    pub never_values: Vec<String>,
    /// Jobs over `never_values`.
    pub never_jobs_total: u64,
    /// If the hits fell on jobs regardless of this dimension, the chance that none would land
    /// on `never_values`: small means the confinement is no accident.
    pub chance: f64,
    /// Confined, with at least `MIN_HITS` hits and a `chance` below `MAX_CHANCE`: worth saying.
    pub significant: bool,
}

/// Fewer hits than this say nothing about where in the matrix a failure lives.
pub const MIN_HITS: u64 = 3;
/// A confinement whose chance is at least this could be luck.
pub const MAX_CHANCE: f64 = 0.01;

/// Dimensions in the order people read a matrix; others follow alphabetically.
const DIMENSION_ORDER: &[&str] = &[
    "job",
    "platform",
    "arch",
    "python",
    "cuda",
    "gpu",
    crate::matrix::DRIVER_MODEL,
    "source",
    "compiler",
];

fn ran(job: &Job) -> bool {
    job.conclusion
        .as_ref()
        .is_some_and(|c| *c == Conclusion::Success || c.is_failure())
}

pub(super) fn analyze_signature(
    snapshot: &Snapshot,
    bisecting: &Bisecting,
    info: &SignatureInfo,
    own: &OwnBreakage,
    config: &AnalysisConfig,
) -> SignatureReport {
    analyze_class(
        snapshot,
        bisecting,
        info,
        FailureClass::Signature(own),
        config,
    )
}

/// What the bisection reads that is the same for every class of one snapshot: its merges and
/// the default branch's ancestry. Read once ([`Bisecting::of`]) for all the signatures of a
/// report, or all the tests of `report --tests`, not once per class.
pub(super) struct Bisecting {
    merges: Vec<Merge>,
    ancestry: Ancestry,
    /// Runner images' versions and when each was first seen: a placed failure whose hits all
    /// ran a version that arrived with the merge names both.
    images: super::hosts::ImageSightings,
}

impl Bisecting {
    pub(super) fn of(snapshot: &Snapshot) -> Bisecting {
        Bisecting {
            merges: merges(snapshot),
            ancestry: Ancestry::with_parents(
                &snapshot.mainline,
                &snapshot.fork_points,
                &snapshot.parents,
            ),
            images: super::hosts::ImageSightings::of(snapshot),
        }
    }
}

/// What a class's hits are.
#[derive(Debug, Clone, Copy)]
pub(super) enum FailureClass<'c> {
    /// The jobs whose classification matched the signature `info.id`; a PR's run whose matched
    /// jobs all failed only tests of its own breakage (these) is left out.
    Signature(&'c OwnBreakage),
    /// The jobs whose log names this test (its id as the runner prints it) as failed.
    Test(&'c str),
}

/// The account of one failure class; `info` gives its id, title and the `paths` that make a
/// PR related.
pub(super) fn analyze_class(
    snapshot: &Snapshot,
    bisecting: &Bisecting,
    info: &SignatureInfo,
    class: FailureClass<'_>,
    config: &AnalysisConfig,
) -> SignatureReport {
    let mut scene = Scene::new(snapshot, info, config);
    if let FailureClass::Signature(own) = class {
        scene.own = own_breakage_runs(&scene, &info.id, own);
        scene.judges_hosts = true;
    }
    let matched = matched_jobs(&scene, &info.id, class);
    let workflows = workflows_hit(&matched);
    let hits: Vec<Hit> = matched
        .counted
        .iter()
        .map(|(job, m, run)| make_hit(snapshot, job, m, run, scene.origin(run)))
        .collect();
    let left_out = left_out_runs(&scene, &workflows, &matched.raw_runs);
    let origins = hit_origins(&scene, &matched);
    let tests = tests_hit(&matched);
    let first_hit = hits.first().cloned();
    let impact = first_hit.as_ref().map(|first| {
        let history = History::new(&scene, &workflows);
        let first = (first.run_id, first.run_created_at);
        impact(&scene, &history, bisecting, &matched, &tests, first)
    });
    let (bisection, window, before, matrix, timeline) = match impact {
        Some(i) => (
            Some(i.bisection),
            Some(i.window),
            i.before,
            i.matrix,
            Some(i.timeline),
        ),
        None => (
            None,
            None,
            Before::default(),
            MatrixReading::default(),
            None,
        ),
    };
    SignatureReport {
        id: info.id.clone(),
        title: info.title.clone(),
        issue: info.issue.clone(),
        paths: info.paths.clone(),
        invalid_paths: scene.paths.invalid.clone(),
        workflows: workflow_names(snapshot, &workflows),
        runs_hit: matched.hit_runs.len() as u64,
        jobs_hit: matched.hit_jobs.len() as u64,
        jobs_unknown: window.as_ref().map_or(0, |w| w.jobs_unknown),
        impact_window: window.map(|w| w.impact_window),
        bisection,
        runs_hit_default_branch: origins.default_branch,
        runs_hit_pr: origins.pr,
        runs_hit_pr_unrelated: origins.pr_unrelated,
        pr_relevance_unknown: origins.relevance_unknown,
        runs_hit_other: origins.other,
        runs_rerun_to_green: origins.rerun_to_green,
        max_attempts: origins.max_attempts,
        runs_hit_still_failing: origins.still_failing,
        clean_runs_before: before.clean,
        runs_before_unknown: before.unknown,
        runs_hit_before: before.hit,
        before_from: before.from,
        first_hit,
        excluded_runs: left_out.excluded,
        unknown_runs: left_out.unknown,
        own_breakage_runs: scene.own.into_values().collect(),
        dimensions: matrix.dimensions,
        findings: matrix.findings,
        within: matrix.within,
        tests,
        cost: cost_of(&snapshot.jobs, &matched.hit_jobs, &config.cost),
        timeline,
        heatmaps: matrix.heatmaps,
        hits,
    }
}

/// The runs a class with `info`'s paths counts: in the survey window, no related PR's and no
/// unknown PR's (what [`analyze_class`] counts hits over).
pub(super) fn counted_runs(
    snapshot: &Snapshot,
    info: &SignatureInfo,
    config: &AnalysisConfig,
) -> BTreeSet<RunId> {
    let scene = Scene::new(snapshot, info, config);
    snapshot
        .runs
        .iter()
        .filter(|r| scene.in_window(r) && scene.related(r).is_none() && !scene.unknown_pr(r))
        .map(|r| r.id)
        .collect()
}

/// What every phase reads: the snapshot, the signature's paths, and where each run comes from.
struct Scene<'a> {
    snapshot: &'a Snapshot,
    config: &'a AnalysisConfig,
    paths: PathMatcher,
    runs: BTreeMap<RunId, &'a Run>,
    forks: ForkHeads<'a>,
    /// A signature's hit runs that are their PR's own breakage (none for a test).
    own: BTreeMap<RunId, OwnBreakageRun>,
    /// Whether the hits are weighed for one host (`hosts::host_bound`): a signature's are; a
    /// test's hits are no signature's, and reading every job once per test would cost a
    /// report of thousands of tests as many passes over the window.
    judges_hosts: bool,
}

impl<'a> Scene<'a> {
    fn new(snapshot: &'a Snapshot, info: &SignatureInfo, config: &'a AnalysisConfig) -> Scene<'a> {
        Scene {
            snapshot,
            config,
            paths: PathMatcher::new(&info.paths),
            runs: snapshot.runs.iter().map(|r| (r.id, r)).collect(),
            forks: ForkHeads::new(&snapshot.pulls),
            own: BTreeMap::new(),
            judges_hosts: false,
        }
    }

    /// A PR's run whose hits are that PR's own breakage.
    fn own_breakage(&self, run: &Run) -> bool {
        self.own.contains_key(&run.id)
    }

    fn origin(&self, run: &Run) -> RunOrigin {
        prs::resolve_origin(
            run,
            &self.snapshot.default_branch,
            &self.config.pr_conventions,
            &self.forks,
        )
    }

    /// A run of a PR that cannot be found may be a related PR's: it is no evidence either way.
    fn unknown_pr(&self, run: &Run) -> bool {
        self.origin(run) == RunOrigin::UnknownPullRequest
    }

    fn relevance(&self, run: &Run) -> Option<PrRelevance> {
        prs::pr_relevance(self.origin(run), &self.snapshot.pulls, &self.paths)
    }

    /// The changed file and the glob that make the run's PR related.
    fn related(&self, run: &Run) -> Option<(String, String)> {
        match self.relevance(run) {
            Some(PrRelevance::Related { file, glob }) => Some((file, glob)),
            _ => None,
        }
    }

    fn in_window(&self, run: &Run) -> bool {
        in_survey_window(self.snapshot, run.created_at)
    }
}

/// The runs of PRs in the window whose every job matching signature `id` failed only tests
/// that fail on that PR's own runs (`own`, the tests view's reading): the tests view says
/// those failures are the PRs' own (each broke the test on its branch), so they are no hits of
/// the signature on a PR "touching none of its paths", and no merge is placed on them.
fn own_breakage_runs(
    scene: &Scene<'_>,
    id: &SignatureId,
    own: &OwnBreakage,
) -> BTreeMap<RunId, OwnBreakageRun> {
    if own.is_empty() {
        return BTreeMap::new();
    }
    let snapshot = scene.snapshot;
    // Per run: its PR's own tests that its matched jobs failed, or `None` once one is not.
    let mut runs: BTreeMap<RunId, Option<BTreeSet<&str>>> = BTreeMap::new();
    for job in &snapshot.jobs {
        let Some(c) = snapshot.classifications.get(&job.id) else {
            continue;
        };
        if !c.matches.iter().any(|m| m.signature == *id) {
            continue;
        }
        let Some(run) = scene.runs.get(&job.run_id) else {
            continue;
        };
        let entry = runs.entry(run.id).or_insert_with(|| Some(BTreeSet::new()));
        let RunOrigin::PullRequest(pr) = scene.origin(run) else {
            *entry = None;
            continue;
        };
        let theirs = !c.tests.failed.is_empty()
            && c.tests
                .failed
                .iter()
                .all(|t| own.get(&t.id).is_some_and(|prs| prs.contains(&pr)));
        match (entry.as_mut(), theirs) {
            (Some(tests), true) => tests.extend(c.tests.failed.iter().map(|t| t.id.as_str())),
            _ => *entry = None,
        }
    }
    runs.into_iter()
        .filter_map(|(run_id, tests)| {
            let tests = tests?;
            let run = scene.runs[&run_id];
            if !scene.in_window(run) || scene.related(run).is_some() {
                return None;
            }
            let pr = scene.origin(run).pr()?;
            Some((
                run_id,
                OwnBreakageRun {
                    run_id,
                    pr,
                    pr_url: pr_url(snapshot, pr),
                    created_at: run.created_at,
                    html_url: run.html_url.clone(),
                    tests: tests.into_iter().map(str::to_string).collect(),
                },
            ))
        })
        .collect()
}

/// A hit: the job, what matched in it (a signature's match, or one made for a failed test),
/// its run.
type Matched<'a> = (&'a Job, Cow<'a, SignatureMatch>, &'a Run);

/// The job executions the signature matched.
struct MatchedJobs<'a> {
    /// Anywhere in the snapshot.
    raw: Vec<Matched<'a>>,
    raw_runs: BTreeSet<RunId>,
    /// Counted: in the survey window, related and unknown PRs left out; oldest first.
    counted: Vec<Matched<'a>>,
    hit_jobs: BTreeSet<JobId>,
    hit_runs: BTreeSet<RunId>,
}

fn matched_jobs<'a>(
    scene: &Scene<'a>,
    id: &SignatureId,
    class: FailureClass<'_>,
) -> MatchedJobs<'a> {
    let snapshot = scene.snapshot;
    let raw: Vec<Matched<'a>> = snapshot
        .jobs
        .iter()
        .filter_map(|job| {
            let run = scene.runs.get(&job.run_id)?;
            let c = snapshot.classifications.get(&job.id)?;
            let m = match class {
                FailureClass::Signature(_) => {
                    Cow::Borrowed(c.matches.iter().find(|m| m.signature == *id)?)
                }
                FailureClass::Test(test) => {
                    let t = c.tests.failed.iter().find(|t| t.id == test)?;
                    Cow::Owned(SignatureMatch {
                        signature: id.clone(),
                        line: t.line,
                        lines: vec![t.line],
                        text: t.id.clone(),
                        step: None,
                        count: 1,
                        tests: BTreeSet::from([t.id.clone()]),
                    })
                }
            };
            Some((job, m, *run))
        })
        .collect();
    let raw_runs: BTreeSet<RunId> = raw.iter().map(|(j, _, _)| j.run_id).collect();
    let mut counted: Vec<Matched<'a>> = raw
        .iter()
        .filter(|(_, _, run)| {
            scene.in_window(run)
                && scene.related(run).is_none()
                && !scene.unknown_pr(run)
                && !scene.own_breakage(run)
        })
        .cloned()
        .collect();
    counted.sort_by_key(|(j, _, r)| (r.created_at, r.id, j.run_attempt, j.id));
    let hit_jobs = counted.iter().map(|(j, _, _)| j.id).collect();
    let hit_runs = counted.iter().map(|(j, _, _)| j.run_id).collect();
    MatchedJobs {
        raw,
        raw_runs,
        counted,
        hit_jobs,
        hit_runs,
    }
}

/// The workflows where it occurs (from related hits alone when nothing else was hit).
fn workflows_hit(matched: &MatchedJobs<'_>) -> BTreeSet<WorkflowId> {
    let workflows: BTreeSet<WorkflowId> = matched
        .counted
        .iter()
        .map(|(_, _, r)| r.workflow_id)
        .collect();
    if !workflows.is_empty() {
        return workflows;
    }
    matched.raw.iter().map(|(_, _, r)| r.workflow_id).collect()
}

fn workflow_names(snapshot: &Snapshot, workflows: &BTreeSet<WorkflowId>) -> Vec<String> {
    let names: BTreeSet<String> = snapshot
        .runs
        .iter()
        .filter(|r| workflows.contains(&r.workflow_id))
        .map(|r| r.workflow_name.clone())
        .collect();
    names.into_iter().collect()
}

/// Runs listed but counted nowhere.
struct LeftOut {
    /// Runs of related PRs.
    excluded: Vec<ExcludedRun>,
    /// Runs whose PR cannot be found.
    unknown: Vec<UnknownRun>,
}

fn left_out_runs(
    scene: &Scene<'_>,
    workflows: &BTreeSet<WorkflowId>,
    raw_runs: &BTreeSet<RunId>,
) -> LeftOut {
    let snapshot = scene.snapshot;
    let of_workflows = || {
        snapshot
            .runs
            .iter()
            .filter(|r| workflows.contains(&r.workflow_id))
    };
    let mut excluded = Vec::new();
    for run in of_workflows() {
        // A related run is a PR's: its number is known.
        let (Some((file, glob)), Some(pr)) = (scene.related(run), scene.origin(run).pr()) else {
            continue;
        };
        let hit = raw_runs.contains(&run.id);
        if !hit && !scene.in_window(run) {
            continue;
        }
        excluded.push(ExcludedRun {
            run_id: run.id,
            pr,
            pr_url: pr_url(snapshot, pr),
            created_at: run.created_at,
            html_url: run.html_url.clone(),
            hit,
            reason: format!("PR #{pr} changes {file}, which matches {glob}"),
            file,
            glob,
        });
    }
    let mut unknown = Vec::new();
    for run in of_workflows().filter(|r| scene.unknown_pr(r)) {
        let hit = raw_runs.contains(&run.id);
        if !scene.in_window(run) {
            continue;
        }
        let reason = scene
            .forks
            .find(run)
            .reason()
            .unwrap_or("the PR number is unknown");
        unknown.push(UnknownRun {
            run_id: run.id,
            created_at: run.created_at,
            html_url: run.html_url.clone(),
            hit,
            head_repository: run.head_repository.clone(),
            branch: run.head_branch.clone(),
            reason: reason.to_string(),
        });
    }
    LeftOut { excluded, unknown }
}

/// Where the hit runs come from, and how they ended.
#[derive(Default)]
struct HitOrigins {
    default_branch: u64,
    pr: u64,
    pr_unrelated: u64,
    relevance_unknown: Vec<RelevanceGap>,
    other: u64,
    rerun_to_green: u64,
    max_attempts: u32,
    still_failing: u64,
}

fn hit_origins(scene: &Scene<'_>, matched: &MatchedJobs<'_>) -> HitOrigins {
    let mut origins = HitOrigins::default();
    let mut unknown: BTreeMap<(Option<PrNumber>, &'static str), u64> = BTreeMap::new();
    for run_id in &matched.hit_runs {
        let run = scene.runs[run_id];
        match scene.origin(run) {
            RunOrigin::DefaultBranch => origins.default_branch += 1,
            RunOrigin::Other => origins.other += 1,
            o @ (RunOrigin::PullRequest(_) | RunOrigin::UnknownPullRequest) => {
                origins.pr += 1;
                match scene.relevance(run) {
                    Some(PrRelevance::Unrelated) => origins.pr_unrelated += 1,
                    Some(PrRelevance::Unknown(why)) => {
                        *unknown.entry((o.pr(), why.reason())).or_default() += 1;
                    }
                    Some(PrRelevance::Related { .. }) | None => {}
                }
            }
        }
        let hit_before_latest = matched
            .counted
            .iter()
            .any(|(j, _, _)| j.run_id == *run_id && j.run_attempt < run.run_attempt);
        let green = run.conclusion == Some(Conclusion::Success);
        if green && hit_before_latest {
            origins.rerun_to_green += 1;
            origins.max_attempts = origins.max_attempts.max(run.run_attempt);
        } else if !green {
            origins.still_failing += 1;
        }
    }
    origins.relevance_unknown = unknown
        .into_iter()
        .map(|((pr, reason), runs)| RelevanceGap {
            pr,
            runs,
            reason: reason.to_string(),
        })
        .collect();
    origins
}

/// Test id → counted hits naming it.
fn tests_hit(matched: &MatchedJobs<'_>) -> BTreeMap<String, u64> {
    let mut tests = BTreeMap::new();
    for (_, m, _) in &matched.counted {
        for test in &m.tests {
            *tests.entry(test.clone()).or_default() += 1;
        }
    }
    tests
}

/// The runs of the workflows where it occurs that count (related and unknown PRs left out),
/// and which of them cannot be read.
struct History<'s, 'a> {
    scene: &'s Scene<'a>,
    workflows: &'s BTreeSet<WorkflowId>,
    jobs_by_run: BTreeMap<RunId, Vec<&'a Job>>,
}

impl<'s, 'a> History<'s, 'a> {
    fn new(scene: &'s Scene<'a>, workflows: &'s BTreeSet<WorkflowId>) -> History<'s, 'a> {
        let jobs_by_run = scene
            .snapshot
            .jobs
            .iter()
            .fold(BTreeMap::new(), |mut acc, j| {
                acc.entry(j.run_id).or_insert_with(Vec::new).push(j);
                acc
            });
        History {
            scene,
            workflows,
            jobs_by_run,
        }
    }

    /// The runs of the same workflows that count, in snapshot order.
    fn runs(&self) -> impl Iterator<Item = &'a Run> + '_ {
        self.scene.snapshot.runs.iter().filter(|r| {
            self.workflows.contains(&r.workflow_id)
                && self.scene.related(r).is_none()
                && !self.scene.unknown_pr(r)
                && !self.scene.own_breakage(r)
        })
    }

    /// A failed job whose log cannot be read, or a failed run without jobs.
    fn unreadable(&self, run: &Run) -> bool {
        let snapshot = self.scene.snapshot;
        let jobs = self
            .jobs_by_run
            .get(&run.id)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let failed_unknown = jobs
            .iter()
            .filter(|j| j.is_failed())
            .any(|j| matches!(verdict(snapshot, j.id), JobVerdict::Gap(_)));
        let failed_without_jobs = jobs.is_empty()
            && !matches!(
                run.conclusion,
                Some(Conclusion::Success | Conclusion::Skipped | Conclusion::Cancelled)
            );
        failed_unknown || failed_without_jobs
    }
}

/// Everything read once something was hit.
struct Impact {
    bisection: Bisection,
    window: WindowCounts,
    before: Before,
    matrix: MatrixReading,
    timeline: Timeline,
}

fn impact(
    scene: &Scene<'_>,
    history: &History<'_, '_>,
    bisecting: &Bisecting,
    matched: &MatchedJobs<'_>,
    tests: &BTreeMap<String, u64>,
    (first_run, first_hit_at): (RunId, Timestamp),
) -> Impact {
    let mut bisection = first_occurrence(scene, history, bisecting, &matched.raw_runs, tests);
    // The machine's failure is no merge's: never bisected onto one.
    let hit_jobs: Vec<&Job> = matched.raw.iter().map(|(job, _, _)| *job).collect();
    let machine = if let Some(mw) = super::hosts::machine_wide(scene.snapshot, &hit_jobs) {
        Some(Verdict::MachineWide {
            run: mw.run,
            pool: mw.pool,
            host: mw.host,
            jobs: mw.jobs,
        })
    } else if scene.judges_hosts {
        let signature = matched.raw.first().map(|(_, m, _)| &m.signature);
        signature
            .and_then(|s| super::hosts::host_bound(scene.snapshot, s))
            .map(|hb| Verdict::HostBound {
                host: hb.host,
                jobs_hit: hb.jobs_hit,
                jobs_total: hb.jobs_total,
                elsewhere_jobs: hb.elsewhere_jobs,
                chance: hb.chance,
                works_elsewhere: hb.works_elsewhere,
            })
    } else {
        None
    };
    if let Some(verdict) = machine {
        bisection.suspects.clear();
        bisection.lacking_top_suspect.clear();
        bisection.ruled_out_by_hit_runs.clear();
        bisection.minutes_after_top_suspect = None;
        bisection.verdict = verdict;
    }
    if let (Verdict::Placed { .. }, Some(top)) = (&bisection.verdict, bisection.suspects.first()) {
        let signature = matched.raw.first().map(|(_, m, _)| &m.signature);
        bisection.image_onset = signature.and_then(|s| {
            super::hosts::image_coinciding(
                scene.snapshot,
                &bisecting.images,
                s,
                &hit_jobs,
                top.merged_at,
            )
        });
    }
    let (starts_at, start) = match (&bisection.verdict, bisection.suspects.first()) {
        (Verdict::Placed { .. }, Some(top)) if top.merged_at <= first_hit_at => {
            (ImpactStart::Merge, top.merged_at)
        }
        _ => (ImpactStart::FirstHit, first_hit_at),
    };
    let window = window_counts(scene, history, matched, starts_at, start);
    let before = runs_before(history, &matched.raw_runs, start);
    let matrix = matrix_reading(scene, &window.impact_runs, &matched.hit_jobs);
    let drawn: Vec<&Run> = history
        .runs()
        .filter(|r| r.is_completed() || matched.hit_runs.contains(&r.id))
        .collect();
    let impact_window = &window.impact_window;
    let timeline = timeline(
        &drawn,
        &matched.hit_runs,
        scene.snapshot.since,
        scene.snapshot.until,
        Some(&bisection),
        Some((first_run, first_hit_at)),
        Some((impact_window.start, impact_window.end)),
    );
    Impact {
        bisection,
        window,
        before,
        matrix,
        timeline,
    }
}

/// First occurrence relative to merges, over the runs the impact analysis counts (related
/// PRs left out), before the survey window too. A run that cannot have been hit yet (still
/// going) or whose failed jobs cannot be read is no evidence of a clean run.
fn first_occurrence(
    scene: &Scene<'_>,
    history: &History<'_, '_>,
    bisecting: &Bisecting,
    raw_runs: &BTreeSet<RunId>,
    tests: &BTreeMap<String, u64>,
) -> Bisection {
    let snapshot = scene.snapshot;
    let bisect_runs: Vec<BisectRun> = history
        .runs()
        .filter_map(|run| {
            let hit = raw_runs.contains(&run.id);
            if !hit && (!run.is_completed() || history.unreadable(run)) {
                return None;
            }
            Some(BisectRun {
                id: run.id,
                created_at: run.created_at,
                head_sha: run.head_sha.clone(),
                placement: bisect::placement(
                    run,
                    &snapshot.default_branch,
                    &scene.config.pr_conventions,
                ),
                pr: scene.origin(run).pr(),
                branch: run.head_branch.clone(),
                hit,
            })
        })
        .collect();
    let failing_tests: Vec<String> = tests.keys().cloned().collect();
    bisect::bisect(
        &bisect_runs,
        &bisecting.merges,
        &bisecting.ancestry,
        &scene.paths.globset(),
        &failing_tests,
    )
}

/// The impact window's runs and the failed jobs in it nobody could read.
struct WindowCounts {
    impact_window: ImpactWindow,
    /// Completed (or hit) runs of the window.
    impact_runs: BTreeSet<RunId>,
    /// Failed jobs of the window whose log cannot be read: each could be a hit nobody saw.
    jobs_unknown: u64,
}

/// The impact window's runs, and the jobs they ran. A run still going may yet be hit, so it
/// counts only once it has been.
fn window_counts(
    scene: &Scene<'_>,
    history: &History<'_, '_>,
    matched: &MatchedJobs<'_>,
    starts_at: ImpactStart,
    start: Timestamp,
) -> WindowCounts {
    let snapshot = scene.snapshot;
    let end = snapshot.until.unwrap_or_else(|| {
        snapshot
            .runs
            .iter()
            .filter(|r| in_survey_window(snapshot, r.created_at))
            .map(|r| r.created_at)
            .max()
            .unwrap_or(start)
    });
    let window_runs: Vec<&Run> = history
        .runs()
        .filter(|r| r.created_at >= start && scene.in_window(r))
        .collect();
    let impact_runs: BTreeSet<RunId> = window_runs
        .iter()
        .filter(|r| r.is_completed() || matched.hit_runs.contains(&r.id))
        .map(|r| r.id)
        .collect();
    let impact_window = ImpactWindow {
        starts_at,
        start,
        end,
        runs: impact_runs.len() as u64,
        percent: percent(matched.hit_runs.len() as u64, impact_runs.len() as u64),
        runs_in_progress: (window_runs.len() - impact_runs.len()) as u64,
    };
    let jobs_unknown = snapshot
        .jobs
        .iter()
        .filter(|j| impact_runs.contains(&j.run_id) && j.is_failed())
        .filter(|j| matches!(verdict(snapshot, j.id), JobVerdict::Gap(_)))
        .count() as u64;
    WindowCounts {
        impact_window,
        impact_runs,
        jobs_unknown,
    }
}

/// The runs before the impact window: clean, hit (before the survey window), or unknown.
#[derive(Default)]
struct Before {
    clean: u64,
    unknown: u64,
    hit: u64,
    from: Option<Timestamp>,
}

fn runs_before(history: &History<'_, '_>, raw_runs: &BTreeSet<RunId>, start: Timestamp) -> Before {
    let mut before = Before::default();
    for run in history.runs().filter(|r| r.created_at < start) {
        before.from = Some(
            before
                .from
                .map_or(run.created_at, |t| t.min(run.created_at)),
        );
        if raw_runs.contains(&run.id) {
            before.hit += 1;
        } else if history.unreadable(run) {
            before.unknown += 1;
        } else {
            before.clean += 1;
        }
    }
    before
}

/// The matrix over the impact window's jobs, and what it says.
#[derive(Default)]
struct MatrixReading {
    dimensions: Vec<DimensionReport>,
    findings: Vec<DimensionFinding>,
    within: Option<WithinReport>,
    heatmaps: Vec<HeatMap>,
}

fn matrix_reading(
    scene: &Scene<'_>,
    impact_runs: &BTreeSet<RunId>,
    hit_jobs: &BTreeSet<JobId>,
) -> MatrixReading {
    let window_jobs = || {
        scene
            .snapshot
            .jobs
            .iter()
            .filter(|j| impact_runs.contains(&j.run_id) && ran(j))
    };
    let mut cache: BTreeMap<&str, Dimensions> = BTreeMap::new();
    for job in window_jobs() {
        cache
            .entry(job.name.as_str())
            .or_insert_with(|| scene.config.matrix.parse(&job.name));
    }
    let rows: Vec<(&Dimensions, bool)> = window_jobs()
        .map(|j| (&cache[j.name.as_str()], hit_jobs.contains(&j.id)))
        .collect();
    let dimensions = tabulate(&rows);
    let (findings, within) = findings(&dimensions, &rows);
    let heatmaps = heatmaps(&rows, &dimensions, &findings);
    MatrixReading {
        dimensions,
        findings,
        within,
        heatmaps,
    }
}

/// Jobs hit and jobs run per dimension and value, dimensions in reading order, values natural.
fn tabulate(rows: &[(&Dimensions, bool)]) -> Vec<DimensionReport> {
    let mut table: BTreeMap<&str, BTreeMap<&str, (u64, u64)>> = BTreeMap::new();
    for (dims, hit) in rows {
        for (dim, value) in dims.iter() {
            let cell = table.entry(dim).or_default().entry(value).or_default();
            cell.0 += u64::from(*hit);
            cell.1 += 1;
        }
    }
    let mut dimensions: Vec<DimensionReport> = table
        .into_iter()
        .map(|(name, values)| {
            let mut values: Vec<DimensionValue> = values
                .into_iter()
                .map(|(value, (jobs_hit, jobs_total))| DimensionValue {
                    value: value.to_string(),
                    jobs_hit,
                    jobs_total,
                })
                .collect();
            values.sort_by(|a, b| matrix::natural_cmp(&a.value, &b.value));
            DimensionReport {
                name: name.to_string(),
                values,
            }
        })
        .collect();
    let rank = |name: &str| {
        DIMENSION_ORDER
            .iter()
            .position(|d| *d == name)
            .unwrap_or(DIMENSION_ORDER.len())
    };
    dimensions.sort_by(|a, b| {
        rank(&a.name)
            .cmp(&rank(&b.name))
            .then_with(|| a.name.cmp(&b.name))
    });
    dimensions
}

/// What the matrix says. The strongest significant confinement (outside `job`) comes first;
/// the other dimensions are then read among the jobs it is confined to, so that a dimension
/// that only looks confined because the primary one is (GPUs that never run 3.14t jobs) reads
/// as "everywhere among those". Without a significant confinement, every dimension is read
/// over all jobs.
fn findings(
    dimensions: &[DimensionReport],
    rows: &[(&Dimensions, bool)],
) -> (Vec<DimensionFinding>, Option<WithinReport>) {
    let all: Vec<DimensionFinding> = dimensions.iter().filter_map(|d| finding(d, None)).collect();
    let primary = all
        .iter()
        .filter(|f| f.significant && f.dimension != matrix::JOB)
        .min_by(|a, b| {
            a.chance
                .total_cmp(&b.chance)
                .then_with(|| a.hit_values.len().cmp(&b.hit_values.len()))
                .then_with(|| a.dimension.cmp(&b.dimension))
        });
    let Some(primary) = primary else {
        return (all, None);
    };
    let within = format!("{}={}", primary.dimension, primary.hit_values.join(", "));
    let inside: Vec<(&Dimensions, bool)> = rows
        .iter()
        .filter(|(dims, _)| {
            dims.get(&primary.dimension)
                .is_some_and(|v| primary.hit_values.contains(v))
        })
        .copied()
        .collect();
    let inside_dims: Vec<DimensionReport> = tabulate(&inside)
        .into_iter()
        .filter(|d| d.name != primary.dimension)
        .collect();
    let mut out = vec![primary.clone()];
    out.extend(
        inside_dims
            .iter()
            .filter(|d| d.name != matrix::JOB)
            .filter_map(|d| finding(d, Some(within.clone()))),
    );
    (
        out,
        Some(WithinReport {
            label: within,
            dimensions: inside_dims,
        }),
    )
}

/// Confined or everywhere; `None` when the dimension has a single value or no hit.
pub(super) fn finding(dim: &DimensionReport, within: Option<String>) -> Option<DimensionFinding> {
    if dim.values.len() < 2 {
        return None;
    }
    let (hit, never): (Vec<&DimensionValue>, Vec<&DimensionValue>) =
        dim.values.iter().partition(|v| v.jobs_hit > 0);
    if hit.is_empty() {
        return None;
    }
    let jobs_hit: u64 = hit.iter().map(|v| v.jobs_hit).sum();
    let jobs_total: u64 = hit.iter().map(|v| v.jobs_total).sum();
    let never_jobs_total: u64 = never.iter().map(|v| v.jobs_total).sum();
    // If hits fell on jobs regardless of this dimension, the chance that none of them lands on
    // the never-hit values.
    let never_share = never_jobs_total as f64 / (jobs_total + never_jobs_total) as f64;
    let chance = (1.0 - never_share).powi(i32::try_from(jobs_hit).unwrap_or(i32::MAX));
    let confined = !never.is_empty();
    Some(DimensionFinding {
        dimension: dim.name.clone(),
        kind: if confined {
            FindingKind::Confined
        } else {
            FindingKind::Everywhere
        },
        within,
        hit_values: hit.iter().map(|v| v.value.clone()).collect(),
        jobs_hit,
        jobs_total,
        never_values: never.iter().map(|v| v.value.clone()).collect(),
        never_jobs_total,
        chance,
        significant: confined && jobs_hit >= MIN_HITS && chance < MAX_CHANCE,
    })
}

/// Pull requests merged into the default branch, with their merge commit, and the default
/// branch's commits that are no known PR's merge commit: direct pushes, for repositories that
/// push without pull requests.
fn merges(snapshot: &Snapshot) -> Vec<Merge> {
    let mut merges: Vec<Merge> = snapshot
        .pulls
        .values()
        .filter(|p| p.base_ref == snapshot.default_branch || snapshot.default_branch.is_empty())
        .filter_map(|p| {
            Some(Merge {
                pr: Some(p.number),
                title: p.title.clone(),
                merged_at: p.merged_at?,
                sha: p.merge_commit_sha.clone()?,
                files: p.files.clone(),
                url: Some(p.html_url.clone()).filter(|u| !u.is_empty()),
            })
        })
        .collect();
    // Direct pushes count as merges only in a repository that lands changes without pull
    // requests. Where PRs are merged, the default branch's listing (`/commits`, not first-parent)
    // also holds the commits of PR branches merged with a merge commit, dated when they were
    // written on the branch: taking them for pushes would name false suspects.
    if !merges.is_empty() {
        return merges;
    }
    let merged: std::collections::BTreeSet<Sha> = snapshot
        .pulls
        .values()
        .filter_map(|p| p.merge_commit_sha.clone())
        .collect();
    merges.extend(
        snapshot
            .mainline
            .iter()
            .filter(|c| !merged.contains(&c.sha))
            .map(|c| Merge {
                pr: None,
                title: c.title.clone(),
                merged_at: c.committed_at,
                sha: c.sha.clone(),
                files: c.files.clone(),
                url: snapshot.repo.as_ref().map(|r| {
                    format!(
                        "https://github.com/{}/{}/commit/{}",
                        r.owner, r.name, c.sha.0
                    )
                }),
            }),
    );
    merges
}

fn pr_url(snapshot: &Snapshot, pr: PrNumber) -> Option<String> {
    snapshot
        .pulls
        .get(&pr)
        .map(|p| p.html_url.clone())
        .filter(|u| !u.is_empty())
}

fn make_hit(
    snapshot: &Snapshot,
    job: &Job,
    m: &SignatureMatch,
    run: &Run,
    origin: RunOrigin,
) -> Hit {
    let pr = origin.pr();
    Hit {
        run_id: run.id,
        attempt: job.run_attempt,
        job_id: job.id,
        job: job.name.clone(),
        created_at: job.created_at,
        run_created_at: run.created_at,
        workflow: run.workflow_name.clone(),
        event: run.event.clone(),
        branch: run.head_branch.clone(),
        origin: match origin {
            RunOrigin::DefaultBranch => HitOrigin::DefaultBranch,
            RunOrigin::PullRequest(_) => HitOrigin::PullRequest,
            RunOrigin::UnknownPullRequest => HitOrigin::UnknownPullRequest,
            RunOrigin::Other => HitOrigin::Other,
        },
        pr,
        pr_url: pr.and_then(|n| pr_url(snapshot, n)),
        html_url: job.html_url.clone(),
        run_url: run.html_url.clone(),
        run_attempts: run.run_attempt,
        run_conclusion: run.conclusion.clone(),
        line: m.text.clone(),
        tests: m.tests.iter().cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MainlineCommit, PullRequest};

    fn commit(n: u8, title: &str) -> MainlineCommit {
        MainlineCommit {
            sha: Sha(format!("{n:040x}")),
            committed_at: format!("2026-07-0{n}T00:00:00Z").parse().unwrap(),
            title: title.to_string(),
            files: None,
        }
    }

    #[test]
    fn direct_pushes_are_merges_only_where_no_pr_was_merged() {
        let mut snapshot = Snapshot {
            default_branch: "main".into(),
            mainline: vec![
                commit(1, "push one"),
                commit(2, "Merge PR #7"),
                commit(3, "wip on a branch"),
            ],
            ..Snapshot::default()
        };
        let pushes: Vec<Option<PrNumber>> = merges(&snapshot).iter().map(|m| m.pr).collect();
        assert_eq!(
            pushes,
            vec![None, None, None],
            "no PRs: every commit is a push"
        );

        // With a merged PR, commits that are not a PR's merge commit may be PR-branch commits
        // (the listing is not first-parent): they are not taken for pushes.
        snapshot.pulls.insert(
            PrNumber(7),
            PullRequest {
                number: PrNumber(7),
                title: "Feature".into(),
                state: "closed".into(),
                base_ref: "main".into(),
                head_ref: "feature".into(),
                merged_at: Some("2026-07-02T00:00:00Z".parse().unwrap()),
                merge_commit_sha: Some(commit(2, "").sha),
                html_url: String::new(),
                files: None,
                head: None,
            },
        );
        let merges = merges(&snapshot);
        assert_eq!(merges.len(), 1);
        assert_eq!(merges[0].pr, Some(PrNumber(7)));
    }
}
