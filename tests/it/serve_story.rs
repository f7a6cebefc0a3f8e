//! `flakestat serve` fed by the fake GitHub's webhooks (`flakestat replay deliver`), through the
//! real binaries on 127.0.0.1: the bundled story delivered as GitHub would, with its
//! imperfections (redeliveries, swapped pairs, drops, a forged delivery), then one resync,
//! reports byte for byte what a survey of the same window reports; and deliveries out of order
//! end in the same store as in order.

use std::path::Path;
use std::time::Duration;

use crate::common::{flakestat, ok, signatures, story_dir};
use crate::serve::{SECRET, Serve, query};
use flakestat::fake::Dataset;
use flakestat::fake::webhooks::{EventWindow, WebhookEvent, webhook_events};

/// The story's window the deliveries cover: its last twelve days, from the flake's second
/// week to the recording's end (`2026-08-01T06:30:00Z`).
const SINCE: &str = "2026-07-20";
const UNTIL: &str = "2026-08-01T06:30:00Z";

/// `report` of the window from the store in `cache`, in `format`: its stdout.
fn report(cache: &Path, format: &str) -> Vec<u8> {
    ok(flakestat()
        .args(["report", "--repo", "NVIDIA/cuda-python", "--since", SINCE])
        .args(["--until", UNTIL, "--format", format])
        .arg("--cache-dir")
        .arg(cache)
        .arg("--signatures")
        .arg(signatures())
        .env("NO_COLOR", "1")
        .output()
        .unwrap())
    .stdout
}

/// The done-when of issue 26: the story's webhooks of the window delivered to `serve` with 10 %
/// redelivered, adjacent pairs swapped, 5 % dropped and one forged delivery, then one resync of
/// the window, give a store whose `report` (markdown and JSON) is byte-identical to the report
/// of a `survey` of the same window; the forged delivery was answered 401 and left no queue
/// row and no run.
#[test]
fn the_storys_webhooks_with_mischief_and_one_resync_report_as_a_survey_does() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("served");
    let secret = dir.path().join("secret");
    std::fs::write(&secret, format!("{SECRET}\n")).unwrap();

    // The deliveries, no resync yet.
    let serve = Serve::on_story(dir.path(), &cache, &["--resync", "0"]);
    let out = ok(flakestat()
        .args(["-q", "replay", "deliver", "--replay"])
        .arg(story_dir())
        .args(["--since", SINCE, "--to"])
        .arg(format!("http://{}/webhook", serve.addr))
        .arg("--webhook-secret-file")
        .arg(&secret)
        .args(["--duplicates", "10%", "--reorder", "10%", "--drop", "5%"])
        .args(["--forge", "1", "--seed", "26"])
        .output()
        .unwrap());
    let sent: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let events = sent["events"].as_u64().unwrap();
    assert!(events > 1000, "{sent}");
    let share = |key: &str| sent[key].as_u64().unwrap() as f64 / events as f64;
    assert!((0.03..0.07).contains(&share("dropped")), "{sent}");
    assert!((0.07..0.13).contains(&share("redelivered")), "{sent}");
    assert!(share("reordered_pairs") > 0.05, "{sent}");
    let forged = &sent["forged"].as_array().unwrap()[..];
    assert_eq!(forged.len(), 1, "{sent}");
    assert_eq!(forged[0]["status"], 401);
    assert_eq!(sent["answers"]["401"], 1, "only the forged one refused");

    // A long guard: some 130 run attempts are ingested, on a machine that may be busy.
    serve.wait_up_to(Duration::from_secs(600), "the queue drained", |s| {
        s.metric("flakestat_queue_depth") == 0
    });
    assert_eq!(
        serve
            .metric("flakestat_webhook_deliveries_total{event=\"other\",outcome=\"unauthorized\"}"),
        1
    );
    assert!(
        serve.metric(
            "flakestat_webhook_deliveries_total{event=\"workflow_job\",outcome=\"duplicate\"}"
        ) > 0
    );
    assert_eq!(serve.metric("flakestat_queue_failed"), 0);
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");

    // What the deliveries alone left out: the dropped completions and the run still in
    // progress (a resync is what brings them).
    let dataset = Dataset::load(&story_dir()).unwrap();
    let since: flakestat::model::Timestamp = format!("{SINCE}T00:00:00Z").parse().unwrap();
    let mut in_window: Vec<i64> = dataset
        .runs
        .iter()
        .filter(|r| r.run.created_at >= since && r.run.created_at < dataset.now)
        .map(|r| r.run.id.0 as i64)
        .collect();
    in_window.sort_unstable();
    let delivered: Vec<i64> = query(&cache, "SELECT id FROM runs ORDER BY id");
    assert!(
        delivered.len() < in_window.len(),
        "the drops left runs for the resync ({} of {})",
        delivered.len(),
        in_window.len()
    );

    // One resync of exactly the window (the recording's end back to SINCE).
    let window_seconds = (dataset.now - since).num_seconds();
    let serve = Serve::on_story(
        dir.path(),
        &cache,
        &[
            "--resync",
            "1s",
            "--resync-window",
            &format!("{window_seconds}s"),
        ],
    );
    serve.wait_up_to(Duration::from_secs(600), "a resync", |s| {
        s.metric("flakestat_ingests_total{outcome=\"resync\"}") >= 1
    });
    // `report` reads the store while serve still has it open (SQLite in WAL mode): the same
    // report as after serve stopped.
    let live = report(&cache, "json");
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        live,
        report(&cache, "json"),
        "read while serve ran, the report is the one read after it stopped"
    );
    let stored: Vec<i64> = query(&cache, "SELECT id FROM runs ORDER BY id");
    assert_eq!(stored, in_window, "the window's runs, no other");

    // The forged delivery left nothing behind.
    let id = forged[0]["delivery"].as_str().unwrap();
    let run = forged[0]["run"].as_i64().unwrap();
    assert!(
        !in_window.contains(&run),
        "it names a run outside the window"
    );
    let rows: Vec<i64> = query(
        &cache,
        &format!("SELECT count(*) FROM webhook_queue WHERE delivery = '{id}' OR run_id = {run}"),
    );
    assert_eq!(rows, [0], "no queue row of the forged delivery");
    let runs: Vec<i64> = query(
        &cache,
        &format!("SELECT count(*) FROM runs WHERE id = {run}"),
    );
    assert_eq!(runs, [0], "no run of the forged delivery");

    // A survey of the same window into another store.
    let surveyed = dir.path().join("surveyed");
    ok(flakestat()
        .args(["-q", "survey", "--replay"])
        .arg(story_dir())
        .args(["--since", SINCE, "--format", "json", "--cache-dir"])
        .arg(&surveyed)
        .arg("--signatures")
        .arg(signatures())
        .output()
        .unwrap());
    for format in ["markdown", "json"] {
        let served = report(&cache, format);
        let expected = report(&surveyed, format);
        assert!(
            String::from_utf8_lossy(&expected).contains("wait-until-timeout"),
            "the window's report names the story's flake"
        );
        assert!(
            served == expected,
            "report --format {format} differs:\n--- served\n{}\n--- surveyed\n{}",
            String::from_utf8_lossy(&served),
            String::from_utf8_lossy(&expected)
        );
    }
}

/// A few of the story's runs: failed ones re-run (several attempts), and a green one.
fn some_runs(dataset: &Dataset) -> Vec<flakestat::model::RunId> {
    let mut runs: Vec<_> = dataset
        .runs
        .iter()
        .filter(|r| r.attempts.len() > 1)
        .take(3)
        .map(|r| r.run.id)
        .collect();
    runs.extend(
        dataset
            .runs
            .iter()
            .filter(|r| r.attempts.len() == 1 && r.run.conclusion.is_some())
            .take(1)
            .map(|r| r.run.id),
    );
    assert_eq!(runs.len(), 4);
    runs
}

/// What the store in `cache` holds of runs, jobs, logs, classifications and deliveries.
fn store_rows(cache: &Path) -> Vec<String> {
    let mut rows = Vec::new();
    for sql in [
        "SELECT 'run ' || id || ' ' || run_attempt || ' ' || status || ' ' || coalesce(jobs_attempt, '-') || ' ' || jobs_completed || ' ' || json FROM runs ORDER BY id",
        "SELECT 'job ' || id || ' ' || run_attempt || ' ' || failed || ' ' || json FROM jobs ORDER BY id",
        "SELECT 'log ' || job_id || ' ' || status || ' ' || raw_size FROM logs ORDER BY job_id",
        "SELECT 'class ' || job_id || ' ' || fingerprint || ' ' || json FROM classifications ORDER BY job_id, fingerprint",
        "SELECT 'delivery ' || delivery || ' ' || event || ' ' || action || ' ' || state FROM webhook_queue ORDER BY delivery",
        "SELECT 'windows ' || count(*) FROM windows",
    ] {
        rows.extend(query::<String>(cache, sql));
    }
    rows
}

/// Delivers `events` (ids by their place in time order) to a fresh `serve` of the story, waits
/// until the queue is drained, stops it: the store's rows.
fn deliver_in(dir: &Path, name: &str, events: &[(String, &WebhookEvent)]) -> Vec<String> {
    let cache = dir.join(name);
    let serve = Serve::on_story(dir, &cache, &["--resync", "0"]);
    for (id, event) in events {
        let (status, body) = serve.deliver(event.event, id, &event.body, None);
        assert_eq!(status, 202, "{id}: {body}");
    }
    serve.wait_until("the queue drained", |s| {
        s.metric("flakestat_queue_depth") == 0
    });
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
    store_rows(&cache)
}

/// Events out of order (each run's `workflow_run completed` before its jobs' events, and a
/// `workflow_job completed` before its `workflow_run requested`) end in the same store, row for
/// row, as the same deliveries in the order they happened.
#[test]
fn deliveries_out_of_order_end_in_the_same_store_as_in_order() {
    let dataset = Dataset::load(&story_dir()).unwrap();
    let runs = some_runs(&dataset);
    let all = webhook_events(&dataset, EventWindow::default(), "https://api.github.com");
    let in_order: Vec<(String, &WebhookEvent)> = all
        .iter()
        .filter(|e| runs.contains(&e.run))
        .enumerate()
        .map(|(i, e)| (format!("d-{i:04}"), e))
        .collect();
    let reversed: Vec<(String, &WebhookEvent)> = in_order.iter().rev().cloned().collect();
    let place = |order: &[(String, &WebhookEvent)], event: &str, action: &str, run| {
        order
            .iter()
            .position(|(_, e)| {
                e.run == run && e.run_attempt == 1 && e.event == event && e.action == action
            })
            .unwrap()
    };
    for run in &runs {
        assert!(
            place(&reversed, "workflow_job", "completed", *run)
                < place(&reversed, "workflow_run", "requested", *run)
        );
        assert!(
            place(&reversed, "workflow_run", "completed", *run)
                < place(&reversed, "workflow_job", "queued", *run)
        );
        assert!(
            place(&in_order, "workflow_run", "requested", *run)
                < place(&in_order, "workflow_job", "completed", *run)
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let ordered = deliver_in(dir.path(), "in-order", &in_order);
    let scrambled = deliver_in(dir.path(), "reversed", &reversed);
    assert!(
        ordered
            .iter()
            .any(|r| r.starts_with("log ") && r.contains(" stored ")),
        "failed jobs' logs stored: {ordered:#?}"
    );
    assert!(
        ordered
            .iter()
            .any(|r| r.starts_with("delivery ") && r.ends_with(" done"))
    );
    assert_eq!(ordered.len(), scrambled.len());
    for (a, b) in ordered.iter().zip(&scrambled) {
        assert_eq!(a, b);
    }
}
