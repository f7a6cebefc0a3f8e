//! A repository whose CI is not Python: a Go job, a Jest job and a Maven job, each failing with a
//! test that fails and one that fails and then passes on a retry, and each uploading its JUnit
//! XML as an artifact (`survey --junit-artifacts 'junit-*'`). The strange parts of GitHub's
//! artifacts are here too: an artifact past retention (`expired: true`), one that expires
//! between the listing and the download (410), a zip bomb, one over the size cap, and an
//! artifact of another kind (coverage) that the pattern does not take.
//!
//! Run 1 has readable reports for all three jobs; run 2's are expired, gone, a bomb and too
//! large, so its tests can only come from its logs. The Go job runs alone (its artifact is
//! told by time); Jest and Maven run at once (their artifacts are told by the matrix values in
//! their names).

use std::collections::BTreeMap;

use chrono::{TimeDelta, TimeZone, Utc};

use super::super::dataset::{
    ArtifactBody, Dataset, FakeArtifact, FakeAttempt, FakeCommit, FakeLog, FakeRun,
};
use flakestat_core::model::{Job, JobId, Repo, Run, RunId, Sha, Timestamp, WorkflowId};

/// The repository of [`ecosystems`].
pub const REPO: &str = "octo/polyglot";

/// The runs of [`ecosystems`]: the first with readable reports, the second with none.
pub const RUNS: [RunId; 2] = [RunId(30_000_000_001), RunId(30_000_000_002)];

/// The bomb's inflated size: a few kilobytes on the wire.
pub const BOMB_SIZE: u64 = 8 << 20;

/// The too-large artifact's size: over a 2 MiB `--max-artifact-size`.
pub const BULK_SIZE: u64 = 3 << 20;

/// (job name, offset of its start from the run's, minutes it runs, its log's test lines).
const JOBS: [(&str, i64, i64, &[&str]); 3] = [
    (
        "go test (linux)",
        0,
        5,
        &[
            "=== RUN   TestFetch",
            "--- FAIL: TestFetch (0.01s)",
            "    fetch_test.go:12: timeout after 10ms",
            "FAIL\texample.com/net\t0.015s",
        ],
    ),
    (
        "jest (node-20)",
        10,
        5,
        &[
            "  ● Cart › adds an item",
            "    expect(received).toBe(expected) // Object.is equality",
        ],
    ),
    (
        "maven (jdk-21)",
        10,
        6,
        &[
            "[ERROR] Failures: ",
            "[ERROR]   CartTest.addsItem:42 expected: <1> but was: <2>",
            "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0",
        ],
    ),
];

const GO_JUNIT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="2">
  <testsuite name="example.com/net" tests="3" failures="2">
    <testcase classname="example.com/net" name="TestFetch" time="0.010"><failure message="Failed">fetch_test.go:12: timeout after 10ms</failure></testcase>
    <testcase classname="example.com/net" name="TestRetry" time="0.020"><failure message="Failed">retry_test.go:8: connection reset</failure></testcase>
    <testcase classname="example.com/net" name="TestRetry" time="0.020"></testcase>
    <testcase classname="example.com/net" name="TestParse" time="0.001"></testcase>
  </testsuite>
</testsuites>
"#;

const JEST_JUNIT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="3" failures="1" errors="0">
  <testsuite name="Cart" tests="3" failures="1" errors="0" skipped="0">
    <testcase classname="Cart" name="adds an item" time="0.004"><failure>Error: expect(received).toBe(expected)</failure></testcase>
    <testcase classname="Cart" name="removes an item" time="0.002"></testcase>
    <testcase classname="Cart" name="applies a coupon" time="0.002"><skipped/></testcase>
  </testsuite>
</testsuites>
"#;

const MAVEN_JUNIT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.example.CartTest" tests="3" failures="1" errors="0" skipped="0">
  <testcase name="addsItem" classname="com.example.CartTest" time="0.012"><failure message="expected: &lt;1&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError">trace</failure></testcase>
  <testcase name="retried" classname="com.example.CartTest" time="0.020"><flakyFailure message="boom" type="java.lang.AssertionError"><stackTrace>x</stackTrace></flakyFailure></testcase>
  <testcase name="totals" classname="com.example.CartTest" time="0.001"/>
</testsuite>
"#;

/// The dataset: two failing runs on `main`, three jobs each, and their artifacts.
pub fn ecosystems() -> Dataset {
    let start = |i: i64| -> Timestamp {
        Utc.with_ymd_and_hms(2026, 6, 1, 8, 0, 0)
            .single()
            .expect("valid date")
            + TimeDelta::hours(6 * i)
    };
    let repo = Repo::parse(REPO).expect("a valid name");
    let mut ds = Dataset::new(repo.clone(), start(8));
    for (i, &id) in RUNS.iter().enumerate() {
        let began = start(i as i64);
        let sha = Sha(super::super::routes::fake_sha(&format!("polyglot {i}")));
        ds.commits.push(FakeCommit {
            sha: sha.clone(),
            parents: ds
                .commits
                .last()
                .map(|c| c.sha.clone())
                .into_iter()
                .collect(),
            message: format!("Commit {i}"),
            author: "octocat".into(),
            date: began - TimeDelta::minutes(1),
            files: Vec::new(),
        });
        ds.branches.insert("main".into(), sha.clone());
        let run = Run {
            id,
            workflow_id: WorkflowId(3001),
            workflow_name: "CI".into(),
            workflow_path: ".github/workflows/ci.yml".into(),
            display_title: format!("Commit {i}"),
            event: "push".into(),
            head_branch: Some("main".into()),
            head_sha: sha.clone(),
            run_number: i as u64 + 1,
            run_attempt: 1,
            status: "completed".into(),
            conclusion: Some("failure".into()),
            created_at: began,
            updated_at: began + TimeDelta::minutes(20),
            run_started_at: Some(began),
            html_url: format!("https://github.com/{repo}/actions/runs/{id}"),
            pull_requests: Vec::new(),
            head_repository: None,
        };
        let mut jobs = Vec::new();
        for (k, (name, offset, minutes, lines)) in JOBS.iter().enumerate() {
            let from = began + TimeDelta::minutes(*offset);
            let to = from + TimeDelta::minutes(*minutes);
            let job = Job {
                id: JobId(id.0 * 10 + k as u64),
                run_id: id,
                run_attempt: 1,
                name: name.to_string(),
                status: "completed".into(),
                conclusion: Some("failure".into()),
                created_at: from,
                started_at: Some(from),
                completed_at: Some(to),
                html_url: Some(format!(
                    "https://github.com/{repo}/actions/runs/{id}/job/{}",
                    id.0 * 10 + k as u64
                )),
                labels: Vec::new(),
                head_sha: sha.clone(),
            };
            ds.logs.insert(job.id, test_log(from, lines));
            jobs.push(job);
        }
        ds.runs.push(FakeRun::new(
            run,
            FakeAttempt {
                attempt: 1,
                created_at: began,
                conclusion: Some("failure".into()),
                jobs,
            },
        ));
        // Each upload two minutes after its job started, inside its execution.
        let made = |k: usize| began + TimeDelta::minutes(JOBS[k].1 + 2);
        let files = |name: &str, text: &str| {
            ArtifactBody::Files(BTreeMap::from([(name.to_string(), text.to_string())]))
        };
        let bodies: [(&str, usize, ArtifactBody); 4] = if i == 0 {
            [
                ("junit-go-linux", 0, files("report.xml", GO_JUNIT)),
                ("junit-jest-node-20", 1, files("junit.xml", JEST_JUNIT)),
                (
                    "junit-maven-jdk-21",
                    2,
                    files("TEST-com.example.CartTest.xml", MAVEN_JUNIT),
                ),
                ("coverage-linux", 0, files("coverage.xml", "<coverage/>")),
            ]
        } else {
            [
                ("junit-go-linux", 0, ArtifactBody::Expired),
                ("junit-jest-node-20", 1, ArtifactBody::Gone),
                (
                    "junit-maven-jdk-21",
                    2,
                    ArtifactBody::Zeros {
                        entry: "TEST-bomb.xml".into(),
                        size: BOMB_SIZE,
                    },
                ),
                (
                    "junit-huge",
                    2,
                    ArtifactBody::Bulk {
                        entry: "TEST-huge.xml".into(),
                        size: BULK_SIZE,
                    },
                ),
            ]
        };
        for (n, (name, k, body)) in bodies.into_iter().enumerate() {
            ds.artifacts.push(FakeArtifact {
                id: 7_000 + (i as u64) * 10 + n as u64,
                run: id,
                name: name.into(),
                created_at: made(k),
                body,
            });
        }
    }
    ds
}

/// A failed job's raw log holding the runner's lines.
fn test_log(started: Timestamp, lines: &[&str]) -> FakeLog {
    let at = |secs: i64| crate::stamp::log_line(started + TimeDelta::seconds(secs));
    let mut text = format!("\u{feff}{} ##[group]Run tests\n", at(10));
    for (n, line) in lines.iter().enumerate() {
        text.push_str(&format!("{} {line}\n", at(11 + n as i64)));
    }
    text.push_str(&format!(
        "{} ##[error]Process completed with exit code 1.\n",
        at(60)
    ));
    FakeLog::Text(text)
}
