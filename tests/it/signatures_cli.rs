//! `flakestat signatures check|import` and how broken signature files are reported, through the
//! real binary.

use std::path::{Path, PathBuf};
use std::process::Output;

fn flakestat(args: &[&str]) -> Output {
    let cwd = tempfile::tempdir().unwrap();
    crate::common::flakestat()
        .args(args)
        .current_dir(cwd.path())
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

#[test]
fn shipped_signatures_pass_their_own_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures");
    let out = flakestat(&["signatures", "check", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("0 failing, 0 overlaps"),
        "{}",
        text(&out)
    );
}

#[test]
fn every_bad_file_is_listed_with_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "good.toml",
        "title = 'Good'\npattern = 'good'\n",
    );
    write(
        dir.path(),
        "unknown-key.toml",
        "title = 'x'\npattern = 'x'\nissues = 'https://x'\n",
    );
    write(dir.path(), "missing.toml", "pattern = 'x'\n");
    write(
        dir.path(),
        "bad-regex.toml",
        "title = 'x'\npattern = 'a(b'\n",
    );
    for args in [
        vec!["signatures", "check", dir.path().to_str().unwrap()],
        vec![
            "classify",
            "--signatures",
            dir.path().to_str().unwrap(),
            "/dev/null",
        ],
    ] {
        let out = flakestat(&args);
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
        let msg = text(&out);
        assert!(msg.contains("3 invalid signature files"), "{msg}");
        assert!(msg.contains("unknown-key.toml:3:1: key `issues`"), "{msg}");
        assert!(
            msg.contains("missing.toml") && msg.contains("key `title`"),
            "{msg}"
        );
        assert!(
            msg.contains("bad-regex.toml:2:13: key `pattern`") && msg.contains("pattern column 2"),
            "{msg}"
        );
        assert!(!msg.contains("good.toml"), "{msg}");
    }
}

#[test]
fn failing_examples_and_overlaps_fail_the_check() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "oom.toml",
        "title = 'OOM'\npattern = 'out of memory'\n[examples]\nmatch = ['CUDA out of memory', 'OOM killer']\nno_match = ['plenty of memory']\n",
    );
    write(
        dir.path(),
        "cuda.toml",
        "title = 'CUDA'\npattern = 'CUDA'\n[examples]\nmatch = ['CUDA error']\n",
    );
    let out = flakestat(&["signatures", "check", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let msg = text(&out);
    assert!(
        msg.contains("oom.toml: examples.match[1] \"OOM killer\": the pattern does not match it"),
        "{msg}"
    );
    assert!(
        msg.contains("cuda and oom both match \"CUDA out of memory\""),
        "{msg}"
    );
    let allowed = flakestat(&[
        "signatures",
        "check",
        "--allow-overlaps",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(
        allowed.status.code(),
        Some(3),
        "the failing example still fails"
    );
}

#[test]
fn import_pytorch_writes_one_file_per_rule_and_refuses_to_overwrite() {
    let ruleset = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pytorch/ruleset.toml");
    let out_dir = tempfile::tempdir().unwrap();
    let out_path = out_dir.path().join("pytorch");
    let args = [
        "signatures",
        "import",
        "--format",
        "pytorch",
        ruleset.to_str().unwrap(),
        "--out",
        out_path.to_str().unwrap(),
    ];
    let out = flakestat(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let n = std::fs::read_dir(&out_path).unwrap().count();
    assert_eq!(n, 102);
    let again = flakestat(&args);
    assert_eq!(again.status.code(), Some(3));
    assert!(text(&again).contains("--force"), "{}", text(&again));
    let check = flakestat(&[
        "signatures",
        "check",
        "--allow-overlaps",
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
}

#[test]
fn import_rejects_a_file_that_is_not_a_ruleset() {
    let dir = tempfile::tempdir().unwrap();
    let bogus = write(dir.path(), "bogus.toml", "[[rule]\n");
    let out = flakestat(&[
        "signatures",
        "import",
        "--format",
        "pytorch",
        bogus.to_str().unwrap(),
        "--out",
        dir.path().join("o").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out).contains("bogus.toml: line 1"), "{}", text(&out));
}
