//! The overview's headline against its sections and the JSON (issue 40, item 3): the failed
//! jobs no signature explains are the jobs whose log matched none (the groups of "Unclassified
//! failures") plus those with no log to read (listed after them, by reason), and the headline,
//! the section and the JSON say the same numbers.

use crate::common::{self, flakestat, ok, story_dir};

/// `report` over the story from 2026-05-20 (surveyed first), in `format`: its stdout.
fn report(cache: &std::path::Path, format: &str) -> String {
    let out = ok(flakestat()
        .args(["-q", "report", "--replay"])
        .arg(story_dir())
        .args(["--since", "2026-05-20", "--format", format, "--cache-dir"])
        .arg(cache)
        // Wide enough for the headline on one line of the table.
        .env("COLUMNS", "1000")
        .output()
        .expect("the binary runs"));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_headline_counts_unreadable_logs_apart_as_its_sections_and_json_do() {
    let cache = tempfile::tempdir().unwrap();
    ok(flakestat()
        .args(["-q", "survey", "--replay"])
        .arg(story_dir())
        .args(["--since", "2026-05-20", "--format", "json", "--cache-dir"])
        .arg(cache.path())
        .arg("--signatures")
        .arg(common::signatures())
        .output()
        .expect("the binary runs"));
    let json: serde_json::Value = serde_json::from_str(&report(cache.path(), "json")).unwrap();
    let n = |key: &str| {
        json[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key}: {json}"))
    };
    let sum = |key: &str| -> u64 {
        json[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["jobs"].as_u64().unwrap())
            .sum()
    };
    let (failed, classified, unclassified) = (
        n("jobs_failed"),
        n("jobs_classified"),
        n("jobs_unclassified"),
    );
    let unreadable = n("jobs_log_unreadable");
    let (grouped, by_reason) = (sum("unclassified"), sum("logs_unknown"));
    assert_eq!(classified + unclassified, failed);
    assert_eq!(unreadable, by_reason, "the sum of logs_unknown");
    assert_eq!(grouped + unreadable, unclassified, "{json}");
    // The story has both kinds from 2026-05-20 (expired and missing logs among them).
    assert!(grouped > 0 && unreadable > 0, "{grouped} {unreadable}");

    let md = report(cache.path(), "markdown");
    let headline = format!(
        "{failed} failed jobs: {classified} matched a signature, {unclassified} unclassified \
         ({grouped} matched no signature, {unreadable} logs unreadable)."
    );
    assert!(md.contains(&headline), "no {headline:?} in:\n{md}");
    let section = md
        .split("## Unclassified failures")
        .nth(1)
        .expect("the section");
    assert!(
        section.contains(&format!(
            "{grouped} failed jobs whose log matched no signature"
        )),
        "{section}"
    );
    assert!(
        section.contains(&format!(
            "{unreadable} failed jobs whose log could not be read"
        )),
        "{section}"
    );
    // The terminal table says the same.
    let table = report(cache.path(), "table");
    assert!(
        table.contains(&format!(
            "{unclassified} unclassified ({grouped} matched no signature"
        )),
        "{table}"
    );
}
