//! The survey against the fake GitHub on 127.0.0.1, through the library: every run past the
//! 1,000-result cap, every attempt, logs without the token on the log host, expired and missing
//! logs, faults, repeats and resumes.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeDelta, TimeZone, Utc};
use flakestat::fake::scenario::{SyntheticSpec, synthetic, synthetic_run_id};
use flakestat::fake::{Dataset, FakeAttempt, FakeGitHub, FakeLog, Faults, Listener, RouteKind};
use flakestat::fetch::{Classifier, ClientConfig, FetchError, Session, SurveyPlan};
use flakestat::model::{
    Classification, JobId, LogStatus, PrNumber, Repo, Run, SignatureId, SignatureMatch, Snapshot,
    Timestamp,
};
use flakestat::store::{Store, StoreHandle};

/// Finds `FLAKE-MARKER` lines, as the synthetic dataset's failing logs carry.
struct Marker(&'static str);

impl Classifier for Marker {
    fn fingerprint(&self) -> String {
        self.0.to_string()
    }
    fn classify(&self, log: &[u8]) -> Classification {
        let text = String::from_utf8_lossy(log);
        let lines: Vec<u64> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("FLAKE-MARKER"))
            .map(|(i, _)| i as u64 + 1)
            .collect();
        let matches = lines
            .first()
            .map(|&line| SignatureMatch {
                signature: SignatureId("marker".into()),
                line,
                lines: lines.clone(),
                text: "FLAKE-MARKER".into(),
                step: None,
                count: lines.len() as u64,
                tests: Default::default(),
            })
            .into_iter()
            .collect();
        Classification {
            matches,
            error_lines: vec![],
            ..Default::default()
        }
    }
}

fn spec(runs: usize) -> SyntheticSpec {
    SyntheticSpec {
        runs,
        ..SyntheticSpec::default()
    }
}

fn window(spec: &SyntheticSpec) -> (Timestamp, Timestamp) {
    (spec.start, spec.start + spec.spacing * spec.runs as i32)
}

fn config(gh: &FakeGitHub, token: Option<&str>) -> ClientConfig {
    let mut config = ClientConfig::new(gh.api_url(), token.map(String::from));
    config.backoff_base = Duration::from_millis(5);
    config.max_reset_wait = Duration::from_secs(2);
    config
}

struct Surveyed {
    result: Result<(), FetchError>,
    snapshot: Snapshot,
    store: StoreHandle,
}

fn survey_with(
    config: ClientConfig,
    dir: &std::path::Path,
    repo: &Repo,
    (since, until): (Timestamp, Timestamp),
) -> Surveyed {
    let store = StoreHandle::new(Store::open(dir).unwrap());
    let session = Session::new(config, Arc::new(())).unwrap();
    let plan = SurveyPlan {
        repo: repo.clone(),
        since,
        until,
        workflows: vec![],
        branch: None,
        event: None,
        interruptible: false,
    };
    let result = session
        .survey(store.clone(), Arc::new(Marker("m1")), &plan, &|_, _| {
            BTreeSet::new()
        })
        .map(drop);
    let snapshot = store
        .blocking(|s| s.load_snapshot(repo, since, until, "m1"))
        .unwrap();
    Surveyed {
        result,
        snapshot,
        store,
    }
}

fn survey(gh: &FakeGitHub, dir: &std::path::Path, spec: &SyntheticSpec) -> Surveyed {
    survey_with(config(gh, Some("tok")), dir, &spec.repo, window(spec))
}

fn start(ds: Dataset, faults: Faults) -> FakeGitHub {
    FakeGitHub::start_blocking(ds, faults).unwrap()
}

fn with_token(mut ds: Dataset) -> Dataset {
    ds.auth.tokens = vec!["tok".into()];
    ds
}

#[test]
fn collects_every_attempt_and_every_failed_log_without_leaking_the_token() {
    let spec = spec(40);
    let ds = with_token(synthetic(&spec));
    let gh = start(ds.clone(), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let s = survey(&gh, dir.path(), &spec);
    s.result.unwrap();

    assert_eq!(s.snapshot.runs.len(), 40);
    let want_jobs: BTreeSet<JobId> = ds.jobs().map(|j| j.id).collect();
    let got_jobs: BTreeSet<JobId> = s.snapshot.jobs.iter().map(|j| j.id).collect();
    assert_eq!(got_jobs, want_jobs, "the jobs of every attempt");
    // Run 10 was re-run to green: its failed first attempt is there.
    let rerun = synthetic_run_id(9);
    assert!(
        s.snapshot
            .jobs
            .iter()
            .any(|j| j.run_id == rerun && j.run_attempt == 1 && j.is_failed())
    );
    let failed: Vec<_> = s.snapshot.jobs.iter().filter(|j| j.is_failed()).collect();
    assert!(!failed.is_empty());
    for job in &failed {
        assert_eq!(s.snapshot.logs[&job.id], LogStatus::Stored, "{}", job.id);
        assert!(!s.snapshot.classifications[&job.id].is_unclassified());
    }

    let requests = gh.requests();
    let blobs: Vec<_> = requests
        .iter()
        .filter(|r| r.kind == RouteKind::LogBlob)
        .collect();
    assert_eq!(blobs.len(), failed.len(), "one download per failed job");
    assert!(blobs.iter().all(|r| r.listener == Listener::LogHost));
    assert!(
        blobs.iter().all(|r| !r.authorization),
        "the token reached the log host"
    );
    assert!(
        requests
            .iter()
            .filter(|r| r.listener == Listener::Api)
            .all(|r| r.authorization),
        "every API request carries the token"
    );
}

#[test]
fn no_run_is_lost_past_the_listing_cap() {
    let spec = SyntheticSpec {
        runs: 2500,
        jobs_per_run: 1,
        spacing: TimeDelta::minutes(1),
        // One failure (the last run), so the workflow's jobs are needed, all 2,500 runs'.
        fail_every: 2500,
        rerun_every: 0,
        ..SyntheticSpec::default()
    };
    let gh = start(synthetic(&spec), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let s = survey(&gh, dir.path(), &spec);
    s.result.unwrap();
    let ids: BTreeSet<_> = s.snapshot.runs.iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), 2500);
    assert_eq!(s.snapshot.jobs.len(), 2500);
    // Listing pages: at least the 25 needed, and splitting costs only a few more.
    let listings = gh.request_count(RouteKind::ListRuns);
    assert!((25..=40).contains(&listings), "{listings} listing requests");

    // A repeat starts from the windows that fitted: no splitting, every page a 304 or cheap.
    gh.clear_requests();
    let again = survey(&gh, dir.path(), &spec);
    again.result.unwrap();
    assert_eq!(again.snapshot, s.snapshot);
    assert_eq!(gh.request_count(RouteKind::ListJobs), 0);
    assert!(gh.request_count(RouteKind::ListRuns) <= 28);
}

#[test]
fn expired_and_missing_logs_are_recorded_not_errors() {
    let spec = spec(10);
    let mut ds = with_token(synthetic(&spec));
    let failed: Vec<JobId> = ds.jobs().filter(|j| j.is_failed()).map(|j| j.id).collect();
    assert!(failed.len() >= 2);
    ds.logs.insert(failed[0], FakeLog::Expired);
    ds.logs.insert(failed[1], FakeLog::Missing);
    let gh = start(ds, Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let s = survey(&gh, dir.path(), &spec);
    s.result.unwrap();
    assert_eq!(s.snapshot.logs[&failed[0]], LogStatus::Expired);
    assert_eq!(s.snapshot.logs[&failed[1]], LogStatus::Missing);
    assert!(!s.snapshot.classifications.contains_key(&failed[0]));

    // Settled: not asked again.
    gh.clear_requests();
    survey(&gh, dir.path(), &spec).result.unwrap();
    assert_eq!(gh.request_count(RouteKind::JobLog), 0);
}

#[test]
fn faults_change_nothing_in_the_result() {
    let spec = spec(60);
    let ds = with_token(synthetic(&spec));
    let clean = {
        let gh = start(ds.clone(), Faults::default());
        let dir = tempfile::tempdir().unwrap();
        let s = survey(&gh, dir.path(), &spec);
        s.result.unwrap();
        s.snapshot
    };
    let faults = Faults {
        error_every: Some(5),
        drop_every: Some(7),
        secondary_limit_every: Some(11),
        retry_after_secs: 0,
        ..Faults::default()
    };
    let gh = start(ds.clone(), faults.clone());
    let dir = tempfile::tempdir().unwrap();
    let s = survey(&gh, dir.path(), &spec);
    s.result.unwrap();
    assert_eq!(s.snapshot, clean);
    let statuses: BTreeSet<u16> = gh.requests().iter().map(|r| r.status).collect();
    assert!(
        statuses.contains(&502) && statuses.contains(&403),
        "faults were injected: {statuses:?}"
    );
    // The report is a function of the snapshot: the same too.
    let config = flakestat::analysis::AnalysisConfig::default();
    assert_eq!(
        flakestat::analysis::analyze(&s.snapshot, &[], &config),
        flakestat::analysis::analyze(&clean, &[], &config)
    );

    // Secondary limits answered 429, as GitHub also does.
    let gh = start(
        ds,
        Faults {
            secondary_limit_status: 429,
            ..faults
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let s = survey(&gh, dir.path(), &spec);
    s.result.unwrap();
    assert_eq!(s.snapshot, clean);
    assert!(gh.requests().iter().any(|r| r.status == 429));
}

#[test]
fn a_near_reset_is_waited_for() {
    let spec = spec(30);
    let ds = with_token(synthetic(&spec));
    let gh = start(
        ds,
        Faults {
            rate_limit: Some(15),
            rate_limit_window: Duration::from_secs(1),
            rate_limit_status: 429,
            ..Faults::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&gh, Some("tok"));
    config.max_reset_wait = Duration::from_secs(30);
    let s = survey_with(config, dir.path(), &spec.repo, window(&spec));
    s.result.unwrap();
    assert_eq!(s.snapshot.runs.len(), 30);
    assert!(
        gh.requests().iter().any(|r| r.status == 429),
        "the budget ran out at least once"
    );
}

#[test]
fn a_repeat_asks_only_for_what_can_have_changed() {
    let spec = spec(30);
    let gh = start(with_token(synthetic(&spec)), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let first = survey(&gh, dir.path(), &spec);
    first.result.unwrap();

    gh.clear_requests();
    let second = survey(&gh, dir.path(), &spec);
    second.result.unwrap();
    assert_eq!(second.snapshot, first.snapshot);
    let counts = gh.request_counts();
    assert_eq!(counts.get(&RouteKind::ListJobs), None, "{counts:?}");
    assert_eq!(counts.get(&RouteKind::JobLog), None, "{counts:?}");
    assert_eq!(counts.get(&RouteKind::LogBlob), None, "{counts:?}");

    // A day later: run 3 was re-run and failed again. Only its jobs and its new log are fetched.
    let run = synthetic_run_id(2);
    let template = gh.dataset().run(run).unwrap().attempts[0].clone();
    let job = JobId(template.jobs[0].id.0 + 100);
    let mut jobs = template.jobs.clone();
    for (k, j) in jobs.iter_mut().enumerate() {
        j.id = JobId(j.id.0 + 100);
        j.run_attempt = 2;
        j.conclusion = Some(if k == 0 { "failure" } else { "success" }.into());
    }
    assert!(gh.push_attempt(
        run,
        FakeAttempt {
            attempt: 2,
            created_at: template.created_at + TimeDelta::hours(1),
            conclusion: Some("failure".into()),
            jobs,
        }
    ));
    gh.set_log(
        job,
        FakeLog::Text("2026-06-01T00:00:00.0000000Z FLAKE-MARKER again\n".into()),
    );
    gh.clear_requests();
    let third = survey(&gh, dir.path(), &spec);
    third.result.unwrap();
    let counts = gh.request_counts();
    assert_eq!(counts.get(&RouteKind::ListJobs), Some(&1), "{counts:?}");
    assert_eq!(counts.get(&RouteKind::JobLog), Some(&1), "{counts:?}");
    assert_eq!(third.snapshot.logs[&job], LogStatus::Stored);
    assert!(third.snapshot.jobs.iter().any(|j| j.id == job));
}

#[test]
fn a_spent_rate_limit_stops_cleanly_and_the_next_survey_resumes() {
    let spec = spec(50);
    let ds = with_token(synthetic(&spec));
    let clean = {
        let gh = start(ds.clone(), Faults::default());
        let dir = tempfile::tempdir().unwrap();
        survey(&gh, dir.path(), &spec).snapshot
    };
    let gh = start(
        ds,
        Faults {
            rate_limit: Some(25),
            ..Faults::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let stopped = survey(&gh, dir.path(), &spec);
    assert!(
        matches!(stopped.result, Err(FetchError::RateLimited { .. })),
        "{:?}",
        stopped.result
    );
    // Partial: runs not listed, runs without their jobs, or failed jobs without their log (a
    // stop finishes the downloads under way, so the last alone is not certain).
    assert!(
        stopped.snapshot.runs.len() < 50
            || !stopped.snapshot.runs_without_jobs.is_empty()
            || stopped
                .snapshot
                .logs
                .values()
                .any(|s| *s == LogStatus::Pending)
    );
    drop(stopped);

    gh.set_faults(Faults::default());
    let resumed = survey(&gh, dir.path(), &spec);
    resumed.result.unwrap();
    assert_eq!(resumed.snapshot, clean);
}

#[test]
fn changed_signatures_reclassify_stored_logs_without_downloads() {
    let spec = spec(20);
    let gh = start(with_token(synthetic(&spec)), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let first = survey(&gh, dir.path(), &spec);
    first.result.unwrap();
    gh.clear_requests();
    let store = first.store;
    let n = flakestat::fetch::reclassify_stored(&store, &spec.repo, &Marker("m2")).unwrap();
    assert_eq!(n as usize, first.snapshot.classifications.len());
    let (since, until) = window(&spec);
    let snap = store
        .blocking(|s| s.load_snapshot(&spec.repo, since, until, "m2"))
        .unwrap();
    assert_eq!(snap.classifications, first.snapshot.classifications);
    assert!(gh.requests().is_empty());
}

#[test]
fn an_unknown_repository_is_not_found() {
    let spec = spec(3);
    let gh = start(synthetic(&spec), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let other = Repo::parse("octo/nope").unwrap();
    let s = survey_with(config(&gh, None), dir.path(), &other, window(&spec));
    assert!(
        matches!(s.result, Err(FetchError::NotFound(_))),
        "{:?}",
        s.result
    );
}

#[test]
fn a_bad_token_is_unauthorized() {
    let spec = spec(3);
    let gh = start(with_token(synthetic(&spec)), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let s = survey_with(
        config(&gh, Some("wrong")),
        dir.path(),
        &spec.repo,
        window(&spec),
    );
    assert!(
        matches!(s.result, Err(FetchError::Unauthorized { status: 401, .. })),
        "{:?}",
        s.result
    );
}

#[test]
fn an_unreachable_host_is_a_network_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = ClientConfig::new(format!("http://127.0.0.1:{port}"), None);
    config.backoff_base = Duration::from_millis(1);
    config.max_retries = 2;
    let dir = tempfile::tempdir().unwrap();
    let store = StoreHandle::new(Store::open(dir.path()).unwrap());
    let session = Session::new(config, Arc::new(())).unwrap();
    let t = Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap();
    let plan = SurveyPlan {
        repo: Repo::parse("octo/demo").unwrap(),
        since: t,
        until: t + TimeDelta::days(1),
        workflows: vec![],
        branch: None,
        event: None,
        interruptible: false,
    };
    let result = session.survey(store, Arc::new(Marker("m")), &plan, &|_, _| BTreeSet::new());
    assert!(matches!(result, Err(FetchError::Network(_))), "{result:?}");
}

fn pull(
    number: u64,
    updated: Timestamp,
    merged: bool,
    files: &[&str],
) -> flakestat::fake::FakePull {
    use flakestat::fake::{FakeFile, FakePull};
    use flakestat::model::Sha;
    FakePull {
        number,
        title: format!("PR {number}"),
        state: "closed".into(),
        user: "octocat".into(),
        base_ref: "main".into(),
        head_ref: format!("feature-{number}"),
        head_sha: Sha("c".repeat(40)),
        base_sha: Sha("d".repeat(40)),
        created_at: updated - TimeDelta::days(1),
        updated_at: updated,
        closed_at: Some(updated),
        merged_at: merged.then_some(updated),
        merge_commit_sha: merged.then(|| Sha("e".repeat(40))),
        draft: false,
        locked: false,
        head_repo: None,
        files: files
            .iter()
            .map(|f| FakeFile {
                filename: f.to_string(),
                status: "modified".into(),
                previous_filename: None,
                additions: 1,
                deletions: 1,
            })
            .collect(),
    }
}

#[test]
fn merged_pulls_are_kept_and_files_fetched_only_for_prs_with_hits() {
    let spec = spec(20);
    let mut ds = with_token(synthetic(&spec));
    let (since, until) = window(&spec);
    // Run 5 fails with the marker on a mirrored PR branch; run 6 is green on another PR branch.
    ds.run_mut(synthetic_run_id(4)).unwrap().run.head_branch = Some("pull-request/7".into());
    ds.run_mut(synthetic_run_id(5)).unwrap().run.head_branch = Some("pull-request/8".into());
    ds.pulls = vec![
        pull(5, since + TimeDelta::hours(2), true, &["docs/a.md"]),
        pull(6, since - TimeDelta::days(30), true, &["old.py"]),
        pull(7, since + TimeDelta::hours(3), false, &["cuda/core.py"]),
        pull(8, since + TimeDelta::hours(4), false, &["other.py"]),
    ];
    ds.pulls[2].state = "open".into();
    ds.pulls[3].state = "open".into();
    let gh = start(ds, Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let store = StoreHandle::new(Store::open(dir.path()).unwrap());
    let session = Session::new(config(&gh, Some("tok")), Arc::new(())).unwrap();
    let plan = SurveyPlan {
        repo: spec.repo.clone(),
        since,
        until,
        workflows: vec![],
        branch: None,
        event: None,
        interruptible: false,
    };
    // The caller's policy: PRs named by the branch of a run with a hit.
    let wanted = |runs: &[Run], _default_branch: &str| -> BTreeSet<PrNumber> {
        runs.iter()
            .filter_map(|r| {
                r.head_branch
                    .as_deref()?
                    .strip_prefix("pull-request/")?
                    .parse()
                    .ok()
                    .map(PrNumber)
            })
            .collect()
    };
    let summary = session
        .survey(store.clone(), Arc::new(Marker("m1")), &plan, &wanted)
        .unwrap();
    assert_eq!(summary.pulls_files_fetched, 1);
    let snap = store
        .blocking(|s| s.load_snapshot(&spec.repo, since, until, "m1"))
        .unwrap();
    assert_eq!(snap.default_branch, "main");
    let merged = &snap.pulls[&PrNumber(5)];
    assert_eq!(merged.merged_at, Some(since + TimeDelta::hours(2)));
    assert!(merged.merge_commit_sha.is_some());
    assert_eq!(merged.files, None, "no hit, no files");
    assert!(
        !snap.pulls.contains_key(&PrNumber(6)),
        "older than the lookback"
    );
    assert_eq!(
        snap.pulls[&PrNumber(7)].files,
        Some(vec!["cuda/core.py".to_string()])
    );
    assert!(
        !snap.pulls.contains_key(&PrNumber(8)),
        "no hit: not fetched"
    );
    assert_eq!(gh.request_count(RouteKind::PullFiles), 1);
    // PR data comes from listings: no `GET /pulls/{n}`, even for the open PR no listing
    // returned (stored with its number, link and files).
    assert_eq!(gh.request_count(RouteKind::Pull), 0);
    assert!(
        snap.pulls[&PrNumber(7)].html_url.ends_with("/pull/7"),
        "{:?}",
        snap.pulls[&PrNumber(7)]
    );

    // Files are cached: a repeat does not ask again.
    gh.clear_requests();
    session
        .survey(store, Arc::new(Marker("m1")), &plan, &wanted)
        .unwrap();
    assert_eq!(gh.request_count(RouteKind::PullFiles), 0);
    assert_eq!(gh.request_count(RouteKind::Pull), 0);
}

#[test]
fn workflow_and_event_filters_pick_their_runs() {
    let spec = spec(20);
    let gh = start(synthetic(&spec), Faults::default());
    let (since, until) = window(&spec);
    let run_with = |workflows: Vec<String>, event: Option<&str>| -> Result<Vec<_>, FetchError> {
        let dir = tempfile::tempdir().unwrap();
        let store = StoreHandle::new(Store::open(dir.path()).unwrap());
        let session = Session::new(config(&gh, None), Arc::new(())).unwrap();
        let plan = SurveyPlan {
            repo: spec.repo.clone(),
            since,
            until,
            workflows,
            branch: Some("main".into()),
            event: event.map(String::from),
            interruptible: false,
        };
        session.survey(store.clone(), Arc::new(Marker("m")), &plan, &|_, _| {
            BTreeSet::new()
        })?;
        let snap = store
            .blocking(|s| s.load_snapshot(&spec.repo, since, until, "m"))
            .unwrap();
        Ok(snap.runs)
    };
    let pushes = run_with(vec!["ci.yml".into()], Some("push")).unwrap();
    assert_eq!(pushes.len(), 10);
    assert!(pushes.iter().all(|r| r.event == "push".into()));
    // A workflow's name is looked up (`/actions/workflows`), case-insensitively.
    assert_eq!(run_with(vec!["ci".into()], None).unwrap().len(), 20);
    let err = run_with(vec!["Nightly".into()], None).unwrap_err();
    assert!(
        matches!(&err, FetchError::NotFound(m) if m.contains("Nightly") && m.contains("CI")),
        "{err:?}"
    );
    let err = run_with(vec!["other.yml".into()], None).unwrap_err();
    assert!(
        matches!(&err, FetchError::NotFound(m) if m.contains("other.yml")),
        "{err:?}"
    );
    let requests = gh.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.path.contains("/actions/workflows/ci.yml/runs")),
        "the per-workflow route"
    );
}

#[test]
fn jobs_of_a_large_matrix_are_paged() {
    // Re-run matrices of 60 jobs: two attempts, 120 jobs, two pages of 100 per run. (The
    // synthetic job ids collide past 100 jobs per attempt.)
    let spec = SyntheticSpec {
        runs: 2,
        jobs_per_run: 60,
        fail_every: 0,
        rerun_every: 1,
        ..SyntheticSpec::default()
    };
    let ds = synthetic(&spec);
    let gh = start(ds.clone(), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let s = survey(&gh, dir.path(), &spec);
    s.result.unwrap();
    assert_eq!(s.snapshot.jobs.len(), ds.jobs().count());
    assert_eq!(s.snapshot.jobs.len(), 240);
    let pages: usize = ds
        .runs
        .iter()
        .map(|r| r.all_jobs().len().div_ceil(100))
        .sum();
    assert_eq!(pages, 4);
    assert_eq!(gh.request_count(RouteKind::ListJobs), pages);
}
