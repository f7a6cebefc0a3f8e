//! One pull request's red checks explained: every failed job of the PR's runs labelled from
//! what the rest of the window says (`flakestat pr`). A pure function of the snapshot (which
//! holds the PR's runs beside the window's) and the window's [`ReportData`]: the signature
//! analysis (its hits, impact window and bisection) is the evidence, read, never redone.
//!
//! A failed job is
//! - **infrastructure** when its signature is one of the infrastructure signatures (runner lost,
//!   disk full, network), or when it ran on a host on the window's drain list (`report
//!   --hosts`' rule, [`hosts::drain_list`](super::hosts::drain_list)) whatever its log says;
//! - **broken on the default branch** when the default branch's latest completed runs of the
//!   same workflow, at or after the PR's merge base, still fail with the same signature (or the
//!   same unexplained line), so the PR inherited it; the first run of that streak is named;
//! - **known flake** when its signature hits the default branch or unrelated PRs (this PR's own
//!   runs left out) and the job ran after the flake began: its rate, the merge since which it
//!   flakes (the bisection's), the issue its signature names;
//! - **likely this PR** when nothing else in the window fails that way (or the flake had not
//!   begun when the job ran): stronger when the PR changes the signature's paths or the failing
//!   test's file;
//! - **unknown** otherwise (no log to read, or an unexplained line seen only on other PRs),
//!   with the telling line.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::prs::{ForkHeads, PathMatcher, RunOrigin, resolve_origin};
use super::unclassified::normalize_for_grouping;
use super::{AnalysisConfig, ImpactStart, JobVerdict, ReportData, SignatureReport, verdict};
use crate::model::{
    Classification, Job, JobId, PrNumber, Repo, Run, RunId, Sha, SignatureId, Snapshot, Timestamp,
};

/// The bundled signatures that name a machine's or network's trouble, not the code's.
pub const INFRASTRUCTURE_SIGNATURES: &[&str] = &["runner-lost", "disk-full", "network-error"];

/// The default branch's latest runs that must all fail the same way for it to count as broken.
pub const BROKEN_STREAK: usize = 2;

/// Which of the PR's runs to label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunSelection {
    /// The runs of the PR's latest head commit (the newest run's).
    #[default]
    LatestHead,
    /// Every run of the PR in the snapshot.
    All,
}

/// What the labelling needs besides the snapshot and the report.
#[derive(Debug, Clone)]
pub struct PrQuery {
    pub pr: PrNumber,
    pub runs: RunSelection,
    /// Signature ids that are infrastructure.
    pub infrastructure: BTreeSet<SignatureId>,
}

impl PrQuery {
    pub fn new(pr: PrNumber) -> PrQuery {
        PrQuery {
            pr,
            runs: RunSelection::LatestHead,
            infrastructure: INFRASTRUCTURE_SIGNATURES
                .iter()
                .map(|s| SignatureId((*s).to_string()))
                .collect(),
        }
    }
}

/// What a failed job is labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    KnownFlake,
    BrokenOnDefaultBranch,
    Infrastructure,
    LikelyThisPr,
    Unknown,
}

impl Label {
    /// The words every output uses.
    pub fn words(self) -> &'static str {
        match self {
            Label::KnownFlake => "known flake",
            Label::BrokenOnDefaultBranch => "broken on the default branch",
            Label::Infrastructure => "infrastructure",
            Label::LikelyThisPr => "likely this PR",
            Label::Unknown => "unknown",
        }
    }

    /// Not the PR's doing: a merge bot may go ahead.
    pub fn is_explained(self) -> bool {
        matches!(
            self,
            Label::KnownFlake | Label::BrokenOnDefaultBranch | Label::Infrastructure
        )
    }

    pub const ALL: [Label; 5] = [
        Label::KnownFlake,
        Label::BrokenOnDefaultBranch,
        Label::Infrastructure,
        Label::LikelyThisPr,
        Label::Unknown,
    ];
}

/// The merge (or first hit) since which a flake hits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Onset {
    /// The merge the bisection places it at; `None` when it could not be placed (then `at` is
    /// the first hit).
    pub pr: Option<PrNumber>,
    pub sha: Option<Sha>,
    pub at: Timestamp,
}

/// A default-branch run, as evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunRef {
    pub run_id: RunId,
    pub created_at: Timestamp,
    pub html_url: String,
}

/// The host on the window's drain list a job ran on (`report --hosts`' rule).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrainedHost {
    pub pool: String,
    pub host: String,
    /// The host's failure rate and the pool's over the window.
    pub rate: f64,
    pub pool_rate: f64,
    /// Fisher's p-value, and Bonferroni-corrected over the hosts tested.
    pub p_value: f64,
    pub p_adjusted: f64,
}

/// One failed job of the PR, labelled, with the evidence that decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelledJob {
    pub run_id: RunId,
    pub attempt: u32,
    /// Whether this is the run's latest attempt (an earlier attempt's failure was re-run).
    pub latest_attempt: bool,
    pub job_id: JobId,
    pub job: String,
    pub html_url: Option<String>,
    pub run_url: String,
    pub workflow: String,
    pub label: Label,
    pub signature: Option<SignatureId>,
    pub signature_title: Option<String>,
    /// The line that decided: the signature's match, or the first error line.
    pub line: Option<String>,
    pub tests: Vec<String>,
    /// Known flake: runs hit / runs since the onset, in percent, one decimal.
    pub rate_percent: Option<f64>,
    pub runs_hit: u64,
    pub onset: Option<Onset>,
    /// The tracking issue the signature names.
    pub issue: Option<String>,
    /// Hit runs elsewhere: the default branch's, and other PRs'.
    pub hits_default_branch: u64,
    pub hits_other_prs: u64,
    /// Broken: the first run of the default branch's failing streak, and the streak's length.
    pub broken_since: Option<RunRef>,
    pub broken_runs: u64,
    /// Likely this PR: the PR changes the signature's paths or the failing test's file (this
    /// one).
    pub touches: Option<String>,
    /// Infrastructure: the job ran on a host on the window's drain list.
    pub drained_host: Option<DrainedHost>,
    /// Why, in words.
    pub reason: String,
}

/// One of the PR's runs labelled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PrRun {
    pub run_id: RunId,
    pub workflow: String,
    pub event: String,
    pub branch: Option<String>,
    pub head_sha: Sha,
    pub attempt: u32,
    pub conclusion: Option<String>,
    pub created_at: Timestamp,
    pub html_url: String,
}

/// The window the evidence was read over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    /// Default-branch runs and other PRs' runs in the window.
    pub runs_default_branch: u64,
    pub runs_other_prs: u64,
    /// Whether the store holds the whole window (else the figures leave part of it out).
    pub complete: bool,
}

/// One PR's failed jobs explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrReport {
    pub repo: Option<Repo>,
    pub default_branch: String,
    pub pr: PrNumber,
    pub title: Option<String>,
    pub html_url: Option<String>,
    /// The head commit whose runs are labelled (`RunSelection::LatestHead`).
    pub head_sha: Option<Sha>,
    /// The PR's merge base with the default branch, and its date, when known.
    pub merge_base: Option<Sha>,
    pub merge_base_at: Option<Timestamp>,
    pub runs: Vec<PrRun>,
    /// Oldest run first, then attempt, then job name.
    pub jobs: Vec<LabelledJob>,
    pub evidence: Evidence,
}

impl PrReport {
    /// The failures of the runs' latest attempts: what blocks the PR now.
    pub fn current(&self) -> impl Iterator<Item = &LabelledJob> {
        self.jobs.iter().filter(|j| j.latest_attempt)
    }

    /// Whether every current failure is a known flake, broken on the default branch or
    /// infrastructure (true when there is none).
    pub fn all_explained(&self) -> bool {
        self.current().all(|j| j.label.is_explained())
    }

    /// Current failures per label, in `Label::ALL`'s order, zeros left out.
    pub fn counts(&self) -> Vec<(Label, u64)> {
        Label::ALL
            .iter()
            .map(|&l| (l, self.current().filter(|j| j.label == l).count() as u64))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

/// The PR's runs in the snapshot (fork runs mapped through the listed PRs), oldest first.
pub fn pr_runs<'a>(snapshot: &'a Snapshot, pr: PrNumber, config: &AnalysisConfig) -> Vec<&'a Run> {
    let forks = ForkHeads::new(&snapshot.pulls);
    let mut runs: Vec<&Run> = snapshot
        .runs
        .iter()
        .filter(|r| {
            resolve_origin(r, &snapshot.default_branch, &config.pr_conventions, &forks)
                == RunOrigin::PullRequest(pr)
        })
        .collect();
    runs.sort_by_key(|r| (r.created_at, r.id));
    runs
}

/// Labels every failed job of the PR's runs `query` selects. `report` is `analyze(snapshot)`
/// (the window's evidence).
pub fn label_pr(
    snapshot: &Snapshot,
    report: &ReportData,
    query: &PrQuery,
    config: &AnalysisConfig,
) -> PrReport {
    let all = pr_runs(snapshot, query.pr, config);
    let head_sha = all.last().map(|r| r.head_sha.clone());
    let chosen: Vec<&Run> = match query.runs {
        RunSelection::All => all,
        RunSelection::LatestHead => all
            .into_iter()
            .filter(|r| Some(&r.head_sha) == head_sha.as_ref())
            .collect(),
    };
    let pull = snapshot.pulls.get(&query.pr);
    let (merge_base, merge_base_at) = merge_base(snapshot, head_sha.as_ref());
    let ctx = Context::new(snapshot, report, query, config, merge_base_at);
    let mut jobs = Vec::new();
    for run in &chosen {
        let mut failed: Vec<&Job> = snapshot
            .jobs
            .iter()
            .filter(|j| j.run_id == run.id && j.is_failed())
            .collect();
        failed.sort_by(|a, b| (a.run_attempt, &a.name, a.id).cmp(&(b.run_attempt, &b.name, b.id)));
        for job in failed {
            jobs.push(ctx.label(run, job));
        }
    }
    PrReport {
        repo: snapshot.repo.clone(),
        default_branch: snapshot.default_branch.clone(),
        pr: query.pr,
        title: pull.map(|p| p.title.clone()),
        html_url: pull.map(|p| p.html_url.clone()).filter(|u| !u.is_empty()),
        head_sha,
        merge_base,
        merge_base_at,
        runs: chosen
            .iter()
            .map(|r| PrRun {
                run_id: r.id,
                workflow: r.workflow_name.clone(),
                event: r.event.as_str().to_string(),
                branch: r.head_branch.clone(),
                head_sha: r.head_sha.clone(),
                attempt: r.run_attempt,
                conclusion: r.conclusion.as_ref().map(|c| c.as_str().to_string()),
                created_at: r.created_at,
                html_url: r.html_url.clone(),
            })
            .collect(),
        jobs,
        evidence: ctx.evidence(),
    }
}

/// The head's merge base (`compare`'s, stored as a fork point) and its commit date.
fn merge_base(snapshot: &Snapshot, head: Option<&Sha>) -> (Option<Sha>, Option<Timestamp>) {
    let Some(base) = head.and_then(|h| snapshot.fork_points.get(h)) else {
        return (None, None);
    };
    let at = snapshot
        .mainline
        .iter()
        .find(|c| c.sha == *base)
        .map(|c| c.committed_at);
    (Some(base.clone()), at)
}

/// What every job's label reads.
struct Context<'a> {
    snapshot: &'a Snapshot,
    report: &'a ReportData,
    query: &'a PrQuery,
    origins: BTreeMap<RunId, RunOrigin>,
    files: Option<&'a [String]>,
    merge_base_at: Option<Timestamp>,
    /// The window's drain list, by pool and host.
    drained: BTreeMap<(String, String), super::hosts::Drain>,
}

impl<'a> Context<'a> {
    fn new(
        snapshot: &'a Snapshot,
        report: &'a ReportData,
        query: &'a PrQuery,
        config: &AnalysisConfig,
        merge_base_at: Option<Timestamp>,
    ) -> Context<'a> {
        let forks = ForkHeads::new(&snapshot.pulls);
        let origins = snapshot
            .runs
            .iter()
            .map(|r| {
                let origin =
                    resolve_origin(r, &snapshot.default_branch, &config.pr_conventions, &forks);
                (r.id, origin)
            })
            .collect();
        Context {
            snapshot,
            report,
            query,
            origins,
            files: snapshot
                .pulls
                .get(&query.pr)
                .and_then(|p| p.files.as_deref()),
            merge_base_at,
            drained: super::hosts::drain_list(snapshot)
                .into_iter()
                .map(|d| ((d.pool.clone(), d.host.clone()), d))
                .collect(),
        }
    }

    /// The drain-list host `job` ran on, if it ran on one.
    fn drained_host(&self, job: &Job) -> Option<DrainedHost> {
        let place = super::hosts::place_job(job, self.snapshot.placements.get(&job.id))?;
        let d = self.drained.get(&(place.pool, place.host?))?;
        Some(DrainedHost {
            pool: d.pool.clone(),
            host: d.host.clone(),
            rate: d.rate,
            pool_rate: d.pool_rate,
            p_value: d.p_value,
            p_adjusted: d.p_adjusted,
        })
    }

    fn evidence(&self) -> Evidence {
        let in_window = |r: &&Run| super::in_survey_window(self.snapshot, r.created_at);
        let count = |f: &dyn Fn(RunOrigin) -> bool| {
            self.snapshot
                .runs
                .iter()
                .filter(in_window)
                .filter(|r| self.origins.get(&r.id).is_some_and(|o| f(*o)))
                .count() as u64
        };
        let pr = self.query.pr;
        Evidence {
            since: self.snapshot.since,
            until: self.snapshot.until,
            runs_default_branch: count(&|o| o == RunOrigin::DefaultBranch),
            runs_other_prs: count(&|o| matches!(o, RunOrigin::PullRequest(n) if n != pr)),
            complete: self.report.completeness.is_complete(),
        }
    }

    fn label(&self, run: &Run, job: &Job) -> LabelledJob {
        let mut out = LabelledJob {
            run_id: run.id,
            attempt: job.run_attempt,
            latest_attempt: job.run_attempt >= run.run_attempt,
            job_id: job.id,
            job: job.name.clone(),
            html_url: job.html_url.clone(),
            run_url: run.html_url.clone(),
            workflow: run.workflow_name.clone(),
            label: Label::Unknown,
            signature: None,
            signature_title: None,
            line: None,
            tests: Vec::new(),
            rate_percent: None,
            runs_hit: 0,
            onset: None,
            issue: None,
            hits_default_branch: 0,
            hits_other_prs: 0,
            broken_since: None,
            broken_runs: 0,
            touches: None,
            drained_host: None,
            reason: String::new(),
        };
        // A job on a host the window's drain list names is the machine's failure whatever its
        // log says: labelled infrastructure before any signature's evidence is read.
        let drained = self.drained_host(job);
        match verdict(self.snapshot, job.id) {
            JobVerdict::Gap(reason) => {
                out.reason = format!("{}: nothing to read", reason.describe());
            }
            JobVerdict::Classified(c) => match c.matches.first() {
                Some(m) => {
                    out.signature = Some(m.signature.clone());
                    out.line = Some(m.text.clone());
                    out.tests = c.matches.iter().flat_map(|m| m.tests.clone()).collect();
                    out.tests.sort();
                    out.tests.dedup();
                    if drained.is_none() {
                        self.label_signature(run, &mut out);
                    }
                }
                None => {
                    out.line = c.error_lines.first().map(|l| l.text.clone());
                    out.tests = c.tests.failed.iter().map(|t| t.id.clone()).collect();
                    if drained.is_none() {
                        self.label_unexplained(run, job, c, &mut out);
                    }
                }
            },
        }
        if let Some(d) = drained {
            out.label = Label::Infrastructure;
            out.reason = format!(
                "ran on host {} of pool {}, which is on the drain list (it failed {:.0}% of its jobs against the pool's {:.0}%, p = {}): the machine's failure, not the code's",
                d.host,
                d.pool,
                d.rate * 100.0,
                d.pool_rate * 100.0,
                super::hosts::p_words(d.p_adjusted)
            );
            out.drained_host = Some(d);
        }
        out
    }

    fn label_signature(&self, run: &Run, out: &mut LabelledJob) {
        let id = out.signature.clone().expect("set by the caller");
        let report = self.report.signatures.iter().find(|s| s.id == id);
        if let Some(r) = report {
            out.signature_title = Some(r.title.clone());
            out.issue = r.issue.clone();
        }
        if self.query.infrastructure.contains(&id) {
            out.label = Label::Infrastructure;
            out.reason = "an infrastructure failure, not the code's".to_string();
            return;
        }
        let Some(report) = report else {
            out.label = Label::Unknown;
            out.reason = "not among the signatures analysed".to_string();
            return;
        };
        let hits = |f: &dyn Fn(&super::Hit) -> bool| {
            report
                .hits
                .iter()
                .filter(|h| f(h))
                .map(|h| h.run_id)
                .collect::<BTreeSet<RunId>>()
                .len() as u64
        };
        let pr = self.query.pr;
        out.hits_default_branch = hits(&|h| h.origin == super::HitOrigin::DefaultBranch);
        out.hits_other_prs =
            hits(&|h| h.origin == super::HitOrigin::PullRequest && h.pr.is_some_and(|n| n != pr));
        if let Some((first, streak)) = self.broken_streak(run, |job| {
            self.snapshot
                .classifications
                .get(&job)
                .is_some_and(|c| c.matches.iter().any(|m| m.signature == id))
        }) {
            out.label = Label::BrokenOnDefaultBranch;
            out.broken_runs = streak;
            out.reason = format!(
                "the default branch's latest {streak} runs of this workflow fail this way too, since run {}",
                first.run_id
            );
            out.broken_since = Some(first);
            return;
        }
        let onset = onset(report);
        let began = onset.as_ref().is_some_and(|o| run.created_at >= o.at);
        let touches = self.touches(report, &out.tests);
        if out.hits_default_branch + out.hits_other_prs > 0 && began {
            out.label = Label::KnownFlake;
            out.rate_percent = report.impact_window.as_ref().and_then(|w| w.percent);
            out.runs_hit = report.runs_hit;
            out.reason = format!(
                "hits {} default-branch runs and {} other PRs' runs{}",
                out.hits_default_branch,
                out.hits_other_prs,
                match &touches {
                    Some(file) => format!(" (this PR also changes {file})"),
                    None => String::new(),
                }
            );
            out.onset = onset;
            out.touches = touches;
            return;
        }
        out.label = Label::LikelyThisPr;
        out.reason = if out.hits_default_branch + out.hits_other_prs == 0 {
            "fails nowhere else in the window".to_string()
        } else {
            let at = onset.as_ref().map(|o| o.at.format("%Y-%m-%d %H:%M UTC"));
            format!(
                "hits elsewhere only from {}, after this run",
                at.map(|t| t.to_string()).unwrap_or_default()
            )
        };
        if let Some(file) = &touches {
            out.reason.push_str(&format!("; this PR changes {file}"));
        }
        out.touches = touches;
    }

    /// A failure no signature explains: broken when the default branch's latest runs fail with
    /// the same telling line; unknown when other PRs show it; else likely this PR's.
    fn label_unexplained(&self, run: &Run, job: &Job, c: &Classification, out: &mut LabelledJob) {
        let Some(key) = telling_key(c) else {
            out.label = Label::Unknown;
            out.reason = "the log names no error line".to_string();
            return;
        };
        let same = |other: JobId| {
            self.snapshot
                .classifications
                .get(&other)
                .is_some_and(|o| o.is_unclassified() && telling_key(o).as_ref() == Some(&key))
        };
        if let Some((first, streak)) = self.broken_streak(run, same) {
            out.label = Label::BrokenOnDefaultBranch;
            out.broken_runs = streak;
            out.reason = format!(
                "the default branch's latest {streak} runs of this workflow fail with the same line, since run {}",
                first.run_id
            );
            out.broken_since = Some(first);
            return;
        }
        let mut default_runs = BTreeSet::new();
        let mut pr_runs = BTreeSet::new();
        for other in self.snapshot.jobs.iter().filter(|j| j.is_failed()) {
            if other.run_id == job.run_id || !same(other.id) {
                continue;
            }
            match self.origins.get(&other.run_id) {
                Some(RunOrigin::DefaultBranch) => default_runs.insert(other.run_id),
                Some(RunOrigin::PullRequest(n)) if *n != self.query.pr => {
                    pr_runs.insert(other.run_id)
                }
                _ => false,
            };
        }
        out.hits_default_branch = default_runs.len() as u64;
        out.hits_other_prs = pr_runs.len() as u64;
        if default_runs.is_empty() && pr_runs.is_empty() {
            out.label = Label::LikelyThisPr;
            out.reason =
                "no signature explains it and no other run in the window fails this way".into();
        } else {
            out.label = Label::Unknown;
            out.reason = format!(
                "no signature explains it; {} default-branch and {} other PRs' runs fail this way too",
                default_runs.len(),
                pr_runs.len()
            );
        }
    }

    /// When the default branch's latest completed runs of `run`'s workflow (at or after the
    /// merge base, in the window) all have, in their latest attempt, a failed job `fails`
    /// says yes to, at least [`BROKEN_STREAK`] of them: the first run of that streak and its
    /// length.
    fn broken_streak(&self, run: &Run, fails: impl Fn(JobId) -> bool) -> Option<(RunRef, u64)> {
        let mut main: Vec<&Run> = self
            .snapshot
            .runs
            .iter()
            .filter(|r| {
                r.workflow_id == run.workflow_id
                    && r.is_completed()
                    && self.origins.get(&r.id) == Some(&RunOrigin::DefaultBranch)
                    && self.merge_base_at.is_none_or(|t| r.created_at >= t)
                    && super::in_survey_window(self.snapshot, r.created_at)
            })
            .collect();
        main.sort_by_key(|r| (r.created_at, r.id));
        let failing = |r: &Run| {
            self.snapshot.jobs.iter().any(|j| {
                j.run_id == r.id && j.run_attempt == r.run_attempt && j.is_failed() && fails(j.id)
            })
        };
        let streak: Vec<&&Run> = main.iter().rev().take_while(|r| failing(r)).collect();
        if streak.len() < BROKEN_STREAK {
            return None;
        }
        let first = streak.last().expect("at least BROKEN_STREAK");
        Some((
            RunRef {
                run_id: first.id,
                created_at: first.created_at,
                html_url: first.html_url.clone(),
            },
            streak.len() as u64,
        ))
    }

    /// The PR's changed file that matches the signature's paths or holds a failing test.
    fn touches(&self, report: &SignatureReport, tests: &[String]) -> Option<String> {
        let files = self.files?;
        if let Some((file, _)) = PathMatcher::new(&report.paths).first_match(files) {
            return Some(file.to_string());
        }
        let test_files: BTreeSet<&str> = tests
            .iter()
            .filter_map(|t| t.split("::").next())
            .filter(|f| f.ends_with(".py") || f.contains('/'))
            .collect();
        files
            .iter()
            .find(|f| {
                test_files
                    .iter()
                    .any(|t| f.as_str() == *t || f.ends_with(&format!("/{t}")))
            })
            .cloned()
    }
}

/// Since when a signature flakes: the merge the bisection placed (the impact window's start),
/// else its first counted hit.
fn onset(report: &SignatureReport) -> Option<Onset> {
    let window = report.impact_window.as_ref()?;
    let suspect = match window.starts_at {
        ImpactStart::Merge => report
            .bisection
            .as_ref()
            .and_then(|b| b.suspects.first())
            .filter(|s| s.merged_at == window.start),
        ImpactStart::FirstHit => None,
    };
    Some(Onset {
        pr: suspect.and_then(|s| s.pr),
        sha: suspect.map(|s| s.sha.clone()),
        at: window.start,
    })
}

/// The telling line of an unexplained failure, masked as the unclassified groups mask it.
fn telling_key(c: &Classification) -> Option<String> {
    c.error_lines
        .first()
        .map(|l| normalize_for_grouping(&l.text))
}

/// What re-running would likely do, in words: "re-run: known flake, 21% of runs hit".
pub fn rerun_advice(job: &LabelledJob) -> String {
    match job.label {
        Label::KnownFlake => match job.rate_percent {
            Some(p) => format!("re-run: known flake, {p:.0}% of runs hit"),
            None => "re-run: known flake".to_string(),
        },
        Label::Infrastructure => "re-run: infrastructure, likely passes".to_string(),
        Label::BrokenOnDefaultBranch => {
            "re-running will not help: broken on the default branch; rebase once it is fixed"
                .to_string()
        }
        Label::LikelyThisPr => "re-running will not help: look at this PR's change".to_string(),
        Label::Unknown => "unknown: read the log".to_string(),
    }
}
