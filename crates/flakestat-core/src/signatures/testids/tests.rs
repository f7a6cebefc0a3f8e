use super::runners::{FORMS, Outcome};
use super::*;
use crate::signatures::SignatureSet;
use crate::signatures::matcher::tests::spec;

fn ids(records: &[TestRecord]) -> Vec<&str> {
    records.iter().map(|r| r.id.as_str()).collect()
}

/// Every form's example lines yield exactly the id written beside them (or nothing), and every
/// line that yields one holds one of the form's anchors (the matcher only shows those).
#[test]
fn every_form_reads_its_examples() {
    for (i, form) in FORMS.iter().enumerate() {
        assert!(!form.examples.is_empty(), "{} {}", form.runner, form.name);
        for (line, want) in form.examples {
            let got = read_line(line);
            assert_eq!(
                got.as_ref().map(|r| r.id.as_str()),
                *want,
                "{} {:?}: {line:?}",
                form.runner,
                form.name
            );
            if want.is_some() {
                let got = got.expect("checked");
                assert_eq!(
                    (FORMS[got.form].runner, got.form),
                    (form.runner, i),
                    "{line:?} was read by another form"
                );
                assert!(
                    form.anchors.iter().any(|a| line.contains(a)),
                    "{line:?} holds none of the anchors of {} {}",
                    form.runner,
                    form.name
                );
            }
        }
    }
}

/// Passing output that merely contains the word FAILED (or FAIL, Failed, ERROR) names no test.
#[test]
fn passing_output_with_failed_in_it_yields_nothing() {
    let log = "\
test result: ok. 12 passed; 0 failed; 0 ignored
test parser::reports_FAILED ... ok
tests/test_status.py::test_marks_FAILED_jobs PASSED [ 50%]
PASSED tests/test_status.py::test_failed_state
--- PASS: TestFAILED (0.00s)
[       OK ] Status.FAILED_is_shown (0 ms)
[  PASSED  ] 3 tests.
        PASS [   0.004s] crate tests::handles_FAILED
  ✓ renders FAILED badge (3 ms)
Tests run: 3, Failures: 0, Errors: 0, Skipped: 0
StatusTest > showsFailed() PASSED
echo \"FAILED\"
  Passed Shop.Tests.FailedOrderTests.Shows [2 ms]
ok 1 - reports not ok as a string
  3 passing (12ms)
BUILD SUCCESSFUL in 2s
100% tests passed, 0 tests failed out of 4
";
    let got = extract(log);
    assert!(got.is_empty(), "{got:?}");
}

/// Logs of no test runner (a build, a package install) yield no tests, never a wrong one.
#[test]
fn unknown_formats_yield_no_tests() {
    let log = "\
error[E0425]: cannot find value `x` in this scope
error: could not compile `app` (lib) due to 1 previous error
npm ERR! code ELIFECYCLE
ERROR: Could not find a version that satisfies the requirement torch==9.9
FAILED: CMakeFiles/app.dir/main.cpp.o
BUILD FAILED in 33s
##[error]Process completed with exit code 1.
fatal: unable to access 'https://github.com/octo/demo/': Could not resolve host
Segmentation fault (core dumped)
";
    assert!(extract(log).is_empty());
}

#[test]
fn pytest_rerun_then_pass_is_flaky_rerun_then_failed_is_failed() {
    let log = "\
tests/test_net.py::test_fetch[http] RERUN [ 50%]
tests/test_net.py::test_fetch[http] PASSED [ 50%]
tests/test_net.py::test_push RERUN [ 75%]
tests/test_net.py::test_push FAILED [ 75%]
=========================== short test summary info ============================
RERUN tests/test_net.py::test_fetch[http]
RERUN tests/test_net.py::test_push
FAILED tests/test_net.py::test_push - ConnectionError
";
    let got = extract(log);
    assert_eq!(ids(&got.failed), vec!["tests/test_net.py::test_push"]);
    assert_eq!(ids(&got.flaky), vec!["tests/test_net.py::test_fetch[http]"]);
    assert_eq!(got.flaky[0].family, "tests/test_net.py::test_fetch");
    assert_eq!(got.flaky[0].runner, "pytest");
    assert_eq!(got.flaky[0].line, 1);
}

#[test]
fn nextest_retry_that_passes_is_flaky() {
    let log = "\
        FAIL [   0.005s] nextest-tests::basic test_flaky_mod_4
  TRY 2 PASS [   0.004s] nextest-tests::basic test_flaky_mod_4
        FAIL [   0.010s] nextest-tests::basic test_broken
  TRY 2 FAIL [   0.010s] nextest-tests::basic test_broken
        PASS [   0.001s] nextest-tests::basic test_ok
";
    let got = extract(log);
    assert_eq!(ids(&got.failed), vec!["test_broken"]);
    assert_eq!(ids(&got.flaky), vec!["test_flaky_mod_4"]);
    let summary = extract("       FLAKY 2/2 [   0.004s] nextest-tests::basic test_x\n");
    assert_eq!(ids(&summary.flaky), vec!["test_x"]);
}

#[test]
fn surefire_flakes_section_makes_the_failed_run_flaky() {
    let log = "\
[ERROR] com.example.CartTest.addsItem -- Time elapsed: 0.012 s <<< FAILURE!
[ERROR] com.example.CartTest.totals -- Time elapsed: 0.012 s <<< FAILURE!
[INFO] Results:
[ERROR] Failures:
[ERROR]   CartTest.totals:42 expected: <1> but was: <2>
[WARNING] Flakes:
[WARNING] com.example.CartTest.addsItem
[ERROR]   Run 1: CartTest.addsItem:12 expected: <1> but was: <2>
[INFO]   Run 2: PASS
[INFO]
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Flakes: 1
";
    let got = extract(log);
    assert_eq!(ids(&got.failed), vec!["com.example.CartTest.totals"]);
    assert_eq!(ids(&got.flaky), vec!["com.example.CartTest.addsItem"]);
}

#[test]
fn mocha_failing_summary_names_whole_titles() {
    let log = "\
  Array
    #indexOf()
      1) should return -1 when the value is not present
  3 passing (12ms)
  2 failing

  1) Array
       #indexOf()
         should return -1 when the value is not present:
     AssertionError [ERR_ASSERTION]: 0 == -1
      at Context.<anonymous> (test/array.js:5:14)

  2) Cart adds an item:
     Error: timeout of 2000ms exceeded
##[error]Process completed with exit code 2.
";
    let got = extract(log);
    assert_eq!(
        ids(&got.failed),
        vec![
            "Array #indexOf() should return -1 when the value is not present",
            "Cart adds an item"
        ]
    );
    assert_eq!(got.failed[0].line, 7);
}

/// A short restatement (vitest's `×` lines, surefire's `Failures:` entries) folds into the
/// full id another line of the log prints; alone, it stands.
#[test]
fn secondary_readings_fold_into_the_full_id() {
    let log = "\
   × MockExpress > should handle head requests 44ms
 FAIL  test/MockExpress.test.ts > MockExpress > should handle head requests
   × Other > alone 3ms
";
    let got = extract(log);
    assert_eq!(
        ids(&got.failed),
        vec![
            "Other > alone",
            "test/MockExpress.test.ts > MockExpress > should handle head requests"
        ]
    );
}

#[test]
fn families_drop_parameters() {
    let cases = [
        (
            "FAILED tests/x.py::test_wait[3.14t] - boom",
            "tests/x.py::test_wait",
        ),
        ("    --- FAIL: TestParse/empty (0.01s)", "TestParse"),
        (
            "[  FAILED  ] Sizes/ArrayTest.Fill/3, where GetParam() = 64 (1 ms)",
            "ArrayTest.Fill",
        ),
        (
            "  Failed Shop.CartTests.Adds(count: 2) [3 ms]",
            "Shop.CartTests.Adds",
        ),
        (
            "2) App\\CartTest::testTotals with data set #1 (2, 4)",
            "App\\CartTest::testTotals",
        ),
        (
            "rspec ./spec/cart_spec.rb[1:2:1] # Cart totals",
            "./spec/cart_spec.rb",
        ),
        ("CartTest > adds(int) > [1] 5 FAILED", "CartTest > adds"),
    ];
    for (line, want) in cases {
        let got = extract(line);
        assert_eq!(got.failed.len(), 1, "{line}");
        assert_eq!(got.failed[0].family, want, "{line}");
    }
}

#[test]
fn ids_are_bounded_per_log() {
    let log: String = (0..MAX_TESTS + 50)
        .map(|i| format!("--- FAIL: TestN{i} (0.00s)\n"))
        .collect();
    assert_eq!(extract(&log).failed.len(), MAX_TESTS);
}

/// The matcher's one pass finds the same tests as the line-by-line reference, with ANSI codes,
/// timestamps and mocha's anchorless lines, in memory and streamed.
#[test]
fn the_matchers_pass_finds_what_the_reference_finds() {
    let log = "\u{feff}2026-07-15T21:26:03.1234567Z ##[group]Run pytest\n\
2026-07-15T21:26:03.1234567Z tests/a.py::test_b[1] \x1b[31mRERUN\x1b[0m [ 50%]\n\
2026-07-15T21:26:03.1234567Z tests/a.py::test_b[1] \x1b[32mPASSED\x1b[0m [ 50%]\n\
2026-07-15T21:26:03.1234567Z hay hay\n\
2026-07-15T21:26:03.1234567Z \x1b[31mFAILED\x1b[0m tests/a.py::test_c - boom\n\
2026-07-15T21:26:04.1234567Z   2 failing\n\
2026-07-15T21:26:04.1234567Z \n\
2026-07-15T21:26:04.1234567Z   1) Cart\n\
2026-07-15T21:26:04.1234567Z        \x1b[1madds an item:\x1b[0m\n\
2026-07-15T21:26:04.1234567Z      Error: boom\n\
2026-07-15T21:26:04.1234567Z --- FAIL: TestX/sub (0.00s)\n\
2026-07-15T21:26:09.1000000Z ##[error]Process completed with exit code 1.\n";
    for set in [
        SignatureSet::compile(vec![spec("boom", "boom$")]).unwrap(),
        // A rule without literals: every line is shown.
        SignatureSet::compile(vec![spec("digits", "^\\d+$")]).unwrap(),
    ] {
        let fast = set.classify(log.as_bytes());
        assert_eq!(fast, set.classify_reference(log.as_bytes()));
        assert_eq!(
            fast,
            set.classify_reader(std::io::Cursor::new(log)).unwrap()
        );
        assert_eq!(
            ids(&fast.tests.failed),
            vec!["Cart adds an item", "TestX/sub", "tests/a.py::test_c"]
        );
        assert_eq!(ids(&fast.tests.flaky), vec!["tests/a.py::test_b[1]"]);
    }
}

#[test]
fn outcomes_of_kinds() {
    let r = read_line("RERUN tests/a.py::b").unwrap();
    assert_eq!(r.outcome, Outcome::Rerun);
    let r = read_line("  TRY 3 PASS [   0.004s] bin t").unwrap();
    assert_eq!(r.outcome, Outcome::Passed);
    let r = read_line("FAILED tests/a.py::b - x").unwrap();
    assert_eq!(r.outcome, Outcome::Failed);
}
