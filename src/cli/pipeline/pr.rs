//! The steps `pr` and `serve --pr-comments` / `--pr-checks` share: one PR's failed jobs
//! labelled from the store (`analysis::pr`), and the PR's one comment or check run written.

use super::{SharedStore, Signatures};
use crate::analysis::pr::{PrQuery, PrReport, RunSelection, label_pr, pr_runs};
use crate::analysis::{self, AnalysisConfig};
use crate::cli::error::CliError;
use crate::fetch::ClientConfig;
use crate::fetch::checks::{CheckOutput, CheckPosted, CheckRunner, CheckTarget};
use crate::fetch::comments::{CommentTarget, Commenter, Posted};
use crate::model::{IssueNumber, PrNumber, Repo, Timestamp};
use crate::report::pr as render_pr;

/// The check run's name.
pub const CHECK_NAME: &str = "flakestat";

/// What to label: which PR, over which window of evidence.
pub struct PrWindow<'a> {
    pub repo: &'a Repo,
    pub pr: PrNumber,
    pub since: Timestamp,
    pub until: Timestamp,
    /// When the oldest run to label was created, when known (the window reaches back to it).
    pub oldest: Option<Timestamp>,
    pub runs: RunSelection,
}

/// The PR's failed jobs labelled from what the store holds (stored logs the signatures have
/// not seen classified first).
pub fn label_stored(
    store: &SharedStore,
    window: &PrWindow<'_>,
    signatures: &Signatures,
    config: &AnalysisConfig,
) -> Result<PrReport, CliError> {
    let repo = window.repo;
    super::reclassify(store, repo, signatures)?;
    let probe = super::load_snapshot(store, repo, window.since, window.until, signatures)?;
    let oldest = window.oldest.or_else(|| {
        pr_runs(&probe, window.pr, config)
            .first()
            .map(|r| r.created_at)
    });
    let snapshot = match oldest {
        Some(t) if t < window.since => {
            super::load_snapshot(store, repo, t, window.until, signatures)?
        }
        _ => probe,
    };
    let data = analysis::analyze(&snapshot, &signatures.infos, config);
    let mut query = PrQuery::new(window.pr);
    query.runs = window.runs;
    Ok(label_pr(&snapshot, &data, &query, config))
}

/// Creates or edits the PR's one comment (found by its marker).
pub fn post_comment(
    config: ClientConfig,
    repo: &Repo,
    report: &PrReport,
) -> Result<(CommentTarget, Posted), CliError> {
    let commenter = Commenter::new(config).map_err(|e| CliError::NotPosted(Box::new(e.into())))?;
    let target = CommentTarget {
        repo: repo.clone(),
        issue: IssueNumber(report.pr.0),
    };
    let marker = render_pr::marker(Some(repo), report);
    let body = render_pr::render_comment(report, &marker);
    let posted = commenter.upsert(&target, &marker, &body)?;
    Ok((target, posted))
}

/// Creates or edits the check run [`CHECK_NAME`] on the PR's head commit; `None` when the PR
/// has no run (no commit to put it on).
pub fn put_check_run(
    config: ClientConfig,
    repo: &Repo,
    report: &PrReport,
) -> Result<Option<(CheckTarget, CheckPosted)>, CliError> {
    let Some(head) = report.head_sha.clone() else {
        return Ok(None);
    };
    let runner = CheckRunner::new(config).map_err(|e| CliError::NotPosted(Box::new(e.into())))?;
    let target = CheckTarget {
        repo: repo.clone(),
        head_sha: head,
        name: CHECK_NAME.to_string(),
    };
    let output = CheckOutput {
        conclusion: if report.all_explained() {
            "success"
        } else {
            "neutral"
        }
        .to_string(),
        title: render_pr::summary(report).chars().take(200).collect(),
        summary: render_pr::render_check_summary(report),
    };
    let posted = runner.upsert(&target, &output)?;
    Ok(Some((target, posted)))
}

/// `serve --pr-comments` / `--pr-checks`: after a run of a PR is ingested, that PR's comment
/// and check run brought up to date. At most one write per PR per run attempt (a redelivery
/// writes nothing), and never for a fork PR's run: serve writes only to PRs whose runs name
/// them (a `pull_request` run's `pull_requests`, a mirror or merge-queue branch).
pub struct PrHook {
    pub comments: bool,
    pub checks: bool,
    /// Where writes go, with the serve's token or App.
    pub client: ClientConfig,
    /// How far back before the run the evidence is read.
    pub window: chrono::TimeDelta,
    written: std::sync::Mutex<std::collections::BTreeSet<(String, u64, u64, u32)>>,
}

impl PrHook {
    pub fn new(comments: bool, checks: bool, client: ClientConfig) -> PrHook {
        PrHook {
            comments,
            checks,
            client,
            window: chrono::TimeDelta::days(30),
            written: std::sync::Mutex::new(std::collections::BTreeSet::new()),
        }
    }

    /// After run `run` (attempt `attempt`) of `repo` was ingested: what was written, in words;
    /// `None` when the run is no PR's (or a fork's, or this attempt was written for already).
    pub fn after_ingest(
        &self,
        store: &SharedStore,
        signatures: &Signatures,
        config: &AnalysisConfig,
        (repo, run, attempt): (&Repo, crate::model::RunId, u32),
        now: Timestamp,
    ) -> Result<Option<String>, CliError> {
        let (found, default_branch) = store.blocking(|store| {
            Ok::<_, CliError>((
                store.load_runs(repo)?.remove(&run),
                store.default_branch(repo)?.unwrap_or_default(),
            ))
        })?;
        let Some(found) = found else { return Ok(None) };
        let origin = analysis::prs::run_origin(&found, &default_branch, &config.pr_conventions);
        let Some(pr) = origin.pr() else {
            return Ok(None);
        };
        let key = (repo.to_string(), pr.0, run.0, attempt);
        if !self.written.lock().expect("hook lock").insert(key) {
            return Ok(None);
        }
        let window = PrWindow {
            repo,
            pr,
            since: found.created_at - self.window,
            until: now.max(found.created_at + chrono::TimeDelta::seconds(1)),
            oldest: None,
            runs: RunSelection::LatestHead,
        };
        let report = label_stored(store, &window, signatures, config)?;
        let mut said = Vec::new();
        if self.comments {
            let (_, posted) = post_comment(self.client.clone(), repo, &report)?;
            said.push(match posted {
                Posted::Created { id, .. } => format!("created comment {id}"),
                Posted::Updated { id, .. } => format!("updated comment {id}"),
                Posted::Unchanged { id, .. } => format!("comment {id} unchanged"),
            });
        }
        if self.checks
            && let Some((_, posted)) = put_check_run(self.client.clone(), repo, &report)?
        {
            said.push(match posted {
                CheckPosted::Created { id } => format!("created check run {id}"),
                CheckPosted::Updated { id } => format!("updated check run {id}"),
                CheckPosted::Unchanged { id } => format!("check run {id} unchanged"),
            });
        }
        Ok(Some(format!(
            "PR #{pr} of {repo} after run {run} attempt {attempt}: {}",
            said.join(", ")
        )))
    }
}
