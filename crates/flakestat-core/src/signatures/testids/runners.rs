//! The test runners' failure lines: data, not code. Each [`Form`] is one way one runner names a
//! failed (or retried, or passed-on-retry) test on one line of its console output, with the
//! literals the line must hold (the matcher's prefilter finds candidate lines by them), a regex
//! with a named group `id`, and lines it must and must not read: a real line from a public CI
//! log where there is one (`fixtures/real/`, `../shared/logs/real/`), else a line written from
//! the runner's documented format (the source says which). The tests below run every example.
//!
//! What no form reads: lines that merely say FAILED (`test result: FAILED.`, `BUILD FAILED`, a
//! passing test named `test_reports_FAILED`), totals, and any format not in this table. A wrong
//! test id is worse than none, so every pattern is anchored on the runner's own layout.

/// What a line says about its test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// The test failed (or errored) in this attempt, and no retry is announced.
    Failed,
    /// The test failed and the runner retries it (pytest-rerunfailures' `RERUN`): its final
    /// outcome is reported by a later line, or it passed.
    Rerun,
    /// The test passed on a retry after failing (nextest's `FLAKY`, `TRY 2 PASS`; surefire's
    /// `Flakes:`).
    Passed,
}

/// How the `id` of a matching line is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdStyle {
    /// Group `id` as it stands.
    Plain,
    /// Group `id` up to the first blank outside brackets (pytest ids may hold blanks inside
    /// their `[parameters]`; a ` - message` follows).
    Pytest,
    /// Groups `name` and `class`: `class.name` (unittest's `test_x (mod.Class)`; Python 3.11+
    /// prints `test_x (mod.Class.test_x)`, already whole).
    NameInClass,
    /// TAP: group `desc`, else `#` and group `num`.
    Tap,
    /// XCTest: group `id` (or `quoted`), `-[Module.Class testName]` read as
    /// `Module.Class.testName`, a trailing `()` (Swift) dropped.
    XcTest,
    /// gotestsum: groups `pkg` and `name` (`pkg.name`; the name alone in the package `.`).
    GoTestSum,
}

/// How the family (the id without parameters) is cut from an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// No parameters in this runner's ids.
    Same,
    /// A trailing `[...]` (pytest, RSpec example ids).
    Brackets,
    /// The part before the first `/` (go subtests).
    BeforeSlash,
    /// GoogleTest: `Prefix/Suite.Test/3` → `Suite.Test`.
    GoogleTest,
    /// A trailing `(...)` (dotnet, JUnit 5 method arguments) and what follows it.
    Parens,
    /// PHPUnit: ` with data set …`.
    DataSet,
}

/// One failure-line form of one runner.
#[derive(Debug, Clone, Copy)]
pub struct Form {
    pub runner: &'static str,
    pub name: &'static str,
    /// Literals one of which every line of the form holds.
    pub anchors: &'static [&'static str],
    /// Rust regex on the normalized line (no timestamp, BOM or ANSI codes).
    pub pattern: &'static str,
    /// What a match means; a group `kind` reading `RERUN`, `FLAKY…` or `PASS` overrides it.
    pub outcome: Outcome,
    pub id: IdStyle,
    pub family: Family,
    /// A shorter restatement of ids another form of the runner prints in full (a summary
    /// listing `FooTest.bar` for `com.x.FooTest.bar`): dropped into that id when one ends with
    /// it.
    pub secondary: bool,
    /// Ids that are headings of the runner's, not tests (jest's `● Test suite failed to run`).
    pub reject: &'static [&'static str],
    /// Lines and the id each must yield (`None`: must yield nothing).
    pub examples: &'static [(&'static str, Option<&'static str>)],
    /// Where the first example comes from.
    pub source: &'static str,
}

const fn form(
    runner: &'static str,
    name: &'static str,
    anchors: &'static [&'static str],
    pattern: &'static str,
    examples: &'static [(&'static str, Option<&'static str>)],
    source: &'static str,
) -> Form {
    Form {
        runner,
        name,
        anchors,
        pattern,
        outcome: Outcome::Failed,
        id: IdStyle::Plain,
        family: Family::Same,
        secondary: false,
        reject: &[],
        examples,
        source,
    }
}

impl Form {
    const fn id(mut self, id: IdStyle) -> Form {
        self.id = id;
        self
    }
    const fn family(mut self, family: Family) -> Form {
        self.family = family;
        self
    }
    const fn reject(mut self, ids: &'static [&'static str]) -> Form {
        self.reject = ids;
        self
    }
    const fn secondary(mut self) -> Form {
        self.secondary = true;
        self
    }
}

/// The table; the first form that reads a line wins.
pub const FORMS: &[Form] = &[
    form(
        "pytest",
        "short test summary",
        &["FAILED ", "ERROR ", "RERUN "],
        r"^(?:\[gw\d+\] \[\s*\d+%\] )?(?P<kind>FAILED|ERROR|RERUN) (?:\[[\d.]+s\] )?(?P<id>[^\s\[]+(?:::|\.py(?:\s|$)).*)$",
        &[
            (
                "FAILED [0.0103s] inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True - TypeError: unhashable type: non-nested SymInt",
                Some("inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True"),
            ),
            (
                "ERROR tests/test_elasticsearch.py::test_elasticsearch_fixture_structure - subprocess.CalledProcessError: Command 'terraform apply' returned non-zero exit status 1.",
                Some("tests/test_elasticsearch.py::test_elasticsearch_fixture_structure"),
            ),
            (
                "FAILED tests/graph/test_graph.py::test_wait[3.14t-a b] - AssertionError: x",
                Some("tests/graph/test_graph.py::test_wait[3.14t-a b]"),
            ),
            (
                "ERROR tests/test_import.py - ModuleNotFoundError: No module named 'numpy'",
                Some("tests/test_import.py"),
            ),
            ("RERUN tests/test_net.py::test_fetch[http]", Some("tests/test_net.py::test_fetch[http]")),
            ("[gw1] [ 50%] FAILED tests/test_a.py::test_b ", Some("tests/test_a.py::test_b")),
            ("FAILED (failures=1)", None),
            ("ERROR: Could not find a version that satisfies the requirement torch", None),
            ("FAILED to connect to the daemon", None),
        ],
        "real: pytorch__pytorch__error_log_multiple_matches.txt:750, infrahouse__pytest-infrahouse__job-logs.txt:4358",
    )
    .id(IdStyle::Pytest)
    .family(Family::Brackets),
    form(
        "pytest",
        "verbose result",
        &[" FAILED", " ERROR", " RERUN"],
        r"^(?P<id>[^\s\[]+::[^\s\[]+(?:\[[^\]]*\])?) (?P<kind>FAILED|ERROR|RERUN)(?: .*)?$",
        &[
            (
                "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True FAILED [0.0114s] [ 70%]",
                Some("inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True"),
            ),
            ("tests/test_x.py::test_y[3.14t] RERUN [ 50%]", Some("tests/test_x.py::test_y[3.14t]")),
            ("tests/test_x.py::test_reports_FAILED PASSED [ 50%]", None),
        ],
        "real: pytorch__pytorch__error_log_multiple_matches.txt:363",
    )
    .id(IdStyle::Pytest)
    .family(Family::Brackets),
    form(
        "unittest",
        "failure header",
        &["FAIL: ", "ERROR: "],
        r"^(?P<kind>FAIL|ERROR): (?P<name>\w+) \((?P<class>[\w.]+)\)",
        &[
            ("FAIL: test_add (tests.test_math.MathTest)", Some("tests.test_math.MathTest.test_add")),
            (
                "ERROR: test_open (tests.test_io.IoTest.test_open)",
                Some("tests.test_io.IoTest.test_open"),
            ),
            ("ERROR: Could not install packages due to an OSError", None),
        ],
        "documented: https://docs.python.org/3/library/unittest.html#basic-example",
    )
    .id(IdStyle::NameInClass),
    form(
        "go",
        "--- FAIL",
        &["--- FAIL: "],
        r"^\s*--- FAIL: (?P<id>\S+)(?: \([\d.]+s\))?$",
        &[
            ("--- FAIL: TestParse (0.00s)", Some("TestParse")),
            ("    --- FAIL: TestParse/empty_input (0.01s)", Some("TestParse/empty_input")),
            ("--- PASS: TestFAILED (0.00s)", None),
        ],
        "documented: https://pkg.go.dev/testing (go test -v output)",
    )
    .family(Family::BeforeSlash)
    // gotestsum names the same test with its package (`pkg.TestParse`): that id wins.
    .secondary(),
    form(
        "gotestsum",
        GOTESTSUM_SUMMARY,
        &["=== FAIL: "],
        r"^=== FAIL: (?P<pkg>\S+) (?P<name>[^\s(]\S*)(?: \(re-run (?P<run>\d+)\))? \([\d.]+s\)$",
        &[
            ("=== FAIL: internal/store TestOpen (0.01s)", Some("internal/store.TestOpen")),
            ("=== FAIL: internal/store TestOpen (re-run 1) (0.00s)", Some("internal/store.TestOpen")),
            ("=== FAIL: . TestRandomFail/sub_case (0.00s)", Some("TestRandomFail/sub_case")),
            // A package that failed as a whole (a panic in TestMain) names no test.
            ("=== FAIL: internal/store  (0.00s)", None),
        ],
        "documented: https://github.com/gotestyourself/gotestsum#summary (the --rerun-fails summary)",
    )
    .id(IdStyle::GoTestSum)
    .family(Family::BeforeSlash),
    form(
        "gotestsum",
        "testname FAIL pkg.Test",
        &["FAIL "],
        r"^(?:##\[group\]|\s*)FAIL (?P<name>[^\s(>]*\.(?:Test|Example|Fuzz)\S*|(?:Test|Example|Fuzz)\S*)(?: \(re-run (?P<run>\d+)\))? \([\d.]+s\)$",
        &[
            ("FAIL internal/store.TestOpen (0.01s)", Some("internal/store.TestOpen")),
            ("##[group]FAIL internal/store.TestOpen (re-run 1) (0.00s)", Some("internal/store.TestOpen")),
            ("FAIL TestRandomFail (0.00s)", Some("TestRandomFail")),
            ("FAIL\tgithub.com/x/y\t0.012s", None),
            ("FAIL github.com/x/y (0.01s)", None),
        ],
        "documented: https://github.com/gotestyourself/gotestsum#output-format (testname, github-actions)",
    )
    .id(IdStyle::GoTestSum)
    .family(Family::BeforeSlash),
    form(
        "libtest",
        "test … FAILED",
        &[" ... FAILED"],
        r"^\s*test (?P<id>\S+) \.\.\. FAILED$",
        &[
            (
                "    test terminal::view::tests::submit_cli_agent_rich_input_opencode_defers_enter_and_close ... FAILED",
                Some("terminal::view::tests::submit_cli_agent_rich_input_opencode_defers_enter_and_close"),
            ),
            ("test result: FAILED. 0 passed; 1 failed; 0 ignored", None),
            ("test parser::reports_FAILED ... ok", None),
        ],
        "real: tzero86__Zterm__failed_logs.txt:491 (../shared only, AGPL)",
    ),
    form(
        "nextest",
        "status line",
        &["FAIL [", "FLAKY ", "TRY ", "TIMEOUT [", "SIGSEGV [", "SIGABRT [", "SIGKILL [", "ABORT ["],
        r"^\s*(?:(?P<try>TRY \d+) )?(?P<kind>FAIL|FLAKY \d+/\d+|PASS|TIMEOUT|SIGSEGV|SIGABRT|SIGKILL|ABORT) \[\s*[\d.]+s\] (?:\(\s*\d+/\d+\) )?(?:\S+ )?(?P<id>\S+)$",
        &[
            (
                "        FAIL [   0.356s] (3847/5457) zterm terminal::view::tests::submit_cli_agent_rich_input_opencode_defers_enter_and_close",
                Some("terminal::view::tests::submit_cli_agent_rich_input_opencode_defers_enter_and_close"),
            ),
            ("  TRY 2 FAIL [   0.005s] nextest-tests::basic test_flaky_mod_4", Some("test_flaky_mod_4")),
            ("  TRY 3 PASS [   0.004s] nextest-tests::basic test_flaky_mod_4", Some("test_flaky_mod_4")),
            ("       FLAKY 2/2 [   0.004s] nextest-tests::basic test_flaky_mod_4", Some("test_flaky_mod_4")),
            ("        PASS [   0.004s] nextest-tests::basic test_success", None),
        ],
        "real: tzero86__Zterm__failed_logs.txt:487 (../shared only, AGPL); FLAKY/TRY from https://nexte.st/docs/features/retries/",
    ),
    form(
        "jest",
        "failure heading",
        &["● "],
        r"^\s*● (?P<id>(?:[^›]+ › )*[^›]+?)\s*$",
        &[
            ("  ● Cart › adds an item", Some("Cart › adds an item")),
            ("  ● Test suite failed to run", None),
            ("  ● Console", None),
        ],
        "documented: https://jestjs.io/docs/cli (default reporter)",
    )
    .reject(&["Test suite failed to run", "Console"]),
    form(
        "vitest",
        "FAIL file > test",
        &["FAIL "],
        r"^\s*FAIL\s+(?P<id>\S+ > .+?)(?: \[[^\]]*\])?\s*$",
        &[
            (
                " FAIL  test/MockExpress.test.ts > MockExpress > should handle head requests",
                Some("test/MockExpress.test.ts > MockExpress > should handle head requests"),
            ),
            (" FAIL  test/MockExpress.test.ts [ test/MockExpress.test.ts ]", None),
        ],
        "real: gmoon__s3proxy__job-logs.txt:628",
    ),
    form(
        "vitest",
        "× test",
        &["× ", "✕ "],
        r"^\s*[×✕] (?P<id>.+?)(?: \(?\d+(?:\.\d+)? ?m?s\)?)?\s*$",
        &[
            (
                "   × Package Exports > should support CommonJS require from package root 27ms",
                Some("Package Exports > should support CommonJS require from package root"),
            ),
            ("    ✕ adds an item (5 ms)", Some("adds an item")),
        ],
        "real: gmoon__s3proxy__job-logs.txt:585; jest's ✕ from https://jestjs.io/docs/cli",
    )
    .secondary(),
    form(
        "surefire",
        "<<< FAILURE!",
        &["<<< FAILURE!", "<<< ERROR!"],
        r"^(?:\[ERROR\] )?(?:(?P<name>[\w$]+(?:\[[^\]]*\])?)\((?P<class>[\w.$]+)\)|(?P<id>[\w.$]+))(?: --)?\s+Time elapsed: .*<<< (?:FAILURE|ERROR)!$",
        &[
            (
                "[ERROR] com.example.CartTest.addsItem -- Time elapsed: 0.012 s <<< FAILURE!",
                Some("com.example.CartTest.addsItem"),
            ),
            (
                "[ERROR] addsItem(com.example.CartTest)  Time elapsed: 0.012 s  <<< ERROR!",
                Some("com.example.CartTest.addsItem"),
            ),
            (
                "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! -- in com.example.CartTest",
                None,
            ),
            // Surefire 2.x under Maven 3.0-3.3: no level prefix; a German locale's decimal
            // comma; a JUnit 4 parameterized name; a Japanese method name.
            (
                "testTotals(com.example.CartTest)  Time elapsed: 0,012 sec  <<< FAILURE!",
                Some("com.example.CartTest.testTotals"),
            ),
            (
                "adds[1](com.example.CartTest)  Time elapsed: 0.003 sec  <<< ERROR!",
                Some("com.example.CartTest.adds[1]"),
            ),
            (
                "合計を計算する(com.example.CartTest)  Time elapsed: 0.003 sec  <<< FAILURE!",
                Some("com.example.CartTest.合計を計算する"),
            ),
            (
                "Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0,05 sec <<< FAILURE! - in com.example.CartTest",
                None,
            ),
        ],
        "documented: https://maven.apache.org/surefire/maven-surefire-plugin/ (console report; 2.x: newerrorsummary.html)",
    )
    .id(IdStyle::NameInClass),
    form(
        "surefire",
        "Failures: entry",
        &["[ERROR]   "],
        r"^\[ERROR\]   (?P<id>[\w$]+(?:\.[\w$]+)+?)(?::\d+)? ",
        &[
            ("[ERROR]   CartTest.addsItem:42 expected: <1> but was: <2>", Some("CartTest.addsItem")),
            ("[ERROR]   Run 1: CartTest.addsItem:42 expected: <1> but was: <2>", None),
            ("[ERROR]   /src/Main.java:[12,5] cannot find symbol", None),
        ],
        "documented: https://maven.apache.org/surefire/maven-surefire-plugin/ (the Results: summary)",
    )
    .secondary(),
    form(
        "gradle",
        "Class > test FAILED",
        &[" FAILED"],
        r"^(?P<id>[\w.$]+ > .+) FAILED$",
        &[
            ("CartTest > addsItem() FAILED", Some("CartTest > addsItem()")),
            (
                "com.example.CartTest > adds(int) > [1] 5 FAILED",
                Some("com.example.CartTest > adds(int) > [1] 5"),
            ),
            ("> Task :app:test FAILED", None),
            ("BUILD FAILED in 33s", None),
        ],
        "documented: https://docs.gradle.org/current/userguide/java_testing.html (test logging)",
    )
    .family(Family::Parens),
    form(
        "googletest",
        "[  FAILED  ]",
        &["[  FAILED  ] "],
        r"^\[  FAILED  \] (?P<id>[\w/]+\.[\w/]+)(?:, where .*)?(?: \(\d+ ms\))?$",
        &[
            ("[  FAILED  ] QueueTest.Dequeue (0 ms)", Some("QueueTest.Dequeue")),
            (
                "[  FAILED  ] Sizes/ArrayTest.Fill/3, where GetParam() = 64 (1 ms)",
                Some("Sizes/ArrayTest.Fill/3"),
            ),
            ("[  FAILED  ] 1 test, listed below:", None),
            ("[       OK ] QueueTest.FAILED_case (0 ms)", None),
        ],
        "documented: https://google.github.io/googletest/primer.html",
    )
    .family(Family::GoogleTest),
    form(
        "ctest",
        "The following tests FAILED",
        &["(Failed)", "(Timeout)", "(SEGFAULT)", "(Subprocess aborted)", "(Child aborted)", "(Not Run)", "(Exception)"],
        r"^\s*\d+ - (?P<id>\S.*?) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|Child aborted|Not Run|Exception)\)",
        &[
            ("\t  3 - parser_tests (Failed)", Some("parser_tests")),
            ("	 12 - io.roundtrip (Timeout)", Some("io.roundtrip")),
        ],
        "documented: https://cmake.org/cmake/help/latest/manual/ctest.1.html",
    ),
    form(
        "rspec",
        "rspec ./spec",
        &["rspec ./"],
        r"^rspec (?P<id>\./\S+(?::\d+|\[[\d:,]+\])) # ",
        &[
            ("rspec ./spec/models/cart_spec.rb:12 # Cart adds an item", Some("./spec/models/cart_spec.rb:12")),
            ("rspec ./spec/cart_spec.rb[1:2:1] # Cart totals", Some("./spec/cart_spec.rb[1:2:1]")),
        ],
        "documented: https://rspec.info/features/3-12/rspec-core/command-line/ (Failed examples)",
    )
    .family(Family::Brackets),
    form(
        "dotnet",
        "Failed Name [time]",
        &["Failed "],
        r"^\s*Failed (?P<id>[\w.`+<>,]+(?:\(.*\))?) \[[^\]]+\]$",
        &[
            ("  Failed Shop.Tests.CartTests.AddsItem [12 ms]", Some("Shop.Tests.CartTests.AddsItem")),
            (
                "  Failed Shop.Tests.CartTests.Adds(count: 2) [3 ms]",
                Some("Shop.Tests.CartTests.Adds(count: 2)"),
            ),
            ("Failed!  - Failed:     1, Passed:    41, Skipped:     0, Total:    42", None),
        ],
        "documented: https://learn.microsoft.com/dotnet/core/tools/dotnet-test (console logger)",
    )
    .family(Family::Parens),
    form(
        "phpunit",
        "N) Class::test",
        &["Test::"],
        r"^\d+\) (?P<id>[\w\\]+Test::\w+(?: with data set .+)?)$",
        &[
            ("1) App\\Tests\\CartTest::testAddsItem", Some("App\\Tests\\CartTest::testAddsItem")),
            (
                "2) App\\Tests\\CartTest::testTotals with data set #1 (2, 4)",
                Some("App\\Tests\\CartTest::testTotals with data set #1 (2, 4)"),
            ),
            ("#3 /app/tests/CartTest.php(12): App\\Tests\\CartTest::testAddsItem()", None),
        ],
        "documented: https://docs.phpunit.de/en/11.0/textui.html",
    )
    .family(Family::DataSet),
    form(
        "tap",
        "not ok",
        &["not ok"],
        r"^\s*not ok(?: (?P<num>\d+))?(?: -)?(?: (?P<desc>[^#]*?))?\s*(?:#\s*(?P<directive>\w+).*)?$",
        &[
            ("not ok 3 - parses an empty file", Some("parses an empty file")),
            ("not ok 4", Some("#4")),
            ("not ok 5 - flaky network # TODO fix", None),
            ("not ok 6 # SKIP no network", None),
            ("the result is not ok", None),
        ],
        "documented: https://testanything.org/tap-version-14-specification.html",
    )
    .id(IdStyle::Tap),
    form(
        "mochitest",
        "TEST-UNEXPECTED-FAIL | path | message",
        &["TEST-UNEXPECTED-FAIL", "TEST-UNEXPECTED-ERROR", "TEST-UNEXPECTED-TIMEOUT"],
        r"(?:^|\s)TEST-UNEXPECTED-(?:FAIL|ERROR|TIMEOUT) \| (?P<id>[^|]*[./][^|]*?) \|",
        &[
            (
                "TEST-UNEXPECTED-FAIL | dom/base/test/test_bug1234.html | element is visible - got false, expected true",
                Some("dom/base/test/test_bug1234.html"),
            ),
            (
                "[task 2026-07-15T21:26:03.123Z] 21:26:03     INFO - TEST-UNEXPECTED-TIMEOUT | browser/base/content/test/general/browser_tabs.js | application timed out after 370 seconds with no output",
                Some("browser/base/content/test/general/browser_tabs.js"),
            ),
            (
                " 0:42.10 TEST-UNEXPECTED-ERROR | netwerk/test/unit/test_cookies.js | xpcshell return code: 1",
                Some("netwerk/test/unit/test_cookies.js"),
            ),
            // The harness's own checks name no test.
            ("TEST-UNEXPECTED-FAIL | leakcheck | default 800 bytes leaked (nsTArray_base)", None),
            ("TEST-UNEXPECTED-FAIL | automation.py | application ran for longer than allowed", None),
            ("TEST-KNOWN-INTERMITTENT-FAIL | dom/x/test_y.html | known", None),
            ("TEST-PASS | dom/base/test/test_bug1234.html | TEST-UNEXPECTED-FAIL is not printed", None),
        ],
        "documented: https://firefox-source-docs.mozilla.org/testing/mochitest-plain/ (the tbpl log format)",
    )
    .reject(&["automation.py", "runtests.py"]),
    form(
        "xctest",
        "Test Case '-[Module.Class test]' failed",
        &["' failed (", "' failed on '"],
        r"^\s*Test [Cc]ase '(?P<id>[^']+)' failed (?:on '[^']*' )?\(",
        &[
            (
                "Test Case '-[CoreTests.ParserTests testEmptyInput]' failed (0.004 seconds).",
                Some("CoreTests.ParserTests.testEmptyInput"),
            ),
            // Kiwi names its examples after the spec's description.
            (
                "Test Case '-[CartSpec Cart_WhenEmpty_AddsAnItem]' failed (0.002 seconds).",
                Some("CartSpec.Cart_WhenEmpty_AddsAnItem"),
            ),
            // swift-corelibs-xctest (Linux), and Xcode 15+'s form naming the device.
            ("Test Case 'ParserTests.testEmptyInput' failed (0.004 seconds)", Some("ParserTests.testEmptyInput")),
            (
                "Test case 'ParserTests.testEmptyInput()' failed on 'My Mac - Core (12345)' (0.004 seconds)",
                Some("ParserTests.testEmptyInput"),
            ),
            ("Test Case '-[CoreTests.ParserTests testEmptyInput]' passed (0.004 seconds).", None),
            ("Test Suite 'ParserTests' failed at 2026-07-15 21:26:03.123.", None),
        ],
        "documented: https://developer.apple.com/documentation/xctest (xcodebuild test output); Kiwi: https://github.com/kiwi-bdd/Kiwi",
    )
    .id(IdStyle::XcTest),
    form(
        "swift-testing",
        "✘ Test name() failed",
        &["✘ Test "],
        r#"^\s*✘ Test (?:"(?P<quoted>[^"]+)"|(?P<id>\S.*?)) (?:failed after|recorded an issue)"#,
        &[
            ("✘ Test parsesEmptyInput() failed after 0.005 seconds with 1 issue.", Some("parsesEmptyInput()")),
            (
                "✘ Test parsesEmptyInput() recorded an issue at ParserTests.swift:12:5: Expectation failed: (result → nil) == []",
                Some("parsesEmptyInput()"),
            ),
            ("✘ Test \"Parses empty input\" failed after 0.005 seconds with 1 issue.", Some("Parses empty input")),
            ("✔ Test parsesEmptyInput() passed after 0.005 seconds.", None),
        ],
        "documented: https://developer.apple.com/documentation/testing (swift test output)",
    ),
];

/// The name of gotestsum's summary form: its first line opens the summary whose `DONE N runs`
/// line says how many runs `--rerun-fails` made.
pub const GOTESTSUM_SUMMARY: &str = "=== FAIL: pkg Test";

/// Mocha's `N failing` summary: the entries after it (`  1) Suite`, more deeply indented title
/// lines, the last ending with `:`) hold no literal of their own, so the extractor reads the
/// lines after the header itself, up to this many.
pub const MOCHA_SECTION_LINES: u64 = 5_000;

/// Mocha's summary header, and its examples (documented: <https://mochajs.org/#spec>).
pub const MOCHA_HEADER: &str = r"^\s*\d+ failing\s*$";
pub const MOCHA_ANCHOR: &str = " failing";
