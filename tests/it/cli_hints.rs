//! What flakestat tells a user to type, and how its output meets a terminal or a pipe (issue
//! 40): durations written one way for every flag, fix-it commands that run when pasted (from a
//! clone under a long path), tables that never break a word, `COLUMNS` for files, a closed pipe
//! on stderr as quiet as one on stdout.

use std::path::Path;
use std::process::Output;

use crate::common::{flakestat, signatures};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `serve`'s settings up to the store: a secret file, `args`, and signatures that are not
/// there, so a run that gets past its durations stops at the signatures (exit 3) instead of
/// serving.
fn serve_settings(dir: &Path, args: &[&str]) -> Output {
    let secret = dir.join("secret");
    std::fs::write(&secret, "s3cret\n").unwrap();
    flakestat()
        .args(["serve", "--repo", "octo/demo", "--listen", "127.0.0.1:0"])
        .arg("--webhook-secret-file")
        .arg(&secret)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--signatures")
        .arg(dir.join("no-such-signatures"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// `--since 30d` and `serve --resync-window 200d` read the same span: days and weeks are taken
/// by every duration flag, and a bad one names the forms, days among them.
#[test]
fn every_duration_flag_reads_days_and_weeks_as_since_does() {
    let dir = tempfile::tempdir().unwrap();
    for window in ["200d", "2w", "36h", "90m", "45s"] {
        let out = serve_settings(dir.path(), &["--resync-window", window, "--resync", "1d"]);
        let err = stderr(&out);
        assert!(!err.contains("not a duration"), "{window}: {err}");
        assert!(err.contains("no-such-signatures"), "{window}: {err}");
        assert_eq!(out.status.code(), Some(3), "{window}: {err}");
    }
    for bad in ["200y", "1.5h", "2 d", "a day"] {
        let out = serve_settings(dir.path(), &["--resync-window", bad]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{bad}: {err}");
        assert!(
            err.contains(&format!("--resync-window {bad:?} is not a duration")),
            "{bad}: {err}"
        );
        assert!(err.contains("7d"), "the forms name days: {err}");
    }
    // The same words in a window: `--since 200d` is a span back from now.
    let out = flakestat()
        .args([
            "report",
            "--repo",
            "octo/demo",
            "--since",
            "200d",
            "--format",
            "json",
        ])
        .arg("--cache-dir")
        .arg(dir.path().join("empty"))
        .arg("--signatures")
        .arg(signatures())
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("is not a time"), "{}", stderr(&out));
}

/// `args` with stdout and stderr on one pipe (`2>&1 | …`) whose reader keeps `keep` lines and
/// then goes away (`head -n keep`): the exit code and whether anything was read.
fn into_closed_pipe(args: &[&std::ffi::OsStr], keep: usize) -> (Option<i32>, String) {
    use std::io::{BufRead, BufReader};
    let (reader, writer) = std::io::pipe().unwrap();
    let mut child = flakestat()
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .unwrap();
    let mut read = String::new();
    let mut lines = BufReader::new(reader);
    for _ in 0..keep {
        if lines.read_line(&mut read).unwrap_or(0) == 0 {
            break;
        }
    }
    drop(lines);
    let status = child.wait().unwrap();
    (status.code(), read)
}

/// `flakestat … 2>&1 | head`: the reader of both stdout and stderr gone, before anything was
/// written or after a line, is no panic (exit 101) but the command's own outcome: a report
/// cut short by its reader is a success, as with a closed stdout alone; an error still exits
/// with its code.
#[test]
fn a_closed_stderr_is_as_quiet_as_a_closed_stdout() {
    let cache = tempfile::tempdir().unwrap();
    let story = crate::common::story_dir();
    let sigs = signatures();
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    // The survey prints its report on stdout, then its closing lines on stderr.
    let survey: Vec<&std::ffi::OsStr> = vec![
        os("survey"),
        os("--replay"),
        story.as_os_str(),
        os("--cache-dir"),
        cache.path().as_os_str(),
        os("--signatures"),
        sigs.as_os_str(),
        os("--since"),
        os("2026-06-15"),
        os("--until"),
        os("2026-06-20"),
    ];
    for keep in [0, 1, 3] {
        let (code, read) = into_closed_pipe(&survey, keep);
        assert_eq!(
            code,
            Some(0),
            "survey, reader gone after {keep} lines: {read}"
        );
        assert!(!read.contains("panicked"), "{read}");
    }
    // An incomplete store: `report` says so on stderr and exits 9; an error exits with its code.
    let report: Vec<&std::ffi::OsStr> = vec![
        os("report"),
        os("--repo"),
        os("NVIDIA/cuda-python"),
        os("--since"),
        os("2026-06-01"),
        os("--until"),
        os("2026-06-10"),
        os("--cache-dir"),
        cache.path().as_os_str(),
        os("--signatures"),
        sigs.as_os_str(),
    ];
    for keep in [0, 1] {
        let (code, read) = into_closed_pipe(&report, keep);
        assert!(
            matches!(code, Some(0 | 9)),
            "report after {keep} lines: {code:?} {read}"
        );
        assert!(!read.contains("panicked"), "{read}");
    }
    let bad = [
        os("report"),
        os("--repo"),
        os("octo/demo"),
        os("--since"),
        os("someday"),
    ];
    let (code, read) = into_closed_pipe(&bad, 0);
    assert_eq!(code, Some(3), "an error keeps its code: {read}");
}
