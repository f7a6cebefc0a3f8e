//! `flakestat nightly` as cron runs it: the real binary against the fake GitHub on 127.0.0.1
//! serving the bundled cuda-python scenario (`--api-url`, or `--replay`). Two nights in a row (the
//! second fetches only what changed and edits the one comment), a new and a rising signature,
//! `--fail-on`, two nightlies at once on one store (no lock), refusals of the comment (locked
//! issue, no permission, no such issue), a spent rate limit posting nothing, `--dry-run`.

use std::path::Path;
use std::process::{Command, Output};

use crate::common;
use flakestat::fake::scenario::cuda_python::a_day_later;
use flakestat::fake::{Dataset, FakeGitHub, Faults, RouteKind};
use flakestat::report::nightly::wire::Nightly;

const TOKEN: &str = "nightly-token";
const REPO: &str = "NVIDIA/cuda-python";
/// The scenario's open "Nightly CI flake report" issue.
const ISSUE: u64 = 2396;
/// The scenario's locked issue.
const LOCKED_ISSUE: u64 = 2289;
const MARKER: &str = "<!-- flakestat:nightly NVIDIA/cuda-python -->";

fn scenario() -> Dataset {
    Dataset::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake"))
        .expect("the bundled scenario loads")
}

fn flakestat(args: &[&str]) -> Command {
    let mut cmd = crate::common::flakestat();
    cmd.args(args)
        .env("GITHUB_TOKEN", TOKEN)
        .env("NO_COLOR", "1");
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn nightly_json(out: &Output) -> Nightly {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is the nightly JSON ({e}); stderr: {}", stderr(out)))
}

/// `nightly` against `gh` with the store in `cache`, "now" at `now`, plus `extra`.
fn nightly_args(gh: &FakeGitHub, cache: &Path, now: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "nightly",
        "--repo",
        REPO,
        "--api-url",
        &gh.api_url(),
        "--cache-dir",
        cache.to_str().unwrap(),
        "--now",
        now,
        "--max-retries",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn nightly(gh: &FakeGitHub, cache: &Path, now: &str, extra: &[&str]) -> Output {
    let args = nightly_args(gh, cache, now, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&mut flakestat(&args))
}

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[test]
fn the_second_night_fetches_only_what_changed_and_edits_the_one_comment() {
    let ds = scenario();
    let first_now = rfc3339(ds.now);
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let target = format!("{REPO}#{ISSUE}");

    let out = nightly(
        &gh,
        cache.path(),
        &first_now,
        &["--post-comment", &target, "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = nightly_json(&out);
    assert_eq!((first.schema, first.kind.as_str()), (1, "nightly"));
    let comments = gh.comments(ISSUE);
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.starts_with(MARKER), "{}", comments[0].body);
    let first_body = comments[0].body.clone();
    let first_jobs = gh.request_count(RouteKind::ListJobs);
    // The figures docs/nightly.md quotes (`-- --nocapture` shows them).
    eprintln!("night 1: {:?}", gh.request_counts());
    assert!(
        first_jobs > 50,
        "the first night fetches every run's jobs: {first_jobs}"
    );

    // A day later: a run completed (hit), an old run re-run to green, two new runs (one hit).
    gh.clear_requests();
    let change = gh.mutate(a_day_later);
    let second_now = rfc3339(gh.dataset().now);
    let out = nightly(
        &gh,
        cache.path(),
        &second_now,
        &["--post-comment", &target, "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let second = nightly_json(&out);
    eprintln!("night 2: {:?}", gh.request_counts());
    eprintln!("night 2 closing line: {}", stderr(&out).trim());

    // Only the runs that changed have their jobs fetched again, only the new failures' logs.
    let jobs: Vec<String> = gh
        .requests()
        .iter()
        .filter(|r| r.kind == RouteKind::ListJobs)
        .map(|r| r.path.clone())
        .collect();
    let mut changed: Vec<String> = change
        .new_runs
        .iter()
        .chain([&change.completed, &change.rerun])
        .map(|id| id.to_string())
        .collect();
    changed.sort();
    let mut fetched: Vec<String> = jobs
        .iter()
        .map(|p| {
            p.split("/runs/")
                .nth(1)
                .unwrap()
                .split('/')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    fetched.sort();
    fetched.dedup();
    assert_eq!(fetched, changed, "jobs requests: {jobs:?}");
    assert_eq!(
        gh.request_count(RouteKind::JobLog),
        2,
        "the completed run's hit and the new run's hit"
    );
    assert_eq!(gh.request_count(RouteKind::CreateComment), 0);
    assert_eq!(gh.request_count(RouteKind::UpdateComment), 1);

    // The period is the new day: its two runs, one hit by the flake.
    assert_eq!(second.period.runs_total, 2);
    let flake = second
        .seen
        .iter()
        .find(|s| s.id == "wait-until-timeout")
        .expect("the flake is seen in the period");
    assert_eq!((flake.period.hits, flake.period.runs), (1, 2));

    let comments = gh.comments(ISSUE);
    assert_eq!(comments.len(), 1, "updated in place, never duplicated");
    assert!(comments[0].body.starts_with(MARKER));
    assert_ne!(comments[0].body, first_body);
    assert!(comments[0].updated_at > comments[0].created_at);
    let new_run = change.new_hits[0].to_string();
    assert!(
        comments[0]
            .body
            .contains(&format!("/actions/runs/{new_run}/job/")),
        "the comment links the new hit's job:\n{}",
        comments[0].body
    );
}

#[test]
fn a_new_signature_is_reported_with_its_jobs_and_fail_on_new_alerts() {
    let replay = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake");
    let replay = replay.to_str().unwrap();
    // Half a day after the first hit of the flake (2026-07-15 21:18): never seen in the 14 days
    // before.
    let base = [
        "nightly",
        "--replay",
        replay,
        "--now",
        "2026-07-16T12:00:00Z",
        "--format",
        "json",
        "-q",
    ];
    let out = run(flakestat(&base).args(["--fail-on", "new"]));
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let report = nightly_json(&out);
    assert_eq!(report.counts.new, 1);
    let change = &report.changes[0];
    assert_eq!(
        (change.id.as_str(), change.kind.as_str()),
        ("wait-until-timeout", "new")
    );
    assert_eq!(change.baseline.hits, 0);
    assert!(change.baseline.runs > 50, "{:?}", change.baseline);
    assert_eq!(change.period.hits, 1);
    // Every hit job is linked (the hit run was re-run, and hit again).
    assert_eq!(change.jobs.len() as u64, change.jobs_total);
    let runs: Vec<u64> = change
        .jobs
        .iter()
        .map(|j| j.run_id)
        .collect::<std::collections::BTreeSet<u64>>()
        .into_iter()
        .collect();
    assert_eq!(runs.len(), 1);
    assert!(
        change.jobs.iter().all(|j| j.url.contains("/job/")),
        "{:?}",
        change.jobs
    );

    // The flake's tests failed in that run (one in each of its two failed attempts) and passed
    // on the same commit in another: newly flaky (none of them was flaky in the baseline), and
    // --fail-on new-flaky-test alerts.
    let flaky: Vec<&str> = report
        .new_flaky_tests
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(report.counts.new_flaky_tests, flaky.len() as u64);
    assert_eq!(
        flaky,
        [
            "tests/graph/test_graph_definition_lifetime.py::test_memcpy_buffer_allocations_released_after_graph_destroyed",
            "tests/graph/test_graph_definition_lifetime.py::test_pending_call_queue_saturation_preserves_cleanup",
        ],
        "{flaky:?}"
    );
    for t in &report.new_flaky_tests {
        assert!(t.id.starts_with("tests/graph/"), "{t:?}");
        assert!(
            t.rerun_to_green + t.same_commit_green + t.flaky_in_job > 0,
            "{t:?}"
        );
        assert_ne!(t.baseline_verdict.as_deref(), Some("flaky"), "{t:?}");
        assert_eq!(t.first_failure.as_ref().unwrap().run_id, runs[0]);
        // Since when, as `report --tests` says it (the period alone holds too few runs to
        // place it: said so, never a merge guessed).
        assert!(t.onset.is_some(), "{t:?}");
    }
    let out = run(flakestat(&base).args(["--fail-on", "new-flaky-test"]));
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));

    // Nothing rising that day: --fail-on rising does not alert, and exits 0.
    let out = run(flakestat(&base).args(["--fail-on", "rising"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // --fail-on any does.
    let out = run(flakestat(&base).args(["--fail-on", "any"]));
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
}

#[test]
fn a_rising_signature_says_its_counts_and_chance() {
    let replay = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake");
    // Two days after the first hit: 2 of 7 runs against 1 of 81 in the 14 days before (91
    // runs, less the 10 of three PRs that touch the flake's paths: #2362, #2371 and the fork
    // PR #2370).
    let out = run(&mut flakestat(&[
        "nightly",
        "--replay",
        replay.to_str().unwrap(),
        "--now",
        "2026-07-19T00:00:00Z",
        "--since",
        "2d",
        "--format",
        "json",
        "--fail-on",
        "rising",
        "-q",
    ]));
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let report = nightly_json(&out);
    let rising: Vec<_> = report
        .changes
        .iter()
        .filter(|c| c.kind == "rising")
        .collect();
    assert_eq!(rising.len(), 1, "{:?}", report.changes);
    let r = rising[0];
    assert_eq!(r.id, "wait-until-timeout");
    assert_eq!((r.period.hits, r.period.runs), (2, 7));
    assert_eq!((r.baseline.hits, r.baseline.runs), (1, 81));
    assert!(r.probability < report.rules.rising_p, "{}", r.probability);
    let runs: std::collections::BTreeSet<u64> = r.jobs.iter().map(|j| j.run_id).collect();
    assert_eq!(runs.len(), 2, "{:?}", r.jobs);
    // The two tests the first hit failed were flaky in the baseline already: not newly flaky.
    // `test_kernel_args_buffer_lifetime` first failed in these two days (and passed on a re-run
    // of the same run): it is. In the baseline it failed only in the related PR #2362's runs:
    // no counted failure there, and said so (issue 39: not "failed (unknown)").
    let flaky: Vec<&str> = report
        .new_flaky_tests
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(
        flaky,
        ["tests/graph/test_graph_definition_lifetime.py::test_kernel_args_buffer_lifetime"]
    );
    assert_eq!(report.counts.new_flaky_tests, 1);
    let t = &report.new_flaky_tests[0];
    assert_eq!(t.baseline_verdict.as_deref(), Some("left_out"), "{t:?}");
    assert!(t.rerun_to_green > 0, "{t:?}");

    // The markdown says the same, with the rule.
    let out = run(&mut flakestat(&[
        "nightly",
        "--replay",
        replay.to_str().unwrap(),
        "--now",
        "2026-07-19T00:00:00Z",
        "--since",
        "2d",
        "--format",
        "markdown",
        "-q",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("## Rising signatures"), "{md}");
    assert!(
        md.contains("2 of 7 runs (29%)") && md.contains("1 of 81 runs (1%)"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.contains("test_kernel_args_buffer_lifetime"))
        .unwrap();
    assert!(row.contains("no counted failure (all left out)"), "{row}");
    assert!(!row.contains("failed (unknown)"), "{row}");
}

/// The same night twice on a fresh store, with no new CI data: byte for byte the same report.
/// The first used to count a merged PR's runs as clean because its changed files were fetched
/// only by the second (1 of 84, then 1 of 81): what the analysis reads is fetched before it.
#[test]
fn the_same_night_twice_on_a_fresh_store_gives_the_same_report() {
    let ds = scenario();
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let now = "2026-07-19T00:00:00Z";
    for format in ["json", "markdown"] {
        let extra = ["--since", "2d", "--format", format, "-q"];
        let first = nightly(&gh, cache.path(), now, &extra);
        assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
        let second = nightly(&gh, cache.path(), now, &extra);
        assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
        assert!(
            first.stdout == second.stdout,
            "{format}: the second night differs:\n--- first\n{}\n--- second\n{}",
            String::from_utf8_lossy(&first.stdout),
            String::from_utf8_lossy(&second.stdout)
        );
        if format == "json" {
            let report = nightly_json(&first);
            let flake = report
                .changes
                .iter()
                .find(|c| c.id == "wait-until-timeout")
                .expect("the flake is rising");
            // The merged PR #2371 (the flake's cause) touches its paths: its 3 runs are left
            // out on the first night already.
            assert_eq!((flake.baseline.hits, flake.baseline.runs), (1, 81));
        }
    }
    // A fresh store for each: the first night of one equals the first night of the other.
    let other = tempfile::tempdir().unwrap();
    let extra = ["--since", "2d", "--format", "json", "-q"];
    let a = nightly(&gh, other.path(), now, &extra);
    let b = nightly(&gh, cache.path(), now, &extra);
    assert!(
        a.stdout == b.stdout,
        "a fresh store and a used one disagree"
    );
}

/// Two nightly jobs of one repository at once, one an old cron line with `--wait 1s`: the store
/// has no lock, so neither waits for the other nor stops with exit 8 (before, the second was
/// refused once its second passed), and both report what a nightly alone reports.
#[test]
fn two_nightlies_at_once_share_the_store_and_an_old_wait_is_accepted() {
    let ds = scenario();
    let now = rfc3339(ds.now);
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let (shared, alone) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let children: Vec<_> = [
        &["--format", "json"][..],
        &["--format", "json", "--wait", "1s"],
    ]
    .into_iter()
    .map(|extra| {
        let args = nightly_args(&gh, shared.path(), &now, extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let child = flakestat(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::spawn(move || child.wait_with_output().unwrap())
    })
    .collect();
    let single = nightly(&gh, alone.path(), &now, &["--format", "json"]);
    assert_eq!(single.status.code(), Some(0), "{}", stderr(&single));
    for child in children {
        let out = child.join().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            out.stdout == single.stdout,
            "a nightly beside another reports what one alone does"
        );
    }
}

/// Runs `nightly --post-comment target` against the scenario; returns the output and the fake.
fn post_to(target: &str, token: &str, faults: Faults, extra: &[&str]) -> (Output, FakeGitHub) {
    let mut ds = scenario();
    ds.auth.tokens = vec![TOKEN.into()];
    ds.auth.tokens_without_access = vec!["read-only".into()];
    let now = rfc3339(ds.now);
    let gh = FakeGitHub::start_blocking(ds, faults).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut all = vec!["--post-comment", target, "--format", "json"];
    all.extend(extra);
    let args = nightly_args(&gh, cache.path(), &now, &all);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(flakestat(&args).env("GITHUB_TOKEN", token));
    (out, gh)
}

fn writes(gh: &FakeGitHub) -> usize {
    gh.request_count(RouteKind::CreateComment) + gh.request_count(RouteKind::UpdateComment)
}

#[test]
fn a_locked_issue_is_refused_clearly_and_nothing_is_posted() {
    let (out, gh) = post_to(
        &format!("{REPO}#{LOCKED_ISSUE}"),
        TOKEN,
        Faults::default(),
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("is locked") && err.contains("nothing was posted"),
        "{err}"
    );
    assert!(gh.comments(LOCKED_ISSUE).is_empty());
    // The report was still written before the refusal.
    assert_eq!(nightly_json(&out).kind, "nightly");
}

#[test]
fn a_token_without_write_access_is_refused_clearly() {
    let (out, gh) = post_to(
        &format!("{REPO}#{ISSUE}"),
        "read-only",
        Faults::default(),
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("issues: write") && err.contains("nothing was posted"),
        "{err}"
    );
    assert!(gh.comments(ISSUE).is_empty());
}

#[test]
fn an_unknown_issue_is_not_found() {
    let (out, gh) = post_to(&format!("{REPO}#99999"), TOKEN, Faults::default(), &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(err.contains("#99999"), "{err}");
    assert_eq!(writes(&gh), 0);
}

#[test]
fn a_spent_rate_limit_posts_nothing_and_says_so() {
    let faults = Faults {
        rate_limit: Some(40),
        ..Faults::default()
    };
    let (out, gh) = post_to(
        &format!("{REPO}#{ISSUE}"),
        TOKEN,
        faults,
        &["--fail-on", "any"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(
        err.contains("rate limit") && err.contains("nothing was posted"),
        "{err}"
    );
    assert_eq!(writes(&gh), 0);
    assert_eq!(gh.request_count(RouteKind::ListComments), 0);
    assert!(gh.comments(ISSUE).is_empty());
    assert!(out.stdout.is_empty(), "no report from a partial survey");
}

#[test]
fn a_dry_run_says_where_and_what_without_posting() {
    let (out, gh) = post_to(
        &format!("{REPO}#{ISSUE}"),
        TOKEN,
        Faults::default(),
        &["--dry-run"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!("would create a comment on {REPO}#{ISSUE}")),
        "{err}"
    );
    let body = String::from_utf8(out.stdout).unwrap();
    assert!(body.starts_with(MARKER), "{body}");
    assert!(
        body.contains("# Nightly CI report for NVIDIA/cuda-python"),
        "{body}"
    );
    assert_eq!(writes(&gh), 0);
    assert!(gh.comments(ISSUE).is_empty());
}

#[test]
fn malformed_flags_are_invalid_input_and_name_the_flag() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["--since", "yesterday"], "--since"),
        (&["--baseline", "fortnight"], "--baseline"),
        (&["--since", "2d", "--baseline", "2026-08-01"], "--baseline"),
        (&["--until", "tomorrow"], "--until"),
        (&["--wait", "5 minutes"], "--wait"),
        (&["--post-comment", "NVIDIA/cuda-python"], "--post-comment"),
    ];
    for (extra, flag) in cases {
        let mut args = vec!["nightly", "--repo", REPO, "--cache-dir", cache_dir];
        if !extra.contains(&"--until") {
            args.extend(["--until", "2026-07-31T00:00:00Z"]);
        }
        args.extend(extra);
        let out = run(&mut flakestat(&args));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{extra:?}: {err}");
        assert!(err.contains(flag), "{extra:?}: {err}");
    }
    // Usage errors are clap's: --dry-run alone, --post-comment with --offline.
    for extra in [
        &["--dry-run"][..],
        &["--offline", "--post-comment", "o/r#1"],
    ] {
        let mut args = vec!["nightly", "--repo", REPO, "--cache-dir", cache_dir];
        args.extend(extra);
        let out = run(&mut flakestat(&args));
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
    }
}

/// The command line of `examples/flakestat-nightly.yml`'s report step, with the workflow's
/// expressions filled in.
fn workflow_command_line() -> Vec<String> {
    let yml = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flakestat-nightly.yml"),
    )
    .unwrap();
    let start = yml
        .find("flakestat nightly \\")
        .expect("the workflow runs flakestat nightly");
    let mut words = Vec::new();
    for line in yml[start..].lines() {
        let continued = line.trim_end().ends_with('\\');
        let line = line
            .trim()
            .trim_end_matches('\\')
            .replace("${{ github.repository }}", REPO)
            .replace("${FLAKESTAT_ISSUE}", &ISSUE.to_string());
        words.extend(
            line.split_whitespace()
                .map(|w| w.trim_matches('"').to_string()),
        );
        if !continued {
            break;
        }
    }
    assert_eq!(words[..2], ["flakestat", "nightly"]);
    words.drain(..1);
    words
}

#[test]
fn the_example_workflow_s_command_line_runs() {
    let args = workflow_command_line();
    for flag in ["--repo", "--post-comment", "--fail-on", "--output"] {
        assert!(args.iter().any(|a| a == flag), "{flag} in {args:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let replay = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake");
    let out = run(
        flakestat(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .current_dir(dir.path())
            .args([
                "--replay",
                replay.to_str().unwrap(),
                "--now",
                "2026-07-16T12:00:00Z",
            ]),
    );
    // --fail-on new: the flake is new that day, so the step would fail after posting.
    assert_eq!(out.status.code(), Some(10), "{args:?}: {}", stderr(&out));
    let report = std::fs::read_to_string(dir.path().join("nightly.md")).unwrap();
    assert!(report.contains("## New signatures"), "{report}");
    // A replay says it talked to the fake: no github.com comment URL, no token advice.
    let err = stderr(&out);
    assert!(err.contains("created comment"), "{err}");
    assert!(
        err.contains("the replay's fake GitHub on 127.0.0.1; nothing reached github.com"),
        "{err}"
    );
    assert!(!err.contains("https://github.com"), "{err}");
    assert!(!err.to_lowercase().contains("token"), "{err}");
}

/// Fork PR runs name no PR (`pull_requests: []`): nightly maps them through the PR listing as
/// the survey does (issue #9), once; a repeat finds the mapping in the store and asks nothing.
#[test]
fn nightly_maps_fork_pr_runs_through_the_pr_listing_once() {
    let ds = scenario();
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    // The fork PR #2370's runs are on 2026-07-13/14: inside a 14-day baseline ending 07-20.
    let extra = ["--since", "24h", "--baseline", "14d", "--format", "json"];
    let out = nightly(&gh, cache.path(), "2026-07-20T06:30:00Z", &extra);
    assert!(
        matches!(out.status.code(), Some(0 | 10)),
        "{}",
        stderr(&out)
    );
    assert_eq!(common::fork_listings(&gh), 1, "{:?}", gh.request_counts());
    let out = nightly(&gh, cache.path(), "2026-07-20T06:30:00Z", &extra);
    assert!(
        matches!(out.status.code(), Some(0 | 10)),
        "{}",
        stderr(&out)
    );
    assert_eq!(common::fork_listings(&gh), 1, "a repeat lists no PRs again");
}

/// A repository whose runs are mostly a PR labeler's (issue 40, item 1): a signature is counted
/// over the runs of the workflow it occurs in, PRs that touch its paths left out, in the window
/// where it has no hit too. Counted over every run instead, a quiet night of three CI runs
/// among a dozen labeler runs looked like a fix ("fading"), and a new hit's baseline was the
/// labeler's runs as well.
#[test]
fn a_busy_labeler_workflow_is_in_no_signature_s_runs() {
    use flakestat::fake::scenario::synthetic_prs::FLAKY_PATH;
    use flakestat::fake::scenario::{SyntheticSpec, synthetic, synthetic_run_id};

    // 45 CI runs 8 hours apart, every other one a PR's (one push, merged at the next `main`
    // run; some PRs change FLAKY_PATH), every 4th failing with the synthetic flake; a PR
    // labeler makes 80 % of all runs.
    let spec = SyntheticSpec {
        runs: 45,
        jobs_per_run: 2,
        spacing: chrono::TimeDelta::hours(8),
        fail_every: 4,
        rerun_every: 0,
        bot_percent: 80,
        pr_percent: 50,
        pushes_per_pr: 1,
        fork_percent: 0,
        ..SyntheticSpec::default()
    };
    let ds = synthetic(&spec);
    let at = |i: i32| spec.start + spec.spacing * i;
    // The rule, from the dataset: CI runs of [since, until) not of a PR changing FLAKY_PATH.
    let touches = |n: u64| {
        ds.pulls
            .iter()
            .find(|p| p.number == n)
            .is_some_and(|p| p.files.iter().any(|f| f.filename == FLAKY_PATH))
    };
    let ci_runs = |since, until| {
        ds.runs
            .iter()
            .map(|r| &r.run)
            .filter(|r| r.workflow_name == "CI" && r.created_at >= since && r.created_at < until)
            .filter(|r| !r.pull_requests.first().is_some_and(|n| touches(n.0)))
            .count() as u64
    };
    let all_runs = |since, until| {
        ds.runs
            .iter()
            .filter(|r| r.run.created_at >= since && r.run.created_at < until)
            .count() as u64
    };
    // Every PR of the range is merged: the survey stores them all, with their files.
    assert!(
        ds.pulls
            .iter()
            .filter(|p| p.created_at < at(43) + chrono::TimeDelta::hours(1))
            .all(|p| p.merged_at.is_some())
    );
    let signatures = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::root().join("benches/survey-signatures/synthetic-flake.toml"),
        signatures.path().join("synthetic-flake.toml"),
    )
    .unwrap();
    // A flake of one run only (the 44th CI run, which fails): new the day it hits.
    let one_run = synthetic_run_id(43);
    std::fs::write(
        signatures.path().join("one-run.toml"),
        format!(
            "title = \"The 44th run's failure\"\npattern = 'FLAKE-MARKER run {one_run} attempt \\d+'\npaths = [\"tests/flaky/**\"]\n\n[examples]\nmatch = [\"FLAKE-MARKER run {one_run} attempt 1\"]\nno_match = [\"FLAKE-MARKER run 1 attempt 1\"]\n"
        ),
    )
    .unwrap();
    let gh = FakeGitHub::start_blocking(ds.clone(), Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let night = |until: chrono::DateTime<chrono::Utc>| {
        let out = run(&mut flakestat(&[
            "nightly",
            "--repo",
            &spec.repo.to_string(),
            "--api-url",
            &gh.api_url(),
            "--cache-dir",
            cache.path().to_str().unwrap(),
            "--signatures",
            signatures.path().to_str().unwrap(),
            "--until",
            &rfc3339(until),
            "--format",
            "json",
            "-q",
        ]));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        nightly_json(&out)
    };

    // The day of CI runs 41 to 43 (1-based), none failing; the 14 days before, 10 hits.
    let until = at(42) + chrono::TimeDelta::minutes(30);
    let (since, baseline_since) = (
        until - chrono::TimeDelta::days(1),
        until - chrono::TimeDelta::days(15),
    );
    let report = night(until);
    let (period_runs, baseline_runs) = (ci_runs(since, until), ci_runs(baseline_since, since));
    assert_eq!(period_runs, 3);
    // Over every run of the period, the baseline's rate (10 of at most 40) predicted 3 hits
    // or more: the fallback's "fading".
    assert!(all_runs(since, until) as f64 * 10.0 / 40.0 >= 3.0);
    assert!(
        report.changes.is_empty(),
        "one hit expected in 3 CI runs: no change ({} CI runs in the baseline): {:?}",
        baseline_runs,
        report.changes
    );

    // A CI run later: the one-run flake is new, against the baseline's CI runs alone.
    let until = at(43) + chrono::TimeDelta::minutes(30);
    let (since, baseline_since) = (
        until - chrono::TimeDelta::days(1),
        until - chrono::TimeDelta::days(15),
    );
    let report = night(until);
    let new: Vec<_> = report.changes.iter().filter(|c| c.kind == "new").collect();
    assert_eq!(new.len(), 1, "{:?}", report.changes);
    let (period_runs, baseline_runs) = (ci_runs(since, until), ci_runs(baseline_since, since));
    assert_eq!(
        (new[0].period.hits, new[0].period.runs),
        (1, period_runs),
        "{:?}",
        new[0]
    );
    assert_eq!(
        (new[0].baseline.hits, new[0].baseline.runs),
        (0, baseline_runs),
        "the baseline's CI runs, not its {} runs",
        all_runs(baseline_since, since)
    );
    let p0 = 0.5 / (baseline_runs as f64 + 1.0);
    let want = flakestat::analysis::nightly::binomial_tail(period_runs, 1, p0);
    assert!(
        (new[0].probability - want).abs() < 1e-9,
        "{}",
        new[0].probability
    );
}

/// Issue 39: the night one GPU runner pool lost its CUDA context (2026-07-30) is one
/// incident naming its pool; none of its 31 tests is newly flaky, so `--fail-on
/// new-flaky-test` does not alert on it.
#[test]
fn a_machine_wide_night_is_an_incident_and_no_test_of_it_is_newly_flaky() {
    let replay = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake");
    let base = [
        "nightly",
        "--replay",
        replay.to_str().unwrap(),
        "--now",
        "2026-07-31T00:00:00Z",
        "-q",
    ];
    let out = run(flakestat(&base).args(["--format", "json", "--fail-on", "new-flaky-test"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = nightly_json(&out);
    assert_eq!(report.incidents.len(), 1, "{:?}", report.incidents);
    let night = &report.incidents[0];
    assert_eq!(night.kind, "machine_wide");
    assert_eq!(night.pool.as_deref(), Some("linux-arm64-gpu-a100-latest-1"));
    assert_eq!((night.jobs.len(), night.tests), (6, 31));
    assert!(
        report.new_flaky_tests.is_empty(),
        "{:?}",
        report.new_flaky_tests
    );
    let out = run(flakestat(&base).args(["--format", "markdown"]));
    let md = String::from_utf8(out.stdout).unwrap();
    assert_eq!(md.matches("## Incidents").count(), 1, "{md}");
    assert!(md.contains("`linux-arm64-gpu-a100-latest-1`"), "{md}");
}
