//! `Ingest`, one run attempt into the store, through the library against the fake GitHub on
//! 127.0.0.1: what a webhook worker does with the runs GitHub announces. Run by run, it stores
//! what a survey of the same window stores; a run delivered again is not fetched again.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{FakeGitHub, Faults, RouteKind};
use flakestat::fetch::{
    Classifier, ClientConfig, GitHubClient, Ingest, Ingested, Session, SurveyPlan, parse_run,
};
use flakestat::model::{Classification, Repo, Run, SignatureId, SignatureMatch, Snapshot};
use flakestat::store::{Store, StoreHandle};

/// Tells logs apart by whether they carry the synthetic dataset's `FLAKE-MARKER`.
struct Marker;

impl Classifier for Marker {
    fn fingerprint(&self) -> String {
        "marker".to_string()
    }
    fn classify(&self, log: &[u8]) -> Classification {
        let marked = String::from_utf8_lossy(log).contains("FLAKE-MARKER");
        let matches = marked
            .then(|| SignatureMatch {
                signature: SignatureId("marker".into()),
                line: 1,
                lines: vec![1],
                text: "FLAKE-MARKER".into(),
                step: None,
                count: 1,
                tests: Default::default(),
            })
            .into_iter()
            .collect();
        Classification {
            matches,
            ..Default::default()
        }
    }
}

fn config(gh: &FakeGitHub) -> ClientConfig {
    let mut config = ClientConfig::new(gh.api_url(), Some("tok".to_string()));
    config.backoff_base = Duration::from_millis(5);
    config.max_reset_wait = Duration::from_secs(2);
    config
}

fn snapshot(store: &StoreHandle, spec: &SyntheticSpec) -> Snapshot {
    let until = spec.start + spec.spacing * spec.runs as i32;
    store
        .blocking(|s| s.load_snapshot(&spec.repo, spec.start, until, "marker"))
        .unwrap()
}

/// The runs as GitHub's JSON carries them (`GET …/actions/runs/{id}`, the object a
/// `workflow_run` webhook delivers), parsed as a webhook worker parses them.
fn fetch_runs(gh: &FakeGitHub, repo: &Repo, runs: &[Run]) -> Vec<Run> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = GitHubClient::new(config(gh), Arc::new(())).unwrap();
        let mut parsed = Vec::new();
        for run in runs {
            let url = client.url(&format!("/repos/{repo}/actions/runs/{}", run.id));
            let response = client.get(&url, None).await.unwrap();
            assert_eq!(response.status, 200, "{url}");
            parsed.push(parse_run(&url, &response.body).unwrap());
        }
        parsed
    })
}

/// Ingests each run with a new batch, returning what each call did.
fn ingest_each(gh: &FakeGitHub, store: &StoreHandle, repo: &Repo, runs: &[Run]) -> Vec<Ingested> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = Arc::new(GitHubClient::new(config(gh), Arc::new(())).unwrap());
        let ingest = Ingest::new(
            client,
            store.clone(),
            Arc::new(Marker),
            Arc::new(()),
            repo.clone(),
        );
        let mut done = Vec::new();
        for run in runs {
            done.push(ingest.ingest_run(run).await.unwrap());
        }
        done
    })
}

#[test]
fn runs_ingested_one_by_one_store_what_a_survey_stores_and_a_redelivery_fetches_nothing() {
    let spec = SyntheticSpec {
        runs: 30,
        ..SyntheticSpec::default()
    };
    let mut ds = synthetic(&spec);
    ds.auth.tokens = vec!["tok".into()];
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();

    // The survey of the window, into one store.
    let surveyed_dir = tempfile::tempdir().unwrap();
    let surveyed = StoreHandle::new(Store::open(surveyed_dir.path()).unwrap());
    let until = spec.start + spec.spacing * spec.runs as i32;
    let plan = SurveyPlan {
        repo: spec.repo.clone(),
        since: spec.start,
        until,
        workflows: vec![],
        branch: None,
        event: None,
        interruptible: false,
    };
    Session::new(config(&gh), Arc::new(()))
        .unwrap()
        .survey(surveyed.clone(), Arc::new(Marker), &plan, &|_, _| {
            BTreeSet::new()
        })
        .unwrap();
    let want = snapshot(&surveyed, &spec);
    assert!(want.logs.len() > 3, "the window has failed jobs' logs");

    // The same runs, each as a webhook delivers it (the run's JSON), into another store.
    let runs = fetch_runs(&gh, &spec.repo, &want.runs);
    assert_eq!(
        runs, want.runs,
        "GitHub's JSON parses into the run the listing gave"
    );
    let dir = tempfile::tempdir().unwrap();
    let store = StoreHandle::new(Store::open(dir.path()).unwrap());
    store
        .blocking(|s| s.store_repo_identity(&spec.repo, 1, &want.default_branch))
        .unwrap();
    gh.clear_requests();
    let first = ingest_each(&gh, &store, &spec.repo, &runs);
    assert!(first.iter().all(|i| i.jobs_fetched));
    let settled: u64 = first.iter().map(|i| i.logs_settled).sum();
    assert_eq!(
        settled,
        want.logs.len() as u64,
        "each failed job's log once"
    );
    let got = snapshot(&store, &spec);
    assert_eq!(got.runs, want.runs);
    assert_eq!(got.jobs, want.jobs);
    assert_eq!(got.logs, want.logs);
    assert_eq!(got.classifications, want.classifications);
    assert_eq!(gh.request_count(RouteKind::ListRuns), 0, "no listing");

    // Delivered again (GitHub redelivers): the store has every attempt, completed.
    gh.clear_requests();
    let again = ingest_each(&gh, &store, &spec.repo, &runs);
    assert!(again.iter().all(|i| *i == Ingested::default()), "{again:?}");
    assert!(gh.requests().is_empty(), "{:?}", gh.requests());
    assert_eq!(snapshot(&store, &spec), got);
}
