//! `flakestat classify --tests` (issue 22): the failing and flaky tests of each runner's log, one
//! fixture per runner in `fixtures/tests/` (lines written from each runner's documented format,
//! `EXPECTED.tsv` naming the ids each must yield), JUnit XML, real logs of other projects, and a
//! snapshot of the table.

use std::path::Path;

use serde_json::Value;

use crate::common::{flakestat, root, snapshot_flakestat, snapshot_settings, transcript};

fn ids(file: &Value, key: &str) -> Vec<String> {
    file[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} missing in {file}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// `classify --tests --format json` of `paths`: the exit code and the document.
fn classify_json(paths: &[&Path]) -> (Option<i32>, Value) {
    classify_json_with(&["--tests"], paths)
}

fn classify_json_with(flags: &[&str], paths: &[&Path]) -> (Option<i32>, Value) {
    let cwd = tempfile::tempdir().unwrap();
    let out = flakestat()
        .args(["classify", "--format", "json"])
        .args(flags)
        .args(paths)
        .current_dir(cwd.path())
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), doc)
}

/// Every runner's fixture yields exactly the failing and flaky ids `EXPECTED.tsv` names; a log
/// of no test runner yields none.
#[test]
fn each_runner_fixture_yields_its_tests() {
    let dir = root().join("fixtures/tests");
    let expected = std::fs::read_to_string(dir.join("EXPECTED.tsv")).unwrap();
    let rows: Vec<Vec<&str>> = expected
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\t').collect())
        .collect();
    assert!(rows.len() >= 16, "one fixture per runner");
    let paths: Vec<_> = rows.iter().map(|r| dir.join(r[0])).collect();
    let refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    let (code, doc) = classify_json(&refs);
    assert_eq!(code, Some(0));
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), rows.len());
    for (row, file) in rows.iter().zip(files) {
        let split = |s: &str| -> Vec<String> {
            s.split('|')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        };
        assert_eq!(
            ids(file, "tests_failed"),
            split(row[1]),
            "{} failed",
            row[0]
        );
        assert_eq!(ids(file, "tests_flaky"), split(row[2]), "{} flaky", row[0]);
    }
}

/// Real logs of other projects: the tests their runners named, and none from the logs that ran
/// no tests (a build, a package resolution, a `gh run view --log` file of compile errors).
#[test]
fn real_logs_yield_their_tests_and_only_those() {
    let real = root().join("fixtures/real");
    let cases: &[(&str, &[&str])] = &[
        (
            "pytorch__pytorch__error_log_multiple_matches.txt",
            &[
                "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True",
            ],
        ),
        (
            "infrahouse__pytest-infrahouse__job-logs.txt",
            &["tests/test_elasticsearch.py::test_elasticsearch_fixture_structure"],
        ),
        ("dwerlich21__setup-simplificado__backend-errors.log", &[]),
        ("rowkeydb-com__zetasketch-cpp__failed_log.ghlog.txt", &[]),
        ("ImL1s__kotlin-crypto-pure__ci_log.cd09272.ghlog.txt", &[]),
        ("jxoesneon__FerroTeX__ci_log.utf16le.ghlog.txt", &[]),
    ];
    for (file, want) in cases {
        let (_, doc) = classify_json(&[&real.join(file)]);
        let got: Vec<String> = doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| ids(f, "tests_failed"))
            .collect();
        assert_eq!(got, *want, "{file}");
    }
    // vitest: every failed test with its file, the `×` restatements folded into them.
    let (_, doc) = classify_json(&[&real.join("gmoon__s3proxy__job-logs.txt")]);
    let failed = ids(&doc["files"][0], "tests_failed");
    assert!(failed.contains(
        &"test/MockExpress.test.ts > MockExpress > should handle head requests".to_string()
    ));
    assert!(
        failed
            .iter()
            .all(|id| id.starts_with("test/") && id.contains(".test.ts > ")),
        "{failed:?}"
    );
    // nextest and libtest name the same test (the AGPL log is only in ../shared).
    let zterm = root().join("../shared/logs/real/tzero86__Zterm__failed_logs.txt");
    if zterm.is_file() {
        let (_, doc) = classify_json(&[&zterm]);
        assert_eq!(
            ids(&doc["files"][0], "tests_failed"),
            vec![
                "terminal::view::tests::submit_cli_agent_rich_input_opencode_defers_enter_and_close"
            ]
        );
    } else {
        eprintln!("skipped the nextest log: ../shared/logs/real is absent");
    }
}

/// Without `--tests` the JSON is as before (no test fields); a broken JUnit file is refused
/// with its name and exit 3, the other inputs still reported.
#[test]
fn tests_fields_only_with_the_flag_and_broken_xml_is_refused() {
    let cwd = tempfile::tempdir().unwrap();
    let bad = cwd.path().join("TEST-bad.xml");
    std::fs::write(
        &bad,
        "<?xml version='1.0'?><testsuite><testcase name='a'></testsuite>",
    )
    .unwrap();
    let go = root().join("fixtures/tests/go.log");
    let (_, doc) = classify_json_with(&[], &[&go]);
    assert!(doc["files"][0].get("tests_failed").is_none());
    let (code, doc) = classify_json(&[&go, &bad]);
    assert_eq!(code, Some(3));
    let err = doc["files"][1]["error"].as_str().unwrap();
    assert!(
        err.contains("TEST-bad.xml") && err.contains("not well-formed XML"),
        "{err}"
    );
    assert_eq!(
        ids(&doc["files"][0], "tests_failed"),
        vec!["TestParse", "TestParse/empty_input"]
    );
    // No test found anywhere: exit 1, like grep.
    let (code, _) = classify_json(&[&root().join("fixtures/tests/build-only.log")]);
    assert_eq!(code, Some(1));
}

#[test]
fn the_tests_table() {
    let args = [
        "classify",
        "--tests",
        "fixtures/tests/pytest-rerun.log",
        "fixtures/tests/nextest.log",
        "fixtures/tests/maven.log",
        "fixtures/tests/surefire-junit.xml",
        "fixtures/tests/build-only.log",
    ];
    let out = snapshot_flakestat(&args).output().unwrap();
    snapshot_settings(&[]).bind(|| {
        insta::assert_snapshot!("classify_tests_table", transcript(&args, &out));
    });
}

/// `--tests --format markdown`: a test id is hostile text like any log line; it reaches the
/// table escaped as every report's markdown escapes it, its mentions neutralised (pasted into
/// an issue, it pings no one).
#[test]
fn the_tests_markdown_escapes_ids_and_breaks_mentions() {
    let cwd = tempfile::tempdir().unwrap();
    let log = cwd.path().join("jest.log");
    std::fs::write(&log, "  ● Cart › pings @octocat | <b>x</b>\n").unwrap();
    let out = flakestat()
        .args(["classify", "--tests", "--format", "markdown"])
        .arg(&log)
        .current_dir(cwd.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.starts_with("| log | test | outcome | runner | line |\n"),
        "{md}"
    );
    assert!(
        md.contains(r"| Cart › pings @&#8203;octocat \| \<b\>x\</b\> | failed | jest | 1 |"),
        "{md}"
    );
    assert!(!md.contains("@octocat"), "{md}");
}

/// A folder without signature files is no error for `classify --tests`: one stderr line says
/// nothing is classified by signature, naming the folder, and `-q` leaves that line out while
/// the tests are still listed.
#[test]
fn an_empty_signatures_folder_is_said_once_and_quiet_hides_it() {
    let cwd = tempfile::tempdir().unwrap();
    let empty = cwd.path().join("no-sigs");
    std::fs::create_dir(&empty).unwrap();
    let go = root().join("fixtures/tests/go.log");
    let run = |quiet: bool| {
        let mut cmd = flakestat();
        if quiet {
            cmd.arg("-q");
        }
        cmd.args(["classify", "--tests", "--format", "json", "--signatures"])
            .arg(&empty)
            .arg(&go)
            .current_dir(cwd.path())
            .output()
            .unwrap()
    };
    let loud = run(false);
    assert_eq!(loud.status.code(), Some(0), "{loud:?}");
    let stderr = String::from_utf8(loud.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no signature files") && stderr.contains("no-sigs"),
        "{stderr}"
    );
    let quiet = run(true);
    assert_eq!(quiet.status.code(), Some(0), "{quiet:?}");
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
    assert_eq!(quiet.stdout, loud.stdout);
    let doc: Value = serde_json::from_slice(&quiet.stdout).unwrap();
    assert_eq!(
        ids(&doc["files"][0], "tests_failed"),
        vec!["TestParse", "TestParse/empty_input"]
    );
}
