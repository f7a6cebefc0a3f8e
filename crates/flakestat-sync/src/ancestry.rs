//! Commit ancestry for the bisection, fetched once and kept in the store: the default branch's
//! history (`/commits?sha=<default>&since=&until=`, paginated), the fork point of each run head
//! that needs one (`/compare/<default>...<head>`: its `merge_base_commit`), and the changed files
//! of the merges that end up suspects (`/pulls/{n}/files`, or `/commits/{sha}` for a direct push).
//!
//! The caller (`cli`) decides which heads and which merges matter, from the analysis; this file
//! only asks GitHub for what the store does not know yet and counts the requests it spends.

use std::collections::BTreeSet;

use chrono::TimeDelta;
use http::StatusCode;
use serde::Deserialize;
use tokio::task::JoinSet;

use super::FetchError;
use super::pages::{End, Flow, Listing, Page};
use super::store_error;
use super::survey::{PER_PAGE, Session, encode, github_time, parse_json, unexpected};
use super::wire::WireFile;
use flakestat_core::model::{MainlineCommit, PrNumber, Repo, Sha, Timestamp};
use flakestat_store::{ListedWindow, StoreHandle, mainline_scope};

/// What fetching ancestry cost, in requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AncestrySummary {
    /// Pages of the default branch's commit list.
    pub mainline_requests: u64,
    /// Commits of the default branch stored.
    pub mainline_commits: u64,
    /// `compare` requests: one per head sha whose fork point was not known.
    pub compare_requests: u64,
    /// Heads whose fork point the store already knew (no request).
    pub fork_points_known: u64,
    /// `/pulls/{n}/files` and `/commits/{sha}` pages.
    pub files_requests: u64,
    /// Pages of `/pulls?state=all`, listed to map fork runs to their PR.
    pub pull_list_requests: u64,
}

impl AncestrySummary {
    pub fn requests(&self) -> u64 {
        self.mainline_requests
            + self.compare_requests
            + self.files_requests
            + self.pull_list_requests
    }
}

#[derive(Debug, Deserialize)]
struct WireCommit {
    sha: String,
    commit: WireCommitDetail,
    #[serde(default)]
    parents: Vec<WireParent>,
}

#[derive(Debug, Deserialize)]
struct WireParent {
    sha: String,
}

#[derive(Debug, Deserialize)]
struct WireCommitDetail {
    #[serde(default)]
    committer: Option<WireSignature>,
    #[serde(default)]
    author: Option<WireSignature>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireSignature {
    #[serde(default)]
    date: Option<Timestamp>,
}

impl WireCommit {
    fn into_model(self) -> Option<MainlineCommit> {
        let date = self
            .commit
            .committer
            .and_then(|c| c.date)
            .or(self.commit.author.and_then(|a| a.date))?;
        let title = self
            .commit
            .message
            .as_deref()
            .and_then(|m| m.lines().next())
            .unwrap_or_default()
            .trim()
            .to_string();
        Some(MainlineCommit {
            sha: Sha(self.sha),
            committed_at: date,
            title,
            files: None,
        })
    }
}

/// `GET /commits/{sha}`: only the changed files are read.
#[derive(Debug, Deserialize)]
struct WireCommitFiles {
    #[serde(default)]
    files: Vec<WireFile>,
}

impl Page for WireCommitFiles {
    type Item = WireFile;
    fn into_items(self) -> Vec<WireFile> {
        self.files
    }
}

#[derive(Debug, Deserialize)]
struct WireCompare {
    merge_base_commit: WireCommit,
}

fn repo_path(repo: &Repo) -> String {
    format!("/repos/{}/{}", encode(&repo.owner), encode(&repo.name))
}

impl Session {
    /// Lists the default branch's commits in `[since, until)` that the store has not listed yet
    /// and stores them.
    pub fn fetch_mainline(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        default_branch: &str,
        since: Timestamp,
        until: Timestamp,
        summary: &mut AncestrySummary,
    ) -> Result<(), FetchError> {
        let scope = mainline_scope(default_branch);
        let known = store
            .blocking(|s| s.load_windows(repo, &scope, since, until))
            .map_err(store_error)?;
        let mut gaps = Vec::new();
        let mut cursor = since;
        for w in known {
            if w.since > cursor {
                gaps.push((cursor, w.since));
            }
            cursor = cursor.max(w.until);
        }
        if cursor < until {
            gaps.push((cursor, until));
        }
        for (from, to) in gaps {
            // `until` is inclusive on GitHub's side.
            let last = to - TimeDelta::seconds(1);
            let url = self.client.url(&format!(
                "{}/commits?sha={}&since={}&until={}&per_page={PER_PAGE}",
                repo_path(repo),
                encode(default_branch),
                encode(&github_time(from)),
                encode(&github_time(last)),
            ));
            let mut commits = Vec::new();
            let mut parents = Vec::new();
            let walked = self.runtime.block_on(
                Listing::new(&self.client, url).walk::<Vec<WireCommit>, FetchError>(
                    unexpected,
                    |page| {
                        for item in page {
                            let ps: Vec<Sha> =
                                item.parents.iter().map(|p| Sha(p.sha.clone())).collect();
                            if let Some(commit) = item.into_model() {
                                parents.push((commit.sha.clone(), ps));
                                commits.push(commit);
                            }
                        }
                        Ok(Flow::More)
                    },
                ),
            )?;
            summary.mainline_requests += walked.pages;
            summary.mainline_commits += commits.len() as u64;
            store
                .blocking(|store| {
                    store.store_mainline(repo, &commits)?;
                    store.store_parents(repo, &parents)?;
                    store.store_window(
                        repo,
                        &scope,
                        &ListedWindow {
                            since: from,
                            until: to,
                            runs: commits.len() as u64,
                        },
                    )
                })
                .map_err(store_error)?;
        }
        Ok(())
    }

    /// Asks `compare` for the fork point of every head the store has not asked about before,
    /// concurrently within the client's limit; each answer is stored as it arrives.
    pub fn fetch_fork_points(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        default_branch: &str,
        heads: &BTreeSet<Sha>,
        summary: &mut AncestrySummary,
    ) -> Result<(), FetchError> {
        let asked = store
            .blocking(|s| s.asked_fork_points(repo))
            .map_err(store_error)?;
        let todo: Vec<Sha> = heads.difference(&asked).cloned().collect();
        summary.fork_points_known += (heads.len() - todo.len()) as u64;
        let client = self.client.clone();
        let base = format!("{}/compare/{}...", repo_path(repo), encode(default_branch));
        let requests = self.runtime.block_on(async {
            let mut set = JoinSet::new();
            let mut queue = todo.into_iter();
            let mut requests = 0u64;
            loop {
                while set.len() < client.concurrency()
                    && let Some(head) = queue.next()
                {
                    let client = client.clone();
                    // Only `merge_base_commit` is read: one commit per page keeps the body small.
                    let url = client.url(&format!("{base}{}?per_page=1", encode(&head.0)));
                    set.spawn(async move {
                        let response = client.get(&url, None).await?;
                        let fork = match response.status {
                            StatusCode::OK => {
                                let compare: WireCompare = parse_json(&url, &response.body)?;
                                compare.merge_base_commit.into_model()
                            }
                            // A head GitHub no longer knows, or no common history.
                            StatusCode::NOT_FOUND | StatusCode::UNPROCESSABLE_ENTITY => None,
                            _ => return Err(unexpected(&url, &response)),
                        };
                        Ok::<_, FetchError>((head, fork))
                    });
                }
                let Some(joined) = set.join_next().await else {
                    break;
                };
                let (head, fork) = joined.expect("compare tasks do not panic")?;
                requests += 1;
                let repo = repo.clone();
                store
                    .run(move |s| s.store_fork_point(&repo, &head, fork.as_ref()))
                    .await
                    .map_err(store_error)?;
            }
            Ok::<_, FetchError>(requests)
        })?;
        summary.compare_requests += requests;
        Ok(())
    }

    /// The changed files of merged PRs whose files the store lacks. A PR GitHub no longer knows
    /// is skipped (its files stay unknown).
    pub fn fetch_merge_files(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        prs: &BTreeSet<PrNumber>,
        summary: &mut AncestrySummary,
    ) -> Result<(), FetchError> {
        for &number in prs {
            let known = store
                .blocking(|s| s.load_pull(repo, number))
                .map_err(store_error)?;
            if known.as_ref().is_none_or(|p| p.files.is_some()) {
                continue;
            }
            let url = self.client.url(&format!(
                "{}/pulls/{number}/files?per_page={PER_PAGE}",
                repo_path(repo)
            ));
            let Some(mut files) =
                self.fetch_changed_files::<Vec<WireFile>>(url, &[StatusCode::NOT_FOUND], summary)?
            else {
                continue;
            };
            files.sort();
            files.dedup();
            store
                .blocking(|s| s.store_pull_files(repo, number, &files))
                .map_err(store_error)?;
        }
        Ok(())
    }

    /// The changed files of direct pushes to the default branch (`/commits/{sha}`, whose
    /// `files` are paginated like a list). A commit GitHub no longer knows is skipped (its files
    /// stay unknown).
    pub fn fetch_commit_files(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        shas: &BTreeSet<Sha>,
        summary: &mut AncestrySummary,
    ) -> Result<(), FetchError> {
        for sha in shas {
            let url = self.client.url(&format!(
                "{}/commits/{}?per_page={PER_PAGE}",
                repo_path(repo),
                encode(&sha.0)
            ));
            let Some(mut files) = self.fetch_changed_files::<WireCommitFiles>(
                url,
                &[StatusCode::NOT_FOUND, StatusCode::UNPROCESSABLE_ENTITY],
                summary,
            )?
            else {
                continue;
            };
            files.sort();
            files.dedup();
            store
                .blocking(|s| s.store_commit_files(repo, sha, &files))
                .map_err(store_error)?;
        }
        Ok(())
    }

    /// Walks a changed-files listing, each rename naming both paths; `None` when GitHub
    /// answers one of `absent` (it no longer knows the PR or commit).
    pub(super) fn fetch_changed_files<P: Page<Item = WireFile>>(
        &self,
        url: String,
        absent: &[StatusCode],
        summary: &mut AncestrySummary,
    ) -> Result<Option<Vec<String>>, FetchError> {
        let mut files = Vec::new();
        let walked = self.runtime.block_on(
            Listing::new(&self.client, url)
                .absent_on(absent)
                .walk::<P, FetchError>(unexpected, |page| {
                    for file in page {
                        files.extend(file.previous_filename);
                        files.push(file.filename);
                    }
                    Ok(Flow::More)
                }),
        )?;
        summary.files_requests += walked.pages;
        Ok((walked.end == End::Listed).then_some(files))
    }
}
