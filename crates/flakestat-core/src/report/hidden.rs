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
             minutes: each job's duration times its share of test executions that were \
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
                    vec![text(format!("{:.1}", t.retry_minutes))],
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
                "Retry minutes",
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
                vec![text(format!("{:.1}", b.retry_minutes))],
                vec![text(b.share().map_or_else(
                    || "unknown".to_string(),
                    |s| format!("{:.2}%", s * 100.0),
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
                "Retry minutes",
                "Share of runner time",
            ],
            numeric: vec![false, false, true, true, true, true],
            rows: budget,
        }));
    }
    blocks
}
