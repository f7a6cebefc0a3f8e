//! PyTorch's own log classifier, reproduced: its 102-rule `ruleset.toml`, imported with patterns
//! unchanged, must find the same line as PyTorch in each of 41 real CI logs (`MANIFEST.tsv`).
//!
//! Rule-priority semantics (documented in docs/matching.md): flakestat records every match; "the"
//! line is the *last* matching line of the matching signature whose id sorts first (imported ids
//! are numbered in ruleset order, so that is PyTorch's highest-priority matching rule).
//!
//! The data is a copy of `../shared/logs/pytorch` in `fixtures/pytorch` (BSD-3-Clause, see the
//! LICENSE there), so this runs in any clone.

use std::path::{Path, PathBuf};

use flakestat::model::{Classification, SignatureMatch};
use flakestat::signatures::{SignatureSet, import::import_pytorch, load_dir};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pytorch")
}

fn imported_set() -> SignatureSet {
    let ruleset = std::fs::read_to_string(data_dir().join("ruleset.toml")).unwrap();
    let imported = import_pytorch(&ruleset).unwrap();
    assert_eq!(imported.len(), 102);
    let dir = tempfile::tempdir().unwrap();
    for sig in &imported {
        std::fs::write(dir.path().join(format!("{}.toml", sig.id)), &sig.toml).unwrap();
    }
    let specs = load_dir(dir.path()).unwrap();
    SignatureSet::compile(specs).unwrap()
}

struct Case {
    file: String,
    line: u64,
    captures: String,
}

fn manifest() -> Vec<Case> {
    let text = std::fs::read_to_string(data_dir().join("MANIFEST.tsv")).unwrap();
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            Case {
                file: cols[0].to_string(),
                line: cols[2].parse().unwrap(),
                captures: cols.get(3).copied().unwrap_or("").to_string(),
            }
        })
        .collect()
}

/// PyTorch's pick: the first match by id, at its last matching line.
fn pick(c: &Classification) -> Option<(&SignatureMatch, u64)> {
    let m = c.matches.first()?;
    Some((m, *m.lines.last()?))
}

#[test]
fn imported_patterns_are_unchanged() {
    let ruleset: toml::Table =
        toml::from_str(&std::fs::read_to_string(data_dir().join("ruleset.toml")).unwrap()).unwrap();
    let originals: Vec<String> = ruleset["rule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pattern"].as_str().unwrap().to_string())
        .collect();
    let set = imported_set();
    let imported: Vec<String> = set.specs().iter().map(|s| s.pattern.clone()).collect();
    assert_eq!(imported, originals);
}

#[test]
fn finds_the_line_pytorch_finds_in_all_41_logs() {
    let set = imported_set();
    let cases = manifest();
    assert_eq!(cases.len(), 41);
    let mut wrong = Vec::new();
    for case in &cases {
        let log = std::fs::read(data_dir().join(&case.file)).unwrap();
        let c = set.classify(&log);
        match pick(&c) {
            Some((_, line)) if line == case.line => {}
            other => wrong.push(format!(
                "{}: expected line {} ({}), got {:?}",
                case.file,
                case.line,
                case.captures,
                other.map(|(m, l)| (m.signature.0.clone(), l))
            )),
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of 41 differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn fast_path_equals_reference_on_every_pytorch_log() {
    let set = imported_set();
    for case in manifest() {
        let log = std::fs::read(data_dir().join(&case.file)).unwrap();
        assert_eq!(
            set.classify(&log),
            set.classify_reference(&log),
            "{}",
            case.file
        );
    }
}

#[test]
fn every_pytorch_rule_has_a_literal_prefilter() {
    // Rules without a literal run their regex on every line; none of PyTorch's needs to.
    assert_eq!(imported_set().unfiltered(), Vec::<&str>::new());
}
