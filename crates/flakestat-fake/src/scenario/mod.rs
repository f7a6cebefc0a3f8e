//! Datasets built in code: a small synthetic one for tests and benchmarks ([`synthetic`]), and the
//! bundled scenarios that `Dataset::load` builds from a `scenario.toml` and the templates beside it.

use std::path::Path;

pub mod cuda_python;
pub mod ecosystems;
pub mod fleet;
pub mod org;
pub mod synthetic_prs;

use chrono::{TimeDelta, TimeZone, Utc};

use super::dataset::{Dataset, DatasetError, FakeAttempt, FakeCommit, FakeLog, FakeRun};
use flakestat_core::model::{Job, JobId, PrNumber, Repo, Run, RunId, Sha, Timestamp, WorkflowId};

/// The shape of a [`synthetic`] dataset.
#[derive(Debug, Clone)]
pub struct SyntheticSpec {
    pub repo: Repo,
    /// How many runs.
    pub runs: usize,
    pub jobs_per_run: usize,
    /// The first run's `created_at`; runs follow every `spacing`.
    pub start: Timestamp,
    pub spacing: TimeDelta,
    /// Every Nth run (1-based) fails: its first job fails with a log.
    pub fail_every: usize,
    /// Every Nth run (1-based) was re-run once: attempt 1 failed, attempt 2 green.
    pub rerun_every: usize,
    /// Adds a PR labeler workflow making this percentage of all runs (0: none), green at
    /// attempt 1 with one job each ([`Dataset::add_bot_workflow`]); `runs` stays the CI
    /// workflow's count.
    pub bot_percent: u32,
    /// Percentage of the CI runs that are PR runs (`pull_request` on the PR's head branch,
    /// [`SyntheticSpec::pushes_per_pr`] in a row per PR, see [`synthetic_prs`]); 0: every run
    /// is on `main`. With PR runs, the bot workflow runs on PR events only.
    pub pr_percent: u32,
    /// Runs of each PR.
    pub pushes_per_pr: usize,
    /// Percentage of the PRs that come from forks (their runs name no PR).
    pub fork_percent: u32,
}

impl Default for SyntheticSpec {
    fn default() -> SyntheticSpec {
        SyntheticSpec {
            repo: Repo {
                owner: "octo".into(),
                name: "demo".into(),
            },
            runs: 50,
            jobs_per_run: 4,
            start: Utc
                .with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
                .single()
                .expect("valid date"),
            spacing: TimeDelta::hours(1),
            fail_every: 5,
            rerun_every: 10,
            bot_percent: 0,
            pr_percent: 0,
            pushes_per_pr: 3,
            fork_percent: 0,
        }
    }
}

/// The id of run `i` (0-based) of a synthetic dataset.
pub fn synthetic_run_id(i: usize) -> RunId {
    RunId(20_000_000_000 + i as u64 * 1000)
}

/// A simple, regular dataset: runs alternate `push` and `schedule` on `main`, every commit on one
/// linear history; the first job of each failing attempt has a small log containing
/// `FLAKE-MARKER run <id> attempt <n>`. Job ids exceed 32 bits.
pub fn synthetic(spec: &SyntheticSpec) -> Dataset {
    let end = spec.start + spec.spacing * spec.runs as i32;
    let mut ds = Dataset::new(spec.repo.clone(), end + TimeDelta::hours(1));
    let mut parent: Option<Sha> = None;
    let mut prs =
        synthetic_prs::PrPlan::new(&spec.repo.name, spec.pushes_per_pr, spec.fork_percent);
    for i in 0..spec.runs {
        let created = spec.start + spec.spacing * i as i32;
        let id = synthetic_run_id(i);
        let n = i + 1;
        let fails = spec.fail_every > 0 && n.is_multiple_of(spec.fail_every);
        let rerun = spec.rerun_every > 0 && n.is_multiple_of(spec.rerun_every);
        let mut run = Run {
            id,
            workflow_id: WorkflowId(1001),
            workflow_name: "CI".into(),
            workflow_path: ".github/workflows/ci.yml".into(),
            display_title: format!("Commit {i}"),
            event: if i % 2 == 0 { "push" } else { "schedule" }.into(),
            head_branch: Some("main".into()),
            head_sha: Sha(String::new()),
            run_number: n as u64,
            run_attempt: 1,
            status: "completed".into(),
            conclusion: None,
            created_at: created,
            updated_at: created,
            run_started_at: Some(created),
            html_url: format!("https://github.com/{}/actions/runs/{id}", spec.repo),
            pull_requests: Vec::new(),
            head_repository: None,
        };
        // The first run is always on `main`, so a PR has a base.
        let sha = match parent.clone() {
            Some(main) if i > 0 && synthetic_prs::spread(i - 1, spec.pr_percent) => {
                let pr = prs.next_run(created, &main);
                ds.commits.push(FakeCommit {
                    sha: pr.sha.clone(),
                    parents: vec![pr.parent],
                    message: format!("{} (push {i})", pr.title),
                    author: "contributor".into(),
                    date: created - TimeDelta::minutes(1),
                    files: Vec::new(),
                });
                run.display_title = pr.title;
                run.event = "pull_request".into();
                run.head_branch = Some(pr.head_ref);
                // A fork's runs carry no PR, as on GitHub; the head repository is the fork.
                if pr.fork.is_none() {
                    run.pull_requests = vec![PrNumber(pr.number)];
                }
                run.head_repository = pr.fork;
                pr.sha
            }
            _ => {
                let sha = Sha(super::routes::fake_sha(&format!("synthetic {i}")));
                let (message, files) = prs
                    .merge_into(&sha, created - TimeDelta::minutes(1))
                    .unwrap_or_else(|| (format!("Commit {i}"), Vec::new()));
                ds.commits.push(FakeCommit {
                    sha: sha.clone(),
                    parents: parent.iter().cloned().collect(),
                    message,
                    author: "octocat".into(),
                    date: created - TimeDelta::minutes(1),
                    files,
                });
                parent = Some(sha.clone());
                sha
            }
        };
        run.head_sha = sha.clone();
        let attempt = |a: u32, failing: bool, ds: &mut Dataset| {
            let started = created + TimeDelta::minutes(30) * (a as i32 - 1);
            let jobs: Vec<Job> = (0..spec.jobs_per_run)
                .map(|k| {
                    let job_id = JobId(id.0 * 10 + u64::from(a) * 100 + k as u64);
                    let failed = failing && k == 0;
                    Job {
                        id: job_id,
                        run_id: id,
                        run_attempt: a,
                        name: format!("Test job {k}"),
                        status: "completed".into(),
                        conclusion: Some(if failed { "failure" } else { "success" }.into()),
                        created_at: started,
                        started_at: Some(started + TimeDelta::seconds(10)),
                        completed_at: Some(started + TimeDelta::minutes(10)),
                        html_url: Some(format!(
                            "https://github.com/{}/actions/runs/{id}/job/{job_id}",
                            spec.repo
                        )),
                        head_sha: sha.clone(),
                        labels: Vec::new(),
                    }
                })
                .collect();
            if failing {
                ds.logs.insert(
                    jobs[0].id,
                    failed_job_log(started, &format!("FLAKE-MARKER run {id} attempt {a}")),
                );
            }
            FakeAttempt {
                attempt: a,
                created_at: started,
                conclusion: Some(if failing { "failure" } else { "success" }.into()),
                jobs,
            }
        };
        let first = attempt(1, fails || rerun, &mut ds);
        let mut fake = FakeRun::new(run, first);
        if rerun {
            let second = attempt(2, false, &mut ds);
            fake.push_attempt(second);
        }
        ds.runs.push(fake);
    }
    if let Some(head) = parent {
        ds.branches.insert("main".into(), head);
    }
    ds.pulls = prs.pulls(ds.now);
    if spec.bot_percent > 0 {
        if spec.pr_percent > 0 {
            ds.add_pr_bot_workflow(spec.bot_percent);
        } else {
            ds.add_bot_workflow(spec.bot_percent);
        }
    }
    ds
}

/// The share of the runs a bundled scenario's bot workflow makes (`bot_workflow = true`).
pub const BOT_PERCENT: u32 = 70;

/// The `scenario.toml` of a bundled scenario folder.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// Which generator builds the dataset: `cuda-python-flake` or `fleet`.
    pub generator: String,
    /// The generator's seed: the same seed always gives the same dataset.
    pub seed: u64,
    /// How PR runs are triggered: `mirror` (default) or `github`.
    #[serde(default)]
    pub pr_style: PrStyle,
    /// How PRs land on the default branch: `squash` (default) or `merge-commit`.
    #[serde(default)]
    pub merge_style: MergeStyle,
    /// Long-lived PR branches (default off): the PRs opened before the culprit merged that have
    /// a hit run after it keep pushing onto their old base instead of taking `main` in, so in
    /// mirror style those hit runs test code that lacks the culprit. Which runs hit is unchanged.
    #[serde(default)]
    pub stale_branches: bool,
    /// Adds a PR labeler making 70 % of the runs, all green, one job each (default off):
    /// a busy repository's shape, with every figure of the report unchanged.
    #[serde(default)]
    pub bot_workflow: bool,
    /// Gives some green test jobs logs showing a test their runner retried to a pass, in
    /// several runners' formats (`hidden_flakes.rs`; default off): what `--green-logs` reads.
    /// Every failed job and every figure of a report without `--green-logs` is unchanged.
    #[serde(default)]
    pub hidden_flakes: bool,
    /// The end of the recording (RFC 3339): the replay's "now", from which a window without
    /// `--until` and spans back (`--since 30d`) are measured. Stated so a reader of the folder
    /// knows it; the generator's own present when absent, and a file that says another is
    /// refused (it would say one thing and serve another).
    #[serde(default)]
    pub now: Option<String>,
}

/// How a bundled scenario's PR runs are triggered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrStyle {
    /// Each push to a PR is copied to `pull-request/<N>` and runs as `push` with
    /// `pull_requests: []` (NVIDIA/cuda-python's copy-pr-bot), a few as `pull_request`.
    #[default]
    Mirror,
    /// GitHub's default: every PR run is a `pull_request` event on the PR's branch with
    /// `pull_requests: [N]`.
    Github,
}

/// How a bundled scenario's PRs land on the default branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergeStyle {
    /// One squash commit per merge: a linear first-parent history.
    #[default]
    Squash,
    /// A merge commit per merge whose second parent is the PR's last push, so the PR's
    /// commits (dated before the merge) are listed among the merges by `/commits`.
    MergeCommit,
}

/// Builds the dataset a scenario folder describes.
pub(crate) fn load(dir: &Path) -> Result<Dataset, DatasetError> {
    let path = dir.join("scenario.toml");
    let text = std::fs::read_to_string(&path).map_err(|source| DatasetError::Read {
        path: path.clone(),
        source,
    })?;
    let spec: ScenarioSpec = toml::from_str(&text).map_err(|e| DatasetError::Invalid {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let ds = match spec.generator.as_str() {
        "cuda-python-flake" => cuda_python::generate(
            dir,
            spec.seed,
            cuda_python::Shape {
                pr_style: spec.pr_style,
                merge_style: spec.merge_style,
                stale_branches: spec.stale_branches,
            },
        )
        .map(|mut ds| {
            if spec.bot_workflow {
                ds.add_bot_workflow(BOT_PERCENT);
            }
            if spec.hidden_flakes {
                ds.add_hidden_flakes();
            }
            ds
        })?,
        "fleet" => {
            // The fleet's story has one shape: a style key would say one thing and serve another.
            let styled = spec.pr_style != PrStyle::default()
                || spec.merge_style != MergeStyle::default()
                || spec.stale_branches
                || spec.bot_workflow
                || spec.hidden_flakes;
            if styled {
                return Err(DatasetError::Invalid {
                    path,
                    message: "the `fleet` generator takes no style keys (pr_style, merge_style, \
                              stale_branches, bot_workflow, hidden_flakes)"
                        .into(),
                });
            }
            fleet::fleet_seeded(spec.seed)
        }
        other => {
            return Err(DatasetError::Invalid {
                path,
                message: format!("unknown generator `{other}` (known: cuda-python-flake, fleet)"),
            });
        }
    };
    if let Some(stated) = &spec.now {
        let invalid = |message: String| DatasetError::Invalid {
            path: path.clone(),
            message,
        };
        let now = chrono::DateTime::parse_from_rfc3339(stated.trim())
            .map_err(|e| invalid(format!("now = {stated:?} is not an RFC 3339 datetime: {e}")))?
            .to_utc();
        if now != ds.now {
            return Err(invalid(format!(
                "now = {stated:?}, but the recording ends at {}",
                ds.now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )));
        }
    }
    Ok(ds)
}

/// A failed job's short log: three lines stamped 10, 11 and 12 s into the job (`started`), as
/// GitHub's runner writes them, the middle one `line`.
pub(crate) fn failed_job_log(started: Timestamp, line: &str) -> FakeLog {
    let at = |secs: i64| crate::stamp::log_line(started + TimeDelta::seconds(secs));
    FakeLog::Text(format!(
        "\u{feff}{} ##[group]Run tests\n{} {line}\n{} ##[error]Process completed with exit code 1.\n",
        at(10),
        at(11),
        at(12)
    ))
}
