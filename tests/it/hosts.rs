//! `report --hosts` through the real binary, on the fake's fleet (issue 43): the survey stores
//! where each job ran from the jobs listing alone (no request per job), the bad host is on the
//! drain list with its p-value and no good host is, the failure the new image brought names
//! the version, every format renders it, and a store that lost its preambles gains them again
//! from its stored logs with no request.

use std::path::Path;
use std::process::Output;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{flakestat, ok, signatures};
use flakestat::fake::scenario::fleet::{
    self, ARC_POOL, BAD_HOST, GPU_POOL, HOSTED_POOL, IMAGE, NEW_IMAGE_VERSION, OLD_IMAGE_VERSION,
    REPO, SINCE, UNTIL,
};
use flakestat::fake::{FakeGitHub, Faults, RouteKind};

struct Surveyed {
    cache: tempfile::TempDir,
    /// Requests per kind the survey made.
    counts: std::collections::BTreeMap<RouteKind, usize>,
}

/// The fleet surveyed once for every test of this module.
fn surveyed() -> &'static Surveyed {
    static ONCE: OnceLock<Surveyed> = OnceLock::new();
    ONCE.get_or_init(|| {
        let gh = FakeGitHub::start_blocking(fleet::fleet(), Faults::default()).unwrap();
        let cache = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        ok(flakestat()
            .args([
                "-q", "survey", "--repo", REPO, "--since", SINCE, "--until", UNTIL,
            ])
            .args(["--api-url", &gh.api_url(), "--signatures"])
            .arg(signatures())
            .arg("--cache-dir")
            .arg(cache.path())
            .output()
            .unwrap());
        Surveyed {
            cache,
            counts: gh.request_counts(),
        }
    })
}

fn report(cache: &Path, extra: &[&str]) -> Output {
    flakestat()
        .args(["-q", "report", "--hosts", "--repo", REPO, "--since", SINCE])
        .args(["--until", UNTIL, "--signatures"])
        .arg(signatures())
        .arg("--cache-dir")
        .arg(cache)
        .args(extra)
        .env("COLUMNS", "200")
        .output()
        .unwrap()
}

fn json(cache: &Path) -> Value {
    let out = ok(report(cache, &["--format", "json"]));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn stdout(out: Output) -> String {
    String::from_utf8(ok(out).stdout).unwrap()
}

/// The jobs listing carries the runner: one listing request per run (the fleet's runs have
/// fewer than 100 jobs), and no request of any kind names a job except the failed jobs' logs.
#[test]
fn the_survey_costs_no_request_per_job() {
    let s = surveyed();
    // Every run of the fleet: four a day on `main`, and the PR's one.
    let runs = fleet::fleet().runs.len();
    assert_eq!(runs, fleet::DAYS * fleet::RUNS_PER_DAY + 1);
    let listings = s.counts.get(&RouteKind::ListJobs).copied().unwrap_or(0)
        + s.counts.get(&RouteKind::AttemptJobs).copied().unwrap_or(0);
    assert_eq!(listings, runs, "{:?}", s.counts);
    let ds = fleet::fleet();
    let failed = ds
        .runs
        .iter()
        .flat_map(|r| &r.attempts[0].jobs)
        .filter(|j| j.is_failed())
        .count();
    let logs = s.counts.get(&RouteKind::JobLog).copied().unwrap_or(0)
        + s.counts.get(&RouteKind::AttemptLogs).copied().unwrap_or(0);
    assert!(
        logs <= failed,
        "{logs} log requests for {failed} failed jobs"
    );
    let jobs = runs * 11;
    let total: usize = s.counts.values().sum();
    assert!(
        total < jobs,
        "{total} requests for {jobs} jobs: {:?}",
        s.counts
    );
}

#[test]
fn the_bad_host_alone_is_drained_with_its_p_value() {
    let doc = json(surveyed().cache.path());
    assert_eq!(doc["schema"], 1);
    let drain = doc["drain"].as_array().unwrap();
    assert_eq!(drain.len(), 1, "{drain:?}");
    assert_eq!(drain[0]["host"], BAD_HOST);
    assert_eq!(drain[0]["pool"], GPU_POOL);
    let p = drain[0]["p_value"].as_f64().unwrap();
    let adjusted = drain[0]["p_adjusted"].as_f64().unwrap();
    assert!(p < 1e-6, "{p}");
    assert!(adjusted >= p && adjusted < doc["alpha"].as_f64().unwrap());
    assert_eq!(doc["hosts_tested"], 8);
    assert!(drain[0]["rate"].as_f64().unwrap() > 3.0 * drain[0]["pool_rate"].as_f64().unwrap());

    let pools = doc["pools"].as_array().unwrap();
    let pool = |name: &str| pools.iter().find(|p| p["pool"] == name).unwrap();
    let gpu = pool(GPU_POOL);
    assert_eq!(gpu["scope"], "pool");
    assert_eq!(gpu["kind"], "self-hosted");
    let hosts = gpu["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 8);
    for h in hosts {
        assert_eq!(h["scope"], "host");
        assert_eq!(h["drain"], h["host"] == BAD_HOST, "{h}");
        assert!(h["jobs"].as_u64().unwrap() > 0);
    }
    let bad = hosts.iter().find(|h| h["host"] == BAD_HOST).unwrap();
    assert!(
        bad["infrastructure"].as_u64().unwrap() * 2 > bad["failed"].as_u64().unwrap(),
        "the driver errors are infrastructure: {bad}"
    );
    assert_eq!(
        pool(GPU_POOL)["drivers"][0]["value"],
        "550.54.15",
        "nvidia-smi's driver"
    );
    // The scale set is a pool; its pods are no hosts, and no rate is made up for them.
    let arc = pool(ARC_POOL);
    assert_eq!(arc["kind"], "ephemeral");
    assert!(arc["hosts"].as_array().unwrap().is_empty());
    let hosted = pool(HOSTED_POOL);
    assert_eq!(hosted["kind"], "github-hosted");
    assert!(hosted["hosts"].as_array().unwrap().is_empty());
    assert_eq!(doc["jobs_unplaced"], 0);
}

#[test]
fn the_failure_the_new_image_brought_names_its_version() {
    let doc = json(surveyed().cache.path());
    let onsets = doc["image_onsets"].as_array().unwrap();
    let onset = onsets
        .iter()
        .find(|o| o["signature"] == "package-resolution")
        .unwrap_or_else(|| panic!("{onsets:?}"));
    assert_eq!(onset["image"], IMAGE);
    assert_eq!(onset["version"], NEW_IMAGE_VERSION);
    assert_eq!(onset["before"], serde_json::json!([OLD_IMAGE_VERSION]));
    assert!(
        onsets.iter().all(|o| o["signature"] != "network-error"),
        "the old image's background failures began with no version: {onsets:?}"
    );
}

#[test]
fn every_format_renders_the_drain_list() {
    let cache = surveyed().cache.path();
    let ids = stdout(report(cache, &["--format", "ids"]));
    assert_eq!(ids, format!("{BAD_HOST}\n"));

    let table = stdout(report(cache, &["--format", "table"]));
    assert!(table.contains("Where jobs ran in octo/fleet"), "{table}");
    let drain_row = table
        .lines()
        .find(|l| l.contains(BAD_HOST) && l.contains("drain"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(!drain_row.contains("gpu-l4-01"));
    assert!(table.contains(&format!("began with {IMAGE} {NEW_IMAGE_VERSION}")));

    let md = stdout(report(cache, &["--format", "markdown"]));
    assert!(md.starts_with("# Where jobs ran in octo/fleet"), "{md}");
    assert!(md.contains(&format!("| `{BAD_HOST}` |")), "{md}");
    assert!(md.contains(&format!("`{BAD_HOST}` **drain**")), "{md}");
    assert!(md.contains("Bonferroni"));

    let html = stdout(report(cache, &["--format", "html"]));
    assert!(html.contains("<title>Where jobs ran in octo/fleet (flakestat)</title>"));
    assert!(html.contains(BAD_HOST));
}

/// A store whose preambles are gone (one written before flakestat read them) gains them back
/// from its stored logs when read: the same report, and no request (report has no network).
#[test]
fn a_store_without_preambles_rereads_its_logs() {
    let s = surveyed();
    // Read once, so the survey's store holds every preamble.
    let before = json(s.cache.path());
    let copy = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    crate::common::copy_dir(s.cache.path(), copy.path());
    let db = copy.path().join("store-v1").join("flakestat.sqlite3");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let removed = conn.execute("DELETE FROM log_preambles", []).unwrap();
    assert!(removed > 20, "{removed}");
    drop(conn);
    assert_eq!(json(copy.path()), before);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let back: i64 = conn
        .query_row("SELECT count(*) FROM log_preambles", [], |r| r.get(0))
        .unwrap();
    assert_eq!(back as usize, removed);
}

#[test]
fn hosts_covers_one_repository_and_no_signature() {
    let out = flakestat()
        .args(["report", "--hosts", "--repo", "a/b", "--repo", "c/d"])
        .args(["--since", "2026-06-01"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("one repository"));
    let out = flakestat()
        .args(["report", "--hosts", "--tests", "--repo", "a/b"])
        .args(["--since", "2026-06-01"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap refuses --hosts with --tests"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

/// The pool-wide night: every GPU job of one run failed with the same line while the run's
/// other pools passed the same commit. Its signature's verdict is `machine_wide`, naming the
/// run and the pool, and no merge is blamed; the bad host's driver errors, spread over many
/// runs, are not machine-wide.
#[test]
fn the_pool_wide_night_is_machine_wide_and_blames_no_merge() {
    let cache = surveyed().cache.path();
    let out = ok(flakestat()
        .args([
            "-q", "report", "--repo", REPO, "--since", SINCE, "--until", UNTIL,
        ])
        .args(["--format", "json", "--signatures"])
        .arg(signatures())
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sigs = doc["signatures"].as_array().unwrap();
    let sig = |id: &str| {
        sigs.iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("{id} in {sigs:?}"))
    };
    let night = &sig("disk-full")["bisection"];
    assert_eq!(night["verdict"], "machine_wide", "{night}");
    assert_eq!(night["pr"], Value::Null);
    assert!(
        night["reason"]
            .as_str()
            .unwrap()
            .contains("one runner pool")
    );
    assert_ne!(sig("cuda-error")["bisection"]["verdict"], "machine_wide");

    let md = stdout(
        flakestat()
            .args([
                "-q", "report", "--repo", REPO, "--since", SINCE, "--until", UNTIL,
            ])
            .args([
                "--signature",
                "disk-full",
                "--format",
                "markdown",
                "--signatures",
            ])
            .arg(signatures())
            .arg("--cache-dir")
            .arg(cache)
            .output()
            .unwrap(),
    );
    let run = fleet::run_id(fleet::POOL_WIDE_RUN);
    assert!(
        md.contains(&format!(
            "machine-wide: all 8 hits in run {run} on pool {GPU_POOL}"
        )),
        "{md}"
    );
}

fn nightly(since: &str, baseline: &str, format: &str) -> Output {
    let gh = FakeGitHub::start_blocking(fleet::fleet(), Faults::default()).unwrap();
    let cache = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    flakestat()
        .args([
            "-q",
            "nightly",
            "--repo",
            REPO,
            "--since",
            since,
            "--baseline",
            baseline,
        ])
        .args(["--until", "2026-06-15T00:00:00Z", "--fail-on", "bad-host"])
        .args([
            "--format",
            format,
            "--api-url",
            &gh.api_url(),
            "--signatures",
        ])
        .arg(signatures())
        .arg("--cache-dir")
        .arg(cache.path())
        .output()
        .unwrap()
}

/// The bad host turned bad on day 4: a nightly whose baseline ends before names it in the
/// comment and alerts on `--fail-on bad-host`; one whose baseline already had it does not.
#[test]
fn a_host_newly_on_the_drain_list_is_named_and_alerts() {
    let out = nightly("2026-06-05T00:00:00Z", "4d", "json");
    assert_eq!(out.status.code(), Some(10), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let bad = doc["new_bad_hosts"].as_array().unwrap();
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(bad[0]["host"], BAD_HOST);
    assert!(bad[0]["p_value"].as_f64().unwrap() < 1e-3);

    let out = nightly("2026-06-05T00:00:00Z", "4d", "markdown");
    assert_eq!(out.status.code(), Some(10));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("## Hosts newly on the drain list"), "{md}");
    assert!(
        md.contains(&format!("`{BAD_HOST}` of pool `{GPU_POOL}`")),
        "{md}"
    );
    assert!(md.contains("1 host newly on the drain list"), "{md}");

    let out = nightly("2026-06-14T00:00:00Z", "9d", "json");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("new_bad_hosts").is_none(), "{doc}");
}

/// The bad host's driver error is confined to it by the matrix's rule, and works elsewhere:
/// its failed jobs, re-run on other hosts at the same commit, passed.
#[test]
fn the_driver_error_is_confined_to_the_bad_host_and_works_elsewhere() {
    let doc = json(surveyed().cache.path());
    let confined = doc["confined"].as_array().unwrap();
    let host = confined
        .iter()
        .find(|c| c["signature"] == "cuda-error" && c["scope"] == "host")
        .unwrap_or_else(|| panic!("{confined:?}"));
    assert_eq!(host["values"], serde_json::json!([BAD_HOST]));
    assert_eq!(host["never_values"].as_array().unwrap().len(), 7);
    assert!(host["chance"].as_f64().unwrap() < 0.01);
    let hits = host["jobs_hit"].as_u64().unwrap();
    assert!(
        host["works_elsewhere"].as_u64().unwrap() * 2 > hits,
        "most re-runs passed elsewhere: {host}"
    );
    assert!(
        confined
            .iter()
            .filter(|c| c["signature"] == "cuda-error" && c["scope"] == "host")
            .all(|c| c["values"] == serde_json::json!([BAD_HOST])),
        "no good host is singled out: {confined:?}"
    );
}

/// The story's wait-until timeout hits seven pools, but each job name it hits runs on one pool
/// only (the matrix picks the pool): what confines it is the matrix's python=3.14t, and no pool
/// or host is named as where it lives. The drain list's rule is the machine's, not the matrix's.
#[test]
fn a_failure_bound_to_a_matrix_cell_is_not_called_confined_to_its_pools() {
    let out = ok(flakestat()
        .args(["-q", "report", "--hosts", "--replay"])
        .arg(crate::common::story_dir())
        .args(crate::common::STORY_WINDOW)
        .args(["--format", "json", "--cache-dir"])
        .arg(crate::common::surveyed_story())
        .output()
        .unwrap());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pools_hit = doc["pools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["by_signature"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s["signature"] == "wait-until-timeout"))
        })
        .count();
    assert!(pools_hit >= 2, "it hits several pools: {doc}");
    let confined = doc["confined"].as_array().unwrap();
    assert!(
        confined
            .iter()
            .all(|c| c["signature"] != "wait-until-timeout"),
        "{confined:?}"
    );
}
