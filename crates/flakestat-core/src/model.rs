//! Plain data shared by every layer: ID newtypes, runs, jobs, pull requests, and what the matcher
//! found in a log. No I/O, no async, no dependency on any other flakestat module: this file is the
//! contract between the fetcher, the store, the matcher, the analysis and the reporters.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

mod placement;
mod states;
pub use placement::{Placement, Preamble, Runner};
pub use states::{Conclusion, Event, Status};

/// A point in time, always UTC.
pub type Timestamp = DateTime<Utc>;

macro_rules! id_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_newtype!(
    /// A workflow run id (`/actions/runs/{id}`); one id covers every attempt of the run.
    RunId
);
id_newtype!(
    /// A job id; unique across attempts, exceeds 32 bits on github.com.
    JobId
);
id_newtype!(
    /// A workflow id.
    WorkflowId
);
id_newtype!(
    /// A pull request's number in its repository (`#2371`). PRs and issues share one sequence.
    PrNumber
);
id_newtype!(
    /// An issue's (or pull request's) number: where a comment goes.
    IssueNumber
);

/// A signature id: the stem of its TOML file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SignatureId(pub String);

impl fmt::Display for SignatureId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A git commit sha (40 hex digits on GitHub).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(transparent)]
pub struct Sha(pub String);

impl fmt::Display for Sha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `OWNER/NAME`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Repo {
    pub owner: String,
    pub name: String,
}

impl Repo {
    /// Parses `OWNER/NAME`; `None` when it is not of that form.
    pub fn parse(text: &str) -> Option<Repo> {
        let (owner, name) = text.split_once('/')?;
        let valid = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        (valid(owner) && valid(name)).then(|| Repo {
            owner: owner.to_string(),
            name: name.to_string(),
        })
    }

    /// The order several repositories are listed in: by name, case aside.
    pub fn sort_key(&self) -> String {
        self.to_string().to_ascii_lowercase()
    }
}

impl fmt::Display for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// A workflow run as the run listing shows it: at its latest attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub id: RunId,
    pub workflow_id: WorkflowId,
    /// The workflow's name (`name` in the API).
    pub workflow_name: String,
    /// The workflow file, e.g. `.github/workflows/ci.yml` (`path` in the API).
    pub workflow_path: String,
    pub display_title: String,
    pub event: Event,
    pub head_branch: Option<String>,
    pub head_sha: Sha,
    pub run_number: u64,
    /// The latest attempt's number (1-based).
    pub run_attempt: u32,
    pub status: Status,
    pub conclusion: Option<Conclusion>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub run_started_at: Option<Timestamp>,
    pub html_url: String,
    /// PR numbers from `pull_requests[]` (empty for forks and mirrored branches).
    pub pull_requests: Vec<PrNumber>,
    /// `head_repository.full_name`: another repository for a fork PR's runs; `None` when
    /// GitHub gave none (or the store predates the field).
    #[serde(default)]
    pub head_repository: Option<String>,
}

impl Run {
    /// A run whose latest attempt is completed cannot change any more, except by a new attempt.
    pub fn is_completed(&self) -> bool {
        self.status == Status::Completed
    }

    /// Whether this run, as listed, means its workflow's jobs are needed: it failed (anything
    /// but a green, skipped or neutral conclusion once completed; a cancelled run may hold
    /// failed jobs) or was re-run. A run still going says nothing yet. A workflow none of whose
    /// runs needs them contributes a run count only: the survey lists no jobs for it.
    pub fn needs_workflow_jobs(&self) -> bool {
        self.run_attempt > 1
            || (self.is_completed() && !self.conclusion.as_ref().is_some_and(Conclusion::is_green))
    }
}

/// One job execution: a job of one attempt of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub id: JobId,
    pub run_id: RunId,
    pub run_attempt: u32,
    pub name: String,
    pub status: Status,
    pub conclusion: Option<Conclusion>,
    pub created_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
    pub html_url: Option<String>,
    pub head_sha: Sha,
    /// The runner labels the job asked for (`labels` in the API); empty when unknown (jobs
    /// stored before flakestat kept them).
    #[serde(default)]
    pub labels: Vec<String>,
}

impl Job {
    /// `failure` and `timed_out` are failures; `cancelled` and `skipped` are not.
    pub fn is_failed(&self) -> bool {
        self.conclusion.as_ref().is_some_and(Conclusion::is_failure)
    }
}

/// What is known of a failed job's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogStatus {
    /// Downloaded and kept in the store.
    Stored,
    /// GitHub answered 410: past the repository's log retention.
    Expired,
    /// GitHub answered 404: the job has no log.
    Missing,
    /// Not downloaded yet.
    Pending,
    /// GitHub served another execution's log for the job (the stale-attempt-log bug) and the
    /// attempt's archive held none of its own: unknown, never classified as the other's.
    Mismatched,
    /// Its download was refused: a redirect flakestat does not follow (another scheme, https to
    /// http, too many hops).
    Unavailable,
}

/// A pull request, with the files it changed when they have been fetched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    pub number: PrNumber,
    pub title: String,
    pub state: String,
    pub base_ref: String,
    pub head_ref: String,
    pub merged_at: Option<Timestamp>,
    pub merge_commit_sha: Option<Sha>,
    pub html_url: String,
    /// Changed file paths; `None` when not fetched or unavailable.
    pub files: Option<Vec<String>>,
    /// Where the PR's head lives, when listed (`GET /pulls`): what maps a fork's runs, which
    /// carry no PR number, to their PR.
    #[serde(default)]
    pub head: Option<PullHead>,
}

/// A pull request's head as the PR listing shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullHead {
    /// `head.repo.full_name`; `None` when the fork was deleted.
    pub repo: Option<String>,
    /// `head.sha`: the PR's latest head (older runs have older heads).
    pub sha: Sha,
    pub created_at: Timestamp,
    pub closed_at: Option<Timestamp>,
}

/// A line of a log: its 1-based number in the original file and its normalized text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LogLine {
    pub line: u64,
    pub text: String,
}

/// One signature found in one log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureMatch {
    pub signature: SignatureId,
    /// First matching line, 1-based, counted in the original file.
    pub line: u64,
    /// Every matching line number (1-based).
    pub lines: Vec<u64>,
    /// The first matching line, normalized (no timestamp, BOM or ANSI codes).
    pub text: String,
    /// The step (`##[group]` title) the first match occurred in.
    pub step: Option<String>,
    /// Number of matching lines.
    pub count: u64,
    /// Test ids extracted by the signature's `test` regex, sorted.
    pub tests: BTreeSet<String>,
}

/// What the matcher found in one log.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Classification {
    /// Sorted by signature id.
    pub matches: Vec<SignatureMatch>,
    /// The log's most telling error lines; filled whether or not a signature matched.
    pub error_lines: Vec<LogLine>,
    /// The tests the log's test runners report as failed, or as failed and then passed on a
    /// retry in the same job; filled whether or not a signature matched. Absent in
    /// classifications stored before test extraction existed (their fingerprint differs, so
    /// they are redone).
    #[serde(default, skip_serializing_if = "TestOutcomes::is_empty")]
    pub tests: TestOutcomes,
}

impl Classification {
    pub fn is_unclassified(&self) -> bool {
        self.matches.is_empty()
    }
}

/// One test a runner named in a log.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TestRecord {
    /// The id as the runner prints it, parameters included (`tests/x.py::test_y[3.14t]`).
    pub id: String,
    /// The id without its parameters (`tests/x.py::test_y`); the id itself when it has none.
    pub family: String,
    /// The runner form that named it (`pytest`, `go`, `junit`, …).
    pub runner: String,
    /// The first line naming it (1-based); 0 when it came from a file without lines (JUnit XML).
    pub line: u64,
}

/// The tests of one log: which failed, which failed and then passed on a retry in the same job
/// (flaky in the job: not a failure of the job).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TestOutcomes {
    /// Sorted by id; each id once.
    #[serde(default)]
    pub failed: Vec<TestRecord>,
    /// Sorted by id; each id once, never also in `failed`.
    #[serde(default)]
    pub flaky: Vec<TestRecord>,
}

impl TestOutcomes {
    pub fn is_empty(&self) -> bool {
        self.failed.is_empty() && self.flaky.is_empty()
    }

    /// Adds another report's tests of the same job (several JUnit files of one artifact,
    /// several artifacts of one job): a test failed in any report failed; one flaky in some
    /// report and failed in none is flaky. Both lists stay sorted by id, each id once (the
    /// first record of an id is kept).
    pub fn merge(&mut self, more: TestOutcomes) {
        use std::collections::btree_map::Entry;
        let mut failed: BTreeMap<String, TestRecord> = BTreeMap::new();
        for t in std::mem::take(&mut self.failed)
            .into_iter()
            .chain(more.failed)
        {
            if let Entry::Vacant(e) = failed.entry(t.id.clone()) {
                e.insert(t);
            }
        }
        let mut flaky: BTreeMap<String, TestRecord> = BTreeMap::new();
        for t in std::mem::take(&mut self.flaky)
            .into_iter()
            .chain(more.flaky)
        {
            if !failed.contains_key(&t.id)
                && let Entry::Vacant(e) = flaky.entry(t.id.clone())
            {
                e.insert(t);
            }
        }
        self.failed = failed.into_values().collect();
        self.flaky = flaky.into_values().collect();
    }
}

/// What a green job execution's log said of its tests (`--green-logs`): the tests its runner
/// retried to a pass (hidden flakes: the job ended green), how many tests passed (`None` when
/// no runner summary says), and how many retries the runner made.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GreenOutcome {
    #[serde(default)]
    pub passed: Option<u64>,
    #[serde(default)]
    pub retries: u64,
    /// Sorted by id; each id once.
    #[serde(default)]
    pub retried: Vec<TestRecord>,
}

/// Everything the analysis needs, read from the store for one repository and window.
/// The analysis is a pure function of this and the signatures.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Snapshot {
    pub repo: Option<Repo>,
    pub default_branch: String,
    /// Inclusive.
    pub since: Option<Timestamp>,
    /// Exclusive.
    pub until: Option<Timestamp>,
    /// Runs created in `[since, until)` and, for bisection, runs before `since` that the store
    /// holds; sorted by (`created_at`, `id`).
    pub runs: Vec<Run>,
    /// Every job of every attempt of those runs, sorted by (`run_id`, `run_attempt`, `id`).
    pub jobs: Vec<Job>,
    /// For failed jobs only.
    pub logs: BTreeMap<JobId, LogStatus>,
    /// For failed jobs whose log is stored.
    pub classifications: BTreeMap<JobId, Classification>,
    /// Pull requests the store knows, by number.
    pub pulls: BTreeMap<PrNumber, PullRequest>,
    /// The default branch's history, oldest first (for placing runs relative to merges).
    pub mainline: Vec<MainlineCommit>,
    /// For runs on other branches: head sha → the default-branch commit it forked from (the merge
    /// base from `compare`), so "which merges does this run include" is read from ancestry.
    pub fork_points: BTreeMap<Sha, Sha>,
    /// Runs listed whose jobs the store does not hold for their latest attempt yet (a survey
    /// stopped before fetching them). Empty when every run's jobs are stored.
    #[serde(default)]
    pub runs_without_jobs: BTreeSet<RunId>,
    /// Parts of `[since, until)` no run listing covered, by start: a survey stopped while
    /// listing, or never asked (before or after what was surveyed). Empty when the whole window
    /// was listed.
    #[serde(default)]
    pub unlisted: Vec<(Timestamp, Timestamp)>,
    /// Where what the store has surveyed of the repository ends (the end of its latest run
    /// listing); `None` when no listing finished.
    #[serde(default)]
    pub surveyed_to: Option<Timestamp>,
    /// Parents of the default branch's commits that the store knows them for (first parent
    /// first): the first-parent chain from the tip is the branch's own line.
    #[serde(default)]
    pub parents: BTreeMap<Sha, Vec<Sha>>,
    /// Where each job ran, for jobs the store knows anything of (its runner from the jobs
    /// listing, its log's preamble): empty for stores written before flakestat kept them.
    #[serde(default)]
    pub placements: BTreeMap<JobId, Placement>,
    /// Green job executions whose log `--green-logs` read: what each said of its tests. Empty
    /// when none was read (every figure is then today's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub green: BTreeMap<JobId, GreenOutcome>,
}

/// A commit of the default branch's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MainlineCommit {
    pub sha: Sha,
    pub committed_at: Timestamp,
    /// The first line of the commit message; empty when unknown (a fork point stored before the
    /// history was listed).
    #[serde(default)]
    pub title: String,
    /// Changed files (`GET /commits/{sha}`), fetched only for direct pushes that end up
    /// suspects; `None` when unknown.
    #[serde(default)]
    pub files: Option<Vec<String>>,
}

/// What the analysis needs to know of a signature (the matcher's spec carries more).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureInfo {
    pub id: SignatureId,
    pub title: String,
    /// Globs of repository files; a PR changing one is *related* to the signature.
    pub paths: Vec<String>,
    /// URL of the tracking issue.
    pub issue: Option<String>,
}
