//! What the fake serves: one repository's runs (every attempt), jobs, logs, pull requests, commit
//! graph and issue comments. Plain data with serde, so a scenario can be generated in code or read
//! from a `dataset.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use flakestat_core::model::{
    Conclusion, Job, JobId, PrNumber, PullRequest, Repo, Run, RunId, Sha, Status, Timestamp,
};

/// Everything the fake GitHub knows about one repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    pub repo: Repo,
    pub default_branch: String,
    /// A private repository answers 404 to anonymous requests and to tokens without access.
    #[serde(default)]
    pub private: bool,
    /// How the owner's repository listing (`/orgs/{org}/repos`, `/users/{user}/repos`) shows
    /// it: archived, disabled, a fork, and its last push (`None`: its newest run's time, else
    /// `now`).
    #[serde(default)]
    pub archived: bool,
    #[serde(default)]
    pub disabled: bool,
    #[serde(default)]
    pub fork: bool,
    #[serde(default)]
    pub pushed_at: Option<Timestamp>,
    /// The dataset's "present": used for timestamps the server invents (new comments).
    pub now: Timestamp,
    #[serde(default)]
    pub auth: Auth,
    /// Every run, any order; the server sorts newest first.
    pub runs: Vec<FakeRun>,
    #[serde(default)]
    pub pulls: Vec<FakePull>,
    /// The commit graph (`/commits`, `/compare`).
    #[serde(default)]
    pub commits: Vec<FakeCommit>,
    /// Branch name → head commit.
    #[serde(default)]
    pub branches: BTreeMap<String, Sha>,
    /// Job logs. A job absent from this map has no log (404), unless it succeeded: GitHub keeps
    /// the logs of passing jobs too, and the fake serves them (`passing_log`).
    #[serde(default)]
    pub logs: BTreeMap<JobId, FakeLog>,
    /// The raw log of a passing job, served for every successful job without a log of its own:
    /// its timestamps re-spaced into the job's execution, `{{JOB_NAME}}` replaced by the job's
    /// name. `None`: a short generic log.
    #[serde(default)]
    pub passing_log: Option<String>,
    /// Run artifacts (`/actions/runs/{id}/artifacts`, `/actions/artifacts/{id}/zip`), any order.
    #[serde(default)]
    pub artifacts: Vec<FakeArtifact>,
    /// Plain issues (pull requests are issues too and need no entry here).
    #[serde(default)]
    pub issues: Vec<FakeIssue>,
    /// Issue and pull-request comments, oldest first.
    #[serde(default)]
    pub comments: Vec<FakeComment>,
    /// Check runs Apps created, oldest first (`checks.rs`).
    #[serde(default)]
    pub check_runs: Vec<crate::checks::FakeCheckRun>,
    /// The runner each job ran on, where a scenario names it; any other started job gets a
    /// generated name in its labels' pool (`routes::job_json`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub runners: BTreeMap<JobId, FakeRunner>,
}

/// The runner a job ran on, as the jobs API names it (`runner_name`, `runner_group_name`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeRunner {
    pub name: String,
    pub group: String,
}

/// Which tokens the fake accepts. The default accepts anything, including no token.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Auth {
    /// Tokens with access. When non-empty, any other token (not in `tokens_without_access`) is
    /// answered 401 `Bad credentials`.
    #[serde(default)]
    pub tokens: Vec<String>,
    /// Valid tokens that cannot see the repository: 404 when it is private, read-only otherwise.
    #[serde(default)]
    pub tokens_without_access: Vec<String>,
    /// Anonymous requests are answered 401 `Requires authentication`.
    #[serde(default)]
    pub require_token: bool,
}

/// A run with every attempt. `run` holds the fields at the latest attempt, as the listing shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeRun {
    pub run: Run,
    /// Ascending by `attempt`, numbered from 1.
    pub attempts: Vec<FakeAttempt>,
}

/// One attempt of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeAttempt {
    pub attempt: u32,
    /// When the attempt started (`run_started_at` of the attempt).
    pub created_at: Timestamp,
    /// `None` while the attempt is not completed.
    pub conclusion: Option<Conclusion>,
    /// The jobs that executed in this attempt. A "re-run failed jobs" attempt lists only the
    /// jobs it re-ran; the jobs it did not re-run are carried over from earlier attempts when the
    /// attempt's jobs are listed, as GitHub does.
    pub jobs: Vec<Job>,
}

/// A job's log as the log endpoint serves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FakeLog {
    /// 302 to the log host, which serves these bytes.
    Text(String),
    /// 410 Gone: past retention.
    Expired,
    /// 404: no log. Same as having no entry.
    Missing,
}

/// An artifact a run uploaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeArtifact {
    pub id: u64,
    pub run: RunId,
    pub name: String,
    /// When the upload step made it: inside the uploading job's execution.
    pub created_at: Timestamp,
    pub body: ArtifactBody,
}

/// What an artifact's download serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactBody {
    /// A zip of these files (path → text), deflated: 302 to the log host.
    Files(BTreeMap<String, String>),
    /// Past retention: listed with `expired: true`, 410 on download.
    Expired,
    /// Listed as live, 410 on download (it expired between the listing and the download).
    Gone,
    /// A zip bomb: one entry `entry` of `size` zero bytes, deflated (about a thousandfold).
    Zeros { entry: String, size: u64 },
    /// A zip of one stored (not compressed) entry of `size` bytes that do not compress.
    Bulk { entry: String, size: u64 },
}

/// A pull request (with the files it changed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakePull {
    pub number: u64,
    pub title: String,
    /// `open` or `closed`.
    pub state: String,
    pub user: String,
    pub base_ref: String,
    pub head_ref: String,
    pub head_sha: Sha,
    pub base_sha: Sha,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub closed_at: Option<Timestamp>,
    pub merged_at: Option<Timestamp>,
    pub merge_commit_sha: Option<Sha>,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub locked: bool,
    pub files: Vec<FakeFile>,
    /// The fork the head branch lives in (`owner/name`); `None`: the repository itself.
    #[serde(default)]
    pub head_repo: Option<String>,
}

impl FakePull {
    /// The model's view of this pull request, files included.
    pub fn to_model(&self, repo: &Repo) -> PullRequest {
        PullRequest {
            number: PrNumber(self.number),
            title: self.title.clone(),
            state: self.state.clone(),
            base_ref: self.base_ref.clone(),
            head_ref: self.head_ref.clone(),
            merged_at: self.merged_at,
            merge_commit_sha: self.merge_commit_sha.clone(),
            html_url: format!("https://github.com/{repo}/pull/{}", self.number),
            files: Some(self.files.iter().map(|f| f.filename.clone()).collect()),
            head: Some(flakestat_core::model::PullHead {
                repo: Some(self.head_repo.clone().unwrap_or_else(|| repo.to_string())),
                sha: self.head_sha.clone(),
                created_at: self.created_at,
                closed_at: self.closed_at,
            }),
        }
    }
}

/// A file changed by a pull request (`/pulls/{n}/files`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeFile {
    pub filename: String,
    /// added, removed, modified, renamed, copied, changed, unchanged.
    pub status: String,
    #[serde(default)]
    pub previous_filename: Option<String>,
    #[serde(default)]
    pub additions: u64,
    #[serde(default)]
    pub deletions: u64,
}

/// A commit of the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeCommit {
    pub sha: Sha,
    pub parents: Vec<Sha>,
    pub message: String,
    pub author: String,
    pub date: Timestamp,
    /// Changed files, as `GET /commits/{sha}` lists them.
    #[serde(default)]
    pub files: Vec<String>,
}

/// A plain issue, for comments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeIssue {
    pub number: u64,
    pub title: String,
    pub state: String,
    #[serde(default)]
    pub locked: bool,
}

/// An issue comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeComment {
    pub id: u64,
    pub issue_number: u64,
    pub body: String,
    pub user: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// Why a dataset could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a valid dataset: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error(
        "{dir} holds neither dataset.json nor scenario.toml: point --replay at a fixtures/<scenario> folder"
    )]
    NotADataset { dir: PathBuf },
}

impl Dataset {
    /// An empty dataset for `repo`, default branch `main`, present time `now`.
    pub fn new(repo: Repo, now: Timestamp) -> Dataset {
        Dataset {
            repo,
            default_branch: "main".to_string(),
            private: false,
            archived: false,
            disabled: false,
            fork: false,
            pushed_at: None,
            now,
            auth: Auth::default(),
            runs: Vec::new(),
            pulls: Vec::new(),
            commits: Vec::new(),
            branches: BTreeMap::new(),
            logs: BTreeMap::new(),
            passing_log: None,
            artifacts: Vec::new(),
            issues: Vec::new(),
            comments: Vec::new(),
            check_runs: Vec::new(),
            runners: BTreeMap::new(),
        }
    }

    /// Loads a scenario folder: `dataset.json` (a serialized `Dataset`) or `scenario.toml` (a
    /// generator name, a seed, and the templates beside it).
    pub fn load(dir: &Path) -> Result<Dataset, DatasetError> {
        let json = dir.join("dataset.json");
        if json.is_file() {
            let text = read(&json)?;
            return serde_json::from_str(&text).map_err(|e| DatasetError::Invalid {
                path: json,
                message: e.to_string(),
            });
        }
        let toml_path = dir.join("scenario.toml");
        if toml_path.is_file() {
            return super::scenario::load(dir);
        }
        Err(DatasetError::NotADataset {
            dir: dir.to_path_buf(),
        })
    }

    /// Writes `dataset.json` into `dir`.
    pub fn save_json(&self, dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string(self).map_err(std::io::Error::other)?;
        std::fs::write(dir.join("dataset.json"), text)
    }

    /// The last push, as the repository listing shows it.
    pub fn last_push(&self) -> Timestamp {
        self.pushed_at.unwrap_or_else(|| {
            self.runs
                .iter()
                .map(|r| r.run.created_at)
                .max()
                .unwrap_or(self.now)
        })
    }

    pub fn run(&self, id: RunId) -> Option<&FakeRun> {
        self.runs.iter().find(|r| r.run.id == id)
    }

    pub fn run_mut(&mut self, id: RunId) -> Option<&mut FakeRun> {
        self.runs.iter_mut().find(|r| r.run.id == id)
    }

    pub fn pull(&self, number: u64) -> Option<&FakePull> {
        self.pulls.iter().find(|p| p.number == number)
    }

    pub fn commit(&self, sha: &str) -> Option<&FakeCommit> {
        self.commits.iter().find(|c| c.sha.0 == sha)
    }

    /// Every job of every attempt.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.runs
            .iter()
            .flat_map(|r| r.attempts.iter().flat_map(|a| a.jobs.iter()))
    }

    /// Resolves a branch name or a full or abbreviated (≥ 7 digits) sha.
    pub fn resolve_ref(&self, name: &str) -> Option<Sha> {
        if let Some(sha) = self.branches.get(name) {
            return Some(sha.clone());
        }
        let name = name.strip_prefix("refs/heads/").unwrap_or(name);
        if let Some(sha) = self.branches.get(name) {
            return Some(sha.clone());
        }
        if name.len() >= 7 && name.chars().all(|c| c.is_ascii_hexdigit()) {
            let mut found = self.commits.iter().filter(|c| c.sha.0.starts_with(name));
            let first = found.next()?;
            if found.next().is_none() {
                return Some(first.sha.clone());
            }
        }
        None
    }

    /// `sha` and every commit reachable from it through parents.
    pub fn ancestors(&self, sha: &Sha) -> BTreeSet<Sha> {
        let by_sha: BTreeMap<&Sha, &FakeCommit> =
            self.commits.iter().map(|c| (&c.sha, c)).collect();
        let mut seen = BTreeSet::new();
        let mut stack = vec![sha.clone()];
        while let Some(s) = stack.pop() {
            if !seen.insert(s.clone()) {
                continue;
            }
            if let Some(c) = by_sha.get(&s) {
                stack.extend(c.parents.iter().cloned());
            }
        }
        seen
    }

    /// Appends an attempt to a run and updates the run's latest-attempt fields
    /// (`run_attempt`, `status`, `conclusion`, `run_started_at`, `updated_at`).
    pub fn push_attempt(&mut self, run_id: RunId, attempt: FakeAttempt) -> bool {
        let Some(fake) = self.run_mut(run_id) else {
            return false;
        };
        fake.push_attempt(attempt);
        true
    }
}

impl FakeRun {
    /// A run whose only attempt is `attempt`; `run`'s latest-attempt fields are set from it.
    pub fn new(mut run: Run, attempt: FakeAttempt) -> FakeRun {
        run.run_attempt = attempt.attempt;
        let mut fake = FakeRun {
            run,
            attempts: Vec::new(),
        };
        fake.push_attempt(attempt);
        fake
    }

    /// Appends an attempt and updates the latest-attempt fields of `run`.
    pub fn push_attempt(&mut self, attempt: FakeAttempt) {
        self.run.run_attempt = attempt.attempt;
        self.run.conclusion = attempt.conclusion.clone();
        self.run.status = if attempt.conclusion.is_some() {
            Status::Completed
        } else {
            Status::InProgress
        };
        self.run.run_started_at = Some(attempt.created_at);
        let last = attempt
            .jobs
            .iter()
            .filter_map(|j| j.completed_at.or(j.started_at))
            .max()
            .unwrap_or(attempt.created_at);
        self.run.updated_at = self.run.updated_at.max(last);
        self.attempts.push(attempt);
    }

    pub fn attempt(&self, n: u32) -> Option<&FakeAttempt> {
        self.attempts.iter().find(|a| a.attempt == n)
    }

    /// The jobs an attempt's listing shows: the attempt's own jobs plus, from earlier attempts,
    /// the jobs whose name no later attempt (up to `n`) re-ran.
    pub fn jobs_at(&self, n: u32) -> Vec<&Job> {
        let mut rerun: BTreeSet<&str> = BTreeSet::new();
        let mut jobs: Vec<&Job> = Vec::new();
        let mut attempts: Vec<&FakeAttempt> =
            self.attempts.iter().filter(|a| a.attempt <= n).collect();
        attempts.sort_by_key(|a| std::cmp::Reverse(a.attempt));
        for attempt in attempts {
            jobs.extend(
                attempt
                    .jobs
                    .iter()
                    .filter(|j| !rerun.contains(j.name.as_str())),
            );
            rerun.extend(attempt.jobs.iter().map(|j| j.name.as_str()));
        }
        jobs.sort_by_key(|j| j.id);
        jobs
    }

    /// Every job of every attempt, by attempt then id.
    pub fn all_jobs(&self) -> Vec<&Job> {
        let mut jobs: Vec<&Job> = self.attempts.iter().flat_map(|a| a.jobs.iter()).collect();
        jobs.sort_by_key(|j| (j.run_attempt, j.id));
        jobs
    }
}

fn read(path: &Path) -> Result<String, DatasetError> {
    std::fs::read_to_string(path).map_err(|source| DatasetError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The bot workflow [`Dataset::add_bot_workflow`] adds.
pub const BOT_WORKFLOW_ID: u64 = 7_777;
pub const BOT_WORKFLOW_PATH: &str = ".github/workflows/labeler.yml";

impl Dataset {
    /// Adds a PR labeler like the ones busy repositories run on every PR event, making
    /// `percent` % of all runs its own: one job each, green at attempt 1, no log. Its runs
    /// share the head commit, branch and PR of the nearest earlier run of the dataset, spread
    /// evenly between the first and the last run; ids come from their own range, so nothing
    /// already in the dataset changes. Deterministic.
    pub fn add_bot_workflow(&mut self, percent: u32) {
        let percent = u64::from(percent.min(99));
        let mut others: Vec<Run> = self.runs.iter().map(|r| r.run.clone()).collect();
        others.sort_by_key(|r| (r.created_at, r.id));
        let (Some(first), Some(last)) = (others.first(), others.last()) else {
            return;
        };
        let bots = (others.len() as u64 * percent).div_ceil(100 - percent);
        let span = (last.created_at - first.created_at).num_seconds().max(1);
        let (start, repo) = (first.created_at, self.repo.clone());
        for k in 0..bots {
            // Half a step off the grid, so no bot run shares a second with a spaced dataset's.
            let offset = (span * (2 * k as i64 + 1)) / (2 * bots as i64);
            let created = start + chrono::TimeDelta::seconds(offset);
            let base = others
                .iter()
                .take_while(|r| r.created_at <= created)
                .last()
                .unwrap_or(first);
            let bot = bot_run(&repo, k, base, created);
            self.runs.push(bot);
        }
    }
}

/// The `k`-th run of the bot workflow, created at `created` for the same head commit, branch
/// and PR as `base`: one job, green at attempt 1, no log.
pub(super) fn bot_run(repo: &Repo, k: u64, base: &Run, created: Timestamp) -> FakeRun {
    let id = RunId(90_000_000_000 + k);
    let job_id = JobId(900_000_000_000 + k);
    let done = created + chrono::TimeDelta::seconds(20);
    let run = Run {
        id,
        workflow_id: flakestat_core::model::WorkflowId(BOT_WORKFLOW_ID),
        workflow_name: "Label PR".into(),
        workflow_path: BOT_WORKFLOW_PATH.into(),
        display_title: base.display_title.clone(),
        event: "pull_request_target".into(),
        head_branch: base.head_branch.clone(),
        head_sha: base.head_sha.clone(),
        run_number: 1 + k,
        run_attempt: 1,
        status: "completed".into(),
        conclusion: None,
        created_at: created,
        updated_at: created,
        run_started_at: Some(created),
        html_url: format!("https://github.com/{repo}/actions/runs/{id}"),
        pull_requests: base.pull_requests.clone(),
        head_repository: base.head_repository.clone(),
    };
    let job = Job {
        id: job_id,
        run_id: id,
        run_attempt: 1,
        name: "label".into(),
        status: "completed".into(),
        conclusion: Some("success".into()),
        created_at: created,
        started_at: Some(created + chrono::TimeDelta::seconds(2)),
        completed_at: Some(done),
        html_url: Some(format!(
            "https://github.com/{repo}/actions/runs/{id}/job/{job_id}"
        )),
        head_sha: base.head_sha.clone(),
        labels: vec!["ubuntu-latest".into()],
    };
    let attempt = FakeAttempt {
        attempt: 1,
        created_at: created,
        conclusion: Some("success".into()),
        jobs: vec![job],
    };
    FakeRun::new(run, attempt)
}
