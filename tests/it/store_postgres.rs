//! The PostgreSQL store through the real binary, on the bundled story replayed by the fake
//! GitHub on 127.0.0.1: the same survey into PostgreSQL and into SQLite gives byte-identical
//! reports in every format, `nightly` included; two surveys of one repository at once end with
//! exactly one survey's figures and rows (no lock: each write a short transaction); a busy store
//! says so (exit 8); no message shows the connection string's password.
//!
//! The server comes from `FLAKESTAT_TEST_POSTGRES` (`.ci/postgres.sh start` sets it); each test
//! works in fresh schemas of its own. Without it each test says it skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common;
use flakestat::model::Repo;
use flakestat::store::PostgresUrl;
use flakestat::store::postgres::fresh_schema_url;

const REPO: &str = "NVIDIA/cuda-python";
const SINCE: &str = "2026-06-15";
// The recording's end: the reports read the store on the real clock, where the rest of Aug 1
// was never listed.
const UNTIL: &str = "2026-08-01T06:30:00Z";

fn server(test: &str) -> Option<String> {
    let url = std::env::var("FLAKESTAT_TEST_POSTGRES")
        .ok()
        .filter(|v| !v.is_empty());
    if url.is_none() {
        common::skips::skipped(
            common::skips::Need::Postgres,
            &format!("{test}: FLAKESTAT_TEST_POSTGRES is not set: skipped (.ci/postgres.sh start)"),
        );
    }
    url
}

fn command(cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = common::flakestat();
    cmd.args(args)
        .arg("--signatures")
        .arg(common::signatures())
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn run(cwd: &Path, args: &[&str]) -> Output {
    command(cwd, args).output().expect("the binary runs")
}

fn ok(what: &str, out: Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{what}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Where a store is, as the flags that name it.
enum At {
    Sqlite(PathBuf),
    Postgres(String),
}

impl At {
    fn flags(&self) -> [&str; 2] {
        match self {
            At::Sqlite(dir) => ["--cache-dir", dir.to_str().unwrap()],
            At::Postgres(url) => ["--store", url.as_str()],
        }
    }
}

fn survey_args<'a>(at: &'a At, fixture: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "survey", "--repo", REPO, "--since", SINCE, "--until", UNTIL, "--replay", fixture,
        "--format", "json", "-q",
    ];
    args.extend(at.flags());
    args
}

fn fixture() -> String {
    common::story_dir().to_str().unwrap().to_string()
}

fn report(cwd: &Path, at: &At, format: &str, signature: Option<&str>) -> Vec<u8> {
    let mut args = vec![
        "report", "--repo", REPO, "--since", SINCE, "--until", UNTIL, "--format", format,
    ];
    if let Some(id) = signature {
        args.extend(["--signature", id]);
    }
    args.extend(at.flags());
    ok(&format!("report {args:?}"), run(cwd, &args))
}

/// The test server's password (it always has one: `.ci/postgres.sh` sets it).
fn password_of(url: &str) -> String {
    let config: postgres::Config = url.parse().unwrap();
    String::from_utf8(config.get_password().expect("a password").to_vec()).unwrap()
}

fn assert_no_password(password: &str, outputs: &[&[u8]]) {
    assert!(!password.is_empty());
    for out in outputs {
        assert!(
            !String::from_utf8_lossy(out).contains(password),
            "the password was printed"
        );
    }
}

#[test]
fn the_story_in_postgres_reports_byte_identical_to_sqlite_in_every_format() {
    let Some(base) = server("byte-identical reports") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let sqlite = At::Sqlite(tmp.path().join("cache"));
    let postgres = At::Postgres(fresh_schema_url(&base).unwrap());
    let fixture = fixture();

    let surveyed: Vec<Output> = [&sqlite, &postgres]
        .iter()
        .map(|at| run(cwd, &survey_args(at, &fixture)))
        .collect();
    let password = password_of(&base);
    assert_no_password(&password, &[&surveyed[1].stdout, &surveyed[1].stderr]);
    let [a, b]: [Vec<u8>; 2] = surveyed
        .into_iter()
        .map(|out| ok("survey", out))
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    assert_eq!(a, b, "the survey's own report differs between the engines");
    let summary: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert!(summary["runs_total"].as_u64().unwrap() > 0);
    assert!(!summary["signatures"].as_array().unwrap().is_empty());

    for signature in [None, Some("wait-until-timeout")] {
        for format in ["table", "markdown", "json", "html"] {
            let on_sqlite = report(cwd, &sqlite, format, signature);
            let on_postgres = report(cwd, &postgres, format, signature);
            assert!(
                on_sqlite.len() > 500,
                "{format} {signature:?}: a real report"
            );
            assert!(
                on_sqlite == on_postgres,
                "{format} {signature:?}: the engines' reports differ:\n--- sqlite\n{}\n--- postgres\n{}",
                String::from_utf8_lossy(&on_sqlite),
                String::from_utf8_lossy(&on_postgres)
            );
        }
    }
    // The focused account carries the story's figures (not an empty report twice).
    let focused: serde_json::Value =
        serde_json::from_slice(&report(cwd, &postgres, "json", Some("wait-until-timeout")))
            .unwrap();
    assert_eq!(focused["signatures"][0]["id"], "wait-until-timeout");
    assert!(focused["signatures"][0]["runs_hit"].as_u64().unwrap() > 0);

    for format in ["json", "markdown"] {
        let nightly = |at: &At| {
            let mut args = vec![
                "nightly",
                "--repo",
                REPO,
                "--offline",
                "--now",
                "2026-07-21T00:00:00Z",
                "--format",
                format,
            ];
            args.extend(at.flags());
            ok(&format!("nightly {format}"), run(cwd, &args))
        };
        let (on_sqlite, on_postgres) = (nightly(&sqlite), nightly(&postgres));
        assert!(!on_sqlite.is_empty());
        assert!(
            on_sqlite == on_postgres,
            "nightly {format}: the engines differ:\n--- sqlite\n{}\n--- postgres\n{}",
            String::from_utf8_lossy(&on_sqlite),
            String::from_utf8_lossy(&on_postgres)
        );
    }

    // The other commands that read the store: the same answer from either engine.
    for command in [
        vec![
            "suggest",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--min-jobs",
            "1",
        ],
        vec![
            "signatures",
            "audit",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
        ],
    ] {
        let outputs: Vec<Vec<u8>> = [&sqlite, &postgres]
            .iter()
            .map(|at| {
                let mut args = command.clone();
                args.extend(at.flags());
                ok(&format!("{command:?}"), run(cwd, &args))
            })
            .collect();
        assert!(!outputs[0].is_empty(), "{command:?}");
        assert_eq!(outputs[0], outputs[1], "{command:?}");
    }
}

/// A plain client for the test's own look at the tables (the test threads run no runtime).
fn postgres_client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}

#[test]
fn two_surveys_at_once_into_one_postgres_store_end_with_one_survey_s_figures() {
    let Some(base) = server("two surveys at once") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let fixture = fixture();
    let (single_url, both_url) = (
        fresh_schema_url(&base).unwrap(),
        fresh_schema_url(&base).unwrap(),
    );
    let single = At::Postgres(single_url.clone());
    let both = At::Postgres(both_url.clone());

    let alone = ok("one survey", run(cwd, &survey_args(&single, &fixture)));
    // Two nightly jobs of one repository at once, side by side (no lock; `--wait` is an old
    // script's, accepted and ignored). Each child's output is read on a thread of its own: the
    // report is larger than a pipe holds.
    let children: Vec<_> = (0..2)
        .map(|_| {
            let mut args = survey_args(&both, &fixture);
            args.extend(["--wait", "10m"]);
            let child = command(cwd, &args).spawn().unwrap();
            std::thread::spawn(move || child.wait_with_output().unwrap())
        })
        .collect();
    for child in children {
        let out = child.join().expect("the reading thread ends");
        assert_eq!(
            ok("a concurrent survey", out),
            alone,
            "each survey reports the single survey's figures"
        );
    }
    assert_eq!(
        report(cwd, &both, "json", None),
        report(cwd, &single, "json", None)
    );
    let (one, two) = (
        crate::common::postgres_row_counts(&single_url),
        crate::common::postgres_row_counts(&both_url),
    );
    assert!(one.iter().any(|(t, n)| *t == "logs" && *n > 0), "{one:?}");
    assert_eq!(one, two, "no run, job or log lost or duplicated");
}

/// No lock is held for a survey: an old script's `--wait` is accepted and waits for nothing
/// while another writer works in the store. Only a write kept waiting longer than 30 s by
/// another's transaction stops a survey: exit 8, "busy", naming the store masked, never its
/// password. (Before, a repository's advisory lock held for a whole survey made the second
/// one exit 8 naming its holder and `--wait`.)
#[test]
fn a_survey_beside_another_writer_goes_on_and_a_busy_store_names_itself_without_the_password() {
    let Some(base) = server("a shared PostgreSQL store") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let url = fresh_schema_url(&base).unwrap();
    let parsed = PostgresUrl::parse(&url).unwrap();
    let password = password_of(&base);
    let mut other = flakestat::store::Store::open_postgres(&parsed).unwrap();
    let repo = Repo::parse("nvidia/CUDA-python").unwrap();
    other.store_repo(&repo, "main").unwrap();
    for args in [
        vec![
            "survey",
            "--repo",
            REPO,
            "--since",
            "7d",
            "--offline",
            "--allow-incomplete",
        ],
        vec![
            "nightly",
            "--repo",
            REPO,
            "--offline",
            "--wait",
            "10m",
            "--allow-incomplete",
        ],
    ] {
        let started = std::time::Instant::now();
        let mut args = args;
        args.extend(["--store", &url, "--format", "json"]);
        let out = run(cwd, &args);
        ok(&format!("{args:?}"), out);
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "nothing waited"
        );
        other.store_repo(&repo, "main").unwrap();
    }

    // Another writer holds the serialising lock of a read-modify-write (as a long transaction
    // would) past the 30 s a write waits: the survey's storing of the repository gives up.
    let mut holder = postgres_client(&url);
    let mut tx = holder.transaction().unwrap();
    tx.execute("SELECT pg_advisory_xact_lock(1179405143, 0)", &[])
        .unwrap();
    let fixture = fixture();
    let out = run(cwd, &survey_args(&At::Postgres(url.clone()), &fixture));
    tx.rollback().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(8), "{err}");
    assert!(err.contains("is busy"), "{err}");
    assert!(err.contains(parsed.masked()), "{err}");
    assert!(!err.contains("--wait"), "{err}");
    assert_no_password(&password, &[&out.stdout, &out.stderr]);
}

#[test]
fn a_bad_or_unreachable_store_url_is_refused_clearly_without_the_password() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let out = run(
        cwd,
        &[
            "report",
            "--repo",
            REPO,
            "--since",
            "7d",
            "--store",
            "mysql://u:hunter2@db/x",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("--store") && err.contains("mysql://u:***@db/x"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");

    // FLAKESTAT_STORE, to a port nothing listens on: the store cannot be reached (exit 8).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = command(cwd, &["report", "--repo", REPO, "--since", "7d"])
        .env(
            "FLAKESTAT_STORE",
            format!("postgres://u:hunter2@127.0.0.1:{port}/x"),
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(8), "{err}");
    assert!(
        err.contains(&format!("postgres://u:***@127.0.0.1:{port}/x")),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
}
