//! `flakestat pr`'s output: one PR's failed jobs and their labels (`analysis::pr::PrReport`) as
//! a table for the terminal, markdown (the body of the PR comment, under its marker) or JSON (a
//! versioned document of its own). Table and markdown render the same blocks through the
//! reports' renderers, so log lines, job names and PR titles are escaped (mentions neutralised)
//! the way every report escapes them.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::layout::{Block, Line, Span, Table, date, plural};
use super::{Format, RenderOptions};
use crate::analysis::pr::{Label, LabelledJob, PrReport, rerun_advice};
use crate::model::Repo;

/// The `schema` field of `pr --format json`.
pub const PR_SCHEMA_VERSION: u32 = 1;

/// The largest comment body GitHub takes is 65,536 characters; this leaves room.
pub const MAX_COMMENT_BYTES: usize = 60_000;

/// Rows of the jobs table a comment shows at most (the rest are counted).
const COMMENT_ROWS: usize = 60;

/// Renders `report` in `format` (HTML is not one of `pr`'s: the caller refuses it).
pub fn render(
    report: &PrReport,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => super::sanitize::write_json(out, &to_wire(report)),
        Format::Markdown | Format::Html => super::markdown::render(&document(report, None), out),
        Format::Table => super::table::render(&document(report, None), options, out),
    }
}

/// The hidden first line of the PR's comment: how the next run finds it to edit it.
pub fn marker(repo: Option<&Repo>, report: &PrReport) -> String {
    let repo = repo
        .or(report.repo.as_ref())
        .map(|r| r.to_string())
        .unwrap_or_default();
    format!("<!-- flakestat:pr {repo}#{} -->", report.pr)
}

/// The comment's body: the marker, then the markdown, its table cut to fit one comment.
pub fn render_comment(report: &PrReport, marker: &str) -> String {
    fitted(report, &format!("{marker}\n"))
}

/// A check run's summary: the comment's markdown without the marker, cut to fit.
pub fn render_check_summary(report: &PrReport) -> String {
    fitted(report, "")
}

/// `head` and the markdown, the jobs table cut until it fits in [`MAX_COMMENT_BYTES`].
fn fitted(report: &PrReport, head: &str) -> String {
    let mut limit = COMMENT_ROWS;
    loop {
        let mut out = Vec::new();
        super::markdown::render(&document(report, Some(limit)), &mut out)
            .expect("writing to memory cannot fail");
        let body = format!(
            "{head}{}",
            String::from_utf8(out).expect("the markdown renderer writes UTF-8")
        );
        if body.len() <= MAX_COMMENT_BYTES || limit == 0 {
            return body;
        }
        limit /= 2;
    }
}

/// One sentence: what the failures are, and what to do.
pub fn summary(report: &PrReport) -> String {
    let current: Vec<&LabelledJob> = report.current().collect();
    if report.runs.is_empty() {
        return "No run of this PR found (neither its pull_request runs nor its mirror branch's push runs).".to_string();
    }
    if current.is_empty() {
        let earlier = report.jobs.len() as u64;
        let mut s = format!(
            "No failed job in {} of this PR",
            runs_phrase(report.runs.len() as u64)
        );
        if earlier > 0 {
            s.push_str(&format!(
                " (earlier attempts: {} re-run since)",
                plural(earlier, "failed job", "failed jobs")
            ));
        }
        s.push('.');
        return s;
    }
    let counts: Vec<String> = report
        .counts()
        .iter()
        .map(|(l, n)| format!("{n} {}", l.words()))
        .collect();
    let verdict = if report.all_explained() {
        "none of them is this PR's doing"
    } else {
        "some may be this PR's: look at those first"
    };
    format!(
        "{} in {}: {}; {verdict}.",
        plural(current.len() as u64, "failed job", "failed jobs"),
        runs_phrase(report.runs.len() as u64),
        counts.join(", ")
    )
}

fn runs_phrase(runs: u64) -> String {
    plural(runs, "run", "runs")
}

fn text(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

/// The blocks table and markdown share; `limit` cuts the jobs table (a comment).
fn document(report: &PrReport, limit: Option<usize>) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut title: Line = vec![text(format!("PR #{}", report.pr))];
    if let Some(t) = &report.title {
        title.push(text(format!(": {t}")));
    }
    blocks.push(Block::Heading(2, title));
    blocks.push(Block::Paragraph(vec![text(summary(report))]));
    if let Some(sha) = &report.head_sha {
        let short: String = sha.0.chars().take(12).collect();
        let mut line: Line = vec![text("Head "), Span::Code(short)];
        if let Some(base) = &report.merge_base {
            let short: String = base.0.chars().take(12).collect();
            line.push(text(format!(
                ", merge base with {} ",
                report.default_branch
            )));
            line.push(Span::Code(short));
            if let Some(at) = report.merge_base_at {
                line.push(text(format!(" ({})", date(at))));
            }
        }
        line.push(text("."));
        blocks.push(Block::Paragraph(line));
    }
    if !report.jobs.is_empty() {
        let shown = limit.unwrap_or(usize::MAX).min(report.jobs.len());
        let rows = report.jobs[..shown].iter().map(row).collect();
        blocks.push(Block::Table(Table {
            headers: vec!["Job", "Attempt", "Label", "Why", "Re-run"],
            numeric: vec![false, true, false, false, false],
            rows,
        }));
        if shown < report.jobs.len() {
            blocks.push(Block::Paragraph(vec![text(format!(
                "… and {} more (`flakestat pr` shows them all).",
                plural((report.jobs.len() - shown) as u64, "job", "jobs")
            ))]));
        }
    }
    let e = &report.evidence;
    let mut line = format!(
        "Evidence: {} and {}",
        plural(
            e.runs_default_branch,
            &format!("run of {}", report.default_branch),
            &format!("runs of {}", report.default_branch)
        ),
        plural(e.runs_other_prs, "run of other PRs", "runs of other PRs"),
    );
    // The day alone: what a comment or check run says must not change with the clock, or every
    // run would edit it.
    if let Some(since) = e.since {
        line.push_str(&format!(" since {}", since.format("%Y-%m-%d")));
    }
    line.push('.');
    if !e.complete {
        line.push_str(
            " The store does not hold the whole window yet: the figures leave part of it out.",
        );
    }
    blocks.push(Block::Paragraph(vec![text(line)]));
    blocks
}

fn row(job: &LabelledJob) -> Vec<Line> {
    let name = match &job.html_url {
        Some(url) => Span::Link {
            text: job.job.clone(),
            url: Some(url.clone()),
        },
        None => text(job.job.clone()),
    };
    let mut attempt = job.attempt.to_string();
    if !job.latest_attempt {
        attempt.push_str(" (re-run)");
    }
    vec![
        vec![name],
        vec![text(attempt)],
        vec![Span::Strong(job.label.words().to_string())],
        why(job),
        vec![text(rerun_advice(job))],
    ]
}

/// The evidence behind a label, as a cell.
fn why(job: &LabelledJob) -> Line {
    let mut line: Line = Vec::new();
    if let Some(id) = &job.signature {
        line.push(Span::Code(id.0.clone()));
        line.push(text(" "));
    }
    match job.label {
        Label::KnownFlake => {
            let mut s = String::new();
            if let Some(onset) = &job.onset {
                match onset.pr {
                    Some(pr) => s.push_str(&format!("since #{pr} ({})", date(onset.at))),
                    None => s.push_str(&format!("since {}", date(onset.at))),
                }
            }
            if let Some(p) = job.rate_percent {
                s.push_str(&format!(", {p:.0}% of runs hit"));
            }
            s.push_str(&format!(
                "; {} on the default branch, {} on other PRs",
                plural(job.hits_default_branch, "hit run", "hit runs"),
                job.hits_other_prs
            ));
            line.push(text(s));
            if let Some(issue) = &job.issue {
                line.push(text("; "));
                line.push(Span::Link {
                    text: "issue".into(),
                    url: Some(issue.clone()),
                });
            }
        }
        Label::BrokenOnDefaultBranch => {
            if let Some(first) = &job.broken_since {
                line.push(text(format!(
                    "failing on the default branch since run {} ({}), ",
                    first.run_id,
                    date(first.created_at)
                )));
                line.push(Span::Link {
                    text: "first failing run".into(),
                    url: Some(first.html_url.clone()).filter(|u| !u.is_empty()),
                });
            }
        }
        _ => line.push(text(job.reason.clone())),
    }
    if let Some(l) = &job.line
        && job.label != Label::KnownFlake
    {
        line.push(text(": "));
        line.push(Span::Code(l.clone()));
    }
    line
}

/// `pr --format json`'s document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WirePr {
    pub schema: u32,
    pub repo: Option<String>,
    pub pr: u64,
    pub title: Option<String>,
    pub html_url: Option<String>,
    pub head_sha: Option<String>,
    pub merge_base: Option<String>,
    pub summary: String,
    /// Whether every current failure is a known flake, broken on the default branch or
    /// infrastructure (`pr` then exits 0).
    pub all_explained: bool,
    pub runs: Vec<WirePrRun>,
    pub jobs: Vec<WireLabelledJob>,
    pub evidence: WireEvidence,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WirePrRun {
    pub run_id: u64,
    pub workflow: String,
    pub event: String,
    pub branch: Option<String>,
    pub head_sha: String,
    pub attempt: u32,
    pub conclusion: Option<String>,
    pub created_at: crate::model::Timestamp,
    pub html_url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireLabelledJob {
    pub run_id: u64,
    pub attempt: u32,
    pub latest_attempt: bool,
    pub job_id: u64,
    pub job: String,
    pub html_url: Option<String>,
    /// `known_flake`, `broken_on_default_branch`, `infrastructure`, `likely_this_pr`, `unknown`.
    pub label: String,
    pub signature: Option<String>,
    pub line: Option<String>,
    pub tests: Vec<String>,
    pub rate_percent: Option<f64>,
    /// The merge since which it flakes.
    pub since_pr: Option<u64>,
    pub since: Option<crate::model::Timestamp>,
    pub issue: Option<String>,
    pub hits_default_branch: u64,
    pub hits_other_prs: u64,
    pub broken_since_run: Option<u64>,
    pub touches: Option<String>,
    /// Infrastructure: the drain-list host the job ran on.
    #[serde(default)]
    pub drained_host: Option<WireDrainedHost>,
    pub reason: String,
    pub rerun: String,
}

/// A host on the window's drain list (`report --hosts`' `drain[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireDrainedHost {
    pub pool: String,
    pub host: String,
    pub rate: f64,
    pub pool_rate: f64,
    pub p_value: f64,
    pub p_adjusted: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireEvidence {
    pub since: Option<crate::model::Timestamp>,
    pub until: Option<crate::model::Timestamp>,
    pub runs_default_branch: u64,
    pub runs_other_prs: u64,
    pub complete: bool,
}

pub fn to_wire(report: &PrReport) -> WirePr {
    WirePr {
        schema: PR_SCHEMA_VERSION,
        repo: report.repo.as_ref().map(|r| r.to_string()),
        pr: report.pr.0,
        title: report.title.clone(),
        html_url: report.html_url.clone(),
        head_sha: report.head_sha.as_ref().map(|s| s.0.clone()),
        merge_base: report.merge_base.as_ref().map(|s| s.0.clone()),
        summary: summary(report),
        all_explained: report.all_explained(),
        runs: report
            .runs
            .iter()
            .map(|r| WirePrRun {
                run_id: r.run_id.0,
                workflow: r.workflow.clone(),
                event: r.event.clone(),
                branch: r.branch.clone(),
                head_sha: r.head_sha.0.clone(),
                attempt: r.attempt,
                conclusion: r.conclusion.clone(),
                created_at: r.created_at,
                html_url: r.html_url.clone(),
            })
            .collect(),
        jobs: report
            .jobs
            .iter()
            .map(|j| WireLabelledJob {
                run_id: j.run_id.0,
                attempt: j.attempt,
                latest_attempt: j.latest_attempt,
                job_id: j.job_id.0,
                job: j.job.clone(),
                html_url: j.html_url.clone(),
                label: serde_json::to_value(j.label)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                signature: j.signature.as_ref().map(|s| s.0.clone()),
                line: j.line.clone(),
                tests: j.tests.clone(),
                rate_percent: j.rate_percent,
                since_pr: j.onset.as_ref().and_then(|o| o.pr).map(|p| p.0),
                since: j.onset.as_ref().map(|o| o.at),
                issue: j.issue.clone(),
                hits_default_branch: j.hits_default_branch,
                hits_other_prs: j.hits_other_prs,
                broken_since_run: j.broken_since.as_ref().map(|r| r.run_id.0),
                touches: j.touches.clone(),
                drained_host: j.drained_host.as_ref().map(|d| WireDrainedHost {
                    pool: d.pool.clone(),
                    host: d.host.clone(),
                    rate: d.rate,
                    pool_rate: d.pool_rate,
                    p_value: d.p_value,
                    p_adjusted: d.p_adjusted,
                }),
                reason: j.reason.clone(),
                rerun: rerun_advice(j),
            })
            .collect(),
        evidence: WireEvidence {
            since: report.evidence.since,
            until: report.evidence.until,
            runs_default_branch: report.evidence.runs_default_branch,
            runs_other_prs: report.evidence.runs_other_prs,
            complete: report.evidence.complete,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::pr::{Evidence, Label, LabelledJob, PrReport};
    use crate::model::{JobId, PrNumber, RunId, SignatureId};

    fn job(label: Label, name: &str, line: &str) -> LabelledJob {
        LabelledJob {
            run_id: RunId(7),
            attempt: 1,
            latest_attempt: true,
            job_id: JobId(70),
            job: name.into(),
            html_url: None,
            run_url: "https://github.com/o/r/actions/runs/7".into(),
            workflow: "CI".into(),
            label,
            signature: Some(SignatureId("wait-until-timeout".into())),
            signature_title: None,
            line: Some(line.into()),
            tests: vec![],
            rate_percent: Some(20.8),
            runs_hit: 16,
            onset: None,
            issue: None,
            hits_default_branch: 5,
            hits_other_prs: 10,
            broken_since: None,
            broken_runs: 0,
            touches: None,
            drained_host: None,
            reason: "fails nowhere else in the window".into(),
        }
    }

    fn report(jobs: Vec<LabelledJob>) -> PrReport {
        PrReport {
            repo: crate::model::Repo::parse("o/r"),
            default_branch: "main".into(),
            pr: PrNumber(12),
            title: Some("@everyone look <script>alert(1)</script> | \u{1b}[31mred".into()),
            html_url: None,
            head_sha: None,
            merge_base: None,
            merge_base_at: None,
            runs: vec![crate::analysis::pr::PrRun {
                run_id: RunId(7),
                workflow: "CI".into(),
                event: "push".into(),
                branch: None,
                head_sha: crate::model::Sha("a".into()),
                attempt: 2,
                conclusion: Some("success".into()),
                created_at: chrono::Utc::now(),
                html_url: String::new(),
            }],
            jobs,
            evidence: Evidence {
                since: None,
                until: None,
                runs_default_branch: 3,
                runs_other_prs: 4,
                complete: true,
            },
        }
    }

    #[test]
    fn hostile_text_is_escaped_in_the_comment_and_sanitized_on_the_terminal() {
        let r = report(vec![job(
            Label::LikelyThisPr,
            "Test @octocat \u{1b}]0;title\u{7} | x",
            "E   AssertionError: `a` | @here",
        )]);
        let body = render_comment(&r, &marker(None, &r));
        assert!(body.starts_with("<!-- flakestat:pr o/r#12 -->\n"), "{body}");
        for raw in ["@everyone", "@octocat", "<script>", "\u{1b}"] {
            assert!(!body.contains(raw), "{raw:?} in {body}");
        }
        let mut table = Vec::new();
        render(&r, Format::Table, &RenderOptions::default(), &mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        assert!(!table.contains('\u{1b}'), "{table}");
        assert!(!table.contains('\u{7}'), "{table}");
    }

    #[test]
    fn the_summary_says_what_blocks_and_what_does_not() {
        let flaky = job(Label::KnownFlake, "a", "x");
        let mine = job(Label::LikelyThisPr, "b", "y");
        let mut earlier = job(Label::KnownFlake, "c", "z");
        earlier.latest_attempt = false;
        assert!(
            summary(&report(vec![flaky.clone(), earlier.clone()]))
                .contains("none of them is this PR's doing")
        );
        let both = report(vec![flaky, mine, earlier.clone()]);
        assert!(!both.all_explained());
        assert!(
            summary(&both).starts_with("2 failed jobs in 1 run"),
            "{}",
            summary(&both)
        );
        assert!(summary(&both).contains("1 known flake, 1 likely this PR"));
        let rerun = report(vec![earlier]);
        assert!(rerun.all_explained());
        assert!(
            summary(&rerun).starts_with(
                "No failed job in 1 run of this PR (earlier attempts: 1 failed job re-run since)"
            ),
            "{}",
            summary(&rerun)
        );
        assert!(summary(&report(vec![])).starts_with("No failed job"));
        assert_eq!(
            crate::analysis::pr::rerun_advice(&job(Label::KnownFlake, "a", "x")),
            "re-run: known flake, 21% of runs hit"
        );
    }
}
