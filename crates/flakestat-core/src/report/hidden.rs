//! The hidden flakes section (`--green-logs`): the tests retried to a pass inside green jobs,
//! with their executions passed, failed and retried, the cells (job names) they were retried
//! in and the runner minutes the retries cost; then the retry budget per workflow and job.
//! Written once over the shared blocks, so every text format escapes it alike; nothing when no
//! green log was read.

use super::layout::{self, Block, Line, Span, Table, text};
use crate::analysis::hidden::HiddenFlakes;

/// The section, at heading `level`; empty when no green log was read.
pub fn section(h: &HiddenFlakes, level: u8) -> Vec<Block> {
    if h.green_read == 0 {
        return Vec::new();
    }
    let hidden: Vec<_> = h.hidden().collect();
    let mut blocks = vec![
        Block::Heading(level, vec![text("Hidden flakes")]),
        Block::Paragraph(vec![text(format!(
            "{} retried to a pass inside green jobs, in {} read. Passed: the green \
             executions read of the jobs that ran the test, without a retry of it; retry \
             time: each job's duration times its share of test executions that were \
             retries, shared among the tests it retried.",
            layout::plural(hidden.len() as u64, "test", "tests"),
            layout::plural(h.green_read, "green job execution", "green job executions"),
        ))]),
    ];
    if !hidden.is_empty() {
        let rows: Vec<Vec<Line>> = hidden
            .iter()
            .map(|t| {
                let cells: Vec<String> =
                    t.cells.iter().map(|(c, n)| format!("{c} ({n})")).collect();
                vec![
                    vec![Span::Code(t.id.clone())],
                    vec![text(t.runner.clone())],
                    vec![text(t.passed.to_string())],
                    vec![text(t.failed.to_string())],
                    vec![text(t.retried.to_string())],
                    vec![text(t.hidden.to_string())],
                    vec![text(retry_time(t.retry_minutes))],
                    vec![text(cells.join("; "))],
                ]
            })
            .collect();
        blocks.push(Block::Table(Table {
            headers: vec![
                "Test",
                "Runner",
                "Passed",
                "Failed",
                "Retried to a pass",
                "In green jobs",
                "Retry time",
                "Cells",
            ],
            numeric: vec![false, false, true, true, true, true, true, false],
            rows,
        }));
    }
    let budget: Vec<Vec<Line>> = h
        .budget
        .iter()
        .filter(|b| b.green_retried > 0)
        .map(|b| {
            vec![
                vec![text(b.workflow.clone())],
                vec![text(b.job.clone())],
                vec![text(format!("{} of {}", b.green_retried, b.green_read))],
                vec![text(b.retries.to_string())],
                vec![text(retry_time(b.retry_minutes))],
                vec![text(b.share().map_or_else(
                    || "unknown".to_string(),
                    // Two decimals: a share of green jobs is often well under one percent.
                    |s| crate::share::percent_text(s * 100.0, 2),
                ))],
            ]
        })
        .collect();
    if !budget.is_empty() {
        blocks.push(Block::Heading(level + 1, vec![text("Retry budget")]));
        blocks.push(Block::Table(Table {
            headers: vec![
                "Workflow",
                "Job",
                "Green jobs retried",
                "Retries",
                "Retry time",
                "Share of runner time",
            ],
            numeric: vec![false, false, true, true, true, true],
            rows: budget,
        }));
    }
    blocks
}

/// Runner time retries cost, as people say it: `2 s` under a minute (`<1 s` for less but
/// some), `4.5 min`, `2.3 h` from an hour; a cheap retry of one test in a thousand is then
/// not shown as `0.0`.
pub fn retry_time(minutes: f64) -> String {
    match minutes {
        m if m <= 0.0 => "0".to_string(),
        m if m * 60.0 < 0.5 => "<1 s".to_string(),
        m if m < 1.0 => format!("{:.0} s", m * 60.0),
        m if m < 60.0 => format!("{m:.1} min"),
        m => format!("{:.1} h", m / 60.0),
    }
}

#[cfg(test)]
mod unit {
    use super::retry_time;

    #[test]
    fn retry_time_reads_as_people_say_it() {
        assert_eq!(retry_time(0.0), "0");
        assert_eq!(retry_time(0.005), "<1 s");
        assert_eq!(retry_time(0.028), "2 s");
        assert_eq!(retry_time(4.5), "4.5 min");
        assert_eq!(retry_time(138.0), "2.3 h");
    }
}
