//! The shipped signatures against the raw-log fixtures (`fixtures/logs/`, expectations in
//! `EXPECTED.tsv`, written by hand from the logs), and the fast matcher against the naive
//! line-by-line reference on every log we have.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use flakestat::model::Classification;
use flakestat::signatures::{SignatureSet, import::import_pytorch, load_bundled, load_dir};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn bundled() -> SignatureSet {
    SignatureSet::compile(load_bundled()).unwrap()
}

struct Expected {
    signature: String,
    lines: Vec<u64>,
    step: Option<String>,
    tests: BTreeSet<String>,
}

/// file → expected matches (empty: unclassified).
fn expected() -> BTreeMap<String, Vec<Expected>> {
    let text = std::fs::read_to_string(fixtures().join("logs/EXPECTED.tsv")).unwrap();
    let mut out: BTreeMap<String, Vec<Expected>> = BTreeMap::new();
    for row in text.lines().skip(1).filter(|l| !l.is_empty()) {
        let cols: Vec<&str> = row.split('\t').collect();
        let entry = out.entry(cols[0].to_string()).or_default();
        if cols[1] == "-" {
            continue;
        }
        entry.push(Expected {
            signature: cols[1].to_string(),
            lines: cols[2].split(',').map(|n| n.parse().unwrap()).collect(),
            step: Some(cols[3]).filter(|s| !s.is_empty()).map(str::to_string),
            tests: cols[4]
                .split(';')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        });
    }
    out
}

fn log_files() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures().join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn every_fixture_is_classified_as_expected() {
    let set = bundled();
    let expected = expected();
    let files = log_files();
    assert_eq!(
        files.len(),
        expected.len(),
        "every fixture log has a row in EXPECTED.tsv"
    );
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let want = &expected[&name];
        let got = set.classify(&std::fs::read(&path).unwrap());
        let ids: Vec<&str> = got.matches.iter().map(|m| m.signature.0.as_str()).collect();
        let want_ids: Vec<&str> = want.iter().map(|e| e.signature.as_str()).collect();
        assert_eq!(ids, want_ids, "{name}: signatures");
        for (m, e) in got.matches.iter().zip(want) {
            assert_eq!(m.lines, e.lines, "{name}: {} lines", e.signature);
            assert_eq!(m.line, e.lines[0], "{name}: first line");
            assert_eq!(m.count, e.lines.len() as u64, "{name}: count");
            assert_eq!(m.step, e.step, "{name}: step");
            assert_eq!(m.tests, e.tests, "{name}: tests");
            assert!(
                !m.text.contains('\u{1b}')
                    && !m.text.contains('\u{feff}')
                    && !m.text.ends_with('\r'),
                "{name}: text is normalized: {:?}",
                m.text
            );
        }
    }
}

#[test]
fn every_shipped_signature_has_a_fixture() {
    let covered: BTreeSet<String> = expected()
        .into_values()
        .flatten()
        .map(|e| e.signature)
        .collect();
    for spec in load_bundled() {
        assert!(
            covered.contains(&spec.id.0),
            "no fixture log for {}",
            spec.id
        );
    }
}

#[test]
fn a_log_matching_nothing_reports_its_telling_lines() {
    let c = bundled().classify(&std::fs::read(fixtures().join("logs/no-match.log")).unwrap());
    assert!(c.is_unclassified());
    let texts: Vec<&str> = c.error_lines.iter().map(|l| l.text.as_str()).collect();
    assert!(texts.len() <= 10);
    assert!(
        texts[0].contains("FAILED") || texts[0].contains("Traceback"),
        "{texts:?}"
    );
    // The exit-code boilerplate tells nothing when anything else is there.
    assert!(
        !texts.iter().any(|t| t.contains("Process completed")),
        "{texts:?}"
    );
    let bare = bundled().classify(b"building\n##[error]Process completed with exit code 2.\n");
    assert_eq!(bare.error_lines.len(), 1);
    assert_eq!(bare.error_lines[0].line, 2);
}

#[test]
fn the_matched_text_and_lines_survive_invalid_utf8() {
    let c = bundled().classify(&std::fs::read(fixtures().join("logs/invalid-utf8.log")).unwrap());
    assert!(c.matches[0].text.contains('\u{fffd}'));
}

/// Every log we have: fixtures, the PyTorch copies, and `../shared` when present.
fn all_logs() -> Vec<PathBuf> {
    let mut paths = log_files();
    let mut more: Vec<PathBuf> = std::fs::read_dir(fixtures().join("pytorch"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    more.sort();
    paths.extend(more);
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/logs/cuda-python");
    match std::fs::read_dir(&shared) {
        Ok(dir) => paths.extend(dir.map(|e| e.unwrap().path())),
        Err(_) => crate::common::skips::skipped(
            crate::common::skips::Need::Shared,
            &format!(
                "skipping the cuda-python log: {} is absent (only in the development environment)",
                shared.display()
            ),
        ),
    }
    paths
}

fn pytorch_set() -> SignatureSet {
    let ruleset = std::fs::read_to_string(fixtures().join("pytorch/ruleset.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for s in import_pytorch(&ruleset).unwrap() {
        std::fs::write(dir.path().join(format!("{}.toml", s.id)), s.toml).unwrap();
    }
    SignatureSet::compile(load_dir(dir.path()).unwrap()).unwrap()
}

fn assert_same(set: &SignatureSet, label: &str, log: &[u8]) -> Classification {
    let fast = set.classify(log);
    assert_eq!(
        fast,
        set.classify_reference(log),
        "{label}: fast != reference"
    );
    let streamed = set.classify_reader(std::io::Cursor::new(log)).unwrap();
    assert_eq!(fast, streamed, "{label}: in memory != streamed");
    fast
}

#[test]
fn fast_path_equals_naive_reference_on_every_log() {
    let sets = [("bundled", bundled()), ("pytorch", pytorch_set())];
    let mut matched = 0;
    for path in all_logs() {
        let log = std::fs::read(&path).unwrap();
        for (name, set) in &sets {
            let c = assert_same(set, &format!("{} with {name}", path.display()), &log);
            matched += c.matches.len();
        }
    }
    assert!(matched > 50, "the comparison saw real matches ({matched})");
}

#[test]
fn fast_path_equals_reference_on_tricky_lines() {
    // Literals split by escape codes, BOMs and invalid bytes; CRLF; a last line without newline;
    // an overlapping pair of literals; a group title with ANSI codes.
    let log: &[u8] = b"2026-07-15T21:26:03.1234567Z ##[gr\x1b[0moup]Run a\n\
2026-07-15T21:26:03.1234567Z No sp\x1b[1mace left on dev\x1b[0mice\r\n\
No space left on d\xef\xbb\xbfevice\n\
\xff\xfeCould not resolve host: x\n\
ERROR: HTTP error 503 while getting x\n\
\x1b[31m2026-07-15T21:26:03.1234567Z Segmentation fault\n\
Fatal Python error: Segmentation fault";
    let set = bundled();
    let c = assert_same(&set, "tricky", log);
    let ids: Vec<&str> = c.matches.iter().map(|m| m.signature.0.as_str()).collect();
    assert_eq!(ids, ["disk-full", "fatal-signal", "network-error"]);
    assert_eq!(c.matches[0].lines, [2, 3]);
    assert_eq!(c.matches[0].step.as_deref(), Some("Run a"));
    assert_eq!(c.matches[1].lines, [6, 7]);
}

/// Logs assembled at random (fixed seeds) from pieces that stress the fast path: literal
/// fragments split by escape codes, BOMs and invalid bytes, very long lines, CRLF, group lines,
/// boilerplate, the telling-line forms' own literals, and lines of the real logs.
#[test]
fn fast_path_equals_reference_on_generated_logs() {
    let pieces: &[&[u8]] = &[
        b"2026-07-15T21:26:03.1234567Z ",
        b"##[group]Run pytest -v",
        b"##[error]",
        b"Process completed with exit code 1.",
        b"No space left on device",
        b"No sp",
        b"ace left on device",
        b"\x1b[31m",
        b"\x1b[0m",
        b"\xef\xbb\xbf",
        b"\xff",
        "\u{85}".as_bytes(),
        b"\r",
        b"RuntimeError: ",
        b"AssertionError: condition not satisfied within 5.0s",
        b"FAILED tests/graph/test_x.py::test_y - ",
        b"Error",
        b"rror: ",
        b"Segmentation fault",
        b"CUDA_ERROR_ILLEGAL_ADDRESS",
        b"##[error]The action 'Run tests' has timed out after 30 minutes.",
        b"FAILED: [code=1]",
        b"____ TestX.test_y ____",
        b" failed! Received signal: SIGSEGV",
        b"Command took >30min, returning 124",
        b"plain words of a passing test ",
        b"::test_ ",
        b": E501 ",
        // Literals of the telling-line forms that hold no signature's anchor: a long line
        // is searched around their own anchors.
        b"Caused by: java.io.IOException: x",
        b"SUMMARY: AddressSanitizer: heap-use-after-free",
        b"npm error code ELIFECYCLE",
        b"    assert x == 1",
        b"signal: killed",
        b"Timeout",
    ];
    let pytorch = pytorch_set();
    let bundled = bundled();
    for seed in 0..24 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut log = Vec::new();
        for _ in 0..rng.usize(1..300) {
            let long = rng.u32(0..50) == 0;
            let parts = if long {
                rng.usize(300..900)
            } else {
                rng.usize(0..8)
            };
            for _ in 0..parts {
                log.extend_from_slice(pieces[rng.usize(0..pieces.len())]);
                if long {
                    log.extend_from_slice(&[b'x'; 7]);
                }
            }
            if rng.u32(0..20) != 0 {
                log.push(b'\n');
            }
        }
        for (name, set) in [("pytorch", &pytorch), ("bundled", &bundled)] {
            assert_same(set, &format!("seed {seed} with {name}"), &log);
        }
    }
}

#[test]
fn shipped_signatures_never_claim_the_same_line() {
    let set = bundled();
    for path in all_logs() {
        let c = set.classify(&std::fs::read(&path).unwrap());
        let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
        for m in &c.matches {
            for line in &m.lines {
                if let Some(other) = seen.insert(*line, &m.signature.0) {
                    panic!(
                        "{}:{line} matches both {other} and {}",
                        path.display(),
                        m.signature
                    );
                }
            }
        }
    }
}

#[test]
fn the_real_cuda_python_log_is_a_wait_until_timeout() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/logs/cuda-python/test-linux-64-py3.14t-cuda12.9.1-local-t4-failed.log");
    let Ok(log) = std::fs::read(&path) else {
        crate::common::skips::skipped(
            crate::common::skips::Need::Shared,
            &format!(
                "skipping: {} is absent (only in the development environment); \
                 fixtures/logs/wait-until-timeout.log covers the same shape",
                path.display()
            ),
        );
        return;
    };
    let c = bundled().classify(&log);
    let ids: Vec<&str> = c.matches.iter().map(|m| m.signature.0.as_str()).collect();
    assert_eq!(ids, ["wait-until-timeout"]);
    let m = &c.matches[0];
    assert_eq!(m.step.as_deref(), Some("Run run-tests core"));
    assert_eq!(m.tests.len(), 2);
    assert!(
        m.tests
            .iter()
            .all(|t| t.starts_with("tests/graph/test_graph_definition_lifetime.py::test_"))
    );
}
