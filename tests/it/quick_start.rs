//! The README's quick start as a new user runs it (issue #27.2, #25.3): `survey --replay`
//! without `--cache-dir` keeps the replay's store apart from real data in the cache folder and
//! says where; `report`, `suggest` and `export` find it again with `--replay`; a replay's "now"
//! is the end of its recording; every fix-it hint repeats the flags given. The real binary, its
//! platform cache folder a temporary one (`XDG_CACHE_HOME`).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{signatures, story_dir};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The binary with `home` as the platform cache folder.
fn flakestat(home: &Path) -> Command {
    let mut cmd = crate::common::flakestat();
    cmd.env("XDG_CACHE_HOME", home).env("NO_COLOR", "1");
    cmd
}

/// `flakestat ARGS --replay STORY` with `home` as the platform cache folder.
fn replayed(home: &Path, args: &[&str]) -> Output {
    flakestat(home)
        .args(args)
        .arg("--replay")
        .arg(story_dir())
        .output()
        .unwrap()
}

#[test]
fn the_quick_start_survey_is_found_again_by_report_suggest_and_export_with_replay() {
    let home = tempfile::tempdir().unwrap();
    let survey = replayed(
        home.path(),
        &["survey", "--since", "2026-06-15", "--format", "json"],
    );
    assert!(survey.status.success(), "{}", stderr(&survey));
    let surveyed: Value = serde_json::from_slice(&survey.stdout).unwrap();
    // Where the store went, and the command that reads it again.
    let said = stderr(&survey);
    let replays = home.path().join("flakestat").join("replay");
    assert!(said.contains(&replays.display().to_string()), "{said}");
    assert!(
        said.contains("flakestat report --replay ")
            && said.contains(" --since 2026-06-15` reads it"),
        "{said}"
    );
    let kept: Vec<_> = std::fs::read_dir(&replays).unwrap().collect();
    assert_eq!(kept.len(), 1, "one store for the one recording");

    // `report --replay`: the same store, the window ending where the survey ended.
    let report = replayed(
        home.path(),
        &["report", "--since", "2026-06-15", "--format", "json"],
    );
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    let reported: Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(reported["complete"], true);
    assert_eq!(reported["repo"], "NVIDIA/cuda-python");
    assert_eq!(reported["runs_total"], surveyed["runs_total"]);
    assert_eq!(reported["until"], "2026-08-01T06:30:00Z");
    assert_eq!(reported["surveyed_to"], "2026-08-01T06:30:00Z");
    let markdown = replayed(
        home.path(),
        &["report", "--since", "2026-06-15", "--format", "markdown"],
    );
    assert!(
        stdout(&markdown).contains("from 2026-06-15 00:00 UTC, surveyed to 2026-08-01 06:30 UTC:"),
        "{}",
        stdout(&markdown)
    );

    // A replay's clock is the end of its recording: 7 days back from 2026-08-01 06:30.
    let week = replayed(
        home.path(),
        &["report", "--since", "7d", "--format", "json"],
    );
    assert_eq!(week.status.code(), Some(0), "{}", stderr(&week));
    let week: Value = serde_json::from_slice(&week.stdout).unwrap();
    assert_eq!(week["since"], "2026-07-25T06:30:00Z");
    assert_eq!(week["complete"], true);
    assert!(week["runs_total"].as_u64().unwrap() > 0);

    // `suggest --replay` reads the survey's unclassified jobs (not an empty store's none).
    let suggest = replayed(home.path(), &["suggest", "--since", "2026-06-15"]);
    assert_eq!(suggest.status.code(), Some(0), "{}", stderr(&suggest));
    let unclassified = surveyed["jobs_unclassified"].as_u64().unwrap();
    assert!(unclassified > 0, "the story has unknown failures");
    assert!(
        stderr(&suggest).contains(&format!(" of {unclassified} unclassified job(s)")),
        "{}",
        stderr(&suggest)
    );
    let warehouse = tempfile::tempdir().unwrap();
    let output = warehouse.path().to_str().unwrap();
    let export = replayed(
        home.path(),
        &["export", "--since", "2026-06-15", "--output", output],
    );
    if cfg!(feature = "parquet") {
        assert_eq!(export.status.code(), Some(0), "{}", stderr(&export));
        assert!(warehouse.path().join("runs.parquet").is_file());
    } else {
        // The default build leaves Parquet out and says how to get it.
        assert_eq!(export.status.code(), Some(2), "{}", stderr(&export));
        assert!(
            stderr(&export).contains("--features parquet"),
            "{}",
            stderr(&export)
        );
    }

    // Without --replay the default store holds nothing: the message says the replay's store
    // is kept apart and how to read it, not only a survey that would go to GitHub.
    let real = flakestat(home.path())
        .args([
            "report",
            "--repo",
            "NVIDIA/cuda-python",
            "--since",
            "2026-06-15",
        ])
        .output()
        .unwrap();
    assert_eq!(real.status.code(), Some(2), "{}", stderr(&real));
    let said = stderr(&real);
    assert!(
        said.contains("kept apart") && said.contains("--replay DIR"),
        "{said}"
    );
}

/// Every fix-it hint repeats --until, --cache-dir, --replay and --signatures as given.
#[test]
fn fix_it_hints_repeat_the_flags_given() {
    let home = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let out = flakestat(home.path())
        .args([
            "report",
            "--since",
            "2026-06-15",
            "--until",
            "2026-07-01",
            "--replay",
        ])
        .arg(story_dir())
        .arg("--cache-dir")
        .arg(empty.path())
        .arg("--signatures")
        .arg(signatures())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    let want = format!(
        "flakestat survey --repo NVIDIA/cuda-python --since 2026-06-15 --until 2026-07-01 --replay {} --cache-dir {} --signatures {}",
        crate::common::shell_word(&story_dir()),
        crate::common::shell_word(empty.path()),
        crate::common::shell_word(&signatures())
    );
    assert!(said.contains(&want), "{said}\nwanted: {want}");

    // The incomplete report's first line: the survey that fills the gap, with the same flags.
    let store = crate::common::surveyed_story();
    let out = flakestat(home.path())
        .args([
            "report",
            "--repo",
            "NVIDIA/cuda-python",
            "--format",
            "markdown",
        ])
        .args([
            "--since",
            "2026-06-01",
            "--until",
            "2026-06-10",
            "--cache-dir",
        ])
        .arg(store)
        .arg("--signatures")
        .arg(signatures())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let text = stdout(&out);
    let first = text.lines().next().unwrap_or_default();
    let want = format!(
        "flakestat survey --repo NVIDIA/cuda-python --since 2026-06-01T00:00:00Z --until 2026-06-11T00:00:00Z --cache-dir {} --signatures {}",
        crate::common::shell_word(store),
        crate::common::shell_word(&signatures())
    );
    assert!(first.contains(&want), "{first}\nwanted: {want}");
}
