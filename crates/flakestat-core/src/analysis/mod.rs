//! Pure functions over a `Snapshot`: impact, re-runs, PR relevance, where in the job matrix, and
//! the failures no signature explains. No I/O, no clock: everything comes in as arguments, one
//! `ReportData` goes out, and every figure in it is counted from the snapshot. What cannot be
//! known (an expired log, a PR whose files were not fetched) is carried as unknown with its
//! reason, never guessed.
//!
//! Windows: the survey window is `[since, until)` of run creation times. A signature's *impact
//! window* starts at the merge that introduced it when `bisect` can name one (with the evidence),
//! else at its first counted hit, and ends where the survey ends.

pub mod audit;
pub mod bisect;
pub mod cost;
pub mod export;
pub mod gap;
pub mod green;
pub mod heatmap;
pub mod hidden;
pub mod hosts;
pub mod incidents;
pub mod nightly;
pub mod org;
pub mod pr;
pub mod prs;
mod signature;
pub mod suggest;
pub mod tests;
pub mod timeline;
mod unclassified;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::matrix::MatrixParser;
use crate::model::{
    Conclusion, JobId, LogStatus, Repo, RunId, SignatureId, SignatureInfo, Snapshot, Timestamp,
};

pub use signature::{
    DimensionFinding, DimensionReport, DimensionValue, ExcludedRun, FindingKind, Hit, HitOrigin,
    ImpactStart, ImpactWindow, SignatureReport,
};
pub use unclassified::{
    JobRef, UnclassifiedGroup, WILDCARD, line_template, normalize_for_grouping, template_id,
};

/// Settings the analysis needs (from `flakestat.toml` and flags, resolved by `cli`).
#[derive(Debug, Clone, Default)]
pub struct AnalysisConfig {
    /// How branch names name PRs.
    pub pr_conventions: prs::PrConventions,
    /// How job names name matrix values.
    pub matrix: MatrixParser,
    /// Report this signature alone (`--signature`); `None` is the overview of all.
    pub focus: Option<SignatureId>,
    /// Which runners are GPU runners and what a minute costs (`[cost]`).
    pub cost: cost::CostConfig,
}

/// Everything a reporter renders. Reporters compute nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportData {
    pub repo: Option<Repo>,
    pub default_branch: String,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    /// Where what the store has surveyed of the repository ends (`Snapshot::surveyed_to`): the
    /// headline says "surveyed to" when the window ends there.
    pub surveyed_to: Option<Timestamp>,
    /// The command that fills an incomplete report's gap ([`ReportData::survey_gap`]), in the
    /// words of whoever shows the report (the CLI's `flakestat survey …`); `None` from the
    /// analysis: the incomplete line then says what is missing and names no command.
    pub fill_gap: Option<String>,
    /// The signature asked for with `--signature`; `signatures` then holds it alone (or nothing
    /// when no loaded signature has that id).
    pub focus: Option<SignatureId>,
    /// Runs created in the survey window.
    pub runs_total: u64,
    /// Runs with a failed job in any attempt (or concluded `failure` with no job known).
    pub runs_failed: u64,
    /// Runs with more than one attempt.
    pub runs_rerun: u64,
    /// Failed runs whose every failed job a signature explains.
    pub runs_failed_classified: u64,
    /// Failed job executions (every attempt).
    pub jobs_failed: u64,
    /// Failed jobs a signature explains.
    pub jobs_classified: u64,
    /// Failed jobs no signature explains: read and unmatched (what `unclassified` groups), or
    /// with no log to read (`logs_unknown`, [`ReportData::jobs_log_unreadable`]).
    pub jobs_unclassified: u64,
    /// Of `jobs_unclassified`, those without a readable log, by reason.
    pub logs_unknown: Vec<LogGap>,
    /// Ranked by runs hit (descending), ties by id.
    pub signatures: Vec<SignatureReport>,
    /// Failed jobs whose log was read and matched nothing, grouped by their normalized error
    /// lines; largest group first.
    pub unclassified: Vec<UnclassifiedGroup>,
    /// Runner time of the whole window's failed jobs and of every later attempt of its runs.
    pub cost: cost::Cost,
    /// What the store does not hold yet; every figure above leaves it out.
    pub completeness: Completeness,
    /// Machine- and job-wide incidents of the window ([`incidents`]), each job on the pool
    /// `report --hosts` places it on.
    pub incidents: Vec<incidents::Incident>,
    /// The drain list and the failures that began with an image version ([`hosts::machines`]):
    /// the overview's short section on machines. Empty over several repositories (`report
    /// --hosts` reads one at a time).
    pub machines: hosts::Machines,
}

impl ReportData {
    /// The survey that would fill this report's gap: its repository over its window.
    pub fn survey_gap(&self) -> gap::SurveyGap {
        gap::SurveyGap {
            repo: self.repo.clone(),
            since: self.since,
            until: self.until,
        }
    }

    /// Of `jobs_unclassified`, the failed jobs with no readable log (every reason of
    /// `logs_unknown`); the others' logs were read and matched no signature.
    pub fn jobs_log_unreadable(&self) -> u64 {
        LogGap::jobs_in(&self.logs_unknown)
    }
}

/// What a stopped (or still running) survey left out of the store for the survey window. The
/// figures are counted over the rest only: a run is left out when its jobs are not stored, when
/// one of its failed jobs' log is not fetched, or when it lies in a window not listed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Completeness {
    /// Runs of the window the store lists (before any is left out).
    pub runs_listed: u64,
    /// Of those, runs whose jobs are not stored yet.
    pub runs_pending: u64,
    /// Failed jobs of the window whose log is not fetched yet.
    pub logs_pending: u64,
    /// Runs of the window left out of the figures for any of the reasons above.
    pub runs_left_out: u64,
    /// Parts of the window no survey listed in full, by start.
    pub unlisted: Vec<(Timestamp, Timestamp)>,
}

impl Completeness {
    pub fn is_complete(&self) -> bool {
        self.runs_pending == 0 && self.logs_pending == 0 && self.unlisted.is_empty()
    }
}

/// The part of `snapshot` that is complete, and what was left out of the survey window. Runs
/// (of the window and of its history) whose jobs are not stored or with a failed job whose log
/// is not fetched are removed with their jobs, and so are the window's runs created in a window
/// not listed. The result names nothing pending, so analysing it again removes nothing more.
pub fn complete_part(snapshot: &Snapshot) -> (std::borrow::Cow<'_, Snapshot>, Completeness) {
    use std::borrow::Cow;
    let in_window = |t: Timestamp| in_survey_window(snapshot, t);
    let unlisted_at = |t: Timestamp| snapshot.unlisted.iter().any(|&(a, b)| t >= a && t < b);
    let pending_logs: BTreeSet<RunId> = snapshot
        .jobs
        .iter()
        .filter(|j| snapshot.logs.get(&j.id) == Some(&LogStatus::Pending))
        .map(|j| j.run_id)
        .collect();
    let mut completeness = Completeness {
        unlisted: snapshot.unlisted.clone(),
        ..Completeness::default()
    };
    // A run without jobs is pending only where its workflow needs jobs at all: the survey lists
    // none for a workflow none of whose runs failed or was re-run (docs/survey.md).
    let noisy: BTreeSet<crate::model::WorkflowId> = snapshot
        .runs
        .iter()
        .filter(|r| r.needs_workflow_jobs())
        .map(|r| r.workflow_id)
        .collect();
    let without_jobs: BTreeSet<RunId> = snapshot
        .runs
        .iter()
        .filter(|r| snapshot.runs_without_jobs.contains(&r.id) && noisy.contains(&r.workflow_id))
        .map(|r| r.id)
        .collect();
    let mut left_out: BTreeSet<RunId> = BTreeSet::new();
    for run in &snapshot.runs {
        let window = in_window(run.created_at);
        let out = without_jobs.contains(&run.id)
            || pending_logs.contains(&run.id)
            || (window && unlisted_at(run.created_at));
        if window {
            completeness.runs_listed += 1;
            completeness.runs_pending += u64::from(without_jobs.contains(&run.id));
            completeness.runs_left_out += u64::from(out);
        }
        if out {
            left_out.insert(run.id);
        }
    }
    let window_runs = window_runs(snapshot);
    completeness.logs_pending = snapshot
        .jobs
        .iter()
        .filter(|j| {
            window_runs.contains(&j.run_id) && snapshot.logs.get(&j.id) == Some(&LogStatus::Pending)
        })
        .count() as u64;
    if left_out.is_empty() && snapshot.unlisted.is_empty() && without_jobs.is_empty() {
        return (Cow::Borrowed(snapshot), completeness);
    }
    let mut part = snapshot.clone();
    part.runs.retain(|r| !left_out.contains(&r.id));
    part.jobs.retain(|j| !left_out.contains(&j.run_id));
    let kept: BTreeSet<JobId> = part.jobs.iter().map(|j| j.id).collect();
    part.logs.retain(|id, _| kept.contains(id));
    part.classifications.retain(|id, _| kept.contains(id));
    part.runs_without_jobs.clear();
    part.unlisted.clear();
    (Cow::Owned(part), completeness)
}

/// Failed jobs whose log cannot be classified, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogGap {
    pub reason: LogGapReason,
    pub jobs: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogGapReason {
    /// GitHub answered 410: past the log retention.
    Expired,
    /// GitHub answered 404: the job has no log.
    Missing,
    /// Not downloaded yet.
    Pending,
    /// Its download was refused (a redirect flakestat does not follow).
    Unavailable,
    /// Stored but not classified yet.
    NotClassified,
    /// The store has no record of the log at all.
    NotRecorded,
    /// GitHub served another execution's log and the attempt's archive had none of its own.
    Mismatched,
}

impl LogGap {
    /// The failed jobs of `gaps`, every reason together.
    pub fn jobs_in(gaps: &[LogGap]) -> u64 {
        gaps.iter().map(|g| g.jobs).sum()
    }
}

impl LogGapReason {
    pub fn describe(self) -> &'static str {
        match self {
            LogGapReason::Expired => "log expired (GitHub answered 410)",
            LogGapReason::Missing => "no log (GitHub answered 404)",
            LogGapReason::Pending => "log not downloaded yet",
            LogGapReason::Unavailable => {
                "log unavailable (its download was refused: see the survey's messages)"
            }
            LogGapReason::NotClassified => "log stored but not classified yet",
            LogGapReason::NotRecorded => "no record of the log in the store",
            LogGapReason::Mismatched => {
                "log unknown (GitHub served another attempt's log; the attempt's archive had none)"
            }
        }
    }
}

/// What is known of one failed job's log.
pub(crate) enum JobVerdict<'a> {
    Classified(&'a crate::model::Classification),
    Gap(LogGapReason),
}

pub(crate) fn verdict(snapshot: &Snapshot, job: JobId) -> JobVerdict<'_> {
    if let Some(c) = snapshot.classifications.get(&job) {
        return JobVerdict::Classified(c);
    }
    JobVerdict::Gap(match snapshot.logs.get(&job) {
        Some(LogStatus::Expired) => LogGapReason::Expired,
        Some(LogStatus::Missing) => LogGapReason::Missing,
        Some(LogStatus::Unavailable) => LogGapReason::Unavailable,
        Some(LogStatus::Pending) => LogGapReason::Pending,
        Some(LogStatus::Stored) => LogGapReason::NotClassified,
        Some(LogStatus::Mismatched) => LogGapReason::Mismatched,
        None => LogGapReason::NotRecorded,
    })
}

/// Whether `t` lies in the survey window `[since, until)`.
pub(crate) fn in_survey_window(snapshot: &Snapshot, t: Timestamp) -> bool {
    snapshot.since.is_none_or(|s| t >= s) && snapshot.until.is_none_or(|u| t < u)
}

/// The runs created in the survey window.
pub(crate) fn window_runs(snapshot: &Snapshot) -> BTreeSet<RunId> {
    snapshot
        .runs
        .iter()
        .filter(|r| in_survey_window(snapshot, r.created_at))
        .map(|r| r.id)
        .collect()
}

/// The whole analysis.
pub fn analyze(
    snapshot: &Snapshot,
    signatures: &[SignatureInfo],
    config: &AnalysisConfig,
) -> ReportData {
    let (complete, completeness) = complete_part(snapshot);
    let snapshot: &Snapshot = &complete;
    let window_runs = window_runs(snapshot);
    let failed_jobs: Vec<_> = snapshot
        .jobs
        .iter()
        .filter(|j| window_runs.contains(&j.run_id) && j.is_failed())
        .collect();

    let mut runs_failed: BTreeSet<RunId> = failed_jobs.iter().map(|j| j.run_id).collect();
    let runs_with_jobs: BTreeSet<RunId> = snapshot.jobs.iter().map(|j| j.run_id).collect();
    for run in &snapshot.runs {
        if window_runs.contains(&run.id)
            && !runs_with_jobs.contains(&run.id)
            && run.conclusion.as_ref().is_some_and(Conclusion::is_failure)
        {
            runs_failed.insert(run.id);
        }
    }
    let runs_rerun = snapshot
        .runs
        .iter()
        .filter(|r| window_runs.contains(&r.id) && r.run_attempt > 1)
        .count() as u64;

    let mut jobs_classified = 0u64;
    let mut gaps: BTreeMap<LogGapReason, u64> = BTreeMap::new();
    let mut unexplained_runs: BTreeSet<RunId> = runs_failed
        .iter()
        .filter(|r| !runs_with_jobs.contains(r))
        .copied()
        .collect();
    let mut unmatched = Vec::new();
    for job in &failed_jobs {
        match verdict(snapshot, job.id) {
            JobVerdict::Classified(c) if !c.is_unclassified() => jobs_classified += 1,
            JobVerdict::Classified(c) => {
                unexplained_runs.insert(job.run_id);
                unmatched.push((*job, c));
            }
            JobVerdict::Gap(reason) => {
                unexplained_runs.insert(job.run_id);
                *gaps.entry(reason).or_default() += 1;
            }
        }
    }
    let jobs_unclassified = failed_jobs.len() as u64 - jobs_classified;
    let window_jobs: Vec<crate::model::Job> = snapshot
        .jobs
        .iter()
        .filter(|j| window_runs.contains(&j.run_id))
        .cloned()
        .collect();
    let window_cost = cost::cost_of(
        &window_jobs,
        &failed_jobs.iter().map(|j| j.id).collect(),
        &config.cost,
    );

    let bisecting = signature::Bisecting::of(snapshot);
    let incidents = incidents::find_incidents(snapshot);
    // Hits that are a PR's own breakage, as the tests view reads it, are no signature's hits.
    let own = if signatures.is_empty() {
        signature::OwnBreakage::new()
    } else {
        tests::own_breakage(snapshot, config, &incidents)
    };
    let mut reports: Vec<SignatureReport> = signatures
        .iter()
        .filter(|s| config.focus.as_ref().is_none_or(|f| *f == s.id))
        .map(|info| signature::analyze_signature(snapshot, &bisecting, info, &own, config))
        .collect();
    reports.sort_by(|a, b| b.runs_hit.cmp(&a.runs_hit).then_with(|| a.id.cmp(&b.id)));

    ReportData {
        repo: snapshot.repo.clone(),
        default_branch: snapshot.default_branch.clone(),
        since: snapshot.since,
        until: snapshot.until,
        surveyed_to: snapshot.surveyed_to,
        fill_gap: None,
        focus: config.focus.clone(),
        runs_total: window_runs.len() as u64,
        runs_failed: runs_failed.len() as u64,
        runs_rerun,
        runs_failed_classified: runs_failed.difference(&unexplained_runs).count() as u64,
        jobs_failed: failed_jobs.len() as u64,
        jobs_classified,
        jobs_unclassified,
        logs_unknown: gaps
            .into_iter()
            .map(|(reason, jobs)| LogGap { reason, jobs })
            .collect(),
        signatures: reports,
        unclassified: unclassified::group(snapshot, &unmatched, &config.matrix),
        completeness,
        cost: window_cost,
        incidents,
        machines: hosts::machines(snapshot),
    }
}
