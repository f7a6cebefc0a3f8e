//! The failure forms of common toolchains: data, not code. [`telling`](super::telling) ranks a
//! log's lines by the first form (in table order) whose pattern matches the normalized line.
//!
//! Each form names its ecosystem, a [`Tier`] (how telling a line of that form is), which of its
//! lines to keep ([`Keep`]: a compiler's *first* error is the cause and the rest follow from
//! it; a test run's *last* failure lines are its summary), and one real line it must recognise
//! (checked by the tests below, which also check that the line holds one of [`MARKERS`], the
//! literals the matcher searches for to find candidate lines at all).
//!
//! A line is only ever recognised when it holds one of [`MARKERS`] as well: the matcher's fast
//! path never shows it any other line, and the naive reference must agree with it.
//!
//! Table order matters twice: the first matching form wins (so specific forms precede the
//! generic ones they overlap, and boilerplate precedes the form it would otherwise pass for),
//! and within a tier earlier forms are reported first.

/// How telling a line is; lower is more telling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// The failure itself: a failed test, a panic or crash, a compiler error, the final
    /// exception, a sanitizer report, an annotation.
    Failure = 0,
    /// A summary or header that says *that* something failed: `BUILD FAILED`,
    /// `test result: FAILED`, `Traceback (most recent call last):`.
    Summary = 1,
    /// A generic error word (`ERROR`, `Error:`, `fatal:`) in no known form.
    Error = 2,
    /// Exit codes and the boilerplate a failed step ends with.
    Exit = 3,
}

/// Which lines of a form a log keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The first N distinct lines (compiler errors: the first is the cause).
    First(usize),
    /// The last N distinct lines (test summaries and final exceptions come last).
    Last(usize),
}

/// One failure form of one toolchain.
#[derive(Debug, Clone, Copy)]
pub struct Form {
    pub ecosystem: &'static str,
    pub name: &'static str,
    /// Rust regex on the normalized line.
    pub pattern: &'static str,
    pub tier: Tier,
    pub keep: Keep,
    /// Shown only when the log has nothing but boilerplate.
    pub boilerplate: bool,
    /// A real line of this form (from a public CI log), recognised as this form.
    pub example: &'static str,
}

const fn form(
    ecosystem: &'static str,
    name: &'static str,
    pattern: &'static str,
    tier: Tier,
    keep: Keep,
    example: &'static str,
) -> Form {
    Form {
        ecosystem,
        name,
        pattern,
        tier,
        keep,
        boilerplate: false,
        example,
    }
}

const fn boilerplate(
    ecosystem: &'static str,
    name: &'static str,
    pattern: &'static str,
    example: &'static str,
) -> Form {
    Form {
        ecosystem,
        name,
        pattern,
        tier: Tier::Exit,
        keep: Keep::Last(2),
        boilerplate: true,
        example,
    }
}

/// The name of the generic `##[error]` annotation form.
pub(crate) const ANNOTATION: &str = "error annotation";
/// The name of the form of an annotation that names a test, a file:line or a timeout, on its
/// first line or on a continuation line.
pub(crate) const NAMED_ANNOTATION: &str = "error annotation naming a test, file:line or timeout";

use Keep::{First, Last};
use Tier::{Error, Exit, Failure, Summary};

/// Substrings that make a line a candidate for any form (and the `##[group]`/`##[endgroup]`
/// markers that tell a step's echoed header from its output). The matcher finds candidate lines
/// with the same literal search it uses for signatures; every form's example holds one.
pub(crate) const MARKERS: &[&str] = &[
    "##[group]",
    "##[endgroup]",
    "##[error]",
    "FAILED",
    "FAIL",
    "Failed",
    "failed",
    "Traceback",
    "Fatal",
    "fatal",
    "FATAL",
    "Segmentation fault",
    "panicked at",
    "panic: ",
    "core dumped",
    "Error",
    "error",
    "ERROR",
    "ERR!",
    "ERR_PNPM_",
    "Exception",
    "KeyboardInterrupt",
    "E       ",
    "e: ",
    "✕",
    "×",
    "✘",
    "●",
    "_test.go:",
    ".go:",
    "Sanitizer",
    "Killed",
    "terminate called",
    "timed out",
    "Exceeded timeout",
    "Your lock file does not contain",
    "Your requirements could not be resolved",
    "wasm trap",
    "SEGFAULT",
    "Subprocess aborted",
    "signal: ",
    "SIGSEGV",
    "SIGABRT",
    "exit code",
    "exit status",
    "exited with",
    "go: ",
    "no matching versions for query",
];

/// The table. Order matters: see the module docs.
pub const FORMS: &[Form] = &[
    // --- boilerplate first: it must never pass for the form it resembles ---
    boilerplate(
        "github",
        "exit-code annotation",
        r"^##\[error\]Process completed with exit code -?\d+\.?$",
        "##[error]Process completed with exit code 1.",
    ),
    boilerplate(
        "github",
        "process failed annotation",
        r"^##\[error\]The process '[^']*' failed with exit code -?\d+",
        "##[error]The process '/usr/bin/git' failed with exit code 128",
    ),
    boilerplate(
        "yarn",
        "command failed",
        r"^error Command failed with (?:exit code|signal)",
        "error Command failed with exit code 1.",
    ),
    boilerplate(
        "npm",
        "npm trailer",
        r"^npm (?:ERR!|error) (?:code \S+$|errno -?\d+$|path |command |syscall |signal |A complete log of this run|Lifecycle script|Failed at the|This is probably not a problem|Exit status|workspace |location |\s*$)",
        "npm ERR! A complete log of this run can be found in: /home/runner/.npm/_logs/2023-05-04T10_11_12_345Z-debug-0.log",
    ),
    boilerplate(
        "make",
        "make recipe failed",
        r"^(?:g?make|mingw32-make)(?:\[\d+\])?: \*\*\* .*Error -?\d+",
        "make[2]: *** [CMakeFiles/foo.dir/build.make:76: CMakeFiles/foo.dir/foo.c.o] Error 1",
    ),
    boilerplate(
        "cargo",
        "build failed, waiting",
        r"^(?:warning|error): build failed, waiting for other jobs to finish",
        "warning: build failed, waiting for other jobs to finish...",
    ),
    // --- test failures ---
    form(
        "pytest",
        "short test summary",
        r"^(?:FAILED|ERROR) (?:\[[\d.]+s\] )?\S+(?:::\S+| - )",
        Failure,
        Last(3),
        "FAILED [0.0103s] inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True - TypeError: unhashable type: non-nested SymInt",
    ),
    form(
        "pytest",
        "verbose result",
        r"^\S+::\S+ (?:FAILED|ERROR)\b",
        Failure,
        Last(2),
        "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True FAILED [0.0114s] [ 70%]",
    ),
    form(
        "unittest",
        "test failed",
        r"^(?:FAIL|ERROR): \w+ \(",
        Failure,
        Last(3),
        "FAIL: test_parse_empty (tests.test_config.ConfigTests.test_parse_empty)",
    ),
    form(
        "go",
        "test failed",
        r"^\s*--- FAIL: \S+",
        Failure,
        First(3),
        "--- FAIL: TestWaitForPodsReady (2.93s)",
    ),
    form(
        "go",
        "test log line",
        r"^\s+\S+_test\.go:\d+: ",
        Failure,
        First(2),
        "    server_test.go:142: expected status 200, got 503",
    ),
    form(
        "go",
        "panic",
        r"^panic: ",
        Failure,
        First(2),
        "panic: runtime error: invalid memory address or nil pointer dereference",
    ),
    form(
        "go",
        "package failed",
        r"^FAIL\t\S+",
        Summary,
        Last(3),
        "FAIL\tgithub.com/example/project/pkg/server\t12.345s",
    ),
    form(
        "nextest",
        "test failed",
        r"^\s*(?:FAIL|SIGSEGV|SIGABRT|SIGKILL|TIMEOUT) \[\s*[\d.]+s\] ",
        Failure,
        Last(3),
        "        FAIL [   0.356s] (3847/5457) zterm terminal::view::tests::submit_cli_agent_rich_input_opencode_defers_enter_and_close",
    ),
    form(
        "cargo",
        "test failed",
        r"^\s*test \S+ \.\.\. FAILED$",
        Failure,
        Last(3),
        "    test terminal::view::tests::submit_cli_agent_rich_input_opencode_defers_enter_and_close ... FAILED",
    ),
    form(
        "rust",
        "panic",
        r"panicked at ",
        Failure,
        First(2),
        "  thread 'main' (8092) panicked at C:\\Users\\runneradmin\\.cargo\\registry\\src\\index.crates.io-1949cf8c6b5b557f\\tectonic_dep_support-0.1.1\\src\\lib.rs:113:14:",
    ),
    form(
        "jest",
        "test file failed",
        r"^\s*FAIL\s+\S",
        Failure,
        First(3),
        " FAIL  test/MockExpress.test.ts > MockExpress > should handle head requests",
    ),
    form(
        "jest",
        "test failed",
        r"^\s*[✕×] \S",
        Failure,
        First(3),
        "      ✕ renders the submit button disabled (35 ms)",
    ),
    form(
        "jest",
        "failure header",
        r"^\s*● \S.* › ",
        Failure,
        Last(3),
        "  ● LoginForm › submits the credentials",
    ),
    form(
        "jest",
        "test timed out",
        r"Exceeded timeout of \d+ ?ms|Test timed out in \d+ ?ms",
        Failure,
        First(2),
        "Error: Test timed out in 5000ms.",
    ),
    form(
        "swift",
        "XCTest case failed",
        r"^Test Case '.*' failed \(",
        Failure,
        Last(3),
        "Test Case '-[CoreTests.ParserTests testEmptyInput]' failed (0.004 seconds).",
    ),
    form(
        "swift",
        "swift-testing issue",
        r"^\s*✘ Test \S.* (?:recorded an issue|failed)",
        Failure,
        Last(3),
        "✘ Test parsesEmptyInput() recorded an issue at ParserTests.swift:12:5: Expectation failed: (result → nil) == []",
    ),
    form(
        "gradle",
        "test failed",
        r"^\S.* > \S.* FAILED$",
        Failure,
        Last(3),
        "com.example.crypto.Sha256Test > emptyInput() FAILED",
    ),
    form(
        "dotnet",
        "test failed",
        r"^\s*Failed \S+ \[[\d.]+ m?s\]",
        Failure,
        Last(3),
        "  Failed Calculator.Tests.AddTests.AddsNegativeNumbers [12 ms]",
    ),
    form(
        "ctest",
        "test failed",
        r"^\s*\d+ - \S+ \((?:Failed|SEGFAULT|Timeout|Subprocess aborted|Child aborted|Exception|OTHER_FAULT)\)",
        Failure,
        Last(3),
        "\t  3 - parser_test (Failed)",
    ),
    form(
        "ctest",
        "test result",
        r"^\s*\d+/\d+ Test\s+#\d+: \S+ \.*\s*\*+(?:Failed|Exception|Timeout)",
        Failure,
        Last(3),
        "3/12 Test  #3: parser_test ......................***Failed    0.02 sec",
    ),
    // An annotation that names a test, a file:line or a timeout says what failed as plainly as
    // the test runner's own FAIL line. Its first line alone rarely does (vitest: `##[error]` and
    // the message, then ` ❯ src/index.ts:253:5` under it), so the annotation's continuation
    // lines count: `telling` moves a closed "error annotation" here when its whole text matches.
    form(
        "github",
        NAMED_ANNOTATION,
        r"(?s)^##\[error\].*?(?:\S\.py::\w|\S\.(?:test|spec)\.[cm]?[jt]sx?\b|\S_test\.go\b| › |[\w.-]\.(?:py|pyx|rs|go|[cm]?[jt]sx?|java|kts?|scala|c|cc|cpp|cxx|cu|h|hh|hpp|cs|fs|swift|m|mm|rb|php|exs?|dart|lua|sh|zig):\d+|(?i:timed out|timeout))",
        Failure,
        First(3),
        "##[error]CredentialsProviderError: Could not load credentials from any providers\n ❯ node_modules/@aws-sdk/credential-provider-node/dist-cjs/index.js:129:13\n ❯ S3Proxy.healthCheck src/index.ts:253:5",
    ),
    // --- crashes, signals, sanitizers, traps ---
    form(
        "sanitizer",
        "report",
        r"==\d+==ERROR: \w*Sanitizer|^(?:WARNING|SUMMARY): \w*Sanitizer: ",
        Failure,
        First(2),
        "==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x0000004008d5 bp 0x7ffc6a3d3b00 sp 0x7ffc6a3d3af0",
    ),
    form(
        "sanitizer",
        "UBSan runtime error",
        r"^\S+:\d+:\d+: runtime error: ",
        Failure,
        First(2),
        "src/hash.c:88:17: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'",
    ),
    form(
        "wasm",
        "trap",
        r"wasm trap: |RuntimeError: (?:unreachable|memory access out of bounds|index out of bounds|divide by zero|integer overflow|call stack exhausted)",
        Failure,
        First(2),
        "Error: failed to run main module `target/wasm32-wasip1/debug/deps/core_tests.wasm`: wasm trap: wasm `unreachable` instruction executed",
    ),
    form(
        "swift",
        "runtime trap",
        r"^(?:\S+: )?Fatal error: ",
        Failure,
        First(2),
        "Fatal error: Unexpectedly found nil while unwrapping an Optional value",
    ),
    form(
        "signal",
        "crash",
        r"Segmentation fault|core dumped|Fatal Python error: |terminate called after throwing|\bKilled$|signal: (?:killed|segmentation fault|aborted)|(?:SIGSEGV|SIGABRT|SIGBUS|SIGILL)\b.*(?:received|caught|signal)",
        Failure,
        First(2),
        "Fatal Python error: Segmentation fault",
    ),
    // --- annotations: after test failures and crashes, whose own line says more ---
    form(
        "github",
        "canceled",
        r"^##\[error\]The (?:operation was canceled|job running on runner .* has exceeded the maximum execution time|runner has received a shutdown signal)",
        Summary,
        Last(1),
        "##[error]The operation was canceled.",
    ),
    form(
        "github",
        ANNOTATION,
        r"^##\[error\]\S",
        Failure,
        First(3),
        "##[error]CredentialsProviderError: Could not load credentials from any providers",
    ),
    // --- compilers ---
    form(
        "rustc",
        "error with code",
        r"^error\[E\d{4}\]: ",
        Failure,
        First(3),
        "error[E0599]: no variant or associated item named `Validation` found for enum `errors::ZipError` in the current scope",
    ),
    form(
        "gcc/clang",
        "error",
        r"^\S+?:\d+(?::\d+)?: (?:fatal )?error: ",
        Failure,
        First(3),
        "/tmp/.cache/bazel/_bazel_zetasketch-cpp/eab0d61a99b6696edb3d2aff87b585e8/sandbox/processwrapper-sandbox/336/execroot/_main/include/zetasketch/hll/encoding.h:15:1: error: nested namespaces can be concatenated [modernize-concat-nested-namespaces,-warnings-as-errors]",
    ),
    form(
        "msvc/msbuild/tsc",
        "coded error",
        r"\b(?:fatal )?error (?:C|LNK|CS|MSB|TS|FS|BC|NU|RC|NETSDK)\d{3,5}\s?: ",
        Failure,
        First(3),
        "main.obj : error LNK2019: unresolved external symbol \"int __cdecl compute(int)\" (?compute@@YAHH@Z) referenced in function main",
    ),
    form(
        "kotlin",
        "compiler error",
        r"^e: (?:file://)?\S+?:(?:\d+:\d+|\s\(\d+, \d+\))",
        Failure,
        First(3),
        "e: file:///home/runner/work/kotlin-crypto-pure/kotlin-crypto-pure/build.gradle.kts:2:11: Unresolved reference: libs",
    ),
    form(
        "maven",
        "compiler error",
        r"^\[ERROR\] \S+\.(?:java|kt|scala):\[\d+,\d+\] ",
        Failure,
        First(3),
        "[ERROR] /home/runner/work/app/app/src/main/java/com/example/App.java:[12,8] cannot find symbol",
    ),
    form(
        "go",
        "compiler error",
        r"^\S+\.go:\d+:\d+: \S",
        Failure,
        First(3),
        "internal/store/store.go:41:2: undefined: sqliteOpen",
    ),
    form(
        "gradle",
        "task failed",
        r"^> Task \S+ FAILED$",
        Failure,
        First(2),
        "> Task :shared:compileKotlinIosArm64 FAILED",
    ),
    // --- package managers and tools ---
    form(
        "composer",
        "unresolvable dependencies",
        r"Your lock file does not contain a compatible set of packages|Your requirements could not be resolved to an installable set of packages",
        Failure,
        First(2),
        "Your lock file does not contain a compatible set of packages. Please run composer update.",
    ),
    // The go command's module errors (`go mod tidy`, `go get`, `go build` with `-mod=readonly`)
    // say neither "error" nor "failed": `go: ` starts them, and an import stack ends in the
    // module that has no version (`\texample.com/x: no matching versions for query "latest"`).
    form(
        "go",
        "module error",
        r#"^go: .*?(?:no matching versions for query|errors parsing go\.(?:mod|work)|missing go\.sum entry|updates to go\.(?:mod|sum) needed|inconsistent vendoring|requires go >= |invalid version: |unknown revision |cannot find module providing package|no required module provides package|checksum mismatch|but does not contain package|module declares its path as|cannot find main module|go\.mod file not found|malformed module path|unrecognized import path|disabled by -mod=|: \d{3} [A-Z][A-Za-z ]+$)|^\s*\S+: no matching versions for query ""#,
        Failure,
        First(3),
        // Written from the go command's messages (cmd/go/internal/modload): no public CI log
        // of it is at hand.
        "go: github.com/example/missing@latest: no matching versions for query \"latest\"",
    ),
    form(
        "pnpm",
        "error code",
        r"\bERR_PNPM_\w+",
        Failure,
        First(2),
        " ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with \"frozen-lockfile\" because pnpm-lock.yaml is not up to date with packages/app/package.json",
    ),
    form(
        "yarn",
        "error",
        r"^error (?:\S+: |An unexpected error|Couldn't find|Package |Can't |There appears|Found incompatible|\S+@\S+)",
        Failure,
        First(3),
        "error @nuxt/kit@3.0.0: The engine \"node\" is incompatible with this module. Expected version \"^14.16.0 || ^16.10.0 || ^17.0.0 || ^18.0.0 || ^19.0.0\". Got \"20.1.0\"",
    ),
    form(
        "npm",
        "error",
        r"^npm (?:ERR!|error) \S",
        Summary,
        First(3),
        "npm ERR! 404 Not Found - GET https://registry.npmjs.org/@example%2fmissing - Not found",
    ),
    form(
        "terraform",
        "error",
        r"^│ Error: ",
        Failure,
        First(2),
        "│ Error: operation error DynamoDB: DescribeTable, https response error StatusCode: 400, RequestID: 3HG0BBBLNF1PFMI7M5SGD4EVONVV4KQNSO5AEMVJF66Q9ASUAAJG, ResourceNotFoundException: Requested resource not found",
    ),
    // --- exceptions ---
    form(
        "java",
        "uncaught exception",
        r#"^Exception in thread "[^"]*" \S|^Caused by: [\w.$]+"#,
        Failure,
        Last(2),
        "Exception in thread \"main\" java.lang.IllegalStateException: Keystore was tampered with, or password was incorrect",
    ),
    form(
        "pytest",
        "E line",
        r"^E\s{2,}(?:(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)\b|assert\b|Failed: )",
        Failure,
        First(2),
        "E       AssertionError: condition not satisfied within 5.0s",
    ),
    form(
        "python/js",
        "final exception",
        r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)(?::\s|:?$)",
        Failure,
        Last(2),
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files and it looks like t5-small is not the path to a directory containing a file named config.json.",
    ),
    // --- summaries ---
    form(
        "cargo",
        "could not compile",
        r"^error: could not compile `",
        Summary,
        Last(2),
        "error: could not compile `zip` (lib test) due to 265 previous errors",
    ),
    form(
        "cargo",
        "test result",
        r"^\s*test result: FAILED\.",
        Summary,
        Last(2),
        "    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 3575 filtered out; finished in 0.32s",
    ),
    form(
        "rustc/cargo",
        "error",
        r"^error: \S",
        Summary,
        First(3),
        "error: failed to run custom build command for `tectonic_bridge_graphite2 v0.2.2`",
    ),
    form(
        "gradle/maven",
        "build failed",
        r"^(?:BUILD FAILED|\[ERROR\] BUILD FAILURE|BUILD FAILURE|FAILURE: Build failed with an exception)|^\[ERROR\] Failed to execute goal ",
        Summary,
        Last(2),
        "FAILURE: Build failed with an exception.",
    ),
    form(
        "ctest",
        "tests failed",
        r"The following tests FAILED:|^\d+% tests passed, \d+ tests? failed",
        Summary,
        Last(2),
        "The following tests FAILED:",
    ),
    form(
        "pytest",
        "session summary",
        r"^=+ .*\b\d+ (?:failed|errors?)\b.* =+$",
        Summary,
        Last(1),
        "=========== 1 failed, 312 passed, 4 skipped in 97.21s (0:01:37) ===========",
    ),
    form(
        "pytest",
        "failure section",
        r"^_{3,} ERROR at \w+ of \S+ _{3,}$",
        Summary,
        Last(2),
        "____________ ERROR at setup of test_elasticsearch_fixture_structure ____________",
    ),
    form(
        "jest/vitest",
        "run summary",
        r"^\s*Tests?(?: Files)?:?\s+\d+ failed",
        Summary,
        Last(1),
        "Tests:       1 failed, 41 passed, 42 total",
    ),
    form(
        "python",
        "traceback",
        r"^\s*Traceback \(most recent call last\):",
        Summary,
        Last(2),
        "Traceback (most recent call last):",
    ),
    // --- generic error words ---
    form(
        "any",
        "exit code",
        r"exit code|exit status|exited with",
        Exit,
        Last(3),
        "Error: Process completed with exit code 2: make test",
    ),
    form(
        "any",
        "failure word",
        r"FAILED|Traceback|Fatal|fatal:|FATAL|Segmentation fault|panicked at|core dumped",
        Error,
        Last(super::telling::MAX_ERROR_LINES),
        "fatal: could not read Username for 'https://github.com': terminal prompts disabled",
    ),
    form(
        "any",
        "error word",
        r"Error:|Error |error:|ERROR|error\[|Exception:|ERR!",
        Error,
        Last(super::telling::MAX_ERROR_LINES),
        "ERROR: Could not find a version that satisfies the requirement torch==2.9.0 (from versions: none)",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_holds_a_marker() {
        for f in FORMS {
            assert!(
                MARKERS.iter().any(|m| f.example.contains(m)),
                "{} {}: example holds no marker, so the matcher would never show it",
                f.ecosystem,
                f.name
            );
        }
    }

    #[test]
    fn forms_compile_and_patterns_are_not_empty() {
        for f in FORMS {
            let r = regex::Regex::new(f.pattern)
                .unwrap_or_else(|e| panic!("{} {}: {e}", f.ecosystem, f.name));
            assert!(
                !r.is_match(""),
                "{} {} matches nothing",
                f.ecosystem,
                f.name
            );
            assert!(!f.example.is_empty());
        }
    }
}
