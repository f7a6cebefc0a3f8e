//! The layout every text format shares (table, markdown, HTML): what a view says, in which
//! order, as headings, sentences and tables of cells. One layout for every view: [`document`]
//! and [`title`] take the view (`View::Repo`, one repository's `ReportData`; `View::Org`,
//! several repositories' `OrgReport`), see it as one `Scope` (a list of repositories, a list
//! of one for `View::Repo`, with the figures over them all) and go through the same sections
//! (the headline, the signatures, the unclassified failures, a signature's account), each
//! deciding from the scope what it shows: over several repositories the table of repositories,
//! a "Repositories" column in the ranking and the comparisons across them (`org.rs` holds those
//! helpers); over one, what only a single repository's figures say (where its hits come from,
//! the merge that introduced it, its cost over time). Here too are the blocks and the wording
//! helpers every report shares (`report::nightly` and `report::tests` use them). Text here is
//! plain and unescaped; `markdown.rs`, `table.rs` and `html.rs` escape it for their medium.
//! Nothing is computed here beyond wording and formatting the figures the view carries.

use std::collections::BTreeMap;

use crate::analysis::bisect::{self, Bisection, Suspect, Verdict};
use crate::analysis::cost::Cost;
use crate::analysis::heatmap::HeatMap;
use crate::analysis::org::SignatureAcross;
use crate::analysis::timeline::Timeline;
use crate::analysis::{
    Completeness, DimensionFinding, DimensionReport, FindingKind, Hit, HitOrigin, ImpactStart,
    ReportData, SignatureReport, UnclassifiedGroup,
};
use crate::model::{PrNumber, Repo, RunId, Sha, Timestamp};
use crate::share::percent_text;

mod org;

use super::View;

/// Lists longer than this go in a collapsed `<details>` block in markdown.
pub const COLLAPSE_ROWS: usize = 10;
/// Log text is cut to this many characters in a cell.
pub const MAX_LOG_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq)]
pub enum Span {
    Text(String),
    Strong(String),
    /// Text from a log or an identifier: shown verbatim (code in markdown).
    Code(String),
    /// A command for the user to run, already shell-quoted: shown verbatim and whole (never
    /// cut, never broken inside a word), so that it runs when pasted. The terminal gives it a
    /// line of its own.
    Command(String),
    /// A link whose text is what the terminal shows.
    Link {
        text: String,
        url: Option<String>,
    },
    /// A link whose URL is what the terminal shows (a "link" column).
    Url {
        text: String,
        url: Option<String>,
    },
    /// A one-line sparkline of runs hit per period, oldest first.
    Spark(Vec<u64>),
}

pub type Line = Vec<Span>;

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub headers: Vec<&'static str>,
    /// Per column: right-aligned (numbers).
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<Line>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading(u8, Line),
    Paragraph(Line),
    Bullets(Vec<Line>),
    Table(Table),
    /// Collapsed in markdown when long; shown in full on a terminal.
    Details {
        summary: String,
        blocks: Vec<Block>,
    },
    /// A picture, drawn by each renderer in its medium (SVG, Mermaid, characters).
    Chart(Chart),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    Timeline(Timeline),
    HeatMap(HeatMap),
}

/// Periods in an overview sparkline, at most.
pub const SPARK_PERIODS: usize = 16;

/// Runs hit per period: the timeline's days folded into at most `SPARK_PERIODS` periods.
pub fn spark_periods(t: &Timeline) -> Vec<u64> {
    let per = t.days.len().div_ceil(SPARK_PERIODS).max(1);
    t.days
        .chunks(per)
        .map(|c| c.iter().map(|d| d.runs_hit).sum())
        .collect()
}

/// Hours with one decimal.
pub fn hours(seconds: u64) -> String {
    format!("{:.1}", seconds as f64 / 3600.0)
}

/// "14.2 GPU-hours: 9.1 h of failed jobs, 5.1 h of re-runs", with what is unknown.
pub fn cost_sentence(c: &Cost) -> String {
    let total = c.total_seconds();
    let mut s = if c.gpu_seconds() == total {
        format!("{} GPU-hours", hours(total))
    } else if c.gpu_seconds() == 0 {
        format!("{} runner-hours (none on GPU runners)", hours(total))
    } else {
        format!(
            "{} runner-hours, {} of them GPU-hours",
            hours(total),
            hours(c.gpu_seconds())
        )
    };
    s.push_str(&format!(
        ": {} h of failed jobs, {} h of re-runs",
        hours(c.job_seconds),
        hours(c.rerun_seconds)
    ));
    if let Some(p) = c.price {
        s.push_str(&format!(" ({p:.2} at the configured prices)"));
    }
    if c.jobs_unknown > 0 {
        s.push_str(&format!(
            "; {} without start or completion time, not counted",
            plural(c.jobs_unknown, "job", "jobs")
        ));
    }
    s
}

fn cost_table(c: &Cost) -> Block {
    let rows: Vec<Vec<Line>> = c
        .by_label
        .iter()
        .map(|(label, l)| {
            vec![
                vec![code(label.clone())],
                vec![text(if l.gpu { "yes" } else { "no" })],
                vec![text(hours(l.job_seconds))],
                vec![text(hours(l.rerun_seconds))],
            ]
        })
        .collect();
    let n = rows.len();
    collapse(
        "Cost by runner labels",
        n,
        Block::Table(Table {
            headers: vec!["Runner labels", "GPU", "Failed jobs (h)", "Re-runs (h)"],
            numeric: vec![false, false, true, true],
            rows,
        }),
    )
}

pub(super) fn text(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

fn code(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}

pub fn date(t: Timestamp) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn day(t: Timestamp) -> String {
    t.format("%Y-%m-%d").to_string()
}

pub(super) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `block` one heading level down (at most level 6), inside collapsed sections too: a section
/// shown under a heading of its own (each repository's over several).
pub(super) fn demote(block: Block) -> Block {
    match block {
        Block::Heading(level, line) => Block::Heading((level + 1).min(6), line),
        Block::Details { summary, blocks } => Block::Details {
            summary,
            blocks: blocks.into_iter().map(demote).collect(),
        },
        other => other,
    }
}

/// Fewer runs (or jobs) than this get no percentage: "1 of 3 runs", not "1 of 3 runs (33%)".
pub const MIN_PERCENT_RUNS: u64 = 5;

/// "16 of 77 runs (21%)"; "3 of 4 runs" under [`MIN_PERCENT_RUNS`]; "1 hit, in the latest run"
/// when the one hit run is the only run counted (the window's latest).
fn runs_hit_phrase(hit: u64, runs: u64, p: Option<f64>) -> String {
    match (hit, runs) {
        (1, 1) => "1 hit, in the latest run".to_string(),
        (hit, runs) if runs < MIN_PERCENT_RUNS => {
            format!("{hit} of {}", plural(runs, "run", "runs"))
        }
        (hit, runs) => format!("{hit} of {runs} runs ({})", percent(p)),
    }
}

/// The "Share of runs" cell: "16 of 77 (21%)", "3 of 4" under [`MIN_PERCENT_RUNS`], "1, the
/// latest run".
fn runs_share(hit: u64, runs: u64, p: Option<f64>) -> String {
    match (hit, runs) {
        (1, 1) => "1, the latest run".to_string(),
        (hit, runs) if runs < MIN_PERCENT_RUNS => format!("{hit} of {runs}"),
        (hit, runs) => format!("{hit} of {runs} ({})", percent(p)),
    }
}

fn percent(p: Option<f64>) -> String {
    p.map_or_else(|| "n/a".to_string(), |p| percent_text(p, 0))
}

/// A span of minutes the way people say it: "45 min", "4.4 h", "3.2 days".
pub fn elapsed(minutes: i64) -> String {
    match minutes {
        m if m < 60 => format!("{m} min"),
        m if m < 72 * 60 => format!("{:.1} h", m as f64 / 60.0),
        m => format!("{:.1} days", m as f64 / (24.0 * 60.0)),
    }
}

/// A probability: two decimals, or scientific notation when small.
pub fn probability(p: f64) -> String {
    if p >= 0.01 {
        format!("{p:.2}")
    } else {
        format!("{p:.1e}")
    }
}

/// The top suspect when the bisection placed the flake on it.
fn placed(s: &SignatureReport) -> Option<(&Bisection, &Suspect)> {
    let b = s.bisection.as_ref()?;
    match b.verdict {
        Verdict::Placed { .. } => b.suspects.first().map(|top| (b, top)),
        _ => None,
    }
}

/// "first hit 4.4 h after #2371 merged (run N); zero hits in N runs before #2371 (had the flake
/// been there, seeing none: probability q)", or why no merge is named.
pub fn first_occurrence(s: &SignatureReport, notes: &[String]) -> Option<String> {
    let b = s.bisection.as_ref()?;
    let run = b
        .first_hit
        .map(|r| format!(" (run {r})"))
        .unwrap_or_default();
    Some(match &b.verdict {
        Verdict::Placed {
            pr,
            clean_runs_before,
            probability: q,
        } => {
            let mut notes = notes.to_vec();
            notes.push(format!(
                "had the flake been there, seeing none: probability {}",
                probability(*q)
            ));
            // A direct push is named by its short sha, with its title.
            let (label, landed) = match (pr, b.suspects.first()) {
                (None, Some(top)) => (
                    top.label(),
                    format!("{} (\"{}\") landed", top.label(), top.title),
                ),
                _ => {
                    let label = pr.map(|n| format!("#{n}")).unwrap_or_default();
                    (label.clone(), format!("{label} merged"))
                }
            };
            format!(
                "first hit {} after {landed}{run}; zero hits in {} before {label} ({})",
                elapsed(b.minutes_after_top_suspect.unwrap_or_default()),
                plural(*clean_runs_before, "run", "runs"),
                notes.join("; ")
            )
        }
        Verdict::PresentBeforeWindow {
            clean_runs_before,
            probability: q,
        } => format!(
            "present since before the window: {} before the first hit{run} prove little (had \
             the flake been there, seeing none: probability {}); no merge named",
            plural(*clean_runs_before, "clean run", "clean runs"),
            probability(*q)
        ),
        Verdict::TooRareToPlace {
            clean_runs_before,
            probability: q,
        } => format!(
            "too rare to place on a merge: {} before the first hit{run} prove little (had the \
             flake been there, seeing none: probability {}); no merge named",
            plural(*clean_runs_before, "clean run", "clean runs"),
            probability(*q)
        ),
        Verdict::NotEnoughHits { hits } => format!(
            "not enough runs to place it on a merge: {} from the first hit on (at least {} \
             needed for a hit rate)",
            plural(*hits, "hit", "hits"),
            bisect::MIN_HITS
        ),
        Verdict::NoMergedPrsKnown
        | Verdict::NoMergeBeforeFirstHit
        | Verdict::EveryMergeRuledOut => {
            format!("no merge named: {}{run}", b.verdict.reason())
        }
        Verdict::NoMergeInEveryHitRun => match b.suspects.first() {
            Some(top) => no_merge_in_every_hit_run(b, top, &run),
            None => format!("no merge named: {}{run}", b.verdict.reason()),
        },
        Verdict::MachineWide {
            run: at,
            pool,
            host,
            jobs,
        } => format!(
            "machine-wide: all {} in run {at} on {}, every job there failed while the same \
             commit passed elsewhere; no merge named",
            plural(*jobs, "hit", "hits"),
            match host {
                Some(h) => format!("host {h} of pool {pool}"),
                None => format!("pool {pool}"),
            }
        ),
        Verdict::HostBound {
            host,
            jobs_hit,
            jobs_total,
            elsewhere_jobs,
            chance,
            works_elsewhere,
        } => format!(
            "host-bound: every hit ran on host {host} ({jobs_hit} of its {jobs_total} jobs), \
             none on the other hosts the same jobs ran on (0 of {elsewhere_jobs} jobs; by \
             chance {}), and {} passed at the same commit on another host; no merge named",
            crate::analysis::hosts::p_words(*chance),
            plural(*works_elsewhere, "hit job", "hit jobs"),
        ),
        Verdict::NoHits => return None,
    })
}

/// How many hit runs lacking a merge are named in prose; the rest are counted.
const LACKING_NAMED: usize = 3;

/// The first [`LACKING_NAMED`] of `names` (of `total`), then "N more" for the rest:
/// "#2375 on pull-request/2375, #2380 on pull-request/2380, #2381 on pull-request/2381, 2 more".
fn name_some(names: impl Iterator<Item = String>, total: usize) -> String {
    let mut named: Vec<String> = names.take(LACKING_NAMED).collect();
    if total > LACKING_NAMED {
        named.push(format!("{} more", total - LACKING_NAMED));
    }
    named.join(", ")
}

/// "#2375 on pull-request/2375", or "run N on BRANCH" for a run of no PR.
fn run_named(pr: Option<PrNumber>, run: RunId, branch: Option<&str>) -> String {
    let who = match pr {
        Some(n) => format!("#{n}"),
        None => format!("run {run}"),
    };
    match branch {
        Some(b) => format!("{who} on {b}"),
        None => who,
    }
}

/// "no merge is in every hit run: #2371 fits best … but 3 of 16 hit runs lack it: …; #2371 is
/// not blamed": the best fit, the hit runs that lack it and what they test, and what that
/// suggests.
fn no_merge_in_every_hit_run(b: &Bisection, top: &Suspect, run: &str) -> String {
    let label = top.label();
    let lacking = &b.lacking_top_suspect;
    let named = name_some(
        lacking.iter().map(|r| {
            let base = match (&r.merge_base, r.merge_base_at) {
                (Some(sha), Some(at)) => format!("merge base {} of {}", short_sha(sha), date(at)),
                (Some(sha), None) => format!("merge base {}", short_sha(sha)),
                (None, _) => "merge base unknown".to_string(),
            };
            format!(
                "{} ({base})",
                run_named(r.pr, r.run_id, r.branch.as_deref())
            )
        }),
        lacking.len(),
    );
    let unknown = match top.hit_runs_unknown.len() {
        0 => String::new(),
        n => format!(" ({n} more cannot be told)"),
    };
    let one = top.hit_runs_lacking.len() == 1;
    format!(
        "no merge is in every hit run: {label} fits best ({} {}) but {} of {} {} it{unknown}: \
         {}; {} code from before {label}, which suggests a trigger outside the code (a runner \
         image, a dependency released that day) or a second cause on {}; {label} is not \
         blamed, and the impact counts from the first hit{run}",
        top.verb(),
        date(top.merged_at),
        top.hit_runs_lacking.len(),
        plural(b.hits_after, "hit run", "hit runs"),
        if one { "lacks" } else { "lack" },
        named,
        if one {
            "that run tests"
        } else {
            "those runs test"
        },
        if one { "that branch" } else { "those branches" },
    )
}

fn short_sha(sha: &Sha) -> String {
    sha.0.chars().take(7).collect()
}

fn share(hit: u64, total: u64) -> String {
    format!("{hit}/{total}")
}

/// The first line of a report made from an incomplete store: what is missing, that the figures
/// leave it out, and `fill_gap`, the command that finishes the survey as the caller worded it
/// (the report's `survey_gap`: this layer knows no command line). `None` when the store is
/// complete.
pub fn incomplete_line(completeness: &Completeness, fill_gap: Option<&str>) -> Option<Block> {
    if completeness.is_complete() {
        return None;
    }
    let c = completeness;
    let mut parts = Vec::new();
    if c.runs_pending > 0 {
        parts.push(format!(
            "{} of {} {} no jobs yet",
            c.runs_pending,
            plural(c.runs_listed, "run", "runs"),
            if c.runs_pending == 1 { "has" } else { "have" }
        ));
    }
    if c.logs_pending > 0 {
        parts.push(format!(
            "{} {} no log yet",
            plural(c.logs_pending, "failed job", "failed jobs"),
            if c.logs_pending == 1 { "has" } else { "have" }
        ));
    }
    for &(a, b) in &c.unlisted {
        parts.push(format!("runs from {} to {} not listed", date(a), date(b)));
    }
    let again = if c.runs_left_out > 0 { " again" } else { "" };
    let figures = if c.runs_left_out > 0 {
        format!(
            "the figures below leave out {}.",
            plural(c.runs_left_out, "run", "runs")
        )
    } else {
        "the figures below count what is listed.".to_string()
    };
    let missing = parts.join(", ");
    Some(Block::Paragraph(match fill_gap {
        Some(command) => vec![
            text(format!("incomplete: {missing} — run ")),
            Span::Command(command.to_string()),
            text(format!("{again} to finish; {figures}")),
        ],
        None => vec![text(format!(
            "incomplete: {missing} — survey the window{again} to finish; {figures}"
        ))],
    }))
}

/// What every section of a report reads, whatever the view: the repositories it covers (a
/// list of one for `View::Repo`), the figures over them all (one repository's are its own)
/// and, over several, where each signature hits. [`document`] and [`title`] are written once
/// over it; each section decides from it what it shows.
struct Scope<'a> {
    /// The repositories with runs in the window (or something pending), by name.
    repos: &'a [ReportData],
    /// The figures over every repository, in the single-repository shape; its `signatures`
    /// are ranked across them.
    all: &'a ReportData,
    /// Per signature of `all`, in the same order: where it hits (empty for one repository).
    across: &'a [SignatureAcross],
    /// The owner named with `--org`, when one was.
    owner: Option<&'a str>,
    /// Repositories asked for that have no run in the window.
    without_runs: &'a [Repo],
    /// A report over several repositories (`--org`, `--repo` repeated), however many of them
    /// the store holds: each is named, and the figures are compared across them.
    several: bool,
}

impl<'a> Scope<'a> {
    fn of(view: View<'a>) -> Scope<'a> {
        match view {
            View::Repo(data) => Scope {
                repos: std::slice::from_ref(data),
                all: data,
                across: &[],
                owner: None,
                without_runs: &[],
                several: false,
            },
            View::Org(org) => Scope {
                repos: &org.repos,
                all: &org.combined,
                across: &org.signatures,
                owner: org.owner.as_deref(),
                without_runs: &org.without_runs,
                several: true,
            },
        }
    }

    /// What a heading calls the scope: the repository ("this repository" when unnamed), or
    /// several's ("3 repositories of octo-org", or their names).
    fn name(&self) -> String {
        if self.several {
            org::scope_name(self)
        } else {
            repo_name(self.all)
        }
    }
}

/// The whole document for `view`: each repository's incomplete line, then the overview or one
/// signature's account.
pub fn document(view: View<'_>) -> Vec<Block> {
    let scope = Scope::of(view);
    let mut blocks: Vec<Block> = scope
        .repos
        .iter()
        .filter_map(|r| incomplete_line(&r.completeness, r.fill_gap.as_deref()))
        .collect();
    match &scope.all.focus {
        Some(id) => match scope.all.signatures.first() {
            Some(s) => blocks.extend(signature_account(&scope, s)),
            None => blocks.extend([
                Block::Heading(1, vec![text("Signature "), code(id.0.clone())]),
                Block::Paragraph(vec![text("No loaded signature has this id.")]),
            ]),
        },
        None => blocks.extend(overview(&scope)),
    }
    blocks
}

/// The title of `view`'s page (HTML's `<title>`): "CI failures in octo-org/a (flakestat)",
/// "CI failures in 3 repositories of octo-org (flakestat)", or the `--signature`'s.
pub fn title(view: View<'_>) -> String {
    let scope = Scope::of(view);
    let n = scope.repos.len();
    let what = match (scope.several, scope.owner) {
        (true, Some(owner)) => format!("{n} repositories of {owner}"),
        (true, None) => format!("{n} repositories"),
        (false, _) => scope
            .all
            .repo
            .as_ref()
            .map_or_else(|| "CI failures".to_string(), |r| r.to_string()),
    };
    match &scope.all.focus {
        Some(id) => format!("{id} in {what} (flakestat)"),
        None => format!("CI failures in {what} (flakestat)"),
    }
}

/// One signature's account (`--signature`): one repository's; over several, where it hits,
/// the matrix side by side, then each repository's own account.
fn signature_account(scope: &Scope<'_>, s: &SignatureReport) -> Vec<Block> {
    match scope.across.first() {
        Some(across) if scope.several => org::signature_account(scope, s, across),
        _ => signature_document(scope.all, s),
    }
}

fn repo_name(data: &ReportData) -> String {
    data.repo
        .as_ref()
        .map_or_else(|| "this repository".to_string(), |r| r.to_string())
}

fn window(data: &ReportData) -> String {
    match (data.since, data.until) {
        (Some(s), Some(u)) if data.surveyed_to == Some(u) => {
            format!("from {}, surveyed to {}", date(s), date(u))
        }
        (Some(s), Some(u)) => format!("from {} to {}", date(s), date(u)),
        (Some(s), None) => format!("since {}", date(s)),
        (None, Some(u)) => format!("until {}", date(u)),
        (None, None) => "over every stored run".to_string(),
    }
}

/// "8 unclassified (4 matched no signature, 4 logs unreadable)": the failed jobs no signature
/// explains, parted when some of them had no log to read, so the figure agrees with the
/// sections that list them (the groups of logs read, and the logs that could not be read).
pub(crate) fn unclassified_jobs(unclassified: u64, log_unreadable: u64) -> String {
    if log_unreadable == 0 {
        return format!("{unclassified} unclassified");
    }
    format!(
        "{unclassified} unclassified ({} matched no signature, {})",
        unclassified.saturating_sub(log_unreadable),
        plural(log_unreadable, "log unreadable", "logs unreadable")
    )
}

/// An overview's title ("CI failures in {scope}"), the window's run and job figures (`among`:
/// "in 3 repositories", for a report over several) and what the failures cost.
fn headline(scope: &str, data: &ReportData, among: Option<&str>) -> Vec<Block> {
    let among = among.map_or_else(String::new, |a| format!(" in {a}"));
    let mut blocks = vec![
        Block::Heading(1, vec![text(format!("CI failures in {scope}"))]),
        Block::Paragraph(vec![text(format!(
            "{}{among} {}: {} failed, {} re-run; {} of the failed runs fully explained by \
             signatures. {}: {} matched a signature, {}.",
            plural(data.runs_total, "run", "runs"),
            window(data),
            data.runs_failed,
            data.runs_rerun,
            data.runs_failed_classified,
            plural(data.jobs_failed, "failed job", "failed jobs"),
            data.jobs_classified,
            unclassified_jobs(data.jobs_unclassified, data.jobs_log_unreadable()),
        ))]),
    ];
    if data.jobs_failed > 0 {
        blocks.push(Block::Paragraph(vec![text(format!(
            "Failed jobs and re-runs in the window cost {}.",
            cost_sentence(&data.cost)
        ))]));
    }
    blocks
}

/// The overview: the headline (over several, the repositories left out and each repository's
/// figures), the signatures, and the failures none explains.
fn overview(scope: &Scope<'_>) -> Vec<Block> {
    let among = scope
        .several
        .then(|| plural(scope.repos.len() as u64, "repository", "repositories"));
    let mut blocks = headline(&scope.name(), scope.all, among.as_deref());
    blocks.extend(without_runs(scope));
    if scope.several {
        blocks.push(Block::Heading(2, vec![text("Repositories")]));
        blocks.push(collapse(
            "Repositories",
            scope.repos.len(),
            Block::Table(org::repositories_table(scope)),
        ));
    }
    blocks.extend(signatures_section(scope));
    blocks.extend(unclassified_failures(
        scope.all,
        if scope.several {
            "grouped by their error lines across repositories"
        } else {
            "grouped by their error lines"
        },
    ));
    blocks.extend(super::incidents::section(&scope.all.incidents, 2));
    if !scope.several {
        blocks.extend(super::hosts::overview_section(&scope.all.machines));
    }
    blocks
}

/// "No run in the window, left out (2): a, b": the repositories asked for with no run.
fn without_runs(scope: &Scope<'_>) -> Option<Block> {
    if scope.without_runs.is_empty() {
        return None;
    }
    let mut line = vec![text(format!(
        "No run in the window, left out ({}): ",
        scope.without_runs.len()
    ))];
    for (i, r) in scope.without_runs.iter().enumerate() {
        if i > 0 {
            line.push(text(", "));
        }
        line.push(text(r.to_string()));
    }
    Some(Block::Paragraph(line))
}

/// A signature that hit, its rank (from 1) and, over several repositories, where it hits.
type Ranked<'a> = (usize, &'a SignatureReport, Option<&'a SignatureAcross>);

/// The signatures that hit, ranked and summed up (over several repositories also their
/// breakdown per repository and their matrix compared), then those that did not.
fn signatures_section(scope: &Scope<'_>) -> Vec<Block> {
    let mut blocks = vec![Block::Heading(2, vec![text("Signatures")])];
    let hit: Vec<Ranked<'_>> = scope
        .all
        .signatures
        .iter()
        .enumerate()
        .map(|(i, s)| (s, scope.across.get(i)))
        .filter(|(s, _)| s.runs_hit > 0)
        .enumerate()
        .map(|(rank, (s, across))| (rank + 1, s, across))
        .collect();
    if hit.is_empty() {
        blocks.push(Block::Paragraph(vec![text(
            "No signature matched a failed job.",
        )]));
    } else {
        blocks.push(Block::Table(ranking(scope.several, &hit)));
        let across: Vec<(&SignatureReport, &SignatureAcross)> =
            hit.iter().filter_map(|&(_, s, a)| Some((s, a?))).collect();
        if scope.several {
            blocks.extend(org::breakdown_section(&across));
        }
        blocks.push(Block::Bullets(summaries(scope, &hit)));
        if scope.several {
            blocks.extend(org::matrix_across(&across));
        }
    }
    blocks.extend(no_hits(&scope.all.signatures));
    blocks
}

/// Each hit signature's summary line: one repository's own, or over several, its line in each
/// repository it hits.
fn summaries(scope: &Scope<'_>, hit: &[Ranked<'_>]) -> Vec<Line> {
    let line = |id: &crate::model::SignatureId, place: String, s: &SignatureReport| {
        let mut line = vec![code(id.0.clone()), text(place)];
        line.extend(summary(s));
        line
    };
    let mut lines = Vec::new();
    for &(_, s, across) in hit {
        let Some(across) = across else {
            lines.push(line(&s.id, ": ".to_string(), s));
            continue;
        };
        for h in &across.repos {
            let own = scope
                .repos
                .iter()
                .find(|r| r.repo.as_ref() == Some(&h.repo))
                .and_then(|data| data.signatures.iter().find(|x| x.id == across.id));
            if let Some(own) = own {
                lines.push(line(&across.id, format!(" in {}: ", h.repo), own));
            }
        }
    }
    lines
}

/// "No hits for N: a, b": the signatures that hit nothing, as one paragraph (none when every
/// signature hit).
fn no_hits(signatures: &[SignatureReport]) -> Option<Block> {
    let quiet: Vec<&SignatureReport> = signatures.iter().filter(|s| s.runs_hit == 0).collect();
    if quiet.is_empty() {
        return None;
    }
    let mut line = vec![text(format!("No hits for {}: ", quiet.len()))];
    for (i, s) in quiet.into_iter().enumerate() {
        if i > 0 {
            line.push(text(", "));
        }
        line.push(code(s.id.0.clone()));
    }
    Some(Block::Paragraph(line))
}

/// The "Unclassified failures" section of an overview: `grouped` says how the unclassified
/// groups were formed (one repository's error lines, or several repositories').
fn unclassified_failures(data: &ReportData, grouped: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    blocks.push(Block::Heading(2, vec![text("Unclassified failures")]));
    if data.jobs_unclassified == 0 {
        blocks.push(Block::Paragraph(vec![text(
            "Every failed job matched a signature.",
        )]));
    } else {
        if !data.unclassified.is_empty() {
            blocks.push(Block::Paragraph(vec![text(format!(
                "{} whose log matched no signature, {grouped} \
                 (numbers, hex and paths masked):",
                plural(
                    data.unclassified.iter().map(|g| g.jobs).sum(),
                    "failed job",
                    "failed jobs"
                )
            ))]));
            blocks.push(collapse(
                "Unclassified groups",
                data.unclassified.len(),
                Block::Table(unclassified_table(&data.unclassified)),
            ));
        }
        if !data.logs_unknown.is_empty() {
            blocks.push(Block::Paragraph(vec![text(format!(
                "{} whose log could not be read (unknown, not counted as any signature):",
                plural(data.jobs_log_unreadable(), "failed job", "failed jobs")
            ))]));
            blocks.push(Block::Bullets(
                data.logs_unknown
                    .iter()
                    .map(|g| {
                        vec![text(format!(
                            "{}: {}",
                            plural(g.jobs, "job", "jobs"),
                            g.reason.describe()
                        ))]
                    })
                    .collect(),
            ));
        }
    }
    blocks
}

/// The ranking of the signatures that hit. Over one repository: where its hit runs come from,
/// the merge that introduced it, its cost and its hits over time; over several: the
/// repositories it hits.
fn ranking(several: bool, hit: &[Ranked<'_>]) -> Table {
    let mut columns: Vec<Column<'_, Ranked<'_>>> = vec![
        (
            "#",
            true,
            Box::new(|&(rank, _, _)| vec![text(rank.to_string())]),
        ),
        (
            "Signature",
            false,
            Box::new(|&(_, s, _)| {
                if s.title.is_empty() {
                    vec![code(s.id.0.clone())]
                } else {
                    vec![code(s.id.0.clone()), text(" "), text(s.title.clone())]
                }
            }),
        ),
        (
            "Runs hit",
            true,
            Box::new(|&(_, s, _)| vec![text(s.runs_hit.to_string())]),
        ),
        (
            "Jobs hit",
            true,
            Box::new(|&(_, s, _)| vec![text(s.jobs_hit.to_string())]),
        ),
        (
            "Share of runs",
            true,
            Box::new(|&(_, s, _)| {
                vec![text(match &s.impact_window {
                    Some(w) => runs_share(s.runs_hit, w.runs, w.percent),
                    None => "n/a".to_string(),
                })]
            }),
        ),
    ];
    if several {
        columns.push((
            "Repositories",
            false,
            Box::new(|&(_, _, across)| across.map(org::repositories_cell).unwrap_or_default()),
        ));
    } else {
        columns.push((
            "Main",
            true,
            Box::new(|&(_, s, _)| vec![text(s.runs_hit_default_branch.to_string())]),
        ));
        columns.push((
            "PRs (unrelated)",
            true,
            // Without paths no PR is related to a signature: "unrelated" means nothing.
            Box::new(|&(_, s, _)| {
                vec![text(if s.paths.is_empty() {
                    s.runs_hit_pr.to_string()
                } else {
                    format!("{} ({})", s.runs_hit_pr, s.runs_hit_pr_unrelated)
                })]
            }),
        ));
    }
    columns.push((
        "Re-run to green",
        true,
        Box::new(|&(_, s, _)| vec![text(s.runs_rerun_to_green.to_string())]),
    ));
    columns.push((
        "First hit",
        false,
        Box::new(|&(_, s, _)| {
            vec![text(s.first_hit.as_ref().map_or_else(
                || "n/a".to_string(),
                |h| date(h.run_created_at),
            ))]
        }),
    ));
    if !several {
        columns.push((
            "Introduced by",
            false,
            Box::new(|&(_, s, _)| match placed(s) {
                Some((_, top)) => vec![Span::Link {
                    text: top.label(),
                    url: top.url.clone(),
                }],
                None => vec![text("not placed")],
            }),
        ));
        columns.push((
            "Cost (h)",
            true,
            Box::new(|&(_, s, _)| {
                vec![text(if s.cost.gpu_seconds() > 0 {
                    format!(
                        "{} ({} GPU)",
                        hours(s.cost.total_seconds()),
                        hours(s.cost.gpu_seconds())
                    )
                } else {
                    hours(s.cost.total_seconds())
                })]
            }),
        ));
        columns.push((
            "Hits over time",
            false,
            Box::new(|&(_, s, _)| {
                s.timeline
                    .as_ref()
                    .map(|t| vec![Span::Spark(spark_periods(t))])
                    .unwrap_or_default()
            }),
        ));
    }
    table_of(hit, &columns)
}

fn unclassified_table(groups: &[UnclassifiedGroup]) -> Table {
    Table {
        headers: vec![
            "Jobs",
            "Runs",
            "Error lines",
            "Failing tests",
            "Job names",
            "Last seen",
            "Example",
        ],
        numeric: vec![true, true, false, false, false, false, false],
        rows: groups
            .iter()
            .map(|g| {
                let lines = error_lines_cell(&g.lines);
                let names = job_names_cell(&g.job_names, str::to_string);
                let example = g.examples.first().map_or_else(
                    || vec![text("")],
                    |e| {
                        vec![Span::Url {
                            text: format!("job {}", e.job_id),
                            url: e.html_url.clone(),
                        }]
                    },
                );
                vec![
                    vec![text(g.jobs.to_string())],
                    vec![text(g.runs.to_string())],
                    lines,
                    failing_tests_cell(&g.tests),
                    names,
                    vec![text(date(g.last_seen))],
                    example,
                ]
            })
            .collect(),
    }
}

/// An unclassified group's error lines as code spans, or a note when it has none.
pub fn error_lines_cell(error_lines: &[String]) -> Line {
    let mut cell: Line = Vec::new();
    if error_lines.is_empty() {
        cell.push(text("(no error lines found)"));
    }
    for (i, l) in error_lines.iter().enumerate() {
        if i > 0 {
            cell.push(text(" "));
        }
        cell.push(code(l.clone()));
    }
    cell
}

/// Failing tests a cell names at most; the rest are counted.
const TESTS_PER_CELL: usize = 5;

/// An unclassified group's failing tests, most jobs first (then by id), each with the jobs
/// naming it, then how many more; empty when its logs name none.
pub fn failing_tests_cell(tests: &BTreeMap<String, u64>) -> Line {
    let mut ranked: Vec<(&String, &u64)> = tests.iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let mut cell: Line = Vec::new();
    for (i, (id, jobs)) in ranked.iter().take(TESTS_PER_CELL).enumerate() {
        if i > 0 {
            cell.push(text("; "));
        }
        cell.push(code((*id).clone()));
        cell.push(text(format!(" ({jobs})")));
    }
    if ranked.len() > TESTS_PER_CELL {
        cell.push(text(format!("; {} more", ranked.len() - TESTS_PER_CELL)));
    }
    cell
}

/// The first three job names (each through `shorten`), then how many more.
pub fn job_names_cell(job_names: &[String], shorten: impl Fn(&str) -> String) -> Line {
    let mut cell: Line = Vec::new();
    for (i, n) in job_names.iter().take(3).enumerate() {
        if i > 0 {
            cell.push(text("; "));
        }
        cell.push(text(shorten(n)));
    }
    if job_names.len() > 3 {
        cell.push(text(format!("; {} more", job_names.len() - 3)));
    }
    cell
}

/// The careful human's sentence: how often since the first hit, where, re-runs, before, matrix.
pub fn summary(s: &SignatureReport) -> Line {
    let Some(w) = &s.impact_window else {
        if let Some(own) = own_breakage_phrase(s) {
            return vec![text(format!(
                "hit only PRs' own breakage ({own}); no other hit."
            ))];
        }
        if s.excluded_runs.iter().any(|r| r.hit) {
            return vec![text(format!(
                "hit only runs of related PRs ({} excluded); no other hit.",
                plural(
                    s.excluded_runs.iter().filter(|r| r.hit).count() as u64,
                    "run",
                    "runs"
                )
            ))];
        }
        return vec![text("no hit in this window.")];
    };
    let headline = runs_hit_phrase(s.runs_hit, w.runs, w.percent);
    let since = match (w.starts_at, placed(s)) {
        // "1 hit, in the latest run (2026-07-15 21:18 UTC)": there is no "since" to one run.
        _ if s.runs_hit == 1 && w.runs == 1 => format!("({})", date(w.start)),
        (ImpactStart::Merge, Some((b, top))) => {
            let merge = format!("since {} {} on {}", top.label(), top.verb(), date(w.start));
            match &b.image_onset {
                Some(o) => format!(
                    "{merge}, as did runner image {} {} (every hit ran on it; earlier failures \
                     ran {}): the runs cannot tell which of the two brought it",
                    o.image,
                    o.version,
                    o.before.join(", ")
                ),
                None => merge,
            }
        }
        _ => format!("since the first hit on {}", date(w.start)),
    };
    let mut parts: Vec<String> = vec![since];
    parts.push(origins_phrase(s));
    parts.push(if s.runs_rerun_to_green > 0 {
        format!(
            "{} re-run to green (max {} attempts)",
            s.runs_rerun_to_green, s.max_attempts
        )
    } else {
        "none re-run to green".to_string()
    });
    parts.extend(before_phrases(s));
    parts.extend(matrix_phrases(&s.findings));
    parts.extend(left_out_phrases(s));
    vec![
        Span::Strong(headline),
        text(format!(" {}.", parts.join("; "))),
    ]
}

/// Where the hit runs come from: main, PRs (related or not, or unknown), other branches.
fn origins_phrase(s: &SignatureReport) -> String {
    let mut origins = vec![format!("{} on main", s.runs_hit_default_branch)];
    if s.runs_hit_pr > 0 {
        let unknown = s.runs_hit_pr - s.runs_hit_pr_unrelated;
        if s.paths.is_empty() {
            // No paths: no PR can be related, so the runs of PRs are only that.
            origins.push(format!("{} on PRs", s.runs_hit_pr));
        } else if unknown == 0 {
            origins.push(format!(
                "{} on PRs touching none of its paths",
                s.runs_hit_pr
            ));
        } else {
            let reasons: Vec<String> = {
                let mut r: Vec<String> = s
                    .pr_relevance_unknown
                    .iter()
                    .map(|g| g.reason.clone())
                    .collect();
                r.dedup();
                r
            };
            origins.push(format!(
                "{} on PRs ({} touching none of its paths, {} unknown: {})",
                s.runs_hit_pr,
                s.runs_hit_pr_unrelated,
                unknown,
                reasons.join("; ")
            ));
        }
    }
    if s.runs_hit_other > 0 {
        origins.push(format!("{} on other branches", s.runs_hit_other));
    }
    origins.join(", ")
}

/// The runs before the impact window, or (placed on a merge) the evidence of the placement.
fn before_phrases(s: &SignatureReport) -> Vec<String> {
    let before = s.clean_runs_before + s.runs_hit_before;
    let mut notes: Vec<String> = Vec::new();
    if let Some(t) = s.before_from {
        notes.push(format!("from {}", day(t)));
    }
    if s.runs_before_unknown > 0 {
        notes.push(format!(
            "{} more unknown: failed with no readable log",
            s.runs_before_unknown
        ));
    }
    let mut before_text = format!(
        "{} in {} runs before",
        plural(s.runs_hit_before, "hit", "hits"),
        before
    );
    if !notes.is_empty() {
        before_text.push_str(&format!(" ({})", notes.join("; ")));
    }
    // Placed on a merge, the runs before it are the evidence: said once, with its strength.
    match (placed(s), first_occurrence(s, &notes)) {
        (Some(_), Some(sentence)) => vec![sentence],
        (None, sentence) => std::iter::once(before_text).chain(sentence).collect(),
        (Some(_), None) => vec![before_text],
    }
}

/// The runs of related PRs and of PRs that cannot be found, counted nowhere.
fn left_out_phrases(s: &SignatureReport) -> Vec<String> {
    let mut parts = Vec::new();
    let excluded = s.excluded_runs.len();
    if excluded > 0 {
        let mut prs: Vec<PrNumber> = s.excluded_runs.iter().map(|r| r.pr).collect();
        prs.sort_unstable();
        prs.dedup();
        let prs: Vec<String> = prs.iter().map(|p| format!("#{p}")).collect();
        parts.push(format!(
            "{} of related PRs excluded ({})",
            plural(excluded as u64, "run", "runs"),
            prs.join(", ")
        ));
    }
    if !s.unknown_runs.is_empty() {
        parts.push(format!(
            "{} of PRs that cannot be found left out ({} hit)",
            plural(s.unknown_runs.len() as u64, "run", "runs"),
            s.unknown_runs.iter().filter(|r| r.hit).count()
        ));
    }
    parts.extend(own_breakage_phrase(s));
    parts
}

/// The hit runs that were PRs' own breakage, as the tests view says it: `7 runs left out as
/// PRs' own breakage: tests/x.py::test_y fails on PRs #1, #2 (their own runs)`.
fn own_breakage_phrase(s: &SignatureReport) -> Option<String> {
    if s.own_breakage_runs.is_empty() {
        return None;
    }
    let mut prs: Vec<PrNumber> = s.own_breakage_runs.iter().map(|r| r.pr).collect();
    prs.sort_unstable();
    prs.dedup();
    let mut tests: Vec<&str> = s
        .own_breakage_runs
        .iter()
        .flat_map(|r| r.tests.iter().map(String::as_str))
        .collect();
    tests.sort_unstable();
    tests.dedup();
    let shown = tests.iter().take(3).copied().collect::<Vec<_>>().join(", ");
    let more = match tests.len() {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    let prs: Vec<String> = prs.iter().map(|p| format!("#{p}")).collect();
    let whose = if prs.len() == 1 { "PR" } else { "PRs" };
    let verb = if tests.len() == 1 { "fails" } else { "fail" };
    Some(format!(
        "{} left out as PRs' own breakage: {shown}{more} {verb} on {whose} {} (their own runs)",
        plural(s.own_breakage_runs.len() as u64, "run", "runs"),
        prs.join(", ")
    ))
}

/// "only on python=3.14t (…), never on …", then what holds among those jobs. Confinements that
/// could be luck (few hits, or a likely chance) are left to the matrix table.
fn matrix_phrases(findings: &[DimensionFinding]) -> Vec<String> {
    let only = |f: &DimensionFinding| {
        format!(
            "only on {}={} ({} jobs), never on {} ({} jobs)",
            f.dimension,
            f.hit_values.join(", "),
            share(f.jobs_hit, f.jobs_total),
            f.never_values.join(", "),
            share(0, f.never_jobs_total)
        )
    };
    let everywhere = |fs: &[&DimensionFinding]| {
        let names: Vec<String> = fs
            .iter()
            .map(|f| format!("{} ({})", f.dimension, f.hit_values.len()))
            .collect();
        format!("on every {}", names.join(", "))
    };
    let not_job = |f: &&DimensionFinding| f.dimension != crate::matrix::JOB;
    let mut out = Vec::new();
    let primary = findings
        .iter()
        .filter(not_job)
        .find(|f| f.within.is_none() && f.significant);
    let scope: Vec<&DimensionFinding> = findings
        .iter()
        .filter(not_job)
        .filter(|f| f.within.is_some() == primary.is_some())
        .collect();
    if let Some(p) = primary {
        out.push(only(p));
    }
    let prefix = if primary.is_some() {
        "among those, "
    } else {
        ""
    };
    for f in scope.iter().filter(|f| f.significant) {
        out.push(format!("{prefix}{}", only(f)));
    }
    let all: Vec<&DimensionFinding> = scope
        .iter()
        .filter(|f| f.kind == FindingKind::Everywhere)
        .copied()
        .collect();
    if !all.is_empty() {
        out.push(format!("{prefix}{}", everywhere(&all)));
    }
    out
}

fn origin_cell(h: &Hit) -> Line {
    match h.origin {
        HitOrigin::DefaultBranch => vec![text(h.branch.clone().unwrap_or_default())],
        HitOrigin::PullRequest => {
            // A PR's hit names its PR.
            let n = h.pr.map_or_else(String::new, |n| n.to_string());
            vec![Span::Link {
                text: format!("PR #{n}"),
                url: h.pr_url.clone(),
            }]
        }
        HitOrigin::UnknownPullRequest => vec![text("PR (number unknown)")],
        HitOrigin::Other => vec![text(
            h.branch.clone().unwrap_or_else(|| h.event.to_string()),
        )],
    }
}

fn matrix_table(title: &str, dimensions: &[DimensionReport]) -> Block {
    let rows: Vec<Vec<Line>> = dimensions
        .iter()
        .flat_map(|d| {
            // Bold only for a value that stands out: hit, and at least twice the hit rate of the
            // dimension's other values together (a 2% beside 1%s is not news; 5% beside 0% is).
            let (hit_all, run_all) = d
                .values
                .iter()
                .fold((0, 0), |(h, r), v| (h + v.jobs_hit, r + v.jobs_total));
            d.values.iter().map(move |v| {
                let others_hit = hit_all - v.jobs_hit;
                let others_run = run_all - v.jobs_total;
                let strong = v.jobs_hit > 0
                    && v.jobs_total >= MIN_PERCENT_RUNS
                    && others_run > 0
                    && (v.jobs_hit * others_run) as f64 >= 2.0 * (others_hit * v.jobs_total) as f64;
                let cell = |t: String| {
                    if strong {
                        vec![Span::Strong(t)]
                    } else {
                        vec![text(t)]
                    }
                };
                vec![
                    vec![text(d.name.clone())],
                    cell(v.value.clone()),
                    vec![text(v.jobs_hit.to_string())],
                    vec![text(v.jobs_total.to_string())],
                    cell(if v.jobs_hit == 0 {
                        "never".to_string()
                    } else if v.jobs_total < MIN_PERCENT_RUNS {
                        // Too few jobs for a rate: the two counts beside it say it all.
                        "few jobs".to_string()
                    } else {
                        percent(crate::share::percent(v.jobs_hit, v.jobs_total))
                    }),
                ]
            })
        })
        .collect();
    let n = rows.len();
    collapse(
        title,
        n,
        Block::Table(Table {
            headers: vec!["Dimension", "Value", "Jobs hit", "Jobs run", "Hit rate"],
            numeric: vec![false, false, true, true, true],
            rows,
        }),
    )
}

fn collapse(summary: &str, rows: usize, block: Block) -> Block {
    if rows > COLLAPSE_ROWS {
        Block::Details {
            summary: format!("{summary} ({rows})"),
            blocks: vec![block],
        }
    } else {
        block
    }
}

fn signature_document(data: &ReportData, s: &SignatureReport) -> Vec<Block> {
    let mut title = vec![code(s.id.0.clone())];
    if !s.title.is_empty() {
        title.push(text(format!(": {}", s.title)));
    }
    let mut blocks = vec![
        Block::Heading(2, title),
        Block::Paragraph(summary(s)),
        Block::Bullets(signature_facts(data, s)),
    ];
    if !s.cost.by_label.is_empty() {
        blocks.push(cost_table(&s.cost));
    }
    if let Some(t) = &s.timeline {
        blocks.push(Block::Heading(3, vec![text("Timeline")]));
        blocks.push(Block::Chart(Chart::Timeline(t.clone())));
    }
    blocks.extend(first_occurrence_section(s));
    blocks.extend(matrix_section(s));
    blocks.extend(tests_section(s));
    blocks.extend(failing_jobs_section(s));
    blocks.extend(excluded_runs_section(s));
    blocks.extend(unknown_runs_section(s));
    blocks
}

/// The bullet list under a signature's summary: survey, impact, first hit, re-runs, what came
/// before, relevance gaps, paths, issue, cost.
fn signature_facts(data: &ReportData, s: &SignatureReport) -> Vec<Line> {
    let mut facts: Vec<Line> = Vec::new();
    facts.push(vec![text(format!(
        "Survey: {} in {}, {}.",
        plural(data.runs_total, "run", "runs"),
        repo_name(data),
        window(data)
    ))]);
    if !s.workflows.is_empty() {
        let mut l = vec![text("Workflows: ")];
        for (i, w) in s.workflows.iter().enumerate() {
            if i > 0 {
                l.push(text(", "));
            }
            l.push(text(w.clone()));
        }
        facts.push(l);
    }
    if let Some(w) = &s.impact_window {
        facts.push(vec![text(format!(
            "Impact window: {} to {} ({} of the workflows, related PRs excluded): {} hit, {} \
             hit.",
            date(w.start),
            date(w.end),
            plural(w.runs, "run", "runs"),
            plural(s.runs_hit, "run", "runs"),
            plural(s.jobs_hit, "job execution", "job executions")
        ))]);
    }
    if let Some(w) = &s.impact_window
        && w.runs_in_progress > 0
    {
        facts.push(vec![text(format!(
            "{} of the impact window still in progress, not counted.",
            plural(w.runs_in_progress, "run", "runs")
        ))]);
    }
    if s.jobs_unknown > 0 {
        facts.push(vec![text(format!(
            "Unknown: {} in the impact window with no readable log (expired, missing or not \
             downloaded); any of them could be a hit.",
            plural(s.jobs_unknown, "failed job", "failed jobs")
        ))]);
    }
    facts.extend(first_hit_fact(s));
    facts.push(vec![text(format!(
        "Re-runs: {} re-run to green{}; {} still failing at the latest attempt.",
        s.runs_rerun_to_green,
        if s.runs_rerun_to_green > 0 {
            format!(" (the most attempts needed: {})", s.max_attempts)
        } else {
            String::new()
        },
        s.runs_hit_still_failing
    ))]);
    facts.extend(before_fact(s));
    for gap in &s.pr_relevance_unknown {
        let mut l = vec![text(format!("{} of ", plural(gap.runs, "run", "runs")))];
        l.push(text(match gap.pr {
            Some(n) => format!("PR #{n}"),
            None => "a PR".to_string(),
        }));
        l.push(text(format!(": relevance unknown, {}.", gap.reason)));
        facts.push(l);
    }
    facts.extend(paths_fact(s));
    if let Some(issue) = &s.issue {
        facts.push(vec![
            text("Tracking issue: "),
            Span::Url {
                text: issue.clone(),
                url: Some(issue.clone()),
            },
        ]);
    }
    if s.runs_hit > 0 {
        facts.push(vec![text(format!("Cost: {}.", cost_sentence(&s.cost)))]);
    }
    facts
}

/// "Before <the merge or the first hit>: N clean runs …", once there is an impact window.
fn before_fact(s: &SignatureReport) -> Option<Line> {
    let starts_at = s.impact_window.as_ref()?.starts_at;
    let before = match (starts_at, placed(s)) {
        (ImpactStart::Merge, Some((_, top))) => {
            format!("{} {}", top.label(), top.verb())
        }
        _ => "the first hit".to_string(),
    };
    let mut l = format!(
        "Before {before}: {} clean runs of the same workflows",
        s.clean_runs_before
    );
    if let Some(t) = s.before_from {
        l.push_str(&format!(" since {}", day(t)));
    }
    if s.runs_hit_before > 0 {
        l.push_str(&format!(
            ", {} hit before the survey window",
            plural(s.runs_hit_before, "run", "runs")
        ));
    }
    if s.runs_before_unknown > 0 {
        l.push_str(&format!(
            ", {} unknown (failed with no readable log)",
            plural(s.runs_before_unknown, "run", "runs")
        ));
    }
    l.push('.');
    Some(vec![text(l)])
}

/// The signature's paths, and how many of them are not valid globs.
fn paths_fact(s: &SignatureReport) -> Option<Line> {
    if s.paths.is_empty() {
        return None;
    }
    let mut l = vec![text("Paths: ")];
    for (i, p) in s.paths.iter().enumerate() {
        if i > 0 {
            l.push(text(", "));
        }
        l.push(code(p.clone()));
    }
    if !s.invalid_paths.is_empty() {
        l.push(text(format!(
            " ({} not valid globs, ignored)",
            s.invalid_paths.len()
        )));
    }
    Some(l)
}

/// "First hit: run created … in <job> (run, attempt, origin), … after the top suspect."
fn first_hit_fact(s: &SignatureReport) -> Option<Line> {
    let h = s.first_hit.as_ref()?;
    let mut l = vec![text(format!(
        "First hit: run created {} (job {}) in ",
        date(h.run_created_at),
        date(h.created_at)
    ))];
    l.push(Span::Link {
        text: h.job.clone(),
        url: h.html_url.clone().or_else(|| Some(h.run_url.clone())),
    });
    l.push(text(format!(" (run {}, attempt {}, ", h.run_id, h.attempt)));
    l.extend(origin_cell(h));
    l.push(text(")"));
    if let Some((b, top)) = placed(s) {
        l.push(text(format!(
            ", {} after {} {}",
            elapsed(b.minutes_after_top_suspect.unwrap_or_default()),
            top.label(),
            top.verb()
        )));
    }
    l.push(text("."));
    Some(l)
}

/// The job matrix: heat maps and the per-value tables (again within the primary confinement).
fn matrix_section(s: &SignatureReport) -> Vec<Block> {
    let mut blocks = Vec::new();
    if s.dimensions.is_empty() {
        return blocks;
    }
    blocks.push(Block::Heading(3, vec![text("Where in the job matrix")]));
    blocks.push(Block::Paragraph(vec![text(
        "Jobs hit of jobs run in the impact window, per value; values never hit are shown too.",
    )]));
    for h in &s.heatmaps {
        blocks.push(Block::Chart(Chart::HeatMap(h.clone())));
    }
    blocks.push(matrix_table("Matrix values", &s.dimensions));
    if let Some(w) = &s.within {
        blocks.push(Block::Paragraph(vec![
            text("Among the "),
            code(w.label.clone()),
            text(" jobs only:"),
        ]));
        blocks.push(matrix_table(
            &format!("Matrix values among {}", w.label),
            &w.dimensions,
        ));
    }
    blocks
}

fn tests_section(s: &SignatureReport) -> Vec<Block> {
    let mut blocks = Vec::new();
    if s.tests.is_empty() {
        return blocks;
    }
    blocks.push(Block::Heading(3, vec![text("Tests")]));
    let mut tests: Vec<(&String, &u64)> = s.tests.iter().collect();
    tests.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let n = tests.len();
    blocks.push(collapse(
        "Tests",
        n,
        Block::Table(Table {
            headers: vec!["Test", "Hits"],
            numeric: vec![false, true],
            rows: tests
                .into_iter()
                .map(|(t, c)| vec![vec![code(t.clone())], vec![text(c.to_string())]])
                .collect(),
        }),
    ));
    // Where the numbers are: the jobs whose log names no test make up the rest of the hits.
    let unnamed = s.hits.iter().filter(|h| h.tests.is_empty()).count() as u64;
    if unnamed > 0 {
        blocks.push(Block::Paragraph(vec![text(format!(
            "{unnamed} of the {} named no failing test (hung, or interrupted before the \
             runner's summary); the other {} named the tests above.",
            plural(s.hits.len() as u64, "hit job", "hit jobs"),
            s.hits.len() as u64 - unnamed
        ))]));
    }
    blocks
}

fn failing_jobs_section(s: &SignatureReport) -> Vec<Block> {
    let mut blocks = Vec::new();
    blocks.push(Block::Heading(3, vec![text("Failing jobs")]));
    if s.hits.is_empty() {
        blocks.push(Block::Paragraph(vec![text("None.")]));
    } else {
        let rows: Vec<Vec<Line>> = s
            .hits
            .iter()
            .map(|h| {
                vec![
                    vec![text(date(h.created_at))],
                    vec![text(h.job.clone())],
                    vec![text(format!("{} of {}", h.attempt, h.run_attempts))],
                    origin_cell(h),
                    vec![Span::Url {
                        text: format!("run {}", h.run_id),
                        url: Some(h.run_url.clone()),
                    }],
                    vec![Span::Url {
                        text: format!("job {}", h.job_id),
                        url: h.html_url.clone(),
                    }],
                ]
            })
            .collect();
        let n = rows.len();
        blocks.push(collapse(
            "Failing jobs",
            n,
            Block::Table(Table {
                headers: vec!["Date", "Job", "Attempt", "Where", "Run", "Job log"],
                numeric: vec![false, false, false, false, false, false],
                rows,
            }),
        ));
    }

    blocks
}

fn excluded_runs_section(s: &SignatureReport) -> Vec<Block> {
    let mut blocks = Vec::new();
    if s.excluded_runs.is_empty() {
        return blocks;
    }
    blocks.push(Block::Heading(3, vec![text("Excluded runs")]));
    blocks.push(Block::Paragraph(vec![text(
        "Runs of PRs whose changes touch the signature's paths: the PR itself may be the \
         cause, so they are left out of every count above.",
    )]));
    let rows: Vec<Vec<Line>> = s
        .excluded_runs
        .iter()
        .map(|r| {
            vec![
                vec![text(date(r.created_at))],
                vec![Span::Link {
                    text: format!("PR #{}", r.pr),
                    url: r.pr_url.clone(),
                }],
                vec![text(if r.hit { "yes" } else { "no" })],
                vec![
                    text("PR changes "),
                    code(r.file.clone()),
                    text(", matching "),
                    code(r.glob.clone()),
                ],
                vec![Span::Url {
                    text: format!("run {}", r.run_id),
                    url: Some(r.html_url.clone()),
                }],
            ]
        })
        .collect();
    let n = rows.len();
    blocks.push(collapse(
        "Excluded runs",
        n,
        Block::Table(Table {
            headers: vec!["Date", "PR", "Hit", "Reason", "Run"],
            numeric: vec![false, false, false, false, false],
            rows,
        }),
    ));
    blocks
}

fn unknown_runs_section(s: &SignatureReport) -> Vec<Block> {
    let mut blocks = Vec::new();
    if s.unknown_runs.is_empty() {
        return blocks;
    }
    blocks.push(Block::Heading(3, vec![text("Runs of unknown PRs")]));
    blocks.push(Block::Paragraph(vec![text(
        "Runs of a PR that cannot be found (a fork's runs name no PR): it may be related, so \
         they are left out of every count above.",
    )]));
    let rows: Vec<Vec<Line>> = s
        .unknown_runs
        .iter()
        .map(|r| {
            let head = match (&r.head_repository, &r.branch) {
                (Some(repo), Some(branch)) => format!("{repo}:{branch}"),
                (None, Some(branch)) => branch.clone(),
                (Some(repo), None) => repo.clone(),
                (None, None) => "unknown".to_string(),
            };
            vec![
                vec![text(date(r.created_at))],
                vec![code(head)],
                vec![text(if r.hit { "yes" } else { "no" })],
                vec![text(r.reason.clone())],
                vec![Span::Url {
                    text: format!("run {}", r.run_id),
                    url: Some(r.html_url.clone()),
                }],
            ]
        })
        .collect();
    let n = rows.len();
    blocks.push(collapse(
        "Runs of unknown PRs",
        n,
        Block::Table(Table {
            headers: vec!["Date", "Head", "Hit", "Reason", "Run"],
            numeric: vec![false, false, false, false, false],
            rows,
        }),
    ));
    blocks
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

/// The verdict, the evidence it rests on, and every merge still in the running.
fn first_occurrence_section(s: &SignatureReport) -> Vec<Block> {
    let (Some(b), Some(sentence)) = (&s.bisection, first_occurrence(s, &[])) else {
        return Vec::new();
    };
    let mut blocks = vec![Block::Heading(
        3,
        vec![text("First occurrence relative to merges")],
    )];
    let mut first = sentence;
    if let Some(c) = first.get(..1) {
        first = c.to_uppercase() + &first[1..];
    }
    blocks.push(Block::Paragraph(vec![text(format!("{first}."))]));
    if b.suspects.is_empty() {
        return blocks;
    }
    // No merge in every hit run: none is ruled out for a hit run lacking it, and each row
    // says which hit runs do.
    let no_fit = b.verdict == Verdict::NoMergeInEveryHitRun;
    let lacked = if no_fit {
        "No merge is in every hit run, so none is ruled out for a hit run lacking it: each is \
         listed with the hit runs that lack it, and none is blamed"
    } else {
        "A hit run that lacked a merge rules it out"
    };
    // One hit-rate figure per account: the summary's. The bisection's p (runs from the first
    // hit on) is named only where its percentage differs from it.
    let p = b.hit_rate().map(crate::share::rounded);
    let headline = s.impact_window.as_ref().and_then(|w| w.percent);
    let rate = if percent(p) == percent(headline) {
        format!("p the hit rate ({})", percent(p))
    } else {
        format!(
            "p = {}, the hit rate from the first hit on ({} of {} runs; the summary counts \
             from the start of the impact window)",
            percent(p),
            b.hits_after,
            b.runs_after
        )
    };
    blocks.push(Block::Paragraph(vec![text(format!(
        "For each merge before the first hit, its likelihood is the chance of the clean runs \
         that included it, (1 − p)^k, with {rate}; its weight is {}× if it changed files \
         matching the paths, times {}× if it changed a failing test's file, else 1×; its share \
         is likelihood × weight over all the suspects. {lacked}; merges with likelihood below {} \
         are not listed.",
        bisect::PATHS_WEIGHT,
        bisect::TESTS_WEIGHT,
        bisect::RULED_OUT
    ))]));
    // The PR and branch of each hit run, for naming those that lack a merge.
    let hit_runs: std::collections::BTreeMap<RunId, (Option<PrNumber>, Option<&str>)> = s
        .hits
        .iter()
        .map(|h| (h.run_id, (h.pr, h.branch.as_deref())))
        .chain(
            b.lacking_top_suspect
                .iter()
                .map(|r| (r.run_id, (r.pr, r.branch.as_deref()))),
        )
        .collect();
    let mut columns: Vec<Column<'_, Suspect>> = vec![
        (
            // Direct pushes are listed by their commit.
            if b.suspects.iter().all(|x| x.pr.is_some()) {
                "PR"
            } else {
                "PR or commit"
            },
            false,
            Box::new(|x| {
                vec![Span::Link {
                    text: x.label(),
                    url: x.url.clone(),
                }]
            }),
        ),
        ("Title", false, Box::new(|x| vec![text(x.title.clone())])),
        ("Merged", false, Box::new(|x| vec![text(date(x.merged_at))])),
        (
            "Touches paths",
            false,
            Box::new(|x| vec![text(yes_no(x.touches_paths))]),
        ),
        (
            "Touches tests",
            false,
            Box::new(|x| vec![text(yes_no(x.touches_tests))]),
        ),
        (
            "Clean runs after",
            true,
            Box::new(|x| {
                let mut after = x.clean_runs_after.to_string();
                if x.unknown_runs_after > 0 {
                    after.push_str(&format!(" (+{} unknown)", x.unknown_runs_after));
                }
                vec![text(after)]
            }),
        ),
        (
            "Likelihood",
            true,
            Box::new(|x| vec![text(probability(x.likelihood))]),
        ),
        (
            "Weight",
            true,
            Box::new(|x| vec![text(format!("{}×", x.weight()))]),
        ),
        (
            "Share",
            true,
            Box::new(|x| vec![text(percent_text(crate::share::rounded(x.posterior), 0))]),
        ),
    ];
    // No merge in every hit run: each row also says which hit runs contain and lack it.
    if no_fit {
        columns.push((
            "Hit runs with it",
            false,
            Box::new(|x| {
                vec![text(format!(
                    "{} of {}",
                    x.hit_runs_containing.len(),
                    b.hits_after
                ))]
            }),
        ));
        columns.push((
            "Hit runs lacking it",
            false,
            Box::new(move |x| {
                let lacking = &x.hit_runs_lacking;
                vec![text(if lacking.is_empty() {
                    "none".to_string()
                } else {
                    let names = lacking.iter().map(|r| {
                        let (pr, branch) = hit_runs.get(r).copied().unwrap_or((None, None));
                        run_named(pr, *r, branch)
                    });
                    format!("{}: {}", lacking.len(), name_some(names, lacking.len()))
                })]
            }),
        ));
    }
    blocks.push(collapse(
        "Suspect merges",
        b.suspects.len(),
        Block::Table(table_of(&b.suspects, &columns)),
    ));
    blocks
}

/// A table column built row by row: its header, whether it is numeric (right-aligned), and
/// its cell for an item.
type Column<'a, T> = (&'static str, bool, Box<dyn Fn(&T) -> Line + 'a>);

/// A table of one row per item of `items`, one cell per column of `columns`.
fn table_of<T>(items: &[T], columns: &[Column<'_, T>]) -> Table {
    Table {
        headers: columns.iter().map(|c| c.0).collect(),
        numeric: columns.iter().map(|c| c.1).collect(),
        rows: items
            .iter()
            .map(|x| columns.iter().map(|c| (c.2)(x)).collect())
            .collect(),
    }
}

#[cfg(test)]
mod gap_tests {
    use super::{Block, Span, incomplete_line};
    use crate::analysis::Completeness;

    /// The incomplete line shows the caller's command as it is, and without one says what is
    /// missing and names no command: this layer words none.
    #[test]
    fn the_incomplete_line_shows_the_callers_command_or_none() {
        let missing = Completeness {
            runs_listed: 3,
            runs_pending: 1,
            runs_left_out: 1,
            ..Completeness::default()
        };
        assert_eq!(incomplete_line(&Completeness::default(), Some("x")), None);
        let Some(Block::Paragraph(spans)) = incomplete_line(&missing, Some("survey --here")) else {
            panic!("a paragraph");
        };
        assert!(spans.contains(&Span::Command("survey --here".to_string())));
        let Some(Block::Paragraph(spans)) = incomplete_line(&missing, None) else {
            panic!("a paragraph");
        };
        assert!(!spans.iter().any(|s| matches!(s, Span::Command(_))));
        let words = format!("{spans:?}");
        assert!(words.contains("1 of 3 runs has no jobs yet"), "{words}");
        assert!(
            words.contains("survey the window again to finish"),
            "{words}"
        );
        assert!(!words.contains("flakestat"), "{words}");
    }
}
