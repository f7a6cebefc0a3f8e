//! The `suggest` benchmark (`harness = false`): 10,000 unclassified failed jobs, each with its
//! telling lines drawn from 60 failure kinds of a dozen ecosystems with varying numbers, paths,
//! durations, hex and test ids, grouped (`analysis::analyze`: masks and Drain-style mining),
//! drafted (`analysis::suggest`), rendered as TOML and checked the way `flakestat suggest`
//! checks them (parsed, compiled with the bundled set, `signatures check`).
//!
//! ```text
//! cargo bench --bench suggest            # 10,000 jobs
//! cargo bench --bench suggest -- 50000   # another size
//! ```

use std::time::Instant;

use chrono::{TimeZone, Utc};
use flakestat::analysis::suggest::{checked, suggest};
use flakestat::analysis::{self, AnalysisConfig};
use flakestat::model::{
    Classification, Job, JobId, LogLine, Run, RunId, Sha, Snapshot, WorkflowId,
};
use flakestat::signatures::{SignatureSet, load_bundled};

/// Failure kinds: `{n}` a number, `{t}` a test id, `{p}` a path, `{d}` a duration, `{h}` hex.
const KINDS: &[&str] = &[
    "FAILED {t} - AssertionError: expected {n} items, got {n}",
    "FAILED {t} - RuntimeError: child {n} did not report readiness over the pipe after {d}",
    "FAILED {t} - TimeoutError: waited {d} for the server on port {n}",
    "E       ConnectionResetError: [Errno 104] Connection reset by peer",
    "ModuleNotFoundError: No module named 'numpy'",
    "OSError: [Errno 28] No space left on device: '{p}'",
    "--- FAIL: TestServe{n} ({d})",
    "panic: runtime error: index out of range [{n}] with length {n}",
    "FAIL\tgithub.com/example/project/pkg/server{n}\t{d}",
    "thread 'tests::parse_{n}' panicked at src/parse.rs:{n}:{n}:",
    "error[E0425]: cannot find value `x{n}` in this scope",
    "error: could not compile `app` (lib) due to {n} previous errors",
    " FAIL  test/api.test.ts > API > returns {n} for /health",
    "      ✕ renders the form ({n} ms)",
    "Error: Test timed out in {n}ms.",
    "npm ERR! 404 Not Found - GET https://registry.npmjs.org/@example%2fpkg{n} - Not found",
    "error @nuxt/kit@3.0.{n}: The engine \"node\" is incompatible with this module.",
    " ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with \"frozen-lockfile\" because pnpm-lock.yaml is not up to date",
    "> Task :app:compileKotlin{n} FAILED",
    "e: file://{p}/Build.kt:{n}:{n}: Unresolved reference: libs",
    "[ERROR] {p}/App.java:[{n},{n}] cannot find symbol",
    "main.obj : error LNK2019: unresolved external symbol compute{n} referenced in function main",
    "{p}/hash.c:{n}:{n}: error: use of undeclared identifier 'seed{n}'",
    "==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x{h} at pc 0x{h}",
    "Fatal Python error: Segmentation fault",
    "Fatal error: Unexpectedly found nil while unwrapping an Optional value",
    "│ Error: creating S3 Bucket (bucket-{n}): BucketAlreadyExists",
    "sccache: error: Server startup failed: cache storage failed to read: Unexpected (permanent)",
    "curl: (28) Operation timed out after {n} milliseconds with 0 bytes received",
    "fatal: unable to access 'https://github.com/example/repo.git/': Could not resolve host: github.com",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn fill(kind: &str, rng: &mut Rng) -> String {
    let mut out = String::new();
    let mut rest = kind;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let (hole, tail) = rest[i..].split_at(3);
        match hole {
            "{n}" => out.push_str(&rng.below(100_000).to_string()),
            "{t}" => out.push_str(&format!(
                "tests/unit/test_mod{}.py::test_case_{}",
                rng.below(40),
                rng.below(500)
            )),
            "{p}" => out.push_str(&format!(
                "/home/runner/work/app/app/src/mod{}/file{}",
                rng.below(30),
                rng.below(300)
            )),
            "{d}" => out.push_str(&format!("{}.{}s", rng.below(60), rng.below(100))),
            "{h}" => out.push_str(&format!("{:012x}", rng.next())),
            other => out.push_str(other),
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

fn snapshot(jobs: usize) -> Snapshot {
    let mut rng = Rng(42);
    let t0 = Utc.with_ymd_and_hms(2026, 7, 1, 0, 0, 0).unwrap();
    let mut snapshot = Snapshot {
        default_branch: "main".into(),
        ..Snapshot::default()
    };
    let runs = jobs.div_ceil(10);
    for r in 0..runs {
        let at = t0 + chrono::Duration::minutes(r as i64);
        snapshot.runs.push(Run {
            id: RunId(1_000 + r as u64),
            workflow_id: WorkflowId(1),
            workflow_name: "CI".into(),
            workflow_path: ".github/workflows/ci.yml".into(),
            display_title: format!("change {r}"),
            event: "pull_request".into(),
            head_branch: Some(format!("topic-{r}")),
            head_sha: Sha(format!("{:040x}", r)),
            run_number: r as u64,
            run_attempt: 1,
            status: "completed".into(),
            conclusion: Some("failure".into()),
            created_at: at,
            updated_at: at,
            run_started_at: Some(at),
            html_url: format!("https://github.com/o/r/actions/runs/{}", 1_000 + r),
            pull_requests: vec![],
            head_repository: None,
        });
    }
    for j in 0..jobs {
        let run = &snapshot.runs[j / 10];
        let id = JobId(100_000 + j as u64);
        snapshot.jobs.push(Job {
            id,
            run_id: run.id,
            run_attempt: 1,
            name: format!("test (linux-64, 3.1{}, cuda {})", j % 5, 12 + j % 2),
            status: "completed".into(),
            conclusion: Some("failure".into()),
            created_at: run.created_at,
            started_at: None,
            completed_at: None,
            html_url: None,
            head_sha: run.head_sha.clone(),
            labels: Vec::new(),
        });
        let kind = KINDS[rng.below(KINDS.len() as u64) as usize];
        let error_lines = vec![
            LogLine {
                line: 100 + rng.below(5_000),
                text: fill(kind, &mut rng),
            },
            LogLine {
                line: 9_000,
                text: "##[error]Process completed with exit code 1.".into(),
            },
        ];
        snapshot.classifications.insert(
            id,
            Classification {
                matches: vec![],
                error_lines,
                ..Default::default()
            },
        );
        snapshot
            .logs
            .insert(id, flakestat::model::LogStatus::Stored);
    }
    snapshot
}

fn main() {
    let jobs: usize = std::env::args()
        .skip(1)
        .find(|a| a != "--bench")
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let snapshot = snapshot(jobs);
    let bundled = load_bundled();
    let set = SignatureSet::compile(bundled.clone()).expect("compile");
    let start = Instant::now();
    let data = analysis::analyze(&snapshot, &set.info(), &AnalysisConfig::default());
    let grouped = start.elapsed();
    let (drafts, skipped) = suggest(&data.unclassified, &[], 2);
    let (passed, rejected) = checked(drafts, &bundled);
    // Some kinds are failures the bundled set already knows (network, disk full, segfault):
    // their drafts overlap it and are rightly left out.
    let checked = passed.len();
    let total = start.elapsed();
    println!(
        "suggest: {jobs} unclassified jobs ({} error lines) → {} groups → {} drafts ({} skipped, {checked} pass check, {} left out as overlapping the bundled set): grouping {:.3} s, total {:.3} s",
        jobs * 2,
        data.unclassified.len(),
        checked + rejected.len(),
        skipped.len(),
        rejected.len(),
        grouped.as_secs_f64(),
        total.as_secs_f64()
    );
}
