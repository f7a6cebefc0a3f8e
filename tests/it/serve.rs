//! `flakestat serve` through the real binary on 127.0.0.1: the signature check and the other
//! refusals store nothing, a redelivery is stored once, a completed run attempt is ingested into
//! the same rows a survey writes, and a stop (SIGTERM) keeps the queue for the next start.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use crate::common::{flakestat, signatures, story_dir, surveyed_story};
use flakestat::fake::Dataset;
use flakestat::model::Conclusion;
use flakestat::serve::WebhookSecret;

pub(crate) const SECRET: &str = "It's a Secret to Everybody";

/// A running `flakestat serve`; killed if a test fails before stopping it.
pub(crate) struct Serve {
    child: Child,
    pub(crate) addr: String,
    _stdout: BufReader<ChildStdout>,
}

impl Serve {
    /// Starts `flakestat serve ARGS --listen 127.0.0.1:0` with the secret in a file of `dir`,
    /// and reads the address from its first stdout line.
    pub(crate) fn start(dir: &Path, args: &[&str]) -> Serve {
        let secret = dir.join("secret");
        std::fs::write(&secret, format!("{SECRET}\n")).unwrap();
        let mut child = flakestat()
            .args(["serve", "--listen", "127.0.0.1:0", "--webhook-secret-file"])
            .arg(&secret)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let listen: serde_json::Value = serde_json::from_str(&first)
            .unwrap_or_else(|e| panic!("first stdout line {first:?}: {e}"));
        let addr = listen["listen"].as_str().unwrap().to_string();
        assert!(addr.starts_with("127.0.0.1:"), "{addr}");
        Serve {
            child,
            addr,
            _stdout: stdout,
        }
    }

    /// `serve --replay` of the bundled story into the store in `cache`, with the bundled
    /// signatures and `extra` flags.
    pub(crate) fn on_story(dir: &Path, cache: &Path, extra: &[&str]) -> Serve {
        Serve::replaying(dir, &story_dir(), cache, extra)
    }

    /// `serve --replay STORY` into the store in `cache`, with the bundled signatures and
    /// `extra` flags.
    pub(crate) fn replaying(dir: &Path, story: &Path, cache: &Path, extra: &[&str]) -> Serve {
        let sigs = signatures();
        let mut args = vec![
            "--replay",
            story.to_str().unwrap(),
            "--cache-dir",
            cache.to_str().unwrap(),
            "--signatures",
            sigs.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        Serve::start(dir, &args)
    }

    /// `serve` of `repo` into the store in `cache` with no GitHub to reach (`--api-url` a
    /// closed port): what it does with deliveries alone, with `extra` flags.
    pub(crate) fn unreachable(dir: &Path, repo: &str, cache: &Path, extra: &[&str]) -> Serve {
        let mut args = vec![
            "--repo",
            repo,
            "--cache-dir",
            cache.to_str().unwrap(),
            "--api-url",
            "http://127.0.0.1:1",
        ];
        args.extend_from_slice(extra);
        Serve::start(dir, &args)
    }

    /// One request (HTTP/1.1, `Connection: close`): the status and the body.
    pub(crate) fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        // A refusal may come before the whole body is read; the answer is what counts.
        let _ = stream.write_all(body);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {text:?}"));
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        (status, body)
    }

    /// A delivery as GitHub sends it: JSON, signed with `secret`, with its event and id.
    pub(crate) fn deliver(
        &self,
        event: &str,
        id: &str,
        body: &[u8],
        signature: Option<&str>,
    ) -> (u16, String) {
        let signed = WebhookSecret::new(SECRET.into()).unwrap().sign(body);
        let signature = signature.unwrap_or(&signed);
        self.request(
            "POST",
            "/webhook",
            &[
                ("Content-Type", "application/json"),
                ("X-GitHub-Event", event),
                ("X-GitHub-Delivery", id),
                ("X-Hub-Signature-256", signature),
            ],
            body,
        )
    }

    pub(crate) fn metrics(&self) -> String {
        let (status, body) = self.request("GET", "/metrics", &[], b"");
        assert_eq!(status, 200);
        body
    }

    /// The value of one metric line (`name{labels}`), 0 when absent.
    pub(crate) fn metric(&self, series: &str) -> u64 {
        self.metrics()
            .lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(0)
    }

    /// Waits (up to two minutes) until `done` holds.
    pub(crate) fn wait_until(&self, what: &str, done: impl Fn(&Serve) -> bool) {
        self.wait_up_to(Duration::from_secs(120), what, done);
    }

    /// Waits up to `limit` until `done` holds (a guard against a hang, not a speed goal).
    pub(crate) fn wait_up_to(&self, limit: Duration, what: &str, done: impl Fn(&Serve) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(
                start.elapsed() < limit,
                "{what}: not after {limit:?}; metrics:\n{}",
                self.metrics()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `limit` for the server to end by itself: its exit status and stderr.
    pub(crate) fn wait_exit(mut self, limit: Duration) -> (i32, String) {
        let start = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < limit, "serve still runs after {limit:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = self.child.wait().unwrap();
        (exit_code(status), stderr)
    }

    /// SIGTERM, then its exit status and stderr.
    pub(crate) fn stop(mut self) -> (i32, String) {
        let pid = self.child.id().to_string();
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = self.child.wait().unwrap();
        (exit_code(status), stderr)
    }
}

/// The exit code, or minus the signal that ended the process (-15 SIGTERM's default action, -6
/// an abort, -11 a segmentation fault), so that a failed assertion names what ended it.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return -signal;
    }
    status.code().unwrap_or(-1)
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn example(name: &str) -> Vec<u8> {
    std::fs::read(crate::common::root().join(format!("fixtures/webhooks/{name}.payload.json")))
        .unwrap()
}

pub(crate) fn query<T: rusqlite::types::FromSql>(cache: &Path, sql: &str) -> Vec<T> {
    let db = cache.join("store-v1/flakestat.sqlite3");
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut statement = conn.prepare(sql).unwrap();
    statement
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Unsigned, wrongly signed, form-encoded and oversized deliveries are refused and leave no
/// row; an unknown event and a ping are answered and leave none either; a verified delivery is
/// stored once however often it is redelivered; each answer is counted in `/metrics`.
#[test]
fn refused_deliveries_store_nothing_and_a_redelivery_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let serve = Serve::unreachable(
        dir.path(),
        "Codertocat/Hello-World",
        &cache,
        &["--max-body", "32KiB"],
    );
    let job = example("workflow_job.queued");
    assert!(job.len() < 32 << 10, "the example fits the cap");

    let (status, _) = serve.request(
        "POST",
        "/webhook",
        &[
            ("Content-Type", "application/json"),
            ("X-GitHub-Event", "workflow_job"),
            ("X-GitHub-Delivery", "d-unsigned"),
        ],
        &job,
    );
    assert_eq!(status, 401, "unsigned");
    let forged = WebhookSecret::new(b"not the secret".to_vec())
        .unwrap()
        .sign(&job);
    assert_eq!(
        serve
            .deliver("workflow_job", "d-forged", &job, Some(&forged))
            .0,
        401
    );
    let mut tampered = job.clone();
    tampered.push(b' ');
    let signed = WebhookSecret::new(SECRET.into()).unwrap().sign(&job);
    assert_eq!(
        serve
            .deliver("workflow_job", "d-tampered", &tampered, Some(&signed))
            .0,
        401
    );
    let (status, _) = serve.request(
        "POST",
        "/webhook",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("X-GitHub-Event", "workflow_job"),
            ("X-GitHub-Delivery", "d-form"),
            ("X-Hub-Signature-256", &signed),
        ],
        &job,
    );
    assert_eq!(status, 415, "GitHub's form-encoded content type");
    let big = vec![b' '; 33 << 10];
    assert_eq!(serve.deliver("workflow_job", "d-big", &big, None).0, 413);

    assert_eq!(
        serve
            .deliver(
                "ping",
                "d-ping",
                br#"{"zen":"Keep it logically awesome."}"#,
                None
            )
            .0,
        200
    );
    assert_eq!(serve.deliver("issues", "d-issue", b"{}", None).0, 202);
    assert_eq!(
        serve
            .deliver("workflow_job", "d-broken", b"{\"action\":", None)
            .0,
        400
    );
    let (status, body) = serve.deliver(
        "workflow_run",
        "d-other",
        &example("workflow_run.completed"),
        None,
    );
    assert_eq!(
        (status, body.as_str()),
        (202, "ignored: not a repository this server follows\n")
    );

    assert_eq!(
        serve.deliver("workflow_job", "d-1", &job, None),
        (202, "queued\n".to_string())
    );
    assert_eq!(
        serve.deliver("workflow_job", "d-1", &job, None),
        (200, "already received\n".to_string())
    );
    let (status, _) = serve.request("GET", "/healthz", &[], b"");
    assert_eq!(status, 200);

    let metrics = serve.metrics();
    for line in [
        "flakestat_webhook_deliveries_total{event=\"other\",outcome=\"unauthorized\"} 3",
        "flakestat_webhook_deliveries_total{event=\"other\",outcome=\"unsupported_media_type\"} 1",
        "flakestat_webhook_deliveries_total{event=\"other\",outcome=\"too_large\"} 1",
        "flakestat_webhook_deliveries_total{event=\"other\",outcome=\"ignored\"} 1",
        "flakestat_webhook_deliveries_total{event=\"ping\",outcome=\"ping\"} 1",
        "flakestat_webhook_deliveries_total{event=\"workflow_job\",outcome=\"bad_request\"} 1",
        "flakestat_webhook_deliveries_total{event=\"workflow_run\",outcome=\"other_repository\"} 1",
        "flakestat_webhook_deliveries_total{event=\"workflow_job\",outcome=\"queued\"} 1",
        "flakestat_webhook_deliveries_total{event=\"workflow_job\",outcome=\"duplicate\"} 1",
        "flakestat_queue_depth 0",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "no {line:?} in\n{metrics}"
        );
    }
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
    let rows: Vec<String> = query(
        &cache,
        "SELECT delivery || ' ' || state FROM webhook_queue ORDER BY delivery",
    );
    assert_eq!(rows, ["d-1 noted"], "only the verified delivery, once");
    assert!(!stderr.contains(SECRET), "the secret is never printed");
}

/// The story's failed runs whose only attempt is the first, oldest first (`n` of them).
pub(crate) fn failed_story_runs(n: usize) -> Vec<(u64, String)> {
    let dataset = Dataset::load(&story_dir()).unwrap();
    let mut runs: Vec<_> = dataset
        .runs
        .iter()
        .filter(|r| r.run.run_attempt == 1 && r.run.conclusion == Some(Conclusion::Failure))
        .filter(|r| r.run.created_at.to_rfc3339().as_str() >= "2026-06-15")
        .map(|r| {
            (
                r.run.id.0,
                r.run
                    .created_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            )
        })
        .collect();
    runs.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    runs.truncate(n);
    assert_eq!(runs.len(), n, "the story has {n} such runs");
    runs
}

pub(crate) fn completed_run(id: u64, created_at: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "action": "completed",
        "repository": { "full_name": "NVIDIA/cuda-python" },
        "workflow_run": { "id": id, "run_attempt": 1, "created_at": created_at,
                          "status": "completed", "conclusion": "failure" },
    }))
    .unwrap()
}

/// What the store holds of these runs' jobs: each job, whether it failed, its log's status and
/// its classification.
fn rows_of_runs(cache: &Path, runs: &[(u64, String)]) -> Vec<String> {
    let ids: Vec<String> = runs.iter().map(|(id, _)| id.to_string()).collect();
    query(
        cache,
        &format!(
            "SELECT j.id || ' ' || j.failed || ' ' || coalesce(l.status, '-') || ' ' ||
                coalesce(c.json, '-')
             FROM jobs j LEFT JOIN logs l ON l.job_id = j.id
                LEFT JOIN classifications c ON c.job_id = j.id
             WHERE j.run_id IN ({}) ORDER BY j.id, c.fingerprint",
            ids.join(", ")
        ),
    )
}

/// Completed run attempts delivered while GitHub cannot be reached stay queued through a stop
/// (SIGTERM); started again (against the story's fake GitHub), the server drains the queue
/// through the survey's per-run ingest, and the runs' jobs, logs and classifications are the
/// rows a survey of the story writes, with no other run stored and no window recorded as listed.
#[test]
fn a_stop_keeps_the_queue_and_the_next_start_ingests_it_as_a_survey_would() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let sigs = signatures();
    let sigs_arg = sigs.to_str().unwrap();
    let runs = failed_story_runs(3);

    // GitHub unreachable: each ingest fails and its delivery stays queued.
    let offline = Serve::unreachable(
        dir.path(),
        "NVIDIA/cuda-python",
        &cache,
        &[
            "--signatures",
            sigs_arg,
            "--max-retries",
            "0",
            "--max-tries",
            "100",
        ],
    );
    for (i, (id, created)) in runs.iter().enumerate() {
        let (status, _) = offline.deliver(
            "workflow_run",
            &format!("run-{i}"),
            &completed_run(*id, created),
            None,
        );
        assert_eq!(status, 202);
    }
    offline.wait_until("a failed ingest", |s| {
        s.metric("flakestat_ingests_total{outcome=\"retry\"}") >= 1
    });
    assert_eq!(offline.metric("flakestat_queue_depth"), 3);
    let (code, stderr) = offline.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("3 run attempt deliveries still queued"),
        "{stderr}"
    );
    let states: Vec<String> = query(&cache, "SELECT state FROM webhook_queue ORDER BY delivery");
    assert_eq!(states, ["queued", "queued", "queued"]);

    // Started again: the queue drains without a new delivery.
    let serve = Serve::on_story(dir.path(), &cache, &[]);
    serve.wait_until("the queue drained", |s| {
        s.metric("flakestat_queue_depth") == 0
    });
    assert_eq!(serve.metric("flakestat_ingests_total{outcome=\"done\"}"), 3);
    assert!(
        serve.metric("flakestat_logs_fetched_total") >= 3,
        "{}",
        serve.metrics()
    );
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
    let states: Vec<String> = query(&cache, "SELECT state FROM webhook_queue ORDER BY delivery");
    assert_eq!(states, ["done", "done", "done"]);

    let served = rows_of_runs(&cache, &runs);
    assert!(
        served.iter().any(|r| r.contains(" 1 stored ")),
        "a failed job's log stored: {served:#?}"
    );
    assert_eq!(
        served,
        rows_of_runs(surveyed_story(), &runs),
        "the rows a survey writes"
    );
    // Only the delivered runs, and no window claimed as listed: runs a delivery brought are
    // not a listing's cover.
    let mut stored: Vec<i64> = query(&cache, "SELECT id FROM runs ORDER BY id");
    let mut delivered: Vec<i64> = runs.iter().map(|(id, _)| *id as i64).collect();
    stored.sort_unstable();
    delivered.sort_unstable();
    assert_eq!(stored, delivered);
    let windows: Vec<i64> = query(&cache, "SELECT count(*) FROM windows");
    assert_eq!(windows, [0], "a delivery lists no window");
}

/// Without a secret (no file, no variable) or with an empty one, `serve` does not start: an
/// unsigned receiver would let anyone write the store (exit 3, the flag and variable named).
#[test]
fn serve_refuses_to_start_without_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let serve = |extra: &[&std::ffi::OsStr]| {
        flakestat()
            .args(["serve", "--repo", "octo/demo", "--listen", "127.0.0.1:0"])
            .arg("--cache-dir")
            .arg(&cache)
            .args(extra)
            .env_remove("FLAKESTAT_WEBHOOK_SECRET")
            .output()
            .unwrap()
    };
    let out = serve(&[]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--webhook-secret-file FILE or FLAKESTAT_WEBHOOK_SECRET"),
        "{stderr}"
    );
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let out = serve(&["--webhook-secret-file".as_ref(), empty.as_os_str()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the webhook secret is empty"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !cache.exists(),
        "nothing written before the secret is known"
    );
}

/// The resync fills in what no delivery brought (GitHub never retries a dropped one): with no
/// delivery at all, `--resync 1s` surveys the recording's last `--resync-window` into the
/// store, the same runs a survey of that window stores.
#[test]
fn the_resync_fills_in_runs_no_delivery_brought() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let serve = Serve::on_story(
        dir.path(),
        &cache,
        &["--resync", "1s", "--resync-window", "48h"],
    );
    serve.wait_until("a resync", |s| {
        s.metric("flakestat_ingests_total{outcome=\"resync\"}") >= 1
    });
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
    let dataset = Dataset::load(&story_dir()).unwrap();
    let since = dataset.now - chrono::TimeDelta::hours(48);
    let mut expected: Vec<i64> = dataset
        .runs
        .iter()
        .filter(|r| r.run.created_at >= since && r.run.created_at < dataset.now)
        .map(|r| r.run.id.0 as i64)
        .collect();
    expected.sort();
    assert!(!expected.is_empty(), "the story's last two days have runs");
    let stored: Vec<i64> = query(
        &cache,
        &format!(
            "SELECT id FROM runs WHERE created_at >= {} AND created_at < {} ORDER BY id",
            since.timestamp(),
            dataset.now.timestamp()
        ),
    );
    assert_eq!(stored, expected);
}

/// `serve` as a GitHub App (the team setup of docs/serve.md): the fake GitHub takes only the
/// App's installation tokens; the installation of the repository's owner is looked up, and the
/// delivered runs end in the rows a survey writes, with the installation token sent to the API
/// origin only.
#[test]
fn serve_as_a_github_app_ingests_what_a_survey_stores() {
    use flakestat::fake::{FakeApp, FakeGitHub, Faults, Listener, RouteKind};
    let app_keys = crate::common::root().join("fixtures/github-app");
    let public = std::fs::read_to_string(app_keys.join("app-key.pub.pem")).unwrap();
    let gh = FakeGitHub::start_blocking(Dataset::load(&story_dir()).unwrap(), Faults::default())
        .unwrap();
    gh.set_app(FakeApp::new(4242, &public, "NVIDIA", 31))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let api = gh.api_url();
    let key = app_keys.join("app-key.pem");
    let serve = Serve::start(
        dir.path(),
        &[
            "--repo",
            "NVIDIA/cuda-python",
            "--cache-dir",
            cache.to_str().unwrap(),
            "--signatures",
            signatures().to_str().unwrap(),
            "--api-url",
            &api,
            "--app-id",
            "4242",
            "--app-key",
            key.to_str().unwrap(),
            "--resync",
            "0",
        ],
    );
    let runs = failed_story_runs(2);
    for (i, (id, created)) in runs.iter().enumerate() {
        let (status, _) = serve.deliver(
            "workflow_run",
            &format!("app-run-{i}"),
            &completed_run(*id, created),
            None,
        );
        assert_eq!(status, 202);
    }
    serve.wait_until("both runs ingested", |s| {
        s.metric("flakestat_ingests_total{outcome=\"done\"}") >= 2
    });
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        rows_of_runs(&cache, &runs),
        rows_of_runs(surveyed_story(), &runs),
        "the rows a survey writes"
    );
    let requests = gh.requests();
    let lookups: Vec<&str> = requests
        .iter()
        .filter(|r| r.kind == RouteKind::AppInstallation)
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(lookups, ["/repos/NVIDIA/cuda-python/installation"]);
    let tokens = requests
        .iter()
        .filter(|r| r.kind == RouteKind::AppToken && r.status == 201)
        .count();
    assert_eq!(tokens, 1, "one token serves both ingests");
    for r in &requests {
        let value = r.authorization_value.as_deref().unwrap_or("");
        match (r.listener, r.kind) {
            (Listener::Api, RouteKind::AppToken | RouteKind::AppInstallation) => {
                assert!(value.starts_with("Bearer ey"), "{r:#?}")
            }
            (Listener::Api, _) => assert!(value.starts_with("Bearer ghs_"), "{r:#?}"),
            _ => assert_eq!(value, "", "a token left the API origin: {r:#?}"),
        }
    }
    assert!(requests.iter().any(|r| r.listener == Listener::LogHost));
}

/// A SIGTERM the moment serve has said its address (a supervisor that starts and stops it at
/// once) is a graceful stop, exit 0, never the default action's kill: the handler is in place
/// before the address is said. Twenty starts, each stopped at once, catch the window there was.
#[test]
fn a_sigterm_right_after_the_address_is_said_is_a_graceful_stop() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    for i in 0..20 {
        let serve = Serve::unreachable(
            dir.path(),
            "Codertocat/Hello-World",
            &cache,
            &["--resync", "0"],
        );
        let (code, stderr) = serve.stop();
        assert_eq!(code, 0, "start {i}: {stderr}");
    }
}
