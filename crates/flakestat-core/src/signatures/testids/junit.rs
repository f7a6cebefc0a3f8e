//! JUnit XML (the report surefire, Gradle, pytest `--junitxml`, GoogleTest `--gtest_output=xml`,
//! jest-junit, go-junit-report and most other runners write) → the same [`TestOutcomes`] a log
//! gives. Read as a stream of events with quick-xml: memory does not grow with the report's
//! size beyond the ids kept (at most [`MAX_TESTS`](super::MAX_TESTS)).
//!
//! A `<testcase>` with a `<failure>` or `<error>` failed; one with only `<flakyFailure>` or
//! `<flakyError>` (surefire's rerun that passed) is flaky; the same id both failed and passed
//! in one report (a retry plugin writing each execution) is flaky too. `<skipped>` says
//! nothing. The id is `classname.name` (`name` alone without a class), as surefire and
//! GoogleTest print it.

use std::collections::BTreeMap;
use std::io::BufRead;

use quick_xml::events::{BytesStart, Event};

use super::{Family, MAX_TESTS, family};
use crate::model::{TestOutcomes, TestRecord};

/// Why a file is not a JUnit report.
#[derive(Debug, thiserror::Error)]
pub enum JunitError {
    #[error("not well-formed XML at byte {position}: {message}")]
    Xml { position: u64, message: String },
    #[error("XML, but no <testsuite> or <testcase> in it: not a JUnit report")]
    NotJunit,
}

/// Whether the start of a file looks like XML (after a BOM and blanks).
pub fn looks_like_xml(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace());
    start.is_some_and(|i| {
        let rest = &head[i..];
        rest.starts_with(b"<?xml") || rest.starts_with(b"<testsuite")
    })
}

#[derive(Default)]
struct Case {
    failed: bool,
    flaky: bool,
    passed: bool,
}

/// Reads a JUnit report.
pub fn parse(reader: impl BufRead) -> Result<TestOutcomes, JunitError> {
    let mut xml = quick_xml::Reader::from_reader(reader);
    let mut buf = Vec::new();
    let mut cases: BTreeMap<String, Case> = BTreeMap::new();
    let mut saw_junit = false;
    // The testcase being read: its id and what its children said.
    let mut open: Option<(String, bool, bool, bool)> = None;
    loop {
        let event = xml.read_event_into(&mut buf).map_err(|e| JunitError::Xml {
            position: xml.buffer_position(),
            message: e.to_string(),
        })?;
        match event {
            Event::Start(e) | Event::Empty(e) if is(&e, "testsuite") || is(&e, "testsuites") => {
                saw_junit = true;
            }
            Event::Start(e) if is(&e, "testcase") => {
                saw_junit = true;
                open = Some((case_id(&e), false, false, false));
            }
            Event::Empty(e) if is(&e, "testcase") => {
                saw_junit = true;
                close(&mut cases, (case_id(&e), false, false, false));
            }
            Event::Start(e) | Event::Empty(e) => {
                if let Some((_, failed, flaky, skipped)) = &mut open {
                    match e.local_name().as_ref() {
                        "failure" | "error" => *failed = true,
                        "flakyFailure" | "flakyError" => *flaky = true,
                        "skipped" => *skipped = true,
                        _ => {}
                    }
                }
            }
            Event::End(e) if e.local_name().as_ref() == "testcase" => {
                if let Some(case) = open.take() {
                    close(&mut cases, case);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !saw_junit {
        return Err(JunitError::NotJunit);
    }
    let mut out = TestOutcomes::default();
    for (id, case) in cases {
        let record = TestRecord {
            family: family(Family::Parens, &family(Family::Brackets, &id)),
            id,
            runner: "junit".into(),
            line: 0,
        };
        if case.flaky || (case.failed && case.passed) {
            out.flaky.push(record);
        } else if case.failed {
            out.failed.push(record);
        }
    }
    Ok(out)
}

fn is(e: &BytesStart<'_>, name: &str) -> bool {
    e.local_name().as_ref() == name
}

fn close(
    cases: &mut BTreeMap<String, Case>,
    (id, failed, flaky, skipped): (String, bool, bool, bool),
) {
    if id.is_empty() || (!cases.contains_key(&id) && cases.len() >= MAX_TESTS) {
        return;
    }
    let case = cases.entry(id).or_default();
    case.failed |= failed;
    case.flaky |= flaky && !failed;
    case.passed |= !failed && !flaky && !skipped;
}

fn case_id(e: &BytesStart<'_>) -> String {
    let mut class = String::new();
    let mut name = String::new();
    for attr in e.attributes().flatten() {
        let value = attr
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map(|v| v.into_owned())
            .unwrap_or_else(|_| attr.value.to_string());
        match attr.key.local_name().as_ref() {
            "classname" => class = value,
            "name" => name = value,
            _ => {}
        }
    }
    let id = if class.is_empty() {
        name
    } else {
        format!("{class}.{name}")
    };
    crate::signatures::bounded_text(id.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(r: &[TestRecord]) -> Vec<&str> {
        r.iter().map(|t| t.id.as_str()).collect()
    }

    /// Surefire's report (documented: <https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report.xsd>).
    #[test]
    fn surefire_failures_errors_flakes_and_skips() {
        let xml = br#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.example.CartTest" tests="5" failures="1" errors="1" skipped="1">
  <testcase name="addsItem" classname="com.example.CartTest" time="0.01">
    <failure message="expected: &lt;1&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError">trace</failure>
  </testcase>
  <testcase name="totals" classname="com.example.CartTest"><error type="java.lang.NullPointerException"/></testcase>
  <testcase name="retried" classname="com.example.CartTest">
    <flakyFailure message="boom" type="java.lang.AssertionError"><stackTrace>x</stackTrace></flakyFailure>
  </testcase>
  <testcase name="skips" classname="com.example.CartTest"><skipped/></testcase>
  <testcase name="passes" classname="com.example.CartTest"/>
</testsuite>"#;
        let got = parse(&xml[..]).unwrap();
        assert_eq!(
            ids(&got.failed),
            vec![
                "com.example.CartTest.addsItem",
                "com.example.CartTest.totals"
            ]
        );
        assert_eq!(ids(&got.flaky), vec!["com.example.CartTest.retried"]);
        assert_eq!(got.failed[0].runner, "junit");
    }

    /// pytest `--junitxml` keeps the parameters in `name`; a test that failed and then passed
    /// in one report (a retry writing both executions) is flaky.
    #[test]
    fn pytest_parameters_and_retries() {
        let xml = br#"<testsuites><testsuite name="pytest" errors="0" failures="2">
<testcase classname="tests.graph.test_graph" name="test_wait[3.14t]"><failure message="AssertionError">x</failure></testcase>
<testcase classname="tests.net" name="test_fetch"><failure message="timeout"/></testcase>
<testcase classname="tests.net" name="test_fetch"/>
</testsuite></testsuites>"#;
        let got = parse(&xml[..]).unwrap();
        assert_eq!(
            ids(&got.failed),
            vec!["tests.graph.test_graph.test_wait[3.14t]"]
        );
        assert_eq!(got.failed[0].family, "tests.graph.test_graph.test_wait");
        assert_eq!(ids(&got.flaky), vec!["tests.net.test_fetch"]);
    }

    #[test]
    fn broken_and_foreign_xml_are_refused() {
        assert!(matches!(
            parse(&b"<testsuite><testcase name='a'></testsuite>"[..]),
            Err(JunitError::Xml { .. })
        ));
        assert!(matches!(
            parse(&b"<?xml version='1.0'?><project><dependency/></project>"[..]),
            Err(JunitError::NotJunit)
        ));
        assert!(looks_like_xml(b"\xef\xbb\xbf\n  <?xml version='1.0'?>"));
        assert!(!looks_like_xml(b"2026-07-15T21:26:03.1234567Z <testsuite>"));
    }
}
