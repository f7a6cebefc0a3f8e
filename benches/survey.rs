//! A whole survey against the fake GitHub with per-request latency: requests made against the
//! minimum needed, wall time against that minimum × latency ÷ concurrency, a warm repeat, and
//! peak memory as the number of runs grows. Run with `benches/survey.sh` (see docs/survey.md).
//!
//! Arguments: `[RUNS ...]` (default 500 2000), env `LATENCY_MS` (50), `CONCURRENCY` (4).

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{Dataset, FakeGitHub, Faults, RouteKind};

struct Pass {
    wall: Duration,
    counts: BTreeMap<RouteKind, usize>,
    peak: String,
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn survey(
    gh: &FakeGitHub,
    cache: &std::path::Path,
    spec: &SyntheticSpec,
    concurrency: u64,
) -> Pass {
    gh.clear_requests();
    let until = spec.start + spec.spacing * spec.runs as i32;
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_flakestat"))
        .args(["survey", "-v", "--repo", "octo/demo", "--format", "json"])
        .args(["--since", &spec.start.to_rfc3339()])
        .args(["--until", &until.to_rfc3339()])
        .args(["--api-url", &gh.api_url()])
        .args(["--concurrency", &concurrency.to_string()])
        .arg("--cache-dir")
        .arg(cache)
        .args(["--output", "/dev/null"])
        .env("GH_TOKEN", "bench")
        .env_remove("GITHUB_TOKEN")
        .output()
        .expect("flakestat runs");
    let wall = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "survey failed: {stderr}");
    let peak = stderr
        .split("peak memory ")
        .nth(1)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "n/a".into());
    Pass {
        wall,
        counts: gh.request_counts(),
        peak,
    }
}

/// The fewest API requests any survey needs: the repository, every listing page (plus one probe
/// of the whole window when it holds more than the 1,000 a listing returns), one jobs page per
/// 100 jobs of each run (all attempts), one log request per failed job, one page of PRs.
fn minimum(ds: &Dataset) -> (u64, u64) {
    let runs = ds.runs.len() as u64;
    let list = runs.div_ceil(100).max(1) + u64::from(runs > 1000);
    let jobs: u64 = ds
        .runs
        .iter()
        .map(|r| (r.all_jobs().len() as u64).div_ceil(100).max(1))
        .sum();
    let logs = ds.jobs().filter(|j| j.is_failed()).count() as u64;
    (1 + list + jobs + logs + 1, logs)
}

fn api_requests(counts: &BTreeMap<RouteKind, usize>) -> u64 {
    counts
        .iter()
        .filter(|(k, _)| **k != RouteKind::LogBlob)
        .map(|(_, n)| *n as u64)
        .sum()
}

fn main() {
    let runs: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let runs = if runs.is_empty() {
        vec![500, 2000]
    } else {
        runs
    };
    let latency = env_u64("LATENCY_MS", 50);
    let concurrency = env_u64("CONCURRENCY", 4);
    println!(
        "| runs | pass | API requests | minimum | ratio | list | jobs | logs | 304 | wall | bound | ratio | peak memory |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for n in runs {
        let spec = SyntheticSpec {
            runs: n,
            jobs_per_run: 8,
            spacing: TimeDelta::minutes(5),
            fail_every: 5,
            rerun_every: 10,
            ..SyntheticSpec::default()
        };
        let ds = synthetic(&spec);
        let (min_requests, logs) = minimum(&ds);
        let faults = Faults {
            latency: Duration::from_millis(latency),
            ..Faults::default()
        };
        let gh = FakeGitHub::start_blocking(ds, faults).unwrap();
        let cache = tempfile::tempdir().unwrap();
        // Log downloads cost two round trips (the API's 302, then the log host).
        let bound = Duration::from_millis((min_requests + logs) * latency / concurrency);
        for pass in ["cold", "warm"] {
            let p = survey(&gh, cache.path(), &spec, concurrency);
            let made = api_requests(&p.counts);
            let get = |k| p.counts.get(&k).copied().unwrap_or(0);
            let not_modified = gh.requests().iter().filter(|r| r.status == 304).count();
            println!(
                "| {n} | {pass} | {made} | {min_requests} | {:.3} | {} | {} | {} | {not_modified} | {:.1} s | {:.1} s | {:.2} | {} |",
                made as f64 / min_requests as f64,
                get(RouteKind::ListRuns),
                get(RouteKind::ListJobs),
                get(RouteKind::JobLog),
                p.wall.as_secs_f64(),
                bound.as_secs_f64(),
                p.wall.as_secs_f64() / bound.as_secs_f64(),
                p.peak,
            );
        }
    }
}
