//! The fake GitHub over real HTTP: pagination, the 1,000-result cap, attempts and jobs, the log
//! redirect to the second listener, 410/404, ETags and 304, rate limits, faults, auth, comments,
//! commits and compare.

use std::time::Duration;

use chrono::{TimeDelta, TimeZone, Utc};
use flakestat::fake::scenario::{SyntheticSpec, synthetic, synthetic_run_id};
use flakestat::fake::{
    Dataset, FakeAttempt, FakeGitHub, FakeIssue, FakeLog, FakePull, Faults, Listener, RouteKind,
};
use flakestat::model::{JobId, Sha};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// A minimal HTTP/1.1 client: one request per connection. `Err` when the server closed the
/// connection without answering.
async fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<Resp, String> {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut stream = TcpStream::connect(host).await.map_err(|e| e.to_string())?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    req.push_str("\r\n");
    if let Some(b) = body {
        req.push_str(b);
    }
    stream
        .write_all(req.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .await
        .map_err(|e| e.to_string())?;
    if raw.is_empty() {
        return Err("connection closed without a response".into());
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    Ok(Resp {
        status,
        headers,
        body: body.to_string(),
    })
}

async fn get(url: &str) -> Resp {
    request("GET", url, &[], None).await.expect("an answer")
}

async fn get_with(url: &str, headers: &[(&str, &str)]) -> Resp {
    request("GET", url, headers, None).await.expect("an answer")
}

fn spec(runs: usize) -> SyntheticSpec {
    SyntheticSpec {
        runs,
        ..SyntheticSpec::default()
    }
}

async fn start(runs: usize) -> FakeGitHub {
    FakeGitHub::start(synthetic(&spec(runs)), Faults::default())
        .await
        .expect("server starts")
}

/// `(rel, url)` pairs of a `Link` header.
fn links(resp: &Resp) -> Vec<(String, String)> {
    let Some(link) = resp.header("link") else {
        return Vec::new();
    };
    link.split(", ")
        .map(|part| {
            let (url, rel) = part.split_once("; ").expect("url; rel");
            let url = url.trim_start_matches('<').trim_end_matches('>');
            let rel = rel.trim_start_matches("rel=\"").trim_end_matches('"');
            (rel.to_string(), url.to_string())
        })
        .collect()
}

fn link<'a>(all: &'a [(String, String)], rel: &str) -> Option<&'a str> {
    all.iter().find(|(r, _)| r == rel).map(|(_, u)| u.as_str())
}

#[tokio::test]
async fn runs_paginate_newest_first_with_absolute_links() {
    let gh = start(50).await;
    let api = gh.api_url();
    let first = get(&format!("{api}/repos/octo/demo/actions/runs?per_page=20")).await;
    assert_eq!(first.status, 200);
    let body = first.json();
    assert_eq!(body["total_count"], 50);
    let runs = body["workflow_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 20);
    assert_eq!(runs[0]["id"], synthetic_run_id(49).0);
    assert!(runs[0]["created_at"].as_str() > runs[1]["created_at"].as_str());
    let l = links(&first);
    assert_eq!(
        link(&l, "next"),
        Some(format!("{api}/repos/octo/demo/actions/runs?per_page=20&page=2").as_str())
    );
    assert!(link(&l, "last").unwrap().ends_with("page=3"));
    assert_eq!(link(&l, "prev"), None);

    let last = get(link(&l, "last").unwrap()).await;
    let l = links(&last);
    assert_eq!(last.json()["workflow_runs"].as_array().unwrap().len(), 10);
    assert!(link(&l, "prev").unwrap().ends_with("page=2"));
    assert!(link(&l, "first").unwrap().ends_with("page=1"));
    assert_eq!(link(&l, "next"), None);
    assert!(l.iter().all(|(_, u)| u.starts_with(&api)));

    // Default page size is 30; per_page is capped at 100.
    let default = get(&format!("{api}/repos/octo/demo/actions/runs")).await;
    assert_eq!(
        default.json()["workflow_runs"].as_array().unwrap().len(),
        30
    );
    let capped = get(&format!("{api}/repos/octo/demo/actions/runs?per_page=500")).await;
    assert_eq!(capped.json()["workflow_runs"].as_array().unwrap().len(), 50);
}

#[tokio::test]
async fn a_filtered_listing_stops_at_1000_results() {
    let mut s = spec(1105);
    s.jobs_per_run = 1;
    let gh = FakeGitHub::start(synthetic(&s), Faults::default())
        .await
        .unwrap();
    let api = gh.api_url();
    let url = |page: usize, filter: &str| {
        format!("{api}/repos/octo/demo/actions/runs?{filter}per_page=100&page={page}")
    };
    let filter = "created=%3E%3D2026-01-01&";
    let p10 = get(&url(10, filter)).await.json();
    assert_eq!(p10["total_count"], 1105);
    assert_eq!(p10["workflow_runs"].as_array().unwrap().len(), 100);
    let p11 = get(&url(11, filter)).await;
    let body = p11.json();
    assert_eq!(
        body["total_count"], 1105,
        "total_count keeps the true count"
    );
    assert!(body["workflow_runs"].as_array().unwrap().is_empty());
    // An event filter caps too; no filter does not.
    let event = get(&url(11, "event=push&")).await.json();
    assert_eq!(event["total_count"], 553);
    assert_eq!(event["workflow_runs"].as_array().unwrap().len(), 0);
    let unfiltered = get(&url(11, "")).await.json();
    assert_eq!(unfiltered["workflow_runs"].as_array().unwrap().len(), 100);
    let p12 = get(&url(12, "")).await.json();
    assert_eq!(p12["workflow_runs"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn created_filter_forms_over_http() {
    let gh = start(50).await;
    let api = gh.api_url();
    let count = |q: &str| {
        let url = format!("{api}/repos/octo/demo/actions/runs?per_page=100&created={q}");
        async move { get(&url).await.json()["total_count"].as_u64().unwrap() }
    };
    // Runs are created hourly from 2026-06-01T00:00Z: 24 on June 1st, 24 on the 2nd, 2 on the 3rd.
    assert_eq!(count("2026-06-01T00:00:00Z..2026-06-01T05:00:00Z").await, 6);
    assert_eq!(count("2026-06-02").await, 24);
    assert_eq!(count("%3E%3D2026-06-02").await, 26);
    assert_eq!(count("%3E2026-06-02").await, 2);
    assert_eq!(count("%3C2026-06-01T03:00:00Z").await, 3);
    assert_eq!(count("%3C%3D2026-06-01").await, 24);
    assert_eq!(count("2026-06-02T22:00:00Z..*").await, 4);
    assert_eq!(count("*..2026-06-01T00:59:59Z").await, 1);
    let bad = get(&format!(
        "{api}/repos/octo/demo/actions/runs?created=last-week"
    ))
    .await;
    assert_eq!(bad.status, 422);
}

#[tokio::test]
async fn listing_filters_by_event_branch_status_and_workflow() {
    let gh = start(50).await;
    let api = gh.api_url();
    let total = |q: String| async move { get(&q).await.json()["total_count"].as_u64().unwrap() };
    let base = format!("{api}/repos/octo/demo/actions");
    assert_eq!(total(format!("{base}/runs?event=schedule")).await, 25);
    assert_eq!(total(format!("{base}/runs?branch=main")).await, 50);
    assert_eq!(total(format!("{base}/runs?branch=other")).await, 0);
    // Runs 5, 15, 25, 35, 45 fail; 10, 20, 30, 40, 50 were re-run to green.
    assert_eq!(total(format!("{base}/runs?status=failure")).await, 5);
    assert_eq!(total(format!("{base}/runs?status=completed")).await, 50);
    assert_eq!(total(format!("{base}/workflows/ci.yml/runs")).await, 50);
    assert_eq!(total(format!("{base}/workflows/1001/runs")).await, 50);
    assert_eq!(
        get(&format!("{base}/workflows/nope.yml/runs")).await.status,
        404
    );
}

#[tokio::test]
async fn jobs_latest_versus_all_and_attempts() {
    let gh = start(10).await;
    let api = gh.api_url();
    let run = synthetic_run_id(9); // the 10th run: re-run to green
    let base = format!("{api}/repos/octo/demo/actions/runs/{run}");
    let r = get(&base).await.json();
    assert_eq!(r["run_attempt"], 2);
    assert_eq!(r["conclusion"], "success");
    assert!(
        r["previous_attempt_url"]
            .as_str()
            .unwrap()
            .ends_with("/attempts/1")
    );
    for field in [
        "display_title",
        "head_branch",
        "run_started_at",
        "pull_requests",
        "workflow_id",
        "path",
        "head_commit",
    ] {
        assert!(r.get(field).is_some(), "run lacks {field}");
    }
    let a1 = get(&format!("{base}/attempts/1")).await.json();
    assert_eq!(a1["run_attempt"], 1);
    assert_eq!(a1["conclusion"], "failure");
    assert!(a1["previous_attempt_url"].is_null());
    assert_eq!(get(&format!("{base}/attempts/3")).await.status, 404);

    let latest = get(&format!("{base}/jobs")).await.json();
    assert_eq!(latest["total_count"], 4);
    assert!(
        latest["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|j| j["run_attempt"] == 2)
    );
    let all = get(&format!("{base}/jobs?filter=all")).await.json();
    assert_eq!(all["total_count"], 8);
    let first = get(&format!("{base}/attempts/1/jobs")).await.json();
    assert_eq!(first["total_count"], 4);
    let job = &first["jobs"][0];
    assert_eq!(job["conclusion"], "failure");
    assert!(job["id"].as_u64().unwrap() > u64::from(u32::MAX));
    for field in [
        "steps",
        "labels",
        "html_url",
        "runner_name",
        "workflow_name",
        "head_branch",
        "started_at",
    ] {
        assert!(job.get(field).is_some(), "job lacks {field}");
    }
    assert_eq!(job["steps"][2]["conclusion"], "failure");
    let paged = get(&format!("{base}/jobs?filter=all&per_page=3&page=3")).await;
    assert_eq!(paged.json()["jobs"].as_array().unwrap().len(), 2);
    assert!(links(&paged).iter().any(|(r, _)| r == "prev"));
}

#[tokio::test]
async fn partial_rerun_carries_unrerun_jobs_over() {
    let gh = start(5).await;
    let run = synthetic_run_id(4); // failed: job 0 failed in attempt 1
    let ds = gh.dataset();
    let failed = ds.run(run).unwrap().attempts[0].jobs[0].clone();
    let mut rerun = failed.clone();
    rerun.id = JobId(failed.id.0 + 5_000);
    rerun.run_attempt = 2;
    rerun.conclusion = Some("success".into());
    let attempt = FakeAttempt {
        attempt: 2,
        created_at: failed.completed_at.unwrap() + TimeDelta::minutes(5),
        conclusion: Some("success".into()),
        jobs: vec![rerun.clone()],
    };
    assert!(gh.push_attempt(run, attempt));
    let api = gh.api_url();
    let base = format!("{api}/repos/octo/demo/actions/runs/{run}");
    assert_eq!(get(&base).await.json()["conclusion"], "success");
    let latest = get(&format!("{base}/jobs")).await.json();
    let jobs = latest["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    assert_eq!(
        jobs.iter().filter(|j| j["run_attempt"] == 2).count(),
        1,
        "only the re-run job belongs to attempt 2"
    );
    assert!(jobs.iter().any(|j| j["id"] == rerun.id.0));
    assert!(!jobs.iter().any(|j| j["id"] == failed.id.0));
    assert_eq!(
        get(&format!("{base}/jobs?filter=all")).await.json()["total_count"],
        5
    );
}

#[tokio::test]
async fn job_log_redirects_to_the_log_host_without_the_token() {
    let gh = start(5).await;
    let run = gh.dataset().run(synthetic_run_id(4)).unwrap().clone();
    let job = run.attempts[0].jobs[0].id;
    let api = gh.api_url();
    let url = format!("{api}/repos/octo/demo/actions/jobs/{job}/logs");
    let redirect = get_with(&url, &[("Authorization", "Bearer secret")]).await;
    assert_eq!(redirect.status, 302);
    let location = redirect.header("location").unwrap().to_string();
    assert!(location.starts_with(&gh.log_host_url()), "{location}");
    assert_ne!(gh.log_host_url(), api);
    let blob = get(&location).await;
    assert_eq!(blob.status, 200);
    assert!(
        blob.header("content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    assert!(blob.body.starts_with('\u{feff}'));
    assert!(blob.body.contains(&format!(
        "FLAKE-MARKER run {} attempt 1",
        synthetic_run_id(4)
    )));
    // A tampered signature is refused.
    let tampered = get(&location.replace("sig=", "sig=0")).await;
    assert_eq!(tampered.status, 403);

    let recorded = gh.requests();
    let api_req = recorded
        .iter()
        .find(|r| r.kind == RouteKind::JobLog)
        .unwrap();
    assert!(api_req.authorization);
    assert_eq!(api_req.status, 302);
    assert_eq!(api_req.listener, Listener::Api);
    let blob_req = recorded
        .iter()
        .find(|r| r.kind == RouteKind::LogBlob)
        .unwrap();
    assert_eq!(blob_req.listener, Listener::LogHost);
    assert!(!blob_req.authorization);
    assert_eq!(blob_req.status, 200);
    assert_eq!(
        format!("http://{}", blob_req.host),
        gh.log_host_url(),
        "the blob request reached the second listener"
    );
    assert_eq!(gh.request_count(RouteKind::LogBlob), 2);
}

#[tokio::test]
async fn expired_and_missing_logs() {
    let gh = start(5).await;
    let jobs: Vec<JobId> = gh.dataset().run(synthetic_run_id(4)).unwrap().attempts[0]
        .jobs
        .iter()
        .map(|j| j.id)
        .collect();
    gh.set_log(jobs[0], FakeLog::Expired);
    // A job without a log (GitHub answers 404); a successful job without a recorded log has
    // one all the same (below).
    gh.set_log(jobs[1], FakeLog::Missing);
    let api = gh.api_url();
    let gone = get(&format!(
        "{api}/repos/octo/demo/actions/jobs/{}/logs",
        jobs[0]
    ))
    .await;
    assert_eq!(gone.status, 410);
    assert_eq!(gone.json()["status"], "410", "status is a string");
    let none = get(&format!(
        "{api}/repos/octo/demo/actions/jobs/{}/logs",
        jobs[1]
    ))
    .await;
    assert_eq!(none.status, 404);
    let unknown = get(&format!("{api}/repos/octo/demo/actions/jobs/12345/logs")).await;
    assert_eq!(unknown.status, 404);
    // GitHub keeps the logs of passing jobs: 302 to the log host, like any other log.
    let ds = gh.dataset();
    let green = ds
        .jobs()
        .find(|j| j.conclusion == Some("success".into()) && !ds.logs.contains_key(&j.id))
        .expect("the synthetic dataset has a passing job")
        .id;
    let passing = get(&format!("{api}/repos/octo/demo/actions/jobs/{green}/logs")).await;
    assert_eq!(passing.status, 302);
    assert!(
        passing
            .header("location")
            .is_some_and(|l| l.starts_with(&gh.log_host_url())),
        "{:?}",
        passing.header("location")
    );
}

#[tokio::test]
async fn etag_answers_304_without_spending_budget() {
    let gh = start(5).await;
    let url = format!("{}/repos/octo/demo/actions/runs", gh.api_url());
    let first = get(&url).await;
    let etag = first.header("etag").unwrap().to_string();
    let remaining: u32 = first
        .header("x-ratelimit-remaining")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(first.header("x-ratelimit-limit"), Some("5000"));
    assert_eq!(first.header("x-ratelimit-resource"), Some("core"));
    let again = get_with(&url, &[("If-None-Match", &etag)]).await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(
        again.header("x-ratelimit-remaining").unwrap(),
        remaining.to_string()
    );
    // A change in the data changes the ETag.
    gh.mutate(|ds| ds.runs.pop());
    let changed = get_with(&url, &[("If-None-Match", &etag)]).await;
    assert_eq!(changed.status, 200);
    assert_ne!(changed.header("etag").unwrap(), etag);
    assert_eq!(
        changed.header("x-ratelimit-remaining").unwrap(),
        (remaining - 1).to_string()
    );
}

#[tokio::test]
async fn exhausted_budget_answers_403_until_reset() {
    let faults = Faults {
        rate_limit: Some(3),
        rate_limit_window: Duration::from_secs(2),
        ..Faults::default()
    };
    let gh = FakeGitHub::start(synthetic(&spec(3)), faults)
        .await
        .unwrap();
    let url = format!("{}/repos/octo/demo", gh.api_url());
    let auth = [("Authorization", "Bearer t")];
    for expected in ["2", "1", "0"] {
        let ok = get_with(&url, &auth).await;
        assert_eq!(ok.status, 200);
        assert_eq!(ok.header("x-ratelimit-remaining"), Some(expected));
    }
    let limited = get_with(&url, &auth).await;
    assert_eq!(limited.status, 403);
    assert_eq!(limited.header("x-ratelimit-remaining"), Some("0"));
    let reset: u64 = limited
        .header("x-ratelimit-reset")
        .unwrap()
        .parse()
        .unwrap();
    let now = Utc::now().timestamp() as u64;
    assert!(reset >= now && reset <= now + 3, "reset {reset} now {now}");
    assert!(
        limited.json()["message"]
            .as_str()
            .unwrap()
            .contains("rate limit exceeded")
    );
    tokio::time::sleep(Duration::from_secs(reset - now + 1)).await;
    let after = get_with(&url, &auth).await;
    assert_eq!(after.status, 200);
    assert_eq!(after.header("x-ratelimit-remaining"), Some("2"));
}

/// As on GitHub, a log's API request costs a request of the budget (its answer is the 302)
/// while the log host costs nothing: with the budget spent, a link already given still
/// serves the log, and the API refuses the next one.
#[tokio::test]
async fn the_log_host_serves_when_the_budget_is_spent() {
    let faults = Faults {
        rate_limit: Some(1),
        ..Faults::default()
    };
    let gh = FakeGitHub::start(synthetic(&spec(5)), faults)
        .await
        .unwrap();
    let jobs: Vec<JobId> = gh.dataset().run(synthetic_run_id(4)).unwrap().attempts[0]
        .jobs
        .iter()
        .map(|j| j.id)
        .collect();
    let log = |job: JobId| format!("{}/repos/octo/demo/actions/jobs/{job}/logs", gh.api_url());
    let auth = [("Authorization", "Bearer t")];
    let redirect = get_with(&log(jobs[0]), &auth).await;
    assert_eq!(redirect.status, 302);
    assert_eq!(redirect.header("x-ratelimit-remaining"), Some("0"));
    let refused = get_with(&log(jobs[1]), &auth).await;
    assert_eq!(refused.status, 403);
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    for _ in 0..2 {
        let blob = get(redirect.header("location").unwrap()).await;
        assert_eq!(blob.status, 200);
        assert!(blob.header("x-ratelimit-remaining").is_none());
    }
}

#[tokio::test]
async fn anonymous_budget_is_separate() {
    let faults = Faults {
        anonymous_rate_limit: Some(1),
        ..Faults::default()
    };
    let gh = FakeGitHub::start(synthetic(&spec(3)), faults)
        .await
        .unwrap();
    let url = format!("{}/repos/octo/demo", gh.api_url());
    assert_eq!(get(&url).await.header("x-ratelimit-limit"), Some("1"));
    assert_eq!(get(&url).await.status, 403);
    let authed = get_with(&url, &[("Authorization", "token t")]).await;
    assert_eq!(authed.status, 200);
    assert_eq!(authed.header("x-ratelimit-limit"), Some("5000"));
}

#[tokio::test]
async fn faults_are_deterministic() {
    let faults = Faults {
        drop_every: Some(5),
        error_every: Some(3),
        secondary_limit_every: Some(4),
        retry_after_secs: 2,
        ..Faults::default()
    };
    let gh = FakeGitHub::start(synthetic(&spec(3)), faults)
        .await
        .unwrap();
    let mut seen = Vec::new();
    for i in 0..10 {
        // Distinct URLs: a retry of the same request is never faulted (see below).
        let url = format!("{}/repos/octo/demo?try={i}", gh.api_url());
        match request("GET", &url, &[], None).await {
            Ok(r) => {
                if r.status == 403 {
                    assert_eq!(r.header("retry-after"), Some("2"));
                    assert!(
                        r.json()["message"]
                            .as_str()
                            .unwrap()
                            .contains("secondary rate limit")
                    );
                }
                if r.status >= 500 {
                    assert!(!r.body.is_empty());
                }
                seen.push(r.status);
            }
            Err(_) => seen.push(0),
        }
    }
    // 3: 502, 4: secondary, 5: dropped, 6: 503, 8: secondary, 9: 502, 10: dropped.
    assert_eq!(seen, vec![200, 200, 502, 403, 0, 503, 200, 403, 502, 0]);
    let statuses: Vec<u16> = gh.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, seen);
}

#[tokio::test]
async fn a_faulted_request_gets_through_on_its_next_try() {
    // Every request is due a fault; only retries of a faulted request are spared.
    let faults = Faults {
        error_every: Some(1),
        ..Faults::default()
    };
    let gh = FakeGitHub::start(synthetic(&spec(3)), faults)
        .await
        .unwrap();
    let a = format!("{}/repos/octo/demo", gh.api_url());
    let b = format!("{}/repos/octo/demo/actions/runs", gh.api_url());
    assert_eq!(get(&a).await.status, 502);
    assert_eq!(
        get(&b).await.status,
        503,
        "another request is still faulted"
    );
    assert_eq!(get(&a).await.status, 200, "the retry of `a` gets through");
    assert_eq!(get(&b).await.status, 200, "the retry of `b` gets through");
    assert_eq!(
        get(&a).await.status,
        502,
        "a later, new try is due a fault again"
    );
}

#[tokio::test]
async fn auth_and_private_repositories() {
    let mut ds = synthetic(&spec(3));
    ds.auth.tokens = vec!["good".into()];
    ds.auth.tokens_without_access = vec!["outsider".into()];
    ds.private = true;
    let gh = FakeGitHub::start(ds, Faults::default()).await.unwrap();
    let url = format!("{}/repos/octo/demo", gh.api_url());
    let bad = get_with(&url, &[("Authorization", "Bearer nope")]).await;
    assert_eq!(bad.status, 401);
    assert_eq!(bad.json()["message"], "Bad credentials");
    assert_eq!(
        get(&url).await.status,
        404,
        "anonymous cannot see a private repo"
    );
    let outsider = get_with(&url, &[("Authorization", "Bearer outsider")]).await;
    assert_eq!(outsider.status, 404);
    let good = get_with(&url, &[("Authorization", "Bearer good")]).await;
    assert_eq!(good.status, 200);
    let repo = good.json();
    assert_eq!(repo["full_name"], "octo/demo");
    assert_eq!(repo["default_branch"], "main");
    assert_eq!(repo["private"], true);
    let other = get_with(
        &format!("{}/repos/octo/other", gh.api_url()),
        &[("Authorization", "Bearer good")],
    )
    .await;
    assert_eq!(other.status, 404);
    assert_eq!(other.json()["message"], "Not Found");
    assert_eq!(other.json()["status"], "404");
}

#[tokio::test]
async fn required_token() {
    let mut ds = synthetic(&spec(3));
    ds.auth.require_token = true;
    let gh = FakeGitHub::start(ds, Faults::default()).await.unwrap();
    let url = format!("{}/repos/octo/demo", gh.api_url());
    assert_eq!(get(&url).await.status, 401);
    assert_eq!(
        get_with(&url, &[("Authorization", "Bearer any")])
            .await
            .status,
        200
    );
}

fn add_pull(ds: &mut Dataset, number: u64, locked: bool) {
    let at = Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap();
    ds.pulls.push(FakePull {
        number,
        title: format!("PR {number}"),
        state: "closed".into(),
        user: "dev".into(),
        base_ref: "main".into(),
        head_ref: format!("feature-{number}"),
        head_sha: Sha("a".repeat(40)),
        base_sha: Sha("b".repeat(40)),
        created_at: at,
        updated_at: at + TimeDelta::hours(number as i64),
        closed_at: Some(at + TimeDelta::hours(1)),
        merged_at: Some(at + TimeDelta::hours(1)),
        merge_commit_sha: Some(Sha("c".repeat(40))),
        draft: false,
        locked,
        head_repo: None,
        files: vec![flakestat::fake::FakeFile {
            filename: "src/new.py".into(),
            status: "renamed".into(),
            previous_filename: Some("src/old.py".into()),
            additions: 3,
            deletions: 1,
        }],
    });
}

#[tokio::test]
async fn issue_comments_round_trip_and_locked_issues() {
    let mut ds = synthetic(&spec(3));
    add_pull(&mut ds, 7, false);
    ds.issues.push(FakeIssue {
        number: 9,
        title: "locked".into(),
        state: "open".into(),
        locked: true,
    });
    let gh = FakeGitHub::start(ds, Faults::default()).await.unwrap();
    let api = gh.api_url();
    let auth = [("Authorization", "Bearer t")];
    let url = format!("{api}/repos/octo/demo/issues/7/comments");
    let anon = request("POST", &url, &[], Some(r#"{"body":"x"}"#))
        .await
        .unwrap();
    assert_eq!(anon.status, 401);
    let created = request("POST", &url, &auth, Some(r#"{"body":"first report"}"#))
        .await
        .unwrap();
    assert_eq!(created.status, 201);
    let id = created.json()["id"].as_u64().unwrap();
    let patched = request(
        "PATCH",
        &format!("{api}/repos/octo/demo/issues/comments/{id}"),
        &auth,
        Some(r#"{"body":"updated report"}"#),
    )
    .await
    .unwrap();
    assert_eq!(patched.status, 200);
    assert_eq!(patched.json()["body"], "updated report");
    let listed = get(&url).await.json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["body"], "updated report");
    assert_eq!(gh.comments(7).len(), 1);
    assert_eq!(gh.comments(7)[0].body, "updated report");
    let locked = request(
        "POST",
        &format!("{api}/repos/octo/demo/issues/9/comments"),
        &auth,
        Some(r#"{"body":"x"}"#),
    )
    .await
    .unwrap();
    assert_eq!(locked.status, 403);
    assert!(gh.comments(9).is_empty());
    assert_eq!(gh.request_count(RouteKind::CreateComment), 3);
}

#[tokio::test]
async fn pulls_and_files() {
    let mut ds = synthetic(&spec(3));
    for n in 1..=5 {
        add_pull(&mut ds, n, false);
    }
    let gh = FakeGitHub::start(ds, Faults::default()).await.unwrap();
    let api = gh.api_url();
    let page = get(&format!(
        "{api}/repos/octo/demo/pulls?state=closed&base=main&sort=updated&direction=desc&per_page=2"
    ))
    .await;
    let body = page.json();
    let numbers: Vec<u64> = body
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, vec![5, 4]);
    assert!(body[0]["merged_at"].is_string());
    assert_eq!(body[0]["merge_commit_sha"], "c".repeat(40));
    assert!(
        links(&page)
            .iter()
            .any(|(r, u)| r == "last" && u.ends_with("page=3"))
    );
    let open = get(&format!("{api}/repos/octo/demo/pulls")).await.json();
    assert!(open.as_array().unwrap().is_empty(), "default state is open");
    let one = get(&format!("{api}/repos/octo/demo/pulls/3")).await.json();
    assert_eq!(one["merged"], true);
    assert_eq!(one["head"]["ref"], "feature-3");
    let files = get(&format!("{api}/repos/octo/demo/pulls/3/files"))
        .await
        .json();
    assert_eq!(files[0]["filename"], "src/new.py");
    assert_eq!(files[0]["status"], "renamed");
    assert_eq!(files[0]["previous_filename"], "src/old.py");
    assert_eq!(
        get(&format!("{api}/repos/octo/demo/pulls/99")).await.status,
        404
    );
}

#[tokio::test]
async fn commits_and_compare_follow_the_graph() {
    let gh = start(10).await;
    let ds = gh.dataset();
    let sha = |i: usize| ds.runs[i].run.head_sha.0.clone();
    let api = gh.api_url();
    let cmp = |b: String, h: String| {
        let url = format!("{api}/repos/octo/demo/compare/{b}...{h}");
        async move { get(&url).await.json() }
    };
    let ahead = cmp(sha(2), sha(5)).await;
    assert_eq!(ahead["status"], "ahead");
    assert_eq!(ahead["ahead_by"], 3);
    assert_eq!(ahead["behind_by"], 0);
    assert_eq!(ahead["merge_base_commit"]["sha"], sha(2));
    let behind = cmp(sha(5), sha(2)).await;
    assert_eq!(behind["status"], "behind");
    assert_eq!(behind["behind_by"], 3);
    assert_eq!(cmp(sha(4), sha(4)).await["status"], "identical");
    assert_eq!(
        cmp("main".into(), sha(9)[..7].to_string()).await["status"],
        "identical"
    );

    // A side branch off commit 3 diverges from main.
    let side = Sha("d".repeat(40));
    gh.mutate(|ds| {
        ds.commits.push(flakestat::fake::FakeCommit {
            sha: side.clone(),
            parents: vec![Sha(sha(3))],
            message: "side".into(),
            author: "dev".into(),
            date: Utc.with_ymd_and_hms(2026, 6, 1, 4, 0, 0).unwrap(),
            files: Vec::new(),
        });
        ds.branches.insert("side".into(), side.clone());
    });
    let diverged = cmp("main".into(), "side".into()).await;
    assert_eq!(diverged["status"], "diverged");
    assert_eq!(diverged["ahead_by"], 1);
    assert_eq!(diverged["behind_by"], 6);
    assert_eq!(diverged["merge_base_commit"]["sha"], sha(3));
    let missing = get(&format!("{api}/repos/octo/demo/compare/main...nope")).await;
    assert_eq!(missing.status, 404);

    let commits = get(&format!(
        "{api}/repos/octo/demo/commits?sha=main&since=2026-06-01T02:00:00Z&until=2026-06-01T05:00:00Z"
    ))
    .await
    .json();
    let listed: Vec<&str> = commits
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sha"].as_str().unwrap())
        .collect();
    // Commits are dated a minute before their run: runs 3..=5 fall inside.
    assert_eq!(listed, vec![sha(5), sha(4), sha(3)]);
    assert_eq!(commits[0]["parents"][0]["sha"], sha(4));
}

#[test]
fn start_blocking_serves_from_its_own_thread() {
    let gh = FakeGitHub::start_blocking(synthetic(&spec(2)), Faults::default()).unwrap();
    let url = format!("{}/repos/octo/demo/actions/runs", gh.api_url());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let resp = rt.block_on(get(&url));
    assert_eq!(resp.json()["total_count"], 2);
    let addr = gh.api_url();
    gh.shutdown();
    let after = rt.block_on(request(
        "GET",
        &format!("{addr}/repos/octo/demo"),
        &[],
        None,
    ));
    assert!(after.is_err(), "the server stopped");
}

#[tokio::test]
async fn runs_added_later_appear() {
    let gh = start(3).await;
    let mut extra = gh.dataset().runs[2].clone();
    extra.run.id = synthetic_run_id(100);
    extra.run.created_at += TimeDelta::days(1);
    gh.add_run(extra);
    let body = get(&format!("{}/repos/octo/demo/actions/runs", gh.api_url()))
        .await
        .json();
    assert_eq!(body["total_count"], 4);
    assert_eq!(body["workflow_runs"][0]["id"], synthetic_run_id(100).0);
}

#[test]
fn dataset_json_round_trip() {
    let ds = synthetic(&spec(4));
    let dir = tempfile::tempdir().unwrap();
    ds.save_json(dir.path()).unwrap();
    let loaded = Dataset::load(dir.path()).unwrap();
    assert_eq!(loaded, ds);
    let empty = tempfile::tempdir().unwrap();
    let err = Dataset::load(empty.path()).unwrap_err().to_string();
    assert!(err.contains("scenario.toml"), "{err}");
}

#[tokio::test]
async fn workflows_rate_limit_and_the_enterprise_prefix() {
    let faults = Faults {
        rate_limit: Some(2),
        ..Faults::default()
    };
    let gh = FakeGitHub::start(synthetic(&spec(3)), faults)
        .await
        .unwrap();
    let api = gh.api_url();
    let list = get(&format!("{api}/api/v3/repos/octo/demo/actions/workflows")).await;
    assert_eq!(list.status, 200);
    let body = list.json();
    assert_eq!(body["total_count"], 1);
    assert_eq!(body["workflows"][0]["path"], ".github/workflows/ci.yml");
    let one = get(&format!("{api}/repos/octo/demo/actions/workflows/ci.yml")).await;
    assert_eq!(one.json()["id"], 1001);
    assert_eq!(gh.request_count(RouteKind::Workflows), 2);
    // The budget (2) is spent; /rate_limit still answers, and costs nothing.
    assert_eq!(get(&format!("{api}/repos/octo/demo")).await.status, 403);
    for _ in 0..2 {
        let rate = get(&format!("{api}/rate_limit")).await;
        assert_eq!(rate.status, 200);
        assert_eq!(rate.json()["resources"]["core"]["remaining"], 0);
        assert_eq!(rate.json()["resources"]["core"]["limit"], 2);
    }
    assert_eq!(gh.request_count(RouteKind::RateLimit), 2);
}

#[tokio::test]
async fn expired_log_body_matches_github() {
    let gh = start(5).await;
    let job = gh.dataset().run(synthetic_run_id(4)).unwrap().attempts[0].jobs[0].id;
    gh.set_log(job, FakeLog::Expired);
    let gone = get(&format!(
        "{}/repos/octo/demo/actions/jobs/{job}/logs",
        gh.api_url()
    ))
    .await
    .json();
    assert_eq!(gone["message"], "Server Error");
    assert!(
        gone["documentation_url"]
            .as_str()
            .unwrap()
            .ends_with("#download-job-logs-for-a-workflow-run")
    );
}

#[test]
fn attempt_listing_keeps_duplicate_names_within_an_attempt() {
    let mut ds = synthetic(&spec(10));
    let run = ds.run_mut(synthetic_run_id(9)).unwrap();
    for attempt in &mut run.attempts {
        for job in &mut attempt.jobs {
            job.name = "same".into();
        }
    }
    let run = ds.run(synthetic_run_id(9)).unwrap();
    assert_eq!(run.jobs_at(2).len(), 4, "attempt 2 re-ran all four jobs");
    assert!(run.jobs_at(2).iter().all(|j| j.run_attempt == 2));
    assert_eq!(run.jobs_at(1).len(), 4);
    assert_eq!(run.all_jobs().len(), 8);
}

#[tokio::test]
async fn pulls_default_direction_depends_on_sort() {
    let mut ds = synthetic(&spec(3));
    for n in 1..=3 {
        add_pull(&mut ds, n, false);
    }
    let gh = FakeGitHub::start(ds, Faults::default()).await.unwrap();
    let numbers = |q: &'static str| {
        let url = format!("{}/repos/octo/demo/pulls?state=all&{q}", gh.api_url());
        async move {
            get(&url)
                .await
                .json()
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["number"].as_u64().unwrap())
                .collect::<Vec<_>>()
        }
    };
    // add_pull: updated_at grows with the number; created_at is the same, ties by number.
    assert_eq!(numbers("sort=updated").await, vec![1, 2, 3]);
    assert_eq!(numbers("sort=updated&direction=desc").await, vec![3, 2, 1]);
    assert_eq!(numbers("").await, vec![3, 2, 1]);
}

#[tokio::test]
async fn limits_can_answer_429() {
    let faults = Faults {
        rate_limit: Some(1),
        rate_limit_status: 429,
        secondary_limit_every: Some(2),
        secondary_limit_status: 429,
        ..Faults::default()
    };
    let gh = FakeGitHub::start(synthetic(&spec(3)), faults)
        .await
        .unwrap();
    let url = format!("{}/repos/octo/demo", gh.api_url());
    assert_eq!(get(&url).await.status, 200);
    let secondary = get(&url).await;
    assert_eq!(secondary.status, 429);
    assert!(secondary.header("retry-after").is_some());
    let exhausted = get(&url).await;
    assert_eq!(exhausted.status, 429);
    assert_eq!(exhausted.header("x-ratelimit-remaining"), Some("0"));
}

#[tokio::test]
async fn dropping_the_server_closes_both_listeners() {
    let gh = start(2).await;
    let (api, logs) = (gh.api_url(), gh.log_host_url());
    assert_eq!(get(&format!("{api}/repos/octo/demo")).await.status, 200);
    drop(gh);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        request("GET", &format!("{api}/repos/octo/demo"), &[], None)
            .await
            .is_err()
    );
    assert!(
        request("GET", &format!("{logs}/logs/1"), &[], None)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn the_repository_answers_any_spelling_with_github_s_name_and_id() {
    let gh = start(2).await;
    let api = gh.api_url();
    let canonical = get(&format!("{api}/repos/octo/demo")).await.json();
    for spelling in ["OCTO/demo", "octo/DEMO", "Octo/Demo"] {
        let other = get(&format!("{api}/repos/{spelling}")).await;
        assert_eq!(other.status, 200, "{spelling}");
        let other = other.json();
        assert_eq!(other["full_name"], "octo/demo", "{spelling}");
        assert_eq!(other["id"], canonical["id"], "{spelling}");
        assert!(other["id"].as_u64().is_some());
    }
}

/// GitHub's stale-attempt-log bug, switched on: an earlier attempt's job id is answered with
/// the latest attempt's execution's log; the attempt archive still holds each attempt's own.
#[tokio::test]
async fn the_stale_attempt_log_switch_and_the_attempt_archive() {
    let gh = start(10).await;
    let run = gh.dataset().run(synthetic_run_id(9)).unwrap().clone();
    assert_eq!(run.attempts.len(), 2, "run 10 was re-run to green");
    let first = run.attempts[0].jobs[0].clone();
    let api = gh.api_url();
    let log_of = |job: JobId| {
        let url = format!("{api}/repos/octo/demo/actions/jobs/{job}/logs");
        async move {
            let redirect = get(&url).await;
            assert_eq!(redirect.status, 302);
            get(redirect.header("location").unwrap()).await
        }
    };
    let marker = format!("FLAKE-MARKER run {} attempt 1", run.run.id);
    assert!(log_of(first.id).await.body.contains(&marker));

    gh.set_faults(Faults {
        stale_attempt_logs: true,
        ..Faults::default()
    });
    let stale = log_of(first.id).await;
    assert_eq!(stale.status, 200);
    assert!(!stale.body.contains(&marker), "{}", stale.body);
    // The latest attempt's execution (green): stamped within it, not within attempt 1.
    let second = &run.attempts[1].jobs[0];
    let started = second
        .started_at
        .unwrap()
        .format("%Y-%m-%dT%H:%M")
        .to_string();
    assert!(stale.body.contains(&started), "{}", stale.body);
    assert!(stale.body.starts_with('\u{feff}'));

    // The attempt archive: 302 to the log host, a zip, without the token.
    let url = format!(
        "{api}/repos/octo/demo/actions/runs/{}/attempts/1/logs",
        run.run.id
    );
    let redirect = get_with(&url, &[("Authorization", "Bearer secret")]).await;
    assert_eq!(redirect.status, 302);
    let location = redirect.header("location").unwrap().to_string();
    assert!(location.starts_with(&gh.log_host_url()), "{location}");
    let zip = get(&location).await;
    assert_eq!(zip.status, 200);
    assert_eq!(zip.header("content-type"), Some("application/zip"));
    assert!(zip.body.starts_with("PK\u{3}\u{4}"));
    let tampered = get(&location.replace("sig=", "sig=0")).await;
    assert_eq!(tampered.status, 403);
    let missing = get(&format!(
        "{api}/repos/octo/demo/actions/runs/{}/attempts/3/logs",
        run.run.id
    ))
    .await;
    assert_eq!(missing.status, 404);
    let blob = gh
        .requests()
        .into_iter()
        .find(|r| r.kind == RouteKind::ArchiveBlob)
        .unwrap();
    assert!(!blob.authorization);
    assert_eq!(gh.request_count(RouteKind::AttemptLogs), 2);
}
