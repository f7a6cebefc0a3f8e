//! One comment kept up to date on an issue: found by a hidden marker at the start of its body
//! (`<!-- flakestat:nightly OWNER/NAME -->`), updated in place when found, created otherwise, so
//! a nightly job never piles up comments. Reads page through the issue's comments with the
//! survey's client (the token goes only to the API host); the write is one POST or PATCH, never
//! retried: if an answer is lost, the next run finds the comment by its marker and updates it.

use std::fmt;
use std::sync::Arc;

use http::{Method, StatusCode};
use serde::Deserialize;

use super::client::{ClientConfig, GitHubClient, Response};
use super::pages::{Flow, Listing, ListingError};
use super::{FetchError, Progress};
use flakestat_core::model::{IssueNumber, Repo};

/// `OWNER/REPO#N`: an issue (or pull request) to comment on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentTarget {
    pub repo: Repo,
    pub issue: IssueNumber,
}

impl CommentTarget {
    /// Parses `OWNER/REPO#N`; `None` when it is not of that form.
    pub fn parse(text: &str) -> Option<CommentTarget> {
        let (repo, number) = text.trim().rsplit_once('#')?;
        let issue = IssueNumber(number.parse().ok().filter(|n| *n > 0)?);
        Some(CommentTarget {
            repo: Repo::parse(repo)?,
            issue,
        })
    }

    fn issue_path(&self) -> String {
        format!(
            "/repos/{}/{}/issues/{}",
            self.repo.owner, self.repo.name, self.issue
        )
    }
}

impl fmt::Display for CommentTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.repo, self.issue)
    }
}

/// Why a comment could not be posted. Nothing was written in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum CommentError {
    #[error(
        "{target} is locked: GitHub refuses new comments and edits there ({message}); unlock it or post to another issue"
    )]
    Locked {
        target: CommentTarget,
        message: String,
    },
    #[error(
        "GitHub denied commenting on {target} ({status}: {message}); the token needs write access to issues (`issues: write` for Actions' GITHUB_TOKEN, the `repo` or `public_repo` scope or Issues: write for a personal token)"
    )]
    Forbidden {
        target: CommentTarget,
        status: u16,
        message: String,
    },
    #[error(
        "GitHub refused the credentials while commenting on {target} ({message}); check GITHUB_TOKEN / GH_TOKEN"
    )]
    Unauthorized {
        target: CommentTarget,
        message: String,
    },
    #[error("GitHub knows no issue {target} (or the token cannot see that repository)")]
    NotFound { target: CommentTarget },
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

/// An existing comment carrying the marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundComment {
    pub id: u64,
    pub html_url: Option<String>,
    pub body: String,
}

/// What `upsert` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Posted {
    Created {
        id: u64,
        html_url: Option<String>,
    },
    Updated {
        id: u64,
        html_url: Option<String>,
    },
    /// The comment already had exactly this body: nothing sent.
    Unchanged {
        id: u64,
        html_url: Option<String>,
    },
}

#[derive(Debug, Deserialize)]
struct WireComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
}

/// Whether a comment body is ours: the marker opens it (a quote of it in a reply does not).
pub fn carries_marker(body: &str, marker: &str) -> bool {
    body.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with(marker)
}

/// A GitHub client for comments, with a runtime of its own; every method blocks.
pub struct Commenter {
    runtime: tokio::runtime::Runtime,
    client: GitHubClient,
}

impl Commenter {
    pub fn new(config: ClientConfig) -> Result<Commenter, FetchError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| FetchError::Internal(format!("cannot start the async runtime: {e}")))?;
        let client = {
            let _guard = runtime.enter();
            GitHubClient::new(config, Arc::new(()) as Arc<dyn Progress>)?
        };
        Ok(Commenter { runtime, client })
    }

    /// Requests made so far.
    pub fn requests(&self) -> u64 {
        self.client.stats().requests
    }

    /// The first comment of the issue whose body opens with `marker`, paging through them all
    /// until found.
    pub fn find(
        &self,
        target: &CommentTarget,
        marker: &str,
    ) -> Result<Option<FoundComment>, CommentError> {
        self.runtime.block_on(self.find_async(target, marker))
    }

    /// Updates the marked comment to `body`, or creates it. `body` must open with `marker`.
    pub fn upsert(
        &self,
        target: &CommentTarget,
        marker: &str,
        body: &str,
    ) -> Result<Posted, CommentError> {
        debug_assert!(
            carries_marker(body, marker),
            "the body must carry the marker"
        );
        self.runtime.block_on(async {
            let found = self.find_async(target, marker).await?;
            match found {
                Some(c) if c.body == body => Ok(Posted::Unchanged {
                    id: c.id,
                    html_url: c.html_url,
                }),
                Some(c) => {
                    let url = self.client.url(&format!(
                        "/repos/{}/{}/issues/comments/{}",
                        target.repo.owner, target.repo.name, c.id
                    ));
                    let written = self.write(target, Method::PATCH, &url, body).await?;
                    Ok(Posted::Updated {
                        id: c.id,
                        html_url: written.html_url.or(c.html_url),
                    })
                }
                None => {
                    let url = self
                        .client
                        .url(&format!("{}/comments", target.issue_path()));
                    let written = self.write(target, Method::POST, &url, body).await?;
                    Ok(Posted::Created {
                        id: written.id,
                        html_url: written.html_url,
                    })
                }
            }
        })
    }

    async fn find_async(
        &self,
        target: &CommentTarget,
        marker: &str,
    ) -> Result<Option<FoundComment>, CommentError> {
        let url = self
            .client
            .url(&format!("{}/comments?per_page=100", target.issue_path()));
        let mut found = None;
        Listing::new(&self.client, url)
            .walk::<Vec<WireComment>, CommentError>(
                |url, response| refusal(target, Method::GET, url, response),
                |page| {
                    found = page
                        .into_iter()
                        .find(|c| c.body.as_deref().is_some_and(|b| carries_marker(b, marker)))
                        .map(|c| FoundComment {
                            id: c.id,
                            html_url: c.html_url,
                            body: c.body.unwrap_or_default(),
                        });
                    Ok(if found.is_some() {
                        Flow::Stop
                    } else {
                        Flow::More
                    })
                },
            )
            .await?;
        Ok(found)
    }

    async fn write(
        &self,
        target: &CommentTarget,
        method: Method,
        url: &str,
        body: &str,
    ) -> Result<WireComment, CommentError> {
        let json = serde_json::json!({ "body": body });
        self.client
            .write_json(method.clone(), url, &json, |url, response| {
                refusal(target, method, url, response)
            })
            .await
    }
}

impl ListingError for CommentError {
    fn unparsable(url: &str, error: String) -> CommentError {
        CommentError::Parse {
            url: url.to_string(),
            error,
        }
    }
}

/// A refusal in words that say what to do.
fn refusal(target: &CommentTarget, method: Method, url: &str, response: &Response) -> CommentError {
    let status = response.status.as_u16();
    let message = response.message();
    let target = target.clone();
    match response.status {
        StatusCode::UNAUTHORIZED => CommentError::Unauthorized { target, message },
        StatusCode::FORBIDDEN if message.to_ascii_lowercase().contains("locked") => {
            CommentError::Locked { target, message }
        }
        StatusCode::FORBIDDEN => CommentError::Forbidden {
            target,
            status,
            message,
        },
        StatusCode::NOT_FOUND | StatusCode::GONE => CommentError::NotFound { target },
        _ => CommentError::Unexpected {
            method,
            url: url.to_string(),
            status,
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_print() {
        let t = CommentTarget::parse("NVIDIA/cuda-python#2396").unwrap();
        assert_eq!(t.repo.to_string(), "NVIDIA/cuda-python");
        assert_eq!(t.issue, IssueNumber(2396));
        assert_eq!(t.to_string(), "NVIDIA/cuda-python#2396");
        for bad in [
            "NVIDIA/cuda-python",
            "cuda-python#1",
            "o/r#",
            "o/r#0",
            "o/r#x",
            "o/r #1",
        ] {
            assert_eq!(CommentTarget::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_a_body_opening_with_the_marker_is_ours() {
        let m = "<!-- flakestat:nightly o/r -->";
        assert!(carries_marker("<!-- flakestat:nightly o/r -->\n# x", m));
        assert!(carries_marker(
            "\u{feff}\n <!-- flakestat:nightly o/r -->",
            m
        ));
        assert!(!carries_marker("> <!-- flakestat:nightly o/r -->", m));
        assert!(!carries_marker("<!-- flakestat:nightly o/other -->", m));
    }
}
