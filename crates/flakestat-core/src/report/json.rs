//! JSON output: a versioned contract. The wire types below are separate from the analysis'
//! structs so that refactoring the analysis never changes the output by accident; a change to
//! them that removes or renames a field needs a new `SCHEMA_VERSION`. Maps are `BTreeMap`s and
//! lists keep the analysis' deterministic order, so the same data gives byte-identical output.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::analysis::{self, ReportData};
use crate::report::View;

/// The `schema` field of every JSON report.
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON report's types (schema 1). Timestamps are RFC 3339 in UTC.
pub mod wire {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};

    use crate::model::{PrNumber, Timestamp};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Report {
        pub schema: u32,
        /// `OWNER/NAME`.
        pub repo: Option<String>,
        pub default_branch: String,
        pub since: Option<Timestamp>,
        pub until: Option<Timestamp>,
        /// Where what the store has surveyed of the repository ends (the end of its latest run
        /// listing); `null` when no listing finished.
        #[serde(default)]
        pub surveyed_to: Option<Timestamp>,
        /// The signature asked for with `--signature`, when one was.
        pub focus: Option<String>,
        /// What the store does not hold yet; the figures leave it out.
        #[serde(flatten)]
        pub completeness: Completeness,
        pub runs_total: u64,
        pub runs_failed: u64,
        pub runs_rerun: u64,
        pub runs_failed_classified: u64,
        pub jobs_failed: u64,
        pub jobs_classified: u64,
        /// Failed jobs no signature explains: `jobs_log_unreadable` of them had no log to
        /// read, the others' logs matched no signature (`unclassified` groups those).
        pub jobs_unclassified: u64,
        /// Of `jobs_unclassified`, those with no readable log (the sum of `logs_unknown`). Added
        /// within schema 1.
        #[serde(default)]
        pub jobs_log_unreadable: u64,
        /// Failed jobs with no readable log, by reason.
        pub logs_unknown: Vec<LogGap>,
        /// Ranked by runs hit, ties by id.
        pub signatures: Vec<Signature>,
        pub unclassified: Vec<UnclassifiedGroup>,
        /// Runner time of the window's failed jobs and of every later attempt of its runs.
        #[serde(default)]
        pub cost: Cost,
        /// Over several repositories (`--org`, several `--repo`): the owner named with `--org`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub owner: Option<String>,
        /// Over several repositories: each repository's own report (`repo` is then `null` here
        /// and every figure above is the sum over these).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub repos: Vec<Report>,
        /// Over several repositories: those asked for with no run in the window, left out.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub repos_without_runs: Vec<String>,
        /// Machine- and job-wide incidents of the window (a runner pool whose every job of a
        /// run failed at once; a job failing far more tests than it usually does).
        #[serde(default)]
        pub incidents: Vec<crate::report::incidents::IncidentWire>,
        /// Hosts on the drain list (`report --hosts`' `drain`), when any.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub drain: Vec<crate::report::hosts::DrainWire>,
        /// Failures that began with an image version (`report --hosts`' `image_onsets`), when
        /// any.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub image_onsets: Vec<crate::report::hosts::ImageOnsetWire>,
    }

    /// A signature's hits in one repository (a report over several repositories).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct SignatureRepo {
        /// `OWNER/NAME`.
        pub repo: String,
        pub runs_hit: u64,
        pub jobs_hit: u64,
        /// Runs of its impact window in that repository.
        pub runs: u64,
        pub percent: Option<f64>,
        /// Runs of the survey window in that repository.
        pub runs_total: u64,
        pub runs_rerun_to_green: u64,
        pub first_hit_at: Option<Timestamp>,
        /// Dimension → value → jobs hit and jobs run there, in that repository.
        pub dimensions: BTreeMap<String, BTreeMap<String, DimensionCell>>,
    }

    /// Runner time, in minutes (two decimals).
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct Cost {
        /// Failed job executions.
        pub job_minutes: f64,
        /// Every job execution of the later attempts of those runs.
        pub rerun_minutes: f64,
        /// Of those, on runners whose labels match `[cost] gpu_labels`.
        pub gpu_job_minutes: f64,
        pub gpu_rerun_minutes: f64,
        /// Job executions without a start or completion time: not in the minutes.
        pub jobs_unknown: u64,
        /// Runner labels (joined with `, `) → minutes.
        pub by_label: BTreeMap<String, LabelCost>,
        /// At the `[cost]` prices; `null` when none is configured.
        pub price: Option<f64>,
    }

    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct LabelCost {
        pub job_minutes: f64,
        pub rerun_minutes: f64,
        pub gpu: bool,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Timeline {
        pub days: Vec<TimelineDay>,
        pub markers: Vec<Marker>,
        pub impact_start: Option<Timestamp>,
        pub impact_end: Option<Timestamp>,
    }

    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct TimelineDay {
        /// `YYYY-MM-DD`, UTC.
        pub day: String,
        pub runs: u64,
        pub runs_hit: u64,
    }

    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Marker {
        /// `merge` (the placed merge), `suspect` or `first_hit`.
        pub kind: String,
        pub at: Timestamp,
        pub label: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct HeatMap {
        pub rows: String,
        pub columns: String,
        pub row_values: Vec<String>,
        pub column_values: Vec<String>,
        /// `cells[row][column]`; `jobs_total` 0 where no job ran.
        pub cells: Vec<Vec<DimensionCell>>,
    }

    /// Always present, in every report and nightly document: `complete` is `false` when a
    /// survey stopped before the store held the whole window.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Completeness {
        pub complete: bool,
        /// Runs of the window listed whose jobs are not stored yet.
        pub runs_pending: u64,
        /// Failed jobs of the window whose log is not fetched yet.
        pub logs_pending: u64,
        /// Parts of the window not listed in full, by start.
        pub windows_pending: Vec<Span>,
        /// Runs of the window left out of every figure (pending jobs, pending logs, not listed
        /// windows).
        pub runs_left_out: u64,
    }

    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Span {
        pub since: Timestamp,
        pub until: Timestamp,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct LogGap {
        /// `expired`, `missing`, `pending`, `unavailable`, `mismatched`, `not_classified` or
        /// `not_recorded`.
        pub reason: String,
        pub description: String,
        pub jobs: u64,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Signature {
        pub id: String,
        pub title: String,
        pub issue: Option<String>,
        pub paths: Vec<String>,
        pub invalid_paths: Vec<String>,
        pub workflows: Vec<String>,
        pub runs_hit: u64,
        pub jobs_hit: u64,
        /// Failed jobs in the impact window with no readable log: possible hits, unseen.
        pub jobs_unknown: u64,
        /// `null` when nothing was hit.
        pub impact_window: Option<ImpactWindow>,
        pub runs_hit_default_branch: u64,
        pub runs_hit_pr: u64,
        pub runs_hit_pr_unrelated: u64,
        pub pr_relevance_unknown: Vec<RelevanceGap>,
        pub runs_hit_other: u64,
        pub runs_rerun_to_green: u64,
        /// The most attempts a run re-run to green needed; 0 when none was.
        pub max_attempts: u32,
        pub runs_hit_still_failing: u64,
        pub clean_runs_before: u64,
        pub runs_before_unknown: u64,
        pub runs_hit_before: u64,
        pub before_from: Option<Timestamp>,
        pub first_hit: Option<Hit>,
        /// How the first hit stands relative to merges: the evidence and how strong it is;
        /// `null` when nothing was hit.
        #[serde(default)]
        pub bisection: Option<Bisection>,
        /// Merges that may have introduced it, best first (empty unless `bisection.verdict` is
        /// `placed`, or `no_merge_in_every_hit_run`, where none is blamed).
        #[serde(default)]
        pub suspects: Vec<Suspect>,
        pub excluded_runs: Vec<ExcludedRun>,
        /// Runs of PRs that cannot be found (fork runs no listed PR heads): counted nowhere.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub unknown_runs: Vec<UnknownRun>,
        /// Hit runs of PRs whose every hit failed only tests that fail on PRs' own runs (the
        /// tests view's `on PRs #A, #B (their own runs)`): that PR's own breakage, counted
        /// nowhere.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub own_breakage_runs: Vec<OwnBreakageRun>,
        /// Dimension → value → jobs hit and jobs run in the impact window.
        pub dimensions: BTreeMap<String, BTreeMap<String, DimensionCell>>,
        pub findings: Vec<Finding>,
        /// The matrix among the jobs of the primary confinement, when there is one.
        pub within: Option<Within>,
        /// Test id → hits.
        pub tests: BTreeMap<String, u64>,
        /// Hits whose log names no failing test (hung, or interrupted before the runner's
        /// summary): `tests` sums to the hits less these, when each names one.
        #[serde(default)]
        pub jobs_naming_no_test: u64,
        pub hits: Vec<Hit>,
        /// Runner time the hits cost over the impact window.
        #[serde(default)]
        pub cost: Cost,
        /// Runs and runs hit per day; `null` when nothing was hit.
        #[serde(default)]
        pub timeline: Option<Timeline>,
        #[serde(default)]
        pub heatmaps: Vec<HeatMap>,
        /// Over several repositories: the repositories it hits, most runs hit first.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub repos: Vec<SignatureRepo>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Bisection {
        /// `placed`, `present_before_window`, `too_rare_to_place`, `not_enough_hits`,
        /// `no_merged_prs_known`, `no_merge_before_first_hit`, `every_merge_ruled_out`,
        /// `no_merge_in_every_hit_run` or `no_hits`.
        pub verdict: String,
        /// The verdict's reason, in words.
        #[serde(default)]
        pub reason: String,
        /// The first hit's run (before the survey window too) and when it was created.
        pub first_hit_run_id: Option<u64>,
        pub first_hit_at: Option<Timestamp>,
        /// The top suspect's PR when placed (`null` when it is a direct push: see `suspects`).
        pub pr: Option<PrNumber>,
        /// Minutes from the top suspect's merge to the first hit.
        pub minutes_after_merge: Option<i64>,
        /// Hits and runs from the first hit on: the hit rate `p` the likelihoods use.
        pub hits_after: u64,
        pub runs_after: u64,
        pub hit_rate: Option<f64>,
        /// Clean runs before the first hit.
        pub clean_runs_before_first_hit: u64,
        /// The clean runs the verdict rests on: before the top suspect when placed, before the
        /// first hit otherwise.
        pub clean_runs_before: Option<u64>,
        /// Had the flake been there, the probability of seeing no hit in `clean_runs_before`
        /// runs: `(1 − p)^clean_runs_before`.
        pub probability: Option<f64>,
        /// With `no_merge_in_every_hit_run`: the hit runs that lack the best-fitting merge
        /// (`suspects[0]`, not blamed), oldest first, and what each tests.
        #[serde(default)]
        pub lacking_top_suspect: Vec<LackingRun>,
        /// With `host_bound`: the one host every hit ran on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub host: Option<String>,
        /// With `placed`: a runner image version every hit ran on that arrived with the merge
        /// (the runs cannot tell which of the two brought the failure), as `report --hosts`'
        /// `image_onsets` give it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub image_onset: Option<crate::report::hosts::ImageOnsetWire>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct LackingRun {
        pub run_id: u64,
        pub created_at: Timestamp,
        pub pr: Option<PrNumber>,
        pub branch: Option<String>,
        pub head_sha: String,
        /// The run's merge base with the default branch; `null` when unknown.
        pub merge_base: Option<String>,
        /// That commit's date; `null` when unknown.
        pub merge_base_at: Option<Timestamp>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Suspect {
        /// `null` for a direct push to the default branch (no pull request): `sha` names it.
        pub pr: Option<PrNumber>,
        /// The PR's title, or the commit message's first line for a direct push.
        pub title: String,
        /// The PR's page, or the commit's for a direct push.
        pub url: Option<String>,
        /// When the PR merged, or the commit's date for a direct push.
        pub merged_at: Timestamp,
        /// The merge commit, or the pushed commit.
        pub sha: String,
        /// Changed files matching the signature's `paths`; `null` when the files are unknown.
        pub touches_paths: Option<bool>,
        /// Changed a file holding one of the failing tests; `null` when unknown.
        pub touches_tests: Option<bool>,
        /// Clean runs before the first hit that included this merge.
        pub clean_runs_after: u64,
        /// Clean runs before the first hit whose inclusion of it is unknown (not counted).
        pub unknown_runs_after: u64,
        /// `(1 − p)^clean_runs_after`.
        pub likelihood: f64,
        /// Its share of the evidence (likelihood × prior weight of touching paths or tests).
        pub posterior: f64,
        /// Hit runs (the first hit and each after it, oldest first) that included it.
        #[serde(default)]
        pub hit_runs_containing: Vec<u64>,
        /// Hit runs that did not include it (empty when placed: a merge some hit run lacks is
        /// ruled out as long as another is in every hit run).
        #[serde(default)]
        pub hit_runs_lacking: Vec<u64>,
        /// Hit runs whose inclusion of it is unknown (fork point not known).
        #[serde(default)]
        pub hit_runs_unknown: Vec<u64>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ImpactWindow {
        /// `first_hit`, or `merge` when the bisection names the merge that introduced it
        /// (`start` is then that merge's `merged_at`).
        pub starts_at: String,
        pub start: Timestamp,
        pub end: Timestamp,
        pub runs: u64,
        pub percent: Option<f64>,
        /// Runs not completed and not hit yet, left out of `runs`.
        pub runs_in_progress: u64,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct RelevanceGap {
        pub pr: Option<PrNumber>,
        pub runs: u64,
        pub reason: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Hit {
        pub run_id: u64,
        pub attempt: u32,
        pub job_id: u64,
        pub job: String,
        pub created_at: Timestamp,
        pub run_created_at: Timestamp,
        pub workflow: String,
        pub event: String,
        pub branch: Option<String>,
        /// `default_branch`, `pull_request`, `unknown_pull_request` or `other`.
        pub origin: String,
        pub pr: Option<PrNumber>,
        pub html_url: Option<String>,
        pub run_url: String,
        pub run_attempts: u32,
        pub run_conclusion: Option<String>,
        pub line: String,
        pub tests: Vec<String>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ExcludedRun {
        pub run_id: u64,
        pub pr: PrNumber,
        pub reason: String,
        pub created_at: Timestamp,
        pub hit: bool,
        pub file: String,
        pub glob: String,
        pub html_url: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct OwnBreakageRun {
        pub run_id: u64,
        pub pr: PrNumber,
        pub created_at: Timestamp,
        pub html_url: String,
        /// Its matched jobs' failed tests, each failing on PRs' own runs only.
        pub tests: Vec<String>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct UnknownRun {
        pub run_id: u64,
        pub reason: String,
        pub created_at: Timestamp,
        pub hit: bool,
        pub head_repository: Option<String>,
        pub branch: Option<String>,
        pub html_url: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Within {
        /// `dimension=value, …`.
        pub label: String,
        pub dimensions: BTreeMap<String, BTreeMap<String, DimensionCell>>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct DimensionCell {
        pub jobs_hit: u64,
        pub jobs_total: u64,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Finding {
        pub dimension: String,
        /// `confined` or `everywhere`.
        pub kind: String,
        /// `dimension=value, …` when read among the jobs of the primary finding.
        pub within: Option<String>,
        pub hit_values: Vec<String>,
        pub jobs_hit: u64,
        pub jobs_total: u64,
        pub never_values: Vec<String>,
        pub never_jobs_total: u64,
        /// The chance that no hit lands on `never_values` if the dimension did not matter.
        pub chance: f64,
        /// Confined, with enough hits and a small enough chance to be worth saying.
        pub significant: bool,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct UnclassifiedGroup {
        pub key: String,
        pub lines: Vec<String>,
        pub jobs: u64,
        pub runs: u64,
        pub job_names: Vec<String>,
        pub first_seen: Timestamp,
        pub last_seen: Timestamp,
        pub examples: Vec<JobRef>,
        /// The tests the group's jobs' logs name as failed: test id → jobs naming it (added
        /// within schema 1: absent from older documents).
        #[serde(default)]
        pub tests: BTreeMap<String, u64>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct JobRef {
        pub run_id: u64,
        pub attempt: u32,
        pub job_id: u64,
        pub job: String,
        pub created_at: Timestamp,
        pub html_url: Option<String>,
    }
}

/// A snake_case name of a unit enum, as serde writes it.
fn name_of<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

fn hit(h: &analysis::Hit) -> wire::Hit {
    wire::Hit {
        run_id: h.run_id.0,
        attempt: h.attempt,
        job_id: h.job_id.0,
        job: h.job.clone(),
        created_at: h.created_at,
        run_created_at: h.run_created_at,
        workflow: h.workflow.clone(),
        event: h.event.to_string(),
        branch: h.branch.clone(),
        origin: name_of(&h.origin),
        pr: h.pr,
        html_url: h.html_url.clone(),
        run_url: h.run_url.clone(),
        run_attempts: h.run_attempts,
        run_conclusion: h.run_conclusion.as_ref().map(ToString::to_string),
        line: h.line.clone(),
        tests: h.tests.clone(),
    }
}

type WireDimensions = BTreeMap<String, BTreeMap<String, wire::DimensionCell>>;

fn dimensions(dims: &[analysis::DimensionReport]) -> WireDimensions {
    dims.iter()
        .map(|d| {
            (
                d.name.clone(),
                d.values
                    .iter()
                    .map(|v| {
                        (
                            v.value.clone(),
                            wire::DimensionCell {
                                jobs_hit: v.jobs_hit,
                                jobs_total: v.jobs_total,
                            },
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

fn bisection(b: &analysis::bisect::Bisection) -> wire::Bisection {
    use analysis::bisect::Verdict;
    let (pr, clean_runs_before, probability) = match &b.verdict {
        Verdict::Placed {
            pr,
            clean_runs_before,
            probability,
        } => (*pr, Some(*clean_runs_before), Some(*probability)),
        Verdict::PresentBeforeWindow {
            clean_runs_before,
            probability,
        }
        | Verdict::TooRareToPlace {
            clean_runs_before,
            probability,
        } => (None, Some(*clean_runs_before), Some(*probability)),
        Verdict::NoHits
        | Verdict::NotEnoughHits { .. }
        | Verdict::NoMergedPrsKnown
        | Verdict::NoMergeBeforeFirstHit
        | Verdict::EveryMergeRuledOut
        | Verdict::NoMergeInEveryHitRun
        | Verdict::MachineWide { .. }
        | Verdict::HostBound { .. } => (None, None, None),
    };
    wire::Bisection {
        verdict: b.verdict.name(),
        reason: b.verdict.reason().to_string(),
        first_hit_run_id: b.first_hit.map(|r| r.0),
        first_hit_at: b.first_hit_at,
        host: match &b.verdict {
            Verdict::HostBound { host, .. } => Some(host.clone()),
            _ => None,
        },
        pr,
        minutes_after_merge: b.minutes_after_top_suspect,
        hits_after: b.hits_after,
        runs_after: b.runs_after,
        hit_rate: b.hit_rate(),
        clean_runs_before_first_hit: b.clean_runs_before_first_hit,
        clean_runs_before,
        probability,
        lacking_top_suspect: b
            .lacking_top_suspect
            .iter()
            .map(|r| wire::LackingRun {
                run_id: r.run_id.0,
                created_at: r.created_at,
                pr: r.pr,
                branch: r.branch.clone(),
                head_sha: r.head_sha.0.clone(),
                merge_base: r.merge_base.as_ref().map(|s| s.0.clone()),
                merge_base_at: r.merge_base_at,
            })
            .collect(),
        image_onset: b.image_onset.as_ref().map(crate::report::hosts::onset_wire),
    }
}

fn signature(s: &analysis::SignatureReport) -> wire::Signature {
    wire::Signature {
        id: s.id.0.clone(),
        title: s.title.clone(),
        issue: s.issue.clone(),
        paths: s.paths.clone(),
        invalid_paths: s.invalid_paths.clone(),
        workflows: s.workflows.clone(),
        runs_hit: s.runs_hit,
        jobs_hit: s.jobs_hit,
        jobs_unknown: s.jobs_unknown,
        impact_window: s.impact_window.as_ref().map(impact_window),
        runs_hit_default_branch: s.runs_hit_default_branch,
        runs_hit_pr: s.runs_hit_pr,
        runs_hit_pr_unrelated: s.runs_hit_pr_unrelated,
        pr_relevance_unknown: s
            .pr_relevance_unknown
            .iter()
            .map(|g| wire::RelevanceGap {
                pr: g.pr,
                runs: g.runs,
                reason: g.reason.clone(),
            })
            .collect(),
        runs_hit_other: s.runs_hit_other,
        runs_rerun_to_green: s.runs_rerun_to_green,
        max_attempts: s.max_attempts,
        runs_hit_still_failing: s.runs_hit_still_failing,
        clean_runs_before: s.clean_runs_before,
        runs_before_unknown: s.runs_before_unknown,
        runs_hit_before: s.runs_hit_before,
        before_from: s.before_from,
        first_hit: s.first_hit.as_ref().map(hit),
        bisection: s.bisection.as_ref().map(bisection),
        suspects: s
            .bisection
            .iter()
            .flat_map(|b| &b.suspects)
            .map(suspect)
            .collect(),
        excluded_runs: s.excluded_runs.iter().map(excluded_run).collect(),
        own_breakage_runs: s
            .own_breakage_runs
            .iter()
            .map(|r| wire::OwnBreakageRun {
                run_id: r.run_id.0,
                pr: r.pr,
                created_at: r.created_at,
                html_url: r.html_url.clone(),
                tests: r.tests.clone(),
            })
            .collect(),
        unknown_runs: s
            .unknown_runs
            .iter()
            .map(|r| wire::UnknownRun {
                run_id: r.run_id.0,
                reason: r.reason.clone(),
                created_at: r.created_at,
                hit: r.hit,
                head_repository: r.head_repository.clone(),
                branch: r.branch.clone(),
                html_url: r.html_url.clone(),
            })
            .collect(),
        dimensions: dimensions(&s.dimensions),
        within: s.within.as_ref().map(|w| wire::Within {
            label: w.label.clone(),
            dimensions: dimensions(&w.dimensions),
        }),
        findings: s.findings.iter().map(finding).collect(),
        tests: s.tests.clone(),
        jobs_naming_no_test: s.hits.iter().filter(|h| h.tests.is_empty()).count() as u64,
        hits: s.hits.iter().map(hit).collect(),
        cost: cost(&s.cost),
        timeline: s.timeline.as_ref().map(timeline),
        heatmaps: s.heatmaps.iter().map(heatmap).collect(),
        repos: Vec::new(),
    }
}

fn impact_window(w: &analysis::ImpactWindow) -> wire::ImpactWindow {
    wire::ImpactWindow {
        starts_at: name_of(&w.starts_at),
        start: w.start,
        end: w.end,
        runs: w.runs,
        percent: w.percent,
        runs_in_progress: w.runs_in_progress,
    }
}

fn suspect(x: &analysis::bisect::Suspect) -> wire::Suspect {
    wire::Suspect {
        pr: x.pr,
        title: x.title.clone(),
        url: x.url.clone(),
        merged_at: x.merged_at,
        sha: x.sha.0.clone(),
        touches_paths: x.touches_paths,
        touches_tests: x.touches_tests,
        clean_runs_after: x.clean_runs_after,
        unknown_runs_after: x.unknown_runs_after,
        likelihood: x.likelihood,
        posterior: x.posterior,
        hit_runs_containing: x.hit_runs_containing.iter().map(|r| r.0).collect(),
        hit_runs_lacking: x.hit_runs_lacking.iter().map(|r| r.0).collect(),
        hit_runs_unknown: x.hit_runs_unknown.iter().map(|r| r.0).collect(),
    }
}

fn excluded_run(r: &analysis::ExcludedRun) -> wire::ExcludedRun {
    wire::ExcludedRun {
        run_id: r.run_id.0,
        pr: r.pr,
        reason: r.reason.clone(),
        created_at: r.created_at,
        hit: r.hit,
        file: r.file.clone(),
        glob: r.glob.clone(),
        html_url: r.html_url.clone(),
    }
}

fn finding(f: &analysis::DimensionFinding) -> wire::Finding {
    wire::Finding {
        dimension: f.dimension.clone(),
        kind: name_of(&f.kind),
        within: f.within.clone(),
        hit_values: f.hit_values.clone(),
        jobs_hit: f.jobs_hit,
        jobs_total: f.jobs_total,
        never_values: f.never_values.clone(),
        never_jobs_total: f.never_jobs_total,
        chance: f.chance,
        significant: f.significant,
    }
}

fn timeline(t: &analysis::timeline::Timeline) -> wire::Timeline {
    wire::Timeline {
        days: t
            .days
            .iter()
            .map(|d| wire::TimelineDay {
                day: d.day.format("%Y-%m-%d").to_string(),
                runs: d.runs,
                runs_hit: d.runs_hit,
            })
            .collect(),
        markers: t
            .markers
            .iter()
            .map(|m| wire::Marker {
                kind: name_of(&m.kind),
                at: m.at,
                label: m.label.clone(),
            })
            .collect(),
        impact_start: t.impact_start,
        impact_end: t.impact_end,
    }
}

fn heatmap(h: &analysis::heatmap::HeatMap) -> wire::HeatMap {
    wire::HeatMap {
        rows: h.rows.clone(),
        columns: h.columns.clone(),
        row_values: h.row_values.clone(),
        column_values: h.column_values.clone(),
        cells: h
            .cells
            .iter()
            .map(|row| {
                row.iter()
                    .map(|c| wire::DimensionCell {
                        jobs_hit: c.jobs_hit,
                        jobs_total: c.jobs_total,
                    })
                    .collect()
            })
            .collect(),
    }
}

/// Seconds as minutes with two decimals.
pub fn minutes(seconds: u64) -> f64 {
    (seconds as f64 / 60.0 * 100.0).round() / 100.0
}

fn cost(c: &analysis::cost::Cost) -> wire::Cost {
    wire::Cost {
        job_minutes: minutes(c.job_seconds),
        rerun_minutes: minutes(c.rerun_seconds),
        gpu_job_minutes: minutes(c.gpu_job_seconds),
        gpu_rerun_minutes: minutes(c.gpu_rerun_seconds),
        jobs_unknown: c.jobs_unknown,
        by_label: c
            .by_label
            .iter()
            .map(|(label, l)| {
                (
                    label.clone(),
                    wire::LabelCost {
                        job_minutes: minutes(l.job_seconds),
                        rerun_minutes: minutes(l.rerun_seconds),
                        gpu: l.gpu,
                    },
                )
            })
            .collect(),
        price: c.price,
    }
}

/// The wire form of `data`.
/// The completeness fields every JSON document carries.
pub(crate) fn completeness(c: &analysis::Completeness) -> wire::Completeness {
    wire::Completeness {
        complete: c.is_complete(),
        runs_pending: c.runs_pending,
        logs_pending: c.logs_pending,
        windows_pending: c
            .unlisted
            .iter()
            .map(|&(since, until)| wire::Span { since, until })
            .collect(),
        runs_left_out: c.runs_left_out,
    }
}

/// The document for `view` (a `&ReportData`, a `&OrgReport`, or a [`View`]): one
/// repository's, or several repositories' in the same shape with their parts added.
pub fn to_wire<'a>(view: impl Into<View<'a>>) -> wire::Report {
    match view.into() {
        View::Repo(data) => repo_to_wire(data),
        View::Org(org) => org_to_wire(org),
    }
}

/// Renders `view`'s document.
pub fn render(view: View<'_>, out: &mut dyn Write) -> io::Result<()> {
    crate::report::sanitize::write_json(out, &to_wire(view))
}

fn repo_to_wire(data: &ReportData) -> wire::Report {
    wire::Report {
        schema: SCHEMA_VERSION,
        repo: data.repo.as_ref().map(|r| r.to_string()),
        default_branch: data.default_branch.clone(),
        since: data.since,
        until: data.until,
        surveyed_to: data.surveyed_to,
        focus: data.focus.as_ref().map(|f| f.0.clone()),
        incidents: crate::report::incidents::to_wire(&data.incidents),
        drain: data
            .machines
            .drain
            .iter()
            .map(crate::report::hosts::drain_wire)
            .collect(),
        image_onsets: data
            .machines
            .image_onsets
            .iter()
            .map(crate::report::hosts::onset_wire)
            .collect(),
        completeness: completeness(&data.completeness),
        runs_total: data.runs_total,
        runs_failed: data.runs_failed,
        runs_rerun: data.runs_rerun,
        runs_failed_classified: data.runs_failed_classified,
        jobs_failed: data.jobs_failed,
        jobs_classified: data.jobs_classified,
        jobs_unclassified: data.jobs_unclassified,
        jobs_log_unreadable: data.jobs_log_unreadable(),
        logs_unknown: data
            .logs_unknown
            .iter()
            .map(|g| wire::LogGap {
                reason: name_of(&g.reason),
                description: g.reason.describe().to_string(),
                jobs: g.jobs,
            })
            .collect(),
        signatures: data.signatures.iter().map(signature).collect(),
        unclassified: data.unclassified.iter().map(unclassified_group).collect(),
        cost: cost(&data.cost),
        owner: None,
        repos: Vec::new(),
        repos_without_runs: Vec::new(),
    }
}

/// An unclassified group as the report's and nightly's JSON write it.
pub(crate) fn unclassified_group(g: &analysis::UnclassifiedGroup) -> wire::UnclassifiedGroup {
    wire::UnclassifiedGroup {
        key: g.key.clone(),
        lines: g.lines.clone(),
        jobs: g.jobs,
        runs: g.runs,
        job_names: g.job_names.clone(),
        first_seen: g.first_seen,
        last_seen: g.last_seen,
        examples: g
            .examples
            .iter()
            .map(|e| wire::JobRef {
                run_id: e.run_id.0,
                attempt: e.attempt,
                job_id: e.job_id.0,
                job: e.job.clone(),
                created_at: e.created_at,
                html_url: e.html_url.clone(),
            })
            .collect(),
        tests: g.tests.clone(),
    }
}

/// The document over several repositories: the combined figures in the single-repository
/// shape, with `owner`, `repos` and per signature `repos` added (schema 1).
fn org_to_wire(org: &analysis::org::OrgReport) -> wire::Report {
    let mut doc = repo_to_wire(&org.combined);
    doc.owner = org.owner.clone();
    doc.repos = org.repos.iter().map(repo_to_wire).collect();
    doc.repos_without_runs = org.without_runs.iter().map(|r| r.to_string()).collect();
    for (sig, across) in doc.signatures.iter_mut().zip(&org.signatures) {
        sig.repos = across
            .repos
            .iter()
            .map(|h| {
                let dims = org
                    .repos
                    .iter()
                    .find(|r| r.repo.as_ref() == Some(&h.repo))
                    .and_then(|r| r.signatures.iter().find(|s| s.id == across.id))
                    .map(|s| dimensions(&s.dimensions))
                    .unwrap_or_default();
                wire::SignatureRepo {
                    repo: h.repo.to_string(),
                    runs_hit: h.runs_hit,
                    jobs_hit: h.jobs_hit,
                    runs: h.runs,
                    percent: h.percent,
                    runs_total: h.runs_total,
                    runs_rerun_to_green: h.runs_rerun_to_green,
                    first_hit_at: h.first_hit,
                    dimensions: dims,
                }
            })
            .collect();
    }
    doc
}
