//! The fake as the real client sees it: octocrab 0.54.9 pages through `Link` headers and follows
//! the job-log redirect to the second listener, dropping the token on the cross-origin hop.
//! flakestat builds octocrab without its follow-redirect layer (it follows redirects itself, see
//! `fetch/client.rs`), so the hop is taken with octocrab's own `follow_location_to_data`.

use flakestat::fake::scenario::{SyntheticSpec, synthetic, synthetic_run_id};
use flakestat::fake::{FakeGitHub, Faults, Listener, RouteKind};
use http_body_util::BodyExt;

#[tokio::test]
async fn octocrab_pages_runs_and_fetches_a_log_without_leaking_the_token() {
    let mut ds = synthetic(&SyntheticSpec {
        runs: 25,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec!["tok".into()];
    let gh = FakeGitHub::start(ds, Faults::default()).await.unwrap();
    let octo = octocrab::Octocrab::builder()
        .base_uri(gh.api_url())
        .unwrap()
        .personal_token("tok".to_string())
        .build()
        .unwrap();

    let page: octocrab::Page<serde_json::Value> = octo
        .get("/repos/octo/demo/actions/runs", Some(&[("per_page", "10")]))
        .await
        .unwrap();
    assert_eq!(page.items.len(), 10);
    assert_eq!(page.total_count, Some(25));
    let all = octo.all_pages(page).await.unwrap();
    assert_eq!(all.len(), 25);
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
    let resp = octo
        ._get(format!(
            "{}/repos/octo/demo/actions/jobs/{job}/logs",
            gh.api_url()
        ))
        .await
        .unwrap();
    assert_eq!(resp.status(), 302);
    let resp = octo.follow_location_to_data(resp).await.unwrap();
    assert_eq!(resp.status(), 200);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("FLAKE-MARKER"), "{text}");
    let blob = gh
        .requests()
        .into_iter()
        .find(|r| r.kind == RouteKind::LogBlob)
        .expect("the client followed the redirect");
    assert_eq!(blob.listener, Listener::LogHost);
    assert!(!blob.authorization, "the token reached the log host");
}
