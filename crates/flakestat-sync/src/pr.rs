//! One pull request's runs into the store (`flakestat pr`): the PR (`GET /pulls/{n}`: its head,
//! fork or not, and base), its changed files, its runs in either PR style (`pull_request`
//! runs on its head branch, fork PRs' included, which name no PR; and `push` runs on the
//! mirror branches a bot copies it to, `pull-request/<N>`), its head's merge base with the
//! default branch (`compare`, asked once per head), then each chosen run through the survey's
//! [`Ingest`] (jobs, failed jobs' logs, classified), so the store gains them like any survey's.

use std::collections::BTreeSet;
use std::sync::Arc;

use http::StatusCode;

use super::ancestry::AncestrySummary;
use super::ingest::Ingest;
use super::store_error;
use super::survey::{PER_PAGE, Session, encode, parse_json, unexpected};
use super::wire::{RunList, WireFile, WirePull};
use super::{Classifier, FetchError};
use flakestat_core::model::{PrNumber, PullRequest, Repo, Run, Sha};
use flakestat_store::StoreHandle;

/// What to fetch of a PR.
#[derive(Debug, Clone)]
pub struct PrPlan {
    pub repo: Repo,
    pub pr: PrNumber,
    /// Branches a bot mirrors the PR to (`pull-request/<N>`), listed for `push` runs.
    pub mirror_branches: Vec<String>,
    /// Ingest every run of the PR listed, not only its latest head's.
    pub all_runs: bool,
}

/// What [`Session::fetch_pr`] found and stored.
#[derive(Debug, Clone)]
pub struct PrFetched {
    pub repo: Repo,
    pub default_branch: String,
    pub pull: PullRequest,
    /// The PR's runs listed (newest first, at most a page per style).
    pub runs: Vec<Run>,
    /// The runs ingested (the latest head's, or all).
    pub ingested: Vec<Run>,
    /// The head whose runs are the latest.
    pub head: Option<Sha>,
    /// Requests made, by kind.
    pub cost: PrCost,
}

/// Requests `fetch_pr` made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrCost {
    /// `GET /repos/{o}/{r}` and `GET /pulls/{n}`.
    pub pull: u64,
    pub files: u64,
    pub run_lists: u64,
    pub compare: u64,
    /// Jobs pages and log downloads of the ingest.
    pub ingest: u64,
}

impl PrCost {
    pub fn total(&self) -> u64 {
        self.pull + self.files + self.run_lists + self.compare + self.ingest
    }
}

impl Session {
    /// Fetches the PR and its runs into `store` (see the module's description).
    pub fn fetch_pr(
        &self,
        store: StoreHandle,
        classifier: Arc<dyn Classifier>,
        plan: &PrPlan,
    ) -> Result<PrFetched, FetchError> {
        let mut cost = PrCost::default();
        let (repo, default_branch) =
            self.runtime
                .block_on(super::survey::fetch_repo(&self.client, &store, &plan.repo))?;
        cost.pull += 1;
        let path = format!("/repos/{}/{}", encode(&repo.owner), encode(&repo.name));
        let pull = self.fetch_pull(&store, &repo, &path, plan.pr)?;
        cost.pull += 1;
        let mut summary = AncestrySummary::default();
        let url = self.client.url(&format!(
            "{path}/pulls/{}/files?per_page={PER_PAGE}",
            plan.pr
        ));
        if let Some(mut files) =
            self.fetch_changed_files::<Vec<WireFile>>(url, &[StatusCode::NOT_FOUND], &mut summary)?
        {
            files.sort();
            files.dedup();
            store
                .blocking(|s| s.store_pull_files(&repo, plan.pr, &files))
                .map_err(store_error)?;
        }
        cost.files += summary.files_requests;

        let mut runs = Vec::new();
        for branch in &plan.mirror_branches {
            let query = format!("branch={}", encode(branch));
            runs.extend(self.list_runs(&path, &query, &mut cost)?);
        }
        let head_repo = pull.head.as_ref().and_then(|h| h.repo.clone());
        let query = format!("event=pull_request&branch={}", encode(&pull.head_ref));
        runs.extend(
            self.list_runs(&path, &query, &mut cost)?
                .into_iter()
                .filter(|r| {
                    r.pull_requests.contains(&plan.pr)
                        || (r.pull_requests.is_empty()
                            && same_repo(r.head_repository.as_deref(), head_repo.as_deref()))
                }),
        );
        let mut seen = BTreeSet::new();
        runs.retain(|r| seen.insert(r.id));
        runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        let head = runs.first().map(|r| r.head_sha.clone());
        let ingested: Vec<Run> = runs
            .iter()
            .filter(|r| plan.all_runs || Some(&r.head_sha) == head.as_ref())
            .cloned()
            .collect();

        if let Some(head) = &head {
            self.fetch_fork_points(
                &store,
                &repo,
                &default_branch,
                &BTreeSet::from([head.clone()]),
                &mut summary,
            )?;
            cost.compare += summary.compare_requests;
        }

        let before = self.client.stats().requests;
        let ingest = Ingest::new(
            self.client.clone(),
            store,
            classifier,
            self.progress.clone(),
            repo.clone(),
        )
        .reading_junit_artifacts(self.junit.clone());
        self.runtime.block_on(async {
            for run in ingested.iter().rev() {
                ingest.ingest_run(run).await?;
            }
            Ok::<_, FetchError>(())
        })?;
        cost.ingest += self.client.stats().requests - before;
        Ok(PrFetched {
            repo,
            default_branch,
            pull,
            runs,
            ingested,
            head,
            cost,
        })
    }

    /// `GET /pulls/{n}`, stored.
    fn fetch_pull(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        path: &str,
        pr: PrNumber,
    ) -> Result<PullRequest, FetchError> {
        let url = self.client.url(&format!("{path}/pulls/{pr}"));
        let response = self.runtime.block_on(self.client.get(&url, None))?;
        if response.status == StatusCode::NOT_FOUND {
            return Err(FetchError::NotFound(format!(
                "GitHub knows no pull request #{pr} in {repo} (an issue's number, or the token cannot see it)"
            )));
        }
        if response.status != StatusCode::OK {
            return Err(unexpected(&url, &response));
        }
        let pull = parse_json::<WirePull>(&url, &response.body)?.into_model();
        store
            .blocking(|s| s.store_pulls(repo, std::slice::from_ref(&pull)))
            .map_err(store_error)?;
        Ok(pull)
    }

    /// The newest page of the repository's runs `query` filters.
    fn list_runs(
        &self,
        path: &str,
        query: &str,
        cost: &mut PrCost,
    ) -> Result<Vec<Run>, FetchError> {
        let url = self
            .client
            .url(&format!("{path}/actions/runs?{query}&per_page={PER_PAGE}"));
        let response = self.runtime.block_on(self.client.get(&url, None))?;
        cost.run_lists += 1;
        if response.status != StatusCode::OK {
            return Err(unexpected(&url, &response));
        }
        let list: RunList = parse_json(&url, &response.body)?;
        Ok(list
            .workflow_runs
            .into_iter()
            .map(|r| r.into_model())
            .collect())
    }
}

fn same_repo(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => false,
    }
}
