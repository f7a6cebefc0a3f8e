//! `flakestat report --tests` on the bundled story (issue 22): the 3.14t `_wait_until` tests
//! are named with their job counts and the verdict `flaky`, and the figures are the same from a
//! survey whose signatures match none of the story's failures. The expected counts are read
//! from the generated dataset (its logs' `FAILED` summary lines), leaving out what the analysis
//! must leave out: runs outside the window and runs of PRs changing a file beside the test; they
//! are also the seed's own hand-survey counts, 6, 5, 4 and 6 jobs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{DateTime, Utc};
use flakestat::fake::scenario::cuda_python::{FLAKE_MESSAGE, expected};
use flakestat::fake::{Dataset, FakeLog, FakeRun};
use serde_json::Value;

use crate::common::{
    STORY_WINDOW, flakestat, ok, pr_of, signatures, story_dir, survey_story, surveyed_story,
};

const FLAKE_FILE: &str = "tests/graph/test_graph_definition_lifetime.py";
/// The jobs in which each of `FLAKE_TESTS` failed, as the seed's hand survey counted them.
const SURVEY_JOBS: [u64; 4] = [6, 5, 4, 6];
const FLAKE_TESTS: [&str; 4] = [
    "test_kernel_args_buffer_lifetime",
    "test_memcpy_buffer_allocations_released_after_graph_destroyed",
    "test_slot_owners_released_after_graph_destroyed",
    "test_pending_call_queue_saturation_preserves_cleanup",
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

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// The flake's failed job executions (every attempt) in the story's window (`--until` is a
/// whole day: up to 2026-08-01 00:00), leaving out the runs of PRs that change a file in
/// `tests/graph/` (the related PR #2362 edits the test file itself, the fork PR #2370 a test
/// beside it), as read from their logs.
struct Hits {
    /// Per flaky test: the jobs whose log's summary names it.
    per_test: BTreeMap<&'static str, u64>,
    /// Jobs whose log holds the assertion.
    jobs: u64,
    /// Of `jobs`, those whose log names no failing test (no `FAILED` line, summary or verbose).
    unnamed: u64,
    /// Per flaky test: the distinct jobs (run and job name: a re-run of a job is the same job)
    /// whose log's summary names it, as the seed's hand survey counted.
    distinct_per_test: BTreeMap<&'static str, BTreeSet<(u64, String)>>,
    /// The distinct jobs among `jobs`, and among `unnamed`.
    distinct: BTreeSet<(u64, String)>,
    distinct_unnamed: BTreeSet<(u64, String)>,
}

fn expected_hits() -> Hits {
    let ds = Dataset::load(&story_dir()).unwrap();
    let (since, until) = (at("2026-06-15T00:00:00Z"), at("2026-08-01T00:00:00Z"));
    let related = |run: &FakeRun| {
        pr_of(run).is_some_and(|n| {
            ds.pulls.iter().any(|p| {
                p.number == n && p.files.iter().any(|f| f.filename.contains("tests/graph/"))
            })
        })
    };
    let mut hits = Hits {
        per_test: BTreeMap::new(),
        jobs: 0,
        unnamed: 0,
        distinct_per_test: BTreeMap::new(),
        distinct: BTreeSet::new(),
        distinct_unnamed: BTreeSet::new(),
    };
    for run in ds
        .runs
        .iter()
        .filter(|r| r.run.created_at >= since && r.run.created_at < until && !related(r))
    {
        for job in run.all_jobs().iter().filter(|j| j.is_failed()) {
            let Some(FakeLog::Text(log)) = ds.logs.get(&job.id) else {
                continue;
            };
            if !log.contains(FLAKE_MESSAGE) {
                continue;
            }
            let key = (run.run.id.0, job.name.clone());
            hits.jobs += 1;
            hits.distinct.insert(key.clone());
            if !log.contains("FAILED") {
                hits.unnamed += 1;
                hits.distinct_unnamed.insert(key.clone());
            }
            for name in FLAKE_TESTS {
                let summary = format!("FAILED {FLAKE_FILE}::{name} - ");
                if log.contains(&summary) {
                    *hits.per_test.entry(name).or_insert(0) += 1;
                    hits.distinct_per_test
                        .entry(name)
                        .or_default()
                        .insert(key.clone());
                }
            }
        }
    }
    hits
}

fn tests_of(doc: &Value) -> Vec<Value> {
    assert_eq!(doc["schema"], 1);
    doc["tests"].as_array().unwrap().clone()
}

#[test]
fn the_wait_until_tests_are_flaky_with_their_job_counts_with_or_without_signatures() {
    let hits = expected_hits();
    let expected = &hits.per_test;
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
        assert_eq!(t["jobs_failed"], expected[name], "{name}: {t}");
        // The related PRs' runs (#2362 fails on 3.12 jobs too) are left out: 3.14t only.
        assert_eq!(t["cells"]["python"], serde_json::json!(["3.14t"]), "{t}");
        assert!(
            t["cells_never_hit"]["python"]
                .as_array()
                .unwrap()
                .contains(&Value::from("3.12")),
            "{t}"
        );
        assert_eq!(
            t["signatures"]["wait-until-timeout"], t["jobs_failed"],
            "{t}"
        );
        // The related PR #2362 fails these two on its own runs: left out, and said so.
        if name == FLAKE_TESTS[0] || name == FLAKE_TESTS[1] {
            assert!(t["jobs_left_out"].as_u64().unwrap() > 0, "{t}");
        }
        // No failure before the culprit merged counts: the first is the story's first hit,
        // and its time is written with `Z` like every JSON timestamp.
        let first = t["first_failure"]["created_at"].as_str().unwrap();
        assert!(first >= expected::FIRST_HIT, "{t}");
        assert!(first.ends_with('Z'), "{t}");
    }
    // The figures themselves: the seed's hand survey counted 6, 5, 4 and 6 jobs, one failing
    // test each, and the story's logs say the same (a job re-run is the same job: the run green
    // only at its 6th attempt fails one job five times).
    assert_eq!(
        FLAKE_TESTS.map(|n| hits.distinct_per_test[n].len() as u64),
        SURVEY_JOBS,
        "{:?}",
        hits.distinct_per_test
    );
    // The signature hits 29 job executions in 24 jobs: the three jobs beyond the 21 named ones
    // (four executions) hung on the worker-thread test, interrupted before pytest reported a
    // failure, so their logs name no test.
    assert_eq!(hits.jobs, expected::FLAKY_JOBS as u64);
    assert_eq!((hits.unnamed, hits.distinct_unnamed.len()), (4, 3));
    assert_eq!(
        SURVEY_JOBS.iter().sum::<u64>() + hits.distinct_unnamed.len() as u64,
        hits.distinct.len() as u64,
        "one failing test in every job that names one"
    );
    assert_eq!(
        expected.values().sum::<u64>() + hits.unnamed,
        hits.jobs,
        "one failing test in every execution that names one"
    );
    let counts: BTreeMap<String, u64> = tests
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["jobs_failed"].as_u64().unwrap(),
            )
        })
        .collect();
    let sig = report_json_signature(surveyed_story());
    for name in FLAKE_TESTS {
        let id = format!("{FLAKE_FILE}::{name}");
        assert_eq!(sig["tests"][&id].as_u64(), counts.get(&id).copied(), "{id}");
    }
    // The jobs that name no test are the signature's all the same: it counts every job whose
    // log holds the assertion, and its tests account for all the others.
    assert_eq!(sig["jobs_hit"], hits.jobs, "{sig:#}");
    let named: u64 = sig["tests"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(named + hits.unnamed, hits.jobs, "{sig:#}");
    assert!(doc["since"].as_str().unwrap().ends_with('Z'), "{doc}");
    assert_eq!(doc["complete"], true);

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
    // The onset is compared too: the survey fetches the ancestry the tests' onsets read as it
    // does the signatures'. Not compared: the executions, which count the runs of PRs whose
    // files the survey fetched for the signatures' hits (a survey whose signatures hit nothing
    // knows fewer PRs' files, so fewer runs are found related and left out).
    let strip = |tests: Vec<Value>| -> Vec<Value> {
        tests
            .into_iter()
            .map(|mut t| {
                let t_obj = t.as_object_mut().unwrap();
                t_obj.remove("signatures");
                t_obj.remove("executions");
                t
            })
            .collect()
    };
    assert_eq!(strip(tests_of(&bare)), strip(tests.clone()));

    // A survey with no signature files at all (a repository nobody has written one for yet):
    // one line says so, and the tests and their figures are the same again.
    let none = tempfile::tempdir().unwrap();
    let store = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    survey_story(store.path(), none.path());
    let unsigned: Value =
        serde_json::from_slice(&report(store.path(), none.path(), &["--format", "json"])).unwrap();
    for test in tests_of(&unsigned) {
        let with = &test["signatures"];
        assert!(
            with.as_array().is_some_and(|a| a.is_empty())
                || with.as_object().is_some_and(|o| o.is_empty()),
            "no signature co-occurs without signatures: {test}"
        );
    }
    assert_eq!(strip(tests_of(&unsigned)), strip(tests.clone()));

    // The quarantine list: the flaky ids with at least two counted failures, one per line;
    // `--ids` is the old spelling. On the story: the four `_wait_until` tests and nothing else
    // (no test of the machine-wide night; not the two tests flaky from one failure each).
    let ids = String::from_utf8(report(
        surveyed_story(),
        &signatures(),
        &["--format", "ids"],
    ))
    .unwrap();
    let mut listed: Vec<&str> = ids.lines().collect();
    listed.sort_unstable();
    let mut four: Vec<String> = FLAKE_TESTS
        .iter()
        .map(|name| format!("{FLAKE_FILE}::{name}"))
        .collect();
    four.sort();
    assert_eq!(listed, four, "{ids}");
    // `--min-failures 1`: the two flaky from one failure and one green on the same commit join.
    let one = String::from_utf8(report(
        surveyed_story(),
        &signatures(),
        &["--format", "ids", "--min-failures", "1"],
    ))
    .unwrap();
    assert_eq!(one.lines().count(), 6, "{one}");
    assert!(
        one.contains("tests/test_context.py::test_context_set_current"),
        "{one}"
    );
    assert_eq!(
        report(surveyed_story(), &signatures(), &["--ids"]),
        ids.as_bytes()
    );
    // Markdown: one row per test, the verdict in bold.
    let md = String::from_utf8(report(
        surveyed_story(),
        &signatures(),
        &["--format", "markdown"],
    ))
    .unwrap();
    assert!(md.contains("| Test | File | Failed in |"), "{md}");
    assert!(md.contains("**flaky**"), "{md}");
    // Since when, in every format: the four are flaky since #2371 merged.
    let table = String::from_utf8(report(
        surveyed_story(),
        &signatures(),
        &["--format", "table"],
    ))
    .unwrap();
    let html = String::from_utf8(report(
        surveyed_story(),
        &signatures(),
        &["--format", "html"],
    ))
    .unwrap()
    .replace("<wbr>", "");
    for name in FLAKE_TESTS {
        let t = tests
            .iter()
            .find(|t| t["id"] == format!("{FLAKE_FILE}::{name}").as_str())
            .unwrap();
        assert_eq!(t["onset"]["kind"], "placed", "{t}");
        assert_eq!(t["onset"]["pr"], 2371, "{t}");
        assert_eq!(t["onset"]["text"], "since merge of #2371", "{t}");
        assert!(
            t["onset"]["clean_runs_before"].as_u64().unwrap() > 100,
            "{t}"
        );
        // Failed in X of Y executions of the jobs that ran it.
        assert!(
            t["executions"].as_u64().unwrap() > 10 * t["jobs_failed"].as_u64().unwrap(),
            "{t}"
        );
        let line = format!("{FLAKE_FILE}::{name}`: flaky since merge of #2371 (");
        assert!(md.contains(&line), "{line}: {md}");
        for page in [&table, &html] {
            assert!(
                page.lines().any(|l| l.contains(name)
                    && l.contains(": flaky since merge of #2371 (no failure in")),
                "{name}: {page}"
            );
        }
    }
}

/// Issue 39: the machine-wide night is one incident naming its pool, none of its tests is
/// flaky on its account; the test two PRs broke on their own runs names no merge.
#[test]
fn an_incident_is_one_section_and_a_test_broken_on_prs_own_runs_names_no_merge() {
    let doc: Value = serde_json::from_slice(&report(
        surveyed_story(),
        &signatures(),
        &["--format", "json"],
    ))
    .unwrap();
    let incidents = doc["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1, "{incidents:?}");
    let night = &incidents[0];
    assert_eq!(night["kind"], "machine_wide");
    assert_eq!(night["pool"], "linux-arm64-gpu-a100-latest-1");
    assert_eq!(night["jobs"].as_array().unwrap().len(), 6);
    assert_eq!(night["tests"], 31);
    assert_eq!(night["jobs_passed_elsewhere"], 24);
    assert!(
        night["line"]
            .as_str()
            .unwrap()
            .contains("Cannot set NULL context as current"),
        "{night}"
    );
    // None of its tests is counted on its account: the one that also failed elsewhere counts
    // that failure alone, the others failed in no counted job.
    let tests = tests_of(&doc);
    for t in &tests {
        assert!(t["jobs_failed"].as_u64().unwrap() + t["flaky_in_job"].as_u64().unwrap() > 0);
        if t["id"] == "tests/test_context.py::test_context_set_current" {
            assert_eq!(
                (t["jobs_failed"].as_u64(), t["jobs_in_incidents"].as_u64()),
                (Some(1), Some(6))
            );
        } else {
            assert_eq!(t["jobs_in_incidents"], 0, "{t}");
        }
    }
    let left_out = doc["left_out"].as_array().unwrap();
    assert_eq!(left_out.len(), 30, "{left_out:?}");
    assert!(
        left_out
            .iter()
            .all(|t| t["verdict"] == "left_out" && t["jobs_in_incidents"] == 6),
        "{left_out:?}"
    );
    // One section naming the pool, in the text formats.
    for format in ["markdown", "table", "html"] {
        let out = String::from_utf8(report(
            surveyed_story(),
            &signatures(),
            &["--format", format],
        ))
        .unwrap()
        .replace("<wbr>", "");
        assert_eq!(out.matches("Incidents").count(), 1, "{format}: {out}");
        assert!(out.contains("linux-arm64-gpu-a100-latest-1"), "{format}");
        assert!(
            out.contains("30 tests failed only in the incidents below"),
            "{format}"
        );
    }
    // The overview report has the section too.
    let overview: Value = serde_json::from_str(&story_report("json", &[])).unwrap();
    assert_eq!(overview["incidents"].as_array().unwrap().len(), 1);
    assert!(story_report("markdown", &[]).contains("## Incidents"));

    // Broken by two PRs on their own runs: no merge named, the PRs are.
    let id = "tests/test_launcher.py::test_launch_config_rejects_zero_grid";
    let t = tests.iter().find(|t| t["id"] == id).unwrap();
    assert_eq!(t["verdict"], "broken", "{t}");
    assert_eq!(t["culprit"]["kind"], "pull_requests", "{t}");
    assert_eq!(t["culprit"]["prs"], serde_json::json!([2326, 2330]), "{t}");
    assert_eq!(t["onset"]["kind"], "pull_requests", "{t}");
    assert!(
        t["onset"]["pr"].is_null() && t["culprit"]["sha"].is_null(),
        "{t}"
    );
    let md = String::from_utf8(report(
        surveyed_story(),
        &signatures(),
        &["--format", "markdown"],
    ))
    .unwrap();
    let row = md
        .lines()
        .find(|l| l.contains("test_launch_config_rejects_zero_grid"))
        .unwrap();
    assert!(
        row.contains("on PRs #2326, #2330 (their own runs)"),
        "{row}"
    );
    assert!(!row.contains("merge"), "{row}");
}

/// Issue 39: a window whose failures of a test were all in related PRs' runs lists no failed
/// test and says what was left out.
#[test]
fn a_window_whose_failures_were_all_left_out_says_so() {
    // 2026-07-09/10: the related PR #2362's runs fail the flake's assertion; nothing else fails.
    let two_days = |format: &str| {
        ok(flakestat()
            .args(["-q", "report", "--tests", "--format", format])
            .args([
                "--repo",
                "NVIDIA/cuda-python",
                "--since",
                "2026-07-09",
                "--until",
                "2026-07-11",
            ])
            .arg("--cache-dir")
            .arg(surveyed_story())
            .arg("--signatures")
            .arg(signatures())
            .output()
            .unwrap())
        .stdout
    };
    let doc: Value = serde_json::from_slice(&two_days("json")).unwrap();
    assert_eq!(tests_of(&doc), Vec::<Value>::new(), "{doc:#}");
    let left_out = doc["left_out"].as_array().unwrap();
    assert!(!left_out.is_empty(), "{doc:#}");
    for t in left_out {
        assert_eq!(t["verdict"], "left_out", "{t}");
        assert_eq!(t["jobs_failed"], 0, "{t}");
        assert!(t["jobs_left_out"].as_u64().unwrap() > 0, "{t}");
    }
    let md = String::from_utf8(two_days("markdown")).unwrap();
    assert!(md.contains("0 tests failed in the window"), "{md}");
    let n = left_out[0]["jobs_left_out"].as_u64().unwrap();
    assert!(
        md.contains(&format!(
            "{n} failures in related or unknown PRs' runs, left out"
        )),
        "{md}"
    );
}

/// The wait-until signature's section of the JSON report.
fn report_json_signature(store: &Path) -> Value {
    let out = ok(flakestat()
        .args(["-q", "report", "--format", "json"])
        .args(STORY_WINDOW)
        .arg("--cache-dir")
        .arg(store)
        .arg("--signatures")
        .arg(signatures())
        .output()
        .unwrap())
    .stdout;
    let doc: Value = serde_json::from_slice(&out).unwrap();
    doc["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "wait-until-timeout")
        .unwrap()
        .clone()
}

#[test]
fn format_ids_needs_tests_and_an_incomplete_window_is_named_first() {
    let out = flakestat()
        .args(["-q", "report", "--format", "ids"])
        .args(STORY_WINDOW)
        .arg("--cache-dir")
        .arg(surveyed_story())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--format ids") && err.contains("--tests"),
        "{err}"
    );

    // A window reaching past what the survey listed: the first line says so, exit 9.
    let out = flakestat()
        .args(["-q", "report", "--tests", "--format", "markdown"])
        .args(["--repo", "NVIDIA/cuda-python", "--since", "2026-06-15"])
        .args(["--until", "2026-08-01"])
        .arg("--cache-dir")
        .arg(surveyed_story())
        .arg("--signatures")
        .arg(signatures())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(9));
    let md = String::from_utf8(out.stdout).unwrap();
    let first = md.lines().next().unwrap();
    assert!(
        first.starts_with("incomplete: runs from 2026-08-01"),
        "{md}"
    );
    assert!(md.contains("# Failing tests in NVIDIA/cuda-python"), "{md}");
}

/// `report` over the story (no `--tests`) in `format`, with `extra` flags.
fn story_report(format: &str, extra: &[&str]) -> String {
    let out = ok(flakestat()
        .args(["-q", "report", "--format", format])
        .args(STORY_WINDOW)
        .arg("--cache-dir")
        .arg(surveyed_story())
        .arg("--signatures")
        .arg(signatures())
        .args(extra)
        .env("COLUMNS", "400")
        .output()
        .unwrap())
    .stdout;
    String::from_utf8(out).unwrap()
}

/// The one unclassified failure of the story that names a test: a pytest run of
/// `test_send_buffers.py` whose child process never reported ready.
const IPC_TEST: &str =
    "tests/memory_ipc/test_send_buffers.py::TestIpcReexport::test_main[DeviceMR]";

#[test]
fn the_unclassified_table_names_the_failing_tests_of_unclassified_jobs() {
    let doc: Value = serde_json::from_str(&story_report("json", &[])).unwrap();
    let groups = doc["unclassified"].as_array().unwrap();
    let ipc = groups
        .iter()
        .find(|g| {
            g["lines"][0]
                .as_str()
                .unwrap()
                .contains("test_send_buffers")
        })
        .unwrap_or_else(|| panic!("no IPC group: {groups:#?}"));
    assert_eq!(ipc["tests"], serde_json::json!({ IPC_TEST: 1 }), "{ipc:#}");
    // The build failures name no test: an empty map, not a missing field.
    let builds: Vec<&Value> = groups
        .iter()
        .filter(|g| g["job_names"][0].as_str().unwrap().starts_with("Build"))
        .collect();
    assert_eq!(builds.len(), 2, "{groups:#?}");
    assert!(builds.iter().all(|g| g["tests"] == serde_json::json!({})));

    // Markdown: the column, and the id with its job count in the IPC group's row.
    let md = story_report("markdown", &[]);
    assert!(
        md.contains(
            "| Jobs | Runs | Error lines | Failing tests | Job names | Last seen | Example |"
        ),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| 1 | 1 | `FAILED tests/memory_ipc"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains(&format!("| `{IPC_TEST}` (1) |")), "{row}");
    // The terminal table and the page name it too.
    let table = story_report("table", &[]);
    assert!(table.contains("Failing tests"), "{table}");
    assert!(table.contains(&format!("{IPC_TEST} (1)")), "{table}");
    let html = story_report("html", &[]).replace("<wbr>", "");
    assert!(html.contains("<th>Failing tests</th>"), "{html}");
    assert!(html.contains(IPC_TEST), "{html}");
}

#[test]
fn the_signature_account_lists_its_tests_with_their_job_counts_in_every_format() {
    let focus = ["--signature", "wait-until-timeout"];
    let doc: Value = serde_json::from_str(&story_report("json", &focus)).unwrap();
    let tests = doc["signatures"][0]["tests"].as_object().unwrap().clone();
    let counts: Vec<(String, u64)> = FLAKE_TESTS
        .iter()
        .map(|name| {
            let id = format!("{FLAKE_FILE}::{name}");
            let n = tests[&id].as_u64().unwrap();
            (id, n)
        })
        .collect();
    let hits = expected_hits();
    assert_eq!(
        counts.iter().map(|(_, n)| *n).collect::<Vec<_>>(),
        FLAKE_TESTS.map(|n| hits.per_test[n]).to_vec()
    );
    let md = story_report("markdown", &focus);
    let section = &md[md.find("### Tests").expect("a Tests section")..];
    let section = &section[..section.find("### Failing jobs").unwrap()];
    assert!(section.contains("| Test | Hits |"), "{section}");
    // Where the numbers are: the hits whose log names no test are said (issue 40).
    assert_eq!(doc["signatures"][0]["jobs_naming_no_test"], hits.unnamed);
    let unnamed = format!(
        "{} of the {} hit jobs named no failing test",
        hits.unnamed, hits.jobs
    );
    assert!(section.contains(&unnamed), "{section}");
    for (id, n) in &counts {
        assert!(section.contains(&format!("| `{id}` | {n} |")), "{section}");
    }
    let table = story_report("table", &focus);
    for (id, n) in &counts {
        assert!(
            table
                .lines()
                .any(|l| l.contains(id.as_str()) && l.trim_end().ends_with(&format!("{n} │"))),
            "{id} {n}: {table}"
        );
    }
    // Long words wrap at their separators (`<wbr>`): read the page without them.
    let html = story_report("html", &focus).replace("<wbr>", "");
    assert!(html.contains("<h3>Tests</h3>"), "{html}");
    for (id, n) in &counts {
        let name = id.rsplit("::").next().unwrap();
        assert!(html.contains(name), "{id}");
        let at = html.find(name).unwrap();
        assert!(
            html[at..].contains(&format!("<td class=\"num\">{n}</td>")),
            "{id} {n}"
        );
    }
}

/// Issue 39, item 3, in the signature account: the runs where PRs #2326 and #2330 broke
/// `test_launch_config_rejects_zero_grid` on their own branches match `cuda-error` (the test
/// fails with a `CUDAError`). The tests view says the test "fails on PRs #2326, #2330 (their
/// own runs)"; the signature account says the same of those runs and counts none of them as a
/// hit on a PR "touching none of its paths". Which runs those are is read from the story's
/// logs, not from the analysis.
#[test]
fn the_signature_account_leaves_out_prs_own_breakage_as_the_tests_view_does() {
    const LAUNCHER: &str = "tests/test_launcher.py::test_launch_config_rejects_zero_grid";
    let ds = Dataset::load(&story_dir()).unwrap();
    let (since, until) = (at("2026-06-15T00:00:00Z"), at("2026-08-01T00:00:00Z"));
    let mut broken: BTreeSet<(u64, u64)> = BTreeSet::new();
    for run in ds
        .runs
        .iter()
        .filter(|r| r.run.created_at >= since && r.run.created_at < until)
    {
        let fails = run.all_jobs().iter().filter(|j| j.is_failed()).any(|j| {
            matches!(ds.logs.get(&j.id), Some(FakeLog::Text(log))
                if log.contains(&format!("FAILED {LAUNCHER} - ")))
        });
        if fails {
            broken.insert((run.run.id.0, pr_of(run).expect("only PRs' runs fail it")));
        }
    }
    let prs: BTreeSet<u64> = broken.iter().map(|&(_, pr)| pr).collect();
    assert_eq!(prs, BTreeSet::from([2326, 2330]));

    let doc: Value = serde_json::from_str(&story_report("json", &[])).unwrap();
    let sigs = doc["signatures"].as_array().unwrap();
    let cuda = sigs.iter().find(|s| s["id"] == "cuda-error").unwrap();
    let own: BTreeSet<(u64, u64)> = cuda["own_breakage_runs"]
        .as_array()
        .unwrap_or_else(|| panic!("{cuda:#}"))
        .iter()
        .map(|r| {
            assert_eq!(r["tests"], serde_json::json!([LAUNCHER]), "{r}");
            (r["run_id"].as_u64().unwrap(), r["pr"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(own, broken);
    // None of them is a hit, on a PR or anywhere: what is left is main's.
    let hit_runs: BTreeSet<u64> = cuda["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["run_id"].as_u64().unwrap())
        .collect();
    assert!(hit_runs.iter().all(|r| own.iter().all(|&(o, _)| o != *r)));
    assert_eq!(cuda["runs_hit_pr"], 0, "{cuda:#}");
    assert_eq!(
        cuda["runs_hit"], cuda["runs_hit_default_branch"],
        "{cuda:#}"
    );
    // The flake's account is untouched: no PR broke its tests on its own runs.
    let flake = sigs
        .iter()
        .find(|s| s["id"] == "wait-until-timeout")
        .unwrap();
    assert!(flake.get("own_breakage_runs").is_none(), "{flake:#}");
    assert_eq!(flake["runs_hit"], expected::HIT_RUNS);
    assert_eq!(flake["runs_hit_pr_unrelated"], expected::HIT_RUNS_ON_PRS);

    // In words, as the tests view words it.
    let md = story_report("markdown", &[]);
    let line = md
        .lines()
        .find(|l| l.starts_with("- `cuda-error`"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        line.contains(&format!(
            "{} runs left out as PRs' own breakage: tests/test\\_launcher.py::test\\_launch\\_config\\_rejects\\_zero\\_grid fails on PRs #2326, #2330 (their own runs)",
            broken.len()
        )),
        "{line}"
    );
    assert!(
        !line.contains("on PRs touching none of its paths"),
        "{line}"
    );
}
