//! A whole survey against the fake GitHub with per-request latency: requests made against the
//! minimum needed (per kind), wall time against that minimum × latency ÷ concurrency, a warm
//! repeat, and peak memory as the number of runs grows. Run with `benches/survey.sh` (see
//! docs/survey.md, "Benchmark").
//!
//! Arguments: `[SCENARIO ...]`, each `N` (one CI workflow, N runs every 5 minutes) or `busy:N`
//! (a busy repository's month: N runs in 30 days, 30 % of a CI matrix with failures and re-runs,
//! half of them on PRs, a fifth of the PRs from forks whose runs name no PR; 70 % of a PR
//! labeler, all green; surveyed with `benches/survey-signatures`, whose signature the failing
//! runs hit, so the relevance of their PRs is read) or `org:N` (`survey --org` over N
//! repositories of one organisation behind one fake server, `fake::scenario::org::many_repos`:
//! 120 runs each, two in three with failures, surveyed with the bundled signatures; the minimum
//! is the sum of each repository's plus the owner listing's pages). Default: `busy:1400 500
//! 2000`. Env `LATENCY_MS` (50), `CONCURRENCY` (4). Peak memory is `/usr/bin/time -f %M` when
//! it is there, else the survey's own `-v` figure.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{Dataset, FakeGitHub, Faults, RouteKind, SurveyMinimum};

struct Pass {
    wall: Duration,
    counts: BTreeMap<RouteKind, usize>,
    peak: String,
    cost_line: String,
    timeline: String,
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The whole dataset: from its first run to a minute after its last.
fn window(ds: &Dataset) -> (chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>) {
    let since = ds.runs.iter().map(|r| r.run.created_at).min().unwrap();
    let until = ds.runs.iter().map(|r| r.run.created_at).max().unwrap() + TimeDelta::minutes(1);
    (since, until)
}

/// Where the wall time went: before the first request, after the last answer, and within the
/// requests' span the time lost to fewer than `concurrency` requests in flight (each request
/// in flight for `latency` before its recorded answer), by the kinds in flight then ("none":
/// no request at all, the client was working or waiting on itself).
fn timeline(
    requests: &[flakestat::fake::RecordedRequest],
    start: Instant,
    end: Instant,
    latency: Duration,
    concurrency: u64,
) -> String {
    let (Some(first), Some(last)) = (
        requests.iter().map(|r| r.answered).min(),
        requests.iter().map(|r| r.answered).max(),
    ) else {
        return String::new();
    };
    let first = first - latency;
    let mut edges: Vec<Instant> = requests
        .iter()
        .flat_map(|r| [r.answered - latency, r.answered])
        .collect();
    edges.sort();
    edges.dedup();
    let mut lost: BTreeMap<String, f64> = BTreeMap::new();
    for pair in edges.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        let in_flight: Vec<&flakestat::fake::RecordedRequest> = requests
            .iter()
            .filter(|r| r.answered - latency <= from && to <= r.answered)
            .collect();
        let free = concurrency.saturating_sub(in_flight.len() as u64);
        if free == 0 {
            continue;
        }
        let mut kinds: Vec<String> = in_flight.iter().map(|r| format!("{:?}", r.kind)).collect();
        kinds.sort();
        kinds.dedup();
        let key = if kinds.is_empty() {
            "none".to_string()
        } else {
            kinds.join("+")
        };
        *lost.entry(key).or_default() +=
            (to - from).as_secs_f64() * free as f64 / concurrency as f64;
    }
    let mut lost: Vec<(String, f64)> = lost.into_iter().collect();
    lost.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = lost.iter().map(|(_, s)| s).sum();
    let top: Vec<String> = lost
        .iter()
        .take(6)
        .map(|(k, s)| format!("{k} {s:.2} s"))
        .collect();
    format!(
        "timeline: {:.2} s before the first request, {:.2} s after the last answer; {total:.2} s of free request slots in between ({})",
        (first - start).as_secs_f64(),
        (end - last).as_secs_f64(),
        top.join(", ")
    )
}

fn survey(
    gh: &FakeGitHub,
    cache: &std::path::Path,
    ds: &Dataset,
    concurrency: u64,
    signatures: Option<&std::path::Path>,
    latency: Duration,
) -> Pass {
    survey_target(
        gh,
        cache,
        &["--repo", "octo/demo"],
        window(ds),
        concurrency,
        signatures,
        latency,
    )
}

/// `/usr/bin/time -f %M` (peak resident set, KiB) around the binary when it is installed.
fn time_binary() -> Option<&'static str> {
    std::path::Path::new("/usr/bin/time")
        .is_file()
        .then_some("/usr/bin/time")
}

fn survey_target(
    gh: &FakeGitHub,
    cache: &std::path::Path,
    target: &[&str],
    (since, until): (chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>),
    concurrency: u64,
    signatures: Option<&std::path::Path>,
    latency: Duration,
) -> Pass {
    gh.clear_requests();
    let start = Instant::now();
    let mut command = match time_binary() {
        Some(time) => {
            let mut c = Command::new(time);
            c.args(["-f", "peak-rss-kib %M", env!("CARGO_BIN_EXE_flakestat")]);
            c
        }
        None => Command::new(env!("CARGO_BIN_EXE_flakestat")),
    };
    command
        .args(["survey", "-v", "--format", "json"])
        .args(target);
    if let Some(dir) = signatures {
        command.arg("--signatures").arg(dir);
    }
    let out = command
        .args(["--since", &since.to_rfc3339()])
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
    let end = Instant::now();
    let wall = end - start;
    let timeline = timeline(&gh.requests(), start, end, latency, concurrency);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "survey failed: {stderr}");
    let rss = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak-rss-kib "))
        .and_then(|k| k.trim().parse::<f64>().ok())
        .map(|kib| format!("{:.1} MiB", kib / 1024.0));
    let peak = rss.unwrap_or_else(|| {
        stderr
            .split("peak memory ")
            .nth(1)
            .and_then(|s| s.lines().next())
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| "n/a".into())
    });
    let cost_line = stderr
        .lines()
        .filter(|l| l.contains("requests against the minimum") || l.contains("bisection:"))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n    ");
    Pass {
        wall,
        counts: gh.request_counts(),
        peak,
        cost_line,
        timeline,
    }
}

/// The API requests the table has a column for; any other kind is counted under "other" and
/// named on stderr.
const COLUMNS: [RouteKind; 6] = [
    RouteKind::Repo,
    RouteKind::ListRuns,
    RouteKind::ListJobs,
    RouteKind::JobLog,
    RouteKind::ListPulls,
    RouteKind::PullFiles,
];

fn api_requests(counts: &BTreeMap<RouteKind, usize>) -> u64 {
    counts
        .iter()
        .filter(|(k, _)| **k != RouteKind::LogBlob)
        .map(|(_, n)| *n as u64)
        .sum()
}

fn dataset(scenario: &str) -> Option<Dataset> {
    if let Some(n) = scenario.strip_prefix("busy:") {
        // N runs in 30 days: 30 % CI (12-job matrix, every 5th run failing, every 10th re-run
        // to green; half the runs on PRs of 3 pushes, a fifth of the PRs from forks), 70 % a
        // PR labeler on PR events.
        let total: usize = n.parse().ok()?;
        let ci = total * 3 / 10;
        let spec = SyntheticSpec {
            runs: ci,
            jobs_per_run: 12,
            spacing: TimeDelta::seconds(30 * 86_400 / ci.max(1) as i64),
            fail_every: 5,
            rerun_every: 10,
            bot_percent: 70,
            pr_percent: 50,
            pushes_per_pr: 3,
            fork_percent: 20,
            ..SyntheticSpec::default()
        };
        return Some(synthetic(&spec));
    }
    let n: usize = scenario.parse().ok()?;
    Some(synthetic(&SyntheticSpec {
        runs: n,
        jobs_per_run: 8,
        spacing: TimeDelta::minutes(5),
        fail_every: 5,
        rerun_every: 10,
        ..SyntheticSpec::default()
    }))
}

fn ratio(made: u64, min: u64) -> String {
    if min == 0 {
        format!("{made}/0")
    } else {
        format!("{made}/{min} = {:.3}", made as f64 / min as f64)
    }
}

fn main() {
    let mut scenarios: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a.starts_with("busy:") || a.starts_with("org:") || a.parse::<usize>().is_ok())
        .collect();
    if scenarios.is_empty() {
        scenarios = vec!["busy:1400".into(), "500".into(), "2000".into()];
    }
    let latency = env_u64("LATENCY_MS", 50);
    let concurrency = env_u64("CONCURRENCY", 4);
    println!("latency {latency} ms, concurrency {concurrency}");
    println!(
        "| scenario | runs | pass | API requests | minimum | ratio | run list | jobs | logs | PR list | PR files | other | 304 | wall | bound | wall ÷ bound | peak memory |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let signatures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/survey-signatures");
    let marker = regex::Regex::new(r"FLAKE-MARKER run \d+ attempt \d+").unwrap();
    for scenario in scenarios {
        if let Some(n) = scenario.strip_prefix("org:") {
            match n.parse::<usize>() {
                Ok(n) if n > 0 => org(n, latency, concurrency),
                _ => eprintln!("unknown scenario {scenario:?}: org:N with N ≥ 1"),
            }
            continue;
        }
        let Some(ds) = dataset(&scenario) else {
            eprintln!("unknown scenario {scenario:?}: N, busy:N or org:N");
            continue;
        };
        let runs = ds.runs.len();
        // busy: failing runs hit the synthetic signature (their PRs' relevance is read);
        // N: the bundled signatures, which nothing hits.
        let busy = scenario.starts_with("busy:");
        let signatures = busy.then_some(signatures.as_path());
        let (since, until) = window(&ds);
        let min = SurveyMinimum::of(&ds, since, until, &|log| busy && marker.is_match(log));
        if busy {
            eprintln!(
                "  {scenario}: {} PRs ({} from forks), {} runs naming no PR; minimum PR list pages {} merged + {} to map fork runs, PR files {}",
                ds.pulls.len(),
                ds.pulls.iter().filter(|p| p.head_repo.is_some()).count(),
                ds.runs
                    .iter()
                    .filter(|r| r.run.event.as_str().starts_with("pull_request")
                        && r.run.pull_requests.is_empty())
                    .count(),
                min.merged_pulls,
                min.fork_pulls,
                min.files,
            );
        }
        let faults = Faults {
            latency: Duration::from_millis(latency),
            ..Faults::default()
        };
        let gh = FakeGitHub::start_blocking(ds.clone(), faults).unwrap();
        let cache = tempfile::tempdir().unwrap();
        // Log downloads cost two round trips (the API's 302, then the log host).
        let bound = Duration::from_millis((min.total() + min.logs) * latency / concurrency);
        for pass in ["cold", "warm"] {
            let p = survey(
                &gh,
                cache.path(),
                &ds,
                concurrency,
                signatures,
                Duration::from_millis(latency),
            );
            let made = api_requests(&p.counts);
            let get = |k| p.counts.get(&k).copied().unwrap_or(0) as u64;
            let known: u64 = COLUMNS.into_iter().map(get).sum();
            let not_modified = gh.requests().iter().filter(|r| r.status == 304).count();
            let cold = pass == "cold";
            let of = |made: u64, min: u64| {
                if cold {
                    ratio(made, min)
                } else {
                    made.to_string()
                }
            };
            println!(
                "| {scenario} | {runs} | {pass} | {made} | {} | {} | {} | {} | {} | {} | {} | {} | {not_modified} | {:.1} s | {} | {} | {} |",
                if cold {
                    min.total().to_string()
                } else {
                    "—".into()
                },
                if cold {
                    format!("{:.4}", made as f64 / min.total() as f64)
                } else {
                    "—".into()
                },
                of(get(RouteKind::ListRuns), min.list),
                of(get(RouteKind::ListJobs), min.jobs),
                of(get(RouteKind::JobLog), min.logs),
                of(get(RouteKind::ListPulls), min.pulls()),
                of(get(RouteKind::PullFiles), min.files),
                made - known,
                p.wall.as_secs_f64(),
                if cold {
                    format!("{:.1} s", bound.as_secs_f64())
                } else {
                    "—".into()
                },
                if cold {
                    format!("{:.2}", p.wall.as_secs_f64() / bound.as_secs_f64())
                } else {
                    "—".into()
                },
                p.peak,
            );
            let others: Vec<String> = p
                .counts
                .iter()
                .filter(|(k, _)| !COLUMNS.contains(k) && **k != RouteKind::LogBlob)
                .map(|(k, n)| format!("{k:?} {n}"))
                .collect();
            if !others.is_empty() {
                eprintln!("  {scenario} {pass}: other requests: {}", others.join(", "));
            }
            if !p.cost_line.is_empty() {
                eprintln!("  {scenario} {pass}: {}", p.cost_line.trim());
            }
            if !p.timeline.is_empty() {
                eprintln!("  {scenario} {pass}: {}", p.timeline);
            }
        }
    }
    if let Ok(rates) = std::env::var("GREEN_LOGS") {
        green_logs_cost(&rates, concurrency, &signatures);
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average at the end: {}", load.trim());
    }
}

/// `GREEN_LOGS=0,0.1,1`: the cost of `--green-logs RATE` on `busy:1400` (no latency: requests
/// and bytes only), each rate from an empty store: the survey's API requests with the green
/// logs' requests and bytes (the CLI's `green logs:` line), and the green job executions. The
/// survey lists the jobs of runs whose workflow had something failed or re-run only; the green
/// step lists those of the sampled runs of the other workflows (one jobs request each: in
/// the API requests, and counted in the last column).
fn green_logs_cost(rates: &str, concurrency: u64, signatures: &std::path::Path) {
    let ds = dataset("busy:1400").expect("a scenario");
    let (since, until) = window(&ds);
    let green = ds
        .runs
        .iter()
        .filter(|r| r.run.created_at >= since && r.run.created_at < until)
        .flat_map(|r| r.attempts.iter().flat_map(|a| a.jobs.iter()))
        .filter(|j| {
            j.conclusion
                .as_ref()
                .is_some_and(|c| c.as_str() == "success")
        })
        .count();
    println!("green job executions in the window: {green}");
    println!(
        "| scenario | --green-logs | API requests | of them green logs | green log bytes | runs of never-failing workflows listed |"
    );
    println!("|---|---|---|---|---|---|");
    // No rate limit: a whole sample at rate 1 is more than the fake's 5,000 a window.
    let faults = Faults {
        rate_limit: Some(1_000_000),
        ..Faults::default()
    };
    let gh = FakeGitHub::start_blocking(ds.clone(), faults).unwrap();
    for rate in rates.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        gh.clear_requests();
        let cache = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_flakestat"))
            .args(["survey", "--format", "json", "--repo", "octo/demo"])
            .arg("--signatures")
            .arg(signatures)
            .args(["--since", &since.to_rfc3339()])
            .args(["--until", &until.to_rfc3339()])
            .args(["--api-url", &gh.api_url()])
            .args(["--concurrency", &concurrency.to_string()])
            .args(["--green-logs", rate])
            .arg("--cache-dir")
            .arg(cache.path())
            .args(["--output", "/dev/null"])
            .env("GH_TOKEN", "bench")
            .env_remove("GITHUB_TOKEN")
            .output()
            .expect("flakestat runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "survey failed: {stderr}");
        let line = stderr
            .lines()
            .find_map(|l| l.strip_prefix("flakestat: green logs: "))
            .unwrap_or("none read");
        let made = api_requests(&gh.request_counts());
        // `…; N requests, BYTES` and, when it listed some, `; the jobs of K sampled runs of
        // workflows that never failed listed (M requests)`.
        let mut parts = line.split("; ");
        let (requests, bytes) = parts
            .nth(1)
            .and_then(|tail| tail.split_once(" requests, "))
            .unwrap_or(("0", "0 B"));
        let quiet = parts
            .next()
            .and_then(|t| t.strip_prefix("the jobs of "))
            .and_then(|t| t.split_once(' '))
            .map_or("0", |(runs, _)| runs);
        println!("| busy:1400 | {rate} | {made} | {requests} | {bytes} | {quiet} |");
    }
}

/// `org:N`: `survey --org octo-org` over N repositories behind one fake server, cold then warm,
/// with the bundled signatures. The minimum is each repository's (as for one repository) plus
/// the pages of the owner's listing; the wall-time bound is that minimum (log requests twice) ×
/// latency ÷ concurrency.
fn org(n: usize, latency: u64, concurrency: u64) {
    use flakestat::fake::scenario::org::{ORG, many_repos};
    use flakestat::signatures::{SignatureSet, resolve_dir};
    let datasets = many_repos(n);
    let runs: usize = datasets.iter().map(|d| d.runs.len()).sum();
    let signatures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures");
    let set = SignatureSet::compile(resolve_dir(Some(&signatures)).load().unwrap()).unwrap();
    let hit = |log: &str| !set.classify(log.as_bytes()).matches.is_empty();
    let times = || {
        datasets
            .iter()
            .flat_map(|d| d.runs.iter().map(|r| r.run.created_at))
    };
    let since = times().min().unwrap();
    let until = times().max().unwrap() + TimeDelta::minutes(1);
    let mins: Vec<SurveyMinimum> = datasets
        .iter()
        .map(|d| SurveyMinimum::of(d, since, until, &hit))
        .collect();
    let sum = |f: &dyn Fn(&SurveyMinimum) -> u64| mins.iter().map(f).sum::<u64>();
    let listing = (n as u64).div_ceil(100);
    let min_total = sum(&SurveyMinimum::total) + listing;
    let faults = Faults {
        latency: Duration::from_millis(latency),
        ..Faults::default()
    };
    let gh = FakeGitHub::start_many_blocking(datasets, faults).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let bound = Duration::from_millis((min_total + sum(&|m| m.logs)) * latency / concurrency);
    let scenario = format!("org:{n}");
    for pass in ["cold", "warm"] {
        let target = ["--org", ORG];
        let p = survey_target(
            &gh,
            cache.path(),
            &target,
            (since, until),
            concurrency,
            Some(&signatures),
            Duration::from_millis(latency),
        );
        let made = api_requests(&p.counts);
        let get = |k| p.counts.get(&k).copied().unwrap_or(0) as u64;
        let known: u64 = COLUMNS.into_iter().map(get).sum::<u64>() + get(RouteKind::OwnerRepos);
        let not_modified = gh.requests().iter().filter(|r| r.status == 304).count();
        let cold = pass == "cold";
        let of = |made: u64, min: u64| {
            if cold {
                ratio(made, min)
            } else {
                made.to_string()
            }
        };
        let cold_only = |text: String| if cold { text } else { "—".to_string() };
        println!(
            "| {scenario} | {runs} | {pass} | {made} | {} | {} | {} | {} | {} | {} | {} | {} | {not_modified} | {:.1} s | {} | {} | {} |",
            cold_only(min_total.to_string()),
            cold_only(format!("{:.4}", made as f64 / min_total as f64)),
            of(get(RouteKind::ListRuns), sum(&|m| m.list)),
            of(get(RouteKind::ListJobs), sum(&|m| m.jobs)),
            of(get(RouteKind::JobLog), sum(&|m| m.logs)),
            of(get(RouteKind::ListPulls), sum(&SurveyMinimum::pulls)),
            of(get(RouteKind::PullFiles), sum(&|m| m.files)),
            made - known,
            p.wall.as_secs_f64(),
            cold_only(format!("{:.1} s", bound.as_secs_f64())),
            cold_only(format!("{:.2}", p.wall.as_secs_f64() / bound.as_secs_f64())),
            p.peak,
        );
        eprintln!(
            "  {scenario} {pass}: owner listing {} requests, repository {}",
            get(RouteKind::OwnerRepos),
            get(RouteKind::Repo)
        );
        if !p.cost_line.is_empty() {
            eprintln!("  {scenario} {pass}: {}", p.cost_line.trim());
        }
        if !p.timeline.is_empty() {
            eprintln!("  {scenario} {pass}: {}", p.timeline);
        }
    }
}
