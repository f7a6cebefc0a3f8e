//! Each attempt's own log, and one repository however it is typed: the real binary against the
//! fake GitHub on 127.0.0.1 (`--api-url`).
//!
//! - With the fake's stale-attempt-log switch on (an earlier attempt's job id answered with the
//!   latest attempt's log, GITHUB.md), every figure of the bundled story's report is the honest
//!   API's: the stale logs are recognized by their timestamps and the attempt archives used.
//! - A log neither endpoint has for its execution is reported unknown, never dropped.
//! - `nvidia/CUDA-python` is `NVIDIA/cuda-python`: the same store, the same report, GitHub's name.

use std::path::{Path, PathBuf};
use std::process::Output;

use flakestat::fake::scenario::{SyntheticSpec, synthetic, synthetic_run_id};
use flakestat::fake::{Dataset, FakeGitHub, FakeLog, Faults, RouteKind};
use flakestat::model::JobId;
use serde_json::Value;

fn flakestat(args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .env("GH_TOKEN", "tok")
        .output()
        .expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn scenario() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake")
}

fn signatures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures")
}

fn story() -> Dataset {
    Dataset::load(&scenario()).expect("the bundled scenario loads")
}

const SINCE: &str = "2026-06-15";
const UNTIL: &str = "2026-08-02";

/// `survey --format json` of `repo` against `api` into `cache`: the report and stderr.
fn survey(api: &str, cache: &Path, repo: &str, extra: &[&str]) -> (Value, String) {
    let sigs = signatures();
    let mut args = vec![
        "survey",
        "--repo",
        repo,
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--api-url",
        api,
        "--cache-dir",
        cache.to_str().unwrap(),
        "--signatures",
        sigs.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = flakestat(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = serde_json::from_slice(&out.stdout).expect("a JSON report");
    (json, stderr(&out))
}

/// `report --format json` of `repo` from `cache` alone.
fn report(cache: &Path, repo: &str) -> Value {
    let sigs = signatures();
    let out = flakestat(&[
        "report",
        "--repo",
        repo,
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--cache-dir",
        cache.to_str().unwrap(),
        "--signatures",
        sigs.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

fn sum(report: &Value, field: &str) -> u64 {
    report["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[field].as_u64().unwrap())
        .sum()
}

#[test]
fn the_stale_attempt_log_bug_changes_no_figure_of_the_story() {
    let honest_gh = FakeGitHub::start_blocking(story(), Faults::default()).unwrap();
    let honest_cache = tempfile::tempdir().unwrap();
    let (honest, honest_err) = survey(
        &honest_gh.api_url(),
        honest_cache.path(),
        "NVIDIA/cuda-python",
        &[],
    );
    // The story has re-runs whose earlier attempts failed: what the bug would wipe out.
    assert!(sum(&honest, "runs_rerun_to_green") > 0, "{honest}");
    assert!(
        !honest_err.contains("served by GitHub for another attempt"),
        "{honest_err}"
    );

    let stale_gh = FakeGitHub::start_blocking(
        story(),
        Faults {
            stale_attempt_logs: true,
            ..Faults::default()
        },
    )
    .unwrap();
    let stale_cache = tempfile::tempdir().unwrap();
    let (stale, stale_err) = survey(
        &stale_gh.api_url(),
        stale_cache.path(),
        "NVIDIA/cuda-python",
        &["-v"],
    );
    // The bug was met (some per-job answer was another attempt's log) and worked around.
    assert!(
        stale_err.contains("served by GitHub for another attempt"),
        "{stale_err}"
    );
    assert!(
        stale_err.contains("is another execution's: asking the attempt's archive"),
        "-v names each such log: {stale_err}"
    );
    assert!(stale_gh.request_count(RouteKind::AttemptLogs) > 0);
    assert!(stale_gh.request_count(RouteKind::ArchiveBlob) > 0);
    // Every figure of every signature, the totals and the unknown logs: the honest API's.
    assert_eq!(stale, honest);
    // The archive came from the log host, without the token.
    assert!(
        stale_gh
            .requests()
            .iter()
            .filter(|r| r.kind == RouteKind::ArchiveBlob)
            .all(|r| !r.authorization && r.status == 200)
    );
}

/// A synthetic repository whose re-run run's first attempt has no log of its own anywhere: the
/// job endpoint answers (stale) with the green attempt's log, the archive lacks the job.
#[test]
fn a_log_no_endpoint_has_for_its_attempt_is_reported_unknown() {
    let spec = SyntheticSpec {
        runs: 20,
        ..SyntheticSpec::default()
    };
    let mut ds = synthetic(&spec);
    // Run 10 (index 9) was re-run to green; its first attempt's failed job is job 0.
    let run = synthetic_run_id(9);
    let job = JobId(run.0 * 10 + 100);
    assert!(ds.jobs().any(|j| j.id == job && j.is_failed()));
    ds.logs.insert(job, FakeLog::Missing);
    let gh = FakeGitHub::start_blocking(
        ds,
        Faults {
            stale_attempt_logs: true,
            ..Faults::default()
        },
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let sigs = signatures();
    let out = flakestat(&[
        "survey",
        "--repo",
        "octo/demo",
        "--since",
        "2026-06-01",
        "--until",
        "2026-06-03",
        "--api-url",
        &gh.api_url(),
        "--cache-dir",
        cache.path().to_str().unwrap(),
        "--signatures",
        sigs.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("1 logs unknown"), "{err}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let unknown = json["logs_unknown"].as_array().unwrap();
    let mismatched: Vec<_> = unknown
        .iter()
        .filter(|g| g["reason"] == "mismatched")
        .collect();
    assert_eq!(mismatched.len(), 1, "{unknown:?}");
    assert_eq!(mismatched[0]["jobs"], 1);
    // Not classified as the green attempt's log: in no group of unclassified failures.
    let groups = json["unclassified"].as_array().unwrap();
    let grouped: u64 = groups.iter().map(|g| g["jobs"].as_u64().unwrap()).sum();
    assert_eq!(grouped, json["jobs_failed"].as_u64().unwrap() - 1, "{json}");
    assert!(
        groups
            .iter()
            .flat_map(|g| g["examples"].as_array().unwrap())
            .all(|e| e["job_id"] != job.0),
        "{json}"
    );
}

#[test]
fn the_second_spelling_of_a_repository_gives_the_same_report() {
    let gh = FakeGitHub::start_blocking(story(), Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    // First surveyed under a spelling GitHub does not use: GitHub's name is stored and printed.
    let (first, _) = survey(&gh.api_url(), cache.path(), "nvidia/CUDA-Python", &[]);
    assert_eq!(first["repo"], "NVIDIA/cuda-python");
    assert!(first["runs_total"].as_u64().unwrap() > 0);
    // The other spelling on the same store: the same repository, the same report.
    let (second, _) = survey(&gh.api_url(), cache.path(), "NVIDIA/cuda-python", &[]);
    assert_eq!(second, first);
    // Another spelling costs what a repeat under GitHub's own name costs: it is the same store.
    gh.clear_requests();
    survey(&gh.api_url(), cache.path(), "NVIDIA/cuda-python", &[]);
    let repeat = gh.request_counts();
    gh.clear_requests();
    let (third, _) = survey(&gh.api_url(), cache.path(), "Nvidia/Cuda-Python", &[]);
    assert_eq!(third, first);
    assert_eq!(gh.request_counts(), repeat);
    assert_eq!(gh.request_count(RouteKind::JobLog), 0);
    // `report` reads the store alone: any spelling finds it, GitHub's name is printed.
    for spelling in [
        "NVIDIA/cuda-python",
        "nvidia/cuda-python",
        "NVIDIA/CUDA-PYTHON",
    ] {
        let r = report(cache.path(), spelling);
        assert_eq!(r["repo"], "NVIDIA/cuda-python", "{spelling}");
        assert_eq!(r["runs_total"], first["runs_total"], "{spelling}");
        assert_eq!(r["signatures"], first["signatures"], "{spelling}");
    }
}
