//! Hostile local input (issue #10, should fix): compressed and random data is "binary, not a
//! log" and still listed in `classify --format json` with its error (the document is printed even
//! when every input was refused); escape sequences, control characters and bidi overrides in file
//! names, log lines and error messages never reach the terminal. The real binary.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn flakestat(dir: &Path, args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Escape sequences and characters that must never reach a terminal from outside.
const HOSTILE: &[&str] = &[
    "\u{1b}", "\u{9b}", "\u{7}", "\r", "\u{202a}", "\u{202b}", "\u{202c}", "\u{202d}", "\u{202e}",
    "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
];

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for bad in HOSTILE {
        assert!(
            !text.contains(bad),
            "{what}: {bad:?} reached the terminal: {text:?}"
        );
    }
}

fn random_bytes(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn compressed_and_random_files_are_binary_not_logs_and_stay_in_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let text = "2026-07-15T21:26:03.1234567Z ##[error]No space left on device\n".repeat(200);
    let zstd = zstd::encode_all(text.as_bytes(), 3).unwrap();
    // A gzip member header, then deflate-like bytes.
    let mut gzip = vec![0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03];
    gzip.extend(random_bytes(2000));
    let files = [
        write(dir.path(), "job.log.zst", &zstd),
        write(dir.path(), "job.log.gz", &gzip),
        write(dir.path(), "noise.log", &random_bytes(8192)),
    ];
    let names: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();

    // Every input refused: still one JSON document, each input with its error.
    let mut args = vec!["classify", "--format", "json"];
    args.extend(&names);
    let out = flakestat(dir.path(), &args);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("a JSON document even when all are refused: {e}"));
    let listed = doc["files"].as_array().unwrap();
    assert_eq!(listed.len(), 3);
    for (entry, reason) in
        listed
            .iter()
            .zip(["zstd data", "gzip data", "compressed or random bytes"])
    {
        let error = entry["error"].as_str().unwrap();
        assert!(error.contains("binary, not a log"), "{error}");
        assert!(error.contains(reason), "{error}");
        assert_eq!(entry["matches"].as_array().unwrap().len(), 0);
    }
    let err = stderr(&out);
    assert_eq!(err.matches("binary, not a log").count(), 3, "{err}");
    assert!(!err.contains("unclassified"), "{err}");

    // The same file as stdin.
    let out = crate::common::flakestat()
        .args(["classify", "-"])
        .stdin(std::fs::File::open(&files[1]).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("-: binary, not a log (gzip data)"));
}

#[test]
fn escapes_and_bidi_overrides_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let evil = "evil\u{1b}[2J\u{1b}]0;pwned\u{7}\u{202e}gol.txt\u{2066}";
    // A log named and filled with escapes: file name, error lines, the table.
    let log = write(
        dir.path(),
        &format!("{evil}.log"),
        "2026-07-15T21:26:03.1234567Z ##[error]boom \u{1b}[31mred\u{1b}[0m \u{9b}2J \u{202e}desrever\u{2069}\r\n"
            .as_bytes(),
    );
    let out = flakestat(dir.path(), &["classify", log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("evil"));
    assert_clean("classify table", &out.stdout);
    assert_clean("classify stderr", &out.stderr);

    // JSON on a terminal: the same characters escaped, the same value parsed back.
    let out = flakestat(
        dir.path(),
        &["classify", "--format", "json", log.to_str().unwrap()],
    );
    assert_clean("classify json", &out.stdout);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["files"][0]["file"], log.to_str().unwrap());

    // A refused input whose name holds escapes: the error message.
    let binary = write(dir.path(), &format!("{evil}.bin"), &random_bytes(4096));
    let out = flakestat(dir.path(), &["classify", binary.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("binary, not a log"));
    assert_clean("classify error", &out.stderr);

    // `signatures check`: a signature file whose name holds escapes and whose example fails.
    let sigs = dir.path().join("sigs");
    std::fs::create_dir(&sigs).unwrap();
    std::fs::write(
        sigs.join(format!("{evil}.toml")),
        "title = \"t\"\npattern = 'boom'\n[examples]\nmatch = [\"no such line \u{1b}[5m\"]\n",
    )
    .unwrap();
    let out = flakestat(dir.path(), &["signatures", "check", sigs.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    assert!(!out.stdout.is_empty() || !out.stderr.is_empty());
    assert_clean("signatures check stdout", &out.stdout);
    assert_clean("signatures check stderr", &out.stderr);

    // Any command's error message quoting a path.
    let out = flakestat(
        dir.path(),
        &[
            "report",
            "--repo",
            "o/r",
            "--since",
            "7d",
            "--config",
            &format!("{evil}.toml"),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("evil"), "{}", stderr(&out));
    assert_clean("error message", &out.stderr);
}
