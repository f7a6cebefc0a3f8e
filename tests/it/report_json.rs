//! The JSON report is a contract: deserialized (never compared as a string) and checked field by
//! field against the snapshot it was made from.

use crate::report_fixture::*;
use flakestat::analysis::{AnalysisConfig, analyze};
use flakestat::model::PrNumber;
use flakestat::report::{Format, RenderOptions, SCHEMA_VERSION, render, wire};

fn json(data: &flakestat::analysis::ReportData) -> Vec<u8> {
    let mut out = Vec::new();
    render(data, Format::Json, &RenderOptions::default(), &mut out).unwrap();
    out
}

#[test]
fn required_fields_exist_with_their_names() {
    let (snapshot, sigs, _) = cuda_story();
    let v: serde_json::Value = serde_json::from_slice(&json(&analyze(
        &snapshot,
        &sigs,
        &AnalysisConfig::default(),
    )))
    .unwrap();
    assert_eq!(v["schema"], 1);
    for key in [
        "repo",
        "since",
        "until",
        "runs_total",
        "runs_failed",
        "jobs_failed",
        "jobs_unclassified",
        "signatures",
    ] {
        assert!(v.get(key).is_some(), "top-level {key}");
    }
    let s = &v["signatures"][0];
    for key in [
        "id",
        "title",
        "runs_hit",
        "jobs_hit",
        "impact_window",
        "runs_hit_default_branch",
        "runs_hit_pr_unrelated",
        "runs_rerun_to_green",
        "max_attempts",
        "clean_runs_before",
        "first_hit",
        "excluded_runs",
        "dimensions",
        "tests",
        "hits",
    ] {
        assert!(s.get(key).is_some(), "signature {key}");
    }
    for key in ["start", "end", "runs"] {
        assert!(s["impact_window"].get(key).is_some(), "impact_window.{key}");
    }
    for key in [
        "run_id",
        "attempt",
        "job_id",
        "job",
        "created_at",
        "html_url",
    ] {
        assert!(s["first_hit"].get(key).is_some(), "first_hit.{key}");
    }
    for key in ["run_id", "pr", "reason"] {
        assert!(
            s["excluded_runs"][0].get(key).is_some(),
            "excluded_runs.{key}"
        );
    }
    for key in [
        "run_id",
        "attempt",
        "job_id",
        "job",
        "created_at",
        "event",
        "branch",
        "pr",
        "html_url",
    ] {
        assert!(s["hits"][0].get(key).is_some(), "hits.{key}");
    }
    let cell = &s["dimensions"]["python"]["3.14t"];
    assert!(cell["jobs_hit"].is_u64() && cell["jobs_total"].is_u64());
    // RFC 3339 in UTC.
    let since = v["since"].as_str().unwrap();
    assert!(
        chrono::DateTime::parse_from_rfc3339(since).is_ok(),
        "{since}"
    );
    assert!(since.ends_with('Z'));
}

#[test]
fn values_match_the_snapshot() {
    let (snapshot, sigs, story) = cuda_story();
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let report: wire::Report = serde_json::from_slice(&json(&data)).unwrap();
    assert_eq!(report.schema, SCHEMA_VERSION);
    assert_eq!(report.repo.as_deref(), Some("NVIDIA/cuda-python"));
    assert_eq!(report.since, snapshot.since);
    assert_eq!(report.until, snapshot.until);
    assert_eq!(report.runs_total, data.runs_total);
    assert_eq!(
        report.jobs_unclassified,
        story.unmatched_jobs + story.expired_jobs
    );
    let s = &report.signatures[0];
    assert_eq!(s.id, SIG);
    assert_eq!(s.runs_hit, story.hit_runs.len() as u64);
    assert_eq!(s.jobs_hit, story.jobs_hit);
    assert_eq!(s.runs_hit_default_branch, story.hit_main);
    assert_eq!(s.runs_hit_pr_unrelated, story.hit_pr);
    assert_eq!(s.runs_rerun_to_green, story.rerun_to_green);
    assert_eq!(s.max_attempts, story.max_attempts);
    assert_eq!(s.clean_runs_before, story.runs_before);
    let w = s.impact_window.as_ref().unwrap();
    assert_eq!(w.runs, story.runs_in_impact);
    let first = s.first_hit.as_ref().unwrap();
    assert_eq!(Some(first.run_id), story.first_hit_run.map(|r| r.0));
    // Placed on #2371: the window starts at its merge; the suspects ranked best first.
    assert_eq!(w.starts_at, "merge");
    assert_eq!(Some(w.start), story.merged_at);
    assert_eq!(s.suspects[0].pr, Some(PrNumber(2371)));
    assert_eq!(s.suspects[0].merged_at, w.start);
    assert_eq!(s.suspects[0].touches_paths, Some(true));
    assert!(
        s.suspects
            .windows(2)
            .all(|p| p[0].posterior >= p[1].posterior)
    );
    let b = s.bisection.as_ref().unwrap();
    assert_eq!(b.verdict, "placed");
    assert_eq!(b.pr, Some(PrNumber(2371)));
    assert_eq!(b.first_hit_run_id, Some(first.run_id));
    assert_eq!(
        b.minutes_after_merge,
        Some((first.run_created_at - w.start).num_minutes())
    );
    assert!(b.probability.unwrap() < 0.05);
    let excluded: Vec<(u64, u64)> = s.excluded_runs.iter().map(|r| (r.run_id, r.pr.0)).collect();
    let want: Vec<(u64, u64)> = story.excluded.iter().map(|(r, pr, _)| (r.0, *pr)).collect();
    assert_eq!(excluded, want);
    assert_eq!(s.tests, story.tests);
    assert_eq!(s.hits.len() as u64, story.jobs_hit);
    let py = &s.dimensions["python"];
    assert_eq!(py["3.14t"].jobs_hit, story.jobs_hit);
    assert_eq!(py["3.12"].jobs_hit, 0);
    assert!(py["3.12"].jobs_total > 0);
    // Among the 3.14t jobs, every platform was hit and nothing else is left to read.
    let within = s.within.as_ref().unwrap();
    assert_eq!(within.label, "python=3.14t");
    assert!(!within.dimensions.contains_key("python"));
    for (platform, cell) in &within.dimensions["platform"] {
        assert!(cell.jobs_hit > 0, "{platform}");
    }
    let total: u64 = within.dimensions["platform"]
        .values()
        .map(|c| c.jobs_total)
        .sum();
    assert_eq!(total, py["3.14t"].jobs_total);
    for h in &s.hits {
        assert!(story.hit_runs.contains(&flakestat::model::RunId(h.run_id)));
        assert_eq!(h.origin == "pull_request", h.pr.is_some());
    }
}
