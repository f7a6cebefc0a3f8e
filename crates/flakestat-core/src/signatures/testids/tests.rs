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

/// Ginkgo's summary (v2, then v1): each `[FAIL]`-like line names a spec, the location under it
/// is skipped, and the block ends at `Ran N of M Specs`. A `[FAIL]` line outside the summary is
/// not read. Written from <https://onsi.github.io/ginkgo/#spec-reports> and Ginkgo's reporter.
#[test]
fn ginkgo_summary_names_each_failed_spec() {
    let v2 = "\
[FAIL] not in a summary [It] is not read
Summarizing 3 Failures:
  [FAIL] Books when the book is long [It] is a novel
  /home/runner/work/books/books_test.go:28
  [PANICKED!] Books [It] can be serialized [slow, io]
  /home/runner/work/books/books_test.go:40
  [TIMEDOUT] [sig-storage] Volumes [BeforeEach] mounts the volume
  /home/runner/work/books/volumes_test.go:12

Ran 12 of 14 Specs in 0.120 seconds
FAIL! -- 9 Passed | 3 Failed | 0 Pending | 2 Skipped
--- FAIL: TestBooks (0.12s)
";
    let got = extract(v2);
    assert_eq!(
        ids(&got.failed),
        vec![
            "Books [It] can be serialized [slow, io]",
            "Books when the book is long [It] is a novel",
            "TestBooks",
            "[sig-storage] Volumes [BeforeEach] mounts the volume",
        ]
    );
    assert_eq!(got.failed[0].runner, "ginkgo");
    assert_eq!(got.failed[1].line, 3);
    let v1 = "\
Summarizing 2 Failures:

[Fail] Books Categorizing book length [It] should be a novella 
/home/runner/work/books/books_test.go:29

[Panic!] Books [It] should parse 
/home/runner/go/src/runtime/panic.go:262

Ran 4 of 4 Specs in 0.001 seconds
";
    assert_eq!(
        ids(&extract(v1).failed),
        vec![
            "Books Categorizing book length [It] should be a novella",
            "Books [It] should parse"
        ]
    );
}

/// Mozilla's harnesses (mochitest, xpcshell, browser-chrome) in the tbpl format: the test file
/// of each unexpected result, once however many checks of it failed, with or without the
/// mozharness prefix; the harness's own checks (`leakcheck`, `automation.py`) name no test.
#[test]
fn mochitest_unexpected_results_name_the_test_file() {
    let log = "\
[task 2026-07-15T21:26:03.123Z] 21:26:03     INFO - TEST-PASS | dom/base/test/test_a.html | ok
[task 2026-07-15T21:26:03.124Z] 21:26:03     INFO - TEST-UNEXPECTED-FAIL | dom/base/test/test_a.html | visible - got false, expected true
[task 2026-07-15T21:26:03.125Z] 21:26:03     INFO - TEST-UNEXPECTED-FAIL | dom/base/test/test_a.html | second check - got 1, expected 2
 0:42.10 TEST-UNEXPECTED-TIMEOUT | browser/base/content/test/browser_tabs.js | application timed out after 370 seconds with no output
TEST-UNEXPECTED-FAIL | leakcheck | default 800 bytes leaked (nsTArray_base)
TEST-KNOWN-INTERMITTENT-FAIL | dom/base/test/test_b.html | known intermittent
";
    let got = extract(log);
    assert_eq!(
        ids(&got.failed),
        vec![
            "browser/base/content/test/browser_tabs.js",
            "dom/base/test/test_a.html"
        ]
    );
    assert_eq!(got.failed[1].runner, "mochitest");
    assert_eq!(got.failed[1].line, 2);
}

/// xcodebuild's XCTest lines (Objective-C, Swift, Kiwi specs), swift-corelibs-xctest's, Xcode
/// 15+'s `Test case '…' failed on '<device>'`, and swift-testing's `✘ Test`: each failed test
/// once, passing ones never.
#[test]
fn xcodebuild_xctest_and_swift_testing_failures() {
    let log = "\
Test Suite 'All tests' started at 2026-07-15 21:26:03.123.
Test Case '-[CoreTests.ParserTests testEmptyInput]' started.
/Users/runner/work/app/Tests/ParserTests.swift:12: error: -[CoreTests.ParserTests testEmptyInput] : XCTAssertEqual failed: (\"1\") is not equal to (\"2\")
Test Case '-[CoreTests.ParserTests testEmptyInput]' failed (0.004 seconds).
Test Case '-[CoreTests.ParserTests testFAILED]' passed (0.001 seconds).
Test Case '-[CartSpec Cart_WhenEmpty_AddsAnItem]' failed (0.002 seconds).
Test case 'LoginTests.testSubmit()' failed on 'Clone 1 of iPhone 15 - App (4242)' (1.203 seconds)
Test case 'LoginTests.testCancel()' passed on 'Clone 1 of iPhone 15 - App (4242)' (0.203 seconds)
✘ Test parsesEmptyInput() recorded an issue at ParserTests.swift:12:5: Expectation failed: 1 == 2
✘ Test parsesEmptyInput() failed after 0.005 seconds with 1 issue.
✔ Test parsesFAILED() passed after 0.001 seconds.
Test Suite 'All tests' failed at 2026-07-15 21:26:04.123.
";
    let got = extract(log);
    assert_eq!(
        ids(&got.failed),
        vec![
            "CartSpec.Cart_WhenEmpty_AddsAnItem",
            "CoreTests.ParserTests.testEmptyInput",
            "LoginTests.testSubmit",
            "parsesEmptyInput()",
        ]
    );
    assert!(got.flaky.is_empty());
}

/// gotestsum `--rerun-fails`: a test that failed and then passed on a re-run is flaky; one that
/// failed on the last run too is failed; the re-runs' lines are no new failures, and `go test
/// -v`'s `--- FAIL:` lines fold into gotestsum's `pkg.Test` ids. Written from gotestsum's README
/// (`--rerun-fails`, the summary, `--format testname`).
#[test]
fn gotestsum_rerun_that_passes_is_flaky() {
    let summary = "\
✖  internal/store (1.2s)
DONE 14 tests, 2 failures in 1.500s
✓  internal/store (0.3s)
✖  internal/store (0.2s)

=== Failed
=== FAIL: internal/store TestOpen (0.01s)
    --- FAIL: TestOpen (0.01s)
    store_test.go:12: database is locked
=== FAIL: internal/store TestClose (0.00s)
    store_test.go:30: boom
=== FAIL: internal/store TestClose (re-run 1) (0.00s)
    store_test.go:30: boom
=== FAIL: internal/store TestClose (re-run 2) (0.00s)
    store_test.go:30: boom

DONE 3 runs, 17 tests, 4 failures in 2.100s
";
    let got = extract(summary);
    assert_eq!(ids(&got.failed), vec!["internal/store.TestClose"]);
    assert_eq!(ids(&got.flaky), vec!["internal/store.TestOpen"]);
    assert_eq!(got.flaky[0].runner, "gotestsum");
    assert_eq!(got.failed[0].line, 10);
    // Without a re-run (`DONE` names no runs) every failure stands.
    let once = "\
=== Failed
=== FAIL: internal/store TestOpen (0.01s)
DONE 14 tests, 1 failure in 1.500s
";
    assert_eq!(ids(&extract(once).failed), vec!["internal/store.TestOpen"]);
    // `--format testname` (and its GitHub Actions form) names the re-runs inline; with its
    // summary the answer is the same, in the package `.` without a package.
    let testname = "\
##[group]FAIL TestRandomFail (0.00s)
    main_test.go:28: This test failed
##[endgroup]
  PASS TestAlways (0.00s)
  PASS TestRandomFail (re-run 1) (0.00s)
=== Failed
=== FAIL: . TestRandomFail (0.00s)
DONE 2 runs, 3 tests, 1 failure in 0.553s
";
    let got = extract(testname);
    assert!(got.failed.is_empty(), "{got:?}");
    assert_eq!(ids(&got.flaky), vec!["TestRandomFail"]);
}

/// Surefire 2.x's plain console (Maven 3.0-3.3: no `[ERROR]` prefix): the per-test lines and the
/// `Failed tests:` / `Tests in error:` blocks, old (`test(pkg.Class): msg`) and one-line
/// (`Class.test:42 msg`, folded into the whole id) entries; `Flaked tests:` is flaky. Written
/// from <https://maven.apache.org/surefire/maven-surefire-plugin/newerrorsummary.html>.
#[test]
fn surefire2_plain_summary_blocks() {
    let log = "\
Running com.example.CartTest
Tests run: 4, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.05 sec <<< FAILURE! - in com.example.CartTest
testTotals(com.example.CartTest)  Time elapsed: 0.012 sec  <<< FAILURE!
java.lang.AssertionError: expected:<1> but was:<2>

Results :

Failed tests: 
  CartTest.testTotals:42 expected:<1> but was:<2>
  CartTest>BaseTest.testInherited:12 expected:<true> but was:<false>

Tests in error: 
  testOpen(com.example.IoTest): java.io.IOException: boom
  IoTest.testRead:17 » IO boom

Flaked tests: 
  com.example.NetTest.testFetch(com.example.NetTest)
    Run 1: NetTest.testFetch:22 » SocketTimeout Read timed out
    Run 2: PASS

Tests run: 6, Failures: 2, Errors: 2, Skipped: 0, Flakes: 1

[INFO] BUILD FAILURE
";
    let got = extract(log);
    assert_eq!(
        ids(&got.failed),
        vec![
            "CartTest.testInherited",
            "IoTest.testRead",
            "com.example.CartTest.testTotals",
            "com.example.IoTest.testOpen",
        ]
    );
    assert_eq!(ids(&got.flaky), vec!["com.example.NetTest.testFetch"]);
    assert!(got.failed.iter().all(|t| t.runner == "surefire"));
}

/// The same blocks as Maven 3.5+ prints them (every line `[ERROR]`-prefixed), under NonDex
/// (surefire's blocks once per NonDex run: one id each), and with non-English locales: a decimal
/// comma (German, French), a Japanese method name, JDK messages in another language and
/// surefire's `»` mangled by a console code page.
#[test]
fn surefire2_prefixed_nondex_and_other_locales() {
    let log = "\
[INFO] Running com.example.CartTest
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0,051 s <<< FAILURE! - in com.example.CartTest
[ERROR] 合計を計算する(com.example.CartTest)  Time elapsed: 0,012 s  <<< FAILURE!
[INFO] Results:
[ERROR] Failed tests: 
[ERROR]   CartTest.合計を計算する:42 expected:<1> but was:<2>
[ERROR] Tests in error: 
[ERROR]   IoTest.lireFichier:17 Â» FileNotFound /tmp/x (Aucun fichier ou dossier de ce type)
[ERROR]   IoTest.dateiÖffnen:9 ? FileNotFound /tmp/y (Datei oder Verzeichnis nicht gefunden)
[INFO] 
[ERROR] Tests run: 3, Failures: 1, Errors: 2, Skipped: 0
[INFO] NonDex run 2 of 3 (nondexSeed=1016066)
[INFO] Results:
[ERROR] Failed tests: 
[ERROR]   CartTest.合計を計算する:42 expected:<1> but was:<2>
[INFO] 
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0
";
    let got = extract(log);
    assert_eq!(
        ids(&got.failed),
        vec![
            "IoTest.dateiÖffnen",
            "IoTest.lireFichier",
            "com.example.CartTest.合計を計算する",
        ]
    );
    assert!(got.flaky.is_empty());
}

/// Lines after a block that merely look like entries are not read once the block ended, and
/// `Failed tests:` of another tool (prove's `Failed tests:  2-3`) opens none.
#[test]
fn surefire2_blocks_end_and_foreign_headers_open_none() {
    let log = "\
Failed tests: 
  CartTest.testTotals:42 expected:<1> but was:<2>

  NotATest.afterTheBlock:1 text
t/basic.t (Wstat: 256 Tests: 5 Failed: 2)
  Failed tests:  2-3
  Other.thing:3 text
";
    assert_eq!(ids(&extract(log).failed), vec!["CartTest.testTotals"]);
}

/// Every retry-then-pass shape the runners print is flaky, and a retry that failed too is a
/// failure: pytest-rerunfailures, nextest, surefire 3 (`Flakes:`) and 2 (`Flaked tests:`),
/// gotestsum.
#[test]
fn reruns_that_end_in_a_pass_are_flaky_for_every_runner() {
    let cases: &[(&str, &str)] = &[
        (
            "tests/a.py::test_b RERUN [ 50%]\ntests/a.py::test_b PASSED [ 50%]\n",
            "tests/a.py::test_b",
        ),
        (
            "        FAIL [   0.005s] crate t::a\n  TRY 2 PASS [   0.004s] crate t::a\n",
            "t::a",
        ),
        (
            "[WARNING] Flakes:\n[WARNING] com.x.ATest.b\n[ERROR]   Run 1: ATest.b:1 x\n[INFO]   Run 2: PASS\n",
            "com.x.ATest.b",
        ),
        (
            "Flaked tests: \n  ATest.b(com.x.ATest)\n    Run 1: ATest.b:1 x\n    Run 2: PASS\n\n",
            "com.x.ATest.b",
        ),
        (
            "=== FAIL: pkg TestB (0.00s)\nDONE 2 runs, 3 tests, 1 failure in 0.1s\n",
            "pkg.TestB",
        ),
    ];
    for (log, id) in cases {
        let got = extract(log);
        assert_eq!(ids(&got.flaky), vec![*id], "{log}");
        assert!(got.failed.is_empty(), "{log}: {got:?}");
    }
}

/// The new shapes through the matcher's one pass: the same tests as the line-by-line reference
/// and the streaming reader, with timestamps and ANSI colours, under a set whose rules hold no
/// test literal and one that makes every line a candidate.
#[test]
fn the_matchers_pass_reads_the_block_shapes_as_the_reference_does() {
    let body = "\
\x1b[1mSummarizing 1 Failure:\x1b[0m
  \x1b[31m[FAIL]\x1b[0m Books [It] is a novel
  /src/books_test.go:28

Ran 3 of 3 Specs in 0.1 seconds
 0:01.30 INFO TEST-UNEXPECTED-FAIL | dom/a/test_a.html | got false
Test Case '-[CartSpec Cart_AddsAnItem]' failed (0.002 seconds).
Failed tests: 
  CartTest.testTotals:42 expected:<1> but was:<2>

Tests run: 1, Failures: 1
=== FAIL: pkg TestOpen (0.01s)
    store_test.go:12: locked
DONE 2 runs, 3 tests, 1 failure in 0.1s
hay
";
    let log: String = body
        .lines()
        .map(|l| format!("2026-07-15T21:26:03.1234567Z {l}\n"))
        .collect();
    for set in [
        SignatureSet::compile(vec![spec("boom", "boom$")]).unwrap(),
        SignatureSet::compile(vec![spec("digits", "^\\d+$")]).unwrap(),
    ] {
        let fast = set.classify(log.as_bytes());
        assert_eq!(fast, set.classify_reference(log.as_bytes()));
        assert_eq!(
            fast,
            set.classify_reader(std::io::Cursor::new(&log)).unwrap()
        );
        assert_eq!(
            ids(&fast.tests.failed),
            vec![
                "Books [It] is a novel",
                "CartSpec.Cart_AddsAnItem",
                "CartTest.testTotals",
                "dom/a/test_a.html"
            ]
        );
        assert_eq!(ids(&fast.tests.flaky), vec!["pkg.TestOpen"]);
    }
}
