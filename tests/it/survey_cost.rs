//! What a survey asks GitHub on a busy repository, and that asking less changes no figure: the
//! bundled story with a PR labeler making 70 % of the runs (all green) gives the same report,
//! lists the same jobs, and a store that also holds the labeler's jobs analyzes the same.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use crate::common::{self, story_dir};
use flakestat::analysis::{AnalysisConfig, analyze};
use flakestat::fake::{BOT_WORKFLOW_ID, Dataset, FakeGitHub, Faults, RouteKind};
use flakestat::fetch::{ClientConfig, Session, SurveyPlan};
use flakestat::model::{PrNumber, Repo, RunId, Timestamp};
use flakestat::signatures::SignatureSet;
use flakestat::signatures::load::load_bundled;
use flakestat::store::{Store, StoreHandle};

/// The bundled scenario with `bot_workflow = true`, in a temporary folder.
fn story_with_bot(dir: &Path) -> PathBuf {
    common::story_with(dir, "bot_workflow = true\n")
}

fn survey_replay(story: &Path, cache: &Path, out: &Path) -> Output {
    common::ok(
        common::flakestat()
            .args([
                "survey",
                "-v",
                "--repo",
                "NVIDIA/cuda-python",
                "--since",
                "2026-06-15",
            ])
            .arg("--replay")
            .arg(story)
            .args(["--format", "json", "--output"])
            .arg(out)
            .arg("--cache-dir")
            .arg(cache)
            .arg("--signatures")
            .arg(common::signatures())
            .output()
            .expect("the binary runs"),
    )
}

/// `(made, minimum)` of one kind from the `-v` line `survey requests against the minimum: …`.
fn cost_of(stderr: &str, kind: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains("requests against the minimum"))
        .unwrap_or_else(|| panic!("no cost line in {stderr}"));
    let at = line.find(&format!(" {kind} ")).unwrap() + kind.len() + 2;
    let figure: String = line[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '/')
        .collect();
    let (made, min) = figure.split_once('/').unwrap();
    (made.parse().unwrap(), min.parse().unwrap())
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_bot_workflow_changes_no_figure_and_costs_no_jobs_request() {
    let dir = tempfile::tempdir().unwrap();
    let plain_out = dir.path().join("plain.json");
    let bot_out = dir.path().join("bot.json");
    let plain = survey_replay(&story_dir(), &dir.path().join("c1"), &plain_out);
    let bot = survey_replay(
        &story_with_bot(dir.path()),
        &dir.path().join("c2"),
        &bot_out,
    );
    let (plain, bot) = (
        String::from_utf8_lossy(&plain.stderr).to_string(),
        String::from_utf8_lossy(&bot.stderr).to_string(),
    );
    let (a, b) = (json(&plain_out), json(&bot_out));

    // The labeler's runs count as runs, 70 % of them, and nothing else changes.
    let (runs_a, runs_b) = (
        a["runs_total"].as_u64().unwrap(),
        b["runs_total"].as_u64().unwrap(),
    );
    let bots = runs_b - runs_a;
    assert!(
        bots * 100 >= runs_b * 69 && bots * 100 <= runs_b * 71,
        "{bots} of {runs_b}"
    );
    assert!(!a["signatures"].as_array().unwrap().is_empty());
    assert_eq!(
        a["signatures"], b["signatures"],
        "every signature's figures"
    );
    for figure in ["runs_failed", "jobs_failed", "jobs_unclassified"] {
        assert_eq!(a[figure], b[figure], "{figure}");
    }

    // The same jobs and logs requests as without the labeler, each at its minimum; its runs
    // cost only run-list pages.
    for kind in ["jobs", "logs"] {
        assert_eq!(cost_of(&plain, kind), cost_of(&bot, kind), "{kind}");
        let (made, min) = cost_of(&bot, kind);
        assert_eq!(made, min, "{kind}");
    }
    let (list_made, list_min) = cost_of(&bot, "run list");
    assert_eq!(list_made, list_min, "run list pages");
    assert!(list_min >= runs_b.div_ceil(100));
    assert!(
        bot.contains(&format!("jobs of {bots} runs not needed")),
        "{bot}"
    );
}

/// Surveys `[since, until)` of `repo` from `gh` into a store in `cache`, through the library as
/// the CLI does, with the bundled signatures.
fn survey_into(
    gh: &FakeGitHub,
    cache: &Path,
    repo: &Repo,
    since: Timestamp,
    until: Timestamp,
) -> (StoreHandle, Arc<SignatureSet>) {
    let store = StoreHandle::new(Store::open(cache).unwrap());
    let set = Arc::new(SignatureSet::compile(load_bundled()).unwrap());
    let session = Session::new(ClientConfig::new(gh.api_url(), None), Arc::new(())).unwrap();
    let plan = SurveyPlan {
        repo: repo.clone(),
        since,
        until,
        workflows: vec![],
        branch: None,
        event: None,
        interruptible: false,
    };
    session
        .survey(store.clone(), set.clone(), &plan, &|_, _| BTreeSet::new())
        .unwrap();
    (store, set)
}

/// Serves `ds` and surveys the story's repository from `since()` to the dataset's now.
fn survey(ds: Dataset, cache: &Path) -> (FakeGitHub, StoreHandle, Arc<SignatureSet>) {
    let until = ds.now;
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let (store, set) = survey_into(&gh, cache, &repo(), since(), until);
    (gh, store, set)
}

fn repo() -> Repo {
    Repo {
        owner: "NVIDIA".into(),
        name: "cuda-python".into(),
    }
}

fn since() -> Timestamp {
    chrono::DateTime::parse_from_rfc3339("2026-06-15T00:00:00Z")
        .unwrap()
        .to_utc()
}

#[test]
fn the_report_is_the_same_with_and_without_the_bot_workflow_s_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let ds = Dataset::load(&story_with_bot(dir.path())).unwrap();
    let bot_runs: BTreeSet<RunId> = ds
        .runs
        .iter()
        .filter(|r| r.run.workflow_id.0 == BOT_WORKFLOW_ID)
        // The ones the survey window lists.
        .filter(|r| r.run.created_at >= since() && r.run.created_at < ds.now)
        .map(|r| r.run.id)
        .collect();
    assert!(!bot_runs.is_empty());
    let (gh, store, set) = survey(ds.clone(), dir.path());

    // No jobs request for any of the labeler's runs.
    let asked: Vec<String> = gh
        .requests()
        .into_iter()
        .filter(|r| r.kind == RouteKind::ListJobs)
        .map(|r| r.path)
        .collect();
    assert!(!asked.is_empty());
    for id in &bot_runs {
        let needle = format!("/actions/runs/{id}/");
        assert!(!asked.iter().any(|p| p.contains(&needle)), "{needle}");
    }

    let config = AnalysisConfig::default();
    let load = |store: &StoreHandle| {
        store
            .blocking(|s| s.load_snapshot(&repo(), since(), ds.now, &set.fingerprint()))
            .unwrap()
    };
    let without = load(&store);
    let without_report = analyze(&without, &set.info(), &config);

    // The same store, now holding the labeler's jobs too, as a survey that listed them would.
    for fake in ds.runs.iter().filter(|r| bot_runs.contains(&r.run.id)) {
        let jobs: Vec<_> = fake.all_jobs().into_iter().cloned().collect();
        store
            .blocking(|s| s.store_jobs(fake.run.id, fake.run.run_attempt, true, &jobs))
            .unwrap();
    }
    let with = load(&store);
    assert!(with.jobs.len() > without.jobs.len(), "the jobs were added");
    let with_report = analyze(&with, &set.info(), &config);
    assert!(!with_report.signatures.is_empty());
    assert_eq!(with_report, without_report);
}

fn synthetic_survey(
    gh: &FakeGitHub,
    cache: &Path,
    repo: &Repo,
    since: Timestamp,
    until: Timestamp,
) -> flakestat::model::Snapshot {
    let (store, set) = survey_into(gh, cache, repo, since, until);
    store
        .blocking(|s| s.load_snapshot(repo, since, until, &set.fingerprint()))
        .unwrap()
}

fn jobs_asked(gh: &FakeGitHub) -> Vec<RunId> {
    gh.requests()
        .into_iter()
        .filter(|r| r.kind == RouteKind::ListJobs)
        .filter_map(|r| {
            let rest = r.path.split("/actions/runs/").nth(1)?;
            rest.split('/').next()?.parse().ok().map(RunId)
        })
        .collect()
}

#[test]
fn a_later_survey_that_finds_a_failure_fetches_the_jobs_then_and_only_those_needed() {
    use flakestat::fake::scenario::{SyntheticSpec, synthetic};
    // 40 runs an hour apart; only run 30 (1-based) fails.
    let spec = SyntheticSpec {
        runs: 40,
        fail_every: 30,
        rerun_every: 0,
        ..SyntheticSpec::default()
    };
    let ds = synthetic(&spec);
    let at = |i: i32| spec.start + spec.spacing * i;
    let gh = FakeGitHub::start_blocking(ds.clone(), Faults::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();

    // Runs 0..20: all green, so no jobs are asked for; the runs are stored.
    let first = synthetic_survey(&gh, dir.path(), &spec.repo, at(0), at(20));
    assert_eq!(first.runs.len(), 20);
    assert!(first.jobs.is_empty());
    assert!(jobs_asked(&gh).is_empty());

    // Runs 10..40 hold the failure: the jobs of exactly those 30 runs, once each.
    gh.clear_requests();
    let second = synthetic_survey(&gh, dir.path(), &spec.repo, at(10), at(40));
    let asked = jobs_asked(&gh);
    let expected: BTreeSet<RunId> = ds
        .runs
        .iter()
        .filter(|r| r.run.created_at >= at(10))
        .map(|r| r.run.id)
        .collect();
    assert_eq!(asked.len(), 30);
    assert_eq!(asked.iter().copied().collect::<BTreeSet<_>>(), expected);
    assert_eq!(
        second
            .jobs
            .iter()
            .filter(|j| j.is_failed())
            .map(|j| j.run_id)
            .collect::<Vec<_>>()
            .len(),
        1
    );

    // A repeat asks for no jobs at all.
    gh.clear_requests();
    synthetic_survey(&gh, dir.path(), &spec.repo, at(10), at(40));
    assert!(jobs_asked(&gh).is_empty());
}

#[test]
fn a_window_over_the_cap_costs_its_pages_and_loses_no_run_cut_at_a_shared_second() {
    use flakestat::fake::scenario::{SyntheticSpec, synthetic};
    // 1,500 runs, three per second: the newest 1,000 end in the middle of a second.
    let spec = SyntheticSpec {
        runs: 1500,
        jobs_per_run: 1,
        fail_every: 0,
        rerun_every: 0,
        ..SyntheticSpec::default()
    };
    let mut ds = synthetic(&spec);
    for (i, fake) in ds.runs.iter_mut().enumerate() {
        fake.run.created_at = spec.start + chrono::TimeDelta::seconds(i as i64 / 3);
    }
    let until = spec.start + chrono::TimeDelta::seconds(600);
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let snap = synthetic_survey(&gh, dir.path(), &spec.repo, spec.start, until);
    assert_eq!(snap.runs.len(), 1500, "no run lost");
    // 10 pages for the newest 1,000, 5 for the 498 older, 1 for the second they shared.
    assert_eq!(gh.request_count(RouteKind::ListRuns), 16);

    // A repeat lists the same pages, every one answered 304.
    gh.clear_requests();
    let again = synthetic_survey(&gh, dir.path(), &spec.repo, spec.start, until);
    assert_eq!(again.runs.len(), 1500);
    let lists: Vec<u16> = gh
        .requests()
        .into_iter()
        .filter(|r| r.kind == RouteKind::ListRuns)
        .map(|r| r.status)
        .collect();
    assert_eq!(lists.len(), 16);
    assert!(lists.iter().all(|s| *s == 304), "{lists:?}");
}

/// A busy repository's synthetic months with fork PRs (issue #11, item 5): 300 CI runs four
/// hours apart, 60 % of them PR runs (one per PR), a fifth of the PRs from forks whose runs
/// name no PR, half of those left open; every 5th CI run fails with the synthetic flake, which
/// `benches/survey-signatures` knows, so the relevance of their PRs is read; a PR labeler
/// makes 70 % of the runs.
fn busy_with_forks() -> flakestat::fake::scenario::SyntheticSpec {
    flakestat::fake::scenario::SyntheticSpec {
        runs: 300,
        jobs_per_run: 4,
        spacing: chrono::TimeDelta::hours(4),
        fail_every: 5,
        rerun_every: 10,
        bot_percent: 70,
        pr_percent: 60,
        pushes_per_pr: 1,
        fork_percent: 20,
        ..flakestat::fake::scenario::SyntheticSpec::default()
    }
}

fn bench_signatures() -> PathBuf {
    common::root().join("benches/survey-signatures")
}

#[test]
fn fork_prs_cost_only_the_pull_pages_needed_and_every_figure_is_as_with_every_pr_known() {
    use flakestat::fake::SurveyMinimum;
    use flakestat::fake::scenario::synthetic;
    use flakestat::signatures::load::load_dir;

    let spec = busy_with_forks();
    let ds = synthetic(&spec);
    let repo = spec.repo.clone();
    // The last 30 days of 50: PRs older than the lookback sit on later pages, unasked.
    let since = spec.start + chrono::TimeDelta::days(20);
    let until = ds.now;
    let marker = regex::Regex::new(r"FLAKE-MARKER run \d+ attempt \d+").unwrap();
    let min = SurveyMinimum::of(&ds, since, until, &|log| marker.is_match(log));
    let in_window =
        |r: &&flakestat::fake::FakeRun| r.run.created_at >= since && r.run.created_at < until;
    let fork_runs: Vec<&flakestat::fake::FakeRun> = ds
        .runs
        .iter()
        .filter(in_window)
        .filter(|r| r.run.head_repository.is_some() && r.run.pull_requests.is_empty())
        .collect();
    let failing_fork_runs = fork_runs
        .iter()
        .filter(|r| r.all_jobs().iter().any(|j| j.is_failed()))
        .count();
    // The scenario asks what it should: fork runs, some failing, needing the PR listing.
    assert!(fork_runs.len() >= 20, "{} fork runs", fork_runs.len());
    assert!(
        failing_fork_runs >= 3,
        "{failing_fork_runs} failing fork runs"
    );
    assert!(min.fork_pulls >= 1 && min.merged_pulls >= 2, "{min:?}");
    assert!(ds.pulls.len() > 100, "more PRs than one page");

    let gh = FakeGitHub::start_blocking(ds.clone(), Faults::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let out = common::flakestat()
        .args([
            "survey",
            "-v",
            "--repo",
            &repo.to_string(),
            "--format",
            "json",
        ])
        .args([
            "--since",
            &since.to_rfc3339(),
            "--until",
            &until.to_rfc3339(),
        ])
        .args(["--api-url", &gh.api_url(), "--output", "/dev/null"])
        .arg("--signatures")
        .arg(bench_signatures())
        .arg("--cache-dir")
        .arg(&cache)
        .env("GH_TOKEN", "test")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");

    // The PR listings (merged PRs, then the fork runs' PRs) and the PRs' files: exactly the
    // pages needed, counted from the dataset.
    let pull_pages: Vec<String> = gh
        .requests()
        .into_iter()
        .filter(|r| r.kind == RouteKind::ListPulls)
        .map(|r| r.path)
        .collect();
    let fork_pages = pull_pages
        .iter()
        .filter(|p| p.contains("state=all"))
        .count() as u64;
    assert_eq!(
        (pull_pages.len() as u64 - fork_pages, fork_pages),
        (min.merged_pulls, min.fork_pulls),
        "merged-PR and fork-mapping pages: {pull_pages:?}"
    );
    assert_eq!(gh.request_count(RouteKind::PullFiles) as u64, min.files);
    for (kind, expected) in [
        (RouteKind::ListJobs, min.jobs),
        (RouteKind::JobLog, min.logs),
        (RouteKind::ListRuns, min.list),
    ] {
        assert_eq!(gh.request_count(kind) as u64, expected, "{kind:?}");
    }

    // What the survey stored analyzes to the report a store knowing every PR of the window
    // (with the files of the PRs of hit runs, as counted from the dataset) and every
    // labeler job gives.
    let set = SignatureSet::compile(load_dir(&bench_signatures()).unwrap()).unwrap();
    let config = AnalysisConfig::default();
    let mut store = Store::open(&cache).unwrap();
    let surveyed = store
        .load_snapshot(&repo, since, until, &set.fingerprint())
        .unwrap();
    let report = analyze(&surveyed, &set.info(), &config);
    let flake = &report.signatures[0];
    assert!(flake.runs_hit > 0 && !flake.excluded_runs.is_empty());
    assert!(flake.unknown_runs.is_empty(), "{:?}", flake.unknown_runs);
    let fork_hits = flake
        .hits
        .iter()
        .filter(|h| fork_runs.iter().any(|r| r.run.id == h.run_id))
        .count();
    assert!(fork_hits > 0, "fork runs are counted among the hits");

    let lookback = since - chrono::TimeDelta::days(14);
    let hit_prs: BTreeSet<u64> = ds
        .pulls
        .iter()
        .filter(|p| {
            surveyed
                .pulls
                .get(&PrNumber(p.number))
                .is_some_and(|s| s.files.is_some())
        })
        .map(|p| p.number)
        .collect();
    assert_eq!(
        hit_prs.len() as u64,
        min.files,
        "files of exactly the PRs of hit runs"
    );
    let every_pr: Vec<_> = ds
        .pulls
        .iter()
        .filter(|p| p.updated_at >= lookback)
        .map(|p| {
            let mut pull = p.to_model(&repo);
            if !hit_prs.contains(&p.number) {
                pull.files = None;
            }
            pull
        })
        .collect();
    store.store_pulls(&repo, &every_pr).unwrap();
    for fake in ds
        .runs
        .iter()
        .filter(in_window)
        .filter(|r| r.run.workflow_id.0 == BOT_WORKFLOW_ID)
    {
        let jobs: Vec<_> = fake.all_jobs().into_iter().cloned().collect();
        store
            .store_jobs(fake.run.id, fake.run.run_attempt, true, &jobs)
            .unwrap();
    }
    let known = store
        .load_snapshot(&repo, since, until, &set.fingerprint())
        .unwrap();
    assert!(known.pulls.len() >= surveyed.pulls.len());
    assert!(
        known.jobs.len() > surveyed.jobs.len(),
        "labeler jobs were added"
    );
    assert_eq!(analyze(&known, &set.info(), &config), report);

    // And the comparison can fail: without the fork PRs, the figures are not the same.
    let mut blind = surveyed.clone();
    blind.pulls.retain(|_, p| {
        p.head
            .as_ref()
            .and_then(|h| h.repo.as_deref())
            .is_none_or(|r| r.eq_ignore_ascii_case(&repo.to_string()))
    });
    assert_ne!(
        analyze(&blind, &set.info(), &config).signatures,
        report.signatures
    );
}
