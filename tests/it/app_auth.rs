//! GitHub App authentication through the real binary against the fake GitHub on 127.0.0.1,
//! which verifies the App's JWT (RS256 against the public key in `fixtures/github-app/`) and
//! takes only its current installation tokens: a survey as an App stores what a token survey
//! stores (installation named, or looked up), tokens are renewed before they expire and after a
//! 401, a wrong key is one clear message (exit 4), a key file that is not a key is named (exit
//! 3), and the installation token never leaves the API origin.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{
    Dataset, FakeApp, FakeGitHub, FakeLog, Faults, Hop, Listener, RecordedRequest, RouteKind,
};
use serde_json::Value;

const APP_ID: u64 = 4242;
const INSTALLATION: u64 = 77;
const TOKEN: &str = "tok-plain";

fn key(name: &str) -> PathBuf {
    crate::common::root().join("fixtures/github-app").join(name)
}

fn dataset(runs: usize) -> Dataset {
    let mut ds = synthetic(&SyntheticSpec {
        runs,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec![TOKEN.into()];
    ds.auth.require_token = true;
    ds
}

fn app() -> FakeApp {
    let public = std::fs::read_to_string(key("app-key.pub.pem")).unwrap();
    FakeApp::new(APP_ID, &public, "octo", INSTALLATION)
}

/// The fake serving `ds` as the App `app` (only its installation tokens accepted).
fn app_github(ds: Dataset, faults: Faults, app: FakeApp) -> FakeGitHub {
    let gh = FakeGitHub::start_blocking(ds, faults).unwrap();
    gh.set_app(app).unwrap();
    gh
}

fn survey(api: &str, cache: &Path, extra: &[&str]) -> Command {
    let mut cmd = crate::common::flakestat();
    cmd.args([
        "survey",
        "--repo",
        "octo/demo",
        "--since",
        "2026-06-01",
        "--until",
        "2026-06-03",
        "--api-url",
        api,
        "--cache-dir",
        cache.to_str().unwrap(),
        "--format",
        "json",
        "--max-retries",
        "1",
    ])
    .args(extra);
    cmd
}

fn run(mut cmd: Command) -> Output {
    cmd.output().expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        stderr(out)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The report of a survey of `ds` with a plain token: what an App survey must equal.
fn token_survey(ds: Dataset) -> Value {
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = survey(&gh.api_url(), cache.path(), &[]);
    cmd.env("GH_TOKEN", TOKEN);
    json(&run(cmd))
}

fn app_flags(key_file: &str) -> Vec<String> {
    vec![
        "--app-id".into(),
        APP_ID.to_string(),
        "--app-key".into(),
        key(key_file).to_str().unwrap().into(),
    ]
}

fn requests_of(gh: &FakeGitHub, kind: RouteKind) -> Vec<RecordedRequest> {
    gh.requests()
        .into_iter()
        .filter(|r| r.kind == kind)
        .collect()
}

/// Every request the API answered as data (not the App's own routes) carried an installation
/// token, every one off the API origin carried nothing, and no JWT left the App routes.
fn assert_installation_tokens_only_at_home(gh: &FakeGitHub) {
    let requests = gh.requests();
    let app_routes = [RouteKind::AppToken, RouteKind::AppInstallation];
    for r in &requests {
        let value = r.authorization_value.as_deref();
        if r.listener != Listener::Api || r.path.starts_with("/hop/") {
            assert_eq!(value, None, "a token left the API origin: {r:#?}");
        } else if app_routes.contains(&r.kind) {
            assert!(
                value.is_some_and(|v| v.starts_with("Bearer ey")),
                "the App's routes get its JWT: {r:#?}"
            );
        } else {
            assert!(
                value.is_some_and(|v| v.starts_with("Bearer ghs_")),
                "an API request without an installation token: {r:#?}"
            );
        }
    }
    assert!(
        requests.iter().any(|r| r.listener == Listener::LogHost),
        "the survey downloaded logs from the log host (the check could fail)"
    );
}

#[test]
fn an_app_survey_with_its_installation_stores_what_a_token_survey_stores() {
    let ds = dataset(12);
    let expected = token_survey(ds.clone());
    let gh = app_github(ds, Faults::default(), app());
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = survey(&gh.api_url(), cache.path(), &["--installation-id", "77"]);
    cmd.args(app_flags("app-key.pem"));
    let report = json(&run(cmd));
    assert_eq!(report, expected);
    let tokens = requests_of(&gh, RouteKind::AppToken);
    assert_eq!(
        tokens.len(),
        1,
        "one token for the whole survey: {tokens:#?}"
    );
    assert_eq!(tokens[0].path, "/app/installations/77/access_tokens");
    assert_eq!(tokens[0].status, 201);
    assert!(requests_of(&gh, RouteKind::AppInstallation).is_empty());
    assert_installation_tokens_only_at_home(&gh);
}

/// Without `--installation-id` the repository's installation is looked up; the App comes from
/// Probot's variables here, its key as PKCS#8.
#[test]
fn an_app_from_the_environment_finds_the_repositorys_installation() {
    let ds = dataset(12);
    let expected = token_survey(ds.clone());
    let gh = app_github(ds, Faults::default(), app());
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = survey(&gh.api_url(), cache.path(), &["-v"]);
    cmd.env("APP_ID", APP_ID.to_string())
        .env("PRIVATE_KEY_PATH", key("app-key.pkcs8.pem"))
        // An App beats a token: who sets both means the App.
        .env("GH_TOKEN", TOKEN);
    let out = run(cmd);
    assert_eq!(json(&out), expected);
    let err = stderr(&out);
    assert!(
        err.contains("as GitHub App 4242") && err.contains("PRIVATE_KEY_PATH"),
        "-v says how it authenticates: {err}"
    );
    let found = requests_of(&gh, RouteKind::AppInstallation);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].path, "/repos/octo/demo/installation");
    assert_eq!(requests_of(&gh, RouteKind::AppToken).len(), 1);
    assert_installation_tokens_only_at_home(&gh);
}

/// Installation tokens that live 3 s are renewed ahead of their expiry while the survey runs
/// (one request at a time, each 100 ms late), not only after the fake refuses one.
#[test]
fn short_lived_installation_tokens_are_renewed_mid_survey_before_they_expire() {
    let ds = dataset(40);
    let expected = token_survey(ds.clone());
    let faults = Faults {
        latency: Duration::from_millis(100),
        ..Faults::default()
    };
    let mut short = app();
    short.token_lifetime = Duration::from_secs(3);
    let gh = app_github(ds, faults, short);
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = survey(
        &gh.api_url(),
        cache.path(),
        &["--installation-id", "77", "--concurrency", "1"],
    );
    cmd.args(app_flags("app-key.pem"));
    let report = json(&run(cmd));
    assert_eq!(report, expected);
    let requests = gh.requests();
    let took = requests.last().unwrap().answered - requests[0].answered;
    let tokens = requests_of(&gh, RouteKind::AppToken).len();
    assert!(
        took > Duration::from_secs(4) && tokens >= 2,
        "requests over {took:?} outlive a 3 s token: {tokens} token requests"
    );
    // A refusal (a machine so loaded that a request outlived the margin) buys one token; at
    // least one renewal came before any.
    let refused = requests.iter().filter(|r| r.status == 401).count();
    assert!(
        tokens > 1 + refused,
        "{tokens} tokens, {refused} refusals: no renewal ahead of expiry"
    );
    assert_installation_tokens_only_at_home(&gh);
}

/// A token GitHub stops taking before the `expires_at` it announced (revoked, clocks apart) is
/// answered 401 `Bad credentials`: the client gets a new one and asks again, and the survey
/// ends as a token survey does.
#[test]
fn a_token_refused_before_its_announced_expiry_is_renewed_and_the_request_repeated() {
    let ds = dataset(12);
    let expected = token_survey(ds.clone());
    let faults = Faults {
        latency: Duration::from_millis(60),
        ..Faults::default()
    };
    let mut lying = app();
    lying.token_lifetime = Duration::from_secs(1);
    lying.claimed_lifetime = Some(Duration::from_secs(3600));
    let gh = app_github(ds, faults, lying);
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = survey(
        &gh.api_url(),
        cache.path(),
        &["--installation-id", "77", "--concurrency", "1"],
    );
    cmd.args(app_flags("app-key.pem"));
    let report = json(&run(cmd));
    assert_eq!(report, expected);
    let requests = gh.requests();
    let refused: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i].status == 401)
        .collect();
    assert!(
        !refused.is_empty(),
        "the fake refused a token past its life"
    );
    for &i in &refused {
        let again = requests[i + 1..]
            .iter()
            .find(|r| r.path == requests[i].path)
            .unwrap_or_else(|| panic!("{} never asked again", requests[i].path));
        assert!(
            again.status < 400 && again.authorization_value != requests[i].authorization_value,
            "asked again with a new token: {again:#?}"
        );
    }
    // Requests in flight together share one renewal.
    let tokens = requests_of(&gh, RouteKind::AppToken).len();
    assert!(
        (2..=1 + refused.len()).contains(&tokens),
        "{tokens} tokens for {} refusals",
        refused.len()
    );
}

/// A key that is not the App's: GitHub's 401 to the JWT becomes one line saying what to check
/// (exit 4, GitHub refused the credentials); nothing else was asked, and no key is printed.
#[test]
fn a_wrong_key_is_one_clear_message_and_exit_4() {
    let gh = app_github(dataset(4), Faults::default(), app());
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = survey(&gh.api_url(), cache.path(), &["--installation-id", "77"]);
    cmd.args(app_flags("other-key.pem"));
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(lines.len(), 1, "one error line: {err}");
    assert!(
        lines[0].contains("GitHub refused the GitHub App's credentials")
            && lines[0].contains("401")
            && lines[0].contains("--app-key"),
        "{err}"
    );
    assert!(!err.contains("BEGIN") && !err.contains("ghs_"), "{err}");
    let asked: Vec<_> = gh.requests();
    assert!(
        asked.iter().all(|r| r.kind == RouteKind::AppToken),
        "nothing but the token was asked for: {asked:#?}"
    );
}

/// A key file that cannot be read, or is not a private key, is named with what is wrong (exit
/// 3) before anything is sent; its content is never printed.
#[test]
fn a_key_file_that_is_not_a_key_is_named_and_nothing_is_sent() {
    let gh = app_github(dataset(4), Faults::default(), app());
    let cache = tempfile::tempdir().unwrap();
    let missing = cache.path().join("nowhere.pem");
    for (file, says) in [
        (missing.clone(), "cannot read the GitHub App's private key"),
        (key("app-key.pub.pem"), "holds no PEM private key"),
    ] {
        let mut cmd = survey(&gh.api_url(), cache.path(), &[]);
        cmd.args(["--app-id", "4242", "--app-key"]).arg(&file);
        let out = run(cmd);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(
            err.contains(&format!("--app-key {}", file.display())) && err.contains(says),
            "{err}"
        );
        assert!(!err.contains("MII"), "no key material: {err}");
    }
    let out = run(survey(&gh.api_url(), cache.path(), &["--app-id", "4242"]));
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("--app-key FILE"), "{}", stderr(&out));
    assert!(gh.requests().is_empty(), "{:#?}", gh.requests());
}

/// An App not installed on the repository's owner: the lookup's 404 says so (exit 5).
#[test]
fn an_app_not_installed_on_the_repository_says_so() {
    let public = std::fs::read_to_string(key("app-key.pub.pem")).unwrap();
    let elsewhere = FakeApp::new(APP_ID, &public, "someone-else", INSTALLATION);
    let gh = app_github(dataset(4), Faults::default(), elsewhere);
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = survey(&gh.api_url(), cache.path(), &[]);
    cmd.args(app_flags("app-key.pem"));
    let out = run(cmd);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("the GitHub App 4242 is not installed on octo/demo"),
        "{err}"
    );
}

/// A log whose redirect chain goes API → log host → log host → back to the API: no hop off the
/// API origin, nor the one that came back, carries the installation token.
#[test]
fn the_installation_token_never_follows_a_log_off_the_api_origin() {
    let ds = dataset(12);
    let job = ds
        .logs
        .iter()
        .find(|(_, log)| matches!(log, FakeLog::Text(_)))
        .map(|(job, _)| *job)
        .unwrap();
    let gh = app_github(ds, Faults::default(), app());
    gh.set_log_redirects(
        job,
        vec![
            Hop::To(302, Listener::LogHost),
            Hop::To(302, Listener::LogHost),
            Hop::To(302, Listener::Api),
        ],
    );
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = survey(&gh.api_url(), cache.path(), &["--installation-id", "77"]);
    cmd.args(app_flags("app-key.pem"));
    json(&run(cmd));
    let prefix = format!("/hop/{job}/");
    let hops: Vec<_> = gh
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with(&prefix))
        .collect();
    assert_eq!(hops.len(), 3, "every hop followed: {hops:#?}");
    assert_eq!(hops[2].listener, Listener::Api);
    assert_installation_tokens_only_at_home(&gh);
}

/// `--org` as an App: the organisation's installation is looked up once and serves every
/// repository; an owner that is a user (no `/orgs/{user}/installation`) is found as a user. The
/// reports equal a token survey's.
#[test]
fn an_org_survey_as_an_app_finds_the_owners_installation_once() {
    use flakestat::fake::scenario::org::three_repos;
    let public = std::fs::read_to_string(key("app-key.pub.pem")).unwrap();
    let org_survey = |gh: &FakeGitHub, env_token: bool| {
        let cache = tempfile::tempdir().unwrap();
        let mut cmd = crate::common::flakestat();
        cmd.args([
            "survey",
            "--org",
            "octo-org",
            "--since",
            "2026-06-01",
            "--until",
            "2026-06-30",
            "--api-url",
            &gh.api_url(),
            "--format",
            "json",
            "--max-retries",
            "1",
            "--cache-dir",
            cache.path().to_str().unwrap(),
            "--signatures",
        ])
        .arg(crate::common::signatures());
        if env_token {
            cmd.env("GH_TOKEN", TOKEN);
        } else {
            cmd.args(app_flags("app-key.pem"));
        }
        json(&run(cmd))
    };
    let plain = FakeGitHub::start_many_blocking(three_repos(), Faults::default()).unwrap();
    let expected = org_survey(&plain, true);
    for user in [false, true] {
        let gh = FakeGitHub::start_many_blocking(three_repos(), Faults::default()).unwrap();
        if user {
            gh.set_users(&["octo-org"]);
        }
        gh.set_app(FakeApp::new(APP_ID, &public, "octo-org", 9))
            .unwrap();
        assert_eq!(org_survey(&gh, false), expected, "owner a user: {user}");
        let lookups: Vec<(String, u16)> = requests_of(&gh, RouteKind::AppInstallation)
            .into_iter()
            .map(|r| (r.path, r.status))
            .collect();
        let mut want = vec![("/orgs/octo-org/installation".to_string(), 200)];
        if user {
            want[0].1 = 404;
            want.push(("/users/octo-org/installation".to_string(), 200));
        }
        assert_eq!(lookups, want);
        assert_eq!(requests_of(&gh, RouteKind::AppToken).len(), 1);
        assert_installation_tokens_only_at_home(&gh);
    }
}
