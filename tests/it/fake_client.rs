//! The fake as the real client sees it: flakestat's `GitHubClient` (its own transport over
//! hyper, no GitHub library in between) pages through the fake's `Link` headers with the token
//! on every page, and follows the job-log redirect to the fake's second listener, dropping the
//! token on the cross-origin hop. Before the transport was flakestat's own, this was checked
//! with octocrab's client; the assertions are the same.

use std::sync::Arc;

use flakestat::fake::scenario::{SyntheticSpec, synthetic, synthetic_run_id};
use flakestat::fake::{FakeGitHub, Faults, Listener, RouteKind};
use flakestat::fetch::{ClientConfig, GitHubClient};

#[tokio::test]
async fn the_client_pages_runs_and_fetches_a_log_without_leaking_the_token() {
    let mut ds = synthetic(&SyntheticSpec {
        runs: 25,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec!["tok".into()];
    let gh = FakeGitHub::start(ds, Faults::default()).await.unwrap();
    let client = GitHubClient::new(
        ClientConfig::new(gh.api_url(), Some("tok".to_string())),
        Arc::new(()),
    )
    .unwrap();

    let mut url = Some(client.url("/repos/octo/demo/actions/runs?per_page=10"));
    let mut pages = Vec::new();
    while let Some(next) = url {
        let response = client.get(&next, None).await.unwrap();
        assert_eq!(response.status, 200, "{}", response.message());
        let page: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
        url = response.next_link();
        pages.push(page);
    }
    assert_eq!(pages[0]["workflow_runs"].as_array().unwrap().len(), 10);
    assert_eq!(pages[0]["total_count"], 25);
    let all: usize = pages
        .iter()
        .map(|p| p["workflow_runs"].as_array().unwrap().len())
        .sum();
    assert_eq!(all, 25);
    let listings: Vec<_> = gh
        .requests()
        .into_iter()
        .filter(|r| r.kind == RouteKind::ListRuns)
        .collect();
    assert_eq!(listings.len(), 3);
    assert!(
        listings.iter().all(|r| r.authorization && r.status == 200),
        "every page carried the token: {listings:?}"
    );

    let job = gh.dataset().run(synthetic_run_id(4)).unwrap().attempts[0].jobs[0].id;
    let logs = client.url(&format!("/repos/octo/demo/actions/jobs/{job}/logs"));
    let redirect = gh
        .requests()
        .into_iter()
        .filter(|r| r.kind == RouteKind::JobLog)
        .count();
    assert_eq!(redirect, 0);
    let blob = client.fetch_blob(&logs, "the job's log").await.unwrap();
    assert_eq!(blob.response.status, 200);
    assert!(blob.spooled.is_none() && !blob.truncated);
    let text = String::from_utf8_lossy(&blob.response.body);
    assert!(text.contains("FLAKE-MARKER"), "{text}");
    let requests = gh.requests();
    let api_hop = requests
        .iter()
        .find(|r| r.kind == RouteKind::JobLog)
        .expect("the client asked the API for the log");
    assert_eq!(api_hop.status, 302);
    assert!(api_hop.authorization, "the API hop carried the token");
    let blob = requests
        .iter()
        .find(|r| r.kind == RouteKind::LogBlob)
        .expect("the client followed the redirect");
    assert_eq!(blob.listener, Listener::LogHost);
    assert!(!blob.authorization, "the token reached the log host");
}

/// GitHub Enterprise Server roots its API at `/api/v3`; the hop to the log host is that host's
/// own URL, with nothing of the API root's path put in front (octocrab's base-URI layer put
/// `/api/v3` before every path that lacked it, the log host's included).
#[tokio::test]
async fn an_api_root_with_a_path_leaves_the_log_hosts_path_alone() {
    let mut ds = synthetic(&SyntheticSpec {
        runs: 2,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec!["tok".into()];
    let gh = FakeGitHub::start(ds, Faults::default()).await.unwrap();
    let root = format!("{}/api/v3", gh.api_url());
    let client = GitHubClient::new(
        ClientConfig::new(root.clone(), Some("tok".into())),
        Arc::new(()),
    )
    .unwrap();
    let job = gh.dataset().run(synthetic_run_id(1)).unwrap().attempts[0].jobs[0].id;
    let logs = client.url(&format!("/repos/octo/demo/actions/jobs/{job}/logs"));
    assert!(logs.starts_with(&root), "{logs}");
    let blob = client.fetch_blob(&logs, "the job's log").await.unwrap();
    assert_eq!(blob.response.status, 200, "{}", blob.response.message());
    let requests = gh.requests();
    let api_hop = requests
        .iter()
        .find(|r| r.kind == RouteKind::JobLog)
        .unwrap();
    assert!(api_hop.path.starts_with("/api/v3/repos/"), "{api_hop:?}");
    let hop = requests
        .iter()
        .find(|r| r.kind == RouteKind::LogBlob)
        .expect("the client followed the redirect");
    assert_eq!(hop.listener, Listener::LogHost);
    assert!(hop.path.starts_with(&format!("/logs/{job}?")), "{hop:?}");
    assert!(!hop.authorization);
}
