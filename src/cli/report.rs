//! `flakestat report`: the report from the store alone (no network). Resolves the window, the
//! signatures and `flakestat.toml`, classifies stored logs the current signatures have not seen
//! yet, loads the snapshot, analyzes it and renders the overview or one signature's account.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use clap::Args;

use super::config::load_config;
use super::output::{FormatArg, resolve_format, use_color, write_output};
use super::settings;
use super::when::parse_window;
use super::{CodedError, GlobalArgs};
use crate::analysis::{self, AnalysisConfig};
use crate::exit;
use crate::model::{Repo, SignatureId};
use crate::report::{self, Format, RenderOptions};
use crate::signatures::{self, SignatureSet};
use crate::store::{Store, StoreError};

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
    /// The repository, OWNER/NAME.
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: String,
    /// Start of the window, inclusive (a date, an RFC 3339 datetime, or 24h / 7d / 2w ago).
    #[arg(long, value_name = "WHEN")]
    pub since: String,
    /// End of the window (a date means through the end of that day). Default: now.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Report this signature alone, ready to paste into an issue.
    #[arg(long, value_name = "ID")]
    pub signature: Option<String>,
    /// Report format. Default: table on a terminal, markdown otherwise.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Where the store lives. Default: FLAKESTAT_CACHE_DIR, else the platform cache folder.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Signature files. Default: ./signatures if present, else the bundled set.
    #[arg(long, value_name = "DIR")]
    pub signatures: Option<PathBuf>,
    /// Settings file. Default: ./flakestat.toml if present.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Exit 0 even when the store does not hold the whole window yet (otherwise 9). The report
    /// says so in its first line either way.
    #[arg(long)]
    pub allow_incomplete: bool,
}

fn invalid(message: impl Into<String>) -> CodedError {
    CodedError::new(exit::INVALID_INPUT, message)
}

fn store_error(err: StoreError) -> CodedError {
    CodedError::new(exit::STORE, err.to_string())
}

pub fn run(global: &GlobalArgs, args: ReportArgs) -> anyhow::Result<u8> {
    let repo = Repo::parse(&args.repo).ok_or_else(|| {
        invalid(format!(
            "--repo {:?} is not OWNER/NAME (for example NVIDIA/cuda-python)",
            args.repo
        ))
    })?;
    let (since, until) = parse_window(
        &args.since,
        args.until.as_deref(),
        super::when::now_to_the_second(),
    )
    .map_err(|e| invalid(e.to_string()))?;

    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let file = load_config(args.config.as_deref(), &cwd).map_err(|e| invalid(e.to_string()))?;

    let source = signatures::resolve_dir(args.signatures.as_deref());
    let specs = source
        .load()
        .map_err(|e| invalid(format!("signatures from {source}: {e}")))?;
    let set = SignatureSet::compile(specs)
        .map_err(|e| invalid(format!("signatures from {source}: {e}")))?;
    let infos = set.info();
    let focus = match &args.signature {
        Some(id) => {
            if !infos.iter().any(|i| i.id.0 == *id) {
                let known: Vec<&str> = infos.iter().map(|i| i.id.0.as_str()).collect();
                return Err(invalid(format!(
                    "--signature {id:?}: no such signature in {source}; known: {}",
                    known.join(", ")
                ))
                .into());
            }
            Some(SignatureId(id.clone()))
        }
        None => None,
    };

    let cache_dir = settings::resolve_cache_dir(args.cache_dir.as_deref())
        .map_err(|e| CodedError::new(exit::STORE, e.to_string()))?;
    let store = Store::open(&cache_dir).map_err(store_error)?;
    if store.default_branch(&repo).map_err(store_error)?.is_none() {
        return Err(CodedError::new(
            exit::ERROR,
            format!(
                "the store in {} holds nothing for {repo}: run `flakestat survey --repo {repo} --since {}` first",
                cache_dir.display(),
                args.since
            ),
        )
        .into());
    }
    let store = Arc::new(Mutex::new(store));
    // `SignatureSet` is the store's re-classifier as it is (it implements `signatures::Classifier`).
    let classifier = set;
    // Re-classifying writes: only under the store's lock. When a survey or nightly holds it,
    // report what is classified (the rest shows as "not classified yet").
    let classified = match super::nightly::try_lock_store(&cache_dir, "flakestat report")? {
        Some(_lock) => {
            crate::store::reclassify_stored(&store, &repo, &classifier).map_err(store_error)?
        }
        None => 0,
    };
    if classified > 0 && global.verbose > 0 {
        eprintln!("flakestat: classified {classified} stored logs with the current signatures");
    }
    let snapshot = store
        .lock()
        .expect("store lock")
        .load_snapshot(&repo, since, until, &classifier.fingerprint())
        .map_err(store_error)?;

    let config = AnalysisConfig {
        pr_conventions: file.pr_conventions,
        matrix: file.matrix,
        focus,
        cost: file.cost,
    };
    let data = analysis::analyze(&snapshot, &infos, &config);
    let format = match resolve_format(args.format, args.output.as_deref()) {
        FormatArg::Table => Format::Table,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Json => Format::Json,
        FormatArg::Html => Format::Html,
    };
    let on_terminal = args.output.is_none() && std::io::stdout().is_terminal();
    let options = RenderOptions {
        color: format == Format::Table && args.output.is_none() && use_color(global.color),
        // The shell's COLUMNS when exported; otherwise tables keep their natural width.
        width: on_terminal
            .then(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
            .flatten(),
    };
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
