//! Several `flakestat serve` replicas on one PostgreSQL store (issue 42 §6): each worker claims
//! the run attempt it ingests, so a burst of deliveries, each attempt delivered to both
//! replicas, is drained with every attempt ingested once, as the fake GitHub's request log
//! shows.
//!
//! The server comes from `FLAKESTAT_TEST_POSTGRES` (`.ci/postgres.sh start`); without it the
//! test says it skipped.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common::{self, signatures, story_dir};
use crate::serve::{Serve, completed_run, failed_story_runs};
use flakestat::fake::{Dataset, FakeGitHub, Faults, Listener, RouteKind};
use flakestat::store::postgres::fresh_schema_url;

/// Two replicas, one store, one fake GitHub (each request a little slow, so the two workers'
/// ingests overlap): every failed run attempt of the burst is delivered to both, under two
/// delivery ids (a repository's hook and an organization's, as GitHub sends them), the first
/// replica's delivery first. Each attempt's jobs are listed once in all, its repository and run
/// asked once each, and the two replicas' ingests add up to one per attempt.
#[test]
fn two_replicas_on_one_postgres_store_ingest_each_attempt_once() {
    let Ok(base) = std::env::var("FLAKESTAT_TEST_POSTGRES") else {
        common::skips::skipped(
            common::skips::Need::Postgres,
            "two_replicas_on_one_postgres_store_ingest_each_attempt_once: \
             FLAKESTAT_TEST_POSTGRES is not set: skipped (.ci/postgres.sh start)",
        );
        return;
    };
    let url = fresh_schema_url(&base).unwrap();
    let gh = FakeGitHub::start_blocking(
        Dataset::load(&story_dir()).unwrap(),
        Faults {
            latency: Duration::from_millis(20),
            ..Faults::default()
        },
    )
    .unwrap();
    let api = gh.api_url();
    let sigs = signatures();
    let dir = tempfile::tempdir().unwrap();
    let replica = |name: &str| {
        let home = dir.path().join(name);
        std::fs::create_dir(&home).unwrap();
        Serve::start(
            &home,
            &[
                "--repo",
                "NVIDIA/cuda-python",
                "--store",
                &url,
                "--signatures",
                sigs.to_str().unwrap(),
                "--api-url",
                &api,
                "--resync",
                "0",
            ],
        )
    };
    let (one, two) = (replica("one"), replica("two"));

    let runs = failed_story_runs(12);
    for (i, (id, created)) in runs.iter().enumerate() {
        let body = completed_run(*id, created);
        let (status, answer) = one.deliver("workflow_run", &format!("repo-hook-{i}"), &body, None);
        assert_eq!(status, 202, "{answer}");
        // 202, or 200 "already ingested" when the first replica was that quick.
        let (status, answer) = two.deliver("workflow_run", &format!("org-hook-{i}"), &body, None);
        assert!(status == 202 || status == 200, "{status} {answer}");
    }
    let done = |s: &Serve| s.metric("flakestat_ingests_total{outcome=\"done\"}");
    one.wait_until("the burst ingested", |one| {
        one.metric("flakestat_queue_depth") == 0 && done(one) + done(&two) >= runs.len() as u64
    });
    let ingests = (done(&one), done(&two));
    let (code, stderr_one) = one.stop();
    assert_eq!(code, 0, "{stderr_one}");
    let (code, stderr_two) = two.stop();
    assert_eq!(code, 0, "{stderr_two}");
    assert_eq!(
        ingests.0 + ingests.1,
        runs.len() as u64,
        "one ingest per attempt in all: {ingests:?}\n{stderr_one}\n{stderr_two}"
    );

    // Each attempt's jobs listed once, and each run read once, whichever replica asked.
    let mut asked: BTreeMap<(RouteKind, String), usize> = BTreeMap::new();
    for r in gh.requests() {
        if r.listener == Listener::Api
            && matches!(
                r.kind,
                RouteKind::AttemptJobs | RouteKind::ListJobs | RouteKind::Run
            )
        {
            let path = r.path.split('?').next().unwrap_or("").to_string();
            *asked.entry((r.kind, path)).or_default() += 1;
        }
    }
    let twice: Vec<_> = asked.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "asked more than once: {twice:#?}");
    for (id, _) in &runs {
        let jobs = asked
            .keys()
            .filter(|(kind, path)| {
                matches!(kind, RouteKind::AttemptJobs | RouteKind::ListJobs)
                    && path.contains(&format!("/runs/{id}/"))
            })
            .count();
        assert_eq!(jobs, 1, "run {id}'s jobs listed once: {asked:#?}");
    }
}
