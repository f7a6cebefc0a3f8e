//! Hidden flakes (issue #45): tests retried to a pass inside green jobs, read by
//! `--green-logs` from green jobs' logs. The story with `hidden_flakes = true` gives some green
//! test jobs logs in four runners' formats (`fake::hidden_flakes::plan` says which); every
//! expected figure here is computed from that plan and the dataset's jobs, never written down.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use crate::common::{self, story_dir, story_with};
use flakestat::analysis::hidden::in_green_sample;
use flakestat::fake::hidden_flakes::plan;
use flakestat::fake::{Dataset, FakeGitHub, Faults, RouteKind};
use flakestat::fetch::{ClientConfig, FetchError, GreenLogs, GreenLogsFetch, Session, SurveyPlan};
use flakestat::model::{Conclusion, JobId, Repo, Timestamp};
use flakestat::report::tests::TestsWire;
use flakestat::signatures::SignatureSet;
use flakestat::signatures::load::load_bundled;
use flakestat::store::{Store, StoreHandle};

const RATE: f64 = 0.2;

fn repo() -> Repo {
    Repo::parse("NVIDIA/cuda-python").unwrap()
}

fn at(s: &str) -> Timestamp {
    chrono::DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn hidden_story(dir: &Path) -> Dataset {
    Dataset::load(&story_with(dir, "hidden_flakes = true\n")).unwrap()
}

/// The green job executions of runs created in `[since, until)` in the `RATE` sample: job id
/// → (workflow, job name).
fn sampled_green(
    ds: &Dataset,
    since: Timestamp,
    until: Timestamp,
) -> BTreeMap<JobId, (String, String)> {
    let mut out = BTreeMap::new();
    for r in &ds.runs {
        if r.run.created_at < since || r.run.created_at >= until {
            continue;
        }
        for a in &r.attempts {
            for j in &a.jobs {
                if j.conclusion == Some(Conclusion::Success) && in_green_sample(j.id, RATE) {
                    out.insert(j.id, (r.run.workflow_name.clone(), j.name.clone()));
                }
            }
        }
    }
    out
}

fn no_limit() -> Faults {
    Faults {
        rate_limit: Some(u32::MAX / 2),
        ..Faults::default()
    }
}

fn run(args: &[&str]) -> std::process::Output {
    common::ok(common::flakestat().args(args).output().unwrap())
}

/// `flakestat COMMAND… --cache-dir CACHE WINDOW… --signatures (the bundled ones) EXTRA…`, the
/// shape of every survey and tests report here, which must succeed.
fn on_store(command: &[&str], cache: &str, window: &[&str], extra: &[&str]) -> Output {
    let sigs = common::signatures();
    let mut args = command.to_vec();
    args.extend(["--cache-dir", cache]);
    args.extend(window);
    args.extend(["--signatures", sigs.to_str().unwrap()]);
    args.extend(extra);
    run(&args)
}

/// Every hidden flaky test of the sample is named with its counts (retried to a pass inside
/// green jobs, passed, failed) and its cells (job names), all as the plan and the dataset say;
/// a test retried to a pass is flaky; the retry budget counts each retried job.
#[test]
fn every_hidden_flaky_test_is_named_with_its_counts_and_cells() {
    let dir = tempfile::tempdir().unwrap();
    let ds = hidden_story(dir.path());
    let planned = plan(&ds);
    let gh = FakeGitHub::start_blocking(ds.clone(), no_limit()).unwrap();
    let cache = dir.path().join("cache");
    let (api, cache_s) = (gh.api_url(), cache.to_str().unwrap().to_string());
    let window = [
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-06-15",
        "--until",
        "2026-07-31",
    ];
    let out = on_store(
        &["survey", "--api-url", &api],
        &cache_s,
        &window,
        &["--green-logs", "20%", "--format", "json"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("green logs: "), "{stderr}");

    let report = on_store(
        &["report", "--tests"],
        &cache_s,
        &window,
        &["--format", "json"],
    );
    let wire: TestsWire = serde_json::from_slice(&report.stdout).unwrap();
    let (since, until) = (
        at(wire.since.as_deref().unwrap()),
        at(wire.until.as_deref().unwrap()),
    );
    let hidden = wire.hidden_flakes.expect("green logs were read");

    let sampled = sampled_green(&ds, since, until);
    assert_eq!(
        hidden.green_read,
        sampled.len() as u64,
        "every sampled green log read"
    );
    // Per test, the planned retries in the sample: job → its key.
    let mut want: BTreeMap<&str, Vec<JobId>> = BTreeMap::new();
    for p in &planned {
        if sampled.contains_key(&p.job) {
            want.entry(p.test).or_default().push(p.job);
        }
    }
    assert!(
        want.len() >= 4,
        "the sample holds several runners' retries: {want:?}"
    );
    let named: BTreeSet<&str> = hidden.hidden().map(|t| t.id.as_str()).collect();
    assert_eq!(named, want.keys().copied().collect::<BTreeSet<_>>());
    for (test, jobs) in &want {
        let t = hidden.tests.iter().find(|t| t.id == *test).unwrap();
        assert_eq!(t.hidden, jobs.len() as u64, "{test}");
        assert_eq!(
            t.retried,
            jobs.len() as u64,
            "{test}: no failed log retries it"
        );
        assert_eq!(t.failed, 0, "{test}: no failed log names it");
        let mut cells: BTreeMap<String, u64> = BTreeMap::new();
        for j in jobs {
            *cells.entry(sampled[j].1.clone()).or_default() += 1;
        }
        assert_eq!(t.cells, cells, "{test}");
        // Passed: the sampled green executions of the jobs that ran it, less its retries.
        let keys: BTreeSet<&(String, String)> = jobs.iter().map(|j| &sampled[j]).collect();
        let runs_of_keys = sampled.values().filter(|k| keys.contains(k)).count() as u64;
        assert_eq!(t.passed, runs_of_keys - jobs.len() as u64, "{test}");
        assert!(t.retry_minutes > 0.0, "{test}");
    }
    // The retry budget: each job with a planned retry in the sample is a green job retried.
    let retried_jobs: u64 = want.values().map(|j| j.len() as u64).sum();
    assert_eq!(
        hidden.budget.iter().map(|b| b.green_retried).sum::<u64>(),
        retried_jobs
    );
    let planned_retries: u64 = planned
        .iter()
        .filter(|p| sampled.contains_key(&p.job))
        .map(|p| p.retries)
        .sum();
    assert_eq!(
        hidden.budget.iter().map(|b| b.retries).sum::<u64>(),
        planned_retries
    );

    // The markdown names each hidden flaky test in its section.
    let md = on_store(
        &["report", "--tests"],
        &cache_s,
        &window,
        &["--format", "markdown"],
    );
    let md = String::from_utf8(md.stdout).unwrap();
    let section = md.split("## Hidden flakes").nth(1).expect("the section");
    for test in want.keys() {
        assert!(
            section.contains(&format!("`{test}`")),
            "{test} not in {section}"
        );
    }
    assert!(md.contains("| Retried in green |"), "the column");

    // The quarantine list (`--format ids`, at least 2 failures or retries by default) holds
    // each test the sample retried to a pass in two green jobs or more, and no other that never
    // failed; with `--min-failures 1`, every hidden flaky test.
    for (min, at_least) in [("2", 2), ("1", 1)] {
        let ids = on_store(
            &["report", "--tests"],
            &cache_s,
            &window,
            &["--format", "ids", "--min-failures", min],
        );
        let listed = String::from_utf8(ids.stdout).unwrap();
        let listed: BTreeSet<&str> = listed.lines().collect();
        for (test, jobs) in &want {
            assert_eq!(
                listed.contains(test),
                jobs.len() >= at_least,
                "--min-failures {min}: {test} retried in {} green jobs: {listed:?}",
                jobs.len()
            );
        }
    }
}

/// `--green-logs 0` is today's survey: the report byte for byte as without the flag, no green
/// line on stderr; and the story's hidden flakes change nothing either.
#[test]
fn green_logs_zero_is_today_s_survey() {
    let dir = tempfile::tempdir().unwrap();
    let hidden = story_with(dir.path(), "hidden_flakes = true\n");
    let survey = |replay: &Path, cache: &str, extra: &[&str]| {
        let mut extra = extra.to_vec();
        extra.extend(["--format", "json"]);
        let replay = ["survey", "--replay", replay.to_str().unwrap()];
        on_store(&replay, cache, &common::STORY_WINDOW, &extra)
    };
    let plain = survey(&story_dir(), dir.path().join("a").to_str().unwrap(), &[]);
    let zero = survey(
        &hidden,
        dir.path().join("b").to_str().unwrap(),
        &["--green-logs", "0"],
    );
    assert!(!plain.stdout.is_empty());
    assert_eq!(
        String::from_utf8(zero.stdout).unwrap(),
        String::from_utf8(plain.stdout).unwrap()
    );
    assert!(!String::from_utf8_lossy(&zero.stderr).contains("green logs"));
}

fn session(gh: &FakeGitHub) -> Session {
    let mut config = ClientConfig::new(gh.api_url(), None);
    config.max_reset_wait = Duration::ZERO;
    config.backoff_base = Duration::from_millis(5);
    Session::new(config, Arc::new(())).unwrap()
}

/// A rate-limit stop and a resume fetch no green log twice: the green step stopped again and
/// again by a small budget, then resumed until it ends, asks for each sampled green job's log
/// exactly once, and one more resume asks for none.
#[test]
fn a_rate_limit_stop_and_resume_fetches_no_green_log_twice() {
    let dir = tempfile::tempdir().unwrap();
    let ds = hidden_story(dir.path());
    let gh = FakeGitHub::start_blocking(ds.clone(), no_limit()).unwrap();
    let cache = dir.path().join("cache");
    let store = StoreHandle::new(Store::open(&cache).unwrap());
    let set = Arc::new(SignatureSet::compile(load_bundled()).unwrap());
    let (since, until) = (at("2026-07-01T00:00:00Z"), at("2026-07-15T00:00:00Z"));
    let plan = SurveyPlan {
        repo: repo(),
        since,
        until,
        workflows: vec![],
        branch: None,
        event: None,
        interruptible: false,
    };
    session(&gh)
        .survey(store.clone(), set, &plan, &|_, _| BTreeSet::new())
        .unwrap();
    gh.clear_requests();
    gh.set_faults(Faults {
        rate_limit: Some(40),
        ..Faults::default()
    });
    gh.refill_budget();
    let asked = GreenLogs {
        rate: RATE,
        keep_logs: false,
    };
    let mut stops = 0;
    loop {
        let mut read = GreenLogsFetch::default();
        match session(&gh).fetch_green_outcomes(&store, &repo(), (since, until), asked, &mut read) {
            Ok(()) => break,
            Err(FetchError::RateLimited { .. }) => {
                stops += 1;
                assert!(stops < 200, "never ends");
                gh.refill_budget();
            }
            Err(e) => panic!("{e}"),
        }
    }
    let sampled = sampled_green(&ds, since, until);
    assert!(stops >= 3, "stopped {stops} times only");
    // A job's log is asked for on its own (`…/jobs/{id}/logs`) or in its attempt's archive
    // (`…/runs/{id}/attempts/{n}/logs`, several sampled jobs of one attempt at once).
    let attempt_of: BTreeMap<JobId, (u64, u32)> = ds
        .jobs()
        .map(|j| (j.id, (j.run_id.0, j.run_attempt)))
        .collect();
    let mut asked_for: BTreeMap<u64, usize> = BTreeMap::new();
    let mut archives: BTreeMap<(u64, u32), usize> = BTreeMap::new();
    for r in gh.requests() {
        if r.status == 403 || r.status == 429 {
            continue;
        }
        if r.kind == RouteKind::JobLog {
            let id: u64 = r.path.split('/').nth_back(1).unwrap().parse().unwrap();
            *asked_for.entry(id).or_default() += 1;
        } else if r.kind == RouteKind::AttemptLogs {
            let mut back = r.path.split('/').rev().skip(1);
            let attempt: u32 = back.next().unwrap().parse().unwrap();
            let run: u64 = back.nth(1).unwrap().parse().unwrap();
            *archives.entry((run, attempt)).or_default() += 1;
        }
    }
    assert!(
        archives.values().all(|&n| n == 1),
        "each archive once: {archives:?}"
    );
    for job in sampled.keys() {
        if archives.contains_key(&attempt_of[job]) && !asked_for.contains_key(&job.0) {
            asked_for.insert(job.0, 1);
        }
    }
    let want: BTreeMap<u64, usize> = sampled.keys().map(|j| (j.0, 1)).collect();
    assert_eq!(
        asked_for, want,
        "each sampled green log once, after {stops} stops"
    );

    gh.clear_requests();
    let mut read = GreenLogsFetch::default();
    session(&gh)
        .fetch_green_outcomes(&store, &repo(), (since, until), asked, &mut read)
        .unwrap();
    assert_eq!((read.sampled, read.requests), (0, 0));
    assert_eq!(gh.request_count(RouteKind::JobLog), 0);
    assert_eq!(gh.request_count(RouteKind::AttemptLogs), 0);
}

/// Green logs through the attempt archive when that is cheaper (`--green-logs 1`: every green
/// job of an attempt sampled, one archive request instead of one per job): fewer requests than
/// logs read, and the same outcomes as asking for each log on its own (`signatures audit
/// --green-sample`'s way, which never uses archives).
#[test]
fn green_logs_come_through_the_attempt_archive_when_cheaper() {
    let dir = tempfile::tempdir().unwrap();
    let ds = hidden_story(dir.path());
    let gh = FakeGitHub::start_blocking(ds.clone(), no_limit()).unwrap();
    let set = Arc::new(SignatureSet::compile(load_bundled()).unwrap());
    let (since, until) = (at("2026-07-01T00:00:00Z"), at("2026-07-04T00:00:00Z"));
    let survey = SurveyPlan {
        repo: repo(),
        since,
        until,
        workflows: vec![],
        branch: None,
        event: None,
        interruptible: false,
    };
    let store = StoreHandle::new(Store::open(&dir.path().join("cache")).unwrap());
    session(&gh)
        .survey(store.clone(), set, &survey, &|_, _| BTreeSet::new())
        .unwrap();
    gh.clear_requests();
    let all = GreenLogs {
        rate: 1.0,
        keep_logs: true,
    };
    let mut read = GreenLogsFetch::default();
    session(&gh)
        .fetch_green_outcomes(&store, &repo(), (since, until), all, &mut read)
        .unwrap();
    let archives = gh.request_count(RouteKind::AttemptLogs) as u64;
    let one_by_one = gh.request_count(RouteKind::JobLog) as u64;
    assert!(archives > 0, "{read:?}");
    assert_eq!(
        (read.archives, read.requests),
        (archives, archives + one_by_one)
    );
    assert_eq!(read.read + read.unavailable, read.sampled);
    assert!(
        read.requests * 4 < read.read,
        "{} requests for {} logs",
        read.requests,
        read.read
    );
    eprintln!(
        "--green-logs 1, 2026-07-01..04: {} green logs read in {} requests ({archives} attempt archives)",
        read.read, read.requests
    );

    // Each log read is the job's own: the same bytes as its own download.
    let ids: Vec<JobId> = store
        .blocking(|s| s.green_jobs_unread(&repo(), since, until))
        .unwrap()
        .iter()
        .map(|j| j.id)
        .collect();
    assert!(ids.is_empty(), "every green job has its outcome");
    let outcomes = store
        .blocking(|s| s.load_snapshot(&repo(), since, until, "x"))
        .unwrap()
        .green;
    let green: Vec<JobId> = ds
        .runs
        .iter()
        .filter(|r| r.run.created_at >= since && r.run.created_at < until)
        .flat_map(|r| r.attempts.iter().flat_map(|a| &a.jobs))
        .filter(|j| j.conclusion == Some(Conclusion::Success))
        .map(|j| j.id)
        .collect();
    let mut compared = 0;
    for job in &green {
        if let Some(flakestat::fake::FakeLog::Text(text)) = ds.logs.get(job) {
            let want = flakestat::signatures::testids::green::read_green(text);
            assert_eq!(outcomes.get(job), Some(&want), "job {job}");
            compared += u64::from(!want.retried.is_empty());
        }
    }
    assert!(
        compared > 0,
        "a log with a retried test among those compared"
    );
}

/// `serve --green-logs`: a green run of the story holding a test retried to a pass, surveyed
/// without green logs (no hidden flake reported), then delivered to `serve --green-logs 1` as
/// GitHub's `workflow_run` completion: `report --tests` names the test hidden flaky in its job,
/// with every green job of that run read and no other.
#[test]
fn serve_green_logs_reads_a_delivered_green_run_s_retried_test() {
    use crate::serve::Serve;
    let dir = tempfile::tempdir().unwrap();
    let story = story_with(dir.path(), "hidden_flakes = true\n");
    let ds = Dataset::load(&story).unwrap();
    // A green run, one attempt, in the story's window, with a planned retry in one of its jobs.
    let planned = plan(&ds);
    let (green_run, p) = planned
        .iter()
        .find_map(|p| {
            let found = ds.runs.iter().find(|r| {
                r.attempts
                    .iter()
                    .any(|a| a.jobs.iter().any(|j| j.id == p.job))
            })?;
            (found.run.run_attempt == 1
                && found.run.conclusion == Some(Conclusion::Success)
                && found.run.created_at >= at("2026-06-16T00:00:00Z"))
            .then(|| (found.clone(), p.clone()))
        })
        .expect("the story has a green run with a retried test");
    let green_jobs = green_run
        .attempts
        .iter()
        .flat_map(|a| &a.jobs)
        .filter(|j| j.conclusion == Some(Conclusion::Success))
        .count() as u64;
    let day = green_run.run.created_at.format("%Y-%m-%d").to_string();
    let next = (green_run.run.created_at + chrono::TimeDelta::days(1))
        .format("%Y-%m-%d")
        .to_string();
    let window = [
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        &day,
        "--until",
        &next,
    ];
    let cache = dir.path().join("cache");
    let (cache_s, story_s) = (cache.to_str().unwrap(), story.to_str().unwrap());
    let survey = ["-q", "survey", "--replay", story_s];
    on_store(&survey, cache_s, &window, &["--format", "json"]);
    let report = || -> TestsWire {
        let report = on_store(
            &["report", "--tests"],
            cache_s,
            &window,
            &["--format", "json"],
        );
        serde_json::from_slice(&report.stdout).unwrap()
    };
    assert!(report().hidden_flakes.is_none(), "no green log read yet");

    let serve = Serve::replaying(
        dir.path(),
        &story,
        &cache,
        &["--resync", "0", "--green-logs", "1"],
    );
    let created = green_run
        .run
        .created_at
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let delivery = serde_json::to_vec(&serde_json::json!({
        "action": "completed",
        "repository": { "full_name": "NVIDIA/cuda-python" },
        "workflow_run": { "id": green_run.run.id.0, "run_attempt": 1, "created_at": created,
                          "status": "completed", "conclusion": "success" },
    }))
    .unwrap();
    let (status, body) = serve.deliver("workflow_run", "green-1", &delivery, None);
    assert_eq!(status, 202, "{body}");
    serve.wait_until("the green run ingested", |s| {
        s.metric("flakestat_ingests_total{outcome=\"done\"}") == 1
    });
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");

    let hidden = report().hidden_flakes.expect("green logs were read");
    assert_eq!(
        hidden.green_read, green_jobs,
        "the delivered run's green jobs, no other"
    );
    // The plan's retries in that run (one, or more should two of its jobs have one).
    let mut want: BTreeMap<&str, u64> = BTreeMap::new();
    for q in planned.iter().filter(|q| {
        green_run
            .attempts
            .iter()
            .any(|a| a.jobs.iter().any(|j| j.id == q.job))
    }) {
        *want.entry(q.test).or_default() += 1;
    }
    let named: BTreeMap<&str, u64> = hidden.hidden().map(|t| (t.id.as_str(), t.hidden)).collect();
    assert_eq!(named, want);
    let t = hidden.tests.iter().find(|t| t.id == p.test).unwrap();
    assert_eq!(t.cells.get(&p.job_name), Some(&1), "{:?}", t.cells);
}

/// A hidden flake in a workflow that never fails in the window (the story's bot workflow, with
/// `bot_workflow = true`: a survey lists no jobs for it) is found by `--green-logs`: the green
/// step lists the jobs of that workflow's sampled runs only (one jobs request per run sampled,
/// counted in the fake's request log) and reads every green job of theirs; every hidden flaky
/// test is named, the bot workflow's among them.
#[test]
fn a_hidden_flake_in_a_never_failing_workflow_is_found() {
    use flakestat::analysis::hidden::in_green_run_sample;
    use flakestat::fake::BOT_WORKFLOW_ID;
    use flakestat::model::WorkflowId;
    let dir = tempfile::tempdir().unwrap();
    let story = story_with(dir.path(), "hidden_flakes = true\nbot_workflow = true\n");
    let ds = Dataset::load(&story).unwrap();
    let planned = plan(&ds);
    let gh = FakeGitHub::start_blocking(ds.clone(), no_limit()).unwrap();
    let cache = dir.path().join("cache");
    let store = StoreHandle::new(Store::open(&cache).unwrap());
    let set = Arc::new(SignatureSet::compile(load_bundled()).unwrap());
    let (since, until) = (at("2026-06-15T00:00:00Z"), at("2026-07-31T00:00:00Z"));
    let in_window =
        |r: &&flakestat::fake::FakeRun| r.run.created_at >= since && r.run.created_at < until;
    let bot = |r: &flakestat::fake::FakeRun| r.run.workflow_id == WorkflowId(BOT_WORKFLOW_ID);
    // The lowest of a few rates whose run sample holds a bot run with a planned retry (the
    // plan gives one green job in 97 a retry: a low rate may sample none of them).
    let bot_runs: Vec<_> = ds
        .runs
        .iter()
        .filter(in_window)
        .filter(|r| bot(r))
        .collect();
    let retried_bot_runs: Vec<_> = bot_runs
        .iter()
        .filter(|r| {
            r.attempts
                .iter()
                .flat_map(|a| &a.jobs)
                .any(|j| planned.iter().any(|p| p.job == j.id))
        })
        .collect();
    let rate = [0.2, 0.3, 0.5, 0.7, 0.9]
        .into_iter()
        .find(|&rate| {
            retried_bot_runs
                .iter()
                .any(|r| in_green_run_sample(r.run.id, rate))
        })
        .expect("a rate that samples a bot run with a retried test");
    let survey = SurveyPlan {
        repo: repo(),
        since,
        until,
        workflows: vec![],
        branch: None,
        event: None,
        interruptible: false,
    };
    session(&gh)
        .survey(store.clone(), set.clone(), &survey, &|_, _| BTreeSet::new())
        .unwrap();
    let asked = GreenLogs {
        rate,
        keep_logs: false,
    };
    // Without the listing (`serve` after a delivery: the window is the run's creation second,
    // where any workflow looks quiet) a run's green jobs are sampled each by its own id: a
    // green run of the failing workflow whose jobs the job sample splits is read in part.
    let (split, split_sampled) = ds
        .runs
        .iter()
        .filter(|r| !bot(r) && r.run.conclusion == Some(Conclusion::Success))
        .filter(|r| in_window(r))
        .find_map(|r| {
            let green: Vec<JobId> = r
                .attempts
                .iter()
                .flat_map(|a| &a.jobs)
                .filter(|j| j.conclusion == Some(Conclusion::Success))
                .map(|j| j.id)
                .collect();
            let n = green.iter().filter(|&&j| in_green_sample(j, rate)).count();
            (n > 0 && n < green.len()).then_some((r.run.created_at, n as u64))
        })
        .expect("a green run whose jobs the sample splits");
    let second = (split, split + chrono::TimeDelta::seconds(1));
    let mut one = GreenLogsFetch::default();
    session(&gh)
        .fetch_green_outcomes(&store, &repo(), second, asked, &mut one)
        .unwrap();
    assert_eq!((one.sampled, one.quiet_runs_listed), (split_sampled, 0));

    gh.clear_requests();
    let mut read = GreenLogsFetch::default();
    session(&gh)
        .fetch_green_outcomes_listing_quiet(&store, set, &repo(), (since, until), asked, &mut read)
        .unwrap();
    read.read += one.read;
    read.unavailable += one.unavailable;

    // The bot workflow's runs of the window sampled by run; the others' green jobs by job.
    let sampled_bot_runs = bot_runs
        .iter()
        .filter(|r| in_green_run_sample(r.run.id, rate))
        .count() as u64;
    assert!(sampled_bot_runs > 0 && sampled_bot_runs < bot_runs.len() as u64);
    let jobs_requests =
        gh.request_count(RouteKind::ListJobs) + gh.request_count(RouteKind::AttemptJobs);
    assert_eq!(
        (
            read.quiet_runs_listed,
            read.jobs_requests,
            jobs_requests as u64
        ),
        (sampled_bot_runs, sampled_bot_runs, sampled_bot_runs),
        "one jobs request per sampled run of the never-failing workflow, none for the others"
    );
    eprintln!(
        "--green-logs {rate}, 2026-06-15..07-31: {} runs of the never-failing workflow, the jobs of {sampled_bot_runs} listed ({jobs_requests} jobs requests); {} green logs requested",
        bot_runs.len(),
        read.requests
    );
    let mut sampled: BTreeMap<JobId, (String, String)> = BTreeMap::new();
    for r in ds.runs.iter().filter(in_window) {
        for j in r.attempts.iter().flat_map(|a| &a.jobs) {
            let chosen = if bot(r) {
                in_green_run_sample(r.run.id, rate)
            } else {
                in_green_sample(j.id, rate)
            };
            if j.conclusion == Some(Conclusion::Success) && chosen {
                sampled.insert(j.id, (r.run.workflow_name.clone(), j.name.clone()));
            }
        }
    }
    assert_eq!(read.read + read.unavailable, sampled.len() as u64);

    let cache_s = cache.to_str().unwrap();
    let sigs = common::signatures();
    let report = [
        "report",
        "--tests",
        "--cache-dir",
        cache_s,
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-06-15",
        "--until",
        "2026-07-30",
        "--signatures",
        sigs.to_str().unwrap(),
        "--format",
        "json",
    ];
    let wire: TestsWire = serde_json::from_slice(&run(&report).stdout).unwrap();
    let hidden = wire.hidden_flakes.expect("green logs were read");
    assert_eq!(hidden.green_read, sampled.len() as u64);
    let mut want: BTreeMap<&str, u64> = BTreeMap::new();
    let mut bot_tests = BTreeSet::new();
    for p in planned.iter().filter(|p| sampled.contains_key(&p.job)) {
        *want.entry(p.test).or_default() += 1;
        if sampled[&p.job].0 == "Label PR" {
            bot_tests.insert(p.test);
        }
    }
    assert!(
        !bot_tests.is_empty(),
        "a retried test in the never-failing workflow's sample"
    );
    let named: BTreeMap<&str, u64> = hidden.hidden().map(|t| (t.id.as_str(), t.hidden)).collect();
    assert_eq!(named, want);
    let budget: BTreeSet<&str> = hidden
        .budget
        .iter()
        .filter(|b| b.green_retried > 0)
        .map(|b| b.workflow.as_str())
        .collect();
    assert!(budget.contains("Label PR"), "{budget:?}");
}
