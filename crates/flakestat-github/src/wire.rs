//! flakestat's own serde structs for the GitHub responses it reads, and their conversion into
//! `model`. Ready-made models (octocrab's, for one) lack `run_attempt`, `pull_requests`,
//! `run_started_at` and reject legal nulls and `status: requested`: here every nullable field is an
//! `Option`, status and conclusion are strings, and unknown fields are ignored.

use serde::Deserialize;

use flakestat_core::model::{
    Conclusion, Event, Job, JobId, PrNumber, PullHead, PullRequest, Run, RunId, Runner, Sha,
    Status, Timestamp, WorkflowId,
};

#[derive(Debug, Deserialize)]
pub struct RunList {
    pub total_count: u64,
    pub workflow_runs: Vec<WireRun>,
}

#[derive(Debug, Deserialize)]
pub struct JobList {
    pub jobs: Vec<WireJob>,
}

impl crate::pages::Page for JobList {
    type Item = WireJob;
    fn into_items(self) -> Vec<WireJob> {
        self.jobs
    }
}

#[derive(Debug, Deserialize)]
pub struct WorkflowList {
    pub workflows: Vec<WireWorkflow>,
}

#[derive(Debug, Deserialize)]
pub struct WireWorkflow {
    pub id: u64,
    pub name: String,
    pub path: String,
}

#[derive(Debug, Deserialize)]
pub struct WireRepo {
    /// GitHub's id: the repository's identity across spellings and renames.
    pub id: u64,
    /// GitHub's spelling, `OWNER/NAME`, whatever spelling was asked.
    pub full_name: String,
    pub default_branch: String,
}

#[derive(Debug, Deserialize)]
pub struct WirePrRef {
    pub number: PrNumber,
}

#[derive(Debug, Deserialize)]
pub struct WireRun {
    pub id: u64,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub display_title: Option<String>,
    #[serde(default)]
    pub head_branch: Option<String>,
    pub head_sha: String,
    #[serde(default)]
    pub path: Option<String>,
    pub run_number: u64,
    #[serde(default)]
    pub run_attempt: Option<u32>,
    pub event: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    pub workflow_id: u64,
    #[serde(default)]
    pub pull_requests: Option<Vec<WirePrRef>>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default)]
    pub run_started_at: Option<Timestamp>,
    #[serde(default)]
    pub html_url: Option<String>,
    /// Null when the fork was deleted.
    #[serde(default)]
    pub head_repository: Option<WireRepoName>,
}

/// A repository as a run or a PR head names it: only `full_name` is read.
#[derive(Debug, Deserialize)]
pub struct WireRepoName {
    pub full_name: String,
}

impl WireRun {
    pub fn into_model(self) -> Run {
        Run {
            id: RunId(self.id),
            workflow_id: WorkflowId(self.workflow_id),
            workflow_name: self.name.unwrap_or_default(),
            workflow_path: self.path.unwrap_or_default(),
            display_title: self.display_title.unwrap_or_default(),
            event: Event::from(self.event),
            head_branch: self.head_branch,
            head_sha: Sha(self.head_sha),
            run_number: self.run_number,
            run_attempt: self.run_attempt.unwrap_or(1),
            status: Status::from(self.status.unwrap_or_default()),
            conclusion: self.conclusion.map(Conclusion::from),
            created_at: self.created_at,
            updated_at: self.updated_at,
            run_started_at: self.run_started_at,
            html_url: self.html_url.unwrap_or_default(),
            pull_requests: self
                .pull_requests
                .unwrap_or_default()
                .into_iter()
                .map(|p| p.number)
                .collect(),
            head_repository: self.head_repository.map(|r| r.full_name),
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct WireJob {
    pub id: u64,
    pub run_id: u64,
    #[serde(default)]
    pub run_attempt: Option<u32>,
    pub name: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    pub created_at: Timestamp,
    #[serde(default)]
    pub started_at: Option<Timestamp>,
    #[serde(default)]
    pub completed_at: Option<Timestamp>,
    #[serde(default)]
    pub html_url: Option<String>,
    pub head_sha: String,
    #[serde(default)]
    pub labels: Option<Vec<String>>,
    /// Null for jobs that never got a runner (skipped, cancelled while queued).
    #[serde(default)]
    pub runner_name: Option<String>,
    #[serde(default)]
    pub runner_group_name: Option<String>,
}

impl WireJob {
    /// The runner the listing names (read before [`into_model`](Self::into_model) takes it).
    pub fn runner(&self) -> Runner {
        let named = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        Runner {
            name: named(&self.runner_name),
            group: named(&self.runner_group_name),
        }
    }

    pub fn into_model(self) -> Job {
        Job {
            id: JobId(self.id),
            run_id: RunId(self.run_id),
            run_attempt: self.run_attempt.unwrap_or(1),
            name: self.name,
            status: Status::from(self.status.unwrap_or_default()),
            conclusion: self.conclusion.map(Conclusion::from),
            created_at: self.created_at,
            started_at: self.started_at,
            completed_at: self.completed_at,
            html_url: self.html_url,
            head_sha: Sha(self.head_sha),
            labels: self.labels.unwrap_or_default(),
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct WireBranchRef {
    #[serde(rename = "ref")]
    pub name: String,
    #[serde(default)]
    pub sha: Option<String>,
    /// Null when the head's fork was deleted.
    #[serde(default)]
    pub repo: Option<WireRepoName>,
}

#[derive(Debug, Deserialize)]
pub struct WirePull {
    pub number: PrNumber,
    pub title: String,
    pub state: String,
    pub base: WireBranchRef,
    pub head: WireBranchRef,
    #[serde(default)]
    pub created_at: Option<Timestamp>,
    #[serde(default)]
    pub updated_at: Option<Timestamp>,
    #[serde(default)]
    pub closed_at: Option<Timestamp>,
    #[serde(default)]
    pub merged_at: Option<Timestamp>,
    #[serde(default)]
    pub merge_commit_sha: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
}

impl WirePull {
    pub fn into_model(self) -> PullRequest {
        let head = match (self.head.sha, self.created_at) {
            (Some(sha), Some(created_at)) => Some(PullHead {
                repo: self.head.repo.map(|r| r.full_name),
                sha: Sha(sha),
                created_at,
                closed_at: self.closed_at,
            }),
            _ => None,
        };
        PullRequest {
            number: self.number,
            title: self.title,
            state: self.state,
            base_ref: self.base.name,
            head_ref: self.head.name,
            merged_at: self.merged_at,
            merge_commit_sha: self.merge_commit_sha.map(Sha),
            html_url: self.html_url.unwrap_or_default(),
            files: None,
            head,
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct WireFile {
    pub filename: String,
    #[serde(default)]
    pub previous_filename: Option<String>,
}

/// GitHub's error body: `{"message": ..., "documentation_url": ..., "status": "410"}`.
#[derive(Debug, Deserialize, Default)]
pub struct WireError {
    #[serde(default)]
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_with_nulls_and_requested_status_parses() {
        let json = r#"{"id": 9000000001, "name": null, "display_title": "t", "head_branch": null,
            "head_sha": "abc", "path": ".github/workflows/ci.yml", "run_number": 5,
            "run_attempt": 2, "event": "push", "status": "requested", "conclusion": null,
            "workflow_id": 3, "pull_requests": [{"number": 12, "url": "x"}],
            "created_at": "2026-06-15T10:00:00Z", "updated_at": "2026-06-15T10:05:00Z",
            "run_started_at": null, "html_url": "h", "previous_attempt_url": null,
            "head_commit": null}"#;
        let run = serde_json::from_str::<WireRun>(json).unwrap().into_model();
        assert_eq!(run.id, RunId(9_000_000_001));
        assert_eq!(run.run_attempt, 2);
        assert_eq!(run.status, Status::Requested);
        assert_eq!(run.pull_requests, vec![PrNumber(12)]);
        assert_eq!(run.head_branch, None);
    }
}
