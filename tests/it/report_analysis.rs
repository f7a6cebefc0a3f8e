//! The analysis over built snapshots: every figure of the story, re-runs to green, related-PR
//! exclusion, unknown PR files, clean runs before, the matrix, unclassified groups.

use crate::report_fixture::*;
use chrono::Duration;
use flakestat::analysis::bisect::Verdict;
use flakestat::analysis::{
    AnalysisConfig, FindingKind, HitOrigin, ImpactStart, LogGapReason, analyze,
};
use flakestat::model::{PrNumber, RunId, SignatureId};

#[test]
fn the_story_figures_come_out_of_the_snapshot() {
    let (snapshot, sigs, story) = cuda_story();
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let s = &data.signatures[0];
    assert_eq!(s.runs_hit, story.hit_runs.len() as u64);
    assert_eq!(s.jobs_hit, story.jobs_hit);
    assert_eq!(s.runs_hit_default_branch, story.hit_main);
    assert_eq!(s.runs_hit_pr, story.hit_pr);
    assert_eq!(s.runs_hit_pr_unrelated, story.hit_pr);
    assert!(s.pr_relevance_unknown.is_empty());
    assert_eq!(s.runs_rerun_to_green, story.rerun_to_green);
    assert_eq!(s.max_attempts, story.max_attempts);
    assert_eq!(s.clean_runs_before, story.runs_before);
    assert_eq!(s.runs_before_unknown, story.runs_before_unknown);
    assert_eq!(s.runs_hit_before, 0);

    let w = s.impact_window.as_ref().expect("an impact window");
    assert_eq!(w.runs, story.runs_in_impact);
    assert_eq!(w.end, snapshot.until.unwrap());
    let first = s.first_hit.as_ref().unwrap();
    assert_eq!(Some(first.run_id), story.first_hit_run);
    // The bisection names #2371: the impact window starts at its merge, not at the first hit.
    assert_eq!(w.starts_at, ImpactStart::Merge);
    assert_eq!(Some(w.start), story.merged_at);
    assert!(w.start < first.run_created_at);
    let expected = (s.runs_hit as f64 * 1000.0 / w.runs as f64).round() / 10.0;
    assert_eq!(w.percent, Some(expected));

    // Every hit is listed, oldest first, with its link and origin.
    assert_eq!(s.hits.len() as u64, story.jobs_hit);
    assert!(
        s.hits
            .windows(2)
            .all(|p| p[0].run_created_at <= p[1].run_created_at)
    );
    for h in &s.hits {
        assert!(story.hit_runs.contains(&h.run_id));
        assert!(
            h.html_url
                .as_deref()
                .unwrap()
                .ends_with(&h.job_id.to_string())
        );
        assert_eq!(h.origin == HitOrigin::PullRequest, h.pr.is_some());
    }
    assert_eq!(s.tests, story.tests);
}

#[test]
fn related_pr_runs_are_excluded_and_listed_with_the_reason() {
    let (snapshot, sigs, story) = cuda_story();
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let s = &data.signatures[0];
    let got: Vec<(RunId, u64, bool)> = s
        .excluded_runs
        .iter()
        .map(|r| (r.run_id, r.pr.0, r.hit))
        .collect();
    assert_eq!(got, story.excluded);
    for r in &s.excluded_runs {
        assert!(
            r.reason.contains("cuda_core/cuda/core/_memory/_buffer.pyx"),
            "{}",
            r.reason
        );
        assert!(!story.hit_runs.contains(&r.run_id));
        assert!(s.hits.iter().all(|h| h.run_id != r.run_id));
    }
    // The related PR hit first, but the impact window starts at the first counted hit.
    let related_hit = &s.excluded_runs[0];
    assert!(related_hit.created_at < s.impact_window.as_ref().unwrap().start);
}

#[test]
fn pr_files_unknown_are_said_to_be_unknown() {
    let (mut snapshot, sigs, _) = cuda_story();
    // Forget the files of one PR whose run hit.
    let hit_pr = snapshot
        .runs
        .iter()
        .find(|r| r.head_branch.as_deref() == Some("pull-request/2381"))
        .map(|_| 2381)
        .unwrap();
    snapshot.pulls.get_mut(&PrNumber(hit_pr)).unwrap().files = None;
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let s = &data.signatures[0];
    assert_eq!(s.runs_hit_pr_unrelated + 1, s.runs_hit_pr);
    assert_eq!(s.pr_relevance_unknown.len(), 1);
    assert_eq!(s.pr_relevance_unknown[0].pr, Some(PrNumber(hit_pr)));
    assert!(s.pr_relevance_unknown[0].reason.contains("not fetched"));
}

#[test]
fn the_matrix_shows_only_free_threaded_jobs_hit() {
    let (snapshot, sigs, story) = cuda_story();
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let s = &data.signatures[0];
    let python = s.dimensions.iter().find(|d| d.name == "python").unwrap();
    let values: Vec<&str> = python.values.iter().map(|v| v.value.as_str()).collect();
    assert_eq!(values, PYTHONS);
    for v in &python.values {
        if v.value == "3.14t" {
            assert_eq!(v.jobs_hit, story.jobs_hit);
        } else {
            assert_eq!(v.jobs_hit, 0, "{}", v.value);
        }
        assert!(v.jobs_total > 0);
    }
    // Jobs run: one per platform per attempt of every run in the impact window.
    let jobs_3_14t = snapshot
        .jobs
        .iter()
        .filter(|j| j.name.contains("py3.14t") && j.name.starts_with("Test"))
        .filter(|j| {
            let run = snapshot.runs.iter().find(|r| r.id == j.run_id).unwrap();
            run.created_at >= s.impact_window.as_ref().unwrap().start
        })
        .count() as u64;
    assert_eq!(python.values.last().unwrap().jobs_total, jobs_3_14t);

    let py = s.findings.iter().find(|f| f.dimension == "python").unwrap();
    assert_eq!(py.kind, FindingKind::Confined);
    assert_eq!(py.hit_values, ["3.14t"]);
    assert_eq!(py.never_values, ["3.12", "3.13", "3.14"]);
    let platform = s
        .findings
        .iter()
        .find(|f| f.dimension == "platform")
        .unwrap();
    assert_eq!(platform.kind, FindingKind::Everywhere);
}

#[test]
fn a_hit_only_in_the_latest_attempt_is_not_a_rerun_to_green() {
    let mut b = Builder::new();
    let t = t0() + Duration::days(1);
    let hit = || matrix(&[("linux-64", "3.14t", Outcome::Hit(vec![]))]);
    // Attempt 1 fails for another reason, attempt 2 hits: still failing.
    b.run(
        t,
        From::Main,
        &[
            matrix(&[("win-64", "3.12", Outcome::Unmatched(vec!["boom".into()]))]),
            hit(),
        ],
    );
    // Hit, hit, green: re-run to green after 3 attempts.
    b.run(
        t + Duration::hours(1),
        From::Main,
        &[hit(), hit(), matrix(&[])],
    );
    // Hit, then another failure: not green.
    b.run(
        t + Duration::hours(2),
        From::Main,
        &[
            hit(),
            matrix(&[("win-64", "3.12", Outcome::Unmatched(vec!["boom".into()]))]),
        ],
    );
    let snapshot = b.finish();
    let data = analyze(&snapshot, &[signature()], &AnalysisConfig::default());
    let s = &data.signatures[0];
    assert_eq!(s.runs_hit, 3);
    assert_eq!(s.jobs_hit, 4);
    assert_eq!(s.runs_rerun_to_green, 1);
    assert_eq!(s.max_attempts, 3);
    assert_eq!(s.runs_hit_still_failing, 2);
    assert_eq!(data.runs_rerun, 3);
}

#[test]
fn fork_prs_and_unknown_logs_are_unknown_not_guessed() {
    let mut b = Builder::new();
    let t = t0() + Duration::days(1);
    b.run(
        t,
        From::Fork,
        &[matrix(&[("linux-64", "3.14t", Outcome::Hit(vec![]))])],
    );
    b.run(
        t + Duration::hours(1),
        From::Main,
        &[matrix(&[("linux-64", "3.12", Outcome::Expired)])],
    );
    let snapshot = b.finish();
    let data = analyze(&snapshot, &[signature()], &AnalysisConfig::default());
    let s = &data.signatures[0];
    // A fork run whose PR cannot be found (no PR lists its head) is counted nowhere, neither
    // as a hit nor as a PR touching none of the paths (issue #9), and listed with the reason.
    assert_eq!(s.runs_hit, 0);
    assert_eq!(s.runs_hit_pr, 0);
    assert_eq!(s.runs_hit_pr_unrelated, 0);
    assert!(s.first_hit.is_none());
    assert_eq!(s.unknown_runs.len(), 1);
    assert!(s.unknown_runs[0].hit);
    assert!(!s.unknown_runs[0].reason.is_empty());
    assert_eq!(data.jobs_failed, 2);
    assert_eq!(data.jobs_classified, 1);
    assert_eq!(data.jobs_unclassified, 1);
    assert_eq!(data.logs_unknown.len(), 1);
    assert_eq!(data.logs_unknown[0].reason, LogGapReason::Expired);
    assert!(data.unclassified.is_empty());
}

#[test]
fn overview_counts_and_unclassified_groups() {
    let (snapshot, sigs, story) = cuda_story();
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let in_window: Vec<_> = snapshot
        .runs
        .iter()
        .filter(|r| {
            r.created_at >= snapshot.since.unwrap() && r.created_at < snapshot.until.unwrap()
        })
        .collect();
    assert_eq!(data.runs_total, in_window.len() as u64);
    let failed_jobs = snapshot
        .jobs
        .iter()
        .filter(|j| j.is_failed() && in_window.iter().any(|r| r.id == j.run_id))
        .count() as u64;
    assert_eq!(data.jobs_failed, failed_jobs);
    // The story's related-PR hit is in the window too: classified, just not counted for the
    // signature's impact.
    assert_eq!(data.jobs_classified, story.jobs_hit + 1);
    assert_eq!(
        data.jobs_unclassified,
        story.unmatched_jobs + story.expired_jobs
    );
    // The two segfaults differ only in address and path: one group.
    let segv = data
        .unclassified
        .iter()
        .find(|g| g.lines[0].starts_with("Segmentation fault"))
        .unwrap();
    assert_eq!(segv.jobs, 2);
    assert_eq!(segv.runs, 2);
    assert_eq!(data.unclassified.len(), 2);
    assert!(data.unclassified[0].jobs >= data.unclassified[1].jobs);
}

#[test]
fn focus_keeps_one_signature_and_ranking_is_deterministic() {
    let (snapshot, mut sigs, _) = cuda_story();
    let mut quiet = signature();
    quiet.id = SignatureId("aaa-never".into());
    sigs.push(quiet);
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let ids: Vec<&str> = data.signatures.iter().map(|s| s.id.0.as_str()).collect();
    assert_eq!(ids, [SIG, "aaa-never"]);
    let focus = AnalysisConfig {
        focus: Some(SignatureId("aaa-never".into())),
        ..AnalysisConfig::default()
    };
    let data = analyze(&snapshot, &sigs, &focus);
    assert_eq!(data.signatures.len(), 1);
    assert_eq!(data.signatures[0].runs_hit, 0);
    assert!(data.signatures[0].impact_window.is_none());
}

#[test]
fn a_few_hits_say_nothing_about_the_matrix() {
    let mut b = Builder::new();
    let t = t0() + Duration::days(1);
    b.run(
        t,
        From::Main,
        &[matrix(&[("linux-64", "3.12", Outcome::Hit(vec![]))])],
    );
    b.run(
        t + Duration::hours(1),
        From::Main,
        &[matrix(&[("win-64", "3.13", Outcome::Hit(vec![]))])],
    );
    for i in 2..20 {
        b.run(t + Duration::hours(i), From::Main, &[matrix(&[])]);
    }
    let snapshot = b.finish();
    let data = analyze(&snapshot, &[signature()], &AnalysisConfig::default());
    let s = &data.signatures[0];
    let py = s.findings.iter().find(|f| f.dimension == "python").unwrap();
    assert_eq!(py.kind, FindingKind::Confined);
    assert!(!py.significant, "two hits cannot confine: {py:?}");
    assert!(s.findings.iter().all(|f| f.within.is_none()));
    let platform = s
        .findings
        .iter()
        .find(|f| f.dimension == "platform")
        .unwrap();
    assert_eq!(platform.kind, FindingKind::Everywhere);
}

#[test]
fn runs_still_going_and_unreadable_logs_are_not_counted_as_clean() {
    let mut b = Builder::new();
    let t = t0() + Duration::days(1);
    let hit = || matrix(&[("linux-64", "3.14t", Outcome::Hit(vec![]))]);
    b.run(t, From::Main, &[hit()]);
    b.run(t + Duration::hours(1), From::Main, &[matrix(&[])]);
    let expired = b.run(
        t + Duration::hours(2),
        From::Main,
        &[matrix(&[("win-64", "3.14t", Outcome::Expired)])],
    );
    let going = b.run(t + Duration::hours(3), From::Main, &[matrix(&[])]);
    let mut snapshot = b.finish();
    for run in snapshot.runs.iter_mut().filter(|r| r.id == going) {
        run.status = "in_progress".into();
        run.conclusion = None;
    }
    let data = analyze(&snapshot, &[signature()], &AnalysisConfig::default());
    let s = &data.signatures[0];
    let w = s.impact_window.as_ref().unwrap();
    assert_eq!(w.runs, 3, "the run in progress is left out");
    assert_eq!(w.runs_in_progress, 1);
    assert_eq!(
        s.jobs_unknown, 1,
        "run {expired}'s expired log could be a hit"
    );
    assert_eq!(s.runs_hit, 1);
}

#[test]
fn the_merge_that_introduced_it_is_named_with_its_evidence() {
    let (snapshot, sigs, story) = cuda_story();
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let s = &data.signatures[0];
    let b = s.bisection.as_ref().expect("a bisection");
    assert_eq!(b.first_hit, story.first_hit_run);
    let prs: Vec<u64> = b.suspects.iter().map(|x| x.pr.unwrap().0).collect();
    assert_eq!(
        prs,
        [2371, 2380],
        "#2380 merged later, closer to the first hit, but touches nothing"
    );
    let top = &b.suspects[0];
    assert_eq!(top.touches_paths, Some(true));
    assert_eq!(b.suspects[1].touches_paths, Some(false));
    assert_eq!(Some(top.merged_at), story.merged_at);
    match b.verdict {
        Verdict::Placed {
            pr,
            clean_runs_before,
            probability,
        } => {
            assert_eq!(pr, Some(PrNumber(2371)));
            // Every clean run before the merge is evidence, the unknown one is not.
            assert_eq!(clean_runs_before, story.runs_before);
            let p = b.hit_rate().unwrap();
            assert!((probability - (1.0 - p).powi(clean_runs_before as i32)).abs() < 1e-12);
        }
        ref other => panic!("{other:?}"),
    }
    let minutes = (b.first_hit_at.unwrap() - story.merged_at.unwrap()).num_minutes();
    assert_eq!(b.minutes_after_top_suspect, Some(minutes));
}
