//! `survey --junit-artifacts GLOB` end to end against the fake (issue 22 §4-5): the JUnit XML
//! of a Go, a Jest and a Maven job read from their artifacts (the zip behind a 302 to the blob
//! host, which never sees the token), their ids winning over the ones read from the same jobs'
//! logs; an expired artifact, one gone by the download (410), a zip bomb and one over the size
//! cap each named on one line while the survey goes on; and a second survey downloading nothing.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::{flakestat, ok, signatures};
use flakestat::fake::scenario::ecosystems::{self, REPO, RUNS};
use flakestat::fake::{FakeGitHub, Faults, RouteKind};

const SINCE: &str = "2026-06-01";
const UNTIL: &str = "2026-06-03";

fn survey(api: &str, cache: &Path, extra: &[&str]) -> Output {
    flakestat()
        .env("GITHUB_TOKEN", "secret-token-of-the-test")
        .args(["survey", "--repo", REPO, "--since", SINCE, "--until", UNTIL])
        .args(["--api-url", api, "--max-retries", "1", "--signatures"])
        .arg(signatures())
        .arg("--cache-dir")
        .arg(cache)
        .args(extra)
        .output()
        .unwrap()
}

fn test_ids(cache: &Path) -> Vec<String> {
    let out = ok(flakestat()
        .args(["-q", "report", "--tests", "--repo", REPO, "--since", SINCE])
        .args(["--until", UNTIL, "--format", "json", "--signatures"])
        .arg(signatures())
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ids: Vec<String> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn junit_artifacts_are_read_refused_or_named_and_cached() {
    let gh = FakeGitHub::start_blocking(ecosystems::ecosystems(), Faults::default()).unwrap();
    let cache = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let args = [
        "--junit-artifacts",
        "junit-*",
        "--max-artifact-size",
        "2MiB",
    ];
    let out = survey(&gh.api_url(), cache.path(), &args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.code().is_some_and(|c| c != 2 && c < 64),
        "{stderr}"
    );
    let (run1, run2) = (RUNS[0], RUNS[1]);
    // Run 2's four artifacts: each named on one line, with what became of it.
    for line in [
        format!("artifact \"junit-go-linux\" of run {run2} is expired: its tests are unknown"),
        format!("artifact \"junit-jest-node-20\" of run {run2} is expired: its tests are unknown"),
        format!(
            "artifact \"junit-maven-jdk-21\" of run {run2} refused: entry \"TEST-bomb.xml\" inflates"
        ),
        format!(
            "artifact \"junit-huge\" of run {run2} refused: {} bytes, over the 2097152-byte cap",
            gh_size(&gh, "junit-huge")
        ),
    ] {
        assert_eq!(
            stderr.lines().filter(|l| l.contains(&line)).count(),
            1,
            "{line:?} once in:\n{stderr}"
        );
    }
    assert!(
        !stderr.contains(&format!("of run {run1} refused")),
        "{stderr}"
    );
    assert!(
        !stderr.contains("coverage-linux"),
        "the glob does not take it: {stderr}"
    );

    // What went over the wire: both runs listed; run 1's three reports and the bomb fetched
    // from the blob host without the token; the expired one and the too-large one never asked.
    assert_eq!(gh.request_count(RouteKind::ListArtifacts), 2);
    assert_eq!(
        gh.request_count(RouteKind::ArtifactZip),
        5,
        "3 reports, the bomb, the 410"
    );
    let blobs: Vec<_> = gh
        .requests()
        .into_iter()
        .filter(|r| r.kind == RouteKind::ArtifactBlob)
        .collect();
    assert_eq!(blobs.len(), 4);
    assert!(
        blobs.iter().all(|r| !r.authorization && r.status == 200),
        "{blobs:?}"
    );
    let zips: Vec<_> = gh
        .requests()
        .into_iter()
        .filter(|r| r.kind == RouteKind::ArtifactZip)
        .collect();
    assert!(
        zips.iter().all(|r| r.authorization),
        "the API host gets the token"
    );

    // Run 1's jobs have the reports' ids; run 2's, only what their logs say.
    let ids = test_ids(cache.path());
    for id in [
        "example.com/net.TestFetch",
        "Cart.adds an item",
        "com.example.CartTest.addsItem",
        "TestFetch",
        "Cart › adds an item",
        "CartTest.addsItem",
    ] {
        assert!(ids.iter().any(|i| i == id), "{id} missing from {ids:?}");
    }
    // Passing and skipped cases of the reports are no failures.
    for id in [
        "example.com/net.TestParse",
        "Cart.removes an item",
        "Cart.applies a coupon",
    ] {
        assert!(!ids.iter().any(|i| i == id), "{id} in {ids:?}");
    }

    // A second survey: nothing listed or downloaded again, the same tests.
    gh.clear_requests();
    let again = survey(&gh.api_url(), cache.path(), &args);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), out.status.code(), "{stderr}");
    assert_eq!(gh.request_count(RouteKind::ListArtifacts), 0);
    assert_eq!(gh.request_count(RouteKind::ArtifactZip), 0);
    assert_eq!(gh.request_count(RouteKind::ArtifactBlob), 0);
    assert_eq!(test_ids(cache.path()), ids);
}

/// Without the flag, no artifact is asked for and the tests come from the logs alone.
#[test]
fn without_the_flag_no_artifact_is_asked_for() {
    let gh = FakeGitHub::start_blocking(ecosystems::ecosystems(), Faults::default()).unwrap();
    let cache = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = survey(&gh.api_url(), cache.path(), &[]);
    assert!(out.status.code().is_some_and(|c| c != 2 && c < 64));
    assert_eq!(gh.request_count(RouteKind::ListArtifacts), 0);
    let ids = test_ids(cache.path());
    assert!(ids.iter().any(|i| i == "TestFetch"), "{ids:?}");
    assert!(
        !ids.iter().any(|i| i == "example.com/net.TestFetch"),
        "{ids:?}"
    );
}

/// A pattern that is not a glob: one line naming the flag, exit 3, nothing asked of GitHub.
#[test]
fn a_bad_glob_is_refused_naming_the_flag() {
    let gh = FakeGitHub::start_blocking(ecosystems::ecosystems(), Faults::default()).unwrap();
    let cache = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = survey(
        &gh.api_url(),
        cache.path(),
        &["--junit-artifacts", "junit-["],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("--junit-artifacts"), "{stderr}");
    assert_eq!(gh.request_count(RouteKind::ListArtifacts), 0);
}

/// The size GitHub lists for an artifact of the fake.
fn gh_size(gh: &FakeGitHub, name: &str) -> usize {
    let ds = gh.dataset();
    let a = ds.artifacts.iter().find(|a| a.name == name).unwrap();
    flakestat::fake::artifact_zip_size(a)
}
