//! Issue #9, items 1 and 2, end to end: the bundled cuda-python story in both PR styles
//! (GitHub's `pull_request` runs, and cuda-python's `pull-request/<N>` mirror branches), with
//! squash or merge-commit history, surveyed by the real binary against the fake GitHub. The
//! story holds a fork's PR (#2370) on its own graph-code branch whose `pull_request` runs carry
//! `pull_requests: []` and fail with the flake *before* the culprit #2371 merged: taken for
//! ordinary runs, its run would be the first hit and the wrong merge would be blamed.
//!
//! The expected figures are counted here from the dataset (which runs are whose is known from
//! the construction), not taken from the analysis.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{
    self, flake_account, fork_listings, is_fork_run, pr_of, signatures, story_dir,
};
use chrono::{DateTime, Utc};
use flakestat::fake::scenario::cuda_python::{
    CULPRIT_PR, FLAKE_MESSAGE, FORK_PR, FORK_REPO, RELATED_PR, expected,
};
use flakestat::fake::{Dataset, FakeGitHub, FakeLog, Faults};
use flakestat::model::{PrNumber, Timestamp};
use flakestat::report::wire;

const SINCE: &str = "2026-06-15T00:00:00Z";

fn t(s: &str) -> Timestamp {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// A copy of the bundled scenario folder with the given styles in its `scenario.toml`; its
/// folder and the temporary folder holding it.
fn scenario(pr_style: &str, merge_style: &str) -> (PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let story = common::story_with(
        dir.path(),
        &format!("pr_style = \"{pr_style}\"\nmerge_style = \"{merge_style}\"\n"),
    );
    (story, dir)
}

fn flakestat(args: &[&str]) -> Output {
    common::flakestat()
        .args(args)
        .env("GH_TOKEN", "tok")
        .output()
        .expect("the binary runs")
}

/// Surveys from `SINCE` with `source` (`--replay DIR` or `--api-url URL --repo R`); returns
/// the flake's account and stderr.
fn survey(source: &[&str], cache: &Path) -> (wire::Signature, String) {
    let sigs = signatures();
    let mut args = vec!["-v", "survey"];
    args.extend_from_slice(source);
    args.extend_from_slice(&[
        "--since",
        SINCE,
        "--cache-dir",
        cache.to_str().unwrap(),
        "--signatures",
        sigs.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let out = flakestat(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let report: wire::Report = serde_json::from_slice(&out.stdout).unwrap();
    let s = report
        .signatures
        .into_iter()
        .find(|s| s.id == "wait-until-timeout")
        .expect("the flake is reported");
    (s, stderr)
}

/// Runs from `SINCE` up to the culprit's merge, of PRs touching none of the flake's paths,
/// whose every failed job has a log: "zero hits in K runs before".
fn clean_runs_before_the_merge(ds: &Dataset) -> u64 {
    let merged = t(expected::CULPRIT_MERGED_AT);
    let related = [RELATED_PR, FORK_PR, CULPRIT_PR];
    ds.runs
        .iter()
        .filter(|r| r.run.created_at >= t(SINCE) && r.run.created_at < merged)
        .filter(|r| !pr_of(r).is_some_and(|n| related.contains(&n)))
        .filter(|r| {
            r.all_jobs()
                .iter()
                .filter(|j| j.is_failed())
                .all(|j| matches!(ds.logs.get(&j.id), Some(FakeLog::Text(_))))
        })
        .count() as u64
}

/// What "Done when" asks, on one style's report.
fn assert_the_story(s: &wire::Signature, ds: &Dataset, style: &str) {
    let top = s.suspects.first().expect("a suspect");
    assert_eq!(top.pr, Some(PrNumber(CULPRIT_PR)), "{style}");
    assert_eq!(top.touches_paths, Some(true), "{style}");
    let b = s.bisection.as_ref().unwrap();
    // The first hit came 4 h 26 min after #2371 merged (the README's account).
    let after = t(expected::FIRST_HIT) - t(expected::CULPRIT_MERGED_AT);
    assert_eq!(b.minutes_after_merge, Some(after.num_minutes()), "{style}");
    let window = s.impact_window.as_ref().unwrap();
    assert_eq!(window.starts_at, "merge", "{style}");
    assert_eq!(window.start, t(expected::CULPRIT_MERGED_AT), "{style}");
    // N of M, from the merge.
    assert_eq!(s.runs_hit, expected::HIT_RUNS as u64, "{style}");
    assert_eq!(window.runs, expected::RUNS_AFTER_MERGE as u64, "{style}");
    // Zero hits in K runs before the merge.
    assert_eq!(s.runs_hit_before, 0, "{style}");
    assert_eq!(
        s.clean_runs_before,
        clean_runs_before_the_merge(ds),
        "{style}"
    );
    // The first hit is the run of an unrelated merge on main, not the fork's run.
    let first = s.first_hit.as_ref().unwrap();
    assert_eq!(first.run_created_at, t(expected::FIRST_HIT), "{style}");
    assert_eq!(first.origin, "default_branch", "{style}");
    // The fork PR's runs are excluded and listed, its two failing ones as hits.
    let fork: Vec<&wire::ExcludedRun> = s
        .excluded_runs
        .iter()
        .filter(|r| r.pr == PrNumber(FORK_PR))
        .collect();
    let fork_runs = ds.runs.iter().filter(|r| is_fork_run(r)).count();
    assert_eq!(fork.len(), fork_runs, "{style}");
    assert_eq!(
        fork.iter().filter(|r| r.hit).count(),
        expected::FORK_PR_HIT_RUNS,
        "{style}"
    );
    assert!(s.unknown_runs.is_empty(), "{style}: {:?}", s.unknown_runs);
    assert!(
        s.hits.iter().all(|h| h.pr != Some(PrNumber(FORK_PR))),
        "{style}"
    );
}

#[test]
fn both_pr_styles_name_2371_and_exclude_the_fork_pr() {
    for (pr_style, merge_style) in [("mirror", "merge-commit"), ("github", "squash")] {
        let style = format!("{pr_style}, {merge_style}");
        let (story, _dir) = scenario(pr_style, merge_style);
        let ds = Dataset::load(&story).unwrap();
        // The style is what the runs say.
        let events = |e: &str| ds.runs.iter().filter(|r| r.run.event.as_str() == e).count();
        let mirrored = ds
            .runs
            .iter()
            .filter(|r| {
                r.run
                    .head_branch
                    .as_deref()
                    .is_some_and(|b| b.starts_with("pull-request/"))
            })
            .count();
        match pr_style {
            "github" => assert_eq!(mirrored, 0),
            _ => assert!(mirrored > events("pull_request")),
        }
        let merges_have_two_parents = ds.commits.iter().any(|c| c.parents.len() == 2);
        assert_eq!(merges_have_two_parents, merge_style == "merge-commit");

        let cache = tempfile::tempdir().unwrap();
        let replay = ["--replay", story.to_str().unwrap()];
        let (s, stderr) = survey(&replay, cache.path());
        assert_the_story(&s, &ds, &style);
        assert!(
            stderr.contains(", 1 listing PRs for fork runs)"),
            "{style}: {stderr}"
        );
        // A repeat asks the PR listing nothing and reports the same.
        let (again, stderr) = survey(&replay, cache.path());
        assert!(
            stderr.contains(", 0 listing PRs for fork runs)"),
            "{style}: {stderr}"
        );
        assert_eq!(again.suspects, s.suspects, "{style}");
        assert_eq!(again.excluded_runs, s.excluded_runs, "{style}");
    }
}

#[test]
fn a_fork_run_whose_pr_cannot_be_found_is_counted_nowhere_and_listed() {
    let mut ds = Dataset::load(&story_dir()).unwrap();
    ds.pulls.retain(|p| p.number != FORK_PR);
    let fork_runs: Vec<u64> = ds
        .runs
        .iter()
        .filter(|r| is_fork_run(r))
        .map(|r| r.run.id.0)
        .collect();
    let gh = FakeGitHub::start_blocking(ds.clone(), Faults::default()).unwrap();
    let api = gh.api_url();
    let source = ["--api-url", &api, "--repo", "NVIDIA/cuda-python"];
    let cache = tempfile::tempdir().unwrap();
    let (s, _) = survey(&source, cache.path());
    let mut unknown: Vec<u64> = s.unknown_runs.iter().map(|r| r.run_id).collect();
    unknown.sort_unstable();
    assert_eq!(unknown, fork_runs);
    assert_eq!(
        s.unknown_runs.iter().filter(|r| r.hit).count(),
        expected::FORK_PR_HIT_RUNS
    );
    for r in &s.unknown_runs {
        assert_eq!(r.head_repository.as_deref(), Some(FORK_REPO));
        assert!(r.reason.contains("no listed PR"), "{}", r.reason);
    }
    // Never the first hit, a hit, or an excluded (related) run: counted nowhere.
    let first = s.first_hit.as_ref().unwrap();
    assert_eq!(first.run_created_at, t(expected::FIRST_HIT));
    assert!(s.hits.iter().all(|h| !fork_runs.contains(&h.run_id)));
    assert!(
        s.excluded_runs
            .iter()
            .all(|r| !fork_runs.contains(&r.run_id))
    );
    assert_eq!(s.runs_hit, expected::HIT_RUNS as u64);
    assert_eq!(s.suspects[0].pr, Some(PrNumber(CULPRIT_PR)));
    // Listed once: the PR listing covered those runs' times, a repeat does not ask again.
    assert_eq!(fork_listings(&gh), 1);
    let (again, _) = survey(&source, cache.path());
    assert_eq!(fork_listings(&gh), 1);
    assert_eq!(again.unknown_runs, s.unknown_runs);
    // The markdown report says so, with the reason.
    let sigs = signatures();
    let md = flake_account(
        "NVIDIA/cuda-python",
        SINCE,
        cache.path(),
        &[
            "--until",
            "2026-08-02",
            "--signatures",
            sigs.to_str().unwrap(),
        ],
        "markdown",
    );
    assert!(md.contains("Runs of unknown PRs"), "{md}");
    assert!(
        md.contains(&format!(
            "{} runs of PRs that cannot be found left out ({} hit)",
            fork_runs.len(),
            expected::FORK_PR_HIT_RUNS
        )),
        "{md}"
    );
}

/// Issue #9's mirror-style failure ("no merge fits the hits"): with merge commits, a hit run's
/// head on `pull-request/<N>` whose PR has merged since is itself in the default branch's
/// history, and `compare` names it as its own merge base. Its date is when the branch's work
/// began, before the merges it contains (main merged into the branch later): placed by date in
/// the interleaved listing, it sat before #2371, so the hit run seemed to lack #2371 and ruled
/// it out. Placed on the first-parent chain by what it contains, it includes #2371.
#[test]
fn a_merged_pr_branch_head_dated_before_the_culprit_still_includes_it() {
    let (story, _dir) = scenario("mirror", "merge-commit");
    let mut ds = Dataset::load(&story).unwrap();
    let merged = t(expected::CULPRIT_MERGED_AT);
    let main = ds.resolve_ref("main").unwrap();
    let main_history = ds.ancestors(&main);
    // Hit runs on mirror branches whose head main now holds through a merge commit.
    let heads: Vec<flakestat::model::Sha> = ds
        .runs
        .iter()
        .filter(|r| r.run.event == "push".into() && pr_of(r).is_some() && !is_fork_run(r))
        .filter(|r| r.run.head_branch.as_deref() != Some("main"))
        .filter(|r| {
            r.all_jobs().iter().any(|j| {
                j.is_failed()
                    && matches!(ds.logs.get(&j.id), Some(FakeLog::Text(l)) if l.contains(FLAKE_MESSAGE))
            })
        })
        .filter(|r| main_history.contains(&r.run.head_sha))
        .map(|r| r.run.head_sha.clone())
        .collect();
    assert!(!heads.is_empty(), "some hit head merged since");
    for c in ds.commits.iter_mut().filter(|c| heads.contains(&c.sha)) {
        c.date = merged - chrono::TimeDelta::hours(6);
    }
    let gh = FakeGitHub::start_blocking(ds.clone(), Faults::default()).unwrap();
    let api = gh.api_url();
    let cache = tempfile::tempdir().unwrap();
    let (s, _) = survey(
        &["--api-url", &api, "--repo", "NVIDIA/cuda-python"],
        cache.path(),
    );
    let b = s.bisection.as_ref().unwrap();
    assert_eq!(b.verdict, "placed", "{b:?}");
    assert_eq!(s.suspects[0].pr, Some(PrNumber(CULPRIT_PR)));
    let window = s.impact_window.as_ref().unwrap();
    assert_eq!(window.starts_at, "merge");
    assert_eq!(window.runs, expected::RUNS_AFTER_MERGE as u64);
}

/// Issue #23, item 1: long-lived PR branches (`stale_branches = true`) forked from `main` a
/// week before #2371 keep their hit runs after it. In mirror style those runs test the branch
/// as pushed, without #2371: no merge is in every hit run. The report keeps the suspects,
/// ranked as when one fits, with the hit runs that contain and lack each; names #2371 as the
/// best fit, not blamed; says which hit runs lack it and what they test; and counts the impact
/// from the first hit. In GitHub's style the same runs test the PR merged into `main`, #2371
/// is placed, and the related PRs' runs (#2371's own among them) are left out the same way in
/// both: the clean runs before the first hit are equal.
#[test]
fn long_lived_branches_lacking_the_culprit_keep_the_suspects_and_blame_none() {
    let dir = tempfile::tempdir().unwrap();
    let story = |style: &str| {
        let d = dir.path().join(style);
        std::fs::create_dir_all(&d).unwrap();
        common::story_with(
            &d,
            &format!("pr_style = \"{style}\"\nstale_branches = true\n"),
        )
    };
    let (mirror, github) = (story("mirror"), story("github"));
    let ds = Dataset::load(&mirror).unwrap();
    let culprit = ds
        .pulls
        .iter()
        .find(|p| p.number == CULPRIT_PR)
        .and_then(|p| p.merge_commit_sha.clone())
        .unwrap();
    // From the construction: the flake's hit runs whose commit lacks #2371's merge.
    let flaky = |r: &flakestat::fake::FakeRun| {
        r.all_jobs().iter().any(|j| {
            j.is_failed()
                && matches!(ds.logs.get(&j.id), Some(FakeLog::Text(l)) if l.contains(FLAKE_MESSAGE))
        })
    };
    let mut lacking: Vec<u64> = ds
        .runs
        .iter()
        .filter(|r| r.run.created_at > t(expected::CULPRIT_MERGED_AT) && flaky(r))
        .filter(|r| !ds.ancestors(&r.run.head_sha).contains(&culprit))
        .map(|r| r.run.id.0)
        .collect();
    lacking.sort_unstable();
    assert!(!lacking.is_empty(), "the story has hit runs lacking #2371");

    let cache = tempfile::tempdir().unwrap();
    let (s, _) = survey(&["--replay", mirror.to_str().unwrap()], cache.path());
    let b = s.bisection.as_ref().unwrap();
    assert_eq!(b.verdict, "no_merge_in_every_hit_run", "{b:?}");
    assert_eq!(b.reason, "no merge is in every hit run");
    assert_eq!(b.pr, None, "no merge is blamed");
    assert_eq!(b.first_hit_at, Some(t(expected::FIRST_HIT)));
    let window = s.impact_window.as_ref().unwrap();
    assert_eq!(
        (window.starts_at.as_str(), window.start),
        ("first_hit", t(expected::FIRST_HIT))
    );
    let top = &s.suspects[0];
    assert_eq!(top.pr, Some(PrNumber(CULPRIT_PR)), "the best fit is kept");
    assert_eq!(top.touches_paths, Some(true));
    for x in &s.suspects {
        let mut lacked = x.hit_runs_lacking.clone();
        lacked.sort_unstable();
        assert_eq!(lacked, lacking, "{:?}", x.pr);
        assert_eq!(
            (x.hit_runs_containing.len() + x.hit_runs_lacking.len()) as u64,
            b.hits_after,
            "{:?}",
            x.pr
        );
    }
    // What the runs lacking it test: their branch's merge base with main, from before #2371.
    let named: Vec<u64> = b.lacking_top_suspect.iter().map(|r| r.run_id).collect();
    assert_eq!(named, top.hit_runs_lacking);
    for r in &b.lacking_top_suspect {
        let base = r.merge_base.as_ref().expect("fork point fetched");
        let base_at = r.merge_base_at.expect("dated");
        assert!(base_at < t(expected::CULPRIT_MERGED_AT), "{r:?}");
        let run = ds.runs.iter().find(|x| x.run.id.0 == r.run_id).unwrap();
        assert!(
            ds.ancestors(&run.run.head_sha)
                .contains(&flakestat::model::Sha(base.clone()))
        );
        assert_eq!(r.branch, run.run.head_branch);
        assert!(r.pr.is_some());
    }
    // #2371's own runs are related: left out, as in GitHub's style.
    assert!(
        s.excluded_runs.iter().any(|r| r.pr == PrNumber(CULPRIT_PR)),
        "{:?}",
        s.excluded_runs
    );

    let gh_cache = tempfile::tempdir().unwrap();
    let (g, _) = survey(&["--replay", github.to_str().unwrap()], gh_cache.path());
    let gb = g.bisection.as_ref().unwrap();
    assert_eq!(gb.verdict, "placed", "{gb:?}");
    assert_eq!(g.suspects[0].pr, Some(PrNumber(CULPRIT_PR)));
    assert!(g.suspects.iter().all(|x| x.hit_runs_lacking.is_empty()));
    assert_eq!(
        gb.clean_runs_before_first_hit,
        b.clean_runs_before_first_hit
    );
    assert_eq!(g.excluded_runs.len(), s.excluded_runs.len());
    assert_eq!(g.clean_runs_before, clean_runs_before_the_merge(&ds));

    // The prose: the best fit, the runs lacking it with their PR, branch and merge base, what
    // that suggests, and that nothing is blamed.
    let sigs = signatures();
    // No --until: the window ends where the survey ended (the recording's end); one past it
    // would be incomplete (exit 9).
    let md = flake_account(
        "NVIDIA/cuda-python",
        SINCE,
        cache.path(),
        &["--signatures", sigs.to_str().unwrap()],
        "markdown",
    );
    let first = &b.lacking_top_suspect[0];
    let pr = first.pr.unwrap();
    let base = first.merge_base.as_deref().unwrap();
    assert!(
        md.contains(&format!(
            "No merge is in every hit run: #{CULPRIT_PR} fits best (merged 2026-07-15 16:52 UTC) \
             but {} of {} ",
            lacking.len(),
            b.hits_after
        )),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "#{pr} on pull-request/{pr} (merge base {} of ",
            &base[..7]
        )),
        "{md}"
    );
    assert!(
        md.contains("a trigger outside the code (a runner image, a dependency released that day)"),
        "{md}"
    );
    assert!(md.contains(&format!("#{CULPRIT_PR} is not blamed")), "{md}");
    assert!(
        md.contains("| Hit runs with it | Hit runs lacking it |"),
        "{md}"
    );
    assert!(!md.contains("no merge fits the hits"), "{md}");
}
