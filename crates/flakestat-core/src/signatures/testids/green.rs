//! What a *green* job's log says of its tests: which were retried to a pass (a hidden flake:
//! the job ended green, so nothing else shows it), how many tests passed, and how many retries
//! the runner made. Read from the log alone, with the same forms as a failed log's tests
//! ([`super::extract`]: pytest-rerunfailures' `RERUN`, nextest's `TRY n PASS`/`FLAKY`,
//! gotestsum's `--rerun-fails`, surefire's `Flakes:`) and the runners' own summary lines for the
//! counts:
//!
//! - pytest: `= 3 failed, 128 passed, 2 rerun in 68.76s =` (each session's line summed);
//! - nextest: `Summary [   0.012s] 5 tests run: 5 passed (1 flaky), 0 skipped`, and each failed
//!   try (`TRY 1 FAIL`) is a retry;
//! - gotestsum: `DONE 2 runs, 105 tests, 1 skipped, 1 failure in 10.2s` (every failure of a
//!   green job was re-run, so the tests that passed are `tests − skipped − failures`);
//! - surefire: the final `Tests run: 120, Failures: 0, Errors: 0, Skipped: 2, Flakes: 1` (a
//!   class's own line ends with `Time elapsed …`: not read), and each `Run n:` of its `Flakes:`
//!   section that is not `PASS` is a retry;
//! - jest: `Tests:       1 skipped, 40 passed, 41 total`;
//! - ctest: `100% tests passed, 0 tests failed out of 12`.
//!
//! Nothing here guesses: a log whose runner prints no summary has no passed count (`None`), and
//! the retries are at least one per test retried to a pass.

use std::io::BufRead;
use std::sync::LazyLock;

use regex::Regex;

use crate::model::GreenOutcome;

struct Summaries {
    pytest: Regex,
    pytest_count: Regex,
    nextest: Regex,
    nextest_try: Regex,
    gotestsum: Regex,
    surefire: Regex,
    surefire_run: Regex,
    jest: Regex,
    ctest: Regex,
    pytest_tuple: Regex,
}

static SUMMARIES: LazyLock<Summaries> = LazyLock::new(|| {
    Summaries {
    pytest: Regex::new(r"^=+ (?P<body>(?:\d+ [a-z]+(?:, )?)+) in [\d.]+s(?: \([\d:]+\))? =+$")
        .expect("compiles"),
    pytest_count: Regex::new(r"(\d+) ([a-z]+)").expect("compiles"),
    nextest: Regex::new(
        r"^\s*Summary \[\s*[\d.]+s\] (?P<run>\d+) tests? run: (?P<passed>\d+) passed(?: \((?P<flaky>\d+) flaky\))?",
    )
    .expect("compiles"),
    nextest_try: Regex::new(r"^\s*TRY \d+ (?:FAIL|TIMEOUT|SIGSEGV|SIGABRT|SIGKILL|ABORT) \[")
        .expect("compiles"),
    gotestsum: Regex::new(
        r"^DONE (?:\d+ runs?, )?(?P<tests>\d+) tests?(?:, (?P<skipped>\d+) skipped)?(?:, (?P<failures>\d+) failures?)?(?:, \d+ errors?)? in ",
    )
    .expect("compiles"),
    surefire: Regex::new(
        r"^(?:\[(?:INFO|WARNING|ERROR)\] )?Tests run: (?P<run>\d+), Failures: (?P<failures>\d+), Errors: (?P<errors>\d+), Skipped: (?P<skipped>\d+)(?:, Flakes: (?P<flakes>\d+))?\s*$",
    )
    .expect("compiles"),
    surefire_run: Regex::new(r"^\[(?:ERROR|WARNING|INFO)\]   Run \d+: (?P<what>.*)$")
        .expect("compiles"),
    jest: Regex::new(r"^Tests:\s+(?P<body>.*\d+ total)\s*$").expect("compiles"),
    ctest: Regex::new(r"^\d+% tests passed, (?P<failed>\d+) tests? failed out of (?P<total>\d+)")
        .expect("compiles"),
    // pytorch's verbose lines print pytest-rerunfailures' status as its tuple (real:
    // pytorch__pytorch__error_log_multiple_matches.txt:361).
    pytest_tuple: Regex::new(r"^(?P<id>[^\s\[]+::[^\s\[]+(?:\[[^\]]*\])?) \('RERUN', \{")
        .expect("compiles"),
}
});

/// The counts the summary lines of one log say (summed over several sessions of one runner).
#[derive(Debug, Default)]
struct Counts {
    passed: Option<u64>,
    retries: u64,
    /// Tests announced as re-run in pytorch's tuple form, which the failed logs' forms do not
    /// read.
    tuple_reruns: Vec<String>,
}

impl Counts {
    fn add_passed(&mut self, n: u64) {
        self.passed = Some(self.passed.unwrap_or(0) + n);
    }

    fn consider(&mut self, text: &str) {
        let s = &*SUMMARIES;
        let t = text.trim_end();
        if t.starts_with('=') {
            if let Some(c) = s.pytest.captures(t) {
                let mut passed = None;
                for n in s.pytest_count.captures_iter(&c["body"]) {
                    let k: u64 = n[1].parse().unwrap_or(0);
                    match &n[2] {
                        "passed" => passed = Some(k),
                        "rerun" => self.retries += k,
                        _ => {}
                    }
                }
                // A session that ran tests and passed none still said so.
                self.add_passed(passed.unwrap_or(0));
            }
            return;
        }
        if t.contains("('RERUN', {")
            && let Some(c) = s.pytest_tuple.captures(t)
        {
            self.tuple_reruns.push(c["id"].to_string());
        } else if let Some(c) = s.nextest.captures(t) {
            self.add_passed(c["passed"].parse().unwrap_or(0));
        } else if s.nextest_try.is_match(t) {
            self.retries += 1;
        } else if let Some(c) = s.gotestsum.captures(t) {
            let n = |k: &str| c.name(k).map_or(0, |m| m.as_str().parse().unwrap_or(0u64));
            let failures = n("failures");
            self.retries += failures;
            self.add_passed(
                n("tests")
                    .saturating_sub(n("skipped"))
                    .saturating_sub(failures),
            );
        } else if let Some(c) = s.surefire.captures(t) {
            let n = |k: &str| c.name(k).map_or(0, |m| m.as_str().parse().unwrap_or(0u64));
            self.add_passed(
                n("run")
                    .saturating_sub(n("failures"))
                    .saturating_sub(n("errors"))
                    .saturating_sub(n("skipped")),
            );
        } else if let Some(c) = s.surefire_run.captures(t) {
            if !c["what"].trim_start().starts_with("PASS") {
                self.retries += 1;
            }
        } else if let Some(c) = s.jest.captures(t) {
            let passed = s
                .pytest_count
                .captures_iter(&c["body"])
                .find(|n| &n[2] == "passed")
                .map_or(0, |n| n[1].parse().unwrap_or(0));
            self.add_passed(passed);
        } else if let Some(c) = s.ctest.captures(t) {
            let failed: u64 = c["failed"].parse().unwrap_or(0);
            let total: u64 = c["total"].parse().unwrap_or(0);
            self.add_passed(total.saturating_sub(failed));
        }
    }
}

/// Reads a green job's whole log: the tests retried to a pass (sorted by id, each once), how
/// many tests passed (`None` when no runner summary says), how many retries were made.
pub fn read_green(log: &str) -> GreenOutcome {
    let mut lines = GreenLines::default();
    for raw in log.lines() {
        lines.consider(raw.as_bytes());
    }
    lines.finish()
}

/// [`read_green`] over a log as it streams from `reader` (a large log spooled to a file is never
/// held whole): the same outcome as `read_green` of the log decoded lossily.
pub fn read_green_from(mut reader: impl BufRead) -> std::io::Result<GreenOutcome> {
    let mut lines = GreenLines::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        // As `str::lines` splits: at `\n`, a `\r` before it dropped with it.
        let raw = match line.strip_suffix(b"\n") {
            Some(head) => head.strip_suffix(b"\r").unwrap_or(head),
            None => &line[..],
        };
        lines.consider(String::from_utf8_lossy(raw).as_bytes());
    }
    Ok(lines.finish())
}

/// A green log's lines, one at a time: the runners' summaries and the tests they name.
#[derive(Debug, Default)]
struct GreenLines {
    counts: Counts,
    tests: super::TestLines,
    line: u64,
}

impl GreenLines {
    /// One raw line, without its line ending.
    fn consider(&mut self, raw: &[u8]) {
        self.line += 1;
        let text = crate::signatures::normalize::normalize_line(raw);
        self.counts.consider(&text);
        self.tests.consider_any(self.line, &text);
    }

    fn finish(self) -> GreenOutcome {
        let counts = self.counts;
        let tests = self.tests.finish();
        let mut retried = tests.flaky;
        // A tuple-form re-run with no final failure passed on a retry, as a `RERUN` line's does.
        for id in counts.tuple_reruns {
            let known = |r: &crate::model::TestRecord| r.id == id;
            if !tests.failed.iter().any(known) && !retried.iter().any(known) {
                let family = super::family(super::runners::Family::Brackets, &id);
                retried.push(crate::model::TestRecord {
                    id,
                    family,
                    runner: "pytest".into(),
                    line: 0,
                });
            }
        }
        retried.sort_by(|a, b| a.id.cmp(&b.id));
        GreenOutcome {
            passed: counts.passed,
            retries: counts.retries.max(retried.len() as u64),
            retried,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(o: &GreenOutcome) -> Vec<&str> {
        o.retried.iter().map(|r| r.id.as_str()).collect()
    }

    fn log(lines: &[&str]) -> String {
        lines
            .iter()
            .map(|l| format!("2026-07-12T17:22:03.2167544Z {l}\n"))
            .collect()
    }

    /// pytest-rerunfailures: the lines of a real pytorch log (`RERUN` in verbose mode, the
    /// `RERUNS` section, the `N rerun` summary) with the final outcome a pass.
    #[test]
    fn pytest_rerun_to_a_pass() {
        let o = read_green(&log(&[
            "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True ('RERUN', {'yellow': True}) [0.0117s] [ 70%]",
            "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True RERUN [0.0116s] [ 70%]",
            "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True PASSED [0.0116s] [ 70%]",
            "==================================== RERUNS ====================================",
            "============== 129 passed, 2 rerun in 68.76s (0:01:08) ===============",
        ]));
        assert_eq!(
            ids(&o),
            [
                "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True"
            ]
        );
        assert_eq!((o.passed, o.retries), (Some(129), 2));
    }

    /// pytorch's verbose form (`('RERUN', {'yellow': True})`, a real line) with the test passing
    /// after: retried to a pass; one that failed in the end is not.
    #[test]
    fn pytest_rerun_in_pytorch_s_tuple_form() {
        let o = read_green(&log(&[
            "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True ('RERUN', {'yellow': True}) [0.0117s] [ 70%]",
            "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True PASSED [0.0116s] [ 70%]",
            "inductor/test_x.py::T::test_y ('RERUN', {'yellow': True}) [0.2829s] [100%]",
            "FAILED [0.0103s] inductor/test_x.py::T::test_y - TypeError: unhashable type",
            "============== 1 failed, 128 passed, 2 rerun in 68.76s (0:01:08) ===============",
        ]));
        assert_eq!(
            ids(&o),
            [
                "inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True"
            ]
        );
        assert_eq!((o.passed, o.retries), (Some(128), 2));
    }

    /// Two pytest sessions in one job: their passes add up; a line that only looks like a
    /// summary (`== RERUNS ==`) counts nothing.
    #[test]
    fn pytest_sessions_add_up() {
        let o = read_green(&log(&[
            "================== 10 passed, 182 deselected in 0.36s ==================",
            "============== 5 passed, 1 skipped in 1.66s ===============",
        ]));
        assert_eq!((o.passed, o.retries), (Some(15), 0));
        assert!(o.retried.is_empty());
    }

    /// nextest's retries (documented: <https://nexte.st/docs/features/retries/>).
    #[test]
    fn nextest_flaky() {
        let o = read_green(&log(&[
            "        PASS [   0.004s] nextest-tests::basic test_success",
            "  TRY 1 FAIL [   0.005s] nextest-tests::basic test_flaky_mod_4",
            "  TRY 2 FAIL [   0.005s] nextest-tests::basic test_flaky_mod_4",
            "  TRY 3 PASS [   0.004s] nextest-tests::basic test_flaky_mod_4",
            "------------",
            "     Summary [   0.020s] 2 tests run: 2 passed (1 flaky), 0 skipped",
            "       FLAKY 3/3 [   0.004s] nextest-tests::basic test_flaky_mod_4",
        ]));
        assert_eq!(ids(&o), ["test_flaky_mod_4"]);
        assert_eq!((o.passed, o.retries), (Some(2), 2));
    }

    /// gotestsum `--rerun-fails`: the failure in the first run, the re-run that passed, and the
    /// `DONE` line's counts.
    #[test]
    fn gotestsum_rerun_fails() {
        let o = read_green(&log(&[
            "=== FAIL: internal/store TestOpen (0.01s)",
            "DONE 2 runs, 106 tests, 1 skipped, 1 failure in 10.2s",
        ]));
        assert_eq!(ids(&o), ["internal/store.TestOpen"]);
        assert_eq!((o.passed, o.retries), (Some(104), 1));
    }

    /// Surefire's `Flakes:` section (documented:
    /// <https://maven.apache.org/surefire/maven-surefire-plugin/examples/rerun-failing-tests.html>):
    /// a class's own line is not the total.
    #[test]
    fn surefire_flakes() {
        let o = read_green(&log(&[
            "[WARNING] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Flakes: 1, Time elapsed: 0.05 s -- in com.example.CartTest",
            "[INFO] Results:",
            "[WARNING] Flakes: ",
            "[WARNING] com.example.CartTest.addsItem",
            "[ERROR]   Run 1: CartTest.addsItem:42 expected: <1> but was: <2>",
            "[INFO]   Run 2: PASS",
            "[WARNING] Tests run: 120, Failures: 0, Errors: 0, Skipped: 2, Flakes: 1",
        ]));
        assert_eq!(ids(&o), ["com.example.CartTest.addsItem"]);
        assert_eq!((o.passed, o.retries), (Some(118), 1));
    }

    /// jest's and ctest's summaries give the passed count (documented: <https://jestjs.io/docs/cli>,
    /// <https://cmake.org/cmake/help/latest/manual/ctest.1.html>).
    #[test]
    fn jest_and_ctest_counts() {
        let o = read_green(&log(&["Tests:       1 skipped, 40 passed, 41 total"]));
        assert_eq!(o.passed, Some(40));
        let o = read_green(&log(&["100% tests passed, 0 tests failed out of 12"]));
        assert_eq!(o.passed, Some(12));
    }

    /// The streaming reader gives `read_green`'s outcome whatever the reader's chunks, line
    /// endings (`\r\n`, a stray `\r`, no final newline) or invalid UTF-8: a spooled log is
    /// read as one held whole would be.
    #[test]
    fn streaming_reads_as_the_whole_log() {
        let mut text = log(&[
            "inductor/test_a.py::T::test_b RERUN [0.01s] [ 50%]",
            "inductor/test_a.py::T::test_b PASSED [0.01s] [ 50%]",
            "  TRY 1 FAIL [   0.005s] nextest-tests::basic test_flaky_mod_4",
            "  TRY 2 PASS [   0.004s] nextest-tests::basic test_flaky_mod_4",
            "     Summary [   0.020s] 2 tests run: 2 passed (1 flaky), 0 skipped",
            "bad \u{fffd} bytes\r\r",
            "============== 129 passed, 2 rerun in 68.76s (0:01:08) ===============\r",
        ])
        .into_bytes();
        text.extend_from_slice(
            b"\xff\xfe2026-07-12T17:22:03.2167544Z DONE 2 runs, 6 tests, 1 failure in 1s\r",
        );
        let whole = read_green(&String::from_utf8_lossy(&text));
        assert_eq!(
            ids(&whole),
            ["inductor/test_a.py::T::test_b", "test_flaky_mod_4"]
        );
        // A reader that hands out 3 bytes at a time, splitting lines and characters.
        struct Trickle<'a>(&'a [u8]);
        impl std::io::Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(buf.len()).min(3);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let streamed =
            read_green_from(std::io::BufReader::with_capacity(4, Trickle(&text))).unwrap();
        assert_eq!(streamed, whole);
    }

    /// A log without any runner summary says nothing: no count rather than zero.
    #[test]
    fn no_summary_no_count() {
        let o = read_green(&log(&["Run make", "make: Nothing to be done for 'all'."]));
        assert_eq!(o, GreenOutcome::default());
    }
}
