//! The nightly JSON report: `"schema": 1`, `"kind": "nightly"`. Wire types of its own, separate
//! from the analysis' structs; removing or renaming a field needs a new schema version.

use std::io::{self, Write};

use super::NightlyView;
use crate::analysis::nightly::{
    ChangeKind, Count, JobLink, MIN_EXPECTED_FADING, MIN_RISING_HITS, NightlyData, NightlyMany,
    RISING_P, WindowSummary,
};
use crate::report::SCHEMA_VERSION;

/// The `kind` field of the nightly report.
pub const KIND: &str = "nightly";

/// The nightly report's types (schema 1). Timestamps are RFC 3339 in UTC.
pub mod wire {
    use serde::{Deserialize, Serialize};

    use crate::model::{PrNumber, Timestamp};
    pub use crate::report::wire::{LogGap, UnclassifiedGroup};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Nightly {
        pub schema: u32,
        /// Always `nightly`.
        pub kind: String,
        /// `OWNER/NAME`.
        pub repo: Option<String>,
        /// What the store does not hold yet over the baseline and the period; left out of both.
        #[serde(flatten)]
        pub completeness: crate::report::wire::Completeness,
        pub period: Window,
        pub baseline: Window,
        /// The thresholds that decided rising and fading.
        pub rules: Rules,
        /// How many of each: `new`, `rising`, `fading` signatures, `new_unclassified` groups.
        pub counts: Counts,
        /// New, then rising, then fading; most period hits first within a kind.
        pub changes: Vec<Change>,
        /// Signatures hit in the period with no change.
        pub seen: Vec<Seen>,
        /// Unclassified failure groups of the period unknown to the baseline.
        pub new_unclassified: Vec<UnclassifiedGroup>,
        /// Tests flaky in the period that were not in the baseline (added within schema 1).
        #[serde(default)]
        pub new_flaky_tests: Vec<NewFlakyTest>,
        /// The period's machine- and job-wide incidents (added within schema 1): their tests
        /// are never newly flaky.
        #[serde(default)]
        pub incidents: Vec<crate::report::incidents::IncidentWire>,
        /// Hosts newly on the drain list (added within schema 1; absent when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub new_bad_hosts: Vec<crate::report::hosts::DrainWire>,
        /// Tests retried to a pass inside green jobs in the period and not in the baseline
        /// (`--green-logs`; added within schema 1; absent when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub new_hidden_flaky: Vec<crate::analysis::hidden::TestExecutions>,
    }

    /// Over several repositories (`nightly --org`, `--repo` repeated): the counts added up, and
    /// each repository's own document, exactly as `nightly --repo` gives it.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct NightlyMany {
        pub schema: u32,
        /// Always `nightly`.
        pub kind: String,
        /// The owner named with `--org`.
        pub owner: Option<String>,
        pub counts: Counts,
        pub repos: Vec<Nightly>,
    }

    /// Either document, written exactly as its own type is.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(untagged)]
    pub enum Document {
        Repo(Box<Nightly>),
        Org(NightlyMany),
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Window {
        pub since: Timestamp,
        pub until: Timestamp,
        pub runs_total: u64,
        pub runs_in_progress: u64,
        pub runs_failed: u64,
        pub jobs_failed: u64,
        /// Failed jobs no signature explains, `jobs_log_unreadable` of them with no readable log.
        pub jobs_unclassified: u64,
        /// Of `jobs_unclassified`, those with no readable log (the sum of `logs_unknown`). Added
        /// within schema 1.
        #[serde(default)]
        pub jobs_log_unreadable: u64,
        pub logs_unknown: Vec<LogGap>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Rules {
        /// Rising: `P(X ≥ hits)` under the smoothed baseline rate is below this.
        pub rising_p: f64,
        /// Rising: at least this many runs hit in the period.
        pub rising_min_hits: u64,
        /// Fading: the baseline rate predicted at least this many period hits.
        pub fading_min_expected: f64,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Counts {
        pub new: u64,
        pub rising: u64,
        pub fading: u64,
        pub new_unclassified: u64,
        /// Added within schema 1.
        #[serde(default)]
        pub new_flaky_tests: u64,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Tally {
        pub hits: u64,
        pub runs: u64,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Change {
        pub id: String,
        pub title: String,
        pub issue: Option<String>,
        /// `new`, `rising` or `fading`.
        pub kind: String,
        pub period: Tally,
        pub baseline: Tally,
        /// New and rising: `P(X ≥ period hits)` at the baseline rate; fading: `P(0 hits)`.
        pub probability: f64,
        /// New and rising: the period's hit jobs; fading: the baseline's last ones. Newest first.
        pub jobs: Vec<Job>,
        /// Hit jobs in all (`jobs` holds at most 20).
        pub jobs_total: u64,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Job {
        pub run_id: u64,
        pub attempt: u32,
        pub job_id: u64,
        pub job: String,
        pub created_at: Timestamp,
        pub url: String,
        pub branch: Option<String>,
        pub pr: Option<PrNumber>,
    }

    /// A test flaky in the period (failed and passed on the same code) and not in the baseline.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct NewFlakyTest {
        pub id: String,
        pub runner: String,
        /// The file part of the id, when it has one.
        pub file: Option<String>,
        /// The period's figures, as `report --tests` counts them.
        pub jobs_failed: u64,
        pub runs_failed: u64,
        pub rerun_to_green: u64,
        pub same_commit_green: u64,
        pub flaky_in_job: u64,
        pub first_failure: Option<FirstFailure>,
        /// Its verdict over the baseline (`broken`, `new`, `unknown`, or `left_out`: failed
        /// there only in left-out runs or incidents); `null` when it did not fail in the
        /// baseline.
        pub baseline_verdict: Option<String>,
        /// Since when it fails, over the period (as `report --tests`'s `onset`).
        #[serde(default)]
        pub onset: Option<crate::report::tests::OnsetWire>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct FirstFailure {
        pub run_id: u64,
        pub created_at: Timestamp,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Seen {
        pub id: String,
        pub title: String,
        pub period: Tally,
        pub baseline: Tally,
        pub probability: f64,
        /// The period's hit jobs, newest first (at most 20).
        pub jobs: Vec<Job>,
        pub jobs_total: u64,
    }
}

fn tally(c: Count) -> wire::Tally {
    wire::Tally {
        hits: c.hits,
        runs: c.runs,
    }
}

fn window(w: &WindowSummary) -> wire::Window {
    wire::Window {
        since: w.since,
        until: w.until,
        runs_total: w.runs_total,
        runs_in_progress: w.runs_in_progress,
        runs_failed: w.runs_failed,
        jobs_failed: w.jobs_failed,
        jobs_unclassified: w.jobs_unclassified,
        jobs_log_unreadable: crate::analysis::LogGap::jobs_in(&w.logs_unknown),
        logs_unknown: w
            .logs_unknown
            .iter()
            .map(|g| wire::LogGap {
                reason: serde_json::to_value(g.reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                description: g.reason.describe().to_string(),
                jobs: g.jobs,
            })
            .collect(),
    }
}

fn job(j: &JobLink) -> wire::Job {
    wire::Job {
        run_id: j.run_id.0,
        attempt: j.attempt,
        job_id: j.job_id.0,
        job: j.job.clone(),
        created_at: j.created_at,
        url: j.url.clone(),
        branch: j.branch.clone(),
        pr: j.pr,
    }
}

fn kind(k: ChangeKind) -> &'static str {
    match k {
        ChangeKind::New => "new",
        ChangeKind::Rising => "rising",
        ChangeKind::Fading => "fading",
    }
}

/// The document for `view`: one repository's [`wire::Nightly`], or several repositories'
/// [`wire::NightlyMany`].
pub fn to_wire(view: NightlyView<'_>) -> wire::Document {
    match view {
        NightlyView::Repo(data) => wire::Document::Repo(Box::new(repo_to_wire(data))),
        NightlyView::Org(many) => wire::Document::Org(org_to_wire(many)),
    }
}

fn repo_to_wire(data: &NightlyData) -> wire::Nightly {
    wire::Nightly {
        schema: SCHEMA_VERSION,
        kind: KIND.to_string(),
        repo: data.repo.as_ref().map(|r| r.to_string()),
        completeness: crate::report::json::completeness(&data.completeness),
        period: window(&data.period),
        baseline: window(&data.baseline),
        rules: wire::Rules {
            rising_p: RISING_P,
            rising_min_hits: MIN_RISING_HITS,
            fading_min_expected: MIN_EXPECTED_FADING,
        },
        counts: wire::Counts {
            new: data.count(ChangeKind::New) as u64,
            rising: data.count(ChangeKind::Rising) as u64,
            fading: data.count(ChangeKind::Fading) as u64,
            new_unclassified: data.new_unclassified.len() as u64,
            new_flaky_tests: data.new_flaky_tests.len() as u64,
        },
        changes: data
            .changes
            .iter()
            .map(|c| wire::Change {
                id: c.id.0.clone(),
                title: c.title.clone(),
                issue: c.issue.clone(),
                kind: kind(c.kind).to_string(),
                period: tally(c.period),
                baseline: tally(c.baseline),
                probability: c.probability,
                jobs: c.jobs.iter().map(job).collect(),
                jobs_total: c.jobs_total,
            })
            .collect(),
        seen: data
            .seen
            .iter()
            .map(|s| wire::Seen {
                id: s.id.0.clone(),
                title: s.title.clone(),
                period: tally(s.period),
                baseline: tally(s.baseline),
                probability: s.probability,
                jobs: s.jobs.iter().map(job).collect(),
                jobs_total: s.jobs_total,
            })
            .collect(),
        new_unclassified: data
            .new_unclassified
            .iter()
            .map(crate::report::json::unclassified_group)
            .collect(),
        new_flaky_tests: data
            .new_flaky_tests
            .iter()
            .map(|t| wire::NewFlakyTest {
                id: t.id.clone(),
                runner: t.runner.clone(),
                file: crate::analysis::tests::file_of(&t.id).map(String::from),
                jobs_failed: t.jobs_failed,
                runs_failed: t.runs_failed,
                rerun_to_green: t.rerun_to_green,
                same_commit_green: t.same_commit_green,
                flaky_in_job: t.flaky_in_job,
                first_failure: t.first_failure.map(|(run, at)| wire::FirstFailure {
                    run_id: run.0,
                    created_at: at,
                }),
                baseline_verdict: t.baseline.map(|v| v.as_str().to_string()),
                onset: t.onset.as_ref().map(crate::report::tests::onset_wire),
            })
            .collect(),
        incidents: crate::report::incidents::to_wire(&data.incidents),
        new_hidden_flaky: data.new_hidden_flaky.clone(),
        new_bad_hosts: data
            .new_bad_hosts
            .iter()
            .map(crate::report::hosts::drain_wire)
            .collect(),
    }
}

fn org_to_wire(many: &NightlyMany) -> wire::NightlyMany {
    let repos: Vec<wire::Nightly> = many.repos.iter().map(repo_to_wire).collect();
    let sum = |f: fn(&wire::Counts) -> u64| repos.iter().map(|r| f(&r.counts)).sum();
    wire::NightlyMany {
        schema: SCHEMA_VERSION,
        kind: KIND.to_string(),
        owner: many.owner.clone(),
        counts: wire::Counts {
            new: sum(|c| c.new),
            rising: sum(|c| c.rising),
            fading: sum(|c| c.fading),
            new_unclassified: sum(|c| c.new_unclassified),
            new_flaky_tests: sum(|c| c.new_flaky_tests),
        },
        repos,
    }
}

pub fn render(view: NightlyView<'_>, out: &mut dyn Write) -> io::Result<()> {
    crate::report::sanitize::write_json(out, &to_wire(view))
}
