//! The bundled `cuda-python-flake` scenario: ten weeks of NVIDIA/cuda-python's CI in which PR
//! #2371 makes the free-threaded 3.14t test jobs fail about one run in five with
//! `AssertionError: condition not satisfied within 5.0s`, among background noise. Everything is
//! derived from the seed by a small deterministic generator (no clock, no OS randomness), and
//! the logs are rendered from templates cut from a real-format job log (`logs/`, `tails/`).
//! `fixtures/cuda-python-flake/README.md` tells the story; `tests/it/fake_scenario.rs` checks it.

use crate::rng::Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{DateTime, TimeDelta, Utc};

use crate::dataset::{
    Dataset, DatasetError, FakeAttempt, FakeCommit, FakeFile, FakeIssue, FakeLog, FakePull, FakeRun,
};
use crate::routes::{fake_sha, job_labels};
use crate::scenario::{MergeStyle, PrStyle};
use flakestat_core::model::{Job, JobId, PrNumber, Repo, Run, RunId, Sha, Timestamp, WorkflowId};

mod catalog;
mod day_later;
mod logs;

use catalog::{CATALOG, FOLLOW_UPS, USERS};
pub use day_later::{DayLater, a_day_later};
use logs::{LogContext, Templates, load_templates, render_log, render_passing_log};

/// The pull request that introduced the flake.
pub const CULPRIT_PR: u64 = 2371;
/// The unrelated pull request merged between the culprit and the first hit.
pub const BETWEEN_PR: u64 = 2379;
/// A pull request that edits the flaky test itself; its runs fail with the same assertion.
pub const RELATED_PR: u64 = 2362;
/// A fork's pull request on its own graph-code branch (touching the signature's paths): its
/// `pull_request` runs carry `pull_requests: []` and fail with the same assertion before the
/// culprit merged. Taken for ordinary runs, its first failing run would be the first hit.
pub const FORK_PR: u64 = 2370;
/// The fork [`FORK_PR`]'s head lives in.
pub const FORK_REPO: &str = "kmatsu/cuda-python";
/// The fork PR's branch.
pub const FORK_BRANCH: &str = "graph-teardown";
/// The assertion every flake hit prints.
pub const FLAKE_MESSAGE: &str = "AssertionError: condition not satisfied within 5.0s";
/// The test file the flake lives in, as a repository path.
pub const FLAKE_TEST_FILE: &str = "cuda_core/tests/graph/test_graph_definition_lifetime.py";
/// The workflow every run belongs to.
pub const WORKFLOW_PATH: &str = ".github/workflows/ci.yml";
/// The title of the PR that renamed the test jobs (old style before it, new style after).
pub const RENAME_TITLE: &str = "CI: spell out Python, CUDA and GPU in test job names";

/// The figures the bundled folder (`fixtures/cuda-python-flake`, seed 11) produces, for other
/// tests to assert against. `tests/it/fake_scenario.rs` counts each one from the data (reading
/// logs, not the generator's plan) and fails when one is stale. "Hit": a failed job whose log
/// holds [`FLAKE_MESSAGE`]; [`RELATED_PR`]'s runs are excluded unless said otherwise.
pub mod expected {
    /// Every run, the one in progress included.
    pub const RUNS: usize = 389;
    /// Runs created after #2371 merged, completed.
    pub const RUNS_AFTER_MERGE: usize = 77;
    /// Runs created up to #2371's merge.
    pub const RUNS_UP_TO_MERGE: usize = 304;
    /// Runs with a hit in any attempt.
    pub const HIT_RUNS: usize = 16;
    pub const HIT_RUNS_ON_MAIN: usize = 5;
    pub const HIT_RUNS_ON_PRS: usize = 11;
    /// Hit runs whose latest attempt is green.
    pub const HIT_RUNS_RERUN_TO_GREEN: usize = 7;
    pub const MOST_ATTEMPTS: u32 = 6;
    /// Failed job executions (every attempt) whose log holds the assertion.
    pub const FLAKY_JOBS: usize = 29;
    /// The related PR's runs whose logs hold the assertion.
    pub const RELATED_PR_HIT_RUNS: usize = 3;
    /// The fork PR's runs whose logs hold the assertion (all before the culprit merged).
    pub const FORK_PR_HIT_RUNS: usize = 2;
    /// The first hit run's `created_at`.
    pub const FIRST_HIT: &str = "2026-07-15T21:18:53Z";
    pub const CULPRIT_MERGED_AT: &str = "2026-07-15T16:52:00Z";
    /// Failed jobs, every attempt, every cause.
    pub const FAILED_JOBS: usize = 64;
    pub const EXPIRED_LOGS: usize = 3;
    /// Failed jobs without a log (404).
    pub const MISSING_LOGS: usize = 1;
}

const WORKFLOW_ID: u64 = 104_315_042;
const START: &str = "2026-05-20T00:00:00Z";
const END: &str = "2026-08-01T00:00:00Z";
const NOW: &str = "2026-08-01T06:30:00Z";

fn at(text: &str) -> Timestamp {
    DateTime::parse_from_rfc3339(text)
        .expect("constant timestamps are valid")
        .with_timezone(&Utc)
}

/// The draws this module adds to the fake's generator (`crate::rng`).
impl Rng {
    /// Inclusive.
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    fn secs(&mut self, lo: i64, hi: i64) -> TimeDelta {
        TimeDelta::seconds(self.between(lo, hi))
    }

    /// `k` distinct items, in the order drawn.
    fn sample<T: Clone>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut pool: Vec<T> = items.to_vec();
        let mut out = Vec::new();
        while out.len() < k && !pool.is_empty() {
            let i = self.below(pool.len() as u64) as usize;
            out.push(pool.remove(i));
        }
        out
    }
}

// ---- the job matrix ----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JobKind {
    Build,
    Docs,
    Test,
}

#[derive(Debug, Clone, Copy)]
struct MatrixJob {
    kind: JobKind,
    platform: &'static str,
    py: &'static str,
    cuda: &'static str,
    mode: &'static str,
    gpu: &'static str,
    driver: Option<&'static str>,
}

fn matrix() -> Vec<MatrixJob> {
    let build = |platform| MatrixJob {
        kind: JobKind::Build,
        platform,
        py: "3.13",
        cuda: "13.0.2",
        mode: "wheels",
        gpu: "",
        driver: None,
    };
    let mut jobs = vec![build("linux-64"), build("linux-aarch64"), build("win-64")];
    jobs.push(MatrixJob {
        kind: JobKind::Docs,
        platform: "linux-64",
        py: "3.12",
        cuda: "13.0.2",
        mode: "wheels",
        gpu: "",
        driver: None,
    });
    let linux = [
        ("3.10", "12.9.1", "local", "t4"),
        ("3.10", "13.0.2", "wheels", "l4"),
        ("3.11", "12.9.1", "wheels", "t4"),
        ("3.11", "13.0.2", "local", "rtxpro6000"),
        ("3.12", "12.9.1", "local", "l4"),
        ("3.12", "13.0.2", "wheels", "a100"),
        ("3.13", "12.9.1", "wheels", "t4"),
        ("3.13", "13.0.2", "local", "h100"),
        ("3.14", "12.9.1", "local", "l4"),
        ("3.14", "13.0.2", "wheels", "t4"),
        ("3.14t", "12.9.1", "local", "t4"),
        ("3.14t", "13.0.2", "wheels", "h100"),
    ];
    let aarch64 = [
        ("3.10", "12.9.1", "local", "a100"),
        ("3.12", "13.0.2", "wheels", "a100"),
        ("3.13", "12.9.1", "wheels", "a100"),
        ("3.14", "13.0.2", "local", "a100"),
        ("3.14t", "12.9.1", "wheels", "a100"),
        ("3.14t", "13.0.2", "local", "a100"),
    ];
    let windows = [
        ("3.10", "12.9.1", "local", "t4", "TCC"),
        ("3.11", "13.0.2", "wheels", "rtx2080", "WDDM"),
        ("3.12", "12.9.1", "wheels", "l4", "MCDM"),
        ("3.13", "13.0.2", "local", "a100", "MCDM"),
        ("3.13", "12.9.1", "wheels", "rtx4090", "WDDM"),
        ("3.14", "12.9.1", "local", "rtxpro6000", "WDDM"),
        ("3.14t", "13.0.2", "wheels", "a100", "MCDM"),
        ("3.14t", "12.9.1", "local", "t4", "TCC"),
    ];
    let test = |platform, (py, cuda, mode, gpu), driver| MatrixJob {
        kind: JobKind::Test,
        platform,
        py,
        cuda,
        mode,
        gpu,
        driver,
    };
    jobs.extend(linux.iter().map(|&t| test("linux-64", t, None)));
    jobs.extend(aarch64.iter().map(|&t| test("linux-aarch64", t, None)));
    jobs.extend(
        windows
            .iter()
            .map(|&(py, cuda, mode, gpu, d)| test("win-64", (py, cuda, mode, gpu), Some(d))),
    );
    jobs
}

/// The job's name, in the style before (`py3.14t, 12.9.1, local, t4`) or after the rename PR
/// (`Python 3.14t, CUDA 12.9.1 (local), GPU t4`).
fn job_name(m: &MatrixJob, new_style: bool) -> String {
    match m.kind {
        JobKind::Build => format!("Build {}", m.platform),
        JobKind::Docs => "Build docs".to_string(),
        JobKind::Test => {
            let driver = m.driver.map(|d| format!(" ({d})")).unwrap_or_default();
            if new_style {
                format!(
                    "Test {} / Python {}, CUDA {} ({}), GPU {}{driver}",
                    m.platform, m.py, m.cuda, m.mode, m.gpu
                )
            } else {
                format!(
                    "Test {} / py{}, {}, {}, {}{driver}",
                    m.platform, m.py, m.cuda, m.mode, m.gpu
                )
            }
        }
    }
}

// ---- pull requests ----

struct PrPlan {
    number: u64,
    title: String,
    user: String,
    head_ref: String,
    created: Timestamp,
    pushes: Vec<Timestamp>,
    merged: Option<Timestamp>,
    closed: Option<Timestamp>,
    files: Vec<FakeFile>,
    /// The first push ran as a `pull_request` event rather than a push to `pull-request/N`.
    pr_event: bool,
}

fn file(name: &str, status: &str) -> FakeFile {
    FakeFile {
        filename: name.to_string(),
        status: status.to_string(),
        previous_filename: None,
        additions: 10 + name.len() as u64 % 37,
        deletions: name.len() as u64 % 11,
    }
}

fn slug(title: &str) -> String {
    let mut s: String = title
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    s.trim_matches('-').chars().take(40).collect()
}

fn special_prs() -> Vec<PrPlan> {
    let related = PrPlan {
        number: RELATED_PR,
        title: "Graph lifetime tests: wait on GC generations instead of sleeping".into(),
        user: "dev-chen".into(),
        head_ref: "graph-lifetime-gc-generations".into(),
        created: at("2026-07-09T10:00:00Z"),
        pushes: [
            "2026-07-09T10:00:00Z",
            "2026-07-09T16:30:00Z",
            "2026-07-10T11:15:00Z",
            "2026-07-10T18:40:00Z",
        ]
        .iter()
        .map(|t| at(t))
        .collect(),
        merged: None,
        closed: Some(at("2026-07-11T09:00:00Z")),
        files: vec![
            file(FLAKE_TEST_FILE, "modified"),
            file("cuda_core/tests/helpers/gc_utils.py", "added"),
        ],
        pr_event: false,
    };
    let culprit = PrPlan {
        number: CULPRIT_PR,
        title: "Release graph-owned buffers in the graph destructor instead of at build time"
            .into(),
        user: "dev-bram".into(),
        head_ref: "graph-owned-buffer-release".into(),
        created: at("2026-07-13T15:10:00Z"),
        pushes: [
            "2026-07-13T15:10:00Z",
            "2026-07-14T10:20:00Z",
            "2026-07-15T09:40:00Z",
        ]
        .iter()
        .map(|t| at(t))
        .collect(),
        merged: Some(at("2026-07-15T16:52:00Z")),
        closed: Some(at("2026-07-15T16:52:00Z")),
        files: vec![
            file("cuda_core/cuda/core/_graph.py", "modified"),
            file("cuda_core/cuda/core/_memory/_buffer.pyx", "modified"),
            file("cuda_core/cuda/core/_kernel_arg_handler.pyx", "modified"),
            file(FLAKE_TEST_FILE, "modified"),
            file("cuda_core/docs/source/release/1.1.0-notes.rst", "modified"),
        ],
        pr_event: false,
    };
    let between = PrPlan {
        number: BETWEEN_PR,
        title: "Bump cuda-pathfinder to 1.6.1".into(),
        user: "dev-gus".into(),
        head_ref: "pathfinder-1.6.1".into(),
        created: at("2026-07-15T12:05:00Z"),
        pushes: ["2026-07-15T12:05:00Z", "2026-07-15T17:40:00Z"]
            .iter()
            .map(|t| at(t))
            .collect(),
        merged: Some(at("2026-07-15T21:18:00Z")),
        closed: Some(at("2026-07-15T21:18:00Z")),
        files: vec![
            file("cuda_pathfinder/cuda/pathfinder/_version.py", "modified"),
            file(
                "cuda_pathfinder/docs/source/release/1.6.1-notes.rst",
                "added",
            ),
        ],
        pr_event: false,
    };
    vec![related, culprit, between]
}

/// Nothing but the two special merges may land between the culprit's merge and the first hit.
const QUIET_FROM: &str = "2026-07-15T16:00:00Z";
const QUIET_TO: &str = "2026-07-15T23:00:00Z";

fn plan_prs(rng: &mut Rng) -> Vec<PrPlan> {
    let start = at(START);
    let end = at(END);
    let regular = 50usize;
    let span = (end - start).num_minutes() - 24 * 60;
    let mut times: Vec<Timestamp> = (0..regular)
        .map(|i| {
            start
                + TimeDelta::minutes(i as i64 * span / regular as i64)
                + TimeDelta::minutes(rng.between(0, 900))
        })
        .collect();
    times.sort();
    let specials = special_prs();
    // Number the PRs in creation order; the special ones keep their numbers, the others take
    // numbers below the next special one (gaps are issues).
    let mut order: Vec<(Timestamp, Option<usize>)> = times.iter().map(|t| (*t, None)).collect();
    order.extend(
        specials
            .iter()
            .enumerate()
            .map(|(i, p)| (p.created, Some(i))),
    );
    order.sort_by_key(|(t, s)| (*t, s.is_some()));
    let mut next = 2290u64;
    let mut prs = Vec::new();
    let mut specials: Vec<Option<PrPlan>> = specials.into_iter().map(Some).collect();
    let mut catalog_index = 0usize;
    for (pos, (created, special)) in order.iter().enumerate() {
        if let Some(i) = special {
            let pr = specials[*i].take().expect("each special PR once");
            next = next.max(pr.number + 1);
            prs.push(pr);
            continue;
        }
        let upcoming = order[pos..].iter().find_map(|(_, s)| *s);
        let number = match upcoming {
            Some(i) => {
                let limit = specials[i].as_ref().expect("not yet placed").number;
                let remaining = order[pos..].iter().take_while(|(_, s)| s.is_none()).count() as u64;
                let slack = limit.saturating_sub(next + remaining);
                next + rng.below(slack.min(2) + 1)
            }
            None => next + rng.below(3),
        };
        next = number + 1;
        let (title, files) = CATALOG[catalog_index % CATALOG.len()];
        let title = if catalog_index >= CATALOG.len() {
            format!("{title} (follow-up)")
        } else {
            title.to_string()
        };
        catalog_index += 1;
        let mut pushes = vec![*created];
        let count = 2 + rng.below(7);
        for _ in 1..count {
            let last = *pushes.last().expect("non-empty");
            let t = last + rng.secs(40 * 60, 20 * 3600);
            if t > end - TimeDelta::hours(2) {
                break;
            }
            pushes.push(t);
        }
        let last = *pushes.last().expect("non-empty");
        let mut merged = None;
        let mut closed = None;
        if last + TimeDelta::hours(26) < end {
            let when = last + rng.secs(3600, 22 * 3600);
            if rng.percent(87) {
                let when = if when >= at(QUIET_FROM) && when < at(QUIET_TO) {
                    at(QUIET_TO) + rng.secs(600, 7200)
                } else {
                    when
                };
                merged = Some(when);
            }
            closed = Some(when);
        }
        let user = USERS[rng.below(USERS.len() as u64) as usize].to_string();
        let mut files: Vec<FakeFile> = files.split(' ').map(|f| file(f, "modified")).collect();
        if number % 9 == 0 {
            files.push(file("cuda_core/tests/helpers/latch.py", "added"));
        }
        if number % 13 == 0 {
            let mut renamed = file("ci/tools/env-vars", "renamed");
            renamed.previous_filename = Some("ci/tools/env_vars.sh".into());
            files.push(renamed);
        }
        prs.push(PrPlan {
            number,
            head_ref: slug(&title),
            title,
            user,
            created: *created,
            pushes,
            merged,
            closed,
            files,
            pr_event: number % 12 == 5,
        });
    }
    // The first PR merged after 2026-06-22 12:00 renames the test jobs.
    let rename = prs
        .iter_mut()
        .filter(|p| p.merged.is_some_and(|m| m >= at("2026-06-22T12:00:00Z")))
        .min_by_key(|p| p.merged)
        .expect("a PR merges after June 22nd");
    rename.title = RENAME_TITLE.into();
    rename.head_ref = slug(RENAME_TITLE);
    rename.files = vec![
        file(".github/workflows/test-wheel-linux.yml", "modified"),
        file(".github/workflows/test-wheel-windows.yml", "modified"),
        file("ci/test-matrix.json", "modified"),
    ];
    prs.sort_by_key(|p| p.number);
    prs
}

// ---- runs ----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunKind {
    MainPush,
    Schedule,
    PrPush,
    PrEvent,
    Side,
}

struct RunPlan {
    created: Timestamp,
    kind: RunKind,
    branch: String,
    sha: Sha,
    title: String,
    /// The PR a run belongs to (its merge for `MainPush`).
    pr: Option<u64>,
    /// Index of the push within its PR.
    push: usize,
    in_progress: bool,
}

/// What makes a job fail.
#[derive(Debug, Clone)]
enum Cause {
    /// The 3.14t flake failing one test: an index into `FLAKE_TESTS`.
    Flake(usize),
    /// The 3.14t flake on the worker-thread test ([`HUNG_TEST`]): the thread's `_wait_until`
    /// times out, the test waits for it forever and `run-tests` interrupts pytest, which names
    /// no failing test (the assertion is in the log, its test is not).
    FlakeHung,
    /// The related PR's own failure: same assertion.
    Related(Vec<usize>),
    /// Background noise: a tail template, and what the log endpoint answers.
    Noise(&'static str, LogKind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LogKind {
    Text,
    Expired,
    Missing,
}

/// Failures of one attempt: matrix index → cause. An empty map is a green attempt.
type AttemptPlan = BTreeMap<usize, Cause>;

/// The jobs in which each of `FLAKE_TESTS` failed, as the seed's hand survey of the story
/// counted them (its `FAILED` summary lines); [`assign_flake_tests`] deals them out.
const SURVEY_JOBS: [usize; 4] = [6, 5, 4, 6];

/// The test that releases a graph on a worker thread: when its `_wait_until` times out there,
/// the test hangs (see [`Cause::FlakeHung`]).
const HUNG_TEST: &str = "test_buffers_released_when_graph_destroyed_on_worker_thread";

const FLAKE_TESTS: [(&str, u32, &str); 4] = [
    (
        "test_kernel_args_buffer_lifetime",
        571,
        "buf_weak() is None",
    ),
    (
        "test_memcpy_buffer_allocations_released_after_graph_destroyed",
        1288,
        "not src_weak and not dst_weak",
    ),
    (
        "test_slot_owners_released_after_graph_destroyed",
        903,
        "all(w() is None for w in slot_weaks)",
    ),
    (
        "test_pending_call_queue_saturation_preserves_cleanup",
        1102,
        "pending_weak() is None",
    ),
];

struct NoiseSpec {
    tail: &'static str,
    from: &'static str,
    to: &'static str,
    pr_only: bool,
    job: fn(&MatrixJob) -> bool,
    log: LogKind,
    rerun: bool,
}

fn is_test(m: &MatrixJob) -> bool {
    m.kind == JobKind::Test
}

const NOISE: &[NoiseSpec] = &[
    NoiseSpec {
        tail: "http-503",
        from: "2026-05-20T00:00:00Z",
        to: "2026-05-22T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "linux-64" && m.py != "3.14t",
        log: LogKind::Expired,
        rerun: false,
    },
    NoiseSpec {
        tail: "conn-reset",
        from: "2026-05-22T00:00:00Z",
        to: "2026-05-24T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "linux-64" && m.py != "3.14t",
        log: LogKind::Expired,
        rerun: false,
    },
    NoiseSpec {
        tail: "null-context",
        from: "2026-05-24T00:00:00Z",
        to: "2026-05-26T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "linux-aarch64" && m.py == "3.13",
        log: LogKind::Expired,
        rerun: false,
    },
    NoiseSpec {
        tail: "segfault",
        from: "2026-06-02T00:00:00Z",
        to: "2026-06-05T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "linux-64" && m.py == "3.14",
        log: LogKind::Text,
        rerun: false,
    },
    NoiseSpec {
        tail: "runner-lost",
        from: "2026-06-08T00:00:00Z",
        to: "2026-06-11T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "win-64" && m.py != "3.14t",
        log: LogKind::Missing,
        rerun: false,
    },
    NoiseSpec {
        tail: "ipc-ready-timeout",
        from: "2026-06-12T00:00:00Z",
        to: "2026-06-15T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "linux-64" && m.py == "3.12",
        log: LogKind::Text,
        rerun: false,
    },
    NoiseSpec {
        tail: "resolve-host",
        from: "2026-06-17T00:00:00Z",
        to: "2026-06-20T00:00:00Z",
        pr_only: true,
        job: |m| m.kind == JobKind::Build && m.platform == "linux-aarch64",
        log: LogKind::Text,
        rerun: true,
    },
    NoiseSpec {
        tail: "msvc-d8021",
        from: "2026-06-25T00:00:00Z",
        to: "2026-06-28T00:00:00Z",
        pr_only: true,
        job: |m| m.kind == JobKind::Build && m.platform == "win-64",
        log: LogKind::Text,
        rerun: false,
    },
    NoiseSpec {
        tail: "conn-reset",
        from: "2026-07-02T00:00:00Z",
        to: "2026-07-05T00:00:00Z",
        pr_only: true,
        job: |m| is_test(m) && m.platform == "linux-64" && m.py != "3.14t",
        log: LogKind::Text,
        rerun: true,
    },
    NoiseSpec {
        tail: "sccache-startup",
        from: "2026-07-05T00:00:00Z",
        to: "2026-07-08T00:00:00Z",
        pr_only: false,
        job: |m| m.kind == JobKind::Build && m.platform == "linux-64",
        log: LogKind::Text,
        rerun: false,
    },
    NoiseSpec {
        tail: "ipc-ready-timeout",
        from: "2026-07-19T00:00:00Z",
        to: "2026-07-22T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "win-64" && m.py == "3.13",
        log: LogKind::Text,
        rerun: false,
    },
    NoiseSpec {
        tail: "http-503",
        from: "2026-07-23T00:00:00Z",
        to: "2026-07-26T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "win-64" && m.py != "3.14t",
        log: LogKind::Text,
        rerun: false,
    },
    NoiseSpec {
        tail: "null-context",
        from: "2026-07-26T00:00:00Z",
        to: "2026-07-29T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "linux-64" && m.py == "3.14t",
        log: LogKind::Text,
        rerun: false,
    },
    NoiseSpec {
        tail: "runner-lost",
        from: "2026-07-29T00:00:00Z",
        to: "2026-08-01T00:00:00Z",
        pr_only: false,
        job: |m| is_test(m) && m.platform == "linux-aarch64" && m.py != "3.14t",
        log: LogKind::Text,
        rerun: false,
    },
];

// ---- the generator ----

/// The shape of a bundled story: how PR runs are triggered, how PRs land, and whether some PR
/// branches stay on an old base (`scenario.toml`'s `pr_style`, `merge_style`, `stale_branches`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    pub pr_style: PrStyle,
    pub merge_style: MergeStyle,
    /// The PRs opened before [`CULPRIT_PR`] merged that have a hit run after it are long-lived
    /// branches forked from `main` as it stood at [`STALE_BASE`], a week before, and never take
    /// `main` in: in mirror style their hit runs lack the culprit and every merge near it.
    pub stale_branches: bool,
}

/// Builds the scenario from the templates in `dir` (`logs/`, `tails/`) and `seed`.
pub fn generate(dir: &Path, seed: u64, shape: Shape) -> Result<Dataset, DatasetError> {
    let templates = load_templates(dir)?;
    Ok(build(&templates, seed, shape))
}

struct Graph {
    commits: Vec<FakeCommit>,
    /// Main's history: (time, sha), ascending.
    main: Vec<(Timestamp, Sha)>,
    /// PR number → sha of each push.
    pushes: BTreeMap<u64, Vec<Sha>>,
    merges: BTreeMap<u64, Sha>,
    side: Vec<(Timestamp, Sha)>,
}

impl Graph {
    fn main_at(&self, t: Timestamp) -> Sha {
        self.main
            .iter()
            .take_while(|(when, _)| *when <= t)
            .last()
            .map(|(_, s)| s.clone())
            .expect("the root precedes every time asked")
    }

    fn message(&self, sha: &Sha) -> String {
        self.commits
            .iter()
            .find(|c| &c.sha == sha)
            .map(|c| c.message.clone())
            .unwrap_or_default()
    }

    fn contains(&self, head: &Sha, target: &Sha) -> bool {
        let parents: BTreeMap<&Sha, &Vec<Sha>> =
            self.commits.iter().map(|c| (&c.sha, &c.parents)).collect();
        let mut stack = vec![head.clone()];
        let mut seen = BTreeSet::new();
        while let Some(s) = stack.pop() {
            if &s == target {
                return true;
            }
            if seen.insert(s.clone())
                && let Some(ps) = parents.get(&s)
            {
                stack.extend(ps.iter().cloned());
            }
        }
        false
    }
}

fn build_graph(prs: &[PrPlan], rng: &mut Rng, merge_style: MergeStyle) -> Graph {
    let root = Sha(fake_sha("cuda-python root"));
    let root_time = at("2026-05-19T18:00:00Z");
    let mut commits = vec![FakeCommit {
        sha: root.clone(),
        parents: Vec::new(),
        message: "Release cuda-core 1.0.0 (#2288)".into(),
        author: "dev-ana".into(),
        date: root_time,
        files: Vec::new(),
    }];
    let mut main = vec![(root_time, root)];
    let mut merged: Vec<&PrPlan> = prs.iter().filter(|p| p.merged.is_some()).collect();
    merged.sort_by_key(|p| p.merged);
    let mut merges = BTreeMap::new();
    for pr in &merged {
        let when = pr.merged.expect("filtered");
        let parent = main.last().expect("root").1.clone();
        let sha = Sha(fake_sha(&format!("merge {}", pr.number)));
        let mut parents = vec![parent];
        if merge_style == MergeStyle::MergeCommit {
            // The PR's last push (made below, same sha): its commits join main's listing,
            // dated before the merge.
            parents.push(Sha(fake_sha(&format!(
                "pr {} push {}",
                pr.number,
                pr.pushes.len() - 1
            ))));
        }
        commits.push(FakeCommit {
            sha: sha.clone(),
            parents,
            message: format!("{} (#{})", pr.title, pr.number),
            author: pr.user.clone(),
            date: when,
            files: Vec::new(),
        });
        main.push((when, sha.clone()));
        merges.insert(pr.number, sha);
    }
    let mut graph = Graph {
        commits,
        main,
        pushes: BTreeMap::new(),
        merges,
        side: Vec::new(),
    };
    // Each push to a PR is its change rebased onto main as it stood then (squash style), or a
    // new commit on the PR's branch with main as it stood then merged in (merge-commit style).
    for pr in prs {
        let mut shas: Vec<Sha> = Vec::new();
        for (i, when) in pr.pushes.iter().enumerate() {
            let sha = Sha(fake_sha(&format!("pr {} push {i}", pr.number)));
            let message = if i == 0 {
                pr.title.clone()
            } else {
                FOLLOW_UPS[rng.below(FOLLOW_UPS.len() as u64) as usize].to_string()
            };
            let base = graph.main_at(*when);
            let (parents, date) = match shas.last() {
                // The branch's commits keep the date the PR's work began: listed among the
                // merges, they sit before merges they contain.
                Some(previous) if merge_style == MergeStyle::MergeCommit => (
                    vec![previous.clone(), base],
                    pr.created - TimeDelta::minutes(3),
                ),
                _ => (vec![base], *when - TimeDelta::minutes(3)),
            };
            graph.commits.push(FakeCommit {
                sha: sha.clone(),
                parents,
                message,
                author: pr.user.clone(),
                date,
                files: Vec::new(),
            });
            shas.push(sha);
        }
        graph.pushes.insert(pr.number, shas);
    }
    // Two backports on the 12.9.x release branch.
    let mut parent = graph.main_at(at("2026-06-19T00:00:00Z"));
    for (i, when) in ["2026-06-20T09:00:00Z", "2026-06-27T14:00:00Z"]
        .iter()
        .enumerate()
    {
        let sha = Sha(fake_sha(&format!("12.9.x backport {i}")));
        let source = merged[(i * 7 + 3) % merged.len()];
        graph.commits.push(FakeCommit {
            sha: sha.clone(),
            parents: vec![parent.clone()],
            message: format!("[12.9.x] Backport #{}: {}", source.number, source.title),
            author: "dev-ana".into(),
            date: at(when),
            files: Vec::new(),
        });
        graph.side.push((at(when), sha.clone()));
        parent = sha;
    }
    graph
}

fn plan_runs(prs: &[PrPlan], graph: &Graph, rng: &mut Rng) -> Vec<RunPlan> {
    let start = at(START);
    let end = at(END);
    let mut runs = Vec::new();
    let mut day = start;
    while day < end + TimeDelta::days(1) {
        let created = day + TimeDelta::minutes(6 * 60 + 17) + rng.secs(0, 12 * 60);
        let in_progress = created >= end;
        let sha = graph.main_at(created);
        runs.push(RunPlan {
            created,
            kind: RunKind::Schedule,
            branch: "main".into(),
            title: "CI".into(),
            sha,
            pr: None,
            push: 0,
            in_progress,
        });
        day += TimeDelta::days(1);
    }
    for pr in prs {
        if let (Some(when), Some(sha)) = (pr.merged, graph.merges.get(&pr.number)) {
            runs.push(RunPlan {
                created: when + rng.secs(20, 80),
                kind: RunKind::MainPush,
                branch: "main".into(),
                title: graph.message(sha),
                sha: sha.clone(),
                pr: Some(pr.number),
                push: 0,
                in_progress: false,
            });
        }
        for (i, (when, sha)) in pr.pushes.iter().zip(&graph.pushes[&pr.number]).enumerate() {
            let event = pr.pr_event && i == 0;
            runs.push(RunPlan {
                created: *when + rng.secs(90, 360),
                kind: if event {
                    RunKind::PrEvent
                } else {
                    RunKind::PrPush
                },
                branch: if event {
                    pr.head_ref.clone()
                } else {
                    format!("pull-request/{}", pr.number)
                },
                title: if event {
                    pr.title.clone()
                } else {
                    graph.message(sha)
                },
                sha: sha.clone(),
                pr: Some(pr.number),
                push: i,
                in_progress: false,
            });
        }
    }
    for (when, sha) in &graph.side {
        runs.push(RunPlan {
            created: *when + TimeDelta::seconds(45),
            kind: RunKind::Side,
            branch: "12.9.x".into(),
            title: graph.message(sha),
            sha: sha.clone(),
            pr: None,
            push: 0,
            in_progress: false,
        });
    }
    runs.retain(|r| r.created >= start && (r.created < end || r.in_progress));
    runs.sort_by_key(|r| r.created);
    runs
}

fn plan_failures(runs: &[RunPlan], jobs: &[MatrixJob], rng: &mut Rng) -> Vec<Vec<AttemptPlan>> {
    let mut plans: Vec<Vec<AttemptPlan>> = vec![Vec::new(); runs.len()];
    let merged_culprit = at("2026-07-15T16:52:00Z");
    let first = runs
        .iter()
        .position(|r| r.kind == RunKind::MainPush && r.pr == Some(BETWEEN_PR))
        .expect("the between PR's merge run exists");
    let related = |r: &RunPlan| r.pr == Some(RELATED_PR) && r.kind != RunKind::MainPush;
    let eligible: Vec<usize> = (first + 1..runs.len())
        .filter(|&i| !runs[i].in_progress && !related(&runs[i]))
        .collect();
    let on_main = |i: &usize| matches!(runs[*i].kind, RunKind::MainPush | RunKind::Schedule);
    let main_pool: Vec<usize> = eligible.iter().copied().filter(on_main).collect();
    let pr_pool: Vec<usize> = eligible
        .iter()
        .copied()
        .filter(|i| matches!(runs[*i].kind, RunKind::PrPush | RunKind::PrEvent))
        .collect();
    let mut main_hits = vec![first];
    main_hits.extend(rng.sample(&main_pool, 4));
    let pr_hits = rng.sample(&pr_pool, 11);
    debug_assert!(runs[first].created > merged_culprit);

    // Re-runs: six PR hits and one merge run on main go green again.
    let mut attempts: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, n) in pr_hits.iter().zip([6, 3, 2, 2, 2, 2]) {
        attempts.insert(*i, n);
    }
    let main_push_hit = main_hits
        .iter()
        .copied()
        .rfind(|i| runs[*i].kind == RunKind::MainPush)
        .unwrap_or(first);
    attempts.insert(main_push_hit, 2);

    let t_jobs: Vec<usize> = (0..jobs.len())
        .filter(|&i| jobs[i].kind == JobKind::Test && jobs[i].py == "3.14t")
        .collect();
    let mut cursor = rng.below(t_jobs.len() as u64) as usize;
    let mut hits: Vec<usize> = main_hits.iter().chain(&pr_hits).copied().collect();
    hits.sort();
    for run in hits {
        let n = attempts.get(&run).copied().unwrap_or(1);
        // The job a re-run attempt fails again: "re-run failed jobs" runs only the jobs that
        // failed in the attempt before, so a run green only at its 6th attempt is the same
        // job failing at attempts 1 to 5.
        let mut again: Option<usize> = None;
        for a in 0..n {
            let green = n > 1 && a == n - 1;
            let mut plan = AttemptPlan::new();
            if !green {
                let count = if rng.percent(30) { 2 } else { 1 };
                for _ in 0..count {
                    let drawn = t_jobs[cursor % t_jobs.len()];
                    cursor += 1 + rng.below(2) as usize;
                    // These draws once chose the failing tests; they stay so that every later
                    // draw, and so every other figure of the story, is as it was. The hit is
                    // planned as one naming no test until `assign_flake_tests` deals the tests.
                    if rng.percent(40) {
                        rng.below(4);
                        rng.below(3);
                    } else {
                        rng.below(4);
                    }
                    // A re-run attempt fails the job that failed first again; its draw stays
                    // unused.
                    let job = if a == 0 {
                        drawn
                    } else {
                        again.unwrap_or(drawn)
                    };
                    again.get_or_insert(drawn);
                    plan.insert(job, Cause::FlakeHung);
                }
            }
            plans[run].push(plan);
        }
    }

    // The related PR's later pushes fail with the same assertion, on GIL jobs too.
    let related_jobs: Vec<usize> = (0..jobs.len())
        .filter(|&i| {
            let m = &jobs[i];
            m.kind == JobKind::Test
                && m.platform == "linux-64"
                && ((m.py == "3.12" && m.cuda == "12.9.1")
                    || (m.py == "3.14t" && m.mode == "local"))
        })
        .collect();
    for (i, r) in runs.iter().enumerate() {
        if related(r) && r.push >= 1 {
            let plan: AttemptPlan = related_jobs
                .iter()
                .map(|&j| (j, Cause::Related(vec![0, 1])))
                .collect();
            plans[i].push(plan);
        }
    }

    for spec in NOISE {
        let (from, to) = (at(spec.from), at(spec.to));
        let candidates: Vec<usize> = (0..runs.len())
            .filter(|&i| {
                let r = &runs[i];
                r.created >= from
                    && r.created < to
                    && !r.in_progress
                    && plans[i].is_empty()
                    && !related(r)
                    && (!spec.pr_only || matches!(r.kind, RunKind::PrPush))
            })
            .collect();
        let run = *rng
            .sample(&candidates, 1)
            .first()
            .expect("every noise window holds a run");
        let job_pool: Vec<usize> = (0..jobs.len()).filter(|&j| (spec.job)(&jobs[j])).collect();
        let job = rng.sample(&job_pool, 1)[0];
        let mut plan = AttemptPlan::new();
        plan.insert(job, Cause::Noise(spec.tail, spec.log));
        plans[run].push(plan);
        if spec.rerun {
            plans[run].push(AttemptPlan::new());
        }
    }
    plans
}

/// Deals the failing tests out to the flake's jobs (in run order): each of `FLAKE_TESTS` fails
/// alone in as many jobs as the seed's survey counted ([`SURVEY_JOBS`]), and the jobs beyond
/// those hung on the worker-thread test ([`Cause::FlakeHung`]), naming no test. A job that
/// fails again in a re-run attempt fails as it did before. The order comes from a generator
/// of its own, so the draws of the rest of the story stay.
fn assign_flake_tests(plans: &mut [Vec<AttemptPlan>], seed: u64) {
    let mut deck: Vec<Cause> = SURVEY_JOBS
        .iter()
        .enumerate()
        .flat_map(|(test, &jobs)| std::iter::repeat_n(Cause::Flake(test), jobs))
        .collect();
    // A re-run attempt runs only the jobs that failed in the attempt before it: a failure
    // planned for another job never happens, and gets no test.
    let mut firsts: Vec<(usize, usize, usize)> = Vec::new();
    let mut repeats: Vec<(usize, usize, usize)> = Vec::new();
    for (r, attempts) in plans.iter().enumerate() {
        let mut ran: Option<BTreeSet<usize>> = None;
        let mut hit_before: BTreeSet<usize> = BTreeSet::new();
        for (a, attempt) in attempts.iter().enumerate() {
            let failed: BTreeSet<usize> = attempt
                .keys()
                .copied()
                .filter(|j| ran.as_ref().is_none_or(|r| r.contains(j)))
                .collect();
            for (&j, c) in attempt {
                if failed.contains(&j) && matches!(c, Cause::FlakeHung) {
                    if hit_before.insert(j) {
                        firsts.push((r, a, j));
                    } else {
                        repeats.push((r, a, j));
                    }
                }
            }
            ran = Some(failed);
        }
    }
    deck.resize(firsts.len(), Cause::FlakeHung);
    let mut rng = Rng(seed ^ 0x07e5_71d5);
    let dealt = rng.sample(&deck, deck.len());
    for (&(r, a, j), cause) in firsts.iter().zip(dealt) {
        plans[r][a].insert(j, cause);
    }
    for (r, a, j) in repeats {
        let before = plans[r][a - 1][&j].clone();
        plans[r][a].insert(j, before);
    }
}

/// The tail of the night a GPU runner pool lost its CUDA context ([`plan_pool_night`]).
pub(super) const POOL_NIGHT_TAIL: &str = "null-context-pool";
/// The tail of a test two PRs broke on their own branches ([`plan_pr_breaks`]).
pub(super) const PR_BREAK_TAIL: &str = "launch-config-grid";
/// The runner pool whose every test job fails on [`plan_pool_night`]'s night: the
/// `linux-aarch64` jobs all run on `linux-arm64-gpu-a100-latest-1`.
const POOL_NIGHT_PLATFORM: &str = "linux-aarch64";

/// One machine-wide night: the latest completed scheduled run with no failure planned whose
/// commit also ran as a merge's push run (so every job of it is green on the same commit
/// elsewhere) fails every test job of one GPU pool at once, each with a few dozen tests erroring
/// with `Cannot set NULL context as current`, while every other pool passes. Planned after
/// every draw, and on a run the flake does not hit, so the story's other figures stay.
fn plan_pool_night(runs: &[RunPlan], jobs: &[MatrixJob], plans: &mut [Vec<AttemptPlan>]) {
    let pushed: BTreeSet<&Sha> = runs
        .iter()
        .filter(|r| r.kind == RunKind::MainPush)
        .map(|r| &r.sha)
        .collect();
    let night = (0..runs.len())
        .rev()
        .find(|&i| {
            let r = &runs[i];
            r.kind == RunKind::Schedule
                && !r.in_progress
                && plans[i].is_empty()
                && pushed.contains(&r.sha)
        })
        .expect("a scheduled run shares its commit with a merge's run");
    let plan: AttemptPlan = (0..jobs.len())
        .filter(|&j| is_test(&jobs[j]) && jobs[j].platform == POOL_NIGHT_PLATFORM)
        .map(|j| (j, Cause::Noise(POOL_NIGHT_TAIL, LogKind::Text)))
        .collect();
    plans[night].push(plan);
}

/// A test two PRs broke on their own branches: the first two PRs (in PR order, opened after
/// the story's usual window starts) with at least two pushes, touching nothing beside the test,
/// whose runs hold no other failure, fail `tests/test_launcher.py::test_launch_config_rejects_zero_grid`
/// on one linux-64 job in every push but their last, which fixes it. `main` never fails it.
fn plan_pr_breaks(
    prs: &[PrPlan],
    runs: &[RunPlan],
    jobs: &[MatrixJob],
    plans: &mut [Vec<AttemptPlan>],
) {
    let from = at("2026-06-16T00:00:00Z");
    let job = (0..jobs.len())
        .find(|&j| is_test(&jobs[j]) && jobs[j].platform == "linux-64" && jobs[j].py == "3.12")
        .expect("a linux-64 3.12 test job");
    let special = [RELATED_PR, FORK_PR, CULPRIT_PR, BETWEEN_PR];
    let mut chosen = 0;
    for pr in prs {
        if chosen == 2 {
            break;
        }
        let own: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i].pr == Some(pr.number) && runs[i].kind != RunKind::MainPush)
            .collect();
        let beside = pr
            .files
            .iter()
            .any(|f| f.filename.contains("tests/") || f.filename.starts_with("tests"));
        if special.contains(&pr.number)
            || pr.created < from
            || pr.pushes.len() < 2
            || own.len() != pr.pushes.len()
            || beside
            || own
                .iter()
                .any(|&i| !plans[i].is_empty() || runs[i].in_progress)
        {
            continue;
        }
        chosen += 1;
        for &i in own.iter().filter(|&&i| runs[i].push + 1 < pr.pushes.len()) {
            plans[i].push(AttemptPlan::from([(
                job,
                Cause::Noise(PR_BREAK_TAIL, LogKind::Text),
            )]));
        }
    }
    assert_eq!(chosen, 2, "two PRs to break a test on");
}

/// The fork PR's pushes: (time, whether its run hits the flake).
const FORK_PUSHES: [(&str, bool); 3] = [
    ("2026-07-13T11:20:00Z", false),
    ("2026-07-14T08:05:00Z", true),
    ("2026-07-14T19:30:00Z", true),
];

/// The fork PR's runs (planned apart from the rest, with their own generator, so that the
/// other runs' figures do not depend on it) and their failures.
fn plan_fork(
    graph: &mut Graph,
    jobs: &[MatrixJob],
    seed: u64,
) -> (Vec<RunPlan>, Vec<Vec<AttemptPlan>>) {
    let mut rng = Rng(seed ^ 0xf0f0_f0f0);
    let t_jobs: Vec<usize> = (0..jobs.len())
        .filter(|&i| jobs[i].kind == JobKind::Test && jobs[i].py == "3.14t")
        .collect();
    let mut runs = Vec::new();
    let mut plans = Vec::new();
    let mut shas = Vec::new();
    for (i, (when, hit)) in FORK_PUSHES.iter().enumerate() {
        let when = at(when);
        let sha = Sha(fake_sha(&format!("fork pr {FORK_PR} push {i}")));
        let message = if i == 0 {
            FORK_TITLE
        } else {
            "Address review comments"
        };
        graph.commits.push(FakeCommit {
            sha: sha.clone(),
            parents: vec![graph.main_at(when)],
            message: message.into(),
            author: "kmatsu".into(),
            date: when - TimeDelta::minutes(3),
            files: Vec::new(),
        });
        shas.push(sha.clone());
        runs.push(RunPlan {
            created: when + rng.secs(90, 360),
            kind: RunKind::PrEvent,
            branch: FORK_BRANCH.into(),
            sha,
            title: FORK_TITLE.into(),
            pr: Some(FORK_PR),
            push: i,
            in_progress: false,
        });
        let mut plan = AttemptPlan::new();
        if *hit {
            let job = t_jobs[rng.below(t_jobs.len() as u64) as usize];
            plan.insert(job, Cause::Flake(rng.below(4) as usize));
        }
        plans.push(vec![plan]);
    }
    graph.pushes.insert(FORK_PR, shas);
    (runs, plans)
}

const FORK_TITLE: &str = "Graph teardown: drop the host-node trampoline before destroying the exec";

/// The PRs opened before the culprit merged whose flake hits include a run created after it:
/// the long-lived branches of [`Shape::stale_branches`].
fn stale_prs(prs: &[PrPlan], runs: &[RunPlan], plans: &[Vec<AttemptPlan>]) -> BTreeSet<u64> {
    let merged = at(expected::CULPRIT_MERGED_AT);
    let opened_before: BTreeSet<u64> = prs
        .iter()
        .filter(|p| p.created < merged)
        .map(|p| p.number)
        .collect();
    runs.iter()
        .zip(plans)
        .filter(|(r, _)| matches!(r.kind, RunKind::PrPush | RunKind::PrEvent))
        .filter(|(r, _)| r.created > merged)
        .filter(|(_, attempts)| {
            attempts.iter().any(|a| {
                a.values()
                    .any(|c| matches!(c, Cause::Flake(_) | Cause::FlakeHung))
            })
        })
        .filter_map(|(r, _)| r.pr)
        .filter(|n| opened_before.contains(n))
        .collect()
}

/// Where the long-lived branches of [`Shape::stale_branches`] fork from `main`.
pub const STALE_BASE: &str = "2026-07-08T00:00:00Z";

/// Puts every push of the `stale` PRs on `main` as it stood at [`STALE_BASE`]: rebased onto
/// it (squash style), or committed on the branch without merging `main` in (merge-commit
/// style). The shas stay, so the runs and their failures do too.
fn keep_old_bases(
    prs: &[PrPlan],
    stale: &BTreeSet<u64>,
    graph: &mut Graph,
    merge_style: MergeStyle,
) {
    for pr in prs.iter().filter(|p| stale.contains(&p.number)) {
        let base = graph.main_at(at(STALE_BASE));
        let shas = graph.pushes[&pr.number].clone();
        for (i, sha) in shas.iter().enumerate() {
            let parents = if i > 0 && merge_style == MergeStyle::MergeCommit {
                vec![shas[i - 1].clone()]
            } else {
                vec![base.clone()]
            };
            if let Some(commit) = graph.commits.iter_mut().find(|c| &c.sha == sha) {
                commit.parents = parents;
            }
        }
    }
}

fn build(t: &Templates, seed: u64, shape: Shape) -> Dataset {
    let Shape {
        pr_style,
        merge_style,
        stale_branches,
    } = shape;
    let mut rng = Rng(seed);
    let repo = Repo {
        owner: "NVIDIA".into(),
        name: "cuda-python".into(),
    };
    let prs = plan_prs(&mut rng);
    let mut graph = build_graph(&prs, &mut rng, merge_style);
    let runs = plan_runs(&prs, &graph, &mut rng);
    let jobs = matrix();
    let mut plans = plan_failures(&runs, &jobs, &mut rng);
    assign_flake_tests(&mut plans, seed);
    plan_pool_night(&runs, &jobs, &mut plans);
    plan_pr_breaks(&prs, &runs, &jobs, &mut plans);
    let stale = if stale_branches {
        stale_prs(&prs, &runs, &plans)
    } else {
        BTreeSet::new()
    };
    keep_old_bases(&prs, &stale, &mut graph, merge_style);
    let (fork_runs, fork_plans) = plan_fork(&mut graph, &jobs, seed);
    let pr_titles: BTreeMap<u64, (&str, &str)> = prs
        .iter()
        .map(|p| (p.number, (p.title.as_str(), p.head_ref.as_str())))
        .collect();
    let rename_sha = prs
        .iter()
        .find(|p| p.title == RENAME_TITLE)
        .and_then(|p| graph.merges.get(&p.number))
        .expect("the rename PR merged")
        .clone();

    let mut ds = Dataset::new(repo.clone(), at(NOW));
    let start = at(START);
    let mut run_id = 0u64;
    let mut used_job_ids = BTreeSet::new();
    let mut render = |index: usize,
                      plan: &RunPlan,
                      attempts: &Vec<AttemptPlan>,
                      rng: &mut Rng,
                      ds: &mut Dataset,
                      run_id: &mut u64| {
        let minutes = (plan.created - start).num_minutes() as u64;
        *run_id = (27_600_000_000 + minutes * 25_000 + rng.below(20_000)).max(*run_id + 1);
        let id = RunId(*run_id);
        let new_style = graph.contains(&plan.sha, &rename_sha);
        let names: Vec<String> = jobs.iter().map(|m| job_name(m, new_style)).collect();
        let fork = plan.pr == Some(FORK_PR);
        // In GitHub's style every PR run is a `pull_request` event on the PR's own branch.
        let as_event = plan.kind == RunKind::PrEvent
            || (pr_style == PrStyle::Github && plan.kind == RunKind::PrPush);
        let (title, branch) = match plan.pr.and_then(|n| pr_titles.get(&n)) {
            Some((title, head_ref)) if as_event => (title.to_string(), head_ref.to_string()),
            _ => (plan.title.clone(), plan.branch.clone()),
        };
        let pull_requests = match plan.pr {
            // A fork's runs carry no PR, as on GitHub.
            Some(n) if as_event && !fork => vec![PrNumber(n)],
            _ => Vec::new(),
        };
        let run = Run {
            id,
            workflow_id: WorkflowId(WORKFLOW_ID),
            workflow_name: "CI".into(),
            workflow_path: WORKFLOW_PATH.into(),
            display_title: title.lines().next().unwrap_or_default().to_string(),
            event: match plan.kind {
                RunKind::Schedule => "schedule",
                _ if as_event => "pull_request",
                _ => "push",
            }
            .into(),
            head_branch: Some(branch),
            head_sha: plan.sha.clone(),
            run_number: 5400 + index as u64,
            run_attempt: 1,
            status: "completed".into(),
            conclusion: None,
            created_at: plan.created,
            updated_at: plan.created,
            run_started_at: Some(plan.created),
            html_url: format!("https://github.com/{repo}/actions/runs/{id}"),
            pull_requests,
            head_repository: fork.then(|| FORK_REPO.to_string()),
        };
        let attempt_plans: Vec<AttemptPlan> = if attempts.is_empty() {
            vec![AttemptPlan::new()]
        } else {
            attempts.clone()
        };
        let mut fake: Option<FakeRun> = None;
        let mut attempt_start = plan.created + TimeDelta::seconds(3);
        let mut rerun: Option<BTreeSet<usize>> = None;
        for (a, failures) in attempt_plans.iter().enumerate() {
            let number = a as u32 + 1;
            let mut attempt_jobs = Vec::new();
            let mut failed_builds = BTreeSet::new();
            let mut builds_done: BTreeMap<&str, Timestamp> = BTreeMap::new();
            let mut latest_end = attempt_start;
            let mut next_rerun = BTreeSet::new();
            let mut job_seq = 0u64;
            for (j, m) in jobs.iter().enumerate() {
                if rerun.as_ref().is_some_and(|set| !set.contains(&j)) {
                    continue;
                }
                let created = match m.kind {
                    JobKind::Build | JobKind::Docs => attempt_start + TimeDelta::seconds(2),
                    JobKind::Test => {
                        builds_done
                            .get(m.platform)
                            .copied()
                            .unwrap_or(attempt_start + TimeDelta::minutes(13))
                            + TimeDelta::seconds(5)
                    }
                };
                let secs = (created - start).num_seconds().max(0) as u64;
                let mut job_id = 40_000_000_000 + secs * 64 + job_seq;
                job_seq += 1;
                while !used_job_ids.insert(job_id) {
                    job_id += 1;
                }
                let job_id = JobId(job_id);
                let skipped = m.kind == JobKind::Test && failed_builds.contains(m.platform);
                // Jobs of a third or later attempt draw their times from a generator of their
                // own, so that the jobs failing again there leave every other draw as it was.
                let mut own = Rng(job_id.0 ^ 0x0a77_e3b7);
                let draw: &mut Rng = if number >= 3 { &mut own } else { &mut *rng };
                let started = match m.kind {
                    JobKind::Build => created + draw.secs(20, 150),
                    JobKind::Docs => created + draw.secs(20, 60),
                    JobKind::Test => created + draw.secs(20, 8 * 60),
                };
                let duration = match m.kind {
                    JobKind::Build => draw.secs(8 * 60, 14 * 60),
                    JobKind::Docs => draw.secs(5 * 60, 7 * 60),
                    JobKind::Test => draw.secs(9 * 60, 22 * 60),
                };
                let mut job = Job {
                    id: job_id,
                    run_id: id,
                    run_attempt: number,
                    name: names[j].clone(),
                    status: "completed".into(),
                    conclusion: Some("success".into()),
                    created_at: created,
                    started_at: Some(started),
                    completed_at: Some(started + duration),
                    html_url: Some(format!(
                        "https://github.com/{repo}/actions/runs/{id}/job/{job_id}"
                    )),
                    head_sha: plan.sha.clone(),
                    labels: Vec::new(),
                };
                if plan.in_progress && m.kind == JobKind::Test {
                    if j % 2 == 0 {
                        job.status = "in_progress".into();
                        job.completed_at = None;
                    } else {
                        job.status = "queued".into();
                        job.started_at = None;
                        job.completed_at = None;
                    }
                    job.conclusion = None;
                } else if skipped {
                    job.conclusion = Some("skipped".into());
                    job.started_at = Some(created);
                    job.completed_at = Some(created);
                    next_rerun.insert(j);
                } else if let Some(cause) = failures.get(&j) {
                    job.conclusion = Some("failure".into());
                    next_rerun.insert(j);
                    if m.kind == JobKind::Build {
                        failed_builds.insert(m.platform);
                    }
                    let kind = match cause {
                        Cause::Noise(_, k) => *k,
                        _ => LogKind::Text,
                    };
                    let ctx = LogContext::new(m, &names[j], job_id, plan, id);
                    let queued = started - TimeDelta::seconds(38);
                    let (text, last) = render_log(t, &ctx, cause, queued, job_id.0);
                    job.completed_at = Some(last + TimeDelta::seconds(1));
                    ds.logs.insert(
                        job_id,
                        match kind {
                            LogKind::Text => FakeLog::Text(text),
                            LogKind::Expired => FakeLog::Expired,
                            LogKind::Missing => FakeLog::Missing,
                        },
                    );
                } else if m.kind == JobKind::Test && ds.passing_log.is_none() {
                    // One passing test job's log, served for every successful job (its name
                    // and times swapped in by the fake).
                    let ctx = LogContext::new(m, &names[j], job_id, plan, id);
                    let text = render_passing_log(t, &ctx, started);
                    ds.passing_log = Some(text.replace(&names[j], "{{JOB_NAME}}"));
                }
                if m.kind == JobKind::Build {
                    let done = job.completed_at.unwrap_or(created);
                    builds_done.insert(m.platform, done);
                }
                if let Some(done) = job.completed_at {
                    latest_end = latest_end.max(done);
                }
                attempt_jobs.push(job);
            }
            let failed = attempt_jobs
                .iter()
                .any(|j| j.conclusion == Some("failure".into()));
            let conclusion = if plan.in_progress {
                None
            } else if failed {
                Some("failure".into())
            } else {
                Some("success".into())
            };
            let attempt = FakeAttempt {
                attempt: number,
                created_at: attempt_start,
                conclusion,
                jobs: attempt_jobs,
            };
            match fake.as_mut() {
                None => fake = Some(FakeRun::new(run.clone(), attempt)),
                Some(f) => f.push_attempt(attempt),
            }
            if plan.in_progress
                && let Some(f) = fake.as_mut()
            {
                f.run.status = "in_progress".into();
                f.run.updated_at = at(NOW) - TimeDelta::minutes(2);
            }
            attempt_start = latest_end + rng.secs(15 * 60, 3 * 3600);
            rerun = Some(next_rerun);
        }
        ds.runs.push(fake.expect("every run has an attempt"));
    };
    for (index, (plan, attempts)) in runs.iter().zip(&plans).enumerate() {
        render(index, plan, attempts, &mut rng, &mut ds, &mut run_id);
    }
    // The fork's runs last, with their own generator: the other runs stay as they were.
    let mut fork_rng = Rng(seed ^ 0x0f0f_0f0f);
    for (k, (plan, attempts)) in fork_runs.iter().zip(&fork_plans).enumerate() {
        // Ids grow with time: from the id of the run before it.
        let mut before = ds
            .runs
            .iter()
            .filter(|r| r.run.created_at < plan.created)
            .map(|r| r.run.id.0)
            .max()
            .unwrap_or_default();
        render(
            runs.len() + k,
            plan,
            attempts,
            &mut fork_rng,
            &mut ds,
            &mut before,
        );
    }

    for pr in &prs {
        let last_push = *pr.pushes.last().expect("a PR has a push");
        let head_sha = graph.pushes[&pr.number].last().expect("pushed").clone();
        ds.pulls.push(FakePull {
            number: pr.number,
            title: pr.title.clone(),
            state: if pr.closed.is_some() {
                "closed"
            } else {
                "open"
            }
            .into(),
            user: pr.user.clone(),
            base_ref: "main".into(),
            head_ref: pr.head_ref.clone(),
            base_sha: graph.main_at(if stale.contains(&pr.number) {
                at(STALE_BASE)
            } else {
                last_push
            }),
            head_sha: head_sha.clone(),
            created_at: pr.created,
            updated_at: pr.closed.unwrap_or(last_push) + TimeDelta::minutes(4),
            closed_at: pr.closed,
            merged_at: pr.merged,
            merge_commit_sha: graph.merges.get(&pr.number).cloned(),
            draft: false,
            locked: false,
            files: pr.files.clone(),
            head_repo: None,
        });
        if pr.closed.is_none() {
            ds.branches
                .insert(format!("pull-request/{}", pr.number), head_sha);
        }
    }
    let last_push = at(FORK_PUSHES[FORK_PUSHES.len() - 1].0);
    ds.pulls.push(FakePull {
        number: FORK_PR,
        title: FORK_TITLE.into(),
        state: "open".into(),
        user: "kmatsu".into(),
        base_ref: "main".into(),
        head_ref: FORK_BRANCH.into(),
        head_sha: graph.pushes[&FORK_PR].last().expect("pushed").clone(),
        base_sha: graph.main_at(last_push),
        created_at: at(FORK_PUSHES[0].0) - TimeDelta::minutes(2),
        updated_at: last_push + TimeDelta::minutes(4),
        closed_at: None,
        merged_at: None,
        merge_commit_sha: None,
        draft: false,
        locked: false,
        files: vec![
            file("cuda_core/cuda/core/_graph.py", "modified"),
            file("cuda_core/tests/graph/test_graph_capture.py", "modified"),
        ],
        head_repo: Some(FORK_REPO.into()),
    });
    ds.pulls.sort_by_key(|p| p.number);
    ds.branches
        .insert("main".into(), graph.main.last().expect("root").1.clone());
    ds.branches.insert(
        "12.9.x".into(),
        graph.side.last().expect("backports").1.clone(),
    );
    ds.commits = graph.commits;
    let top = prs.iter().map(|p| p.number).max().unwrap_or(2400);
    ds.issues.push(FakeIssue {
        number: top + 1,
        title: "Nightly CI flake report".into(),
        state: "open".into(),
        locked: false,
    });
    ds.issues.push(FakeIssue {
        number: 2289,
        title: "CI flakiness on Windows runners (locked)".into(),
        state: "closed".into(),
        locked: true,
    });
    ds
}
