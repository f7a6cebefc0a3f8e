//! Stores that several writers share, through the real binary: two surveys of the bundled story
//! (`--replay`, each with its own fake GitHub on 127.0.0.1) run at the same time into one store,
//! on SQLite and on PostgreSQL; neither waits for a lock nor stops with exit 8, and the store
//! they leave reports (markdown and JSON) byte for byte what a single survey's store reports,
//! with the same rows. No lock is held for a survey: each write is a short transaction.
//!
//! And the long-running writer: `flakestat serve` ingests the story's webhooks while a survey of
//! the same window writes the same store; the survey does not stop with exit 8, serve's queue
//! drains with no failure, and the store reports what a survey alone's does. And a third writer
//! holding the write lock for five seconds stalls neither serve's answers nor the survey's
//! requests (issue 42).
//!
//! PostgreSQL comes from `FLAKESTAT_TEST_POSTGRES` (`.ci/postgres.sh start` sets it); without it
//! that test says it skipped.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{
    COMPARED_TABLES, STORY_WINDOW, flakestat, postgres_row_counts, signatures, story_dir,
};
use crate::serve::Serve;
use flakestat::fake::scenario::{SyntheticSpec, synthetic, synthetic_run_id};
use flakestat::fake::{FakeGitHub, Faults};
use flakestat::fetch::{ClientConfig, Session, SurveyPlan};
use flakestat::model::{Conclusion, Job, JobId};
use flakestat::signatures::SignatureSet;
use flakestat::signatures::load::load_bundled;
use flakestat::store::postgres::fresh_schema_url;
use flakestat::store::{Store, StoreHandle};

/// Where a store is, as the flags that name it.
enum At {
    Sqlite(tempfile::TempDir),
    Postgres(String),
}

impl At {
    fn flags(&self) -> Vec<String> {
        match self {
            At::Sqlite(dir) => vec!["--cache-dir".into(), dir.path().display().to_string()],
            At::Postgres(url) => vec!["--store".into(), url.clone()],
        }
    }

    /// Rows per table (`COMPARED_TABLES`).
    fn row_counts(&self) -> Vec<(&'static str, i64)> {
        match self {
            At::Sqlite(dir) => {
                let db = dir.path().join("store-v1/flakestat.sqlite3");
                let conn = rusqlite::Connection::open(db).unwrap();
                COMPARED_TABLES
                    .into_iter()
                    .map(|table| {
                        let sql = format!("SELECT count(*) FROM {table}");
                        (table, conn.query_row(&sql, [], |r| r.get(0)).unwrap())
                    })
                    .collect()
            }
            At::Postgres(url) => postgres_row_counts(url),
        }
    }
}

/// `flakestat ARGS` on the store `at`, with the bundled signatures.
fn command(at: &At, args: &[&str]) -> Command {
    let mut cmd = flakestat();
    cmd.args(args)
        .args(at.flags())
        .arg("--signatures")
        .arg(signatures())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A survey of the story's window into `at`, started (not waited for).
fn start_survey(at: &At, story: &Path) -> Child {
    let mut args = vec!["-q", "survey", "--replay", story.to_str().unwrap()];
    args.extend(STORY_WINDOW);
    args.extend(["--format", "json"]);
    command(at, &args).spawn().expect("the binary runs")
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

/// `report` of the story's window from `at`, in `format`.
fn report(at: &At, format: &str) -> Vec<u8> {
    let mut args = vec!["report"];
    args.extend(STORY_WINDOW);
    args.extend(["--format", format]);
    let out = command(at, &args).output().unwrap();
    ok(&format!("report --format {format}"), out)
}

/// One survey into `single`; two at once into `shared`. Each concurrent survey ends well and
/// reports what the single one does; afterwards `shared` reports byte for byte what `single`
/// does, in markdown and JSON, and holds the same rows.
fn two_surveys_report_as_one(single: &At, shared: &At) {
    let story = story_dir();
    let alone = ok(
        "one survey",
        start_survey(single, &story).wait_with_output().unwrap(),
    );
    // Each child's output is read on a thread of its own: the report is larger than a pipe
    // holds, and a child blocked on its stdout would hold back nothing else but itself.
    let children: Vec<_> = (0..2)
        .map(|_| {
            let child = start_survey(shared, &story);
            std::thread::spawn(move || child.wait_with_output().unwrap())
        })
        .collect();
    for child in children {
        let out = child.join().expect("the reading thread ends");
        let json = ok("a survey beside another", out);
        assert!(
            json == alone,
            "each survey reports the single survey's figures"
        );
    }
    for format in ["markdown", "json"] {
        let (one, two) = (report(single, format), report(shared, format));
        assert!(
            String::from_utf8_lossy(&one).contains("wait-until-timeout"),
            "the report names the story's flake"
        );
        assert!(
            one == two,
            "report --format {format} differs:\n--- one survey\n{}\n--- two at once\n{}",
            String::from_utf8_lossy(&one),
            String::from_utf8_lossy(&two)
        );
    }
    let (one, two) = (single.row_counts(), shared.row_counts());
    assert!(one.iter().any(|(t, n)| *t == "logs" && *n > 0), "{one:?}");
    assert_eq!(one, two, "no run, job, log or window lost or duplicated");
}

#[test]
fn two_surveys_at_once_into_one_sqlite_store_report_as_one_survey() {
    let single = At::Sqlite(tempfile::tempdir().unwrap());
    let shared = At::Sqlite(tempfile::tempdir().unwrap());
    two_surveys_report_as_one(&single, &shared);
}

#[test]
fn two_surveys_at_once_into_one_postgres_store_report_as_one_survey() {
    let Some(base) = std::env::var("FLAKESTAT_TEST_POSTGRES")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        crate::common::skips::skipped(
            crate::common::skips::Need::Postgres,
            "two surveys at once on PostgreSQL: FLAKESTAT_TEST_POSTGRES is not set: skipped (.ci/postgres.sh start)",
        );
        return;
    };
    let single = At::Postgres(fresh_schema_url(&base).unwrap());
    let shared = At::Postgres(fresh_schema_url(&base).unwrap());
    two_surveys_report_as_one(&single, &shared);
}

/// `serve` (the long-running writer, which once took the store's lock for each run) ingests
/// every webhook of the story's last twelve days while a survey of the same days writes the
/// same SQLite store. Neither stops: the survey exits 0 (before, exit 8 whenever serve held the
/// lock), the queue drains with no failed delivery, and afterwards the store reports (markdown
/// and JSON) byte for byte what a survey alone's store does.
#[test]
fn serve_ingests_while_a_survey_writes_the_same_store() {
    const SINCE: &str = "2026-07-20";
    const UNTIL: &str = "2026-08-01T06:30:00Z";
    let dir = tempfile::tempdir().unwrap();
    let (shared, alone) = (dir.path().join("shared"), dir.path().join("alone"));
    let (story, sigs) = (story_dir(), signatures());
    let serve = Serve::on_story(dir.path(), &shared, &["--resync", "0"]);
    let survey = |cache: &Path| {
        flakestat()
            .args(["-q", "survey", "--replay"])
            .arg(&story)
            .args(["--since", SINCE, "--format", "json", "--cache-dir"])
            .arg(cache)
            .arg("--signatures")
            .arg(&sigs)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs")
    };
    let beside = survey(&shared);
    let beside = std::thread::spawn(move || beside.wait_with_output().unwrap());
    let sent = flakestat()
        .args(["-q", "replay", "deliver", "--replay"])
        .arg(&story)
        .args(["--since", SINCE, "--to"])
        .arg(format!("http://{}/webhook", serve.addr))
        .arg("--webhook-secret-file")
        .arg(dir.path().join("secret"))
        .output()
        .unwrap();
    ok("replay deliver", sent);
    ok("a survey beside serve", beside.join().unwrap());
    eprintln!(
        "when the survey ended, serve had ingested {} run attempts and had {} queued",
        serve.metric("flakestat_ingests_total{outcome=\"done\"}"),
        serve.metric("flakestat_queue_depth")
    );
    // A long guard: some 130 run attempts are ingested, on a machine that may be busy.
    serve.wait_up_to(Duration::from_secs(600), "the queue drained", |s| {
        s.metric("flakestat_queue_depth") == 0
    });
    assert_eq!(serve.metric("flakestat_queue_failed"), 0);
    assert!(serve.metric("flakestat_ingests_total{outcome=\"done\"}") > 0);
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");

    ok("a survey alone", survey(&alone).wait_with_output().unwrap());
    let report = |cache: &Path, format: &str| {
        let out = flakestat()
            .args(["report", "--repo", "NVIDIA/cuda-python", "--since", SINCE])
            .args(["--until", UNTIL, "--format", format, "--cache-dir"])
            .arg(cache)
            .arg("--signatures")
            .arg(&sigs)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        ok(&format!("report --format {format}"), out)
    };
    for format in ["markdown", "json"] {
        let (expected, shared) = (report(&alone, format), report(&shared, format));
        assert!(
            String::from_utf8_lossy(&expected).contains("wait-until-timeout"),
            "the window's report names the story's flake"
        );
        assert!(
            shared == expected,
            "report --format {format} differs:\n--- serve and a survey\n{}\n--- a survey alone\n{}",
            String::from_utf8_lossy(&shared),
            String::from_utf8_lossy(&expected)
        );
    }
}

/// Issue 42: a third writer holds the SQLite store's write lock for five seconds while a survey
/// (in this process, against the fake GitHub) and `serve` both write the store. Nothing that
/// answers HTTP may wait on the lock: serve answers `/healthz` and a delivery (a 503: its queue
/// row cannot be written) before the lock is let go, and the survey's requests go on meanwhile —
/// the fake answers some of them after serve's answers came and before the lock was let go. The
/// survey's runs fail one job each, so its tasks keep writing (and wait on the lock), while one
/// run of 4,000 jobs is listed page after page with nothing to write between pages: before
/// issue 42 the first write parked the runtime's threads in SQLite and the listing stalled too.
#[test]
fn a_held_write_lock_stalls_neither_serve_s_answers_nor_the_survey_s_requests() {
    const HOLD: Duration = Duration::from_secs(5);
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let serve = Serve::unreachable(
        dir.path(),
        "Codertocat/Hello-World",
        &cache,
        &["--queue-wait-ms", "1000"],
    );
    let spec = SyntheticSpec {
        runs: 40,
        jobs_per_run: 1,
        fail_every: 1,
        rerun_every: 0,
        ..SyntheticSpec::default()
    };
    let mut ds = synthetic(&spec);
    // The newest run, listed first, gets 4,000 more jobs: 41 pages of its jobs listing.
    let big = synthetic_run_id(spec.runs - 1);
    let run = ds.run_mut(big).unwrap();
    let attempt = run.attempts.last_mut().unwrap();
    let model = attempt.jobs[0].clone();
    attempt.jobs.extend((0..4000u64).map(|k| Job {
        id: JobId(90_000_000_000 + k),
        name: format!("matrix ({k})"),
        conclusion: Some(Conclusion::Success),
        ..model.clone()
    }));
    let gh = FakeGitHub::start_blocking(
        ds,
        Faults {
            latency: Duration::from_millis(100),
            ..Faults::default()
        },
    )
    .unwrap();
    let store = StoreHandle::new(Store::open(&cache).unwrap());
    let survey = {
        let (store, config) = (store.clone(), ClientConfig::new(gh.api_url(), None));
        let plan = SurveyPlan {
            repo: spec.repo.clone(),
            since: spec.start,
            until: spec.start + spec.spacing * spec.runs as i32,
            workflows: vec![],
            branch: None,
            event: None,
            interruptible: false,
        };
        std::thread::spawn(move || {
            let set = Arc::new(SignatureSet::compile(load_bundled()).unwrap());
            Session::new(config, Arc::new(()))
                .unwrap()
                .survey(store, set, &plan, &|_, _| BTreeSet::new())
        })
    };
    // The lock is taken once the big run's listing is under way.
    let big_jobs = format!("/actions/runs/{big}/jobs");
    let start = Instant::now();
    while !gh.requests().iter().any(|r| r.path.contains(&big_jobs)) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the survey never listed the big run's jobs"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let db = cache.join("store-v1/flakestat.sqlite3");
    // A write of the survey's may be under way: the lock is taken after it.
    let holder = crate::common::lock::HeldWriteLock::hold(db, HOLD);
    let (health, _) = serve.request("GET", "/healthz", &[], b"");
    let health_at = Instant::now();
    let job = crate::serve::example("workflow_job.queued");
    let delivered = serve.deliver("workflow_job", "held", &job, None);
    let delivered_at = Instant::now();
    let released = holder.released();
    let summary = survey.join().unwrap().expect("the survey ends well");

    assert!(
        health_at < released,
        "/healthz ({health}) was answered only after the lock was let go"
    );
    assert!(
        delivered_at < released,
        "the delivery was answered only after the lock was let go: {delivered:?}"
    );
    assert_eq!(delivered.0, 503, "{delivered:?}");
    let answered = health_at.max(delivered_at);
    let meanwhile: Vec<String> = gh
        .requests()
        .into_iter()
        .filter(|r| answered < r.answered && r.answered < released)
        .map(|r| r.path)
        .collect();
    assert!(
        !meanwhile.is_empty(),
        "the survey asked GitHub nothing between serve's answers and the lock's release"
    );
    assert!(
        meanwhile.iter().any(|p| p.contains(&big_jobs)),
        "the big run's listing went on: {meanwhile:?}"
    );
    // Everything is stored once the lock is let go: every run, and the big run's jobs.
    assert_eq!(summary.runs_listed, spec.runs as u64);
    let jobs = store.blocking(|s| s.load_run_jobs(big)).unwrap();
    assert_eq!(jobs.len(), 4001);
    assert_eq!(
        serve.deliver("workflow_job", "after", &job, None),
        (202, "queued\n".to_string())
    );
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
}
