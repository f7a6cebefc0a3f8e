//! What changed in CI: a period (say the last 24 hours) against a baseline before it (say the 14
//! days before), per signature, from counts.
//!
//! - **new**: hits in the period, none in the baseline.
//! - **rising**: the period's hits are improbable under the baseline rate: with the baseline rate
//!   `p0 = (h0 + ½) / (n0 + 1)` (smoothed so that a baseline of zero hits is not a rate of zero),
//!   `P(X ≥ h1)` for `X ~ Binomial(n1, p0)` is below [`RISING_P`], and at least [`MIN_RISING_HITS`]
//!   runs hit. Reported with both counts and that probability, never a percentage alone.
//! - **fading**: no hit in the period although the baseline rate predicted at least
//!   [`MIN_EXPECTED_FADING`] hits (so `P(0 hits)` is small).
//! - **new unclassified**: unclassified failure groups seen in the period and not in the baseline.
//! - **newly flaky tests**: tests whose verdict is `flaky` over the period
//!   ([`super::tests::analyze_tests`], the period alone) and was not over the baseline.
//!
//! [`nightly`] reads both windows from one `Snapshot` through [`super::analyze`] (so hits are
//! counted exactly as in the survey report: related PRs' runs excluded, every attempt) and returns
//! [`NightlyData`], everything the nightly renderers need. Runs are placed in a window by their
//! creation time; a run counts in a denominator once it is completed (or hit), as elsewhere.
//! A signature's denominator is its own in both windows, also where it has no hit: the runs of
//! the workflows its counted hits occur in, runs of related PRs and of PRs that cannot be found
//! left out (`signature_counts`), never every run of the repository.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::tests::{TestEvidence, Verdict as TestVerdict, analyze_tests};
use super::{AnalysisConfig, Hit, LogGap, ReportData, UnclassifiedGroup, analyze};
use crate::model::{PrNumber, Repo, RunId, SignatureId, SignatureInfo, Snapshot, Timestamp};

/// A period hit count is "rising" when its probability under the baseline rate is below this.
pub const RISING_P: f64 = 0.01;
/// Fewer period hits than this are never "rising".
pub const MIN_RISING_HITS: u64 = 2;
/// A signature is "fading" when the baseline rate predicted at least this many period hits.
pub const MIN_EXPECTED_FADING: f64 = 3.0;

/// Runs hit out of runs, for one signature in one period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Count {
    pub hits: u64,
    pub runs: u64,
}

impl Count {
    pub fn rate(self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.hits as f64 / self.runs as f64
        }
    }
}

/// The kind of change found for a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    New,
    Rising,
    Fading,
}

/// One signature's change.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub signature: SignatureId,
    pub kind: ChangeKind,
    pub period: Count,
    pub baseline: Count,
    /// For rising: `P(X ≥ period.hits)` under the baseline rate; for fading: `P(0 hits)`.
    pub probability: f64,
}

/// A signature's runs hit out of its runs, in the period and in the baseline: both counted over
/// the same runs ([`nightly`]: its workflows, related and unknown PRs left out), also in a
/// window where it has no hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Counts {
    pub period: Count,
    pub baseline: Count,
}

/// Compares each signature's period count with its baseline count. Sorted by kind (new,
/// rising, fading), then by period hits descending, then id.
pub fn compare(counts: &BTreeMap<SignatureId, Counts>) -> Vec<Change> {
    let mut changes = Vec::new();
    for (
        id,
        &Counts {
            period: p,
            baseline: b,
        },
    ) in counts
    {
        let p0 = (b.hits as f64 + 0.5) / (b.runs as f64 + 1.0);
        let change = |kind, probability| Change {
            signature: id.clone(),
            kind,
            period: p,
            baseline: b,
            probability,
        };
        if p.hits > 0 && b.hits == 0 {
            changes.push(change(ChangeKind::New, binomial_tail(p.runs, p.hits, p0)));
        } else if p.hits >= MIN_RISING_HITS {
            let tail = binomial_tail(p.runs, p.hits, p0);
            if tail < RISING_P && p.rate() > b.rate() {
                changes.push(change(ChangeKind::Rising, tail));
            }
        } else if p.hits == 0 && b.hits > 0 && p.runs as f64 * b.rate() >= MIN_EXPECTED_FADING {
            changes.push(change(
                ChangeKind::Fading,
                (1.0 - b.rate()).powi(p.runs as i32),
            ));
        }
    }
    changes.sort_by(|a, b| {
        a.kind
            .cmp(&b.kind)
            .then(b.period.hits.cmp(&a.period.hits))
            .then(a.signature.cmp(&b.signature))
    });
    changes
}

/// `P(X ≥ k)` for `X ~ Binomial(n, p)`, summed in log space so large `n` does not overflow.
pub fn binomial_tail(n: u64, k: u64, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut log_choose = (0..k)
        .map(|i| ((n - i) as f64 / (i + 1) as f64).ln())
        .sum::<f64>();
    let mut total = 0.0;
    for i in k..=n {
        total += (log_choose + i as f64 * lp + (n - i) as f64 * lq).exp();
        if i < n {
            log_choose += ((n - i) as f64 / (i + 1) as f64).ln();
        }
    }
    total.min(1.0)
}

/// Runs in which each signature hit, for the runs in `runs` (used by callers that count periods).
pub fn count_hits(
    runs: &BTreeSet<RunId>,
    hits: &BTreeMap<SignatureId, BTreeSet<RunId>>,
) -> BTreeMap<SignatureId, Count> {
    hits.iter()
        .map(|(id, hit_runs)| {
            (
                id.clone(),
                Count {
                    hits: hit_runs.intersection(runs).count() as u64,
                    runs: runs.len() as u64,
                },
            )
        })
        .collect()
}

/// How many job links an item keeps (the newest); the renderers say how many more there are.
pub const MAX_JOBS_PER_ITEM: usize = 20;

/// One window's overall figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowSummary {
    /// Inclusive.
    pub since: Timestamp,
    /// Exclusive.
    pub until: Timestamp,
    /// Runs created in the window.
    pub runs_total: u64,
    /// Of those, runs not completed yet: left out of the rates unless already hit.
    pub runs_in_progress: u64,
    pub runs_failed: u64,
    pub jobs_failed: u64,
    pub jobs_unclassified: u64,
    /// Failed jobs with no readable log, by reason: each could hide a hit.
    pub logs_unknown: Vec<LogGap>,
}

/// One job a signature hit (a link in the report).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobLink {
    pub run_id: RunId,
    pub attempt: u32,
    pub job_id: crate::model::JobId,
    pub job: String,
    pub created_at: Timestamp,
    /// The job's page; the run's page when GitHub gave no job URL.
    pub url: String,
    pub branch: Option<String>,
    pub pr: Option<PrNumber>,
}

impl JobLink {
    fn from_hit(h: &Hit) -> JobLink {
        JobLink {
            run_id: h.run_id,
            attempt: h.attempt,
            job_id: h.job_id,
            job: h.job.clone(),
            created_at: h.created_at,
            url: h.html_url.clone().unwrap_or_else(|| h.run_url.clone()),
            branch: h.branch.clone(),
            pr: h.pr,
        }
    }
}

/// A signature that is new, rising or fading, with the counts that decided it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignatureChange {
    pub id: SignatureId,
    pub title: String,
    pub issue: Option<String>,
    pub kind: ChangeKind,
    pub period: Count,
    pub baseline: Count,
    /// New and rising: `P(X ≥ period hits)` under the baseline rate; fading: `P(0 hits)`.
    pub probability: f64,
    /// New and rising: the period's hit jobs; fading: the baseline's last hit jobs. Newest
    /// first, at most [`MAX_JOBS_PER_ITEM`].
    pub jobs: Vec<JobLink>,
    /// Hit jobs of that window in all (`jobs` may hold fewer).
    pub jobs_total: u64,
}

/// A signature hit in the period with no change worth an alert (for context).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignatureSeen {
    pub id: SignatureId,
    pub title: String,
    pub period: Count,
    pub baseline: Count,
    /// `P(X ≥ period hits)` under the baseline rate.
    pub probability: f64,
    /// The period's hit jobs, newest first, at most [`MAX_JOBS_PER_ITEM`].
    pub jobs: Vec<JobLink>,
    pub jobs_total: u64,
}

/// A test flaky in the period (failed and passed on the same code there) that was not flaky in
/// the baseline: the period's evidence, and what the baseline said of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewFlakyTest {
    pub id: String,
    pub runner: String,
    /// The period's counted failed job executions naming it.
    pub jobs_failed: u64,
    pub runs_failed: u64,
    pub rerun_to_green: u64,
    pub same_commit_green: u64,
    pub flaky_in_job: u64,
    /// The period's first counted run in which it failed.
    pub first_failure: Option<(RunId, Timestamp)>,
    /// Its verdict over the baseline; `None` when it did not fail there at all
    /// (`left_out`: it failed there only in left-out runs or incidents).
    pub baseline: Option<TestVerdict>,
    /// Since when it fails, over the period ([`super::tests::Onset`]).
    #[serde(skip)]
    pub onset: Option<super::tests::Onset>,
}

/// What changed: everything the nightly renderers show. Renderers compute nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NightlyData {
    pub repo: Option<Repo>,
    pub period: WindowSummary,
    pub baseline: WindowSummary,
    /// New, then rising, then fading; within a kind, most period hits first.
    pub changes: Vec<SignatureChange>,
    /// Signatures hit in the period that are neither new nor rising.
    pub seen: Vec<SignatureSeen>,
    /// Unclassified failure groups of the period whose grouping key the baseline never had.
    pub new_unclassified: Vec<UnclassifiedGroup>,
    /// Tests flaky in the period and not in the baseline, most failed jobs first.
    pub new_flaky_tests: Vec<NewFlakyTest>,
    /// Tests retried to a pass inside green jobs in the period (`--green-logs`) and not in the
    /// baseline: newly hidden flakes, most green jobs first. Empty when no green log was read.
    pub new_hidden_flaky: Vec<super::hidden::TestExecutions>,
    /// The period's incidents ([`super::incidents`]): their tests are never newly flaky.
    pub incidents: Vec<super::incidents::Incident>,
    /// Hosts on the drain list over baseline and period together that the baseline's own drain
    /// list did not have (`analysis::hosts`).
    pub new_bad_hosts: Vec<super::hosts::Drain>,
    /// What the store does not hold yet over the baseline and the period; left out of both.
    pub completeness: super::Completeness,
    /// The command that fills the gap ([`NightlyData::survey_gap`]), worded by the caller
    /// (the CLI); `None` here.
    pub fill_gap: Option<String>,
}

/// Which changes make `nightly --fail-on` alert. Fading is good news and never alerts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertOn {
    /// A new signature, or a new unclassified failure.
    New,
    /// A rising signature.
    Rising,
    /// Either.
    Any,
    /// A test flaky in the period that was not in the baseline.
    NewFlakyTest,
    /// A host newly on the drain list.
    BadHost,
}

impl NightlyData {
    /// The survey that would fill the night's gap: its repository from the baseline's start
    /// to the period's end.
    pub fn survey_gap(&self) -> super::gap::SurveyGap {
        super::gap::SurveyGap {
            repo: self.repo.clone(),
            since: Some(self.baseline.since),
            until: Some(self.period.until),
        }
    }

    pub fn count(&self, kind: ChangeKind) -> usize {
        self.changes.iter().filter(|c| c.kind == kind).count()
    }

    /// Whether a change of the kind asked about was found.
    pub fn alerts(&self, on: AlertOn) -> bool {
        let new = self.count(ChangeKind::New) > 0 || !self.new_unclassified.is_empty();
        let rising = self.count(ChangeKind::Rising) > 0;
        match on {
            AlertOn::New => new,
            AlertOn::Rising => rising,
            AlertOn::Any => new || rising,
            AlertOn::NewFlakyTest => !self.new_flaky_tests.is_empty(),
            AlertOn::BadHost => !self.new_bad_hosts.is_empty(),
        }
    }
}

/// Several repositories' nightly comparisons (`nightly --org`, `--repo` repeated): each
/// repository compared with its own baseline, as if alone (a flake's rate in one repository says
/// nothing of another's), side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NightlyMany {
    /// The owner named with `--org`, when one was.
    pub owner: Option<String>,
    /// One per repository surveyed, by name.
    pub repos: Vec<NightlyData>,
}

impl NightlyMany {
    pub fn new(mut repos: Vec<NightlyData>, owner: Option<String>) -> NightlyMany {
        repos.sort_by_key(|r| r.repo.as_ref().map(Repo::sort_key));
        NightlyMany { owner, repos }
    }

    /// Whether any repository holds a change of the kind asked about.
    pub fn alerts(&self, on: AlertOn) -> bool {
        self.repos.iter().any(|r| r.alerts(on))
    }

    /// What the store does not hold yet, over every repository.
    pub fn completeness(&self) -> super::Completeness {
        super::org::merge_completeness(self.repos.iter().map(|r| &r.completeness))
    }
}

/// Compares the period `[period_since, until)` with the baseline `[baseline_since, period_since)`
/// from one snapshot holding both (`Store::load_snapshot(repo, baseline_since, until, …)`).
pub fn nightly(
    snapshot: &Snapshot,
    signatures: &[SignatureInfo],
    config: &AnalysisConfig,
    baseline_since: Timestamp,
    period_since: Timestamp,
    until: Timestamp,
) -> NightlyData {
    let config = AnalysisConfig {
        focus: None,
        ..config.clone()
    };
    // Over the whole range first: what is left out is left out of both windows alike.
    let mut whole = snapshot.clone();
    whole.since = Some(baseline_since);
    whole.until = Some(until);
    let (complete, completeness) = super::complete_part(&whole);
    let part = match complete {
        std::borrow::Cow::Owned(part) => Some(part),
        std::borrow::Cow::Borrowed(_) => None,
    };
    let mut view = part.unwrap_or(whole);
    view.since = Some(baseline_since);
    view.until = Some(period_since);
    // Each window's incidents are its report's (`view` is complete already: `analyze` reads it
    // as it is).
    let baseline = analyze(&view, signatures, &config);
    let baseline_hidden = super::hidden::analyze_hidden(&view);
    let baseline_tests = analyze_tests(&view, &config, &baseline.incidents, &baseline_hidden);
    view.since = Some(period_since);
    view.until = Some(until);
    let period = analyze(&view, signatures, &config);
    let period_hidden = super::hidden::analyze_hidden(&view);
    let period_tests = analyze_tests(&view, &config, &period.incidents, &period_hidden);
    let new_hidden_flaky = new_hidden_flaky(&period_hidden, &baseline_hidden);
    let new_bad_hosts = super::hosts::newly_drained(&view, baseline_since, period_since);

    // Both windows count a signature over the same workflows, also the one it has no hit in.
    let workflows = workflows_hit(&[&baseline, &period]);
    let infos: BTreeMap<&SignatureId, &SignatureInfo> =
        signatures.iter().map(|s| (&s.id, s)).collect();
    let period_counts = signature_counts(&view, &period, &workflows, &infos, &config);
    view.since = Some(baseline_since);
    view.until = Some(period_since);
    let baseline_counts = signature_counts(&view, &baseline, &workflows, &infos, &config);
    let windows = Windows {
        infos,
        period: period_counts,
        baseline: baseline_counts,
    };
    let changes = windows.changes();
    let seen = windows.seen(&changes);
    NightlyData {
        repo: snapshot.repo.clone(),
        period: summary(&view, &period, period_since, until),
        baseline: summary(&view, &baseline, baseline_since, period_since),
        changes,
        seen,
        new_unclassified: new_unclassified(&period, &baseline),
        new_flaky_tests: new_flaky_tests(period_tests, &baseline_tests),
        new_hidden_flaky,
        incidents: period.incidents.clone(),
        new_bad_hosts,
        completeness,
        fill_gap: None,
    }
}

/// Each signature's count and hits in the period and in the baseline: the same signatures in
/// both (those with a counted hit in either).
struct Windows<'a> {
    infos: BTreeMap<&'a SignatureId, &'a SignatureInfo>,
    period: BTreeMap<SignatureId, (Count, Vec<Hit>)>,
    baseline: BTreeMap<SignatureId, (Count, Vec<Hit>)>,
}

impl Windows<'_> {
    fn counts(&self) -> BTreeMap<SignatureId, Counts> {
        self.period
            .iter()
            .map(|(id, (period, _))| {
                let baseline = self.baseline.get(id).map_or_else(Count::default, |b| b.0);
                let counts = Counts {
                    period: *period,
                    baseline,
                };
                (id.clone(), counts)
            })
            .collect()
    }

    /// The hits of `id` in one window, oldest first.
    fn hits<'h>(of: &'h BTreeMap<SignatureId, (Count, Vec<Hit>)>, id: &SignatureId) -> &'h [Hit] {
        of.get(id).map_or(&[], |v| &v.1[..])
    }

    /// New, rising and fading signatures, with the jobs that show it (the baseline's for a
    /// fading one).
    fn changes(&self) -> Vec<SignatureChange> {
        compare(&self.counts())
            .into_iter()
            .map(|c| {
                let hits = match c.kind {
                    ChangeKind::Fading => Self::hits(&self.baseline, &c.signature),
                    _ => Self::hits(&self.period, &c.signature),
                };
                let info = self.infos.get(&c.signature);
                SignatureChange {
                    title: info.map(|i| i.title.clone()).unwrap_or_default(),
                    issue: info.and_then(|i| i.issue.clone()),
                    id: c.signature,
                    kind: c.kind,
                    period: c.period,
                    baseline: c.baseline,
                    probability: c.probability,
                    jobs: newest(hits),
                    jobs_total: hits.len() as u64,
                }
            })
            .collect()
    }

    /// The signatures hit in the period without a change, most hits first.
    fn seen(&self, changes: &[SignatureChange]) -> Vec<SignatureSeen> {
        let changed: BTreeSet<&SignatureId> = changes.iter().map(|c| &c.id).collect();
        let mut seen: Vec<SignatureSeen> = self
            .counts()
            .into_iter()
            .filter(|(id, c)| c.period.hits > 0 && !changed.contains(id))
            .map(|(id, Counts { period, baseline })| {
                let p0 = (baseline.hits as f64 + 0.5) / (baseline.runs as f64 + 1.0);
                let hits = Self::hits(&self.period, &id);
                SignatureSeen {
                    title: self
                        .infos
                        .get(&id)
                        .map(|i| i.title.clone())
                        .unwrap_or_default(),
                    id,
                    period,
                    baseline,
                    probability: binomial_tail(period.runs, period.hits, p0),
                    jobs: newest(hits),
                    jobs_total: hits.len() as u64,
                }
            })
            .collect();
        seen.sort_by(|a, b| b.period.hits.cmp(&a.period.hits).then(a.id.cmp(&b.id)));
        seen
    }
}

/// The period's flaky tests that were not flaky in the baseline, in the period's order (most
/// failed jobs first).
fn new_flaky_tests(period: Vec<TestEvidence>, baseline: &[TestEvidence]) -> Vec<NewFlakyTest> {
    let before: BTreeMap<&str, TestVerdict> = baseline
        .iter()
        .map(|t| (t.id.as_str(), t.verdict))
        .collect();
    period
        .into_iter()
        .filter(|t| t.verdict == TestVerdict::Flaky)
        .filter(|t| before.get(t.id.as_str()) != Some(&TestVerdict::Flaky))
        .map(|t| NewFlakyTest {
            baseline: before.get(t.id.as_str()).copied(),
            id: t.id,
            runner: t.runner,
            jobs_failed: t.jobs_failed,
            runs_failed: t.runs_failed,
            rerun_to_green: t.rerun_to_green,
            same_commit_green: t.same_commit_green,
            flaky_in_job: t.flaky_in_job,
            first_failure: t.first_failure,
            onset: t.onset,
        })
        .collect()
}

/// The period's hidden flakes (retried to a pass inside green jobs) that the baseline's green
/// logs did not show, in the period's order (most green jobs first).
fn new_hidden_flaky(
    period: &super::hidden::HiddenFlakes,
    baseline: &super::hidden::HiddenFlakes,
) -> Vec<super::hidden::TestExecutions> {
    let before: BTreeSet<&str> = baseline.hidden().map(|t| t.id.as_str()).collect();
    period
        .hidden()
        .filter(|t| !before.contains(t.id.as_str()))
        .cloned()
        .collect()
}

/// The period's unclassified groups the baseline did not have.
fn new_unclassified(period: &ReportData, baseline: &ReportData) -> Vec<UnclassifiedGroup> {
    let known: BTreeSet<&str> = baseline
        .unclassified
        .iter()
        .map(|g| g.key.as_str())
        .collect();
    period
        .unclassified
        .iter()
        .filter(|g| !known.contains(g.key.as_str()))
        .cloned()
        .collect()
}

/// The newest hits (hits come oldest first), as links.
fn newest(hits: &[Hit]) -> Vec<JobLink> {
    hits.iter()
        .rev()
        .take(MAX_JOBS_PER_ITEM)
        .map(JobLink::from_hit)
        .collect()
}

/// Runs created in `[since, until)` that count in a rate: completed (runs still going may yet
/// fail).
fn completed_runs(snapshot: &Snapshot, since: Timestamp, until: Timestamp) -> BTreeSet<RunId> {
    snapshot
        .runs
        .iter()
        .filter(|r| r.created_at >= since && r.created_at < until && r.is_completed())
        .map(|r| r.id)
        .collect()
}

/// Per signature, the names of the workflows its counted hits occur in, over every window's
/// report: a signature no window counts a hit of is absent.
fn workflows_hit(reports: &[&ReportData]) -> BTreeMap<SignatureId, BTreeSet<String>> {
    let mut workflows: BTreeMap<SignatureId, BTreeSet<String>> = BTreeMap::new();
    for s in reports
        .iter()
        .flat_map(|r| &r.signatures)
        .filter(|s| s.runs_hit > 0)
    {
        workflows
            .entry(s.id.clone())
            .or_default()
            .extend(s.workflows.iter().cloned());
    }
    workflows
}

/// Per signature of `workflows`, in the window of `snapshot` (`data` is its report): runs hit
/// out of its runs, and its hits there, oldest first. Its runs are those its hits are counted
/// over, whether or not it hit in this window: the window's runs of the workflows it occurs in
/// (`workflows`, the same for both windows), completed or already hit, with the runs of PRs
/// related to it and of PRs that cannot be found left out (`signature::counted_runs`, as the
/// analysis leaves them out of its hits). Never every run of the repository: in one whose runs
/// are mostly another workflow's (a PR labeler), those would make a quiet night look like a
/// fix and a new hit look rarer than it is.
fn signature_counts(
    snapshot: &Snapshot,
    data: &ReportData,
    workflows: &BTreeMap<SignatureId, BTreeSet<String>>,
    infos: &BTreeMap<&SignatureId, &SignatureInfo>,
    config: &AnalysisConfig,
) -> BTreeMap<SignatureId, (Count, Vec<Hit>)> {
    let mut out = BTreeMap::new();
    for (id, workflows) in workflows {
        let Some(info) = infos.get(id) else {
            continue;
        };
        let hits = data
            .signatures
            .iter()
            .find(|s| s.id == *id)
            .map(|s| s.hits.clone())
            .unwrap_or_default();
        let hit_runs: BTreeSet<RunId> = hits.iter().map(|h| h.run_id).collect();
        let counted = super::signature::counted_runs(snapshot, info, config);
        let runs: BTreeSet<RunId> = snapshot
            .runs
            .iter()
            .filter(|r| counted.contains(&r.id) && workflows.contains(&r.workflow_name))
            // A hit run still in progress has failed already: it counts.
            .filter(|r| r.is_completed() || hit_runs.contains(&r.id))
            .map(|r| r.id)
            .collect();
        let count = count_hits(&runs, &BTreeMap::from([(id.clone(), hit_runs)]))[id];
        out.insert(id.clone(), (count, hits));
    }
    out
}

fn summary(
    snapshot: &Snapshot,
    data: &ReportData,
    since: Timestamp,
    until: Timestamp,
) -> WindowSummary {
    let completed = completed_runs(snapshot, since, until).len() as u64;
    WindowSummary {
        since,
        until,
        runs_total: data.runs_total,
        runs_in_progress: data.runs_total.saturating_sub(completed),
        runs_failed: data.runs_failed,
        jobs_failed: data.jobs_failed,
        jobs_unclassified: data.jobs_unclassified,
        logs_unknown: data.logs_unknown.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test hidden-flaky in the period is new unless the baseline's green logs showed it
    /// retried too; a test only seen (failed, passed) in the baseline does not hide it.
    #[test]
    fn newly_hidden_flaky_tests_are_the_period_s_not_in_the_baseline() {
        use super::super::hidden::{HiddenFlakes, TestExecutions};
        let test = |id: &str, hidden: u64| TestExecutions {
            id: id.into(),
            hidden,
            retried: hidden,
            ..TestExecutions::default()
        };
        let period = HiddenFlakes {
            green_read: 10,
            tests: vec![test("a", 3), test("b", 1), test("c", 1), test("d", 0)],
            budget: Vec::new(),
        };
        let baseline = HiddenFlakes {
            green_read: 10,
            tests: vec![test("b", 2), test("c", 0)],
            budget: Vec::new(),
        };
        let new: Vec<String> = new_hidden_flaky(&period, &baseline)
            .into_iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(new, ["a", "c"]);
        assert!(new_hidden_flaky(&HiddenFlakes::default(), &baseline).is_empty());
    }

    fn id(s: &str) -> SignatureId {
        SignatureId(s.to_string())
    }

    /// Hits and runs.
    type Pair = (u64, u64);

    /// Per signature: period hits and runs, baseline hits and runs.
    fn counts(items: &[(&str, Pair, Pair)]) -> BTreeMap<SignatureId, Counts> {
        items
            .iter()
            .map(|&(s, (hits, runs), (b_hits, b_runs))| {
                let period = Count { hits, runs };
                let baseline = Count {
                    hits: b_hits,
                    runs: b_runs,
                };
                (id(s), Counts { period, baseline })
            })
            .collect()
    }

    #[test]
    fn binomial_tail_matches_closed_forms() {
        assert!((binomial_tail(10, 1, 0.1) - (1.0 - 0.9f64.powi(10))).abs() < 1e-12);
        assert!((binomial_tail(3, 3, 0.5) - 0.125).abs() < 1e-12);
        assert_eq!(binomial_tail(5, 0, 0.3), 1.0);
        assert_eq!(binomial_tail(5, 6, 0.3), 0.0);
        // Large n stays finite and in range.
        let t = binomial_tail(5000, 40, 0.005);
        assert!((t - 0.003_365_174_504_166).abs() < 1e-12, "{t}"); // reference: exact sum in Python
    }

    #[test]
    fn new_rising_fading_and_steady_are_told_apart() {
        let changes = compare(&counts(&[
            ("brand-new", (2, 20), (0, 280)),
            ("rising", (6, 20), (3, 280)),
            ("steady", (1, 20), (14, 280)),
            ("fading", (0, 20), (60, 280)),
            ("gone-quiet-rare", (0, 20), (1, 280)),
        ]));
        let got: Vec<(&str, ChangeKind)> = changes
            .iter()
            .map(|c| (c.signature.0.as_str(), c.kind))
            .collect();
        assert_eq!(
            got,
            vec![
                ("brand-new", ChangeKind::New),
                ("rising", ChangeKind::Rising),
                ("fading", ChangeKind::Fading),
            ]
        );
        let rising = &changes[1];
        assert_eq!(rising.period, Count { hits: 6, runs: 20 });
        assert_eq!(rising.baseline, Count { hits: 3, runs: 280 });
        assert!(rising.probability < RISING_P);
    }

    #[test]
    fn one_unlucky_night_is_not_rising() {
        // 2 of 20 against a baseline of 5%: P(X ≥ 2) ≈ 0.26.
        let changes = compare(&counts(&[("x", (2, 20), (14, 280))]));
        assert!(changes.is_empty(), "{changes:?}");
    }

    #[test]
    fn count_hits_intersects_with_the_period() {
        let runs: BTreeSet<RunId> = [1, 2, 3].map(RunId).into();
        let hits = BTreeMap::from([(id("a"), [2, 3, 9].map(RunId).into())]);
        assert_eq!(
            count_hits(&runs, &hits)[&id("a")],
            Count { hits: 2, runs: 3 }
        );
    }

    mod whole {
        //! `nightly` over a small hand-made snapshot: fading, a new unclassified group, runs in
        //! progress left out of the rates.
        use super::super::*;
        use super::id;
        use crate::model::{
            Classification, Job, JobId, LogLine, LogStatus, Run, Sha, SignatureMatch, WorkflowId,
        };
        use chrono::{TimeDelta, TimeZone, Utc};

        fn t0() -> Timestamp {
            Utc.with_ymd_and_hms(2026, 7, 1, 0, 0, 0).unwrap()
        }

        fn run(i: u64, created: Timestamp, completed: bool) -> Run {
            Run {
                id: RunId(1000 + i),
                workflow_id: WorkflowId(1),
                workflow_name: "CI".into(),
                workflow_path: ".github/workflows/ci.yml".into(),
                display_title: format!("run {i}"),
                event: "push".into(),
                head_branch: Some("main".into()),
                head_sha: Sha(format!("{i:040x}")),
                run_number: i,
                run_attempt: 1,
                status: if completed {
                    "completed"
                } else {
                    "in_progress"
                }
                .into(),
                conclusion: completed.then(|| "success".into()),
                created_at: created,
                updated_at: created,
                run_started_at: Some(created),
                html_url: format!("https://github.com/o/r/actions/runs/{}", 1000 + i),
                pull_requests: Vec::new(),
                head_repository: None,
            }
        }

        fn job(run: &Run, failed: bool) -> Job {
            Job {
                id: JobId(run.id.0 * 10),
                run_id: run.id,
                run_attempt: 1,
                name: "Test".into(),
                status: run.status.clone(),
                conclusion: Some(if failed { "failure" } else { "success" }.into()),
                created_at: run.created_at,
                started_at: Some(run.created_at),
                completed_at: Some(run.created_at + TimeDelta::minutes(5)),
                html_url: Some(format!("{}/job/{}", run.html_url, run.id.0 * 10)),
                labels: Vec::new(),
                head_sha: run.head_sha.clone(),
            }
        }

        /// `r` and its one job into `snap`: failed, with `c` as its stored log's
        /// classification, when `c` is given; passed otherwise.
        fn push(snap: &mut Snapshot, r: Run, c: Option<Classification>) {
            let j = job(&r, c.is_some());
            if let Some(c) = c {
                snap.logs.insert(j.id, LogStatus::Stored);
                snap.classifications.insert(j.id, c);
            }
            snap.runs.push(r);
            snap.jobs.push(j);
        }

        fn hit(signature: &str) -> Classification {
            Classification {
                matches: vec![SignatureMatch {
                    signature: id(signature),
                    line: 3,
                    lines: vec![3],
                    text: "boom".into(),
                    step: None,
                    count: 1,
                    tests: Default::default(),
                }],
                error_lines: vec![LogLine {
                    line: 3,
                    text: "boom".into(),
                }],
                ..Default::default()
            }
        }

        fn unknown(line: &str) -> Classification {
            Classification {
                matches: Vec::new(),
                error_lines: vec![LogLine {
                    line: 7,
                    text: line.into(),
                }],
                ..Default::default()
            }
        }

        #[test]
        fn fading_new_unclassified_and_runs_in_progress() {
            let period_since = t0() + TimeDelta::days(14);
            let until = period_since + TimeDelta::days(1);
            let mut snap = Snapshot {
                repo: Repo::parse("o/r"),
                default_branch: "main".into(),
                ..Snapshot::default()
            };
            let mut add = |i: u64, created, completed, c: Option<Classification>| {
                push(&mut snap, run(i, created, completed), c);
            };
            // Baseline: 40 runs, every 4th hit by `old`, one unknown failure seen before.
            for i in 0..40 {
                let c = if i % 4 == 0 {
                    Some(hit("old"))
                } else if i == 1 {
                    Some(unknown("E   OSError: disk 12 full"))
                } else {
                    None
                };
                add(i, t0() + TimeDelta::hours(8 * i as i64), true, c);
            }
            // Period: 20 completed runs without `old`; the known unknown again, a new one, and
            // a run still in progress.
            for i in 40..60 {
                let c = match i {
                    41 => Some(unknown("E   OSError: disk 99 full")),
                    42 => Some(unknown("E   SegfaultError: child 4242 died")),
                    _ => None,
                };
                add(
                    i,
                    period_since + TimeDelta::minutes(30 * (i - 40) as i64),
                    true,
                    c,
                );
            }
            add(60, until - TimeDelta::minutes(5), false, None);
            let infos = vec![SignatureInfo {
                id: id("old"),
                title: "An old flake".into(),
                paths: Vec::new(),
                issue: None,
            }];
            let data = nightly(
                &snap,
                &infos,
                &AnalysisConfig::default(),
                t0(),
                period_since,
                until,
            );
            assert_eq!(data.period.runs_total, 21);
            assert_eq!(data.period.runs_in_progress, 1);
            assert_eq!(data.changes.len(), 1, "{:?}", data.changes);
            let fading = &data.changes[0];
            assert_eq!(fading.kind, ChangeKind::Fading);
            assert_eq!(fading.baseline, Count { hits: 10, runs: 40 });
            assert_eq!(
                fading.period,
                Count { hits: 0, runs: 20 },
                "in progress left out"
            );
            assert!((fading.probability - 0.75f64.powi(20)).abs() < 1e-12);
            // Fading links the baseline's last hits, newest first.
            assert_eq!(fading.jobs_total, 10);
            assert_eq!(fading.jobs[0].run_id, RunId(1036));
            // Only the failure the baseline never had is new.
            assert_eq!(data.new_unclassified.len(), 1);
            assert!(data.new_unclassified[0].lines[0].contains("SegfaultError"));
            assert!(!data.alerts(AlertOn::Rising));
            assert!(data.alerts(AlertOn::New) && data.alerts(AlertOn::Any));
        }

        /// A repository whose runs are mostly a PR labeler's: a signature is counted over the
        /// runs of the workflow it occurs in, in the window where it has no hit too; a quiet
        /// night of a few CI runs is not "fading", and a new hit's baseline is the CI runs'.
        #[test]
        fn a_busy_second_workflow_is_in_no_signature_s_runs() {
            let period_since = t0() + TimeDelta::days(14);
            let until = period_since + TimeDelta::days(1);
            let mut snap = Snapshot {
                repo: Repo::parse("o/r"),
                default_branch: "main".into(),
                ..Snapshot::default()
            };
            let mut add = |i: u64, created, labeler: bool, c: Option<Classification>| {
                let mut r = run(i, created, true);
                if labeler {
                    r.workflow_id = WorkflowId(2);
                    r.workflow_name = "Label PR".into();
                }
                push(&mut snap, r, c);
            };
            // Baseline: 40 CI runs, every 4th hit by `old`; five labeler runs per CI run.
            for i in 0..40 {
                let at = t0() + TimeDelta::hours(8 * i as i64);
                add(i, at, false, (i % 4 == 0).then(|| hit("old")));
                for k in 0..5 {
                    add(
                        1000 + 5 * i + k,
                        at + TimeDelta::minutes(k as i64),
                        true,
                        None,
                    );
                }
            }
            // Period: 4 CI runs, the last hit by `brand-new`, and 40 labeler runs.
            for i in 40..44 {
                let at = period_since + TimeDelta::hours(5 * (i - 40) as i64);
                add(i, at, false, (i == 43).then(|| hit("brand-new")));
                for k in 0..10 {
                    add(
                        1000 + 10 * i + k,
                        at + TimeDelta::minutes(k as i64),
                        true,
                        None,
                    );
                }
            }
            let info = |s: &str| SignatureInfo {
                id: id(s),
                title: s.into(),
                paths: Vec::new(),
                issue: None,
            };
            let infos = vec![info("old"), info("brand-new")];
            let data = nightly(
                &snap,
                &infos,
                &AnalysisConfig::default(),
                t0(),
                period_since,
                until,
            );
            assert_eq!(data.period.runs_total, 44);
            // `old`: 10 of 40 CI runs, then none of 4: one hit expected, not "fading" (over all
            // 44 runs of the period, 11 would have been expected).
            assert!(
                data.changes.iter().all(|c| c.id.0 != "old"),
                "{:?}",
                data.changes
            );
            // `brand-new` against the 40 CI runs of the baseline, not its 240 runs.
            assert_eq!(data.changes.len(), 1, "{:?}", data.changes);
            let new = &data.changes[0];
            assert_eq!(
                (new.id.0.as_str(), new.kind),
                ("brand-new", ChangeKind::New)
            );
            assert_eq!(new.period, Count { hits: 1, runs: 4 });
            assert_eq!(new.baseline, Count { hits: 0, runs: 40 });
            assert!((new.probability - binomial_tail(4, 1, 0.5 / 41.0)).abs() < 1e-12);
        }
    }
}
