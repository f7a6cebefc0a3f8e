//! The terminal table: log text reaches the terminal without escape sequences or control
//! characters; colour only when asked for.

use crate::report_fixture::*;
use flakestat::analysis::{AnalysisConfig, analyze};
use flakestat::model::SignatureId;
use flakestat::report::{Format, RenderOptions, render};

fn table(config: &AnalysisConfig, options: &RenderOptions) -> String {
    let (snapshot, sigs, _) = cuda_story();
    let mut out = Vec::new();
    render(
        &analyze(&snapshot, &sigs, config),
        Format::Table,
        options,
        &mut out,
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

fn controls(s: &str) -> Vec<char> {
    s.chars().filter(|c| c.is_control() && *c != '\n').collect()
}

#[test]
fn no_escape_sequences_without_colour() {
    let out = table(&AnalysisConfig::default(), &RenderOptions::default());
    assert_eq!(controls(&out), Vec::<char>::new());
    // The hostile line is there, without its colour codes.
    assert!(out.contains("<script>alert(1)</script> red # not a heading"));
}

#[test]
fn colour_is_ours_only() {
    let options = RenderOptions {
        color: true,
        width: Some(100),
    };
    let out = table(&AnalysisConfig::default(), &options);
    assert!(out.contains("\u{1b}[1m"), "headings are bold");
    // The log's own red never reaches the terminal.
    assert!(!out.contains("\u{1b}[31m"));
    assert!(controls(&out).iter().all(|c| *c == '\u{1b}'));
}

#[test]
fn the_signature_account_lists_every_hit_with_its_link() {
    let (snapshot, sigs, story) = cuda_story();
    let config = AnalysisConfig {
        focus: Some(SignatureId(SIG.into())),
        ..AnalysisConfig::default()
    };
    let data = analyze(&snapshot, &sigs, &config);
    let mut out = Vec::new();
    render(&data, Format::Table, &RenderOptions::default(), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let links = data.signatures[0]
        .hits
        .iter()
        .filter(|h| out.contains(h.html_url.as_deref().unwrap()))
        .count() as u64;
    assert_eq!(links, story.jobs_hit);
}
