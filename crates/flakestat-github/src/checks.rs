//! One check run kept up to date on a commit (`flakestat pr --check-run`): found by its name
//! among the commit's check runs (`GET /commits/{sha}/check-runs?check_name=…`, the latest of
//! that name), edited in place when found (`PATCH /check-runs/{id}`), created otherwise
//! (`POST /check-runs`), left alone when it already says the same. GitHub takes check runs from
//! GitHub Apps only (a personal or Actions token is answered 403 "You must authenticate via a
//! GitHub App."). As for comments, the write is never retried: the next run finds the check run
//! by its name and edits it.

use std::sync::Arc;

use http::{Method, StatusCode};
use serde::Deserialize;

use super::client::{ClientConfig, GitHubClient, Response};
use super::pages::encode;
use super::pages::{Flow, Listing, ListingError, Page};
use super::{FetchError, Progress};
use flakestat_core::model::{Repo, Sha};

/// Where a check run goes: a commit of a repository, under a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckTarget {
    pub repo: Repo,
    pub head_sha: Sha,
    pub name: String,
}

/// What the check run says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOutput {
    /// `success`, `neutral`, `failure` …
    pub conclusion: String,
    pub title: String,
    /// Markdown.
    pub summary: String,
}

/// What [`CheckRunner::upsert`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckPosted {
    Created {
        id: u64,
    },
    Updated {
        id: u64,
    },
    /// It already said exactly this: nothing sent.
    Unchanged {
        id: u64,
    },
}

/// Why a check run could not be written. Nothing was written in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum CheckRunError {
    #[error(
        "GitHub takes check runs from GitHub Apps only ({status}: {message}); authenticate as an App with the Checks: write permission"
    )]
    NotAnApp { status: u16, message: String },
    #[error("GitHub refused the credentials while writing a check run ({message})")]
    Unauthorized { message: String },
    #[error("GitHub knows no commit {sha} in {repo} (or the App cannot see that repository)")]
    NotFound { repo: Repo, sha: Sha },
    #[error("GitHub answered {status} to {method} {url}: {message}")]
    Unexpected {
        method: Method,
        url: String,
        status: u16,
        message: String,
    },
    #[error("GitHub's answer to {url} does not parse: {error}")]
    Parse { url: String, error: String },
    #[error(transparent)]
    Fetch(#[from] FetchError),
}

#[derive(Debug, Deserialize)]
struct WireCheckRuns {
    check_runs: Vec<WireCheckRun>,
}

impl Page for WireCheckRuns {
    type Item = WireCheckRun;
    fn into_items(self) -> Vec<WireCheckRun> {
        self.check_runs
    }
}

#[derive(Debug, Deserialize)]
struct WireCheckRun {
    id: u64,
    name: String,
    #[serde(default)]
    conclusion: Option<String>,
    #[serde(default)]
    output: Option<WireCheckOutput>,
}

#[derive(Debug, Deserialize)]
struct WireCheckOutput {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    summary: Option<String>,
}

/// A GitHub client for check runs, with a runtime of its own; every method blocks.
pub struct CheckRunner {
    runtime: tokio::runtime::Runtime,
    client: GitHubClient,
}

impl CheckRunner {
    pub fn new(config: ClientConfig) -> Result<CheckRunner, FetchError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| FetchError::Internal(format!("cannot start the async runtime: {e}")))?;
        let client = {
            let _guard = runtime.enter();
            GitHubClient::new(config, Arc::new(()) as Arc<dyn Progress>)?
        };
        Ok(CheckRunner { runtime, client })
    }

    /// Updates the latest check run named `target.name` on the commit, or creates it.
    pub fn upsert(
        &self,
        target: &CheckTarget,
        output: &CheckOutput,
    ) -> Result<CheckPosted, CheckRunError> {
        self.runtime.block_on(async {
            let repo = format!(
                "/repos/{}/{}",
                encode(&target.repo.owner),
                encode(&target.repo.name)
            );
            let url = self.client.url(&format!(
                "{repo}/commits/{}/check-runs?check_name={}&filter=latest&per_page=100",
                encode(&target.head_sha.0),
                encode(&target.name)
            ));
            // `filter=latest`: one check run per name, so the first page holds it.
            let mut found = None;
            Listing::new(&self.client, url)
                .walk::<WireCheckRuns, CheckRunError>(
                    |url, response| refusal(target, Method::GET, url, response),
                    |page| {
                        found = page.into_iter().find(|c| c.name == target.name);
                        Ok(Flow::Stop)
                    },
                )
                .await?;
            let body = serde_json::json!({
                "name": target.name,
                "head_sha": target.head_sha.0,
                "status": "completed",
                "conclusion": output.conclusion,
                "output": {"title": output.title, "summary": output.summary},
            });
            match found {
                Some(c) if says(&c, output) => Ok(CheckPosted::Unchanged { id: c.id }),
                Some(c) => {
                    let url = self.client.url(&format!("{repo}/check-runs/{}", c.id));
                    self.write(target, Method::PATCH, &url, &body).await?;
                    Ok(CheckPosted::Updated { id: c.id })
                }
                None => {
                    let url = self.client.url(&format!("{repo}/check-runs"));
                    let written = self.write(target, Method::POST, &url, &body).await?;
                    Ok(CheckPosted::Created { id: written.id })
                }
            }
        })
    }

    async fn write(
        &self,
        target: &CheckTarget,
        method: Method,
        url: &str,
        body: &serde_json::Value,
    ) -> Result<WireCheckRun, CheckRunError> {
        self.client
            .write_json(method.clone(), url, body, |url, response| {
                refusal(target, method, url, response)
            })
            .await
    }
}

impl ListingError for CheckRunError {
    fn unparsable(url: &str, error: String) -> CheckRunError {
        CheckRunError::Parse {
            url: url.to_string(),
            error,
        }
    }
}

/// Whether a check run already says `output`.
fn says(c: &WireCheckRun, output: &CheckOutput) -> bool {
    let o = c.output.as_ref();
    c.conclusion.as_deref() == Some(output.conclusion.as_str())
        && o.and_then(|o| o.title.as_deref()) == Some(output.title.as_str())
        && o.and_then(|o| o.summary.as_deref()) == Some(output.summary.as_str())
}

fn refusal(target: &CheckTarget, method: Method, url: &str, response: &Response) -> CheckRunError {
    let status = response.status.as_u16();
    let message = response.message();
    match response.status {
        StatusCode::UNAUTHORIZED => CheckRunError::Unauthorized { message },
        StatusCode::FORBIDDEN => CheckRunError::NotAnApp { status, message },
        StatusCode::NOT_FOUND | StatusCode::UNPROCESSABLE_ENTITY
            if message.contains("No commit") || response.status == StatusCode::NOT_FOUND =>
        {
            CheckRunError::NotFound {
                repo: target.repo.clone(),
                sha: target.head_sha.clone(),
            }
        }
        _ => CheckRunError::Unexpected {
            method,
            url: url.to_string(),
            status,
            message,
        },
    }
}
