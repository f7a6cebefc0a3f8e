//! `flakestat report` as a user runs it: the real binary over a store filled through the store's
//! own API with the story's runs and jobs, real raw logs classified by the shipped signatures.

use std::path::Path;
use std::process::Output;

use crate::report_fixture::*;
use flakestat::model::{LogStatus, PrNumber, Snapshot};
use flakestat::report::wire;
use flakestat::store::{ListedWindow, LogEntry, Store, compress_log};

const REPO: &str = "NVIDIA/cuda-python";
/// `--until` as a date means through the end of that day: the story's `until`.
const SINCE: &str = "2026-07-01";
const UNTIL: &str = "2026-07-21";

fn flakestat(dir: &Path, args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .arg("--cache-dir")
        .arg(dir)
        .arg("--signatures")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn log_fixture() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reports/wait-until-timeout-3.14t.log"),
    )
    .expect("fixtures/reports/wait-until-timeout-3.14t.log")
}

/// Writes `snapshot` into a store in `dir` the way a survey would; failed jobs get the real log
/// when the story made them hit, a log of their error lines otherwise.
fn fill_store(dir: &Path, snapshot: &Snapshot) {
    let repo = snapshot.repo.clone().unwrap();
    let mut store = Store::open(dir).unwrap();
    store.store_repo(&repo, &snapshot.default_branch).unwrap();
    store.store_runs(&repo, &snapshot.runs).unwrap();
    // The survey's run listing of the whole stretch the story's runs lie in: what a report
    // covers is what a listing covered.
    let first = snapshot.runs.iter().map(|r| r.created_at).min().unwrap();
    let last = snapshot.runs.iter().map(|r| r.created_at).max().unwrap();
    let listed = ListedWindow {
        since: first.min(midnight(SINCE)),
        until: (last + chrono::TimeDelta::seconds(1))
            .max(midnight(UNTIL) + chrono::TimeDelta::days(1)),
        runs: snapshot.runs.len() as u64,
    };
    store.store_window(&repo, "all", &listed).unwrap();
    let mut groups: std::collections::BTreeMap<_, Vec<_>> = Default::default();
    for job in &snapshot.jobs {
        groups
            .entry((job.run_id, job.run_attempt))
            .or_default()
            .push(job.clone());
    }
    for ((run, attempt), jobs) in &groups {
        store.store_jobs(*run, *attempt, true, jobs).unwrap();
    }
    let real = log_fixture();
    for (job, status) in &snapshot.logs {
        let entry = match status {
            LogStatus::Expired => LogEntry::Expired,
            LogStatus::Missing => LogEntry::Missing,
            _ => {
                let c = &snapshot.classifications[job];
                if c.is_unclassified() {
                    let text: String = c
                        .error_lines
                        .iter()
                        .map(|l| format!("2026-07-08T02:00:00.0000000Z Error: {}\n", l.text))
                        .collect();
                    LogEntry::Stored(compress_log(text.as_bytes()))
                } else {
                    LogEntry::Stored(compress_log(&real))
                }
            }
        };
        store.store_log(*job, &entry, None).unwrap();
    }
    let pulls: Vec<_> = snapshot.pulls.values().cloned().collect();
    store.store_pulls(&repo, &pulls).unwrap();
    for p in &pulls {
        if let Some(files) = &p.files {
            store.store_pull_files(&repo, p.number, files).unwrap();
        }
    }
}

/// `day`'s first second, UTC.
fn midnight(day: &str) -> chrono::DateTime<chrono::Utc> {
    let day: chrono::NaiveDate = day.parse().unwrap();
    day.and_hms_opt(0, 0, 0).unwrap().and_utc()
}

/// The story, with the related PR changing a file the shipped signature's paths cover.
fn story_in_store(dir: &Path) -> Story {
    let (mut snapshot, _, story) = cuda_story();
    snapshot.pulls.get_mut(&PrNumber(2371)).unwrap().files =
        Some(vec!["cuda_core/cuda/core/_graph/_graph_builder.pyx".into()]);
    fill_store(dir, &snapshot);
    story
}

#[test]
fn one_signature_as_json_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let story = story_in_store(dir.path());
    let out = flakestat(
        dir.path(),
        &[
            "report",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--signature",
            "wait-until-timeout",
            "--format",
            "json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: wire::Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.focus.as_deref(), Some("wait-until-timeout"));
    assert_eq!(report.signatures.len(), 1);
    let s = &report.signatures[0];
    assert_eq!(s.runs_hit, story.hit_runs.len() as u64);
    assert_eq!(s.jobs_hit, story.jobs_hit);
    assert_eq!(s.runs_hit_default_branch, story.hit_main);
    assert_eq!(s.runs_hit_pr_unrelated, story.hit_pr);
    assert_eq!(s.runs_rerun_to_green, story.rerun_to_green);
    assert_eq!(s.max_attempts, story.max_attempts);
    assert_eq!(s.clean_runs_before, story.runs_before);
    assert_eq!(s.excluded_runs.len(), story.excluded.len());
    assert_eq!(s.impact_window.as_ref().unwrap().runs, story.runs_in_impact);
    // The test ids come from the real log's FAILED lines.
    assert!(
        s.tests
            .keys()
            .all(|t| t.starts_with("tests/graph/test_graph_definition_lifetime.py::")),
        "{:?}",
        s.tests
    );
    assert_eq!(s.dimensions["python"]["3.14t"].jobs_hit, story.jobs_hit);
    // The story's two segfaults are the shipped `fatal-signal`'s; only the hostile line is left.
    assert_eq!(
        report.jobs_unclassified,
        story.unmatched_jobs - 2 + story.expired_jobs
    );
    assert_eq!(
        report.jobs_classified,
        report.jobs_failed - report.jobs_unclassified
    );
}

#[test]
fn markdown_overview_to_a_file_and_errors_that_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    story_in_store(dir.path());
    let file = dir.path().join("flakes.md");
    let out = flakestat(
        dir.path(),
        &[
            "report",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--output",
            file.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(
        md.starts_with("# CI failures in NVIDIA/cuda-python"),
        "{md}"
    );
    assert!(md.contains("`wait-until-timeout`"));

    // An unknown signature: invalid input, and the known ids.
    let out = flakestat(
        dir.path(),
        &[
            "report",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--signature",
            "nope",
        ],
    );
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nope") && err.contains("wait-until-timeout"),
        "{err}"
    );

    // A repository the store has never surveyed.
    let out = flakestat(
        dir.path(),
        &["report", "--repo", "octo/other", "--since", SINCE],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("flakestat survey --repo octo/other"));

    // A broken flakestat.toml in the current folder: file, line and key.
    std::fs::write(
        dir.path().join("flakestat.toml"),
        "[matrix]\n# dimensions\npattern = '(?P<python'\n",
    )
    .unwrap();
    let out = flakestat(dir.path(), &["report", "--repo", REPO, "--since", SINCE]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("flakestat.toml:3: matrix.pattern"), "{err}");
}

#[test]
fn a_configured_pattern_names_the_dimensions() {
    let dir = tempfile::tempdir().unwrap();
    story_in_store(dir.path());
    let config = dir.path().join("custom.toml");
    std::fs::write(
        &config,
        "[matrix]\npattern = '^Test (?P<os>\\S+) / py(?P<interpreter>[0-9.]+t?),'\n",
    )
    .unwrap();
    let out = flakestat(
        dir.path(),
        &[
            "report",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--signature",
            "wait-until-timeout",
            "--format",
            "json",
            "--config",
            config.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: wire::Report = serde_json::from_slice(&out.stdout).unwrap();
    let dims = &report.signatures[0].dimensions;
    let interpreters: Vec<&String> = dims["interpreter"].keys().collect();
    assert_eq!(interpreters, PYTHONS.iter().collect::<Vec<_>>());
    assert!(dims["os"].contains_key("win-64"));
}

#[test]
fn the_output_name_picks_the_format_or_a_mismatch_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    story_in_store(dir.path());
    let window = ["--repo", REPO, "--since", SINCE, "--until", UNTIL];
    let report = |extra: &[&str]| {
        let mut args = vec!["report"];
        args.extend(window);
        args.extend(extra);
        flakestat(dir.path(), &args)
    };
    for (name, starts) in [
        ("flakes.json", "{"),
        ("flakes.html", "<!DOCTYPE html>"),
        ("flakes.md", "# CI failures"),
        ("flakes.txt", "CI failures"),
    ] {
        let file = dir.path().join(name);
        let out = report(&["-o", file.to_str().unwrap()]);
        assert!(out.status.success(), "{name}: {out:?}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with(starts), "{name}: {}", &text[..80]);
    }
    // --format wins where the name says nothing, or agrees.
    let file = dir.path().join("flakes.report");
    assert!(
        report(&["--format", "json", "-o", file.to_str().unwrap()])
            .status
            .success()
    );
    assert!(std::fs::read_to_string(&file).unwrap().starts_with('{'));
    let file = dir.path().join("notes.txt");
    assert!(
        report(&["--format", "markdown", "-o", file.to_str().unwrap()])
            .status
            .success()
    );
    // A name that contradicts --format: exit 3, one line naming both, no file.
    let file = dir.path().join("flakes.html");
    std::fs::remove_file(&file).unwrap();
    let out = report(&["--format", "json", "--output", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--format json does not match --output")
            && err.contains("flakes.html, a name for html"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!file.exists());
}

/// A reader that stops early (`| head`) is no error: the report written into a pipe whose
/// reading end is already closed exits 0 and says nothing on stderr, for the overview and for
/// one signature's account (which reported "error: Broken pipe" and exit 2 before).
#[test]
fn a_closed_pipe_on_stdout_is_a_quiet_success() {
    use crate::common::{STORY_WINDOW, signatures, surveyed_story};
    use std::process::Stdio;
    let store = surveyed_story();
    for extra in [&[][..], &["--signature", "wait-until-timeout"][..]] {
        for format in ["markdown", "json", "html"] {
            let mut child = crate::common::flakestat()
                .arg("report")
                .args(STORY_WINDOW)
                .args(["--format", format])
                .args(extra)
                .arg("--cache-dir")
                .arg(store)
                .arg("--signatures")
                .arg(signatures())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the binary runs");
            // Nothing will ever be read: every write to stdout fails with EPIPE.
            drop(child.stdout.take());
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{format} {extra:?}: {stderr}");
            assert!(!stderr.contains("error"), "{format} {extra:?}: {stderr}");
        }
    }
}
