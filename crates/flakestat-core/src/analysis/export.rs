//! The store's window as five flat tables for warehouses (`flakestat export`): runs, job
//! executions, signature hits, pull requests and the bisection's suspects. Pure: a `Snapshot`,
//! the signatures and the `ReportData` the same snapshot gives come in, rows go out, each table
//! sorted by its ids so that the same store gives the same rows. What the analysis decides (which
//! hits it counts, which PRs are related to a signature, the ranked suspects) is taken from it,
//! never decided again here, so a warehouse query gives the report's figures.

use std::collections::{BTreeMap, BTreeSet};

use super::prs::{self, ForkHeads, PathMatcher};
use super::{JobVerdict, ReportData, in_survey_window, verdict};
use crate::model::{
    Job, JobId, LogStatus, PrNumber, Run, RunId, Sha, SignatureInfo, SignatureMatch, Snapshot,
    Timestamp,
};

/// Everything `flakestat export` writes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExportData {
    /// Matrix dimension names found in the window's job names, sorted: one nullable column
    /// each in the jobs table, in this order.
    pub dimensions: Vec<String>,
    /// Runs created in the survey window, by id.
    pub runs: Vec<RunRow>,
    /// Every job execution (every attempt) of those runs, by (run, attempt, job).
    pub jobs: Vec<JobRow>,
    /// One row per (signature, job execution) it matched, by (signature, run, attempt, job).
    pub hits: Vec<HitRow>,
    /// Every pull request the store knows, by number.
    pub pulls: Vec<PullRow>,
    /// Per signature, the bisection's suspects, best first.
    pub suspects: Vec<SuspectRow>,
    /// Every green job execution of the window whose log `--green-logs` read, by (run, attempt,
    /// job): what its runner said and what its retries cost. Empty when none was read (and then
    /// no file is written for it).
    pub green: Vec<GreenJobRow>,
}

/// One green job execution whose log was read (`--green-logs`).
#[derive(Debug, Clone, PartialEq)]
pub struct GreenJobRow {
    pub job_id: JobId,
    pub run_id: RunId,
    pub attempt: u32,
    pub workflow: String,
    pub job: String,
    /// Tests passed, as the runner's summary says; `None` when none said.
    pub passed: Option<u64>,
    /// Retries the runner made.
    pub retries: u64,
    /// The job's runner minutes and those spent on retries (`analysis::hidden`); `None`
    /// without a duration or a passed count.
    pub minutes: Option<f64>,
    pub retry_minutes: Option<f64>,
    /// The tests retried to a pass, by id.
    pub retried: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: RunId,
    /// The latest attempt's number.
    pub attempts: u32,
    pub workflow: String,
    pub event: String,
    pub branch: Option<String>,
    pub head_sha: Sha,
    pub head_repository: Option<String>,
    /// The run's PR: named by GitHub, by the branch conventions, or found through the fork's
    /// head; `None` when not a PR's or not known.
    pub pr: Option<PrNumber>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// The latest attempt's conclusion.
    pub conclusion: Option<String>,
    pub url: String,
    /// A job of some attempt failed.
    pub failed: bool,
    /// A signature matched a failed job of some attempt.
    pub hit: bool,
}

/// What is known of a failed job execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A signature matched its log.
    Hit,
    /// Its log was read and matched no signature.
    Unclassified,
    /// Its log cannot be read (expired, missing, not downloaded, refused, not classified yet).
    Unknown,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Hit => "hit",
            Outcome::Unclassified => "unclassified",
            Outcome::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    pub id: JobId,
    pub run_id: RunId,
    pub attempt: u32,
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub created_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
    /// `completed_at − started_at` in whole seconds, when both are known.
    pub duration_seconds: Option<u64>,
    pub labels: Vec<String>,
    /// On a GPU runner (`[cost] gpu_labels`).
    pub gpu: bool,
    /// Aligned with `ExportData::dimensions`.
    pub dimensions: Vec<Option<String>>,
    /// `None` for a job that did not fail.
    pub outcome: Option<Outcome>,
    /// What the store knows of a failed job's log (`stored`, `expired`, `missing`, `pending`,
    /// `mismatched`, `unavailable`); `None` for a job that did not fail or with no record.
    pub log: Option<&'static str>,
    /// Every signature that matched, sorted.
    pub signatures: Vec<String>,
    /// Where it ran (`analysis::hosts`): the runner the jobs listing names, its pool and host
    /// (`None` where it cannot be told), and what its log's preamble says.
    pub place: PlaceRow,
}

/// Where one job ran, as export columns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlaceRow {
    pub runner_name: Option<String>,
    pub runner_group: Option<String>,
    pub pool: Option<String>,
    pub host: Option<String>,
    pub image: Option<String>,
    pub runner_version: Option<String>,
    pub driver: Option<String>,
    pub gpu_model: Option<String>,
}

impl PlaceRow {
    fn of(job: &Job, snapshot: &Snapshot) -> PlaceRow {
        let placement = snapshot.placements.get(&job.id);
        let place = super::hosts::place_job(job, placement);
        let preamble = placement.and_then(|p| p.preamble.as_ref());
        PlaceRow {
            runner_name: placement.and_then(|p| p.runner.name.clone()),
            runner_group: placement.and_then(|p| p.runner.group.clone()),
            pool: place.as_ref().map(|p| p.pool.clone()),
            host: place.as_ref().and_then(|p| p.host.clone()),
            image: place.as_ref().and_then(|p| p.image.clone()),
            runner_version: preamble.and_then(|p| p.runner_version.clone()),
            driver: place.as_ref().and_then(|p| p.driver.clone()),
            gpu_model: place.and_then(|p| p.gpu),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct HitRow {
    pub signature: String,
    pub job_id: JobId,
    pub run_id: RunId,
    pub attempt: u32,
    /// The first matching line, 1-based in the original log.
    pub line: u64,
    /// Matching lines in the log.
    pub lines: u64,
    /// The first matching line, normalized.
    pub text: String,
    pub step: Option<String>,
    /// The first test id the signature extracted (sorted), `None` when it extracted none.
    pub test: Option<String>,
    pub tests: Vec<String>,
    /// Counted in the report's figures (`jobs_hit`, `runs_hit`, `hits[]`).
    pub counted: bool,
    /// Why not, when not counted: the related PR, or the PR that cannot be found.
    pub left_out: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PullRow {
    pub number: PrNumber,
    pub title: String,
    pub state: String,
    pub head_repository: Option<String>,
    pub head_branch: String,
    pub head_sha: Option<Sha>,
    pub base: String,
    pub created_at: Option<Timestamp>,
    pub merged_at: Option<Timestamp>,
    pub merge_commit: Option<Sha>,
    pub url: String,
    /// Changed files, when fetched.
    pub files: Option<u64>,
    /// Signatures whose `paths` a changed file matches (the PR's runs are left out of their
    /// counts); `None` when the changed files are not known.
    pub related_signatures: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SuspectRow {
    pub signature: String,
    /// 1 = the most likely.
    pub rank: u32,
    /// `None` for a direct push.
    pub pr: Option<PrNumber>,
    pub title: String,
    pub url: Option<String>,
    pub merged_at: Timestamp,
    pub sha: Sha,
    pub touches_paths: Option<bool>,
    pub touches_tests: Option<bool>,
    pub clean_runs_after: u64,
    pub unknown_runs_after: u64,
    pub clean_runs_before: u64,
    pub likelihood: f64,
    pub posterior: f64,
}

fn log_status_name(status: LogStatus) -> &'static str {
    match status {
        LogStatus::Stored => "stored",
        LogStatus::Expired => "expired",
        LogStatus::Missing => "missing",
        LogStatus::Pending => "pending",
        LogStatus::Mismatched => "mismatched",
        LogStatus::Unavailable => "unavailable",
    }
}

/// The five tables of `snapshot`'s survey window. `data` is `analyze(snapshot, signatures,
/// config)` with no focus: every signature's counted hits and suspects come from it.
pub fn export(
    snapshot: &Snapshot,
    signatures: &[SignatureInfo],
    config: &super::AnalysisConfig,
    data: &ReportData,
) -> ExportData {
    let window: Vec<&Run> = snapshot
        .runs
        .iter()
        .filter(|r| in_survey_window(snapshot, r.created_at))
        .collect();
    let window_ids: BTreeSet<RunId> = window.iter().map(|r| r.id).collect();
    let mut jobs: Vec<&Job> = snapshot
        .jobs
        .iter()
        .filter(|j| window_ids.contains(&j.run_id))
        .collect();
    jobs.sort_by_key(|j| (j.run_id, j.run_attempt, j.id));

    let decided = Decided::of(data);
    let executions = Executions::of(snapshot, config, &jobs, &decided);
    let runs = run_rows(snapshot, config, &window, &executions);
    ExportData {
        dimensions: executions.dimensions,
        runs,
        jobs: executions.jobs,
        hits: executions.hits,
        pulls: pull_rows(snapshot, signatures),
        suspects: suspect_rows(data),
        green: green_rows(snapshot, &window, &jobs),
    }
}

/// Counted hits and why the others were left out, as the analysis decided.
struct Decided<'a> {
    counted: BTreeSet<(&'a str, JobId)>,
    left_out: BTreeMap<(&'a str, RunId), &'a str>,
}

impl<'a> Decided<'a> {
    fn of(data: &'a ReportData) -> Self {
        let mut counted: BTreeSet<(&str, JobId)> = BTreeSet::new();
        let mut left_out: BTreeMap<(&str, RunId), &str> = BTreeMap::new();
        for s in &data.signatures {
            counted.extend(s.hits.iter().map(|h| (s.id.0.as_str(), h.job_id)));
            for r in &s.excluded_runs {
                left_out.insert((s.id.0.as_str(), r.run_id), r.reason.as_str());
            }
            for r in &s.unknown_runs {
                left_out.insert((s.id.0.as_str(), r.run_id), r.reason.as_str());
            }
        }
        Decided { counted, left_out }
    }

    /// The hit of `m` in `job`: counted, or why not.
    fn hit_row(&self, job: &Job, m: &SignatureMatch) -> HitRow {
        let id = m.signature.0.as_str();
        let is_counted = self.counted.contains(&(id, job.id));
        HitRow {
            signature: m.signature.0.clone(),
            job_id: job.id,
            run_id: job.run_id,
            attempt: job.run_attempt,
            line: m.line,
            lines: m.count,
            text: m.text.clone(),
            step: m.step.clone(),
            test: m.tests.iter().next().cloned(),
            tests: m.tests.iter().cloned().collect(),
            counted: is_counted,
            left_out: if is_counted {
                None
            } else {
                Some(
                    self.left_out
                        .get(&(id, job.run_id))
                        .map(|r| r.to_string())
                        .unwrap_or_else(|| "the store does not hold the run whole yet".to_string()),
                )
            },
        }
    }
}

/// The job executions' rows and their hits, with the runs that failed and were hit.
struct Executions {
    dimensions: Vec<String>,
    jobs: Vec<JobRow>,
    hits: Vec<HitRow>,
    failed_runs: BTreeSet<RunId>,
    hit_runs: BTreeSet<RunId>,
}

impl Executions {
    fn of(
        snapshot: &Snapshot,
        config: &super::AnalysisConfig,
        jobs: &[&Job],
        decided: &Decided<'_>,
    ) -> Self {
        let parsed: Vec<crate::matrix::Dimensions> =
            jobs.iter().map(|j| config.matrix.parse(&j.name)).collect();
        let dimensions: Vec<String> = parsed
            .iter()
            .flat_map(|d| d.keys().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut out = Executions {
            dimensions,
            jobs: Vec::with_capacity(jobs.len()),
            hits: Vec::new(),
            failed_runs: BTreeSet::new(),
            hit_runs: BTreeSet::new(),
        };
        for (job, dims) in jobs.iter().zip(&parsed) {
            out.add(snapshot, config, job, dims, decided);
        }
        out.hits.sort_by(|a, b| {
            (&a.signature, a.run_id, a.attempt, a.job_id).cmp(&(
                &b.signature,
                b.run_id,
                b.attempt,
                b.job_id,
            ))
        });
        out
    }

    /// One job execution's row and hits.
    fn add(
        &mut self,
        snapshot: &Snapshot,
        config: &super::AnalysisConfig,
        job: &Job,
        dims: &crate::matrix::Dimensions,
        decided: &Decided<'_>,
    ) {
        let failed = job.is_failed();
        let mut matched = Vec::new();
        let outcome = failed.then(|| match verdict(snapshot, job.id) {
            JobVerdict::Classified(c) if !c.is_unclassified() => {
                matched.extend(c.matches.iter());
                Outcome::Hit
            }
            JobVerdict::Classified(_) => Outcome::Unclassified,
            JobVerdict::Gap(_) => Outcome::Unknown,
        });
        if failed {
            self.failed_runs.insert(job.run_id);
        }
        if !matched.is_empty() {
            self.hit_runs.insert(job.run_id);
        }
        for m in &matched {
            self.hits.push(decided.hit_row(job, m));
        }
        let mut signatures: Vec<String> = matched.iter().map(|m| m.signature.0.clone()).collect();
        signatures.sort();
        self.jobs.push(JobRow {
            id: job.id,
            run_id: job.run_id,
            attempt: job.run_attempt,
            name: job.name.clone(),
            status: job.status.to_string(),
            conclusion: job.conclusion.as_ref().map(ToString::to_string),
            created_at: job.created_at,
            started_at: job.started_at,
            completed_at: job.completed_at,
            duration_seconds: super::cost::duration_seconds(job),
            labels: job.labels.clone(),
            gpu: config.cost.is_gpu(&job.labels),
            dimensions: self
                .dimensions
                .iter()
                .map(|d| dims.get(d).cloned())
                .collect(),
            outcome,
            log: if failed {
                snapshot.logs.get(&job.id).copied().map(log_status_name)
            } else {
                None
            },
            signatures,
            place: PlaceRow::of(job, snapshot),
        });
    }
}

/// The window's runs, by id.
fn run_rows(
    snapshot: &Snapshot,
    config: &super::AnalysisConfig,
    window: &[&Run],
    executions: &Executions,
) -> Vec<RunRow> {
    let forks = ForkHeads::new(&snapshot.pulls);
    let mut runs: Vec<RunRow> = window
        .iter()
        .map(|run| RunRow {
            id: run.id,
            attempts: run.run_attempt,
            workflow: run.workflow_name.clone(),
            event: run.event.to_string(),
            branch: run.head_branch.clone(),
            head_sha: run.head_sha.clone(),
            head_repository: run.head_repository.clone(),
            pr: prs::resolve_origin(
                run,
                &snapshot.default_branch,
                &config.pr_conventions,
                &forks,
            )
            .pr(),
            created_at: run.created_at,
            updated_at: run.updated_at,
            conclusion: run.conclusion.as_ref().map(ToString::to_string),
            url: run.html_url.clone(),
            failed: executions.failed_runs.contains(&run.id),
            hit: executions.hit_runs.contains(&run.id),
        })
        .collect();
    runs.sort_by_key(|r| r.id);
    runs
}

/// Every pull request the store knows, with the signatures its changed files relate it to.
fn pull_rows(snapshot: &Snapshot, signatures: &[SignatureInfo]) -> Vec<PullRow> {
    let matchers: Vec<(&str, PathMatcher)> = signatures
        .iter()
        .map(|s| (s.id.0.as_str(), PathMatcher::new(&s.paths)))
        .collect();
    snapshot
        .pulls
        .values()
        .map(|p| PullRow {
            number: p.number,
            title: p.title.clone(),
            state: p.state.clone(),
            head_repository: p.head.as_ref().and_then(|h| h.repo.clone()),
            head_branch: p.head_ref.clone(),
            head_sha: p.head.as_ref().map(|h| h.sha.clone()),
            base: p.base_ref.clone(),
            created_at: p.head.as_ref().map(|h| h.created_at),
            merged_at: p.merged_at,
            merge_commit: p.merge_commit_sha.clone(),
            url: p.html_url.clone(),
            files: p.files.as_ref().map(|f| f.len() as u64),
            related_signatures: p.files.as_ref().map(|files| {
                matchers
                    .iter()
                    .filter(|(_, m)| m.first_match(files).is_some())
                    .map(|(id, _)| id.to_string())
                    .collect()
            }),
        })
        .collect()
}

/// Per signature, the bisection's suspects, best first.
fn suspect_rows(data: &ReportData) -> Vec<SuspectRow> {
    let mut suspects = Vec::new();
    for s in &data.signatures {
        for (i, x) in s.bisection.iter().flat_map(|b| &b.suspects).enumerate() {
            suspects.push(SuspectRow {
                signature: s.id.0.clone(),
                rank: i as u32 + 1,
                pr: x.pr,
                title: x.title.clone(),
                url: x.url.clone(),
                merged_at: x.merged_at,
                sha: x.sha.clone(),
                touches_paths: x.touches_paths,
                touches_tests: x.touches_tests,
                clean_runs_after: x.clean_runs_after,
                unknown_runs_after: x.unknown_runs_after,
                clean_runs_before: x.clean_runs_before,
                likelihood: x.likelihood,
                posterior: x.posterior,
            });
        }
    }
    suspects.sort_by(|a, b| (&a.signature, a.rank).cmp(&(&b.signature, b.rank)));
    suspects
}

/// The green job executions of the window whose log was read, in the jobs' order.
fn green_rows(snapshot: &Snapshot, window: &[&Run], jobs: &[&Job]) -> Vec<GreenJobRow> {
    let workflows: std::collections::BTreeMap<RunId, &str> = window
        .iter()
        .map(|r| (r.id, r.workflow_name.as_str()))
        .collect();
    jobs.iter()
        .filter_map(|j| {
            let g = snapshot.green.get(&j.id)?;
            let cost = super::hidden::retry_minutes(j, g);
            Some(GreenJobRow {
                job_id: j.id,
                run_id: j.run_id,
                attempt: j.run_attempt,
                workflow: workflows
                    .get(&j.run_id)
                    .copied()
                    .unwrap_or_default()
                    .to_string(),
                job: j.name.clone(),
                passed: g.passed,
                retries: g.retries,
                minutes: cost.map(|c| c.0),
                retry_minutes: cost.map(|c| c.1),
                retried: g.retried.iter().map(|r| r.id.clone()).collect(),
            })
        })
        .collect()
}
