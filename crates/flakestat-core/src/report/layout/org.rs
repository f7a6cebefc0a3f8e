//! The layout of a report over several repositories (`analysis::org::OrgReport`), in the same
//! blocks as one repository's (so table, markdown and HTML render it alike): the overview ranks
//! signatures across repositories with a per-repository breakdown and compares their matrix
//! dimensions; with `--signature`, the account lists the repositories it hits, then each
//! repository's own account. The `View::Org` of `layout`, a child of it for its wording helpers;
//! nothing computed here.

use super::{
    Block, Line, Span, Table, code, collapse, date, headline, incomplete_line, no_hits, percent,
    plural, signature_document, summary, text, unclassified_failures, window,
};
use crate::analysis::org::{OrgReport, SignatureAcross};
use crate::analysis::{ReportData, SignatureReport};

/// The title of the page: "CI failures in 3 repositories of octo-org (flakestat)".
pub(super) fn title(org: &OrgReport) -> String {
    let what = match &org.owner {
        Some(owner) => format!("{} repositories of {owner}", org.repos.len()),
        None => format!("{} repositories", org.repos.len()),
    };
    match &org.combined.focus {
        Some(id) => format!("{id} in {what} (flakestat)"),
        None => format!("CI failures in {what} (flakestat)"),
    }
}

/// The whole document.
pub(super) fn document(org: &OrgReport) -> Vec<Block> {
    let mut blocks: Vec<Block> = org
        .repos
        .iter()
        .filter_map(|r| {
            incomplete_line(
                &r.completeness,
                r.repo.as_ref(),
                r.since,
                r.until,
                &r.survey_flags,
            )
        })
        .collect();
    match &org.combined.focus {
        Some(id) => match org.combined.signatures.first().zip(org.signatures.first()) {
            Some((combined, across)) => blocks.extend(signature_account(org, combined, across)),
            None => blocks.extend([
                Block::Heading(1, vec![text("Signature "), code(id.0.clone())]),
                Block::Paragraph(vec![text("No loaded signature has this id.")]),
            ]),
        },
        None => blocks.extend(overview(org)),
    }
    blocks
}

/// "3 repositories of octo-org" or "octo-org/a, octo-org/b".
fn scope(org: &OrgReport) -> String {
    match &org.owner {
        Some(owner) => format!(
            "{} of {owner}",
            plural(org.repos.len() as u64, "repository", "repositories")
        ),
        None => names(org),
    }
}

fn names(org: &OrgReport) -> String {
    let names: Vec<String> = org
        .repos
        .iter()
        .filter_map(|r| r.repo.as_ref().map(|r| r.to_string()))
        .collect();
    names.join(", ")
}

fn repo_of(data: &ReportData) -> String {
    data.repo
        .as_ref()
        .map_or_else(String::new, |r| r.to_string())
}

fn overview(org: &OrgReport) -> Vec<Block> {
    let mut blocks = overview_head(org);
    blocks.push(Block::Heading(2, vec![text("Repositories")]));
    blocks.push(collapse(
        "Repositories",
        org.repos.len(),
        Block::Table(repositories_table(org)),
    ));
    blocks.extend(signatures_section(org));
    blocks.extend(unclassified_section(&org.combined));
    blocks
}

/// The title, the window's figures, the cost, and the repositories left out.
fn overview_head(org: &OrgReport) -> Vec<Block> {
    let repos = plural(org.repos.len() as u64, "repository", "repositories");
    let mut blocks = headline(&scope(org), &org.combined, Some(&repos));
    if !org.without_runs.is_empty() {
        let mut line = vec![text(format!(
            "No run in the window, left out ({}): ",
            org.without_runs.len()
        ))];
        for (i, r) in org.without_runs.iter().enumerate() {
            if i > 0 {
                line.push(text(", "));
            }
            line.push(text(r.to_string()));
        }
        blocks.push(Block::Paragraph(line));
    }
    blocks
}

/// The ranking across repositories, the breakdown per repository, each repository's summary
/// line, the matrix compared, and the signatures with no hit.
fn signatures_section(org: &OrgReport) -> Vec<Block> {
    let c = &org.combined;
    let mut blocks = vec![Block::Heading(2, vec![text("Signatures")])];
    let hit: Vec<(&SignatureReport, &SignatureAcross)> = c
        .signatures
        .iter()
        .zip(&org.signatures)
        .filter(|(s, _)| s.runs_hit > 0)
        .collect();
    if hit.is_empty() {
        blocks.push(Block::Paragraph(vec![text(
            "No signature matched a failed job.",
        )]));
    } else {
        blocks.push(Block::Table(ranking(&hit)));
        blocks.push(Block::Paragraph(vec![text(
            "Per repository: runs hit of the runs since its first hit there (or since the merge \
             that introduced it there), and jobs hit.",
        )]));
        blocks.push(collapse(
            "Signatures per repository",
            hit.iter().map(|(_, a)| a.repos.len()).sum(),
            Block::Table(breakdown(&hit)),
        ));
        blocks.push(Block::Bullets(summaries(org, &hit)));
        let compared: Vec<Block> = hit
            .iter()
            .filter(|(_, a)| !a.dimensions.is_empty())
            .flat_map(|(_, a)| matrix_compared(a))
            .collect();
        if !compared.is_empty() {
            blocks.push(Block::Heading(2, vec![text("Matrix across repositories")]));
            blocks.push(Block::Paragraph(vec![text(
                "Per signature and dimension, the values each repository's hit jobs had (jobs hit \
                 of jobs run), and the values its jobs ran on without a hit.",
            )]));
            blocks.extend(compared);
        }
    }
    blocks.extend(no_hits(&c.signatures));
    blocks
}

/// Each hit signature's summary line in each repository it hits.
fn summaries(org: &OrgReport, hit: &[(&SignatureReport, &SignatureAcross)]) -> Vec<Line> {
    hit.iter()
        .flat_map(|(_, a)| {
            a.repos.iter().filter_map(move |h| {
                let data = org
                    .repos
                    .iter()
                    .find(|r| r.repo.as_ref() == Some(&h.repo))?;
                let s = data.signatures.iter().find(|s| s.id == a.id)?;
                let mut line = vec![code(a.id.0.clone()), text(format!(" in {}: ", h.repo))];
                line.extend(summary(s));
                Some(line)
            })
        })
        .collect()
}

/// Failed jobs no signature explains, grouped across repositories, and unreadable logs.
fn unclassified_section(c: &ReportData) -> Vec<Block> {
    unclassified_failures(c, "grouped by their error lines across repositories")
}

fn repositories_table(org: &OrgReport) -> Table {
    Table {
        headers: vec![
            "Repository",
            "Runs",
            "Failed",
            "Re-run",
            "Failed jobs",
            "Matched",
            "Unclassified",
            "Signatures hit",
        ],
        numeric: vec![false, true, true, true, true, true, true, false],
        rows: org
            .repos
            .iter()
            .map(|r| {
                let mut hit: Line = Vec::new();
                for s in r.signatures.iter().filter(|s| s.runs_hit > 0) {
                    if !hit.is_empty() {
                        hit.push(text(", "));
                    }
                    hit.push(code(s.id.0.clone()));
                    hit.push(text(format!(" ({})", s.runs_hit)));
                }
                if hit.is_empty() {
                    hit.push(text("none"));
                }
                vec![
                    vec![text(repo_of(r))],
                    vec![text(r.runs_total.to_string())],
                    vec![text(r.runs_failed.to_string())],
                    vec![text(r.runs_rerun.to_string())],
                    vec![text(r.jobs_failed.to_string())],
                    vec![text(r.jobs_classified.to_string())],
                    vec![text(r.jobs_unclassified.to_string())],
                    hit,
                ]
            })
            .collect(),
    }
}

fn ranking(hit: &[(&SignatureReport, &SignatureAcross)]) -> Table {
    Table {
        headers: vec![
            "#",
            "Signature",
            "Runs hit",
            "Jobs hit",
            "Share of runs",
            "Repositories",
            "Re-run to green",
            "First hit",
        ],
        numeric: vec![true, false, true, true, true, false, true, false],
        rows: hit
            .iter()
            .enumerate()
            .map(|(i, (s, a))| {
                let share = match &s.impact_window {
                    Some(w) => super::runs_share(s.runs_hit, w.runs, w.percent),
                    None => "n/a".to_string(),
                };
                let title = if s.title.is_empty() {
                    vec![code(s.id.0.clone())]
                } else {
                    vec![code(s.id.0.clone()), text(" "), text(s.title.clone())]
                };
                let repos: Vec<String> = a
                    .repos
                    .iter()
                    .map(|h| format!("{} ({})", h.repo, h.runs_hit))
                    .collect();
                vec![
                    vec![text((i + 1).to_string())],
                    title,
                    vec![text(s.runs_hit.to_string())],
                    vec![text(s.jobs_hit.to_string())],
                    vec![text(share)],
                    vec![text(format!("{}: {}", a.repos.len(), repos.join(", ")))],
                    vec![text(s.runs_rerun_to_green.to_string())],
                    vec![text(s.first_hit.as_ref().map_or_else(
                        || "n/a".to_string(),
                        |h| date(h.run_created_at),
                    ))],
                ]
            })
            .collect(),
    }
}

fn breakdown(hit: &[(&SignatureReport, &SignatureAcross)]) -> Table {
    Table {
        headers: vec![
            "Signature",
            "Repository",
            "Runs hit",
            "Runs",
            "Share",
            "Jobs hit",
            "Re-run to green",
            "First hit",
        ],
        numeric: vec![false, false, true, true, true, true, true, false],
        rows: hit
            .iter()
            .flat_map(|(_, a)| {
                a.repos.iter().map(|h| {
                    vec![
                        vec![code(a.id.0.clone())],
                        vec![text(h.repo.to_string())],
                        vec![text(h.runs_hit.to_string())],
                        vec![text(h.runs.to_string())],
                        vec![text(if h.runs < super::MIN_PERCENT_RUNS {
                            "few runs".to_string()
                        } else {
                            percent(h.percent)
                        })],
                        vec![text(h.jobs_hit.to_string())],
                        vec![text(h.runs_rerun_to_green.to_string())],
                        vec![text(h.first_hit.map_or_else(|| "n/a".to_string(), date))],
                    ]
                })
            })
            .collect(),
    }
}

/// One signature's dimensions, repository by repository: where it hit, where it never did.
fn matrix_compared(a: &SignatureAcross) -> Vec<Block> {
    let rows: Vec<Vec<Line>> = a
        .dimensions
        .iter()
        .flat_map(|d| {
            d.repos.iter().map(|(repo, values)| {
                let hit: Vec<String> = values
                    .iter()
                    .filter(|v| v.jobs_hit > 0)
                    .map(|v| format!("{} ({}/{})", v.value, v.jobs_hit, v.jobs_total))
                    .collect();
                let never: Vec<String> = values
                    .iter()
                    .filter(|v| v.jobs_hit == 0)
                    .map(|v| format!("{} ({})", v.value, v.jobs_total))
                    .collect();
                let shared = if d.shared.is_empty() {
                    "—".to_string()
                } else {
                    d.shared.join(", ")
                };
                vec![
                    vec![text(d.name.clone())],
                    vec![text(repo.to_string())],
                    vec![text(if hit.is_empty() {
                        "—".to_string()
                    } else {
                        hit.join(", ")
                    })],
                    vec![text(if never.is_empty() {
                        "—".to_string()
                    } else {
                        never.join(", ")
                    })],
                    vec![text(shared)],
                ]
            })
        })
        .collect();
    let n = rows.len();
    vec![
        Block::Heading(3, vec![code(a.id.0.clone())]),
        collapse(
            "Dimensions per repository",
            n,
            Block::Table(Table {
                headers: vec![
                    "Dimension",
                    "Repository",
                    "Hit on (jobs hit/run)",
                    "Never hit on (jobs run)",
                    "Hit in every repository",
                ],
                numeric: vec![false, false, false, false, false],
                rows,
            }),
        ),
    ]
}

/// `--signature` over several repositories: where it hits, the matrix side by side, then each
/// repository's own account, one heading level down.
fn signature_account(
    org: &OrgReport,
    combined: &SignatureReport,
    across: &SignatureAcross,
) -> Vec<Block> {
    let mut title = vec![code(combined.id.0.clone())];
    title.push(text(format!(" across {}", scope(org))));
    let mut blocks = vec![Block::Heading(1, title)];
    if !combined.title.is_empty() {
        blocks.push(Block::Paragraph(vec![text(combined.title.clone())]));
    }
    if across.repos.is_empty() {
        blocks.push(Block::Paragraph(vec![text(format!(
            "No hit in {} {}.",
            plural(org.repos.len() as u64, "repository", "repositories"),
            window(&org.combined)
        ))]));
        return blocks;
    }
    let mut hits = vec![Span::Strong(format!(
        "{} in {} of {}",
        plural(combined.runs_hit, "run hit", "runs hit"),
        across.repos.len(),
        plural(org.repos.len() as u64, "repository", "repositories"),
    ))];
    let list: Vec<String> = across
        .repos
        .iter()
        .map(|h| format!("{} ({} of {} runs)", h.repo, h.runs_hit, h.runs))
        .collect();
    hits.push(text(format!(
        " {}: {}; {} jobs hit, {} re-run to green.",
        window(&org.combined),
        list.join(", "),
        combined.jobs_hit,
        combined.runs_rerun_to_green
    )));
    blocks.push(Block::Paragraph(hits));
    let clean: Vec<String> = org
        .repos
        .iter()
        .filter(|r| {
            !across
                .repos
                .iter()
                .any(|h| Some(&h.repo) == r.repo.as_ref())
        })
        .map(|r| format!("{} ({} runs)", repo_of(r), r.runs_total))
        .collect();
    if !clean.is_empty() {
        blocks.push(Block::Paragraph(vec![text(format!(
            "Not hit in: {}.",
            clean.join(", ")
        ))]));
    }
    let pair = [(combined, across)];
    blocks.push(Block::Table(breakdown(&[(pair[0].0, pair[0].1)])));
    if !across.dimensions.is_empty() {
        blocks.push(Block::Heading(2, vec![text("Matrix across repositories")]));
        blocks.extend(matrix_compared(across).into_iter().skip(1));
    }
    for h in &across.repos {
        let Some(data) = org.repos.iter().find(|r| r.repo.as_ref() == Some(&h.repo)) else {
            continue;
        };
        let Some(s) = data.signatures.iter().find(|s| s.id == across.id) else {
            continue;
        };
        blocks.push(Block::Heading(2, vec![text(format!("In {}", h.repo))]));
        blocks.extend(signature_document(data, s).into_iter().map(demote));
    }
    blocks
}

/// One heading level down (a repository's account inside the account across repositories).
fn demote(block: Block) -> Block {
    match block {
        Block::Heading(level, line) => Block::Heading((level + 1).min(6), line),
        Block::Details { summary, blocks } => Block::Details {
            summary,
            blocks: blocks.into_iter().map(demote).collect(),
        },
        other => other,
    }
}
