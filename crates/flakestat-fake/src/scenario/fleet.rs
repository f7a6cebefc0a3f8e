//! A fleet with names (issue 43): where each job ran, and the failures that belong to a machine
//! rather than to the code. Two weeks of a repository's CI on `main`, four runs a day:
//!
//! - a persistent self-hosted GPU pool (`runs-on: linux-amd64-gpu-l4`, runner group
//!   `nv-gpu-l4`) of eight named hosts, `gpu-l4-01` … `gpu-l4-08`, each GPU test job on one of
//!   them; from day 4 on, [`BAD_HOST`] fails about one job in three with a driver error (`nvidia-smi` cannot
//!   reach the driver, then `CUDA_ERROR_NO_DEVICE`), the others about one in thirty with an
//!   ordinary test failure;
//! - two hosts of that pool ([`OLD_DRIVER_HOSTS`]) still on driver [`OLD_DRIVER`], where now and
//!   then a job crashes ([`CRASH`]); it passes when re-run on a host with the current driver
//!   (drawn from a generator of its own, so the rest of the story draws what it drew before);
//! - one night ([`POOL_WIDE_RUN`]) when every job of that pool fails at once (the pool's shared
//!   scratch volume is full: `No space left on device`), while the run's other pools pass on
//!   the same commit;
//! - an ephemeral scale-set pool (`arc-gpu-h100-<5>-runner-<5>`, one pod per job);
//! - GitHub-hosted jobs (`ubuntu-latest`) whose image changes mid-window from
//!   [`OLD_IMAGE_VERSION`] to [`NEW_IMAGE_VERSION`], and the new one breaks the wheel build
//!   about every other run (a package the new image's Python cannot resolve).
//!
//! - one pull request, #[`PR`], whose one run lands a GPU shard on [`BAD_HOST`], where it fails
//!   with the driver error (`flakestat pr` calls it infrastructure: the host is on the drain
//!   list).
//!
//! Every failed job's log opens with `Set up job` as the real runners print it (runner
//! version; runner, group and machine names on self-hosted runners; the provisioner, operating
//! system and runner image groups on GitHub's), and GPU jobs print `nvidia-smi`'s table.

use chrono::{TimeDelta, TimeZone, Utc};

use crate::dataset::{
    Dataset, FakeAttempt, FakeCommit, FakeFile, FakeLog, FakePull, FakeRun, FakeRunner,
};
use crate::rng::Rng;
use crate::routes::fake_sha;
use crate::stamp;
use flakestat_core::model::{Job, JobId, PrNumber, Repo, Run, RunId, Sha, Timestamp, WorkflowId};

pub const REPO: &str = "octo/fleet";
/// The window the scenario fills: `[SINCE, UNTIL)`.
pub const SINCE: &str = "2026-06-01";
pub const UNTIL: &str = "2026-06-15";
pub const DAYS: usize = 14;
pub const RUNS_PER_DAY: usize = 4;
pub const GPU_POOL: &str = "linux-amd64-gpu-l4";
pub const GPU_GROUP: &str = "nv-gpu-l4";
pub const HOSTS: usize = 8;
/// The host with a wedged driver, from run [`BAD_FROM_RUN`] on.
pub const BAD_HOST: &str = "gpu-l4-05";
/// The first run (0-based) the bad host's driver is wedged in: day 4's first, so a nightly
/// whose baseline ends before it sees the host newly on the drain list.
pub const BAD_FROM_RUN: usize = 4 * RUNS_PER_DAY;
pub const ARC_POOL: &str = "arc-gpu-h100";
pub const HOSTED_POOL: &str = "ubuntu-latest";
pub const IMAGE: &str = "ubuntu-24.04";
pub const OLD_IMAGE_VERSION: &str = "20260525.1.0";
pub const NEW_IMAGE_VERSION: &str = "20260607.3.0";
/// The first run (0-based) on the new image: day 7's first.
pub const NEW_IMAGE_FROM_RUN: usize = 7 * RUNS_PER_DAY;
/// The night every GPU job of the pool failed at once.
pub const POOL_WIDE_RUN: usize = 9 * RUNS_PER_DAY + 3;
/// The GPU pool's driver, as `nvidia-smi` prints it.
pub const DRIVER: &str = "550.54.15";
/// The driver two hosts were never upgraded from ([`OLD_DRIVER_HOSTS`]).
pub const OLD_DRIVER: &str = "535.183.01";
/// The hosts (0-based) still on [`OLD_DRIVER`]: `gpu-l4-07` and `gpu-l4-08`.
pub const OLD_DRIVER_HOSTS: [usize; 2] = [6, 7];
/// What the old driver does now and then: the tests' process dies in it.
pub const CRASH: &str = "Fatal Python error: Segmentation fault";
/// One job in this many on an old-driver host crashes (when nothing else failed it).
const CRASH_ONE_IN: u64 = 14;

/// The driver host `name` runs.
pub fn driver_of(name: &str) -> &'static str {
    if OLD_DRIVER_HOSTS.iter().any(|&k| host(k) == name) {
        OLD_DRIVER
    } else {
        DRIVER
    }
}
/// What the tests say on a host whose driver is wedged.
const NO_DEVICE: &str = "E   cuda.core._utils.cuda_utils.CUDAError: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected";
const GPU_JOBS: usize = 8;

/// The run id of run `i` (0-based).
pub fn run_id(i: usize) -> RunId {
    RunId(31_000_000_000 + i as u64 * 1000)
}

/// The name of host `k` (0-based).
pub fn host(k: usize) -> String {
    format!("gpu-l4-{:02}", k + 1)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pool {
    Gpu,
    Arc,
    Hosted,
}

/// Why a job failed, or `None`.
fn failure_line(
    pool: Pool,
    on_bad_host: bool,
    kind: &str,
    i: usize,
    rng: &mut Rng,
) -> Option<&'static str> {
    if pool == Pool::Gpu && i == POOL_WIDE_RUN {
        return Some("E   OSError: [Errno 28] No space left on device: '/scratch/cuda-cache'");
    }
    match pool {
        Pool::Gpu if on_bad_host => (rng.below(3) == 0).then_some(NO_DEVICE),
        Pool::Gpu | Pool::Arc => (rng.below(30) == 0).then_some(
            "FAILED tests/test_memory.py::test_pool_growth - AssertionError: assert 3 == 4",
        ),
        Pool::Hosted if kind == "build" && i >= NEW_IMAGE_FROM_RUN => (rng.below(2) == 0).then_some(
            "ERROR: Could not find a version that satisfies the requirement cuda-bindings==12.9.0 (from versions: none)",
        ),
        Pool::Hosted => (rng.below(12) == 0)
            .then_some("curl: (6) Could not resolve host: files.pythonhosted.org"),
    }
}

/// A failed job's raw log in the real runners' format: `Set up job`, `nvidia-smi` on GPU
/// jobs, then the failing step.
fn log(
    started: Timestamp,
    job: &str,
    runner: &FakeRunner,
    pool: Pool,
    image_version: &str,
    driver_wedged: bool,
    error: &str,
) -> FakeLog {
    let mut lines: Vec<String> = Vec::new();
    let mut push = |s: &str| lines.push(s.to_string());
    match pool {
        Pool::Hosted => {
            push("Current runner version: '2.330.0'");
            push("##[group]Runner Image Provisioner");
            push("Hosted Compute Agent");
            push("Version: 20260521.440");
            push("Worker ID: {5d0f2a1c-3b8e-4f61-9a7d-2c4e8b1f6a90}");
            push("##[endgroup]");
            push("##[group]Operating System");
            push("Ubuntu");
            push("24.04.2");
            push("LTS");
            push("##[endgroup]");
            push("##[group]Runner Image");
            push(&format!("Image: {IMAGE}"));
            push(&format!("Version: {image_version}"));
            let short = image_version
                .rsplit_once('.')
                .map_or(image_version, |(a, _)| a);
            push(&format!(
                "Included Software: https://github.com/actions/runner-images/blob/ubuntu24/{short}/images/ubuntu/Ubuntu2404-Readme.md"
            ));
            push(&format!(
                "Image Release: https://github.com/actions/runner-images/releases/tag/ubuntu24%2F{short}"
            ));
            push("##[endgroup]");
        }
        Pool::Gpu | Pool::Arc => {
            push("Current runner version: '2.327.1'");
            push(&format!("Runner name: '{}'", runner.name));
            push(&format!("Runner group name: '{}'", runner.group));
            push(&format!("Machine name: '{}'", runner.name));
        }
    }
    push("##[group]GITHUB_TOKEN Permissions");
    push("Contents: read");
    push("Metadata: read");
    push("##[endgroup]");
    push("Secret source: Actions");
    push("Prepare workflow directory");
    push("Prepare all required actions");
    push(&format!("Complete job name: {job}"));
    if pool != Pool::Hosted {
        push("##[group]Run nvidia-smi");
        push("\u{1b}[36;1mnvidia-smi\u{1b}[0m");
        push("shell: /usr/bin/bash -e {0}");
        push("##[endgroup]");
        if driver_wedged {
            push(
                "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
            );
        } else {
            let driver = driver_of(&runner.name);
            let cuda = if driver == OLD_DRIVER { "12.2" } else { "12.4" };
            let gpu = if pool == Pool::Arc {
                "NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |"
            } else {
                "NVIDIA L4                      On  |   00000000:00:03.0 Off |                    0 |"
            };
            push("Mon Jun  1 00:00:00 2026       ");
            push(
                "+-----------------------------------------------------------------------------------------+",
            );
            push(&format!(
                "| NVIDIA-SMI {driver}              Driver Version: {driver}      CUDA Version: {cuda}     |"
            ));
            push(
                "|-----------------------------------------+------------------------+----------------------+",
            );
            push(
                "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
            );
            push(
                "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
            );
            push(
                "|=========================================+========================+======================|",
            );
            push(&format!("|   0  {gpu}"));
            push(
                "| N/A   34C    P8             12W /   72W |       1MiB /  23034MiB |      0%      Default |",
            );
            push(
                "+-----------------------------------------+------------------------+----------------------+",
            );
        }
    }
    let step = if pool == Pool::Hosted && job.starts_with("Build") {
        "pip install -r requirements.txt"
    } else {
        "pytest tests/"
    };
    push(&format!("##[group]Run {step}"));
    push(&format!("\u{1b}[36;1m{step}\u{1b}[0m"));
    push("shell: /usr/bin/bash -e {0}");
    push("##[endgroup]");
    push(error);
    push("##[error]Process completed with exit code 1.");
    let mut out = String::from("\u{feff}");
    for (n, line) in lines.iter().enumerate() {
        let at = started + TimeDelta::milliseconds(1000 + 100 * n as i64);
        out.push_str(&stamp::log_line(at));
        out.push(' ');
        out.push_str(line);
        out.push('\n');
    }
    FakeLog::Text(out)
}

/// The seed of [`fleet`], and of the bundled replay `fixtures/fleet` (its `scenario.toml`).
pub const SEED: u64 = 43;

/// The fleet's dataset (always the same: its generator is seeded).
pub fn fleet() -> Dataset {
    fleet_seeded(SEED)
}

/// The fleet drawn from `seed` ([`SEED`] is the story the tests and the bundled replay tell).
pub fn fleet_seeded(seed: u64) -> Dataset {
    let repo = Repo::parse(REPO).expect("valid repo");
    let start = Utc
        .with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
        .single()
        .expect("valid date");
    let runs = DAYS * RUNS_PER_DAY;
    let spacing = TimeDelta::hours(24 / RUNS_PER_DAY as i64);
    let mut ds = Dataset::new(repo.clone(), start + TimeDelta::days(DAYS as i64));
    let mut rng = Rng(seed);
    let mut crash_rng = Rng(seed ^ 0x0535_1830);
    let mut crashes: std::collections::BTreeSet<JobId> = std::collections::BTreeSet::new();
    let mut parent: Option<Sha> = None;
    let mut mainline: Vec<(Timestamp, Sha)> = Vec::new();
    for i in 0..runs {
        let created = start + spacing * i as i32 + TimeDelta::minutes(5);
        let id = run_id(i);
        let sha = Sha(fake_sha(&format!("fleet {i}")));
        ds.commits.push(FakeCommit {
            sha: sha.clone(),
            parents: parent.iter().cloned().collect(),
            message: format!("Commit {i}"),
            author: "octocat".into(),
            date: created - TimeDelta::minutes(1),
            files: Vec::new(),
        });
        parent = Some(sha.clone());
        mainline.push((created, sha.clone()));
        let image_version = if i >= NEW_IMAGE_FROM_RUN {
            NEW_IMAGE_VERSION
        } else {
            OLD_IMAGE_VERSION
        };
        let mut specs: Vec<(String, Pool, &str)> = (0..GPU_JOBS)
            .map(|k| (format!("Test gpu-l4 (shard {k})"), Pool::Gpu, "test"))
            .collect();
        specs.push(("Test h100".into(), Pool::Arc, "test"));
        specs.push(("Build wheel".into(), Pool::Hosted, "build"));
        specs.push(("Lint".into(), Pool::Hosted, "lint"));
        let mut jobs = Vec::new();
        let mut failed_any = false;
        for (k, (name, pool, kind)) in specs.into_iter().enumerate() {
            let job_id = JobId(id.0 * 10 + 100 + k as u64);
            let started = created + TimeDelta::seconds(20 + k as i64);
            let (runner, label) = match pool {
                Pool::Gpu => (
                    FakeRunner {
                        name: host(rng.below(HOSTS as u64) as usize),
                        group: GPU_GROUP.into(),
                    },
                    GPU_POOL,
                ),
                Pool::Arc => {
                    let r = fake_sha(&format!("arc {job_id}"));
                    (
                        FakeRunner {
                            name: format!("{ARC_POOL}-{}-runner-{}", &r[..5], &r[5..10]),
                            group: "arc".into(),
                        },
                        ARC_POOL,
                    )
                }
                Pool::Hosted => (
                    FakeRunner {
                        name: format!("GitHub Actions {}", 1000 + rng.below(9000)),
                        group: "GitHub Actions".into(),
                    },
                    HOSTED_POOL,
                ),
            };
            let on_bad_host = runner.name == BAD_HOST && i >= BAD_FROM_RUN;
            let error = failure_line(pool, on_bad_host, kind, i, &mut rng);
            // The old driver's crash, drawn apart (`crash_rng`): the rest of the story draws
            // what it drew before.
            let crashed = error.is_none()
                && pool == Pool::Gpu
                && i != POOL_WIDE_RUN
                && driver_of(&runner.name) == OLD_DRIVER
                && crash_rng.below(CRASH_ONE_IN) == 0;
            let error = if crashed { Some(CRASH) } else { error };
            if crashed {
                crashes.insert(job_id);
            }
            if let Some(error) = error {
                failed_any = true;
                let wedged = on_bad_host && error.contains("CUDA_ERROR_NO_DEVICE");
                ds.logs.insert(
                    job_id,
                    log(started, &name, &runner, pool, image_version, wedged, error),
                );
            }
            ds.runners.insert(job_id, runner);
            jobs.push(Job {
                id: job_id,
                run_id: id,
                run_attempt: 1,
                name,
                status: "completed".into(),
                conclusion: Some(
                    if error.is_some() {
                        "failure"
                    } else {
                        "success"
                    }
                    .into(),
                ),
                created_at: created,
                started_at: Some(started),
                completed_at: Some(started + TimeDelta::minutes(12)),
                html_url: Some(format!(
                    "https://github.com/{repo}/actions/runs/{id}/job/{job_id}"
                )),
                head_sha: sha.clone(),
                labels: vec![label.to_string()],
            });
        }
        let run = Run {
            id,
            workflow_id: WorkflowId(4301),
            workflow_name: "CI".into(),
            workflow_path: ".github/workflows/ci.yml".into(),
            display_title: format!("Commit {i}"),
            event: if i % RUNS_PER_DAY == 3 {
                "schedule"
            } else {
                "push"
            }
            .into(),
            head_branch: Some("main".into()),
            head_sha: sha,
            run_number: i as u64 + 1,
            run_attempt: 1,
            status: "completed".into(),
            conclusion: None,
            created_at: created,
            updated_at: created + TimeDelta::minutes(15),
            run_started_at: Some(created),
            html_url: format!("https://github.com/{repo}/actions/runs/{id}"),
            pull_requests: Vec::new(),
            head_repository: None,
        };
        // A run the bad host failed is re-run ("re-run failed jobs"): each failed job again,
        // on another host of its pool, and it passes there (it works elsewhere). So is a run
        // the old driver crashed in, the crashed job on a host with the current driver; its
        // hosts are drawn apart (`crash_rng`), so the bad host's re-runs stay as they were.
        let driver_failed = jobs
            .iter()
            .any(|j| j.is_failed() && ds.runners.get(&j.id).is_some_and(|r| r.name == BAD_HOST))
            && i != POOL_WIDE_RUN;
        let crash_failed = jobs.iter().any(|j| crashes.contains(&j.id));
        let rerun: Vec<Job> = if driver_failed || crash_failed {
            let again = created + TimeDelta::minutes(40);
            jobs.iter()
                .filter(|j| j.is_failed())
                .enumerate()
                .map(|(n, j)| {
                    let job_id = JobId(j.id.0 + 100);
                    let runner = match ds.runners[&j.id].group.as_str() {
                        GPU_GROUP if !driver_failed || crashes.contains(&j.id) => {
                            // A host with the current driver that is not the bad one.
                            let current: Vec<usize> = (0..HOSTS)
                                .filter(|&k| host(k) != BAD_HOST && !OLD_DRIVER_HOSTS.contains(&k))
                                .collect();
                            FakeRunner {
                                name: host(current[crash_rng.below(current.len() as u64) as usize]),
                                group: GPU_GROUP.into(),
                            }
                        }
                        GPU_GROUP => FakeRunner {
                            // Any host but the bad one (index 4).
                            name: host(match rng.below(HOSTS as u64 - 1) as usize {
                                k if k >= 4 => k + 1,
                                k => k,
                            }),
                            group: GPU_GROUP.into(),
                        },
                        _ => ds.runners[&j.id].clone(),
                    };
                    ds.runners.insert(job_id, runner);
                    let started = again + TimeDelta::seconds(20 + n as i64);
                    Job {
                        id: job_id,
                        run_attempt: 2,
                        conclusion: Some("success".into()),
                        created_at: again,
                        started_at: Some(started),
                        completed_at: Some(started + TimeDelta::minutes(12)),
                        html_url: Some(format!(
                            "https://github.com/{repo}/actions/runs/{id}/job/{job_id}"
                        )),
                        ..j.clone()
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        let attempt = FakeAttempt {
            attempt: 1,
            created_at: created,
            conclusion: Some(if failed_any { "failure" } else { "success" }.into()),
            jobs,
        };
        let mut fake = FakeRun::new(run, attempt);
        if !rerun.is_empty() {
            fake.push_attempt(FakeAttempt {
                attempt: 2,
                created_at: created + TimeDelta::minutes(40),
                conclusion: Some("success".into()),
                jobs: rerun,
            });
        }
        ds.runs.push(fake);
    }
    if let Some(head) = parent {
        ds.branches.insert("main".into(), head);
    }
    add_pull_request(&mut ds, &mainline);
    ds
}

/// The pull request whose one run lands a job on the bad host (`flakestat pr`, issue 44).
pub const PR: u64 = 7;
/// The main run (0-based) the PR's branch starts from; its run comes two hours later.
pub const PR_BASE_RUN: usize = 11 * RUNS_PER_DAY + 1;
/// The PR's shard that runs on [`BAD_HOST`] (shard `k` on host `k`) and fails there.
pub const PR_BAD_SHARD: usize = 4;

/// The PR's one run.
pub fn pr_run_id() -> RunId {
    RunId(run_id(PR_BASE_RUN).0 + 500)
}

/// PR #[`PR`], branched from `main` at [`PR_BASE_RUN`], with one `pull_request` run: every GPU
/// shard `k` on host `k`, so shard [`PR_BAD_SHARD`] lands on [`BAD_HOST`] and fails with its
/// driver error; every other job passes. Drawn from no generator, so the window's other runs
/// are what they were.
fn add_pull_request(ds: &mut Dataset, mainline: &[(Timestamp, Sha)]) {
    let repo = ds.repo.clone();
    let (base_at, base) = mainline[PR_BASE_RUN].clone();
    let created = base_at + TimeDelta::hours(2);
    let sha = Sha(fake_sha(&format!("fleet pr {PR}")));
    ds.commits.push(FakeCommit {
        sha: sha.clone(),
        parents: vec![base.clone()],
        message: "Reuse the memory pool across tests".into(),
        author: "mona".into(),
        date: created - TimeDelta::minutes(3),
        files: Vec::new(),
    });
    let id = pr_run_id();
    let mut jobs = Vec::new();
    let names = (0..GPU_JOBS)
        .map(|k| (format!("Test gpu-l4 (shard {k})"), Pool::Gpu))
        .chain([
            ("Test h100".to_string(), Pool::Arc),
            ("Build wheel".to_string(), Pool::Hosted),
            ("Lint".to_string(), Pool::Hosted),
        ]);
    for (k, (name, pool)) in names.enumerate() {
        let job_id = JobId(id.0 * 10 + 100 + k as u64);
        let started = created + TimeDelta::seconds(20 + k as i64);
        let (runner, label) = match pool {
            Pool::Gpu => (
                FakeRunner {
                    name: host(k),
                    group: GPU_GROUP.into(),
                },
                GPU_POOL,
            ),
            Pool::Arc => {
                let r = fake_sha(&format!("arc {job_id}"));
                (
                    FakeRunner {
                        name: format!("{ARC_POOL}-{}-runner-{}", &r[..5], &r[5..10]),
                        group: "arc".into(),
                    },
                    ARC_POOL,
                )
            }
            Pool::Hosted => (
                FakeRunner {
                    name: format!("GitHub Actions {}", 7000 + k),
                    group: "GitHub Actions".into(),
                },
                HOSTED_POOL,
            ),
        };
        let fails = pool == Pool::Gpu && k == PR_BAD_SHARD;
        if fails {
            ds.logs.insert(
                job_id,
                log(
                    started,
                    &name,
                    &runner,
                    pool,
                    NEW_IMAGE_VERSION,
                    true,
                    NO_DEVICE,
                ),
            );
        }
        ds.runners.insert(job_id, runner);
        jobs.push(Job {
            id: job_id,
            run_id: id,
            run_attempt: 1,
            name,
            status: "completed".into(),
            conclusion: Some(if fails { "failure" } else { "success" }.into()),
            created_at: created,
            started_at: Some(started),
            completed_at: Some(started + TimeDelta::minutes(12)),
            html_url: Some(format!(
                "https://github.com/{repo}/actions/runs/{id}/job/{job_id}"
            )),
            head_sha: sha.clone(),
            labels: vec![label.to_string()],
        });
    }
    let head_ref = "reuse-memory-pool";
    let run = Run {
        id,
        workflow_id: WorkflowId(4301),
        workflow_name: "CI".into(),
        workflow_path: ".github/workflows/ci.yml".into(),
        display_title: "Reuse the memory pool across tests".into(),
        event: "pull_request".into(),
        head_branch: Some(head_ref.into()),
        head_sha: sha.clone(),
        run_number: (DAYS * RUNS_PER_DAY) as u64 + 1,
        run_attempt: 1,
        status: "completed".into(),
        conclusion: None,
        created_at: created,
        updated_at: created + TimeDelta::minutes(15),
        run_started_at: Some(created),
        html_url: format!("https://github.com/{repo}/actions/runs/{id}"),
        pull_requests: vec![PrNumber(PR)],
        head_repository: None,
    };
    ds.runs.push(FakeRun::new(
        run,
        FakeAttempt {
            attempt: 1,
            created_at: created,
            conclusion: Some("failure".into()),
            jobs,
        },
    ));
    ds.pulls.push(FakePull {
        number: PR,
        title: "Reuse the memory pool across tests".into(),
        state: "open".into(),
        user: "mona".into(),
        base_ref: "main".into(),
        head_ref: head_ref.into(),
        head_sha: sha,
        base_sha: base,
        created_at: created - TimeDelta::minutes(5),
        updated_at: created + TimeDelta::minutes(20),
        closed_at: None,
        merged_at: None,
        merge_commit_sha: None,
        draft: false,
        locked: false,
        files: vec![FakeFile {
            filename: "src/fleet/pool.py".into(),
            status: "modified".into(),
            previous_filename: None,
            additions: 12,
            deletions: 4,
        }],
        head_repo: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The story the tests read: the bad host fails about one job in three, the others rarely;
    /// the pool-wide night fails every GPU job and nothing else of its run.
    #[test]
    fn the_fleet_has_one_bad_host_and_one_pool_wide_night() {
        let ds = fleet();
        let mut per_host: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
        for run in &ds.runs {
            for job in &run.attempts[0].jobs {
                let runner = &ds.runners[&job.id];
                let bad_yet = runner.name != BAD_HOST || run.run.id >= run_id(BAD_FROM_RUN);
                if job.labels == [GPU_POOL] && run.run.id != run_id(POOL_WIDE_RUN) && bad_yet {
                    let e = per_host.entry(runner.name.clone()).or_default();
                    e.0 += 1;
                    e.1 += u64::from(job.conclusion == Some("failure".into()));
                }
            }
        }
        let (jobs, failed) = per_host[BAD_HOST];
        assert!(
            failed * 5 >= jobs && failed * 2 <= jobs,
            "{failed} of {jobs}"
        );
        for (h, (jobs, failed)) in &per_host {
            if h != BAD_HOST {
                assert!(failed * 8 < *jobs, "{h}: {failed} of {jobs}");
            }
        }
        let night = ds
            .runs
            .iter()
            .find(|r| r.run.id == run_id(POOL_WIDE_RUN))
            .unwrap();
        let failed: Vec<bool> = night.attempts[0]
            .jobs
            .iter()
            .map(|j| j.conclusion == Some("failure".into()))
            .collect();
        assert!(failed[..GPU_JOBS].iter().all(|f| *f));
        assert!(!failed[GPU_JOBS], "the h100 job passed the same commit");
    }

    /// The old driver's crash: only on its two hosts, a few times, each re-run on a host with
    /// the current driver, where it passes.
    #[test]
    fn the_old_driver_crashes_on_its_hosts_alone() {
        let ds = fleet();
        let mut crashed = Vec::new();
        for run in &ds.runs {
            for job in &run.attempts[0].jobs {
                if let Some(FakeLog::Text(t)) = ds.logs.get(&job.id)
                    && t.contains(CRASH)
                {
                    crashed.push((ds.runners[&job.id].name.clone(), run, job.id));
                }
            }
        }
        eprintln!(
            "crashes: {:?}",
            crashed.iter().map(|c| &c.0).collect::<Vec<_>>()
        );
        assert!(crashed.len() >= 4, "{}", crashed.len());
        for (name, run, id) in &crashed {
            assert_eq!(driver_of(name), OLD_DRIVER);
            let again = run.attempts.get(1).expect("re-run");
            let rerun = again.jobs.iter().find(|j| j.id.0 == id.0 + 100).unwrap();
            assert_eq!(rerun.conclusion, Some("success".into()));
            assert_eq!(driver_of(&ds.runners[&rerun.id].name), DRIVER);
        }
    }
}
