//! Every output format of the story, compared with the files in `fixtures/reports/`: a change
//! to what a report says shows up as a diff in review. `FLAKESTAT_BLESS=1 cargo test --test
//! report_golden` rewrites them.

use std::path::PathBuf;

use crate::report_fixture::*;
use flakestat::analysis::{AnalysisConfig, analyze};
use flakestat::model::SignatureId;
use flakestat::report::{Format, RenderOptions, render};

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/reports")
        .join(name)
}

fn check(name: &str, actual: &[u8]) {
    let path = golden(name);
    if std::env::var_os("FLAKESTAT_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run with FLAKESTAT_BLESS=1", path.display()));
    if expected != actual {
        let actual = String::from_utf8_lossy(actual);
        let expected = String::from_utf8_lossy(&expected);
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{} differs from the output at line {}:\n  expected: {:?}\n  actual:   {:?}\n(FLAKESTAT_BLESS=1 rewrites it)",
            path.display(),
            first + 1,
            expected.lines().nth(first),
            actual.lines().nth(first)
        );
    }
}

#[test]
fn every_format_of_the_story() {
    let (snapshot, sigs, _) = cuda_story();
    let views = [
        ("overview", AnalysisConfig::default()),
        (
            "signature",
            AnalysisConfig {
                focus: Some(SignatureId(SIG.into())),
                ..AnalysisConfig::default()
            },
        ),
    ];
    for (view, config) in views {
        let data = analyze(&snapshot, &sigs, &config);
        for (format, ext) in [
            (Format::Markdown, "md"),
            (Format::Table, "txt"),
            (Format::Json, "json"),
            (Format::Html, "html"),
        ] {
            let mut out = Vec::new();
            render(&data, format, &RenderOptions::default(), &mut out).unwrap();
            check(&format!("story-{view}.{ext}"), &out);
        }
    }
}
