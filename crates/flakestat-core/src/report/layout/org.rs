//! The parts of a report that only a scope of several repositories has (`--org`, `--repo`
//! repeated), as helpers of the one layout of `layout` (its `Scope`, sections and wording): the
//! table of repositories, the column naming the repositories a signature hits, the breakdown per
//! repository, the matrix compared across them, and the `--signature` account across them with
//! each repository's own account. Nothing computed here.

use super::{
    Block, Line, Scope, Span, Table, code, collapse, date, demote, percent, plural,
    signature_document, text, window,
};
use crate::analysis::org::SignatureAcross;
use crate::analysis::{ReportData, SignatureReport};

/// "3 repositories of octo-org" or "octo-org/a, octo-org/b".
pub(super) fn scope_name(scope: &Scope<'_>) -> String {
    match scope.owner {
        Some(owner) => format!(
            "{} of {owner}",
            plural(scope.repos.len() as u64, "repository", "repositories")
        ),
        None => names(scope),
    }
}

fn names(scope: &Scope<'_>) -> String {
    let names: Vec<String> = scope
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

/// The ranking's "Repositories" cell: "2: octo-org/a (5), octo-org/b (1)".
pub(super) fn repositories_cell(across: &SignatureAcross) -> Line {
    let repos: Vec<String> = across
        .repos
        .iter()
        .map(|h| format!("{} ({})", h.repo, h.runs_hit))
        .collect();
    vec![text(format!(
        "{}: {}",
        across.repos.len(),
        repos.join(", ")
    ))]
}

/// The hit signatures' figures in each repository they hit, with what they mean.
pub(super) fn breakdown_section(hit: &[(&SignatureReport, &SignatureAcross)]) -> Vec<Block> {
    vec![
        Block::Paragraph(vec![text(
            "Per repository: runs hit of the runs since its first hit there (or since the merge \
             that introduced it there), and jobs hit.",
        )]),
        collapse(
            "Signatures per repository",
            hit.iter().map(|(_, a)| a.repos.len()).sum(),
            Block::Table(breakdown(hit)),
        ),
    ]
}

/// The hit signatures' matrix dimensions compared across repositories (none when no hit job
/// has a dimension).
pub(super) fn matrix_across(hit: &[(&SignatureReport, &SignatureAcross)]) -> Vec<Block> {
    let compared: Vec<Block> = hit
        .iter()
        .filter(|(_, a)| !a.dimensions.is_empty())
        .flat_map(|(_, a)| matrix_compared(a))
        .collect();
    if compared.is_empty() {
        return compared;
    }
    let mut blocks = vec![
        Block::Heading(2, vec![text("Matrix across repositories")]),
        Block::Paragraph(vec![text(
            "Per signature and dimension, the values each repository's hit jobs had (jobs hit \
             of jobs run), and the values its jobs ran on without a hit.",
        )]),
    ];
    blocks.extend(compared);
    blocks
}

pub(super) fn repositories_table(scope: &Scope<'_>) -> Table {
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
        rows: scope
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
pub(super) fn signature_account(
    scope: &Scope<'_>,
    combined: &SignatureReport,
    across: &SignatureAcross,
) -> Vec<Block> {
    let mut title = vec![code(combined.id.0.clone())];
    title.push(text(format!(" across {}", scope_name(scope))));
    let mut blocks = vec![Block::Heading(1, title)];
    if !combined.title.is_empty() {
        blocks.push(Block::Paragraph(vec![text(combined.title.clone())]));
    }
    if across.repos.is_empty() {
        blocks.push(Block::Paragraph(vec![text(format!(
            "No hit in {} {}.",
            plural(scope.repos.len() as u64, "repository", "repositories"),
            window(scope.all)
        ))]));
        return blocks;
    }
    let mut hits = vec![Span::Strong(format!(
        "{} in {} of {}",
        plural(combined.runs_hit, "run hit", "runs hit"),
        across.repos.len(),
        plural(scope.repos.len() as u64, "repository", "repositories"),
    ))];
    let list: Vec<String> = across
        .repos
        .iter()
        .map(|h| format!("{} ({} of {} runs)", h.repo, h.runs_hit, h.runs))
        .collect();
    hits.push(text(format!(
        " {}: {}; {} jobs hit, {} re-run to green.",
        window(scope.all),
        list.join(", "),
        combined.jobs_hit,
        combined.runs_rerun_to_green
    )));
    blocks.push(Block::Paragraph(hits));
    let clean: Vec<String> = scope
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
        let Some(data) = scope
            .repos
            .iter()
            .find(|r| r.repo.as_ref() == Some(&h.repo))
        else {
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
