//! `flakestat report`: the report from the store alone (no network). Resolves the window, the
//! signatures and `flakestat.toml`, classifies stored logs the current signatures have not seen
//! yet, loads the snapshot, analyzes it and renders the overview or one signature's account.

use std::path::PathBuf;

use clap::Args;

use super::GlobalArgs;
use super::from_store::{Loaded, load_from_store};
use super::output::{FormatArg, render_options, resolve_format, write_output};
use crate::analysis;
use crate::exit;
use crate::report::{self, Format};

const EXAMPLES: &str = "\
Examples:
  flakestat report --repo NVIDIA/cuda-python --since 2026-06-15
  flakestat report --repo NVIDIA/cuda-python --since 30d --signature wait-until-timeout --format markdown > issue.md
  flakestat report --repo NVIDIA/cuda-python --since 2026-06-01 --until 2026-06-30 --format json --output june.json

Reads only the store that `flakestat survey` filled (--cache-dir, else FLAKESTAT_CACHE_DIR, else
the platform cache folder). Job names are read into matrix dimensions with the built-in
vocabularies, or with the [matrix] pattern of flakestat.toml (current folder, or --config).";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ReportArgs {
    #[command(flatten)]
    pub window: super::from_store::WindowArgs,
    /// Report this signature alone, ready to paste into an issue.
    #[arg(long, value_name = "ID")]
    pub signature: Option<String>,
    /// Report format. Default: table on a terminal, markdown otherwise.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 0 even when the store does not hold the whole window yet (otherwise 9). The report
    /// says so in its first line either way.
    #[arg(long)]
    pub allow_incomplete: bool,
}

pub fn run(global: &GlobalArgs, args: ReportArgs) -> anyhow::Result<u8> {
    let Loaded {
        infos,
        snapshot,
        config,
        classified,
        ..
    } = load_from_store(&args.window, args.signature.as_deref(), "flakestat report")?;
    if classified > 0 && global.verbose > 0 {
        eprintln!("flakestat: classified {classified} stored logs with the current signatures");
    }
    let data = analysis::analyze(&snapshot, &infos, &config);
    let format = Format::from(resolve_format(args.format, args.output.as_deref()));
    let options = render_options(format, args.output.as_deref(), global.color);
    write_output(args.output.as_deref(), |out| {
        report::render(&data, format, &options, out)
    })?;
    Ok(incomplete_exit(
        global,
        &data.completeness,
        args.allow_incomplete,
    ))
}

/// `exit::INCOMPLETE` (said on stderr) when the store lacks part of the window and
/// `--allow-incomplete` was not given; `exit::SUCCESS` otherwise.
pub(super) fn incomplete_exit(
    global: &GlobalArgs,
    completeness: &analysis::Completeness,
    allow: bool,
) -> u8 {
    if completeness.is_complete() || allow {
        return exit::SUCCESS;
    }
    if !global.quiet {
        eprintln!(
            "flakestat: the store does not hold the whole window yet (runs without jobs: {}, logs not fetched: {}, windows not listed: {}); the figures leave out {} of its runs; exiting {} (--allow-incomplete accepts it)",
            completeness.runs_pending,
            completeness.logs_pending,
            completeness.unlisted.len(),
            completeness.runs_left_out,
            exit::INCOMPLETE
        );
    }
    exit::INCOMPLETE
}
