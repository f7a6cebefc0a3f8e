//! `flakestat pr`: the real binary against the fake GitHub on 127.0.0.1 serving the bundled
//! story, over a copy of the story's surveyed store. Which jobs the flake hit, which PR a run
//! belongs to and which PRs never failed are read from the dataset's construction and logs, not
//! from the analysis; the figures asserted are those that do not move (PR numbers, labels,
//! "since #2371"), never test names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Output;
use std::sync::OnceLock;

use crate::common::{self, pr_of};
use flakestat::fake::scenario::cuda_python::{
    CULPRIT_PR, FLAKE_MESSAGE, FLAKE_TEST_FILE, FORK_PR, RELATED_PR,
};
use flakestat::fake::{Dataset, FakeApp, FakeGitHub, FakeLog, Faults, RouteKind};
use flakestat::report::pr::WirePr;

const TOKEN: &str = "pr-token";
const REPO: &str = "NVIDIA/cuda-python";

fn dataset() -> &'static Dataset {
    static DS: OnceLock<Dataset> = OnceLock::new();
    DS.get_or_init(|| Dataset::load(&common::story_dir()).expect("the bundled scenario loads"))
}

/// A fake GitHub serving the story, and a copy of the story's surveyed store.
fn setup() -> (FakeGitHub, tempfile::TempDir) {
    let gh = FakeGitHub::start_blocking(dataset().clone(), Faults::default()).unwrap();
    let cache = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    common::copy_dir(common::surveyed_story(), cache.path());
    (gh, cache)
}

/// `flakestat pr REPO#n` against `gh`, the store in `cache`, evidence from 2026-07-01.
fn pr(gh: &FakeGitHub, cache: &Path, n: u64, extra: &[&str]) -> Output {
    common::flakestat()
        .args(["pr", &format!("{REPO}#{n}"), "--api-url", &gh.api_url()])
        .arg("--cache-dir")
        .arg(cache)
        .args(["--since", "2026-07-01", "--max-retries", "1"])
        .args(extra)
        .env("GITHUB_TOKEN", TOKEN)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn json(out: &Output) -> WirePr {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is pr's JSON ({e}); exit {:?}, stderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Job id → PR, of every failed job whose log holds the flake's assertion.
fn hit_jobs() -> BTreeMap<u64, u64> {
    let ds = dataset();
    let mut hits = BTreeMap::new();
    for run in &ds.runs {
        let Some(pr) = pr_of(run) else { continue };
        for job in run.all_jobs() {
            let hit = job.is_failed()
                && matches!(ds.logs.get(&job.id), Some(FakeLog::Text(t)) if t.contains(FLAKE_MESSAGE));
            if hit {
                hits.insert(job.id.0, pr);
            }
        }
    }
    hits
}

#[test]
fn every_pr_the_flake_hit_is_labelled_known_flake_since_2371() {
    let (gh, cache) = setup();
    let hits = hit_jobs();
    let prs: BTreeSet<u64> = hits
        .values()
        .copied()
        .filter(|p| ![RELATED_PR, FORK_PR].contains(p))
        .collect();
    assert!(
        prs.len() >= 5,
        "the story's flake hits unrelated PRs: {prs:?}"
    );
    for &n in &prs {
        let out = pr(&gh, cache.path(), n, &["--all-runs", "--format", "json"]);
        let report = json(&out);
        assert_eq!(report.pr, n);
        let expected: BTreeSet<u64> = hits
            .iter()
            .filter(|(_, p)| **p == n)
            .map(|(j, _)| *j)
            .collect();
        let labelled: BTreeMap<u64, _> = report.jobs.iter().map(|j| (j.job_id, j)).collect();
        for job in &expected {
            let j = labelled
                .get(job)
                .unwrap_or_else(|| panic!("PR #{n}: hit job {job} not labelled"));
            assert_eq!(j.label, "known_flake", "PR #{n}, job {job}: {}", j.reason);
            assert_eq!(j.since_pr, Some(CULPRIT_PR), "PR #{n}, job {job}");
            let rate = j.rate_percent.expect("a known flake's rate");
            assert!(rate > 5.0 && rate < 50.0, "PR #{n}: rate {rate}");
            assert!(
                j.rerun
                    .starts_with(&format!("re-run: known flake, {rate:.0}% of runs hit")),
                "{}",
                j.rerun
            );
        }
        // Exit 0 exactly when every failure of the latest attempts is not the PR's doing.
        let explained = report.jobs.iter().filter(|j| j.latest_attempt).all(|j| {
            ["known_flake", "broken_on_default_branch", "infrastructure"]
                .contains(&j.label.as_str())
        });
        assert_eq!(report.all_explained, explained, "PR #{n}");
        assert_eq!(
            out.status.code(),
            Some(if explained { 0 } else { 1 }),
            "PR #{n}"
        );
    }
}

#[test]
fn a_pr_whose_change_breaks_the_test_is_likely_this_pr() {
    let (gh, cache) = setup();
    let hits = hit_jobs();
    // #2362 edits the test file itself; the fork's #2370 changes the graph code (its runs name
    // no PR: only its head ties them to it).
    for n in [RELATED_PR, FORK_PR] {
        let out = pr(&gh, cache.path(), n, &["--all-runs", "--format", "json"]);
        let report = json(&out);
        let expected: Vec<u64> = hits
            .iter()
            .filter(|(_, p)| **p == n)
            .map(|(j, _)| *j)
            .collect();
        assert!(!expected.is_empty(), "PR #{n} fails with the assertion");
        for job in expected {
            let j = report
                .jobs
                .iter()
                .find(|j| j.job_id == job)
                .unwrap_or_else(|| panic!("PR #{n}: hit job {job} not labelled"));
            assert_eq!(j.label, "likely_this_pr", "PR #{n}: {}", j.reason);
            assert!(j.touches.is_some(), "PR #{n} changes the flake's paths");
        }
        assert_eq!(out.status.code(), Some(1), "PR #{n}");
    }
    let out = pr(&gh, cache.path(), RELATED_PR, &["--format", "json"]);
    let report = json(&out);
    assert!(
        report
            .jobs
            .iter()
            .any(|j| j.touches.as_deref() == Some(FLAKE_TEST_FILE)),
        "#{RELATED_PR} changes the failing test's file"
    );
}

#[test]
fn one_comment_per_pr_survives_three_runs() {
    let (gh, cache) = setup();
    let n = *hit_jobs()
        .values()
        .find(|p| ![RELATED_PR, FORK_PR].contains(p))
        .unwrap();
    let marker = format!("<!-- flakestat:pr {REPO}#{n} -->");
    for (i, extra) in [&[][..], &["--all-runs"][..], &[][..]].iter().enumerate() {
        let mut args = vec!["--post-comment", "--format", "json"];
        args.extend_from_slice(extra);
        let out = pr(&gh, cache.path(), n, &args);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "run {i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let comments = gh.comments(n);
        assert_eq!(comments.len(), 1, "run {i}: one comment, never a second");
        assert!(
            comments[0].body.starts_with(&marker),
            "{}",
            comments[0].body
        );
    }
    assert_eq!(gh.request_count(RouteKind::CreateComment), 1);
    // The second run labels every run: a new body, edited in place; the third edits it back.
    assert_eq!(gh.request_count(RouteKind::UpdateComment), 2);
    let comments = gh.comments(n);
    assert!(comments[0].updated_at > comments[0].created_at);
    // The body in the last run's shape: what re-running would do, and no mention of anyone.
    let body = &comments[0].body;
    assert!(
        body.contains("re-run") || body.contains("No failed job"),
        "{body}"
    );
    assert!(!body.contains(" @"), "{body}");
}

#[test]
fn all_runs_comment_says_what_rerunning_does() {
    let (gh, cache) = setup();
    let n = *hit_jobs()
        .values()
        .find(|p| ![RELATED_PR, FORK_PR].contains(p))
        .unwrap();
    let out = pr(
        &gh,
        cache.path(),
        n,
        &["--all-runs", "--post-comment", "--format", "json"],
    );
    let report = json(&out);
    let flake = report
        .jobs
        .iter()
        .find(|j| j.label == "known_flake")
        .expect("a known flake");
    let body = &gh.comments(n)[0].body;
    assert!(body.contains(&flake.rerun), "{body}");
    assert!(body.contains(&format!("since #{CULPRIT_PR}")), "{body}");
    assert!(body.contains("known flake"), "{body}");
}

#[test]
fn a_pr_with_no_failure_says_so_and_exits_0() {
    let ds = dataset();
    let mut failed: BTreeSet<u64> = BTreeSet::new();
    let mut with_runs: BTreeSet<u64> = BTreeSet::new();
    for run in &ds.runs {
        let Some(n) = pr_of(run) else { continue };
        with_runs.insert(n);
        if run.all_jobs().iter().any(|j| j.is_failed()) {
            failed.insert(n);
        }
    }
    let n = *with_runs
        .difference(&failed)
        .next()
        .expect("a PR that never failed");
    let (gh, cache) = setup();
    let out = pr(&gh, cache.path(), n, &["--format", "markdown"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("No failed job"), "{text}");
    let report = json(&pr(&gh, cache.path(), n, &["--format", "json"]));
    assert!(report.jobs.is_empty());
    assert!(!report.runs.is_empty(), "its runs are found");
    assert!(report.all_explained);
}

#[test]
fn the_cost_of_pr_on_a_stored_repository() {
    let (gh, cache) = setup();
    let n = *hit_jobs()
        .values()
        .find(|p| ![RELATED_PR, FORK_PR].contains(p))
        .unwrap();
    let first = pr(&gh, cache.path(), n, &["--format", "json"]);
    gh.clear_requests();
    // Everything stored: the repository, the PR, its files and the two run listings (its mirror
    // branch and its pull_request runs), nothing else (docs/pr.md).
    pr(&gh, cache.path(), n, &["--format", "json"]);
    let counts = gh.request_counts();
    let expected: BTreeMap<RouteKind, usize> = [
        (RouteKind::Repo, 1),
        (RouteKind::Pull, 1),
        (RouteKind::PullFiles, 1),
        (RouteKind::ListRuns, 2),
    ]
    .into_iter()
    .collect();
    // On a failure, which requests were made (and the first call's stderr) say why.
    let paths: Vec<String> = gh.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        counts,
        expected,
        "{paths:#?}\nfirst call's stderr: {}",
        String::from_utf8_lossy(&first.stderr)
    );
}

#[test]
fn bad_targets_are_refused_with_what_to_give() {
    for (args, says) in [
        (&["pr"][..], "which pull request"),
        (&["pr", "12"][..], "which repository"),
        (&["pr", "o/r#x"][..], "is not a pull request"),
        (&["pr", "o/r#0"][..], "is not a pull request"),
        (&["pr", "o/r#3", "--repo", "a/b"][..], "two repositories"),
        (&["pr", "o/r#3", "--format", "html"][..], "--format html"),
    ] {
        let out = common::flakestat().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

const APP_ID: u64 = 4242;
const INSTALLATION: u64 = 77;

/// The story's fake GitHub as a GitHub App installed on NVIDIA: only its installation tokens
/// are accepted.
fn app_github() -> FakeGitHub {
    let gh = FakeGitHub::start_blocking(dataset().clone(), Faults::default()).unwrap();
    let key = common::root().join("fixtures/github-app/app-key.pub.pem");
    let public = std::fs::read_to_string(key).unwrap();
    gh.set_app(FakeApp::new(APP_ID, &public, "NVIDIA", INSTALLATION))
        .unwrap();
    gh
}

fn as_app(gh: &FakeGitHub, cache: &Path, n: u64, extra: &[&str]) -> Output {
    common::flakestat()
        .args(["pr", &format!("{REPO}#{n}"), "--api-url", &gh.api_url()])
        .arg("--cache-dir")
        .arg(cache)
        .args(["--since", "2026-07-01", "--max-retries", "1"])
        .args(["--app-id", &APP_ID.to_string(), "--app-key"])
        .arg(common::root().join("fixtures/github-app/app-key.pem"))
        .args(extra)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

#[test]
fn a_check_run_as_an_app_is_kept_in_place_on_the_head_commit() {
    let gh = app_github();
    let cache = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    common::copy_dir(common::surveyed_story(), cache.path());
    let n = *hit_jobs()
        .values()
        .find(|p| ![RELATED_PR, FORK_PR].contains(p))
        .unwrap();
    let mut head = None;
    for (i, extra) in [&[][..], &[][..], &["--all-runs"][..]].iter().enumerate() {
        let mut args = vec!["--check-run", "--format", "json"];
        args.extend_from_slice(extra);
        let out = as_app(&gh, cache.path(), n, &args);
        let report = json(&out);
        let sha = report.head_sha.clone().expect("the PR's head");
        head.get_or_insert(sha.clone());
        let runs = gh.check_runs(&sha);
        assert_eq!(runs.len(), 1, "run {i}: one check run, edited in place");
        let run = &runs[0];
        assert_eq!(run.name, "flakestat");
        assert_eq!(run.status, "completed");
        let expected = if report.all_explained {
            "success"
        } else {
            "neutral"
        };
        assert_eq!(run.conclusion.as_deref(), Some(expected), "run {i}");
        assert_eq!(run.title.as_deref(), Some(report.summary.as_str()));
        let summary = run.summary.as_deref().unwrap();
        for job in report.jobs.iter().filter(|j| j.label == "known_flake") {
            assert!(summary.contains(&job.rerun), "{summary}");
            assert!(
                summary.contains(&format!("since #{CULPRIT_PR}")),
                "{summary}"
            );
        }
    }
    assert_eq!(gh.request_count(RouteKind::CreateCheckRun), 1);
    // The second run said the same: nothing sent; the third labels every run: edited.
    assert_eq!(gh.request_count(RouteKind::UpdateCheckRun), 1);
    assert_eq!(gh.request_count(RouteKind::ListCheckRuns), 3);
}

#[test]
fn a_check_run_needs_an_app() {
    let (gh, cache) = setup();
    let n = *hit_jobs().values().next().unwrap();
    let out = pr(&gh, cache.path(), n, &["--check-run"]);
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--app-id and --app-key"), "{err}");
    assert_eq!(gh.request_count(RouteKind::CreateCheckRun), 0);
    // The fake answers a token's check run as GitHub does: Apps only.
    let runner = flakestat::fetch::checks::CheckRunner::new(flakestat::fetch::ClientConfig::new(
        gh.api_url(),
        Some(TOKEN.to_string()),
    ))
    .unwrap();
    let head = dataset().runs.last().unwrap().run.head_sha.clone();
    let refused = runner
        .upsert(
            &flakestat::fetch::checks::CheckTarget {
                repo: flakestat::model::Repo::parse(REPO).unwrap(),
                head_sha: head.clone(),
                name: "flakestat".into(),
            },
            &flakestat::fetch::checks::CheckOutput {
                conclusion: "success".into(),
                title: "t".into(),
                summary: "s".into(),
            },
        )
        .unwrap_err();
    assert!(
        matches!(
            refused,
            flakestat::fetch::checks::CheckRunError::NotAnApp { status: 403, .. }
        ),
        "{refused}"
    );
    assert!(gh.check_runs(&head.0).is_empty());
}

/// The labels no story run shows, over a snapshot built in code: a failure the default branch's
/// latest runs share (broken), an infrastructure signature, a line nobody else shows (likely
/// this PR), a line two PRs share (unknown), a log that expired (unknown).
#[test]
fn labels_over_a_built_snapshot() {
    use crate::report_fixture::{Builder, From, Outcome, matrix, signature, t0};
    use chrono::Duration;
    use flakestat::analysis::pr::{Label, PrQuery, label_pr};
    use flakestat::analysis::{AnalysisConfig, analyze};
    use flakestat::model::{PrNumber, SignatureId};

    let linker = || Outcome::Unmatched(vec!["error: linker `cc` not found".into()]);
    let mut b = Builder::new();
    let day = |d: i64| t0() + Duration::days(d);
    for d in 0..5 {
        b.run(day(d), From::Main, &[matrix(&[])]);
    }
    let mut broken = Vec::new();
    for d in 5..8 {
        broken.push(b.run(
            day(d),
            From::Main,
            &[matrix(&[("linux-64", "3.12", linker())])],
        ));
    }
    b.run(
        day(9),
        From::Mirror(50),
        &[matrix(&[("linux-64", "3.13", linker())])],
    );
    let novel = Outcome::Unmatched(vec![
        "E   ValueError: a stream of 42 is not a stream".into(),
    ]);
    b.run(
        day(9),
        From::Mirror(51),
        &[matrix(&[("win-64", "3.12", novel)])],
    );
    b.run(
        day(9),
        From::Mirror(52),
        &[matrix(&[("win-64", "3.13", Outcome::Expired)])],
    );
    let shared = || Outcome::Unmatched(vec!["fatal: the remote end hung up unexpectedly".into()]);
    b.run(
        day(10),
        From::Mirror(53),
        &[matrix(&[("linux-64", "3.14", shared())])],
    );
    b.run(
        day(10),
        From::Pr(54),
        &[matrix(&[("linux-64", "3.14", shared())])],
    );
    let lost = b.run(
        day(11),
        From::Mirror(55),
        &[matrix(&[("win-64", "3.14", Outcome::Hit(vec![]))])],
    );
    let mut snapshot = b.finish();
    // Make the hit on #55 an infrastructure signature's.
    let job = snapshot
        .jobs
        .iter()
        .find(|j| j.run_id == lost && j.is_failed())
        .unwrap()
        .id;
    snapshot.classifications.get_mut(&job).unwrap().matches[0].signature =
        SignatureId("runner-lost".into());
    let config = AnalysisConfig::default();
    let data = analyze(&snapshot, &[signature()], &config);
    let label = |n: u64| {
        let report = label_pr(&snapshot, &data, &PrQuery::new(PrNumber(n)), &config);
        assert_eq!(report.jobs.len(), 1, "PR #{n}: one failed job");
        (report.jobs[0].clone(), report.all_explained())
    };

    let (j, explained) = label(50);
    assert_eq!(j.label, Label::BrokenOnDefaultBranch, "{}", j.reason);
    assert_eq!(j.broken_since.as_ref().map(|r| r.run_id), Some(broken[0]));
    assert_eq!(j.broken_runs, 3);
    assert!(explained);

    let (j, explained) = label(51);
    assert_eq!(j.label, Label::LikelyThisPr, "{}", j.reason);
    assert!(j.line.as_deref().unwrap().contains("ValueError"));
    assert!(!explained);

    let (j, explained) = label(52);
    assert_eq!(j.label, Label::Unknown, "{}", j.reason);
    assert!(j.reason.contains("410"), "{}", j.reason);
    assert!(!explained);

    for n in [53, 54] {
        let (j, _) = label(n);
        assert_eq!(j.label, Label::Unknown, "PR #{n}: {}", j.reason);
        assert_eq!(j.hits_other_prs, 1, "PR #{n}: the other PR shows it");
    }

    let (j, explained) = label(55);
    assert_eq!(j.label, Label::Infrastructure, "{}", j.reason);
    assert!(explained);
}

/// `serve --pr-comments --pr-checks` as a GitHub App: a delivered run of an unrelated PR the
/// flake hit brings that PR's comment and check run (known flake, since #2371); the same run
/// attempt delivered again writes nothing more.
#[test]
fn serve_keeps_a_prs_comment_and_check_run_after_a_delivered_run() {
    use crate::serve::Serve;
    let gh = app_github();
    let dir = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cache = dir.path().join("cache");
    common::copy_dir(common::surveyed_story(), &cache);
    let ds = dataset();
    let hits = hit_jobs();
    // A completed run of an unrelated PR whose latest attempt the flake hit.
    let run = ds
        .runs
        .iter()
        .filter(|r| r.run.is_completed() && r.run.created_at.to_rfc3339().as_str() < "2026-07-31")
        .find(|r| {
            pr_of(r).is_some_and(|p| ![RELATED_PR, FORK_PR].contains(&p))
                && r.all_jobs()
                    .iter()
                    .any(|j| j.run_attempt == r.run.run_attempt && hits.contains_key(&j.id.0))
        })
        .expect("a PR run the flake hit");
    let n = pr_of(run).unwrap();
    let key = common::root().join("fixtures/github-app/app-key.pem");
    let sigs = common::signatures();
    let serve = Serve::start(
        dir.path(),
        &[
            "--repo",
            REPO,
            "--cache-dir",
            cache.to_str().unwrap(),
            "--signatures",
            sigs.to_str().unwrap(),
            "--api-url",
            &gh.api_url(),
            "--app-id",
            &APP_ID.to_string(),
            "--app-key",
            key.to_str().unwrap(),
            "--resync",
            "0",
            "--pr-comments",
            "--pr-checks",
        ],
    );
    let payload = serde_json::to_vec(&serde_json::json!({
        "action": "completed",
        "repository": { "full_name": REPO },
        "workflow_run": {
            "id": run.run.id.0,
            "run_attempt": run.run.run_attempt,
            "created_at": run.run.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "status": "completed",
            "conclusion": "failure",
        },
    }))
    .unwrap();
    let (status, _) = serve.deliver("workflow_run", "pr-run-1", &payload, None);
    assert_eq!(status, 202);
    serve.wait_until("the run ingested", |s| {
        s.metric("flakestat_ingests_total{outcome=\"done\"}") > 0
    });
    // The same attempt under a new delivery id is known ingested (issue 41): answered at once,
    // with no ingest and so no write to the PR.
    let (status, body) = serve.deliver("workflow_run", "pr-run-2", &payload, None);
    assert_eq!(status, 200, "{body:?}");
    let (code, stderr) = serve.stop();
    assert_eq!(code, 0, "{stderr}");
    let comments = gh.comments(n);
    assert_eq!(comments.len(), 1, "{stderr}");
    let body = &comments[0].body;
    assert!(body.starts_with(&format!("<!-- flakestat:pr {REPO}#{n} -->")));
    assert!(body.contains("known flake"), "{body}");
    assert!(body.contains(&format!("since #{CULPRIT_PR}")), "{body}");
    // One write of each per PR per run attempt: the second delivery wrote nothing.
    assert_eq!(gh.request_count(RouteKind::CreateComment), 1, "{stderr}");
    assert_eq!(gh.request_count(RouteKind::UpdateComment), 0);
    assert_eq!(gh.request_count(RouteKind::CreateCheckRun), 1, "{stderr}");
    assert_eq!(gh.request_count(RouteKind::UpdateCheckRun), 0);
    let checks: usize = ds
        .runs
        .iter()
        .filter(|r| pr_of(r) == Some(n))
        .map(|r| r.run.head_sha.0.clone())
        .collect::<BTreeSet<_>>()
        .iter()
        .map(|sha| gh.check_runs(sha).len())
        .sum();
    assert_eq!(checks, 1, "one check run, on the PR's head");
}
