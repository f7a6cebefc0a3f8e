//! `flakestat serve` under the faults of issue 41, through the real binary on 127.0.0.1: a
//! poison delivery, a panicking worker, slow and idle clients, unauthenticated bodies, and a
//! store another writer holds. Each test bounds its own time (none waits more than ~40 s).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::{signatures, story_dir};
use crate::serve::{Serve, completed_run, failed_story_runs, query};

/// The status and body of `/healthz`.
fn healthz(serve: &Serve) -> (u16, String) {
    serve.request("GET", "/healthz", &[], b"")
}

/// Issue 41 §1: a signed `workflow_run completed` whose run id is 2^63+5 is refused (400,
/// nothing stored), and a queue row an older `serve` stored wrapped (a negative run id, the
/// oldest in the queue) is set aside as `failed` with its error while the good deliveries
/// after it are ingested; nothing advises deleting the cache folder.
#[test]
fn a_poison_delivery_is_refused_and_a_poison_row_never_blocks_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let serve = Serve::on_story(dir.path(), &cache, &["--resync", "0"]);
    let poison = serde_json::to_vec(&serde_json::json!({
        "action": "completed",
        "repository": { "full_name": "NVIDIA/cuda-python" },
        "workflow_run": { "id": 9223372036854775813u64, "run_attempt": 1,
                          "created_at": "2026-07-01T00:00:00Z" },
    }))
    .unwrap();
    let (status, body) = serve.deliver("workflow_run", "poison", &poison, None);
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("workflow_run.id 9223372036854775813 is not a GitHub id"),
        "{body}"
    );

    // What an older serve stored: the id wrapped to a negative number, the oldest row.
    let db = cache.join("store-v1/flakestat.sqlite3");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "INSERT INTO webhook_queue (delivery, event, action, owner, name, run_id, run_attempt,
                run_created_at, received_at, state)
             VALUES ('old-poison', 'workflow_run', 'completed', 'NVIDIA', 'cuda-python',
                -9223372036854775803, 1, 0, 0, 'queued')",
            [],
        )
        .unwrap();
    let runs = failed_story_runs(2);
    for (i, (id, created)) in runs.iter().enumerate() {
        let (status, _) = serve.deliver(
            "workflow_run",
            &format!("good-{i}"),
            &completed_run(*id, created),
            None,
        );
        assert_eq!(status, 202);
    }
    serve.wait_up_to(Duration::from_secs(60), "both good runs ingested", |s| {
        s.metric("flakestat_ingests_total{outcome=\"done\"}") >= 2
            && s.metric("flakestat_queue_depth") == 0
            && s.metric("flakestat_queue_failed") == 1
    });
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
    let rows: Vec<String> = query(
        &cache,
        "SELECT delivery || ' ' || state || ' ' || coalesce(error, '-') FROM webhook_queue
         ORDER BY delivery",
    );
    assert_eq!(
        rows,
        [
            "good-0 done -",
            "good-1 done -",
            "old-poison failed set aside, cannot be read: run id -9223372036854775803 is not a GitHub id",
        ]
    );
    assert!(!stderr.contains("delete"), "{stderr}");
}

/// Issue 41 §6: a worker whose ingest panics is counted in `/metrics`, makes `/healthz`
/// answer 503 naming the worker, is started again (the delivery charged a try), and after
/// five panics in a row `serve` ends with a non-zero status saying why.
#[test]
fn a_panicking_worker_shows_in_healthz_and_ends_serve_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let serve = Serve::on_story(
        dir.path(),
        &cache,
        &["--resync", "0", "--panic-in-ingest", "--max-tries", "100"],
    );
    serve.wait_up_to(Duration::from_secs(10), "healthy at the start", |s| {
        healthz(s).0 == 200
    });
    let (id, created) = &failed_story_runs(1)[0];
    assert_eq!(
        serve
            .deliver("workflow_run", "boom", &completed_run(*id, created), None)
            .0,
        202
    );
    serve.wait_up_to(Duration::from_secs(10), "the panic counted", |s| {
        s.metric("flakestat_worker_panics_total") >= 1
    });
    let (status, body) = healthz(&serve);
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("worker: panicked"), "{body}");
    assert!(body.contains("--panic-in-ingest"), "{body}");
    assert!(body.contains("store: ok"), "{body}");
    let (code, stderr) = serve.wait_exit(Duration::from_secs(30));
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("the worker panicked 5 times in a row"),
        "{stderr}"
    );
    let tries: Vec<i64> = query(&cache, "SELECT tries FROM webhook_queue");
    assert_eq!(tries, [5], "each panic charged the delivery a try");
}

/// Issue 41 §3: a header sent a byte at a time is cut off at the header timeout; 1,200 idle
/// connections (more than `--max-connections`) do not keep a real delivery or `/healthz` from
/// an answer within a second: the oldest idle connections are closed for the newer ones.
#[test]
fn slow_and_idle_clients_do_not_keep_a_delivery_out() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let serve = Serve::unreachable(
        dir.path(),
        "Codertocat/Hello-World",
        &cache,
        &["--max-connections", "200", "--header-timeout-ms", "2000"],
    );
    // A byte every 200 ms: closed after the 2 s header timeout, not 62 s later.
    let mut slow = TcpStream::connect(&serve.addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let start = Instant::now();
    let mut closed = false;
    for byte in b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-Pad: "
        .iter()
        .cycle()
    {
        if slow.write_all(&[*byte]).is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 256];
        if let Ok(0) = slow.read(&mut buf) {
            closed = true;
            break;
        }
        if start.elapsed() > Duration::from_secs(10) {
            break;
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    assert!(
        closed,
        "a slow header still open after {:?}",
        start.elapsed()
    );
    assert!(
        start.elapsed() < Duration::from_secs(6),
        "{:?}",
        start.elapsed()
    );

    let idle: Vec<TcpStream> = (0..1200)
        .map(|_| TcpStream::connect(&serve.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let job = crate::serve::example("workflow_job.queued");
    let start = Instant::now();
    let (status, body) = serve.deliver("workflow_job", "real", &job, None);
    assert_eq!((status, body.as_str()), (202, "queued\n"));
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let start = Instant::now();
    assert_eq!(healthz(&serve).0, 200);
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let metrics = serve.metrics();
    let closed_idle = metrics
        .lines()
        .find_map(|l| l.strip_prefix("flakestat_connections_total{outcome=\"closed_idle\"} "))
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    // Past the cap of 200, the oldest idle ones made room (others reached the header timeout).
    assert!(closed_idle >= 500, "{metrics}");
    drop(idle);
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
}

/// The resident memory of a process, from /proc (Linux).
fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Issue 41 §4: 40 connections each sending part of an unsigned 24 MB `workflow_run` body
/// (3 MB of it so far, 120 MB in all) leave the server under 200 MB resident and grown by less
/// than half of what they sent (a server that buffered bodies before the check grew by all of
/// it): the signature is computed as the body arrives and at most 1 MiB of a body is kept. A
/// body past `--max-body` is refused (413) as it arrives, and the rest is not read.
#[test]
fn unfinished_unsigned_bodies_do_not_hold_their_size_in_memory() {
    if rss_bytes(std::process::id()).is_none() {
        eprintln!("no /proc: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let serve = Serve::unreachable(
        dir.path(),
        "NVIDIA/cuda-python",
        &cache,
        &["--body-timeout-ms", "60000"],
    );
    assert_eq!(healthz(&serve).0, 200);
    let before = rss_bytes(serve.pid()).unwrap();
    let chunk = vec![b' '; 1 << 20];
    let mut open = Vec::new();
    for i in 0..40 {
        let mut stream = TcpStream::connect(&serve.addr).unwrap();
        let head = format!(
            "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             X-GitHub-Event: workflow_run\r\nX-GitHub-Delivery: big-{i}\r\n\
             X-Hub-Signature-256: sha256={}\r\nContent-Length: 24000000\r\n\r\n",
            "0".repeat(64)
        );
        stream.write_all(head.as_bytes()).unwrap();
        for _ in 0..3 {
            stream.write_all(&chunk).unwrap();
        }
        open.push(stream);
    }
    // Let the server read what was sent.
    std::thread::sleep(Duration::from_secs(2));
    let rss = rss_bytes(serve.pid()).unwrap();
    assert!(rss < 200 << 20, "serve holds {} MB", rss >> 20);
    assert!(
        rss.saturating_sub(before) < 60 << 20,
        "serve grew from {} MB to {} MB",
        before >> 20,
        rss >> 20
    );
    assert_eq!(healthz(&serve).0, 200);
    drop(open);

    // Past the cap: 413 while the body is still being sent.
    let mut stream = TcpStream::connect(&serve.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(
            b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
              Transfer-Encoding: chunked\r\n\r\n",
        )
        .unwrap();
    // Read while writing: the answer comes before the body ends.
    let mut reader = stream.try_clone().unwrap();
    let answer = std::thread::spawn(move || {
        let mut answer = Vec::new();
        let _ = reader.read_to_end(&mut answer);
        answer
    });
    let piece = format!("{:x}\r\n{}\r\n", chunk.len(), " ".repeat(chunk.len()));
    let mut sent_all = true;
    for _ in 0..40 {
        if stream.write_all(piece.as_bytes()).is_err() {
            sent_all = false;
            break;
        }
    }
    let answer = answer.join().unwrap();
    let answer = String::from_utf8_lossy(&answer);
    // The 413 is written, then the connection closed with the rest unread: the kernel may
    // reset it before the client reads the answer, so a refused send counts as well.
    assert!(
        answer.starts_with("HTTP/1.1 413") || !sent_all,
        "40 MiB taken past a 25 MB cap: {answer}"
    );
    assert_eq!(
        serve.metric("flakestat_webhook_deliveries_total{event=\"other\",outcome=\"too_large\"}"),
        1
    );
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
}

/// Issue 41 §5: while another writer holds the SQLite store's write lock far longer than the
/// queue's bound (12 s against `--queue-wait-ms 1000`; the store's own busy timeout is 30 s),
/// each delivery is answered 503 within GitHub's 10 s and `/metrics` at once; once the lock is
/// let go, the next delivery is queued.
#[test]
fn a_store_held_by_another_writer_still_gets_answers_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let serve = Serve::unreachable(
        dir.path(),
        "Codertocat/Hello-World",
        &cache,
        &["--queue-wait-ms", "1000"],
    );
    let job = crate::serve::example("workflow_job.queued");
    let hold = Duration::from_secs(12);
    let db = cache.join("store-v1/flakestat.sqlite3");
    let writer = crate::common::lock::HeldWriteLock::hold(db, hold);
    let locked_at = writer.taken;
    let answers: Vec<(u16, Duration)> = std::thread::scope(|scope| {
        let sent: Vec<_> = (0..3)
            .map(|i| {
                let (serve, job) = (&serve, &job);
                scope.spawn(move || {
                    let start = Instant::now();
                    let (status, _) =
                        serve.deliver("workflow_job", &format!("held-{i}"), job, None);
                    (status, start.elapsed())
                })
            })
            .collect();
        sent.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (status, took) in &answers {
        assert_eq!(*status, 503, "{answers:?}");
        assert!(*took < Duration::from_secs(10), "{answers:?}");
    }
    let start = Instant::now();
    let metrics = serve.metrics();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert!(
        metrics.contains("outcome=\"store_timeout\"} 3"),
        "{metrics}"
    );
    assert!(
        locked_at.elapsed() < hold,
        "the answers came while the lock was held"
    );
    writer.released();
    assert_eq!(
        serve.deliver("workflow_job", "after", &job, None),
        (202, "queued\n".to_string())
    );
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
}

/// A survey of a synthetic dataset through the fake GitHub `gh` into `cache`: its output.
fn survey_through(
    gh: &flakestat::fake::FakeGitHub,
    cache: &std::path::Path,
) -> std::process::Output {
    crate::common::flakestat()
        .args([
            "survey",
            "--repo",
            "octo/demo",
            "--since",
            "2026-06-01",
            "--until",
            "2026-06-03",
            "--api-url",
            &gh.api_url(),
            "--format",
            "json",
            "--max-retries",
            "1",
            "--cache-dir",
        ])
        .arg(cache)
        .env("GH_TOKEN", "tok")
        .output()
        .unwrap()
}

/// Issue 41 §7: the log host's 403 `AuthenticationFailed` (an expired signed URL) is not a
/// refused token: the survey asks the API for the log again, once, and gets it (the same
/// report as without the fault); a log whose fresh URL is refused too is recorded unavailable
/// and the survey goes on (exit 0, not 4).
#[test]
fn an_expired_log_url_is_asked_for_again_and_a_survey_goes_on() {
    use flakestat::fake::scenario::{SyntheticSpec, synthetic};
    use flakestat::fake::{FakeGitHub, Faults, Listener};
    let mut ds = synthetic(&SyntheticSpec {
        runs: 20,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec!["tok".into()];
    let survey = |expired: u32| {
        let gh = FakeGitHub::start_blocking(
            ds.clone(),
            Faults {
                expired_log_downloads: expired,
                ..Faults::default()
            },
        )
        .unwrap();
        let cache = tempfile::tempdir().unwrap();
        let out = survey_through(&gh, cache.path());
        // Each log's downloads refused, by its path (the query is the signature, new each time).
        let mut refused = std::collections::BTreeMap::<String, usize>::new();
        for r in gh.requests() {
            if r.listener == Listener::LogHost && r.status == 403 {
                let path = r.path.split('?').next().unwrap_or("").to_string();
                *refused.entry(path).or_default() += 1;
            }
        }
        let unavailable: Vec<i64> = query(
            cache.path(),
            "SELECT count(*) FROM logs WHERE status = 'unavailable'",
        );
        (out, refused, unavailable[0])
    };
    let (clean, refused, unavailable) = survey(0);
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    assert_eq!((refused.len(), unavailable), (0, 0));

    let (once, refused, unavailable) = survey(1);
    let stderr = String::from_utf8_lossy(&once.stderr);
    assert_eq!(once.status.code(), Some(0), "{stderr}");
    assert!(!refused.is_empty(), "the fault was met");
    assert!(refused.values().all(|n| *n == 1), "{refused:?}");
    assert_eq!(unavailable, 0, "each log asked for again and stored");
    let report = |out: &std::process::Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(report(&once), report(&clean));

    let (twice, refused_twice, unavailable) = survey(2);
    let stderr = String::from_utf8_lossy(&twice.stderr);
    assert_eq!(twice.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("read access"), "{stderr}");
    assert!(
        refused_twice.values().all(|n| *n == 2),
        "asked again once per log, no more: {refused_twice:?}"
    );
    assert!(unavailable > 0, "the logs recorded unavailable");
}

/// Issue 41 §8: the same completed run attempt delivered again under new delivery ids (a
/// captured body replayed: the id is not signed) is answered "already ingested" and costs
/// GitHub no request, however often it comes.
#[test]
fn a_replayed_completed_attempt_costs_no_request() {
    use flakestat::fake::{Dataset, FakeGitHub, Faults};
    let gh = FakeGitHub::start_blocking(Dataset::load(&story_dir()).unwrap(), Faults::default())
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let api = gh.api_url();
    let sigs = signatures();
    let serve = Serve::start(
        dir.path(),
        &[
            "--repo",
            "NVIDIA/cuda-python",
            "--cache-dir",
            cache.to_str().unwrap(),
            "--signatures",
            sigs.to_str().unwrap(),
            "--api-url",
            &api,
            "--resync",
            "0",
        ],
    );
    let (id, created) = &failed_story_runs(1)[0];
    let body = completed_run(*id, created);
    assert_eq!(serve.deliver("workflow_run", "first", &body, None).0, 202);
    serve.wait_up_to(Duration::from_secs(60), "the run ingested", |s| {
        s.metric("flakestat_ingests_total{outcome=\"done\"}") >= 1
    });
    let requests = gh.requests().len();
    assert!(requests > 0);
    for i in 0..5 {
        assert_eq!(
            serve.deliver("workflow_run", &format!("replayed-{i}"), &body, None),
            (
                200,
                "already ingested: this run attempt is stored\n".to_string()
            )
        );
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(gh.requests().len(), requests, "no request for a replay");
    assert_eq!(serve.metric("flakestat_ingests_total{outcome=\"done\"}"), 1);
    assert_eq!(
        serve.metric(
            "flakestat_webhook_deliveries_total{event=\"workflow_run\",outcome=\"already_ingested\"}"
        ),
        5
    );
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
}

/// `url` with its user and password replaced.
fn with_user(url: &str, user: &str, password: &str) -> String {
    let start = url.find("://").unwrap() + 3;
    let at = start + url[start..].find('@').unwrap();
    format!("{}{user}:{password}{}", &url[..start], &url[at..])
}

/// Issue 41 §2: after PostgreSQL ends serve's connections (what a restart does to them:
/// "terminating connection due to administrator command"), deliveries are accepted again on
/// new connections within seconds, `/healthz` comes back to 200, and the queue's gauges stay
/// in `/metrics` throughout. The server comes from `FLAKESTAT_TEST_POSTGRES`; serve logs in as
/// a role of its own so that only its connections are ended.
#[test]
fn serve_connects_again_after_postgresql_drops_its_connections() {
    let Some(base) = std::env::var("FLAKESTAT_TEST_POSTGRES")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        crate::common::skips::skipped(
            crate::common::skips::Need::Postgres,
            "serve and a PostgreSQL restart: FLAKESTAT_TEST_POSTGRES is not set: skipped (.ci/postgres.sh start)",
        );
        return;
    };
    let url = flakestat::store::postgres::fresh_schema_url(&base).unwrap();
    let role = format!("serve_{}_{}", std::process::id(), fastrand::u32(..));
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{role}'"
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let serve_url = with_user(&url, &role, &role);
    let serve = Serve::start(
        dir.path(),
        &[
            "--repo",
            "Codertocat/Hello-World",
            "--store",
            &serve_url,
            "--api-url",
            "http://127.0.0.1:1",
        ],
    );
    let job = crate::serve::example("workflow_job.queued");
    assert_eq!(serve.deliver("workflow_job", "before", &job, None).0, 202);
    serve.wait_up_to(Duration::from_secs(10), "healthy", |s| healthz(s).0 == 200);

    let ended: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = $1",
            &[&role],
        )
        .unwrap()
        .get(0);
    assert!(
        ended >= 2,
        "the worker's and the front's connections: {ended}"
    );
    let start = Instant::now();
    let mut accepted = Vec::new();
    let mut answers = Vec::new();
    for i in 0.. {
        let id = format!("after-{i}");
        let (status, _) = serve.deliver("workflow_job", &id, &job, None);
        answers.push(status);
        if status == 202 {
            accepted.push(id);
            if accepted.len() == 3 {
                break;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no delivery accepted after the loss: {answers:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        serve.metrics().contains("\nflakestat_queue_depth "),
        "the gauges stay"
    );
    serve.wait_up_to(Duration::from_secs(15), "healthy again", |s| {
        healthz(s).0 == 200
    });
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains(&format!("{role}:{role}@")), "{stderr}");
    let stored: Vec<String> = admin
        .query(
            "SELECT delivery FROM webhook_queue ORDER BY delivery COLLATE \"C\"",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    for id in accepted.iter().chain([&"before".to_string()]) {
        assert!(
            stored.contains(id),
            "{id} answered 202 but not stored: {stored:?}"
        );
    }
}
