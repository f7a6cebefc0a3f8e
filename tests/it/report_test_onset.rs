//! Issue 39, item 2 ("onset per test"), for tests no signature matches: the survey fetches the
//! ancestry a test's first-occurrence analysis reads (the fork points of the runs around its
//! first failure, its suspects' changed files) as it does for a signature's, in both PR styles.
//! The bundled story is surveyed by the real binary against the fake GitHub with one signature
//! that matches no log: the four `_wait_until` tests are then failures nobody wrote a signature
//! for, and each still says since which merge it fails (#2371's, the story's construction).
//! Before, only the signatures' needs were fetched: the mirror branches' fork points were never
//! asked, and the tests were placed on the merges just before their first failures.

use std::collections::BTreeSet;
use std::path::Path;

use flakestat::fake::scenario::cuda_python::CULPRIT_PR;
use flakestat::fake::{Dataset, FakeGitHub, Faults};
use serde_json::Value;

use crate::common::{self, STORY_WINDOW, ok};

const FLAKE_FILE: &str = "tests/graph/test_graph_definition_lifetime.py";
const FLAKE_TESTS: [&str; 4] = [
    "test_kernel_args_buffer_lifetime",
    "test_memcpy_buffer_allocations_released_after_graph_destroyed",
    "test_slot_owners_released_after_graph_destroyed",
    "test_pending_call_queue_saturation_preserves_cleanup",
];

/// A signatures folder whose one signature matches no log of the story.
fn no_match() -> tempfile::TempDir {
    let sigs = tempfile::tempdir().unwrap();
    std::fs::write(
        sigs.path().join("never.toml"),
        "title = \"never\"\npattern = 'this line is in no log of the story'\n",
    )
    .unwrap();
    sigs
}

/// `flakestat ARGS` over the story's window, the store in `cache`, signatures from `sigs`:
/// its stdout, checked to exit 0.
fn run(args: &[&str], cache: &Path, sigs: &Path) -> String {
    let out = ok(common::flakestat()
        .args(args)
        .args(STORY_WINDOW)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--signatures")
        .arg(sigs)
        .env("GH_TOKEN", "tok")
        .env("NO_COLOR", "1")
        .output()
        .unwrap());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_test_no_signature_matches_says_since_which_merge_in_both_pr_styles() {
    let sigs = no_match();
    for style in ["mirror", "github"] {
        let dir = tempfile::tempdir().unwrap();
        let story = common::story_with(dir.path(), &format!("pr_style = \"{style}\"\n"));
        let ds = Dataset::load(&story).unwrap();
        // The heads a fork point can be asked for: runs on branches other than the default,
        // outside a `pull_request` event (the mirror branches `pull-request/<N>`).
        let fork_point_heads: BTreeSet<String> = ds
            .runs
            .iter()
            .filter(|r| r.run.event.as_str() != "pull_request")
            .filter(|r| r.run.head_branch.as_deref() != Some("main"))
            .map(|r| r.run.head_sha.0.clone())
            .collect();
        let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let api = gh.api_url();
        run(
            &["-q", "survey", "--api-url", &api, "--format", "json"],
            cache.path(),
            sigs.path(),
        );

        // The cost, from the fake's request log: each head's fork point asked once, only for
        // heads placed by their fork point (none in GitHub's style, whose PR runs are placed
        // by their creation time), each PR's files once.
        let paths: Vec<String> = gh.requests().into_iter().map(|r| r.path).collect();
        let compared: Vec<&str> = paths
            .iter()
            .filter_map(|p| p.split_once("/compare/main...").map(|(_, h)| h))
            .map(|h| h.split('?').next().unwrap())
            .collect();
        let distinct: BTreeSet<&str> = compared.iter().copied().collect();
        assert_eq!(distinct.len(), compared.len(), "{style}: {compared:?}");
        assert!(
            distinct.iter().all(|h| fork_point_heads.contains(*h)),
            "{style}: {compared:?}"
        );
        match style {
            "github" => assert!(compared.is_empty(), "{compared:?}"),
            _ => assert!(!compared.is_empty(), "mirror runs need their fork points"),
        }
        let files: Vec<&String> = paths.iter().filter(|p| p.contains("/files?")).collect();
        let distinct: BTreeSet<&&String> = files.iter().collect();
        assert_eq!(distinct.len(), files.len(), "{style}: {files:?}");

        // No signature matches their failures; each is flaky since #2371 merged.
        let doc: Value = serde_json::from_str(&run(
            &["-q", "report", "--tests", "--format", "json"],
            cache.path(),
            sigs.path(),
        ))
        .unwrap();
        let tests = doc["tests"].as_array().unwrap();
        let md = run(
            &["-q", "report", "--tests", "--format", "markdown"],
            cache.path(),
            sigs.path(),
        );
        let table = run(
            &["-q", "report", "--tests", "--format", "table"],
            cache.path(),
            sigs.path(),
        );
        let since = format!("since merge of #{CULPRIT_PR}");
        for name in FLAKE_TESTS {
            let id = format!("{FLAKE_FILE}::{name}");
            let t = tests
                .iter()
                .find(|t| t["id"] == id.as_str())
                .unwrap_or_else(|| panic!("{style}: {id} missing: {doc:#}"));
            let matched = &t["signatures"];
            assert!(
                matched.as_object().is_some_and(|o| o.is_empty())
                    || matched.as_array().is_some_and(|a| a.is_empty()),
                "{style}: no signature matches {t}"
            );
            assert_eq!(t["verdict"], "flaky", "{style}: {t}");
            assert_eq!(t["onset"]["kind"], "placed", "{style}: {t}");
            assert_eq!(t["onset"]["pr"], CULPRIT_PR, "{style}: {t}");
            assert_eq!(t["onset"]["text"], since.as_str(), "{style}: {t}");
            let line = format!("{id}`: flaky {since} (");
            assert!(md.contains(&line), "{style}: {line}: {md}");
            assert!(
                table
                    .lines()
                    .any(|l| l.contains(name) && l.contains(&format!(": flaky {since} ("))),
                "{style}: {name}: {table}"
            );
        }
    }
}
