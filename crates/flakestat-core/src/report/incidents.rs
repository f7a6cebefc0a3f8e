//! The incidents section ([`analysis::incidents`](crate::analysis::incidents)): one block list
//! every report shares (`report`, `report --tests`, `nightly`), and its JSON wire type.

use serde::{Deserialize, Serialize};

use super::layout::{self, Block, Line, Span, Table, text};
use crate::analysis::incidents::{Incident, IncidentKind};

/// One incident in JSON; fields are only ever added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncidentWire {
    /// `machine_wide` or `job_wide`.
    pub kind: String,
    pub run_id: u64,
    pub run_created_at: String,
    pub run_url: String,
    pub attempt: u32,
    /// The runner pool (machine-wide) or the job's pool (job-wide), when known.
    pub pool: Option<String>,
    pub jobs: Vec<IncidentJobWire>,
    /// Machine-wide: the attempt's jobs on other pools that passed.
    pub jobs_passed_elsewhere: u64,
    /// Job-wide: how many tests the job usually fails.
    pub usual_tests_failed: Option<u64>,
    /// Distinct tests its jobs name as failed: left out of every test's figures.
    pub tests: u64,
    pub line: Option<String>,
    pub signature: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncidentJobWire {
    pub job_id: u64,
    pub name: String,
    pub attempt: u32,
    pub tests_failed: u64,
    pub html_url: Option<String>,
}

pub fn to_wire(incidents: &[Incident]) -> Vec<IncidentWire> {
    incidents
        .iter()
        .map(|i| IncidentWire {
            kind: match i.kind {
                IncidentKind::MachineWide => "machine_wide",
                IncidentKind::JobWide => "job_wide",
            }
            .into(),
            run_id: i.run_id.0,
            run_created_at: i
                .run_created_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            run_url: i.run_url.clone(),
            attempt: i.attempt,
            pool: i.pool.clone(),
            jobs: i
                .jobs
                .iter()
                .map(|j| IncidentJobWire {
                    job_id: j.job_id.0,
                    name: j.name.clone(),
                    attempt: j.attempt,
                    tests_failed: j.tests_failed,
                    html_url: j.html_url.clone(),
                })
                .collect(),
            jobs_passed_elsewhere: i.jobs_passed_elsewhere,
            usual_tests_failed: i.usual_tests_failed,
            tests: i.tests,
            line: i.line.clone(),
            signature: i.signature.as_ref().map(|s| s.0.clone()),
        })
        .collect()
}

/// What happened, in one line: `every job on pool P failed (6 jobs, 31 tests)`.
fn what(i: &Incident) -> String {
    let jobs = layout::plural(i.jobs.len() as u64, "job", "jobs");
    let tests = layout::plural(i.tests, "test", "tests");
    match i.kind {
        IncidentKind::MachineWide => format!(
            "every job on one runner pool failed at once ({jobs}, {tests}); {} on other pools passed",
            layout::plural(i.jobs_passed_elsewhere, "job", "jobs")
        ),
        IncidentKind::JobWide => format!(
            "one job failed {tests} at once, against {} it usually fails",
            i.usual_tests_failed.unwrap_or(1)
        ),
    }
}

/// The section: a heading, what an incident is, and one row per incident (none: no block).
/// `level` is the heading's.
pub fn section(incidents: &[Incident], level: u8) -> Vec<Block> {
    if incidents.is_empty() {
        return Vec::new();
    }
    let rows: Vec<Vec<Line>> = incidents
        .iter()
        .map(|i| {
            let mut run = vec![Span::Link {
                text: format!("run {}", i.run_id),
                url: Some(i.run_url.clone()),
            }];
            if i.attempt > 1 {
                run.push(text(format!(" attempt {}", i.attempt)));
            }
            vec![
                vec![text(layout::date(i.run_created_at))],
                run,
                vec![Span::Strong(i.kind.as_str().to_string())],
                vec![Span::Code(i.pool.clone().unwrap_or_default())],
                vec![text(i.jobs.len().to_string())],
                vec![text(i.tests.to_string())],
                vec![text(what(i))],
                vec![Span::Code(i.line.clone().unwrap_or_default())],
                vec![text(
                    i.signature
                        .as_ref()
                        .map_or_else(|| "unclassified".to_string(), |s| s.0.clone()),
                )],
            ]
        })
        .collect();
    vec![
        Block::Heading(level, vec![text("Incidents")]),
        Block::Paragraph(vec![text(format!(
            "{}: a runner pool whose every job of a run failed at once while other pools passed \
             (machine-wide), or one job failing far more tests than it usually does (job-wide). \
             Their tests are not counted as failing: not flaky on their account, never on the \
             quarantine list.",
            layout::plural(incidents.len() as u64, "incident", "incidents")
        ))]),
        Block::Table(Table {
            headers: vec![
                "Date",
                "Run",
                "Kind",
                "Pool",
                "Jobs",
                "Tests",
                "What",
                "Telling line",
                "Signature",
            ],
            numeric: vec![false, false, false, false, true, true, false, false, false],
            rows,
        }),
    ]
}
