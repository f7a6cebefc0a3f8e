//! What the nightly report says, in which order, as the shared blocks of `report::layout`. Text
//! is plain; `markdown.rs` and `table.rs` escape it. `limit` caps the rows of every section (the
//! markdown comment's trimming); a trimmed section says how many rows it left out.

use super::NightlyView;
use crate::analysis::UnclassifiedGroup;
use crate::analysis::nightly::{
    ChangeKind, Count, JobLink, MAX_JOBS_PER_ITEM, MIN_EXPECTED_FADING, MIN_RISING_HITS,
    NightlyData, RISING_P, SignatureChange, WindowSummary,
};
use crate::report::layout::{
    self, Block, Line, Span, Table, date, error_lines_cell, failing_tests_cell, incomplete_line,
    job_names_cell,
};
use crate::share::{percent_text, rounded};

/// Job links shown per row.
const JOBS_PER_ROW: usize = 5;
/// Text from outside (job names, titles) is cut to this many characters.
const MAX_TEXT: usize = 120;

fn text(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

fn code(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}

fn cut(s: &str) -> String {
    if s.chars().count() > MAX_TEXT {
        s.chars().take(MAX_TEXT).collect::<String>() + "…"
    } else {
        s.to_string()
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `6 of 20 runs (30%)`.
pub fn share(c: Count) -> String {
    if c.runs == 0 {
        format!("{} of 0 runs", c.hits)
    } else {
        format!(
            "{} of {} ({})",
            c.hits,
            plural(c.runs, "run", "runs"),
            percent_text(rounded(c.rate()), 0)
        )
    }
}

/// A probability as people read it: two decimals, four when small, a bound when tiny.
pub fn probability(p: f64) -> String {
    if p >= 0.01 {
        format!("{p:.2}")
    } else if p >= 0.0001 {
        format!("{p:.4}")
    } else {
        "< 0.0001".to_string()
    }
}

/// The most rows any section of `view` has (over all its repositories): trimming never needs a
/// larger limit.
pub fn longest_section(view: NightlyView<'_>) -> usize {
    view.repos()
        .iter()
        .map(repo_longest_section)
        .max()
        .unwrap_or(0)
}

fn repo_longest_section(data: &NightlyData) -> usize {
    [
        data.count(ChangeKind::New),
        data.count(ChangeKind::Rising),
        data.count(ChangeKind::Fading),
        data.new_unclassified.len(),
        data.new_flaky_tests.len(),
        data.seen.len(),
    ]
    .into_iter()
    .max()
    .unwrap_or(0)
}

fn window_sentence(label: &str, w: &WindowSummary) -> Line {
    let mut s = format!(
        "{label} {} to {}: {}",
        date(w.since),
        date(w.until),
        plural(w.runs_total, "run", "runs")
    );
    if w.runs_in_progress > 0 {
        s.push_str(&format!(" ({} still in progress)", w.runs_in_progress));
    }
    s.push_str(&format!(
        ", {} failed; {}, {}.",
        w.runs_failed,
        plural(w.jobs_failed, "failed job", "failed jobs"),
        layout::unclassified_jobs(
            w.jobs_unclassified,
            crate::analysis::LogGap::jobs_in(&w.logs_unknown)
        )
    ));
    vec![text(s)]
}

/// The blocks of `view`, each section showing at most `limit` rows (`None`: all of them): over
/// several repositories, what changed where; then each repository's night (over several, one
/// heading level down).
pub fn document(view: NightlyView<'_>, limit: Option<usize>) -> Vec<Block> {
    let several = matches!(view, NightlyView::Org(_));
    let mut blocks = changed_where(view);
    for data in view.repos() {
        let night = repo_document(data, limit).into_iter();
        if several {
            blocks.extend(night.map(layout::demote));
        } else {
            blocks.extend(night);
        }
    }
    blocks
}

/// One repository's night: its incomplete line, the period and the baseline, the headline and
/// each section.
fn repo_document(data: &NightlyData, limit: Option<usize>) -> Vec<Block> {
    let repo = data
        .repo
        .as_ref()
        .map_or_else(|| "this repository".to_string(), |r| r.to_string());
    let mut blocks: Vec<Block> = incomplete_line(&data.completeness, data.fill_gap.as_deref())
        .into_iter()
        .collect();
    blocks.push(Block::Heading(
        1,
        vec![text(format!("Nightly CI report for {repo}"))],
    ));
    blocks.push(Block::Bullets(vec![
        window_sentence("Period:", &data.period),
        window_sentence("Baseline:", &data.baseline),
    ]));
    blocks.push(headline(data));
    change_sections(&mut blocks, data, limit);
    unclassified_section(&mut blocks, data, limit);
    flaky_tests_section(&mut blocks, data, limit);
    hidden_flaky_section(&mut blocks, data, limit);
    incidents_section(&mut blocks, data);
    bad_hosts_section(&mut blocks, data);
    seen_section(&mut blocks, data, limit);
    blocks.extend(gaps_paragraph(data));
    blocks
}

/// Over several repositories, the title and what changed where (one row per repository);
/// nothing over one (its own night says it).
fn changed_where(view: NightlyView<'_>) -> Vec<Block> {
    let NightlyView::Org(many) = view else {
        return Vec::new();
    };
    let n = many.repos.len() as u64;
    let what = match &many.owner {
        Some(owner) => format!("{} of {owner}", plural(n, "repository", "repositories")),
        None => plural(n, "repository", "repositories"),
    };
    let count = |n: usize| vec![text(n.to_string())];
    let rows = many
        .repos
        .iter()
        .map(|d| {
            let repo = d.repo.as_ref().map_or_else(String::new, |r| r.to_string());
            vec![
                vec![text(repo)],
                count(d.count(ChangeKind::New)),
                count(d.count(ChangeKind::Rising)),
                count(d.count(ChangeKind::Fading)),
                count(d.new_unclassified.len()),
                count(d.new_flaky_tests.len()),
                vec![text(d.period.runs_total.to_string())],
            ]
        })
        .collect();
    vec![
        Block::Heading(1, vec![text(format!("Nightly CI report for {what}"))]),
        Block::Table(Table {
            headers: vec![
                "Repository",
                "New",
                "Rising",
                "Fading",
                "New unclassified",
                "Newly flaky tests",
                "Period runs",
            ],
            numeric: vec![false, true, true, true, true, true, true],
            rows,
        }),
    ]
}

/// "N new, N rising, N fading signatures; N new unclassified failures." (and "; N newly flaky
/// tests" when there are any), or "Nothing changed".
fn headline(data: &NightlyData) -> Block {
    let (new, rising, fading) = (
        data.count(ChangeKind::New),
        data.count(ChangeKind::Rising),
        data.count(ChangeKind::Fading),
    );
    let unclassified = data.new_unclassified.len();
    let flaky = data.new_flaky_tests.len();
    let hosts = data.new_bad_hosts.len();
    if new + rising + fading + unclassified + flaky + hosts == 0 {
        return Block::Paragraph(vec![Span::Strong(
            "Nothing changed: no new, rising or fading signature, no new unclassified failure, \
             no newly flaky test."
                .into(),
        )]);
    }
    let tests = if flaky > 0 {
        format!(
            "; {}",
            plural(flaky as u64, "newly flaky test", "newly flaky tests")
        )
    } else {
        String::new()
    };
    let tests = if hosts > 0 {
        format!(
            "{tests}; {}",
            plural(
                hosts as u64,
                "host newly on the drain list",
                "hosts newly on the drain list"
            )
        )
    } else {
        tests
    };
    Block::Paragraph(vec![Span::Strong(format!(
        "{new} new, {rising} rising, {fading} fading {}; {}{tests}.",
        if new + rising + fading == 1 {
            "signature"
        } else {
            "signatures"
        },
        plural(
            unclassified as u64,
            "new unclassified failure",
            "new unclassified failures"
        )
    ))])
}

/// One section per kind of change (new, rising, fading), each a table of at most `limit` rows.
fn change_sections(blocks: &mut Vec<Block>, data: &NightlyData, limit: Option<usize>) {
    for (kind, heading, blurb) in [
        (
            ChangeKind::New,
            "New signatures",
            "Hit in the period, never in the baseline.".to_string(),
        ),
        (
            ChangeKind::Rising,
            "Rising signatures",
            format!(
                "Hit more often than the baseline explains: at least {MIN_RISING_HITS} runs hit, \
                 and the chance of that many hits at the baseline's rate (smoothed: (hits + ½) / \
                 (runs + 1)) is below {RISING_P}."
            ),
        ),
        (
            ChangeKind::Fading,
            "Fading signatures",
            format!(
                "No hit in the period although the baseline's rate predicted at least \
                 {MIN_EXPECTED_FADING} (maybe fixed)."
            ),
        ),
    ] {
        let items: Vec<&SignatureChange> = data.changes.iter().filter(|c| c.kind == kind).collect();
        if items.is_empty() {
            continue;
        }
        blocks.push(Block::Heading(2, vec![text(heading)]));
        blocks.push(Block::Paragraph(vec![text(blurb)]));
        let shown = limit.map_or(items.len(), |l| l.min(items.len()));
        blocks.push(Block::Table(change_table(kind, &items[..shown])));
        more(blocks, items.len() - shown, heading);
    }
}

fn unclassified_section(blocks: &mut Vec<Block>, data: &NightlyData, limit: Option<usize>) {
    if !data.new_unclassified.is_empty() {
        let groups = &data.new_unclassified;
        blocks.push(Block::Heading(2, vec![text("New unclassified failures")]));
        blocks.push(Block::Paragraph(vec![text(
            "Failed jobs no signature explains, grouped by their telling lines (numbers, hex and \
             paths masked), with lines the baseline never had:",
        )]));
        let shown = limit.map_or(groups.len(), |l| l.min(groups.len()));
        blocks.push(Block::Table(unclassified_table(&groups[..shown])));
        more(blocks, groups.len() - shown, "New unclassified failures");
    }
}

/// Hosts newly on the drain list (`report --hosts`), each with its p-value.
fn bad_hosts_section(blocks: &mut Vec<Block>, data: &NightlyData) {
    let hosts = &data.new_bad_hosts;
    if hosts.is_empty() {
        return;
    }
    blocks.push(Block::Heading(
        2,
        vec![text("Hosts newly on the drain list")],
    ));
    blocks.push(Block::Bullets(
        hosts
            .iter()
            .map(|d| {
                vec![
                    code(d.host.clone()),
                    text(" of pool "),
                    code(d.pool.clone()),
                    text(format!(
                        ": failed {} of {} jobs ({} against the pool's {}), p = {}",
                        d.failed,
                        d.jobs,
                        crate::report::hosts::percent(d.rate),
                        crate::report::hosts::percent(d.pool_rate),
                        crate::report::hosts::p_value(d.p_value)
                    )),
                ]
            })
            .collect(),
    ));
}

/// Tests flaky in the period (failed and passed on the same code) that were not in the baseline.
fn flaky_tests_section(blocks: &mut Vec<Block>, data: &NightlyData, limit: Option<usize>) {
    let tests = &data.new_flaky_tests;
    if tests.is_empty() {
        return;
    }
    blocks.push(Block::Heading(2, vec![text("Newly flaky tests")]));
    blocks.push(Block::Paragraph(vec![text(
        "Failed and passed on the same code in the period (re-run to green, green on the same \
         commit, or retried to a pass by its runner), and not in the baseline:",
    )]));
    let shown = limit.map_or(tests.len(), |l| l.min(tests.len()));
    blocks.push(Block::Table(Table {
        headers: vec![
            "Test",
            "Jobs failed",
            "Re-run to green",
            "Same-commit green",
            "Flaky in job",
            "First failure",
            "Since",
            "Baseline",
        ],
        numeric: vec![false, true, true, true, true, false, false, false],
        rows: tests[..shown]
            .iter()
            .map(|t| {
                let count = |n: u64| vec![text(n.to_string())];
                vec![
                    vec![code(t.id.clone())],
                    count(t.jobs_failed),
                    count(t.rerun_to_green),
                    count(t.same_commit_green),
                    count(t.flaky_in_job),
                    vec![text(
                        t.first_failure.map_or_else(String::new, |(run, at)| {
                            format!("{} (run {run})", date(at))
                        }),
                    )],
                    vec![text(
                        t.onset
                            .as_ref()
                            .map(crate::analysis::tests::Onset::describe)
                            .unwrap_or_default(),
                    )],
                    vec![text(match t.baseline {
                        Some(crate::analysis::tests::Verdict::LeftOut) => {
                            "no counted failure (all left out)".to_string()
                        }
                        Some(v) => format!("failed ({})", v.as_str()),
                        None => "did not fail".to_string(),
                    })],
                ]
            })
            .collect(),
    }));
    more(blocks, tests.len() - shown, "Newly flaky tests");
}

/// Tests retried to a pass inside green jobs in the period (`--green-logs`) and not in the
/// baseline.
fn hidden_flaky_section(blocks: &mut Vec<Block>, data: &NightlyData, limit: Option<usize>) {
    let tests = &data.new_hidden_flaky;
    if tests.is_empty() {
        return;
    }
    blocks.push(Block::Heading(2, vec![text("Newly hidden-flaky tests")]));
    blocks.push(Block::Paragraph(vec![text(
        "Retried to a pass by their runner inside jobs that ended green in the period (read from \
         the green logs sampled), and not in the baseline:",
    )]));
    let shown = limit.map_or(tests.len(), |l| l.min(tests.len()));
    blocks.push(Block::Table(Table {
        headers: vec!["Test", "In green jobs", "Passed", "Retry time", "Cells"],
        numeric: vec![false, true, true, true, false],
        rows: tests[..shown]
            .iter()
            .map(|t| {
                let cells: Vec<String> =
                    t.cells.iter().map(|(c, n)| format!("{c} ({n})")).collect();
                vec![
                    vec![code(t.id.clone())],
                    vec![text(t.hidden.to_string())],
                    vec![text(t.passed.to_string())],
                    vec![text(crate::report::hidden::retry_time(t.retry_minutes))],
                    vec![text(cells.join("; "))],
                ]
            })
            .collect(),
    }));
    more(blocks, tests.len() - shown, "Newly hidden-flaky tests");
}

/// The period's incidents (their tests are never newly flaky).
fn incidents_section(blocks: &mut Vec<Block>, data: &NightlyData) {
    blocks.extend(crate::report::incidents::section(&data.incidents, 2));
}

/// Signatures hit in the period with no change worth a section.
fn seen_section(blocks: &mut Vec<Block>, data: &NightlyData, limit: Option<usize>) {
    if !data.seen.is_empty() {
        blocks.push(Block::Heading(2, vec![text("Also seen, no change")]));
        let shown = limit.map_or(data.seen.len(), |l| l.min(data.seen.len()));
        blocks.push(Block::Table(Table {
            headers: vec!["Signature", "Period", "Baseline", "Chance", "Jobs"],
            numeric: vec![false, true, true, true, false],
            rows: data.seen[..shown]
                .iter()
                .map(|s| {
                    vec![
                        title_cell(&s.id.0, &s.title),
                        vec![text(share(s.period))],
                        vec![text(share(s.baseline))],
                        vec![text(probability(s.probability))],
                        jobs_cell(&s.jobs, s.jobs_total),
                    ]
                })
                .collect(),
        }));
        more(blocks, data.seen.len() - shown, "Also seen");
    }
}

/// The period's failed jobs with no readable log, when there are any.
fn gaps_paragraph(data: &NightlyData) -> Option<Block> {
    let gaps: u64 = data.period.logs_unknown.iter().map(|g| g.jobs).sum();
    if gaps == 0 {
        return None;
    }
    let reasons: Vec<String> = data
        .period
        .logs_unknown
        .iter()
        .map(|g| format!("{} {}", g.jobs, g.reason.describe()))
        .collect();
    Some(Block::Paragraph(vec![text(format!(
        "Unknown: {} of the period with no readable log ({}); any of them could be a hit.",
        plural(gaps, "failed job", "failed jobs"),
        reasons.join(", ")
    ))]))
}

fn more(blocks: &mut Vec<Block>, left_out: usize, what: &str) {
    if left_out > 0 {
        blocks.push(Block::Paragraph(vec![text(format!(
            "… and {left_out} more ({what}: see `flakestat nightly --format json` for every row)."
        ))]));
    }
}

fn title_cell(id: &str, title: &str) -> Line {
    if title.is_empty() {
        vec![code(id)]
    } else {
        vec![code(id), text(" "), text(cut(title))]
    }
}

fn jobs_cell(jobs: &[JobLink], total: u64) -> Line {
    let mut line: Line = Vec::new();
    for (i, j) in jobs.iter().take(JOBS_PER_ROW).enumerate() {
        if i > 0 {
            line.push(text(" "));
        }
        line.push(Span::Url {
            text: format!("job {}", j.job_id),
            url: Some(j.url.clone()),
        });
    }
    let shown = jobs.len().min(JOBS_PER_ROW) as u64;
    if total > shown {
        line.push(text(format!(" and {} more", total - shown)));
    }
    if line.is_empty() {
        line.push(text(""));
    }
    line
}

fn change_table(kind: ChangeKind, items: &[&SignatureChange]) -> Table {
    let (chance, jobs) = match kind {
        ChangeKind::Fading => ("Chance of no hit", "Last hits"),
        _ => ("Chance", "Jobs"),
    };
    let mut headers = vec!["Signature", "Period", "Baseline"];
    let mut numeric = vec![false, true, true];
    if kind != ChangeKind::New {
        headers.push(chance);
        numeric.push(true);
    }
    headers.extend(["Job names", jobs]);
    numeric.extend([false, false]);
    let rows = items
        .iter()
        .map(|c| {
            let mut row = vec![
                title_cell(&c.id.0, &c.title),
                vec![text(share(c.period))],
                vec![text(share(c.baseline))],
            ];
            if kind != ChangeKind::New {
                row.push(vec![text(probability(c.probability))]);
            }
            let mut names: Vec<&str> = c.jobs.iter().map(|j| j.job.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            let mut cell: Line = Vec::new();
            for (i, n) in names.iter().take(3).enumerate() {
                if i > 0 {
                    cell.push(text("; "));
                }
                cell.push(text(cut(n)));
            }
            if names.len() > 3 {
                cell.push(text(format!("; {} more", names.len() - 3)));
            }
            if cell.is_empty() {
                cell.push(text(""));
            }
            row.push(cell);
            row.push(jobs_cell(&c.jobs, c.jobs_total));
            row
        })
        .collect();
    const { assert!(MAX_JOBS_PER_ITEM >= JOBS_PER_ROW) };
    Table {
        headers,
        numeric,
        rows,
    }
}

fn unclassified_table(groups: &[UnclassifiedGroup]) -> Table {
    Table {
        headers: vec![
            "Jobs",
            "Runs",
            "Error lines",
            "Failing tests",
            "Job names",
            "Jobs seen",
        ],
        numeric: vec![true, true, false, false, false, false],
        rows: groups
            .iter()
            .map(|g| {
                let lines = error_lines_cell(&g.lines);
                let names = job_names_cell(&g.job_names, cut);
                let links: Vec<JobLink> = g
                    .examples
                    .iter()
                    .map(|e| JobLink {
                        run_id: e.run_id,
                        attempt: e.attempt,
                        job_id: e.job_id,
                        job: e.job.clone(),
                        created_at: e.created_at,
                        url: e.html_url.clone().unwrap_or_default(),
                        branch: None,
                        pr: None,
                    })
                    .collect();
                vec![
                    vec![text(g.jobs.to_string())],
                    vec![text(g.runs.to_string())],
                    lines,
                    failing_tests_cell(&g.tests),
                    names,
                    jobs_cell(&links, g.jobs),
                ]
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_as_people_write_them() {
        assert_eq!(share(Count { hits: 6, runs: 20 }), "6 of 20 runs (30%)");
        assert_eq!(share(Count { hits: 1, runs: 1 }), "1 of 1 run (100%)");
        assert_eq!(share(Count { hits: 0, runs: 0 }), "0 of 0 runs");
        assert_eq!(probability(0.26), "0.26");
        assert_eq!(probability(0.0034), "0.0034");
        assert_eq!(probability(1e-9), "< 0.0001");
    }
}
