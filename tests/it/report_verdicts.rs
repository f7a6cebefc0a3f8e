//! `report --tests`' `broken` and `new` verdicts (issue 22 §2) end to end: a small commit graph
//! served by the fake GitHub (the bisection scenarios' [`Builder`]), surveyed by the real binary,
//! then `report --tests` in JSON and markdown. Which runs fail which test is decided by the
//! construction, so the verdicts and the PR or merge they name are known in advance:
//!
//! - `tests/ui/test_button.py::test_click` fails in every run of PR #901 and nowhere else:
//!   `broken` on PR #901;
//! - `tests/io/test_read.py::test_read_all` fails in every run from the merge of #61 on:
//!   `broken` since that merge;
//! - `tests/net/test_fetch.py::test_timeout` fails in one run in four from the merge of #62 on,
//!   on several PRs' runs, never passing on the same code: `new` since that merge.

use std::path::Path;

use flakestat::fake::{FakeGitHub, Faults};
use serde_json::Value;

use crate::bisect_scenario::{Builder, Fails, Kind, flakestat, pull, signatures_dir, t};

const ON_PR: &str = "tests/ui/test_button.py::test_click";
const SINCE_MERGE: &str = "tests/io/test_read.py::test_read_all";
const NEW: &str = "tests/net/test_fetch.py::test_timeout";

/// The PRs whose runs fill the hours: open, touching docs only.
const BACKGROUND_PRS: [u64; 3] = [900, 902, 903];

/// The dataset: hourly runs over 260 hours cycling through [`BACKGROUND_PRS`], merges #60
/// (hour 20, harmless), #61 (hour 120) and #62 (hour 150), each with a push run, and four runs
/// of PR #901 (hours 200 to 230).
fn dataset() -> Builder {
    let mut b = Builder::new();
    for n in [902, 903] {
        b.ds.pulls.push(pull(n, "Docs: more", None, &["docs/b.md"]));
    }
    b.ds.pulls
        .push(pull(901, "UI: new button", None, &["src/ui/button.py"]));
    let fails_at = |h: i64| -> Vec<&'static str> {
        let mut tests = Vec::new();
        if h >= 120 {
            tests.push(SINCE_MERGE);
        }
        if h >= 151 && (h - 151) % 4 == 0 {
            tests.push(NEW);
        }
        tests
    };
    let hours = |b: &mut Builder, from: i64, to: i64| {
        for h in from..to {
            let tests = fails_at(h);
            let kind = Kind::Pr(BACKGROUND_PRS[h as usize % 3]);
            b.run_failing(h, kind, fails(&tests));
        }
    };
    b.merge(60, "Docs: typo", 20, &["README.md"], false);
    hours(&mut b, 0, 120);
    b.merge(61, "IO: stream reads", 120, &["src/io/reader.py"], false);
    b.push_run_failing(5, Fails::Tests(&[SINCE_MERGE]));
    hours(&mut b, 120, 150);
    b.merge(
        62,
        "Net: shorter timeouts",
        150,
        &["src/net/client.py"],
        false,
    );
    b.push_run_failing(5, Fails::Tests(&[SINCE_MERGE]));
    hours(&mut b, 150, 260);
    for h in [200, 210, 220, 230] {
        let mut tests = fails_at(h);
        tests.push(ON_PR);
        b.run_failing(h, Kind::Pr(901), fails(&tests));
    }
    b
}

fn fails<'a>(tests: &'a [&'a str]) -> Fails<'a> {
    if tests.is_empty() {
        Fails::Nothing
    } else {
        Fails::Tests(tests)
    }
}

/// The window surveyed and reported on (hours 48 to 288), the store in `cache`.
fn window(cache: &Path, sigs: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["--repo", "octo/flaky", "--since"].map(String::from).into();
    args.extend([
        t(48).to_rfc3339(),
        "--until".into(),
        t(24 * 12).to_rfc3339(),
    ]);
    args.extend(["--cache-dir".into(), cache.display().to_string()]);
    args.extend(["--signatures".into(), sigs.display().to_string()]);
    args
}

fn run_ok(args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = flakestat(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `survey` of the fake into `cache`, with the real binary.
fn survey(gh: &FakeGitHub, cache: &Path, sigs: &Path) {
    let mut args: Vec<String> = [
        "-q",
        "survey",
        "--api-url",
        &gh.api_url(),
        "--max-retries",
        "1",
    ]
    .map(String::from)
    .into();
    args.extend(window(cache, sigs));
    run_ok(&args);
}

/// `report --tests --format FORMAT` from the store in `cache`.
fn report_tests(cache: &Path, sigs: &Path, format: &str) -> String {
    let mut args: Vec<String> = ["-q", "report", "--tests", "--format", format]
        .map(String::from)
        .into();
    args.extend(window(cache, sigs));
    run_ok(&args)
}

fn test_of<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("{id} missing: {doc:#}"))
}

#[test]
fn broken_on_a_pr_broken_since_a_merge_and_new_since_a_merge_name_the_pr_or_merge() {
    let gh = FakeGitHub::start_blocking(dataset().ds, Faults::default()).unwrap();
    let (cache, sigs) = (tempfile::tempdir().unwrap(), signatures_dir());
    survey(&gh, cache.path(), sigs.path());
    let doc: Value = serde_json::from_str(&report_tests(cache.path(), sigs.path(), "json"))
        .expect("the JSON reads");

    // Fails in each of PR #901's four runs, and nowhere else.
    let t = test_of(&doc, ON_PR);
    assert_eq!(t["verdict"], "broken", "{t:#}");
    assert_eq!(t["jobs_failed"], 4, "{t:#}");
    assert_eq!(t["culprit"]["kind"], "pull_request", "{t:#}");
    assert_eq!(t["culprit"]["pr"], 901, "{t:#}");
    // The survey lists no open PR (none of its figures needs one's title): unknown, not "".
    assert_eq!(t["culprit"]["title"], Value::Null, "{t:#}");

    // Fails in every run from #61's merge on: its push run first.
    let t = test_of(&doc, SINCE_MERGE);
    assert_eq!(t["verdict"], "broken", "{t:#}");
    assert_eq!(t["culprit"]["kind"], "merge", "{t:#}");
    assert_eq!(t["culprit"]["pr"], 61, "{t:#}");
    assert_eq!(t["culprit"]["title"], "IO: stream reads", "{t:#}");
    assert_eq!(
        t["culprit"]["merged_at"],
        t_z(120).as_str(),
        "the merge's time, with Z: {t:#}"
    );
    assert_eq!(t["rerun_to_green"], 0);
    assert_eq!(t["same_commit_green"], 0);
    // 2 push runs, 30 + 110 hourly runs and #901's 4, all after the merge.
    assert_eq!(t["jobs_failed"], 146, "{t:#}");

    // One run in four from #62's merge on, over three PRs' runs: new, not broken.
    let t = test_of(&doc, NEW);
    assert_eq!(t["verdict"], "new", "{t:#}");
    assert_eq!(t["culprit"]["kind"], "merge", "{t:#}");
    assert_eq!(t["culprit"]["pr"], 62, "{t:#}");
    assert_eq!(t["culprit"]["title"], "Net: shorter timeouts", "{t:#}");
    assert_eq!(t["jobs_failed"], (151..260).step_by(4).count(), "{t:#}");
    assert!(
        t["first_failure"]["created_at"].as_str().unwrap() >= t_z(151).as_str(),
        "{t:#}"
    );
    // Nothing here is flaky: the quarantine list is empty.
    assert_eq!(doc["tests"].as_array().unwrap().len(), 3, "{doc:#}");

    // The same verdicts in words, in markdown.
    let md = report_tests(cache.path(), sigs.path(), "markdown");
    let row = |name: &str| {
        md.lines()
            .find(|l| l.starts_with('|') && l.contains(name))
            .unwrap_or_else(|| panic!("no row for {name}: {md}"))
            .to_string()
    };
    let on_pr = row("test_click");
    assert!(on_pr.contains(r"**broken** on PR #901 |"), "{on_pr}");
    let since = row("test_read_all");
    assert!(
        since.contains(r#"**broken** since merge of PR #61 "IO: stream reads""#),
        "{since}"
    );
    let new = row("test_timeout");
    assert!(
        new.contains(r#"**new** since merge of PR #62 "Net: shorter timeouts""#),
        "{new}"
    );
    assert!(
        md.contains("3 tests failed in the window") && md.contains("0 of them flaky"),
        "{md}"
    );
}

/// Hour `h` of the dataset as the JSON writes it.
fn t_z(h: i64) -> String {
    t(h).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
