//! The network promises of the README's "Security and the store" section, each through the real
//! binary against the fake GitHub on 127.0.0.1: the token reaches only the API origin, whatever
//! the redirect chain; redirects to other schemes, loops and downgrades are refused and the survey
//! goes on; response sizes are capped; plain `http://` carries no token except to loopback; a bad
//! `--api-url` and a spent rate limit say so clearly.

use std::path::Path;
use std::process::{Command, Output};

use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{Dataset, FakeGitHub, FakeLog, Faults, Hop, Listener, RecordedRequest};
use flakestat::model::JobId;
use serde_json::Value;

const SINCE: &str = "2026-06-01";
const UNTIL: &str = "2026-06-03";
const TOKEN: &str = "tok-sekrit";

fn flakestat(args: &[&str]) -> Command {
    let mut cmd = crate::common::flakestat();
    cmd.args(args);
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn dataset() -> Dataset {
    let mut ds = synthetic(&SyntheticSpec {
        runs: 12,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec![TOKEN.into()];
    ds
}

/// The failed jobs that have a log, in id order.
fn logged_jobs(ds: &Dataset) -> Vec<JobId> {
    ds.logs
        .iter()
        .filter(|(_, log)| matches!(log, FakeLog::Text(_)))
        .map(|(job, _)| *job)
        .collect()
}

fn survey(api: &str, cache: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "survey",
        "--repo",
        "octo/demo",
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--api-url",
        api,
        "--cache-dir",
        cache.to_str().unwrap(),
        "--format",
        "json",
    ];
    if !extra.contains(&"--max-retries") {
        args.extend_from_slice(&["--max-retries", "1"]);
    }
    args.extend_from_slice(extra);
    flakestat(&args)
        .env("GH_TOKEN", TOKEN)
        .output()
        .expect("the binary runs")
}

/// Whether a request was on the API origin and every earlier hop of its chain was too: the
/// only requests that may carry the token. A `/hop/…` path is a redirect target, so on the API
/// listener it is a hop that came back from elsewhere.
fn may_carry_token(r: &RecordedRequest) -> bool {
    r.listener == Listener::Api && !r.path.starts_with("/hop/")
}

/// No request off the API origin (or back on it after leaving) carried any `Authorization`, and
/// the API itself did get the token (the check could fail).
fn assert_token_stayed_home(gh: &FakeGitHub) {
    let requests = gh.requests();
    let leaked: Vec<_> = requests
        .iter()
        .filter(|r| !may_carry_token(r) && r.authorization_value.is_some())
        .collect();
    assert!(
        leaked.is_empty(),
        "the token left the API origin: {leaked:#?}"
    );
    assert!(
        requests
            .iter()
            .filter(|r| may_carry_token(r))
            .all(|r| r.authorization_value.as_deref() == Some(&format!("Bearer {TOKEN}"))),
        "every API request carries the token"
    );
}

fn hop_requests(gh: &FakeGitHub, job: JobId) -> Vec<RecordedRequest> {
    let prefix = format!("/hop/{job}/");
    gh.requests()
        .into_iter()
        .filter(|r| r.path.starts_with(&prefix))
        .collect()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    })
}

/// Runs a survey where the first logged job's log follows `hops`; returns the fake, the job and
/// the output.
fn survey_with_chain(hops: Vec<Hop>, extra: &[&str]) -> (FakeGitHub, JobId, Output) {
    let ds = dataset();
    let job = logged_jobs(&ds)[0];
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    gh.set_log_redirects(job, hops);
    let cache = tempfile::tempdir().unwrap();
    let out = survey(&gh.api_url(), cache.path(), extra);
    (gh, job, out)
}

#[test]
fn a_log_host_redirecting_to_itself_never_sees_the_token() {
    let (gh, job, out) = survey_with_chain(
        vec![
            Hop::To(302, Listener::LogHost),
            Hop::To(302, Listener::LogHost),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hops = hop_requests(&gh, job);
    assert_eq!(hops.len(), 2, "both hops followed: {hops:#?}");
    assert_eq!(hops[1].status, 200);
    assert_token_stayed_home(&gh);
}

#[test]
fn a_chain_bouncing_back_to_the_api_host_gets_no_token_there() {
    let (gh, job, out) = survey_with_chain(
        vec![Hop::To(302, Listener::LogHost), Hop::To(302, Listener::Api)],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hops = hop_requests(&gh, job);
    assert_eq!(hops.len(), 2, "{hops:#?}");
    assert_eq!(hops[1].listener, Listener::Api);
    assert_eq!(hops[1].authorization_value, None, "the token came back");
    assert_token_stayed_home(&gh);
}

#[test]
fn a_307_from_the_api_to_a_third_origin_carries_no_token_on_any_hop() {
    let (gh, job, out) = survey_with_chain(
        vec![
            Hop::To(307, Listener::Elsewhere),
            Hop::To(307, Listener::Elsewhere),
            Hop::To(308, Listener::Elsewhere),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hops = hop_requests(&gh, job);
    assert_eq!(hops.len(), 3, "{hops:#?}");
    assert!(hops.iter().all(|r| r.listener == Listener::Elsewhere));
    assert_token_stayed_home(&gh);
}

fn assert_refused_and_survey_went_on(out: &Output, job: JobId, what: &str) {
    assert!(out.status.success(), "the survey stops: {}", stderr(out));
    let err = stderr(out);
    assert!(
        err.contains(&format!("job {job}")) && err.contains(what),
        "the message names the job and the reason ({what}): {err}"
    );
    let report = json(out);
    let gaps = report["logs_unknown"].to_string();
    assert!(
        gaps.contains("unavailable"),
        "the log is recorded as unavailable: {gaps}"
    );
}

#[test]
fn a_file_location_is_refused_naming_the_job_and_the_survey_goes_on() {
    let (gh, job, out) =
        survey_with_chain(vec![Hop::Location(302, "file:///etc/passwd".into())], &[]);
    assert_refused_and_survey_went_on(&out, job, "file:");
    assert_token_stayed_home(&gh);
}

#[test]
fn an_ftp_location_after_a_hop_is_refused_and_the_survey_goes_on() {
    let (gh, job, out) = survey_with_chain(
        vec![
            Hop::To(302, Listener::LogHost),
            Hop::Location(302, "ftp://127.0.0.1:21/log.txt".into()),
        ],
        &[],
    );
    assert_refused_and_survey_went_on(&out, job, "ftp:");
    assert_eq!(hop_requests(&gh, job).len(), 1, "nothing fetched past ftp");
    assert_token_stayed_home(&gh);
}

#[test]
fn a_redirect_loop_stops_after_a_bounded_number_of_hops() {
    let (gh, job, out) = survey_with_chain(vec![Hop::To(302, Listener::LogHost); 40], &[]);
    assert_refused_and_survey_went_on(&out, job, "redirects");
    let followed = hop_requests(&gh, job).len();
    assert!((1..=10).contains(&followed), "{followed} hops followed");
    assert_token_stayed_home(&gh);
}

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn the_token_is_never_sent_over_plain_http_to_another_machine() {
    let cache = tempfile::tempdir().unwrap();
    // 192.0.2.0/24 is TEST-NET-1: never routed, so a request would hang rather than answer.
    let url = "http://192.0.2.1:8080/api/v3";
    let out = survey(url, cache.path(), &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(url) && err.contains("plain http") && err.contains("--allow-insecure-http"),
        "{err}"
    );
    // The override lets the request go out: here to a closed port, so a network error instead.
    let url = format!("http://0.0.0.0:{}", closed_port());
    let out = survey(
        &url,
        cache.path(),
        &["--allow-insecure-http", "--max-retries", "0"],
    );
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(!stderr(&out).contains("plain http"), "{}", stderr(&out));
}

#[test]
fn a_malformed_or_unreachable_api_url_is_refused_at_once_with_a_clear_message() {
    let cache = tempfile::tempdir().unwrap();
    let port = closed_port();
    for url in [
        "http://exa mple.com",
        "api.github.com",
        "https://",
        "::",
        &format!("ftp://127.0.0.1:{port}"),
        "file:///etc/passwd",
    ] {
        let out = survey(url, cache.path(), &["--max-retries", "5"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{url}: {err}");
        assert!(err.contains("--api-url"), "{url}: {err}");
        assert!(
            !err.contains("UriParse") && !err.contains("tries"),
            "{url}: no parser internals, no retries: {err}"
        );
    }
}

#[test]
fn a_spent_rate_limit_names_its_reset_once_in_utc() {
    let gh = FakeGitHub::start_blocking(
        dataset(),
        Faults {
            rate_limit: Some(3),
            ..Faults::default()
        },
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = survey(&gh.api_url(), cache.path(), &[]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("rate limit is spent"))
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(line.matches("UTC").count(), 1, "{line}");
}

#[test]
fn an_api_answer_over_the_size_limit_is_refused_with_a_clear_message() {
    let gh = FakeGitHub::start_blocking(dataset(), Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = survey(
        &gh.api_url(),
        cache.path(),
        &["--max-response-size", "2KiB"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("over the 2048-byte limit"), "{err}");
}

#[test]
fn a_log_over_max_log_size_is_cut_there_with_a_note_and_the_survey_goes_on() {
    let mut ds = dataset();
    let job = logged_jobs(&ds)[0];
    let Some(FakeLog::Text(text)) = ds.logs.get(&job).cloned() else {
        unreachable!()
    };
    let padding = "2026-06-01T00:00:03.0000000Z padding line of a very long log\n".repeat(2000);
    ds.logs
        .insert(job, FakeLog::Text(format!("{text}{padding}")));
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = survey(&gh.api_url(), cache.path(), &["--max-log-size", "4096"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "job {job}'s log is larger than --max-log-size (4096 bytes)"
        )),
        "{err}"
    );
    assert_eq!(
        err.matches("--max-log-size").count(),
        1,
        "only one log was cut: {err}"
    );
    let store = flakestat::store::Store::open(cache.path()).unwrap();
    let stored = store.load_log(job).unwrap().expect("the cut log is stored");
    assert_eq!(stored.len(), 4096);
    assert!(String::from_utf8_lossy(&stored).contains("FLAKE-MARKER"));
}

#[test]
fn a_log_larger_than_memory_spooling_arrives_whole_and_classified() {
    let mut ds = dataset();
    let job = logged_jobs(&ds)[0];
    let Some(FakeLog::Text(text)) = ds.logs.get(&job).cloned() else {
        unreachable!()
    };
    // Past `SPOOL_AT` (8 MiB): the body goes through a temporary file, not memory.
    let line = "2026-06-01T00:00:03.0000000Z padding line of a very long log\n";
    let padding = line.repeat((flakestat::fetch::SPOOL_AT as usize / line.len()) + 1000);
    let full = format!("{text}{padding}");
    ds.logs.insert(job, FakeLog::Text(full.clone()));
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = survey(&gh.api_url(), cache.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("--max-log-size"), "{}", stderr(&out));
    let store = flakestat::store::Store::open(cache.path()).unwrap();
    let stored = store.load_log(job).unwrap().expect("the log is stored");
    assert!(stored.len() as u64 > flakestat::fetch::SPOOL_AT);
    assert!(
        stored == full.as_bytes(),
        "the spooled log arrives byte for byte"
    );
    let report = json(&out);
    assert_eq!(report["logs_unknown"], serde_json::json!([]), "{report}");
}

#[test]
fn a_redirect_that_stays_on_the_api_origin_keeps_the_token_until_it_leaves() {
    // API → API (a renamed repository answers 301 on the same origin) → log host → API.
    let (gh, job, out) = survey_with_chain(
        vec![
            Hop::To(301, Listener::Api),
            Hop::To(302, Listener::LogHost),
            Hop::To(302, Listener::Api),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hops = hop_requests(&gh, job);
    let seen: Vec<_> = hops
        .iter()
        .map(|r| (r.listener, r.authorization_value.is_some()))
        .collect();
    assert_eq!(
        seen,
        [
            (Listener::Api, true),
            (Listener::LogHost, false),
            (Listener::Api, false)
        ],
        "{hops:#?}"
    );
    assert_eq!(
        hops[0].authorization_value.as_deref(),
        Some(&*format!("Bearer {TOKEN}"))
    );
}

#[test]
fn every_request_on_every_origin_says_flakestat_and_its_version_once() {
    // A chain through the third origin and back: the API, the log host and elsewhere all asked.
    let (gh, _job, out) = survey_with_chain(
        vec![
            Hop::To(302, Listener::Elsewhere),
            Hop::To(302, Listener::LogHost),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = gh.requests();
    let expected = vec![format!("flakestat/{}", env!("CARGO_PKG_VERSION"))];
    for listener in [Listener::Api, Listener::LogHost, Listener::Elsewhere] {
        assert!(
            requests.iter().any(|r| r.listener == listener),
            "no request reached {listener:?}"
        );
    }
    let wrong: Vec<_> = requests
        .iter()
        .filter(|r| r.user_agents != expected)
        .map(|r| (r.listener, r.path.clone(), r.user_agents.clone()))
        .collect();
    assert!(
        wrong.is_empty(),
        "User-Agent other than {expected:?}: {wrong:#?}"
    );
}
