//! `flakestat report --tests` on the bundled story (issue 22): the 3.14t `_wait_until` tests
//! are named with their job counts and the verdict `flaky`, and the figures are the same from a
//! survey whose signatures match none of the story's failures.

use std::path::Path;

use serde_json::Value;

use crate::common::{STORY_WINDOW, flakestat, ok, signatures, survey_story, surveyed_story};

const FLAKE_FILE: &str = "tests/graph/test_graph_definition_lifetime.py";
const FLAKE_TESTS: [&str; 4] = [
    "test_kernel_args_buffer_lifetime",
    "test_memcpy_buffer_allocations_released_after_graph_destroyed",
    "test_host_callback_closure_released_after_graph_destroyed",
    "test_conditional_handle_released_with_graph",
];

fn report(store: &Path, sigs: &Path, extra: &[&str]) -> Vec<u8> {
    ok(flakestat()
        .args(["-q", "report", "--tests"])
        .args(STORY_WINDOW)
        .arg("--cache-dir")
        .arg(store)
        .arg("--signatures")
        .arg(sigs)
        .args(extra)
        .output()
        .unwrap())
    .stdout
}

fn tests_of(doc: &Value) -> Vec<Value> {
    assert_eq!(doc["schema"], 1);
    doc["tests"].as_array().unwrap().clone()
}

#[test]
fn the_wait_until_tests_are_flaky_with_their_job_counts_with_or_without_signatures() {
    let json = report(surveyed_story(), &signatures(), &["--format", "json"]);
    let doc: Value = serde_json::from_slice(&json).unwrap();
    let tests = tests_of(&doc);
    for name in FLAKE_TESTS {
        let id = format!("{FLAKE_FILE}::{name}");
        let t = tests
            .iter()
            .find(|t| t["id"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} missing: {tests:?}"));
        assert_eq!(t["verdict"], "flaky", "{t}");
        assert_eq!(t["file"], FLAKE_FILE);
        assert_eq!(t["runner"], "pytest");
        assert!(t["jobs_failed"].as_u64().unwrap() > 0);
        assert!(
            t["cells"]["python"]
                .as_array()
                .unwrap()
                .contains(&Value::from("3.14t")),
            "{t}"
        );
        assert!(
            t["signatures"]["wait-until-timeout"].as_u64().unwrap() > 0,
            "{t}"
        );
    }

    // A survey of the same story whose one signature matches nothing: the same tests, the same
    // figures, only no signature beside them.
    let sigs = tempfile::tempdir().unwrap();
    std::fs::write(
        sigs.path().join("never.toml"),
        "title = \"never\"\npattern = 'this line is in no log of the story'\n",
    )
    .unwrap();
    let store = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    survey_story(store.path(), sigs.path());
    let bare: Value =
        serde_json::from_slice(&report(store.path(), sigs.path(), &["--format", "json"])).unwrap();
    let strip = |tests: Vec<Value>| -> Vec<Value> {
        tests
            .into_iter()
            .map(|mut t| {
                t.as_object_mut().unwrap().remove("signatures");
                t
            })
            .collect()
    };
    assert_eq!(strip(tests_of(&bare)), strip(tests));

    // The quarantine list: the flaky ids, one per line.
    let ids = String::from_utf8(report(surveyed_story(), &signatures(), &["--ids"])).unwrap();
    for name in FLAKE_TESTS {
        assert!(
            ids.lines().any(|l| l == format!("{FLAKE_FILE}::{name}")),
            "{ids}"
        );
    }
    // Markdown: one row per test, the verdict in bold.
    let md = String::from_utf8(report(
        surveyed_story(),
        &signatures(),
        &["--format", "markdown"],
    ))
    .unwrap();
    assert!(md.contains("| Test | File | Jobs failed |"), "{md}");
    assert!(md.contains("**flaky**"), "{md}");
}
