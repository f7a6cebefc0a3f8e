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
