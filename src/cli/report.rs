//! `flakestat report`: the report from the store alone (no network). Resolves the window, the
//! signatures and `flakestat.toml`, classifies stored logs the current signatures have not seen
//! yet, loads the snapshot, analyzes it and renders the overview or one signature's account.

use std::path::PathBuf;

use clap::{ArgGroup, Args};

use super::GlobalArgs;
use super::error::CliError;
use super::output::{FormatArg, ReportOutput, write_output};
use super::pipeline::{self, scope};
use super::repos::{RepoArgs, Target};
use super::source::{StoredArgs, fill_gap_command};
use crate::report::tests::{TestsMany, TestsReport, TestsView};
use crate::{analysis, report};

const EXAMPLES: &str = "\
Examples:
  flakestat report --repo NVIDIA/cuda-python --since 2026-06-15
  flakestat report --repo NVIDIA/cuda-python --since 30d \\
      --signature wait-until-timeout --format markdown > issue.md
  flakestat report --repo NVIDIA/cuda-python --since 2026-06-01 \\
      --until 2026-06-30 -o june.json
  flakestat report --replay fixtures/cuda-python-flake --since 2026-06-15
  flakestat report --org NVIDIA --since 30d --signature wait-until-timeout
  flakestat report --repo NVIDIA/cuda-python --since 30d --tests \\
      --format markdown
  flakestat report --repo NVIDIA/cuda-python --since 30d --tests \\
      --format ids > quarantine.txt
  flakestat report --repo NVIDIA/cuda-python --repo NVIDIA/cuda-quantum \\
      --since 30d -o flakes.html

Reads only the store that `flakestat survey` filled (--cache-dir, else FLAKESTAT_CACHE_DIR, else
the platform cache folder; with --replay DIR the replay's own store there). Without --until the
window ends where the store's survey of the repository ends; what no survey listed is named in
the first line, counted nowhere, and exits 9. Job names are read into matrix dimensions with
the built-in vocabularies, or with the [matrix] pattern of flakestat.toml (current folder, or
--config).";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
#[command(group = ArgGroup::new("target").args(["repos", "org", "replay"]).required(true).multiple(true))]
pub struct ReportArgs {
    /// The repositories: one --repo, several, or --org OWNER (what the store holds for it).
    #[command(flatten)]
    pub target: RepoArgs,
    #[command(flatten)]
    pub stored: StoredArgs,
    /// Report this signature alone, ready to paste into an issue.
    #[arg(long, value_name = "ID")]
    pub signature: Option<String>,
    /// Report format. Default: what --output's extension names, else table on a terminal and
    /// markdown otherwise.
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// One row per failing test instead: jobs and runs failed, re-run to green, same-commit
    /// green, flaky in the job, first failure, matrix cells, signatures, verdict.
    #[arg(long, conflicts_with = "signature")]
    pub tests: bool,
    /// The same as --format ids (kept for scripts written before --format ids).
    #[arg(long, requires = "tests", conflicts_with = "format", hide = true)]
    pub ids: bool,
    /// With --tests --format ids: list a flaky test only after N counted failures in the
    /// window (failed job executions and retries to a pass inside a job; incidents and related
    /// PRs' runs are not counted).
    #[arg(long, value_name = "N", requires = "tests", default_value_t = crate::analysis::tests::DEFAULT_MIN_FAILURES)]
    pub min_failures: u64,
    /// Where jobs ran instead: per runner pool and host, jobs run and failed, failure rate
    /// against the pool's, Fisher's p-value, and the drain list (--format ids: its hosts).
    #[arg(long, conflicts_with_all = ["signature", "tests"])]
    pub hosts: bool,
    /// Write the report to FILE (atomically) instead of stdout; its extension (.md, .json,
    /// .html, .txt) picks the format when --format is not given.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 0 even when the store does not hold the whole window yet (otherwise 9). The report
    /// says so in its first line either way.
    #[arg(long)]
    pub allow_incomplete: bool,
}

/// `report`'s formats: the reports' four, and the test ids of `--tests`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Text tables for the terminal
    Table,
    /// GitHub-flavoured markdown, to paste into an issue
    Markdown,
    /// The versioned JSON document
    Json,
    /// One self-contained HTML page.
    Html,
    /// With --tests: the ids of the flaky tests, one per line (a quarantine list); with
    /// --hosts: the hosts to drain
    Ids,
}

impl ReportFormat {
    fn report_format(self) -> Option<FormatArg> {
        match self {
            ReportFormat::Table => Some(FormatArg::Table),
            ReportFormat::Markdown => Some(FormatArg::Markdown),
            ReportFormat::Json => Some(FormatArg::Json),
            ReportFormat::Html => Some(FormatArg::Html),
            ReportFormat::Ids => None,
        }
    }
}

pub fn run(global: &GlobalArgs, args: ReportArgs) -> Result<u8, CliError> {
    let ids = args.ids || args.format == Some(ReportFormat::Ids);
    if args.hosts {
        return run_hosts(global, &args, ids);
    }
    if ids && !args.tests {
        return Err(CliError::Invalid(
            "--format ids lists the ids of flaky tests: add --tests".into(),
        ));
    }
    // Before the store is read: a --format the --output name contradicts fails at once.
    let output = ReportOutput::resolve(
        args.format.and_then(ReportFormat::report_format),
        args.output.clone(),
        global.color,
    )?;
    let target = args.target.target()?;
    if args.tests {
        if ids && matches!(target, Some(Target::Many(_))) {
            return Err(CliError::Invalid(
                "--format ids lists one repository's flaky tests (a quarantine list is kept per \
                 repository): give one --repo"
                    .into(),
            ));
        }
        return run_tests(global, &args, target.as_ref(), ids, &output);
    }
    let reports = scope::report(
        global,
        target.as_ref(),
        &args.stored,
        args.signature.as_deref(),
    )?;
    output.write(|out, format, options| report::render(reports.view(), format, options, out))?;
    Ok(pipeline::incomplete_exit(
        global,
        reports.completeness(),
        args.allow_incomplete,
    ))
}

/// `--tests`: one row per failing test, per repository of the scope (`target` `None`:
/// `--replay`'s own), each analysed on its own; or, for one repository, the ids alone.
fn run_tests(
    global: &GlobalArgs,
    args: &ReportArgs,
    target: Option<&Target>,
    ids: bool,
    output: &ReportOutput,
) -> Result<u8, CliError> {
    let loaded = scope::load_stored(target, &args.stored, args.signature.as_deref())?;
    scope::say_classified(global, loaded.classified);
    let asked = match target {
        Some(Target::One(repo)) => Some(repo),
        _ => None,
    };
    let reports: Vec<TestsReport> = loaded
        .snapshots
        .iter()
        .map(|snapshot| {
            // Like every figure, over the complete part of the store: what the exit-9 message
            // says is left out is left out here too. The signature analysis is not needed.
            let (complete, completeness) = analysis::complete_part(snapshot);
            let incidents = analysis::incidents::find_incidents(&complete);
            // Once: the tests' verdicts read it, and the report shows it.
            let hidden = analysis::hidden::analyze_hidden(&complete);
            let tests = analysis::tests::analyze_tests(
                &complete,
                &loaded.window.config,
                &incidents,
                &hidden,
            );
            let mut tests = TestsReport {
                repo: snapshot.repo.clone().or_else(|| asked.cloned()),
                since: snapshot.since,
                until: snapshot.until,
                tests,
                incidents,
                fill_gap: None,
                completeness,
                hidden,
            };
            tests.fill_gap = Some(fill_gap_command(&tests.survey_gap(), &loaded.survey_flags));
            tests
        })
        .collect();
    let many;
    let view = match target {
        Some(Target::Many(scope)) => {
            many = TestsMany::new(reports, scope.org.clone());
            TestsView::Org(&many)
        }
        _ => TestsView::Repo(reports.first().expect("a scope of one, one report")),
    };
    match view {
        TestsView::Repo(tests) if ids => write_output(args.output.as_deref(), |w| {
            report::tests::render_ids(tests, args.min_failures, w)
        })?,
        _ => output
            .write(|out, format, options| report::tests::render(view, format, options, out))?,
    }
    Ok(pipeline::incomplete_exit(
        global,
        &view.completeness(),
        args.allow_incomplete,
    ))
}

/// `--hosts`: where one repository's jobs ran, or (with `ids`) its drain list alone.
fn run_hosts(global: &GlobalArgs, args: &ReportArgs, ids: bool) -> Result<u8, CliError> {
    let output = ReportOutput::resolve(
        args.format.and_then(ReportFormat::report_format),
        args.output.clone(),
        global.color,
    )?;
    let target = args.target.target()?;
    if matches!(target, Some(Target::Many(_))) {
        return Err(CliError::Invalid(
            "--hosts reports one repository's runners: give one --repo".into(),
        ));
    }
    let loaded = scope::load_stored(target.as_ref(), &args.stored, None)?;
    scope::say_classified(global, loaded.classified);
    let snapshot = loaded
        .snapshots
        .first()
        .expect("a scope of one, one snapshot");
    let (complete, completeness) = analysis::complete_part(snapshot);
    let mut hosts = report::hosts::HostsReport {
        repo: snapshot.repo.clone().or_else(|| match &target {
            Some(Target::One(repo)) => Some(repo.clone()),
            _ => None,
        }),
        since: snapshot.since,
        until: snapshot.until,
        hosts: analysis::hosts::analyze_hosts(&complete),
        completeness,
        fill_gap: None,
    };
    hosts.fill_gap = Some(fill_gap_command(&hosts.survey_gap(), &loaded.survey_flags));
    if ids {
        write_output(args.output.as_deref(), |w| {
            report::hosts::render_ids(&hosts, w)
        })?;
    } else {
        output.write(|out, format, options| report::hosts::render(&hosts, format, options, out))?;
    }
    Ok(pipeline::incomplete_exit(
        global,
        &hosts.completeness,
        args.allow_incomplete,
    ))
}
