//! A partial store never gives confident figures (issue #10, must fix 2): a survey stopped by the
//! fake GitHub's rate limit (exit 6) leaves runs without jobs and logs not fetched; every report
//! made from that store then says so in its first line, in JSON (`complete`, `runs_pending`,
//! `logs_pending`), counts only what is complete, and exits 9 unless `--allow-incomplete`. The
//! real binary against the fake GitHub on 127.0.0.1.

use std::path::Path;
use std::process::Output;

use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{Dataset, FakeGitHub, Faults};
use serde_json::Value;

const SINCE: &str = "2026-06-01";
const UNTIL: &str = "2026-06-03";

fn flakestat(cache: &Path, args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .env("GH_TOKEN", "tok")
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn dataset() -> Dataset {
    let mut ds = synthetic(&SyntheticSpec {
        runs: 120,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec!["tok".into()];
    ds
}

fn survey(api: &str, cache: &Path) -> Output {
    flakestat(
        cache,
        &[
            "survey",
            "--repo",
            "octo/demo",
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--api-url",
            api,
            "--format",
            "json",
            "--max-retries",
            "1",
        ],
    )
}

fn report(cache: &Path, format: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "report",
        "--repo",
        "octo/demo",
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--format",
        format,
    ];
    args.extend_from_slice(extra);
    flakestat(cache, &args)
}

/// A store the fake's rate limit stopped after a few dozen requests.
fn partial_store(gh: &FakeGitHub) -> tempfile::TempDir {
    let cache = tempfile::tempdir().unwrap();
    let out = survey(&gh.api_url(), cache.path());
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    cache
}

#[test]
fn a_survey_stopped_by_the_rate_limit_gives_reports_that_say_they_are_incomplete() {
    let gh = FakeGitHub::start_blocking(
        dataset(),
        Faults {
            rate_limit: Some(40),
            ..Faults::default()
        },
    )
    .unwrap();
    let cache = partial_store(&gh);

    // JSON: the fields, and figures over complete runs only.
    let out = report(cache.path(), "json", &[]);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--allow-incomplete"),
        "{}",
        stderr(&out)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["complete"], false);
    let pending = json["runs_pending"].as_u64().unwrap();
    assert!(pending > 0, "{json}");
    assert!(json["logs_pending"].is_u64(), "{json}");
    let left_out = json["runs_left_out"].as_u64().unwrap();
    assert!(left_out >= pending);
    let partial_total = json["runs_total"].as_u64().unwrap();

    // Markdown and table: the first line says it, with the command that finishes.
    for format in ["markdown", "table"] {
        let out = report(cache.path(), format, &[]);
        assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
        let text = stdout(&out);
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with("incomplete: "), "{format}: {first}");
        assert!(
            first.contains(&format!("{pending} of ")) && first.contains("no jobs yet"),
            "{format}: {first}"
        );
        // The command: in markdown's first line; in the terminal on a line of its own, whole.
        let command = "flakestat survey --repo octo/demo --since 2026-06-01T00:00:00Z";
        let line = match format {
            "markdown" => first,
            _ => text
                .lines()
                .take_while(|l| !l.is_empty())
                .map(str::trim)
                .find(|l| l.starts_with("flakestat survey"))
                .unwrap_or_default(),
        };
        assert!(line.contains(command), "{format}: {text}");
    }

    // Accepted on request; the report still says it.
    let out = report(cache.path(), "markdown", &["--allow-incomplete"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("incomplete: "));

    // survey --offline over the same store says it too.
    let out = flakestat(
        cache.path(),
        &[
            "survey",
            "--repo",
            "octo/demo",
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--offline",
            "--format",
            "json",
        ],
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["complete"], false, "{}", stderr(&out));

    // nightly over the same store: exit 9, JSON says it.
    let out = flakestat(
        cache.path(),
        &[
            "nightly",
            "--repo",
            "octo/demo",
            "--offline",
            "--now",
            "2026-06-03T00:00:00Z",
            "--since",
            "24h",
            "--baseline",
            "1d",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["complete"], false);
    assert!(json["runs_pending"].as_u64().unwrap() > 0);

    // Finishing the survey makes the store complete: no line, `complete: true`, exit 0, and
    // the figures of a survey that never stopped.
    gh.set_faults(Faults::default());
    let out = survey(&gh.api_url(), cache.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let surveyed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let out = report(cache.path(), "json", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let finished: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(finished["complete"], true);
    assert_eq!(finished["runs_pending"], 0);
    assert_eq!(finished["logs_pending"], 0);
    assert_eq!(finished, surveyed);
    // The partial report counted complete runs only: the runs left out were not counted as
    // clean runs.
    assert!(partial_total + left_out <= finished["runs_total"].as_u64().unwrap());
    assert!(partial_total < finished["runs_total"].as_u64().unwrap());
    let out = report(cache.path(), "markdown", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).contains("incomplete"), "{}", stdout(&out));
}

#[test]
fn a_window_no_survey_listed_makes_the_report_incomplete() {
    let gh = FakeGitHub::start_blocking(dataset(), Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    // Lists the runs of [2026-06-16, 2026-06-17) (and the default branch's commits of the 14
    // days before, which lists no run): the report's window [2026-06-01, 2026-06-04) lies
    // wholly before what was listed.
    let out = flakestat(
        cache.path(),
        &[
            "survey",
            "--repo",
            "octo/demo",
            "--since",
            "2026-06-16",
            "--until",
            "2026-06-17",
            "--api-url",
            &gh.api_url(),
            "--format",
            "json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = report(cache.path(), "json", &[]);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["complete"], false);
    assert_eq!(json["runs_pending"], 0);
    assert_eq!(
        json["windows_pending"],
        serde_json::json!([{"since": "2026-06-01T00:00:00Z", "until": "2026-06-04T00:00:00Z"}])
    );
    assert_eq!(json["runs_total"], 0, "nothing unlisted is counted");
    let out = report(cache.path(), "markdown", &[]);
    let text = stdout(&out);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(
            "incomplete: runs from 2026-06-01 00:00 UTC to 2026-06-04 00:00 UTC not listed"
        ),
        "{first}"
    );
}

/// `report` on the story's store (its runs listed for [2026-06-15, 2026-08-01)) over `window`,
/// as JSON, and as markdown.
fn story_report(window: &[&str]) -> (Output, Value, String) {
    let run = |format: &str| {
        crate::common::flakestat()
            .args(["report", "--repo", "NVIDIA/cuda-python", "--format", format])
            .args(window)
            .arg("--cache-dir")
            .arg(crate::common::surveyed_story())
            .arg("--signatures")
            .arg(crate::common::signatures())
            .env("NO_COLOR", "1")
            .output()
            .expect("the binary runs")
    };
    let out = run("json");
    let json: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    let markdown = run("markdown");
    assert_eq!(markdown.status.code(), out.status.code());
    (out, json, stdout(&markdown))
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn span(since: &str, until: &str) -> Value {
    serde_json::json!([{ "since": since, "until": until }])
}

/// Issue #27.1: what no listing covered is not zero. A window before, after or across the edge
/// of the stretch the store listed names the part not listed in its first line and in
/// `windows_pending`, counts none of it, and exits 9 (`--allow-incomplete`: 0).
#[test]
fn a_window_outside_what_was_listed_is_named_and_exits_9() {
    // Before the listed stretch: nothing of it was asked.
    let (out, json, markdown) = story_report(&["--since", "2026-06-01", "--until", "2026-06-10"]);
    let first = first_line(&markdown);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(json["complete"], false);
    assert_eq!(json["runs_total"], 0);
    assert_eq!(
        json["windows_pending"],
        span("2026-06-01T00:00:00Z", "2026-06-11T00:00:00Z")
    );
    assert!(
        first.starts_with(
            "incomplete: runs from 2026-06-01 00:00 UTC to 2026-06-11 00:00 UTC not listed"
        ),
        "{first}"
    );

    // Across its start: the part before is named and left out, the rest is counted.
    let (out, json, markdown) = story_report(&["--since", "2026-06-10", "--until", "2026-06-20"]);
    let first = first_line(&markdown);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(
        json["windows_pending"],
        span("2026-06-10T00:00:00Z", "2026-06-15T00:00:00Z")
    );
    assert!(
        first.contains("2026-06-10 00:00 UTC to 2026-06-15 00:00 UTC not listed"),
        "{first}"
    );
    let (out, listed, _) = story_report(&["--since", "2026-06-15", "--until", "2026-06-20"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(listed["complete"], true);
    assert!(listed["runs_total"].as_u64().unwrap() > 0);
    assert_eq!(json["runs_total"], listed["runs_total"]);

    // Past its end: the listed part is counted, what follows is named, not counted as clean.
    let (out, json, markdown) = story_report(&["--since", "2026-07-25", "--until", "2026-08-30"]);
    let first = first_line(&markdown);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(
        json["windows_pending"],
        span("2026-08-01T00:00:00Z", "2026-08-31T00:00:00Z")
    );
    assert!(
        first.contains("2026-08-01 00:00 UTC to 2026-08-31 00:00 UTC not listed"),
        "{first}"
    );
    let (_, listed, _) = story_report(&["--since", "2026-07-25", "--until", "2026-07-31"]);
    assert_eq!(listed["complete"], true);
    assert_eq!(json["runs_total"], listed["runs_total"]);

    // A span back from the clock lies wholly after what a replay of July listed.
    let (out, json, markdown) = story_report(&["--since", "7d"]);
    let first = first_line(&markdown);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(json["runs_total"], 0);
    assert_eq!(json["windows_pending"].as_array().unwrap().len(), 1);
    assert!(first.starts_with("incomplete: runs from "), "{first}");

    let (out, _, _) = story_report(&[
        "--since",
        "2026-06-01",
        "--until",
        "2026-06-10",
        "--allow-incomplete",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Issue #25.3: without --until the window ends where the store's survey ends, and the headline
/// says so; the report is complete.
#[test]
fn a_report_without_until_ends_where_the_survey_ended() {
    let (out, json, markdown) = story_report(&["--since", "2026-06-15"]);
    let first = first_line(&markdown);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json["complete"], true);
    assert_eq!(json["until"], "2026-08-01T00:00:00Z");
    assert_eq!(json["surveyed_to"], "2026-08-01T00:00:00Z");
    assert_eq!(first, "# CI failures in NVIDIA/cuda-python");
    assert!(
        markdown.contains("runs from 2026-06-15 00:00 UTC, surveyed to 2026-08-01 00:00 UTC:"),
        "{markdown}"
    );
}

/// A window's end never lies past the present. A survey `--until` after the replay's recording
/// ends lists only to that end, says so, and records only that as listed: a report that later
/// reads the store over the days after it names them as not listed (exit 9) instead of counting
/// them as clean; with `--replay` the report's window ends at the recording's end, complete.
#[test]
fn a_survey_until_past_the_present_lists_only_to_it() {
    let cache = tempfile::tempdir().unwrap();
    let story = crate::common::story_dir();
    let run = |args: &[&str]| {
        crate::common::flakestat()
            .args(args)
            .arg("--cache-dir")
            .arg(cache.path())
            .args(["--format", "json"])
            .env("NO_COLOR", "1")
            .output()
            .expect("the binary runs")
    };
    let window = ["--since", "2026-07-25", "--until", "2026-09-01"];
    let survey = run(&[
        &["survey", "--replay", story.to_str().unwrap()][..],
        &window,
    ]
    .concat());
    assert_eq!(survey.status.code(), Some(0), "{}", stderr(&survey));
    assert!(
        stderr(&survey).contains(
            "--until 2026-09-02 00:00 UTC is after the end of the replay's recording \
             (2026-08-01 06:30 UTC): the window ends there"
        ),
        "{}",
        stderr(&survey)
    );
    let json: Value = serde_json::from_slice(&survey.stdout).unwrap();
    assert_eq!(json["until"], "2026-08-01T06:30:00Z");
    assert_eq!(json["complete"], true);

    // The store alone, on the real clock: what follows the recording was never listed.
    let later = run(&[
        "report",
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-07-25",
        "--until",
        "2026-08-10",
    ]);
    assert_eq!(later.status.code(), Some(9), "{}", stderr(&later));
    let json: Value = serde_json::from_slice(&later.stdout).unwrap();
    assert_eq!(
        json["windows_pending"],
        span("2026-08-01T06:30:00Z", "2026-08-11T00:00:00Z")
    );

    // Through the replay: its clock stops at the recording's end, and so does the window.
    let replayed = run(&[
        &["report", "--replay", story.to_str().unwrap()][..],
        &window,
    ]
    .concat());
    assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
    let json: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    assert_eq!(json["until"], "2026-08-01T06:30:00Z");
    assert_eq!(json["complete"], true);
}

/// Issue #27.2: nightly's first line, when the store lacks part of its range, gives the survey
/// that fills it with the flags the user typed (`--cache-dir`, `--signatures`).
#[test]
fn nightlys_incomplete_line_repeats_the_flags_given() {
    // A store of its own: copying the shared one races the tests that write beside it.
    let cache = tempfile::tempdir().unwrap();
    let sigs = crate::common::signatures();
    crate::common::survey_story(cache.path(), &sigs);
    let out = crate::common::flakestat()
        .args(["nightly", "--offline", "--repo", "NVIDIA/cuda-python"])
        .args([
            "--until",
            "2026-07-20",
            "--since",
            "7d",
            "--baseline",
            "60d",
        ])
        .args(["--format", "markdown"])
        .arg("--cache-dir")
        .arg(cache.path())
        .arg("--signatures")
        .arg(&sigs)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let text = stdout(&out);
    let first = first_line(&text);
    assert!(
        first.starts_with(
            "incomplete: runs from 2026-05-15 00:00 UTC to 2026-06-15 00:00 UTC not listed — run "
        ),
        "{first}"
    );
    let flags = format!(
        "--until 2026-07-21T00:00:00Z --cache-dir {} --signatures {}` to finish",
        crate::common::shell_word(cache.path()),
        crate::common::shell_word(&sigs)
    );
    assert!(first.contains(&flags), "{first}");
}
