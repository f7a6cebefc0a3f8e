//! The bundled `cuda-python-flake` scenario: ten weeks of NVIDIA/cuda-python's CI in which PR
//! #2371 makes the free-threaded 3.14t test jobs fail about one run in five with
//! `AssertionError: condition not satisfied within 5.0s`, among background noise. Everything is
//! derived from the seed by a small deterministic generator (no clock, no OS randomness), and
//! the logs are rendered from templates cut from a real-format job log (`logs/`, `tails/`).
//! `fixtures/cuda-python-flake/README.md` tells the story; `tests/fake_scenario.rs` checks it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{DateTime, TimeDelta, Timelike, Utc};

use crate::fake::dataset::{
    Dataset, DatasetError, FakeAttempt, FakeCommit, FakeFile, FakeIssue, FakeLog, FakePull, FakeRun,
};
use crate::fake::routes::{fake_sha, job_labels};
use crate::model::{Job, JobId, Repo, Run, RunId, Sha, Timestamp, WorkflowId};

/// The pull request that introduced the flake.
pub const CULPRIT_PR: u64 = 2371;
/// The unrelated pull request merged between the culprit and the first hit.
pub const BETWEEN_PR: u64 = 2379;
/// A pull request that edits the flaky test itself; its runs fail with the same assertion.
pub const RELATED_PR: u64 = 2362;
/// The assertion every flake hit prints.
pub const FLAKE_MESSAGE: &str = "AssertionError: condition not satisfied within 5.0s";
/// The test file the flake lives in, as a repository path.
pub const FLAKE_TEST_FILE: &str = "cuda_core/tests/graph/test_graph_definition_lifetime.py";
/// The workflow every run belongs to.
pub const WORKFLOW_PATH: &str = ".github/workflows/ci.yml";
/// The title of the PR that renamed the test jobs (old style before it, new style after).
pub const RENAME_TITLE: &str = "CI: spell out Python, CUDA and GPU in test job names";

const WORKFLOW_ID: u64 = 104_315_042;
const START: &str = "2026-05-20T00:00:00Z";
const END: &str = "2026-08-01T00:00:00Z";
const NOW: &str = "2026-08-01T06:30:00Z";

fn at(text: &str) -> Timestamp {
    DateTime::parse_from_rfc3339(text)
        .expect("constant timestamps are valid")
        .with_timezone(&Utc)
}

/// splitmix64: tiny, seedable, and stable forever (unlike a crate's generator across versions).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

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

/// Titles and (space-separated) files of ordinary pull requests: none goes near the graph code or
/// its tests.
const CATALOG: &[(&str, &str)] = &[
    (
        "Add Stream.wait_event timeout argument",
        "cuda_core/cuda/core/_stream.pyx cuda_core/tests/test_stream.py",
    ),
    (
        "pathfinder: find nvvm in conda layouts",
        "cuda_pathfinder/cuda/pathfinder/_dynamic_libs/find_nvidia_dynamic_lib.py cuda_pathfinder/tests/test_find_nvidia_dynamic_lib.py",
    ),
    (
        "Regenerate bindings for CUDA 13.0.2",
        "cuda_bindings/cuda/bindings/driver.pyx.in cuda_bindings/cuda/bindings/runtime.pyx.in cuda_bindings/cuda/bindings/cydriver.pxd.in",
    ),
    (
        "docs: fix the LaunchConfig example",
        "cuda_core/docs/source/getting-started.rst",
    ),
    (
        "Cache device attributes in Device.properties",
        "cuda_core/cuda/core/_device.pyx cuda_core/tests/test_device.py",
    ),
    (
        "CI: bump actions/setup-python",
        ".github/workflows/test-wheel-linux.yml .github/workflows/test-wheel-windows.yml",
    ),
    (
        "Support NVRTC precompiled headers in Program",
        "cuda_core/cuda/core/_program.py cuda_core/tests/test_program.py",
    ),
    (
        "bindings: expose cuMemBatchDecompressAsync",
        "cuda_bindings/cuda/bindings/driver.pyx.in cuda_bindings/tests/test_cuda.py",
    ),
    (
        "Fix ObjectCode.from_cubin with bytes input",
        "cuda_core/cuda/core/_module.py cuda_core/tests/test_module.py",
    ),
    (
        "pathfinder: prefer site-packages over CUDA_HOME for nvJitLink",
        "cuda_pathfinder/cuda/pathfinder/_dynamic_libs/load_nvidia_dynamic_lib.py",
    ),
    (
        "Add MemoryResource.attributes",
        "cuda_core/cuda/core/_memory/_memory_pool.pyx cuda_core/tests/memory/test_memory_pool.py",
    ),
    (
        "CI: run the docs build on every PR",
        ".github/workflows/build-docs.yml",
    ),
    (
        "Typo fixes in the bindings docs",
        "cuda_bindings/docs/source/overview.rst",
    ),
    (
        "Linker: accept LTO-IR from Program.compile",
        "cuda_core/cuda/core/_linker.py cuda_core/tests/test_linker.py",
    ),
    (
        "Drop Python 3.9 leftovers",
        "cuda_core/pyproject.toml cuda_bindings/pyproject.toml cuda_pathfinder/pyproject.toml",
    ),
    (
        "Add a __repr__ to Event",
        "cuda_core/cuda/core/_event.pyx cuda_core/tests/test_event.py",
    ),
    (
        "bindings: make nvrtcGetSupportedArchs return a tuple",
        "cuda_bindings/cuda/bindings/nvrtc.pyx.in cuda_bindings/tests/test_nvrtc.py",
    ),
    (
        "Build: pin Cython below 3.3",
        "cuda_bindings/pyproject.toml cuda_core/pyproject.toml",
    ),
    (
        "StridedMemoryView: support DLPack 1.1 versioned capsules",
        "cuda_core/cuda/core/_memoryview.pyx cuda_core/tests/test_utils.py",
    ),
    (
        "pathfinder: add find_nvidia_header_directory for cccl",
        "cuda_pathfinder/cuda/pathfinder/_headers/find_nvidia_headers.py cuda_pathfinder/tests/test_find_nvidia_headers.py",
    ),
    (
        "CI: retry the mini-CTK download",
        ".github/actions/fetch_ctk/action.yml",
    ),
    (
        "Launch: validate grid dimensions before cuLaunchKernelEx",
        "cuda_core/cuda/core/_launcher.pyx cuda_core/tests/test_launcher.py",
    ),
    (
        "Release notes for cuda-bindings 13.0.3",
        "cuda_bindings/docs/source/release/13.0.3-notes.rst",
    ),
    (
        "Device.sync: release the GIL",
        "cuda_core/cuda/core/_device.pyx",
    ),
    (
        "Add system.get_driver_version to cuda.core",
        "cuda_core/cuda/core/system/_system.pyx cuda_core/tests/system/test_system.py",
    ),
    (
        "IPC: document the supported memory resources",
        "cuda_core/docs/source/interoperability.rst",
    ),
    (
        "bindings: fix cyruntime stubs on Windows",
        "cuda_bindings/cuda/bindings/_bindings/cyruntime_windows.pyx.in",
    ),
    ("pre-commit autoupdate", ".pre-commit-config.yaml"),
    (
        "Add Program options for -fdevice-time-trace",
        "cuda_core/cuda/core/_program.py cuda_core/tests/test_program.py",
    ),
    (
        "VMM: implement grow for VirtualMemoryResource",
        "cuda_core/cuda/core/_memory/_virtual_memory_resource.py cuda_core/tests/memory/test_vmm.py",
    ),
    (
        "CI: move Windows jobs to the MCDM runners",
        ".github/workflows/test-wheel-windows.yml ci/test-matrix.json",
    ),
    (
        "Fix a refcount leak in Kernel.attributes",
        "cuda_core/cuda/core/_module.py",
    ),
    (
        "pathfinder: 1.6.0 release notes",
        "cuda_pathfinder/docs/source/release/1.6.0-notes.rst",
    ),
    (
        "bindings: add nvFatbin bindings",
        "cuda_bindings/cuda/bindings/nvfatbin.pyx cuda_bindings/tests/test_nvfatbin.py",
    ),
    (
        "Add examples/thread_block_cluster.py",
        "cuda_core/examples/thread_block_cluster.py",
    ),
    (
        "Test: skip NVML tests on GPUs without NVML support",
        "cuda_core/tests/system/test_system_device.py",
    ),
    (
        "Checkout: fetch tags for setuptools-scm",
        ".github/workflows/build-wheel.yml",
    ),
    (
        "Stream: add priority range query",
        "cuda_core/cuda/core/_stream.pyx cuda_core/tests/test_stream.py",
    ),
    (
        "docs: version switcher for 1.1",
        "cuda_core/docs/source/conf.py cuda_core/docs/versions.json",
    ),
    (
        "bindings: speed up cudaGetErrorString",
        "cuda_bindings/cuda/bindings/runtime.pyx.in",
    ),
];

const USERS: &[&str] = &[
    "dev-ana", "dev-bram", "dev-chen", "dev-dara", "dev-eli", "dev-femi", "dev-gus",
];

const FOLLOW_UPS: &[&str] = &[
    "Address review comments",
    "Apply suggestions from code review",
    "Fix pre-commit",
    "Add a test",
    "Rebase on main",
];

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
    /// The 3.14t flake: indices into `FLAKE_TESTS`.
    Flake(Vec<usize>),
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
        "test_host_callback_closure_released_after_graph_destroyed",
        903,
        "closure_weak() is None",
    ),
    (
        "test_conditional_handle_released_with_graph",
        1102,
        "handle_weak() is None",
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

// ---- log templates ----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prefix {
    Setup,
    Tests,
    CoreHead,
}

struct Tail {
    prefix: Prefix,
    exit: Option<u32>,
    lines: Vec<String>,
}

struct Templates {
    setup: String,
    tests: String,
    core: String,
    foot: String,
    tails: BTreeMap<String, Tail>,
}

fn read(path: &Path) -> Result<String, DatasetError> {
    std::fs::read_to_string(path).map_err(|source| DatasetError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn load_templates(dir: &Path) -> Result<Templates, DatasetError> {
    let logs = dir.join("logs");
    let mut tails = BTreeMap::new();
    let mut names: BTreeSet<&str> = NOISE.iter().map(|n| n.tail).collect();
    names.insert("runner-lost");
    for name in names {
        let path = dir.join("tails").join(format!("{name}.log"));
        let text = read(&path)?;
        let invalid = |message: String| DatasetError::Invalid {
            path: path.clone(),
            message,
        };
        let mut prefix = None;
        let mut exit = Some(1);
        let mut lines = Vec::new();
        for line in text.lines() {
            if let Some(p) = line.strip_prefix("#prefix: ") {
                prefix = Some(match p.trim() {
                    "setup" => Prefix::Setup,
                    "tests" => Prefix::Tests,
                    "core-head" => Prefix::CoreHead,
                    other => return Err(invalid(format!("unknown prefix `{other}`"))),
                });
            } else if let Some(e) = line.strip_prefix("#exit: ") {
                exit = match e.trim() {
                    "none" => None,
                    n => Some(
                        n.parse()
                            .map_err(|_| invalid(format!("bad exit code `{n}`")))?,
                    ),
                };
            } else {
                lines.push(line.to_string());
            }
        }
        let prefix = prefix.ok_or_else(|| invalid("missing `#prefix:` line".into()))?;
        tails.insert(
            name.to_string(),
            Tail {
                prefix,
                exit,
                lines,
            },
        );
    }
    Ok(Templates {
        setup: read(&logs.join("setup.log"))?,
        tests: read(&logs.join("tests-before-core.log"))?,
        core: read(&logs.join("core.log"))?,
        foot: read(&logs.join("foot.log"))?,
        tails,
    })
}

/// One log line before rendering: a time offset (`None`: a continuation line, no timestamp).
struct Line {
    offset: Option<TimeDelta>,
    text: String,
}

/// Appends a template section, keeping its relative timing, starting `gap` after the last line.
fn push_section(out: &mut Vec<Line>, section: &str, gap: TimeDelta) {
    let base = out.iter().rev().find_map(|l| l.offset).unwrap_or_default() + gap;
    let mut first: Option<Timestamp> = None;
    for raw in section.lines() {
        let stamp = raw.get(..28).and_then(|s| {
            DateTime::parse_from_rfc3339(s)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        });
        match stamp {
            Some(t) => {
                let first = *first.get_or_insert(t);
                out.push(Line {
                    offset: Some(base + (t - first)),
                    text: raw[29.min(raw.len())..].to_string(),
                });
            }
            // A line the template leaves unstamped (an expanded marker) runs for a few seconds,
            // like the test it reports.
            None => out.push(Line {
                offset: out
                    .last()
                    .and_then(|l| l.offset)
                    .map(|o| o + TimeDelta::milliseconds(5_370)),
                text: raw.to_string(),
            }),
        }
    }
}

/// Appends generated lines, 7.1 ms apart like the runner's buffered output; lines starting with
/// `~ ` are continuations of the previous message.
fn push_lines(out: &mut Vec<Line>, lines: &[String], gap: TimeDelta) {
    let mut t = out.iter().rev().find_map(|l| l.offset).unwrap_or_default() + gap;
    for line in lines {
        if let Some(rest) = line.strip_prefix("~ ") {
            out.push(Line {
                offset: None,
                text: rest.to_string(),
            });
        } else if line == "~" {
            out.push(Line {
                offset: None,
                text: String::new(),
            });
        } else {
            out.push(Line {
                offset: Some(t),
                text: line.clone(),
            });
            t += TimeDelta::microseconds(7137);
        }
    }
}

fn flake_progress(tests: &[usize]) -> Vec<String> {
    tests
        .iter()
        .map(|&i| {
            format!(
                "tests/graph/test_graph_definition_lifetime.py::{} \\e[31mFAILED\\e[0m [ 38%]",
                FLAKE_TESTS[i].0
            )
        })
        .collect()
}

fn flake_failures(tests: &[usize], salt: u64) -> Vec<String> {
    let mut out = vec![
        String::new(),
        "=================================== FAILURES ===================================".into(),
    ];
    for (k, &i) in tests.iter().enumerate() {
        let (name, line, cond) = FLAKE_TESTS[i];
        let addr = &fake_sha(&format!("lambda {salt} {k}"))[..8];
        out.extend([
            format!("{:_^80}", format!(" {name} ")),
            String::new(),
            "init_cuda = None".into(),
            String::new(),
            format!("    def {name}(init_cuda):"),
            "        [... test body elided in this composed sample ...]".into(),
            format!(">       _wait_until(lambda: {cond})"),
            String::new(),
            format!("tests/graph/test_graph_definition_lifetime.py:{line}: "),
            "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ "
                .into(),
            String::new(),
            format!("predicate = <function {name}.<locals>.<lambda> at 0x7f3a{addr}>"),
            "timeout = 5.0, interval = 0.02".into(),
            String::new(),
            "    def _wait_until(predicate, timeout=None, interval=0.02):".into(),
            "        [... helper body elided in this composed sample ...]".into(),
            ">       raise AssertionError(f\"condition not satisfied within {timeout}s\")".into(),
            format!("\\e[1m\\e[31mE       {FLAKE_MESSAGE}\\e[0m"),
            String::new(),
            "tests/graph/test_graph_definition_lifetime.py:75: AssertionError".into(),
        ]);
    }
    out.push(
        "============================== slowest durations ===============================".into(),
    );
    for (k, &i) in tests.iter().enumerate() {
        out.push(format!(
            "5.{}s call     tests/graph/test_graph_definition_lifetime.py::{}",
            41 - 11 * k,
            FLAKE_TESTS[i].0
        ));
    }
    out.push("4.87s call     tests/test_program.py::test_program_compile_nvvm_large".into());
    out.push("(9841 durations < 0.005s hidden.  Use -vv to show these durations.)".into());
    out.push(
        "=========================== short test summary info ============================".into(),
    );
    out.push("SKIPPED [6] tests/test_device.py:214: Test requires at least 2 GPUs".into());
    out.push(
        "XFAIL tests/test_linker.py::test_linker_link_ptx_nvjitlink_debug - known nvJitLink issue"
            .into(),
    );
    for &i in tests {
        out.push(format!(
            "FAILED tests/graph/test_graph_definition_lifetime.py::{} - {FLAKE_MESSAGE}",
            FLAKE_TESTS[i].0
        ));
    }
    out.push(format!(
        "\\e[31m====== {} failed, {} passed, 214 skipped, 1 xfailed in 431.27s (0:07:11) ======\\e[0m",
        tests.len(),
        3197 - tests.len()
    ));
    out
}

/// Everything a log template can mention about its job.
struct LogContext {
    vars: Vec<(&'static str, String)>,
}

impl LogContext {
    fn new(m: &MatrixJob, name: &str, job: JobId, run: &RunPlan, run_id: RunId) -> LogContext {
        let label = job_labels(name).remove(0);
        let arch = if m.platform == "linux-aarch64" {
            "arm64"
        } else {
            "amd64"
        };
        let group = if m.gpu.is_empty() {
            format!("nv-cpu-{arch}")
        } else {
            format!("nv-gpu-{arch}-{}-1gpu", m.gpu)
        };
        let workflow_file = match (m.kind, m.platform) {
            (JobKind::Build | JobKind::Docs, _) => "build-wheel.yml",
            (_, "win-64") => "test-wheel-windows.yml",
            _ => "test-wheel-linux.yml",
        };
        let free_threaded = m.py.ends_with('t');
        let pyfull = match m.py.trim_end_matches('t') {
            "3.10" => "3.10.18",
            "3.11" => "3.11.13",
            "3.12" => "3.12.11",
            "3.13" => "3.13.7",
            _ => "3.14.5",
        };
        let cpu = if m.platform == "linux-aarch64" {
            "arm64"
        } else {
            "x64"
        };
        let pyarch = if free_threaded {
            format!("{cpu}-freethreaded")
        } else {
            cpu.to_string()
        };
        let gpu_smi = match m.gpu {
            "t4" => "Tesla T4",
            "l4" => "NVIDIA L4",
            "a100" => "NVIDIA A100-SXM4-80GB",
            "h100" => "NVIDIA H100 80GB HBM3",
            "rtxpro6000" => "NVIDIA RTX PRO 6000 Blac",
            "rtx4090" => "NVIDIA GeForce RTX 4090",
            "rtx2080" => "NVIDIA GeForce RTX 2080",
            _ => "",
        };
        let runner = format!("{label}-{}", &fake_sha(&format!("runner {job}"))[..5]);
        LogContext {
            vars: vec![
                ("JOB_NAME", name.to_string()),
                ("RUNNER", runner),
                ("LABEL", label),
                ("GROUP", group),
                ("WORKFLOW_FILE", workflow_file.to_string()),
                ("REF", format!("refs/heads/{}", run.branch)),
                ("SHA", run.sha.0.clone()),
                ("SHORT", run.sha.0[..9].to_string()),
                ("RUN_ID", run_id.to_string()),
                (
                    "LOCAL",
                    if m.mode == "local" { "1" } else { "0" }.to_string(),
                ),
                ("CUDA", m.cuda.to_string()),
                ("PYNODOT", m.py.replace('.', "")),
                ("PYARCH", pyarch),
                ("PYFULL", pyfull.to_string()),
                ("PY", m.py.to_string()),
                ("PLATFORM", m.platform.to_string()),
                ("GPU_SMI", format!("{gpu_smi:<31}")),
            ],
        }
    }

    fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (k, v) in &self.vars {
            out = out.replace(&format!("{{{{{k}}}}}"), v);
        }
        out.replace("\\e[", "\u{1b}[")
    }
}

/// Renders a failed job's log from `start` (when the job was queued). Returns the text and the
/// time of its last line.
fn render_log(
    t: &Templates,
    ctx: &LogContext,
    cause: &Cause,
    start: Timestamp,
    salt: u64,
) -> (String, Timestamp) {
    let mut lines = Vec::new();
    push_section(&mut lines, &t.setup, TimeDelta::zero());
    let core_head: String = t
        .core
        .lines()
        .take_while(|l| !l.contains("{{FAILED_PROGRESS}}"))
        .map(|l| format!("{l}\n"))
        .collect();
    let exit = match cause {
        Cause::Flake(tests) | Cause::Related(tests) => {
            push_section(&mut lines, &t.tests, TimeDelta::milliseconds(40));
            let progress = flake_progress(tests).join("\n");
            let core = t.core.replace("{{FAILED_PROGRESS}}", &progress);
            push_section(&mut lines, &core, TimeDelta::milliseconds(60));
            push_lines(
                &mut lines,
                &flake_failures(tests, salt),
                TimeDelta::milliseconds(300),
            );
            Some(1)
        }
        Cause::Noise(name, _) => {
            let tail = &t.tails[*name];
            match tail.prefix {
                Prefix::Setup => {}
                Prefix::Tests => {
                    push_section(&mut lines, &t.tests, TimeDelta::milliseconds(40));
                }
                Prefix::CoreHead => {
                    push_section(&mut lines, &t.tests, TimeDelta::milliseconds(40));
                    push_section(&mut lines, &core_head, TimeDelta::milliseconds(60));
                }
            }
            push_lines(&mut lines, &tail.lines, TimeDelta::seconds(2));
            tail.exit
        }
    };
    if let Some(code) = exit {
        let foot = t.foot.replacen(
            "Process completed with exit code 1.",
            &format!("Process completed with exit code {code}."),
            1,
        );
        push_section(&mut lines, &foot, TimeDelta::milliseconds(180));
    }
    // Render: BOM, timestamps with 7 fractional digits, script lines in cyan after `Run`.
    let jitter = TimeDelta::nanoseconds((salt % 9_999_999) as i64 * 100 % 1_000_000_000);
    let mut text = String::from("\u{feff}");
    let mut last = start;
    let mut previous = "";
    for line in &lines {
        let mut body = ctx.apply(&line.text);
        if body.contains("{{SMI_DATE}}") {
            let when = start + line.offset.unwrap_or_default();
            body = body.replace(
                "{{SMI_DATE}}",
                &when.format("%a %b %e %H:%M:%S %Y").to_string(),
            );
        }
        let script_echo = previous.starts_with("##[group]Run ")
            && !body.starts_with("with:")
            && !body.starts_with("##[");
        let body = if script_echo && !body.is_empty() {
            format!("\u{1b}[36;1m{body}\u{1b}[0m")
        } else {
            body
        };
        match line.offset {
            Some(offset) if !line.text.is_empty() || line.offset.is_some() => {
                let when = start + offset + jitter;
                last = when;
                let stamp = format!(
                    "{}.{:07}Z",
                    when.format("%Y-%m-%dT%H:%M:%S"),
                    when.nanosecond() / 100
                );
                text.push_str(&stamp);
                text.push(' ');
                text.push_str(&body);
            }
            _ => text.push_str(&body),
        }
        text.push('\n');
        previous = &line.text;
    }
    (text, last)
}

// ---- the generator ----

/// Builds the scenario from the templates in `dir` (`logs/`, `tails/`) and `seed`.
pub fn generate(dir: &Path, seed: u64) -> Result<Dataset, DatasetError> {
    let templates = load_templates(dir)?;
    Ok(build(&templates, seed))
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

fn build_graph(prs: &[PrPlan], rng: &mut Rng) -> Graph {
    let root = Sha(fake_sha("cuda-python root"));
    let root_time = at("2026-05-19T18:00:00Z");
    let mut commits = vec![FakeCommit {
        sha: root.clone(),
        parents: Vec::new(),
        message: "Release cuda-core 1.0.0 (#2288)".into(),
        author: "dev-ana".into(),
        date: root_time,
    }];
    let mut main = vec![(root_time, root)];
    let mut merged: Vec<&PrPlan> = prs.iter().filter(|p| p.merged.is_some()).collect();
    merged.sort_by_key(|p| p.merged);
    let mut merges = BTreeMap::new();
    for pr in &merged {
        let when = pr.merged.expect("filtered");
        let parent = main.last().expect("root").1.clone();
        let sha = Sha(fake_sha(&format!("merge {}", pr.number)));
        commits.push(FakeCommit {
            sha: sha.clone(),
            parents: vec![parent],
            message: format!("{} (#{})", pr.title, pr.number),
            author: pr.user.clone(),
            date: when,
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
    // Each push to a PR is its change rebased onto main as it stood then.
    for pr in prs {
        let mut shas = Vec::new();
        for (i, when) in pr.pushes.iter().enumerate() {
            let sha = Sha(fake_sha(&format!("pr {} push {i}", pr.number)));
            let message = if i == 0 {
                pr.title.clone()
            } else {
                FOLLOW_UPS[rng.below(FOLLOW_UPS.len() as u64) as usize].to_string()
            };
            graph.commits.push(FakeCommit {
                sha: sha.clone(),
                parents: vec![graph.main_at(*when)],
                message,
                author: pr.user.clone(),
                date: *when - TimeDelta::minutes(3),
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
        for a in 0..n {
            let green = n > 1 && a == n - 1;
            let mut plan = AttemptPlan::new();
            if !green {
                let count = if rng.percent(30) { 2 } else { 1 };
                for _ in 0..count {
                    let job = t_jobs[cursor % t_jobs.len()];
                    cursor += 1 + rng.below(2) as usize;
                    let tests = if rng.percent(40) {
                        let a = rng.below(4) as usize;
                        vec![a, (a + 1 + rng.below(3) as usize) % 4]
                    } else {
                        vec![rng.below(4) as usize]
                    };
                    plan.insert(job, Cause::Flake(tests));
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

fn build(t: &Templates, seed: u64) -> Dataset {
    let mut rng = Rng(seed);
    let repo = Repo {
        owner: "NVIDIA".into(),
        name: "cuda-python".into(),
    };
    let prs = plan_prs(&mut rng);
    let graph = build_graph(&prs, &mut rng);
    let runs = plan_runs(&prs, &graph, &mut rng);
    let jobs = matrix();
    let plans = plan_failures(&runs, &jobs, &mut rng);
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
    for (index, (plan, attempts)) in runs.iter().zip(&plans).enumerate() {
        let minutes = (plan.created - start).num_minutes() as u64;
        run_id = (27_600_000_000 + minutes * 25_000 + rng.below(20_000)).max(run_id + 1);
        let id = RunId(run_id);
        let new_style = graph.contains(&plan.sha, &rename_sha);
        let names: Vec<String> = jobs.iter().map(|m| job_name(m, new_style)).collect();
        let pull_requests = match plan.kind {
            RunKind::PrEvent => vec![plan.pr.expect("PR runs have a PR")],
            _ => Vec::new(),
        };
        let run = Run {
            id,
            workflow_id: WorkflowId(WORKFLOW_ID),
            workflow_name: "CI".into(),
            workflow_path: WORKFLOW_PATH.into(),
            display_title: plan.title.lines().next().unwrap_or_default().to_string(),
            event: match plan.kind {
                RunKind::Schedule => "schedule",
                RunKind::PrEvent => "pull_request",
                _ => "push",
            }
            .into(),
            head_branch: Some(plan.branch.clone()),
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
                let started = match m.kind {
                    JobKind::Build => created + rng.secs(20, 150),
                    JobKind::Docs => created + rng.secs(20, 60),
                    JobKind::Test => created + rng.secs(20, 8 * 60),
                };
                let duration = match m.kind {
                    JobKind::Build => rng.secs(8 * 60, 14 * 60),
                    JobKind::Docs => rng.secs(5 * 60, 7 * 60),
                    JobKind::Test => rng.secs(9 * 60, 22 * 60),
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
                .any(|j| j.conclusion.as_deref() == Some("failure"));
            let conclusion = if plan.in_progress {
                None
            } else if failed {
                Some("failure".to_string())
            } else {
                Some("success".to_string())
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
            base_sha: graph.main_at(last_push),
            head_sha: head_sha.clone(),
            created_at: pr.created,
            updated_at: pr.closed.unwrap_or(last_push) + TimeDelta::minutes(4),
            closed_at: pr.closed,
            merged_at: pr.merged,
            merge_commit_sha: graph.merges.get(&pr.number).cloned(),
            draft: false,
            locked: false,
            files: pr.files.clone(),
        });
        if pr.closed.is_none() {
            ds.branches
                .insert(format!("pull-request/{}", pr.number), head_sha);
        }
    }
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

// ---- a day later ----

/// What [`a_day_later`] changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayLater {
    /// The run that was in progress; now completed, failed by the flake on one 3.14t job.
    pub completed: RunId,
    /// An older flake-failed PR run re-run to green: its `created_at` is old, so a listing
    /// filtered on `created` since the last survey does not show it; its `updated_at` is new.
    pub rerun: RunId,
    /// Runs created during the new day, oldest first: a merge on `main` (green) and a push to a
    /// new PR (a flake hit).
    pub new_runs: Vec<RunId>,
    /// Of `new_runs`, the ones with a flake hit.
    pub new_hits: Vec<RunId>,
}

/// Re-stamps a raw log so that its first line is at `start`, and renames its job.
fn restamp_log(text: &str, start: Timestamp, from_name: &str, to_name: &str) -> String {
    let body = text.trim_start_matches('\u{feff}');
    let stamp = |line: &str| -> Option<Timestamp> {
        DateTime::parse_from_rfc3339(line.get(..28)?)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    };
    let first = body.lines().find_map(stamp).unwrap_or(start);
    let delta = start - first;
    let mut out = String::from("\u{feff}");
    for line in body.lines() {
        match stamp(line) {
            Some(t) => {
                let when = t + delta;
                out.push_str(&format!(
                    "{}.{:07}Z",
                    when.format("%Y-%m-%dT%H:%M:%S"),
                    when.nanosecond() / 100
                ));
                let rest = &line[28..];
                if rest.starts_with(" Complete job name: ") {
                    out.push_str(&rest.replace(from_name, to_name));
                } else {
                    out.push_str(rest);
                }
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

fn last_stamp(text: &str) -> Option<Timestamp> {
    text.trim_start_matches('\u{feff}')
        .lines()
        .rev()
        .find_map(|l| {
            DateTime::parse_from_rfc3339(l.get(..28)?)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        })
}

/// Simulates the next 24 hours of the bundled scenario on `ds` (as loaded): completes the run
/// in progress, re-runs an old flake-failed PR run to green, and adds a green merge run and a
/// flake-hit PR run. `now` moves one day on. Deterministic.
///
/// # Panics
/// When `ds` is not the bundled scenario (no run in progress, no flake log).
pub fn a_day_later(ds: &mut Dataset) -> DayLater {
    let old_now = ds.now;
    ds.now = old_now + TimeDelta::days(1);
    let is_pr = |r: &FakeRun| {
        r.run
            .head_branch
            .as_deref()
            .is_some_and(|b| b.starts_with("pull-request/"))
    };
    let related = format!("pull-request/{RELATED_PR}");
    // A flake log to copy, from a PR run other than the related one.
    let (source_name, source_log) = ds
        .runs
        .iter()
        .filter(|r| r.run.head_branch.as_deref() != Some(related.as_str()))
        .flat_map(|r| r.all_jobs())
        .find_map(|j| match ds.logs.get(&j.id) {
            Some(FakeLog::Text(t)) if t.contains(FLAKE_MESSAGE) => {
                Some((j.name.clone(), t.clone()))
            }
            _ => None,
        })
        .expect("the scenario has flake logs");
    let mut next_job = ds.jobs().map(|j| j.id.0).max().unwrap_or(0) + 1000;
    let mut new_job_id = || {
        next_job += 17;
        JobId(next_job)
    };

    // 1. The run in progress completes; its first 3.14t job hits the flake.
    let pending = ds
        .runs
        .iter()
        .position(|r| !r.run.is_completed())
        .expect("the scenario has a run in progress");
    let mut new_logs = Vec::new();
    {
        let fake = &mut ds.runs[pending];
        let attempt = fake.attempts.last_mut().expect("an attempt");
        let mut hit = false;
        for job in attempt.jobs.iter_mut() {
            if job.status == "completed" {
                continue;
            }
            let started = job
                .started_at
                .unwrap_or(job.created_at + TimeDelta::minutes(2));
            job.started_at = Some(started);
            job.status = "completed".into();
            job.conclusion = Some("success".into());
            job.completed_at = Some(started + TimeDelta::minutes(14));
            if !hit && job.name.contains("3.14t") {
                hit = true;
                let text = restamp_log(
                    &source_log,
                    started - TimeDelta::seconds(38),
                    &source_name,
                    &job.name,
                );
                job.conclusion = Some("failure".into());
                job.completed_at = last_stamp(&text).map(|t| t + TimeDelta::seconds(1));
                new_logs.push((job.id, text));
            }
        }
        attempt.conclusion = Some("failure".into());
        fake.run.status = "completed".into();
        fake.run.conclusion = Some("failure".into());
        fake.run.updated_at = attempt
            .jobs
            .iter()
            .filter_map(|j| j.completed_at)
            .max()
            .unwrap_or(old_now);
    }
    let completed = ds.runs[pending].run.id;

    // 2. The newest flake-failed PR run is re-run to green.
    let rerun_index = ds
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| is_pr(r) && r.run.conclusion.as_deref() == Some("failure"))
        .filter(|(_, r)| {
            r.jobs_at(r.run.run_attempt).iter().any(|j| {
                matches!(ds.logs.get(&j.id), Some(FakeLog::Text(t)) if t.contains(FLAKE_MESSAGE))
            })
        })
        .max_by_key(|(_, r)| r.run.created_at)
        .map(|(i, _)| i)
        .expect("a flake-failed PR run");
    {
        let fake = &mut ds.runs[rerun_index];
        let n = fake.run.run_attempt + 1;
        let start = old_now + TimeDelta::hours(3);
        let jobs: Vec<Job> = fake
            .jobs_at(n - 1)
            .into_iter()
            .filter(|j| j.is_failed())
            .cloned()
            .map(|mut j| {
                j.id = new_job_id();
                j.run_attempt = n;
                j.conclusion = Some("success".into());
                j.created_at = start + TimeDelta::seconds(5);
                j.started_at = Some(start + TimeDelta::minutes(2));
                j.completed_at = Some(start + TimeDelta::minutes(17));
                j.html_url = Some(format!(
                    "https://github.com/{}/actions/runs/{}/job/{}",
                    ds.repo, j.run_id, j.id
                ));
                j
            })
            .collect();
        fake.push_attempt(FakeAttempt {
            attempt: n,
            created_at: start,
            conclusion: Some("success".into()),
            jobs,
        });
    }
    let rerun = ds.runs[rerun_index].run.id;

    // 3. Two new runs: a green merge on main, and a push to a new PR that hits the flake.
    let template = ds
        .runs
        .iter()
        .filter(|r| r.run.event == "push" && r.run.head_branch.as_deref() == Some("main"))
        .filter(|r| r.run.conclusion.as_deref() == Some("success"))
        .max_by_key(|r| r.run.created_at)
        .expect("a green merge run")
        .clone();
    let top = ds
        .pulls
        .iter()
        .map(|p| p.number)
        .chain(ds.issues.iter().map(|i| i.number))
        .max()
        .unwrap_or(2400);
    let main_head = ds.resolve_ref("main").expect("main");
    let mut new_runs = Vec::new();
    let mut new_hits = Vec::new();
    let specs = [
        (top + 1, "Fix a typo in the 1.1 release notes", true),
        (top + 2, "Add Device.uuid", false),
    ];
    let mut run_id = ds.runs.iter().map(|r| r.run.id.0).max().unwrap_or(0);
    let last_number = ds.runs.iter().map(|r| r.run.run_number).max().unwrap_or(0);
    for (k, (number, title, merge)) in specs.into_iter().enumerate() {
        let opened = old_now + TimeDelta::hours(2 + 3 * k as i64);
        let created = opened + TimeDelta::hours(2);
        let pr_sha = Sha(fake_sha(&format!("day-later pr {number}")));
        ds.commits.push(FakeCommit {
            sha: pr_sha.clone(),
            parents: vec![main_head.clone()],
            message: title.into(),
            author: "dev-eli".into(),
            date: opened,
        });
        let (head_sha, branch, merged) = if merge {
            let sha = Sha(fake_sha(&format!("day-later merge {number}")));
            ds.commits.push(FakeCommit {
                sha: sha.clone(),
                parents: vec![main_head.clone()],
                message: format!("{title} (#{number})"),
                author: "dev-eli".into(),
                date: created,
            });
            ds.branches.insert("main".into(), sha.clone());
            (sha, "main".to_string(), Some(created))
        } else {
            ds.branches
                .insert(format!("pull-request/{number}"), pr_sha.clone());
            (pr_sha.clone(), format!("pull-request/{number}"), None)
        };
        ds.pulls.push(FakePull {
            number,
            title: title.into(),
            state: if merge { "closed" } else { "open" }.into(),
            user: "dev-eli".into(),
            base_ref: "main".into(),
            head_ref: slug(title),
            head_sha: pr_sha,
            base_sha: main_head.clone(),
            created_at: opened,
            updated_at: created,
            closed_at: merged,
            merged_at: merged,
            merge_commit_sha: merged.map(|_| head_sha.clone()),
            draft: false,
            locked: false,
            files: vec![file(
                if merge {
                    "cuda_core/docs/source/release/1.1.0-notes.rst"
                } else {
                    "cuda_core/cuda/core/_device.pyx"
                },
                "modified",
            )],
        });
        run_id += 1_000_000 + 7_919 * k as u64;
        let run_number = last_number + 1 + k as u64;
        let id = RunId(run_id);
        let delta = created - template.run.created_at;
        let mut hit = false;
        let mut jobs: Vec<Job> = Vec::new();
        for j in template.jobs_at(template.run.run_attempt) {
            let mut job = j.clone();
            job.id = new_job_id();
            job.run_id = id;
            job.run_attempt = 1;
            job.head_sha = head_sha.clone();
            job.created_at += delta;
            job.started_at = job.started_at.map(|t| t + delta);
            job.completed_at = job.completed_at.map(|t| t + delta);
            job.html_url = Some(format!(
                "https://github.com/{}/actions/runs/{id}/job/{}",
                ds.repo, job.id
            ));
            if !merge && !hit && job.name.contains("win-64") && job.name.contains("3.14t") {
                hit = true;
                let started = job.started_at.unwrap_or(job.created_at);
                let text = restamp_log(
                    &source_log,
                    started - TimeDelta::seconds(38),
                    &source_name,
                    &job.name,
                );
                job.conclusion = Some("failure".into());
                job.completed_at = last_stamp(&text).map(|t| t + TimeDelta::seconds(1));
                new_logs.push((job.id, text));
            }
            jobs.push(job);
        }
        let run = Run {
            id,
            run_number,
            event: "push".into(),
            head_branch: Some(branch),
            head_sha: head_sha.clone(),
            display_title: if merge {
                format!("{title} (#{number})")
            } else {
                title.to_string()
            },
            created_at: created,
            updated_at: created,
            run_started_at: Some(created),
            html_url: format!("https://github.com/{}/actions/runs/{id}", ds.repo),
            pull_requests: Vec::new(),
            ..template.run.clone()
        };
        let attempt = FakeAttempt {
            attempt: 1,
            created_at: created + TimeDelta::seconds(3),
            conclusion: Some(if hit { "failure" } else { "success" }.into()),
            jobs,
        };
        ds.runs.push(FakeRun::new(run, attempt));
        new_runs.push(id);
        if hit {
            new_hits.push(id);
        }
    }
    for (job, text) in new_logs {
        ds.logs.insert(job, FakeLog::Text(text));
    }
    DayLater {
        completed,
        rerun,
        new_runs,
        new_hits,
    }
}
