//! The network promises of the README's "Security and the store" section, each through the real
//! binary against the fake GitHub on 127.0.0.1: the token reaches only the API origin, whatever
//! the redirect chain; redirects to other schemes, loops and downgrades are refused and the survey
//! goes on; response sizes are capped; plain `http://` carries no token except to loopback; a bad
//! `--api-url` and a spent rate limit say so clearly.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{Dataset, FakeGitHub, FakeLog, Faults, Hop, Listener, RecordedRequest};
use flakestat::model::JobId;
use serde_json::Value;

const SINCE: &str = "2026-06-01";
const UNTIL: &str = "2026-06-03";
const TOKEN: &str = "tok-sekrit";

fn flakestat(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flakestat"));
    cmd.args(args)
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env_remove("GITHUB_API_URL")
        .env_remove("FLAKESTAT_CACHE_DIR")
        .stdin(Stdio::null());
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
        "--max-retries",
        "1",
    ];
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
