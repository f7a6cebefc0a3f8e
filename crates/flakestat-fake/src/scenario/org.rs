//! Organisations of several repositories behind one fake server, for `survey --org` tests and
//! the `org:N` benchmark. Each repository is a small regular CI month (one workflow, a
//! 4-job matrix `tests (linux-64|win-64, py3.12|py3.13)`, one run every `spacing`, on a linear
//! `main`), whose failing jobs carry a log with a failure line: the same line in two
//! repositories is a flake they share.

use chrono::{TimeDelta, TimeZone, Utc};

use super::super::dataset::{Dataset, FakeAttempt, FakeCommit, FakeRun};
use flakestat_core::model::{Job, JobId, Repo, Run, RunId, Sha, Timestamp, WorkflowId};

/// The line both flaky repositories of [`three_repos`] fail with (bundled `disk-full`).
pub const SHARED_FLAKE_LINE: &str =
    "OSError: [Errno 28] No space left on device: '/tmp/pip-build-env/overlay'";
/// The line only `octo-org/beta` fails with as well (bundled `network-error`).
pub const BETA_ONLY_LINE: &str =
    "curl: (56) Recv failure: Connection reset by peer while fetching https://example.com/wheel";

/// The organisation [`three_repos`] and [`many_repos`] put their repositories in.
pub const ORG: &str = "octo-org";

/// The matrix of every job list: `(name, platform, python)`.
const MATRIX: [&str; 4] = [
    "tests (linux-64, py3.12)",
    "tests (linux-64, py3.13)",
    "tests (win-64, py3.12)",
    "tests (win-64, py3.13)",
];

/// One repository of a fake organisation.
#[derive(Debug, Clone)]
pub struct RepoSpec {
    pub name: String,
    pub runs: usize,
    /// The first run's `created_at`; the others follow every `spacing`.
    pub start: Timestamp,
    pub spacing: TimeDelta,
    /// Failures: (every Nth run, 1-based; the matrix job that fails, index into the 4 jobs;
    /// the failure line its log carries).
    pub failures: Vec<(usize, usize, String)>,
    /// Every Nth run was re-run once: attempt 1 failed like above, attempt 2 green.
    pub rerun_every: usize,
    /// Ids of this repository's runs start here (ids never repeat across the organisation).
    pub id_base: u64,
}

/// The start of the fake organisations' month.
pub fn month_start() -> Timestamp {
    Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
        .single()
        .expect("valid date")
}

/// Builds one repository's dataset; `now` is a day after its last run.
pub fn repo(spec: &RepoSpec) -> Dataset {
    let repo = Repo {
        owner: ORG.into(),
        name: spec.name.clone(),
    };
    let end = spec.start + spec.spacing * spec.runs as i32;
    let mut ds = Dataset::new(repo.clone(), end + TimeDelta::days(1));
    let mut parent: Option<Sha> = None;
    for i in 0..spec.runs {
        let created = spec.start + spec.spacing * i as i32;
        let sha = Sha(super::super::routes::fake_sha(&format!("{repo} {i}")));
        ds.commits.push(FakeCommit {
            sha: sha.clone(),
            parents: parent.iter().cloned().collect(),
            message: format!("Commit {i} of {}", spec.name),
            author: "octocat".into(),
            date: created - TimeDelta::minutes(1),
            files: Vec::new(),
        });
        parent = Some(sha.clone());
        let id = RunId(spec.id_base + i as u64 * 100);
        let n = i + 1;
        let failure = spec
            .failures
            .iter()
            .find(|(every, _, _)| *every > 0 && n.is_multiple_of(*every));
        let rerun = spec.rerun_every > 0 && n.is_multiple_of(spec.rerun_every);
        let run = Run {
            id,
            workflow_id: WorkflowId(5000 + spec.id_base / 1_000_000),
            workflow_name: "CI".into(),
            workflow_path: ".github/workflows/ci.yml".into(),
            display_title: format!("Commit {i}"),
            event: "push".into(),
            head_branch: Some("main".into()),
            head_sha: sha.clone(),
            run_number: n as u64,
            run_attempt: 1,
            status: "completed".into(),
            conclusion: None,
            created_at: created,
            updated_at: created,
            run_started_at: Some(created),
            html_url: format!("https://github.com/{repo}/actions/runs/{id}"),
            pull_requests: Vec::new(),
            head_repository: None,
        };
        let attempt = |a: u32, failing: Option<&(usize, usize, String)>, ds: &mut Dataset| {
            let started = created + TimeDelta::minutes(30) * (a as i32 - 1);
            let jobs: Vec<Job> = MATRIX
                .iter()
                .enumerate()
                .map(|(k, name)| {
                    let job_id = JobId(id.0 * 10 + u64::from(a) * 10 + k as u64);
                    let failed = failing.is_some_and(|(_, job, _)| *job == k);
                    Job {
                        id: job_id,
                        run_id: id,
                        run_attempt: a,
                        name: (*name).to_string(),
                        status: "completed".into(),
                        conclusion: Some(if failed { "failure" } else { "success" }.into()),
                        created_at: started,
                        started_at: Some(started + TimeDelta::seconds(10)),
                        completed_at: Some(started + TimeDelta::minutes(10)),
                        html_url: Some(format!(
                            "https://github.com/{repo}/actions/runs/{id}/job/{job_id}"
                        )),
                        head_sha: sha.clone(),
                        labels: vec![if name.contains("win-64") {
                            "windows-latest".into()
                        } else {
                            "ubuntu-latest".into()
                        }],
                    }
                })
                .collect();
            if let Some((_, k, line)) = failing {
                ds.logs
                    .insert(jobs[*k].id, super::failed_job_log(started, line));
            }
            FakeAttempt {
                attempt: a,
                created_at: started,
                conclusion: Some(
                    if failing.is_some() {
                        "failure"
                    } else {
                        "success"
                    }
                    .into(),
                ),
                jobs,
            }
        };
        let first = attempt(1, failure, &mut ds);
        let mut fake = FakeRun::new(run, first);
        if rerun && failure.is_some() {
            let second = attempt(2, None, &mut ds);
            fake.push_attempt(second);
        }
        ds.runs.push(fake);
    }
    if let Some(head) = parent {
        ds.branches.insert("main".into(), head);
    }
    ds
}

/// The organisation of the `survey --org` tests, `octo-org`: three active repositories and two
/// that a survey skips.
///
/// - `alpha`: 40 runs every 6 h; every 5th run fails on `tests (linux-64, py3.13)` with
///   [`SHARED_FLAKE_LINE`] (8 runs), every 10th of them re-run to green.
/// - `beta`: 30 runs every 8 h; every 3rd run fails on `tests (win-64, py3.13)` with the same
///   line (10 runs), and every 7th (not a 3rd) on `tests (linux-64, py3.12)` with
///   [`BETA_ONLY_LINE`] (3 runs: 7, 14, 28).
/// - `gamma`: 20 runs every 12 h, all green: runs, no hits.
/// - `archived` (archived) and `dormant` (last push in May, runs in May only): listed by the
///   organisation, skipped by a survey of June.
///
/// Every dataset's `now` is the same: 2026-07-01.
pub fn three_repos() -> Vec<Dataset> {
    let start = month_start();
    let spec = |name: &str, runs, hours, failures: Vec<(usize, usize, &str)>, base| RepoSpec {
        name: name.into(),
        runs,
        start,
        spacing: TimeDelta::hours(hours),
        failures: failures
            .into_iter()
            .map(|(e, k, l)| (e, k, l.to_string()))
            .collect(),
        rerun_every: 10,
        id_base: base,
    };
    let mut out = vec![
        repo(&spec(
            "alpha",
            40,
            6,
            vec![(5, 1, SHARED_FLAKE_LINE)],
            31_000_000_000,
        )),
        repo(&spec(
            "beta",
            30,
            8,
            vec![(3, 3, SHARED_FLAKE_LINE), (7, 0, BETA_ONLY_LINE)],
            32_000_000_000,
        )),
        repo(&spec("gamma", 20, 12, vec![], 33_000_000_000)),
    ];
    let mut archived = repo(&spec(
        "archived",
        10,
        24,
        vec![(2, 0, SHARED_FLAKE_LINE)],
        34_000_000_000,
    ));
    archived.archived = true;
    let mut dormant = repo(&RepoSpec {
        start: start - TimeDelta::days(30),
        ..spec(
            "dormant",
            10,
            24,
            vec![(2, 0, SHARED_FLAKE_LINE)],
            35_000_000_000,
        )
    });
    dormant.pushed_at = Some(start - TimeDelta::days(20));
    out.push(archived);
    out.push(dormant);
    let now = start + TimeDelta::days(30);
    for ds in &mut out {
        ds.now = now;
    }
    out
}

/// `n` active repositories of `octo-org` for the benchmark (`org:N`): `repo-00` … each with 120
/// runs every 6 h of June; every third repository clean, the others failing on every 4th run
/// with [`SHARED_FLAKE_LINE`] on a job that depends on the repository, and every 9th with
/// [`BETA_ONLY_LINE`].
pub fn many_repos(n: usize) -> Vec<Dataset> {
    let start = month_start();
    (0..n)
        .map(|i| {
            let failures = if i % 3 == 2 {
                Vec::new()
            } else {
                vec![
                    (4, i % 4, SHARED_FLAKE_LINE.to_string()),
                    (9, (i + 1) % 4, BETA_ONLY_LINE.to_string()),
                ]
            };
            let mut ds = repo(&RepoSpec {
                name: format!("repo-{i:02}"),
                runs: 120,
                start: start + TimeDelta::minutes(7 * i as i64),
                spacing: TimeDelta::hours(6),
                failures,
                rerun_every: 8,
                id_base: 40_000_000_000 + i as u64 * 1_000_000,
            });
            ds.now = start + TimeDelta::days(30);
            ds
        })
        .collect()
}
