//! `flakestat signatures audit`: how each signature behaves on the real logs of the store.
//!
//! Per signature: the jobs and runs it matches, its last hit, the signatures it shares jobs
//! with, and findings — a pattern that matches boilerplate every failed step prints (the
//! exit-code line, a `##[group]Run` header, runner chatter), one too broad (its matches span
//! many unrelated line shapes across a large share of all failed jobs), one that matches very
//! many distinct tests, one mostly claiming jobs another signature claims, and (a note, not an
//! alarm) one with no hit in the last N days: a removal candidate.
//!
//! Pure: a snapshot and specs in, the audit out. Elastic-recheck's share of matches in
//! *successful* jobs needs a sample of green logs: [`green`](super::green) picks it and adds
//! each signature's share (and its alarm) to this audit.

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;
use serde::Serialize;

use super::green::GreenShare;
use super::in_survey_window;
use super::unclassified::line_template;
use crate::model::{RunId, Snapshot, Timestamp};
use crate::signatures::SignatureSpec;
use crate::signatures::forms::FORMS;

/// Lines every failed job prints whatever failed: a signature matching one is too broad.
const BOILERPLATE: &[&str] = &[
    "##[group]Run pytest -v tests/",
    "##[endgroup]",
    "shell: /usr/bin/bash -e {0}",
    "Current runner version: '2.330.0'",
    "Post job cleanup.",
    "Cleaning up orphan processes",
    "Complete job name: test (ubuntu-latest, 3.12)",
    "Error: Process completed with exit code 1.",
    "##[error]Process completed with exit code 1.",
];

/// Thresholds of the findings.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// No hit in this many days before the window's end: a removal candidate.
    pub stale_days: i64,
    /// Too broad: at least this many distinct line shapes …
    pub broad_shapes: usize,
    /// … over at least this share of the failed jobs with a log.
    pub broad_share: f64,
    /// More distinct tests than this.
    pub many_tests: usize,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            stale_days: 30,
            broad_shapes: 3,
            broad_share: 0.25,
            many_tests: 100,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    Boilerplate,
    TooBroad,
    ManyTests,
    Overlap,
    /// It matches the log of a successful job (`--green-sample`).
    GreenMatch,
    /// A note: never an alarm.
    Stale,
}

impl FindingKind {
    /// Whether `--strict` fails on it.
    pub fn is_alarm(self) -> bool {
        self != FindingKind::Stale
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignatureAudit {
    pub id: String,
    pub jobs: u64,
    pub runs: u64,
    /// Distinct shapes (templates) of its first matching line per job.
    pub shapes: usize,
    pub tests: usize,
    pub last_hit: Option<Timestamp>,
    /// Other signatures matching some of the same jobs: (id, jobs).
    pub overlaps: Vec<(String, u64)>,
    pub findings: Vec<Finding>,
    /// Its matches in sampled successful jobs (unknown until a sample is applied).
    pub green: GreenShare,
}

/// Audits every spec over the failed jobs of the snapshot's window.
pub fn audit(
    snapshot: &Snapshot,
    specs: &[SignatureSpec],
    config: &AuditConfig,
) -> Vec<SignatureAudit> {
    let (mut tallies, with_log) = tally(snapshot, specs);
    // The window's end as the data has it (its latest run), not the clock: the same store
    // gives the same audit.
    let end: Option<Timestamp> = snapshot
        .runs
        .iter()
        .filter(|r| in_survey_window(snapshot, r.created_at))
        .map(|r| r.created_at)
        .max();
    let probes: Vec<&str> = FORMS
        .iter()
        .filter(|f| f.boilerplate)
        .map(|f| f.example)
        .chain(BOILERPLATE.iter().copied())
        .collect();
    specs
        .iter()
        .map(|spec| {
            let a = tallies.remove(spec.id.0.as_str()).unwrap_or_default();
            let mut findings = boilerplate_finding(spec, &probes)
                .into_iter()
                .collect::<Vec<_>>();
            findings.extend(match_findings(&a, with_log, config));
            findings.extend(stale_finding(&a, end, config));
            SignatureAudit {
                id: spec.id.0.clone(),
                jobs: a.jobs,
                runs: a.runs.len() as u64,
                shapes: a.shapes.len(),
                tests: a.tests.len(),
                last_hit: a.last,
                overlaps: a.overlaps.into_iter().collect(),
                findings,
                green: GreenShare::Unknown {
                    reason: "no green sample".into(),
                },
            }
        })
        .collect()
}

/// What one signature matched among the window's failed jobs.
#[derive(Default)]
struct Tally {
    jobs: u64,
    runs: BTreeSet<RunId>,
    shapes: BTreeSet<String>,
    tests: BTreeSet<String>,
    last: Option<Timestamp>,
    overlaps: BTreeMap<String, u64>,
}

/// Each spec's tally over the failed jobs of the window with a log, and how many such jobs
/// there are.
fn tally<'a>(snapshot: &Snapshot, specs: &'a [SignatureSpec]) -> (BTreeMap<&'a str, Tally>, u64) {
    let mut tallies: BTreeMap<&str, Tally> = specs
        .iter()
        .map(|s| (s.id.0.as_str(), Tally::default()))
        .collect();
    let mut with_log = 0u64;
    for job in &snapshot.jobs {
        if !job.is_failed() || !in_survey_window(snapshot, job.created_at) {
            continue;
        }
        let Some(c) = snapshot.classifications.get(&job.id) else {
            continue;
        };
        with_log += 1;
        let ids: Vec<&str> = c.matches.iter().map(|m| m.signature.0.as_str()).collect();
        for m in &c.matches {
            let Some(a) = tallies.get_mut(m.signature.0.as_str()) else {
                continue;
            };
            a.jobs += 1;
            a.runs.insert(job.run_id);
            a.shapes.insert(line_template(&m.text).join(" "));
            a.tests.extend(m.tests.iter().cloned());
            a.last = a.last.max(Some(job.created_at));
            for other in &ids {
                if *other != m.signature.0 {
                    *a.overlaps.entry(other.to_string()).or_default() += 1;
                }
            }
        }
    }
    (tallies, with_log)
}

/// The pattern matches lines every failed job prints (`probes`).
fn boilerplate_finding(spec: &SignatureSpec, probes: &[&str]) -> Option<Finding> {
    let re = Regex::new(&spec.pattern).ok()?;
    let hits: Vec<&str> = probes.iter().copied().filter(|p| re.is_match(p)).collect();
    let first = hits.first()?;
    Some(Finding {
        kind: FindingKind::Boilerplate,
        message: format!(
            "the pattern matches {} boilerplate line(s) every failed job prints, e.g. {first:?}",
            hits.len()
        ),
    })
}

/// Too broad, too many tests, overlapping another signature: read from what it matched.
fn match_findings(a: &Tally, with_log: u64, config: &AuditConfig) -> Vec<Finding> {
    let mut findings = Vec::new();
    let share = if with_log == 0 {
        0.0
    } else {
        a.jobs as f64 / with_log as f64
    };
    if a.shapes.len() >= config.broad_shapes && share >= config.broad_share {
        findings.push(Finding {
            kind: FindingKind::TooBroad,
            message: format!(
                "matches {} of {with_log} failed jobs ({:.0}%) through {} unrelated line shapes; make the pattern narrower",
                a.jobs,
                share * 100.0,
                a.shapes.len()
            ),
        });
    }
    if a.tests.len() > config.many_tests {
        findings.push(Finding {
            kind: FindingKind::ManyTests,
            message: format!("matches {} distinct tests", a.tests.len()),
        });
    }
    for (other, n) in &a.overlaps {
        if a.jobs >= 2 && *n * 2 >= a.jobs {
            findings.push(Finding {
                kind: FindingKind::Overlap,
                message: format!("{n} of its {} jobs are also claimed by {other}", a.jobs),
            });
        }
    }
    findings
}

/// No hit in the window, or none in the last `stale_days` before its `end`.
fn stale_finding(a: &Tally, end: Option<Timestamp>, config: &AuditConfig) -> Option<Finding> {
    let message = match (a.last, end) {
        (None, _) => "no hit in the window".to_string(),
        (Some(last), Some(end)) if (end - last).num_days() >= config.stale_days => format!(
            "no hit in the last {} days (last {})",
            config.stale_days,
            last.format("%Y-%m-%d")
        ),
        _ => return None,
    };
    Some(Finding {
        kind: FindingKind::Stale,
        message: format!("{message}: a removal candidate"),
    })
}
