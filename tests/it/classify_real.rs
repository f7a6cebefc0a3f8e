//! The done-when test of issue 14: on real failing job logs from other ecosystems (go, Swift,
//! vitest, pytest, gradle, clang-tidy, composer, cargo, logs saved by `gh run view --log` and by
//! PowerShell as UTF-16), the line a person picks as the failure is among the first five error
//! lines `flakestat classify` (the real binary) reports. `fixtures/real/MANIFEST.tsv` names the
//! line; files whose licence forbids a copy are read from `../shared/logs/real/` when present.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn find(file: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        root.join("fixtures/real").join(file),
        root.join("../shared/logs/real").join(file),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

#[test]
fn the_human_line_is_among_the_first_five_error_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("fixtures/real/MANIFEST.tsv")).unwrap();
    let mut checked = 0;
    let mut misses = Vec::new();
    for row in manifest.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = row.split('\t').collect();
        let (file, lines) = (cols[0], cols[1]);
        let Some(path) = find(file) else {
            crate::common::skips::skipped(
                crate::common::skips::Need::Shared,
                &format!("skipped {file}: not in fixtures/real (licence) and ../shared is absent"),
            );
            continue;
        };
        let want: Vec<u64> = lines
            .split(',')
            .map(|l| l.trim().parse().unwrap())
            .collect();
        let cwd = tempfile::tempdir().unwrap();
        let out = crate::common::flakestat()
            .args(["classify", "--format", "json"])
            .arg(&path)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        assert!(
            out.status.code() == Some(0) || out.status.code() == Some(1),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let files = doc["files"].as_array().unwrap();
        let first_five: Vec<Vec<u64>> = files
            .iter()
            .map(|f| {
                f["error_lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .take(5)
                    .map(|l| l["line"].as_u64().unwrap())
                    .collect()
            })
            .collect();
        if !first_five.iter().flatten().any(|l| want.contains(l)) {
            misses.push(format!(
                "{file}: wanted one of {want:?}, got {first_five:?}"
            ));
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} logs found");
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// `gh run view --log` files hold many jobs: one result per job, in file order, each naming its
/// job, with the file's line numbers.
#[test]
fn gh_log_format_gives_one_result_per_job() {
    let path = find("ImL1s__kotlin-crypto-pure__ci_log.cd09272.ghlog.txt").unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let out = crate::common::flakestat()
        .args(["classify", "--format", "json"])
        .arg(&path)
        .current_dir(cwd.path())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["job"].as_str().unwrap())
        .collect();
    assert_eq!(
        jobs,
        [
            "Android Unit Tests",
            "watchOS Build Check",
            "iOS Build Check"
        ]
    );
    let first = &doc["files"][0]["error_lines"][0];
    assert_eq!(first["line"], 188);
    assert!(
        first["text"]
            .as_str()
            .unwrap()
            .starts_with("e: file:///home/runner/work/kotlin-crypto-pure"),
        "the gh prefix, BOM and timestamp are gone: {first}"
    );
}

fn classify_bytes(bytes: &[u8]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("saved.log");
    std::fs::write(&path, bytes).unwrap();
    let out = crate::common::flakestat()
        .args(["classify", "--format", "json"])
        .arg(&path)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A `gh run view --log-failed` file saved by PowerShell as UTF-16 big-endian with CRLF, two
/// jobs interleaved, `UNKNOWN STEP`, a BOM after the prefix: decoded, split per job, and the
/// file's line numbers kept.
#[test]
fn utf16_be_gh_log_with_interleaved_jobs() {
    let text = "build (linux)\tRun tests\t\u{feff}2026-01-02T03:04:05.1000000Z ##[group]Run go test ./...\r\n\
build (linux)\tRun tests\t2026-01-02T03:04:05.2000000Z go test ./...\r\n\
build (linux)\tRun tests\t2026-01-02T03:04:05.3000000Z ##[endgroup]\r\n\
lint\tUNKNOWN STEP\t2026-01-02T03:04:06.1000000Z error[E0425]: cannot find value `x` in this scope\r\n\
build (linux)\tRun tests\t2026-01-02T03:04:07.1000000Z --- FAIL: TestServe (2.93s)\r\n\
build (linux)\tRun tests\t2026-01-02T03:04:07.2000000Z ##[error]Process completed with exit code 1.\r\n";
    let mut bytes = vec![0xfe, 0xff];
    for u in text.encode_utf16() {
        bytes.extend(u.to_be_bytes());
    }
    let doc = classify_bytes(&bytes);
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["job"], "build (linux)");
    assert_eq!(files[0]["error_lines"][0]["line"], 5);
    assert_eq!(
        files[0]["error_lines"][0]["text"],
        "--- FAIL: TestServe (2.93s)"
    );
    assert_eq!(files[1]["job"], "lint");
    assert_eq!(files[1]["error_lines"][0]["line"], 4);
}

/// Logs saved by users, with CRLF and without timestamps, are plain logs as before.
#[test]
fn crlf_without_timestamps_is_one_plain_log() {
    let doc = classify_bytes(
        b"$ pytest\r\ncollected 3 items\r\nE       assert 1 == 2\r\nFAILED tests/test_a.py::test_b - assert 1 == 2\r\n",
    );
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert!(files[0]["job"].is_null());
    let lines: Vec<u64> = files[0]["error_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [4, 3]);
    assert_eq!(
        files[0]["error_lines"][0]["text"],
        "FAILED tests/test_a.py::test_b - assert 1 == 2"
    );
}

/// A multi-line `##[error]` annotation (vitest's error with its stack, written by the runner as
/// one stamped line and unstamped continuation lines) is one telling line: its continuation
/// lines attached after newlines, none of them ranked on its own (`Serialized Error: …` holds
/// an error word), and the next stamped line not taken in. Line numbers stay the file's.
#[test]
fn a_multi_line_error_annotation_is_one_telling_line() {
    let path = find("gmoon__s3proxy__job-logs.txt").unwrap();
    let raw = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = raw.lines().collect();
    // The annotation at line 784 and its continuation lines, up to the next stamped line.
    let start = 784;
    assert!(lines[start - 1].ends_with(
        "##[error]CredentialsProviderError: Could not load credentials from any providers"
    ));
    let stamped = |l: &str| l.len() > 28 && l.as_bytes()[4] == b'-' && l.as_bytes()[27] == b'Z';
    let end = (start..lines.len()).find(|&i| stamped(lines[i])).unwrap();
    let continuation: Vec<&str> = lines[start..end].to_vec();
    assert!(continuation.len() >= 10, "{continuation:?}");
    assert!(continuation.contains(&"Serialized Error: { tryNextLink: false }"));

    let doc = classify_bytes(raw.as_bytes());
    let error_lines = doc["files"][0]["error_lines"].as_array().unwrap();
    let annotation = error_lines
        .iter()
        .find(|l| l["line"] == start as u64)
        .unwrap_or_else(|| panic!("{error_lines:?}"));
    let text = annotation["text"].as_str().unwrap();
    let mut want = String::from(
        "##[error]CredentialsProviderError: Could not load credentials from any providers",
    );
    for l in continuation
        .iter()
        .map(|l| l.trim_end())
        .filter(|l| !l.is_empty())
    {
        want.push('\n');
        want.push_str(l);
    }
    assert_eq!(text, want);
    // No continuation line stands on its own (and, by the equality above, nothing after the
    // next stamped line was attached).
    for l in error_lines {
        let n = l["line"].as_u64().unwrap() as usize;
        assert!(!(start + 1..=end).contains(&n), "{l}");
        assert_ne!(l["text"], "Serialized Error: { tryNextLink: false }");
    }

    // The same log without timestamps (a copy a user edited): nothing tells where the
    // annotation ends, so it is its first line, as before.
    let bare: String = raw
        .lines()
        .map(|l| if stamped(l) { &l[29..] } else { l })
        .map(|l| format!("{l}\n"))
        .collect();
    let doc = classify_bytes(bare.as_bytes());
    let first = doc["files"][0]["error_lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["line"] == start as u64)
        .cloned()
        .unwrap();
    assert_eq!(
        first["text"],
        "##[error]CredentialsProviderError: Could not load credentials from any providers"
    );
}

/// Issue 23, 4: in the same vitest log the annotation at line 784 names only the exception on
/// its first line and `src/index.ts:253:5` under it. It ranks with the test runner's own
/// failure lines: right after vitest's `FAIL` and `×` lines, above every other line, and the
/// line a person picks (628) stays first.
#[test]
fn an_annotation_naming_a_file_line_ranks_with_the_fail_lines() {
    let path = find("gmoon__s3proxy__job-logs.txt").unwrap();
    let doc = classify_bytes(&std::fs::read(&path).unwrap());
    let error_lines = doc["files"][0]["error_lines"].as_array().unwrap();
    let lines: Vec<u64> = error_lines
        .iter()
        .map(|l| l["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines[0], 628, "{error_lines:?}");
    let at = lines
        .iter()
        .position(|&l| l == 784)
        .unwrap_or_else(|| panic!("{lines:?}"));
    let text = error_lines[at]["text"].as_str().unwrap();
    assert!(
        text.contains("\n ❯ S3Proxy.healthCheck src/index.ts:253:5"),
        "{text}"
    );
    for l in &error_lines[..at] {
        let t = l["text"].as_str().unwrap();
        let t = t.trim_start();
        assert!(t.starts_with("FAIL ") || t.starts_with("× "), "{l}");
    }
}

/// Issue 40: a `gh run view --log` file whose job failed in `go mod tidy` (the go command's
/// module error, which says neither "error" nor "failed") names that line first; before, it
/// showed no error line at all. Written from the go command's messages.
#[test]
fn a_go_mod_tidy_failure_in_a_gh_log_names_the_module_error() {
    let text = "\
lint\tSet up Go\t2026-01-02T03:04:05.1000000Z go: downloading go1.23.4 (linux/amd64)\n\
lint\ttidy\t2026-01-02T03:04:06.1000000Z ##[group]Run go mod tidy -diff\n\
lint\ttidy\t2026-01-02T03:04:06.2000000Z go mod tidy -diff\n\
lint\ttidy\t2026-01-02T03:04:06.3000000Z ##[endgroup]\n\
lint\ttidy\t2026-01-02T03:04:07.1000000Z go: finding module for package github.com/example/missing\n\
lint\ttidy\t2026-01-02T03:04:07.2000000Z go: example.com/app imports\n\
lint\ttidy\t2026-01-02T03:04:07.3000000Z \tgithub.com/example/missing: no matching versions for query \"latest\"\n\
lint\ttidy\t2026-01-02T03:04:07.4000000Z ##[error]Process completed with exit code 1.\n";
    let doc = classify_bytes(text.as_bytes());
    let file = &doc["files"][0];
    assert_eq!(file["job"], "lint");
    assert_eq!(file["unclassified"], true);
    assert_eq!(file["error_lines"][0]["line"], 7, "{file}");
    assert_eq!(
        file["error_lines"][0]["text"],
        "\tgithub.com/example/missing: no matching versions for query \"latest\""
    );
}
