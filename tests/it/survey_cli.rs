//! `flakestat survey` as a user runs it: the real binary against the fake GitHub on 127.0.0.1
//! (`--api-url`) or a replayed dataset (`--replay`); exit codes and messages of each failure;
//! a killed survey resumes to the same report.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{Dataset, FakeGitHub, Faults, RouteKind};
use serde_json::Value;

const SINCE: &str = "2026-06-01";
const UNTIL: &str = "2026-06-03";

fn flakestat(args: &[&str]) -> Command {
    let mut cmd = crate::common::flakestat();
    cmd.args(args);
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn dataset(runs: usize) -> Dataset {
    let mut ds = synthetic(&SyntheticSpec {
        runs,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec!["tok".into()];
    ds
}

fn survey_args<'a>(api: &'a str, cache: &'a Path) -> Vec<String> {
    [
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
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

fn json_survey(api: &str, cache: &Path) -> (Output, Option<Value>) {
    let args = survey_args(api, cache);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(flakestat(&args).env("GH_TOKEN", "tok"));
    let json = serde_json::from_slice(&out.stdout).ok();
    (out, json)
}

#[test]
fn replay_surveys_a_recorded_dataset_offline() {
    let data = tempfile::tempdir().unwrap();
    let ds = dataset(48);
    ds.save_json(data.path()).unwrap();
    let out = run(&mut flakestat(&[
        "survey",
        "--replay",
        data.path().to_str().unwrap(),
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["runs_total"], 48);
    // Every 5th run fails (9 of 48), and every 10th was re-run to green after failing.
    let failed_runs = (1..=48).filter(|n| n % 5 == 0 || n % 10 == 0).count();
    assert_eq!(json["runs_failed"], failed_runs as u64);
    assert!(json["jobs_failed"].as_u64().unwrap() >= failed_runs as u64);
    let err = stderr(&out);
    assert!(err.contains("logs downloaded"), "{err}");
    assert!(!err.contains("no token"), "replay needs no token: {err}");
}

#[test]
fn a_repeated_survey_gives_the_same_report_and_downloads_nothing() {
    let gh = FakeGitHub::start_blocking(dataset(30), Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (out, first) = json_survey(&gh.api_url(), cache.path());
    assert!(out.status.success(), "{}", stderr(&out));
    gh.clear_requests();
    let (out, second) = json_survey(&gh.api_url(), cache.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(first, second);
    assert_eq!(gh.request_count(RouteKind::LogBlob), 0);
    assert_eq!(gh.request_count(RouteKind::ListJobs), 0);
    assert!(
        stderr(&out).contains(" 0 logs downloaded"),
        "{}",
        stderr(&out)
    );

    // --offline reads the same store without the network.
    gh.clear_requests();
    let out = run(&mut flakestat(&[
        "survey",
        "--repo",
        "octo/demo",
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--offline",
        "--cache-dir",
        cache.path().to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).ok(), first);
    assert!(gh.requests().is_empty());
}

#[test]
fn a_killed_survey_resumes_to_the_same_report() {
    let ds = dataset(150);
    let clean = {
        let gh = FakeGitHub::start_blocking(ds.clone(), Faults::default()).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let (out, json) = json_survey(&gh.api_url(), cache.path());
        assert!(out.status.success(), "{}", stderr(&out));
        json.unwrap()
    };
    let gh = FakeGitHub::start_blocking(
        ds,
        Faults {
            latency: Duration::from_millis(30),
            ..Faults::default()
        },
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let args = survey_args(&gh.api_url(), cache.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = flakestat(&args)
        .env("GH_TOKEN", "tok")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once it has stored some logs, well before the end.
    let repo = flakestat::model::Repo::parse("octo/demo").unwrap();
    loop {
        if child.try_wait().unwrap().is_some() {
            panic!("the survey ended before it could be killed");
        }
        let stored = flakestat::store::Store::open(cache.path())
            .and_then(|store| store.counts(&repo))
            .map_or(0, |counts| counts.logs_stored);
        if stored >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    gh.set_faults(Faults::default());
    gh.clear_requests();
    let (out, resumed) = json_survey(&gh.api_url(), cache.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(resumed.unwrap(), clean);
    // The logs stored before the kill were not downloaded again.
    let failed_jobs = clean["jobs_failed"].as_u64().unwrap() as usize;
    assert!(gh.request_count(RouteKind::LogBlob) < failed_jobs);
}

#[test]
fn malformed_or_empty_windows_are_invalid_input() {
    let cases: [(&[&str], &str); 3] = [
        (&["--since", "yesterday"], "--since"),
        (&["--since", "7d", "--until", "soon"], "--until"),
        (
            &["--since", "2026-06-16", "--until", "2026-06-14"],
            "not after",
        ),
    ];
    for (window, wanted) in cases {
        let mut args = vec!["survey", "--repo", "octo/demo", "--offline"];
        args.extend_from_slice(window);
        let out = run(&mut flakestat(&args));
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(wanted), "{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
    let out = run(&mut flakestat(&[
        "survey",
        "--repo",
        "not-a-repo",
        "--since",
        "1d",
        "--offline",
    ]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

#[test]
fn github_and_store_failures_have_their_exit_codes() {
    let gh = FakeGitHub::start_blocking(dataset(3), Faults::default()).unwrap();
    let api = gh.api_url();
    let cache = tempfile::tempdir().unwrap();
    let cache_s = cache.path().to_str().unwrap();
    let base = |repo: &'static str| -> Vec<String> {
        [
            "survey",
            "--repo",
            repo,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--api-url",
            api.as_str(),
            "--cache-dir",
            cache_s,
            "--max-retries",
            "1",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    };
    let exec = |args: Vec<String>, token: Option<&str>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = flakestat(&args);
        if let Some(token) = token {
            cmd.env("GITHUB_TOKEN", token);
        }
        run(&mut cmd)
    };

    let out = exec(base("octo/demo"), Some("wrong"));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("GITHUB_TOKEN"), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("wrong"),
        "the token is never printed"
    );

    let out = exec(base("octo/nope"), Some("tok"));
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(stderr(&out).contains("octo/nope"), "{}", stderr(&out));

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut args = base("octo/demo");
    args[8] = format!("http://{closed}");
    let out = exec(args, Some("tok"));
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(stderr(&out).contains("did not answer"), "{}", stderr(&out));

    let file = cache.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let mut args = base("octo/demo");
    args[10] = file.join("sub").to_str().unwrap().to_string();
    let out = exec(args, Some("tok"));
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert!(stderr(&out).contains("--cache-dir"), "{}", stderr(&out));
}

#[test]
fn survey_help_has_examples() {
    let out = run(&mut flakestat(&["survey", "--help"]));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Examples:") && text.contains("--since 7d"),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_with_what_is_collected_and_exit_130() {
    let gh = FakeGitHub::start_blocking(
        dataset(150),
        Faults {
            latency: Duration::from_millis(30),
            ..Faults::default()
        },
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let args = survey_args(&gh.api_url(), cache.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = flakestat(&args)
        .env("GH_TOKEN", "tok")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while gh.request_count(RouteKind::LogBlob) < 2 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "no report from a partial survey");

    gh.set_faults(Faults::default());
    let (out, json) = json_survey(&gh.api_url(), cache.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json.unwrap()["runs_total"], 72, "three days of hourly runs");
}

/// The README's first command: the bundled scenario, replayed, tells the cuda-python story.
#[test]
fn the_bundled_scenario_replays_to_its_story() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake");
    let out = run(&mut flakestat(&[
        "survey",
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-06-15",
        "--replay",
        fixture.to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["schema"], 1);
    assert_eq!(json["repo"], "NVIDIA/cuda-python");
    assert_eq!(json["since"], "2026-06-15T00:00:00Z");
    let flake = json["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "wait-until-timeout")
        .expect("the flake's signature is reported");
    // 5 main runs and 11 PR runs, PR #2362's own runs excluded (see the fixture's README).
    assert_eq!(flake["runs_hit"], 16, "{flake}");
}
