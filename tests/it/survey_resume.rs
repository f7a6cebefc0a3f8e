//! A stop is not a reason to download again (issue #23, 2): a survey of the bundled story stopped
//! by the rate limit, again and again, then resumed until it ends, asks for every job log and
//! every attempt archive exactly as often as one uninterrupted survey does, and ends with the
//! same snapshot; killed with SIGKILL in the middle of its log phase, the next survey fetches again
//! at most the downloads that were in flight (no more than the concurrency).
//!
//! The fake is GitHub's strange self: a log request to the API costs a request of the budget
//! (its answer is a 302), the log host costs nothing, `x-ratelimit-reset` is in epoch seconds;
//! with the stale-attempt-log bug on, so that earlier attempts' logs come from their archives.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{self, story_dir};
use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{Dataset, FakeGitHub, Faults, Listener, RecordedRequest, RouteKind};
use flakestat::fetch::{ClientConfig, FetchError, Session, StatsSnapshot, SurveyPlan};
use flakestat::model::{Repo, Snapshot, Timestamp};
use flakestat::signatures::SignatureSet;
use flakestat::signatures::load::load_bundled;
use flakestat::store::{Store, StoreHandle};

fn repo() -> Repo {
    Repo::parse("NVIDIA/cuda-python").unwrap()
}

fn since() -> Timestamp {
    chrono::DateTime::parse_from_rfc3339("2026-06-15T00:00:00Z")
        .unwrap()
        .to_utc()
}

fn story() -> Dataset {
    Dataset::load(&story_dir()).unwrap()
}

/// The fake's faults of every survey here: the stale-attempt-log bug, and a little latency on
/// both hosts so that downloads overlap, as they do on GitHub.
fn strange(rate_limit: Option<u32>) -> Faults {
    Faults {
        stale_attempt_logs: true,
        latency: Duration::from_millis(15),
        rate_limit,
        ..Faults::default()
    }
}

/// Whether a recorded request is a log or an archive download (or its API request), and not a
/// refusal of the rate limit.
fn is_download(r: &RecordedRequest) -> bool {
    let api = matches!(r.kind, RouteKind::JobLog | RouteKind::AttemptLogs);
    let host = matches!(r.kind, RouteKind::LogBlob | RouteKind::ArchiveBlob);
    (api && r.listener == Listener::Api && r.status != 403 && r.status != 429) || host
}

/// How often each log and archive was asked for: per kind and path (without the signed
/// link's query, which differs each time).
fn downloads(requests: &[RecordedRequest]) -> BTreeMap<(String, String), usize> {
    let mut counts = BTreeMap::new();
    for r in requests.iter().filter(|r| is_download(r)) {
        let path = r.path.split('?').next().unwrap_or_default().to_string();
        *counts.entry((format!("{:?}", r.kind), path)).or_insert(0) += 1;
    }
    counts
}

/// The requests asked for more often than in `reference`, with how many times more.
fn extra(
    counts: &BTreeMap<(String, String), usize>,
    reference: &BTreeMap<(String, String), usize>,
) -> BTreeMap<(String, String), usize> {
    counts
        .iter()
        .filter_map(|(key, &n)| {
            let before = reference.get(key).copied().unwrap_or(0);
            (n > before).then(|| (key.clone(), n - before))
        })
        .collect()
}

/// One survey of the story's window through the library, as the CLI does, with the bundled
/// signatures; the client stops at once when the budget is spent (no waiting for the reset).
/// Returns the client's figures with the outcome.
fn survey_once(
    gh: &FakeGitHub,
    cache: &Path,
    set: &Arc<SignatureSet>,
) -> (Result<(), FetchError>, StatsSnapshot) {
    let store = StoreHandle::new(Store::open(cache).unwrap());
    let mut config = ClientConfig::new(gh.api_url(), None);
    config.max_reset_wait = Duration::ZERO;
    config.backoff_base = Duration::from_millis(5);
    let session = Session::new(config, Arc::new(())).unwrap();
    let plan = SurveyPlan {
        repo: repo(),
        since: since(),
        until: story().now,
        workflows: vec![],
        branch: None,
        event: None,
        interruptible: false,
    };
    let outcome = session
        .survey(store, set.clone(), &plan, &|_, _| BTreeSet::new())
        .map(drop);
    (outcome, session.stats())
}

fn snapshot(cache: &Path, set: &SignatureSet) -> Snapshot {
    Store::open(cache)
        .unwrap()
        .load_snapshot(&repo(), since(), story().now, &set.fingerprint())
        .unwrap()
}

#[test]
fn a_survey_stopped_by_the_rate_limit_fetches_no_log_or_archive_twice() {
    let set = Arc::new(SignatureSet::compile(load_bundled()).unwrap());
    let (reference, whole) = {
        let gh = FakeGitHub::start_blocking(story(), strange(None)).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let (outcome, stats) = survey_once(&gh, cache.path(), &set);
        outcome.unwrap();
        assert_eq!(stats.finished_after_stop, None, "not stopped");
        (downloads(&gh.requests()), snapshot(cache.path(), &set))
    };
    assert!(
        reference.keys().any(|(kind, _)| kind == "ArchiveBlob"),
        "the story's stale logs need attempt archives: {reference:?}"
    );

    let gh = FakeGitHub::start_blocking(story(), strange(Some(25))).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut stops = 0;
    let mut finished = Vec::new();
    loop {
        let (outcome, stats) = survey_once(&gh, cache.path(), &set);
        match outcome {
            Ok(()) => break,
            Err(FetchError::RateLimited { reset }) => {
                stops += 1;
                // An hour away, as on GitHub: the survey stopped rather than wait.
                assert!(reset > chrono::Utc::now() + chrono::TimeDelta::minutes(30));
                // Said, and no more than the downloads that can be under way.
                let after = stats.finished_after_stop.expect("a stop is said");
                assert!(
                    after <= flakestat::fetch::DEFAULT_CONCURRENCY as u64,
                    "{after}"
                );
                finished.push(after);
                assert!(stops < 60, "the survey never ends");
                // The hour passes: the next survey has the whole budget again.
                gh.refill_budget();
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(stops >= 5, "stopped {stops} times only");
    eprintln!("{stops} stops; downloads finished after each stop began: {finished:?}");
    let resumed = downloads(&gh.requests());
    assert_eq!(
        extra(&resumed, &reference),
        BTreeMap::new(),
        "asked for again after {stops} stops"
    );
    assert_eq!(resumed, reference, "every log and archive, once");
    assert_eq!(snapshot(cache.path(), &set), whole);
}

fn survey_args(api: &str, cache: &Path) -> Vec<String> {
    [
        "survey",
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-06-15",
        "--until",
        "2026-08-02",
        "--api-url",
        api,
        "--format",
        "json",
        "--cache-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        cache.to_str().unwrap().to_string(),
        "--signatures".into(),
        common::signatures().to_str().unwrap().to_string(),
    ])
    .collect()
}

fn run_survey(api: &str, cache: &Path) -> Output {
    common::ok(
        common::flakestat()
            .args(survey_args(api, cache))
            .output()
            .expect("the binary runs"),
    )
}

/// The logs a running survey has stored so far, read without writing: `Store::open` brings the
/// schema forward in a write transaction, which polled every few milliseconds contends with the
/// survey's own writes on a busy machine (the survey could finish before the poll got a turn).
fn logs_stored_now(cache: &Path) -> u64 {
    use rusqlite::{Connection, OpenFlags};
    let path = flakestat::store::store_file(cache);
    Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|conn| {
            conn.query_row(
                "SELECT count(*) FROM logs WHERE status = 'stored'",
                [],
                |row| row.get::<_, i64>(0),
            )
        })
        .map_or(0, |n| n as u64)
}

#[test]
fn a_survey_killed_in_its_log_phase_fetches_again_at_most_what_was_in_flight() {
    let (reference, whole) = {
        let gh = FakeGitHub::start_blocking(story(), strange(None)).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let out = run_survey(&gh.api_url(), cache.path());
        (downloads(&gh.requests()), out.stdout)
    };
    let failed_logs = reference
        .keys()
        .filter(|(kind, _)| kind == "JobLog")
        .count() as u64;

    let gh = FakeGitHub::start_blocking(story(), strange(None)).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut child = common::flakestat()
        .args(survey_args(&gh.api_url(), cache.path()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // SIGKILL once a third of the logs are stored: in the middle of the log phase.
    loop {
        if child.try_wait().unwrap().is_some() {
            panic!("the survey ended before it could be killed");
        }
        let stored = logs_stored_now(cache.path());
        if stored * 3 >= failed_logs {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let out = run_survey(&gh.api_url(), cache.path());
    assert!(
        out.stdout == whole,
        "the resumed survey reports what a whole one does"
    );
    let killed = downloads(&gh.requests());
    let again = extra(&killed, &reference);
    eprintln!("fetched again after SIGKILL: {again:?}");
    let concurrency = flakestat::fetch::DEFAULT_CONCURRENCY;
    let from_host: usize = again
        .iter()
        .filter(|((kind, _), _)| kind == "LogBlob" || kind == "ArchiveBlob")
        .map(|(_, n)| n)
        .sum();
    let from_api: usize = again
        .iter()
        .filter(|((kind, _), _)| kind == "JobLog" || kind == "AttemptLogs")
        .map(|(_, n)| n)
        .sum();
    assert!(
        from_host <= concurrency && from_api <= concurrency,
        "fetched again after the kill: {again:?}"
    );
    // Nothing asked for less often than once per need.
    for (key, n) in &reference {
        assert!(killed.get(key).is_some_and(|k| k >= n), "{key:?}");
    }
}

/// The closing line of a survey the rate limit stopped says so, and how many logs under way it
/// finished first; the next survey asks for no log or archive the stopped one had: a synthetic
/// repository through the binary, whose re-run runs' earlier attempts need their archives.
#[test]
fn the_closing_line_of_a_stopped_survey_says_what_it_finished() {
    let ds = synthetic(&SyntheticSpec {
        runs: 120,
        rerun_every: 3,
        ..SyntheticSpec::default()
    });
    let args = |api: &str, cache: &Path| -> Vec<String> {
        [
            "survey",
            "--repo",
            "octo/demo",
            "--since",
            "2026-06-01",
            "--until",
            "2026-06-07",
            "--format",
            "json",
            "--api-url",
            api,
            "--cache-dir",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([cache.to_str().unwrap().to_string()])
        .collect()
    };
    let survey = |gh: &FakeGitHub, cache: &Path| {
        common::flakestat()
            .args(args(&gh.api_url(), cache))
            .output()
            .expect("the binary runs")
    };
    let reference = {
        let gh = FakeGitHub::start_blocking(ds.clone(), strange(None)).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let out = common::ok(survey(&gh, cache.path()));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("stopped by"), "{stderr}");
        downloads(&gh.requests())
    };
    assert!(reference.keys().any(|(kind, _)| kind == "ArchiveBlob"));

    let gh = FakeGitHub::start_blocking(ds, strange(Some(60))).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = survey(&gh, cache.path());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    let said = stderr
        .split("stopped by GitHub's limit: ")
        .nth(1)
        .unwrap_or_else(|| panic!("the closing line says nothing of the stop: {stderr}"));
    let (finished, rest) = said.split_once(' ').unwrap();
    let finished: usize = finished.parse().unwrap();
    assert!(
        rest.starts_with("downloads under way were finished and stored first"),
        "{stderr}"
    );
    assert!(
        finished <= flakestat::fetch::DEFAULT_CONCURRENCY,
        "{stderr}"
    );

    gh.set_faults(strange(None));
    common::ok(survey(&gh, cache.path()));
    assert_eq!(downloads(&gh.requests()), reference);
}
