//! `flakestat export`: the store's window as Parquet files for a warehouse (DuckDB, BigQuery,
//! ClickHouse). Reads the store like `report` (the same flags, the same re-classification), takes
//! every counted figure from the same analysis, and writes five files into `--output DIR`:
//! all five are rendered in memory and written to temporary files in DIR first, and only when
//! all five are written are they renamed over the old ones, so an error never leaves a mix of
//! old and new files or half a file.

use std::path::{Path, PathBuf};

use clap::Args;

use super::GlobalArgs;
use super::error::CliError;
use super::source::WindowArgs;
#[cfg(feature = "parquet")]
use {
    super::pipeline::{self, load_from_store},
    crate::analysis::export::export,
    flakestat_parquet as parquet,
};

const EXAMPLES: &str = "\
Examples:
  flakestat export --repo NVIDIA/cuda-python --since 2026-06-15 \\
      --format parquet --output warehouse/
  flakestat export --repo NVIDIA/cuda-python --since 30d \\
      -o /data/flakestat/cuda-python
  flakestat export --replay fixtures/cuda-python-flake --since 2026-06-15 \\
      -o warehouse/
  duckdb -c \"SELECT signature, count(*) FROM 'warehouse/hits.parquet' \\
      WHERE counted GROUP BY 1\"

Writes runs.parquet, jobs.parquet, hits.parquet, pulls.parquet and suspects.parquet into DIR
(created 0700 if missing; other files in it are left alone). Reads only the store that
`flakestat survey` filled. The columns and example queries: docs/warehouse.md. Parquet is the
cargo feature `parquet`: in the release binaries and `cargo install --features parquet`, not in
the default build.";

/// Export format, as the command line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Five Parquet files (zstd), one per table
    Parquet,
}

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ExportArgs {
    #[command(flatten)]
    pub window: WindowArgs,
    /// What to write.
    #[arg(long, value_enum, default_value_t = ExportFormat::Parquet)]
    pub format: ExportFormat,
    /// The folder to write the files into (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Exit 0 even when the store does not hold the whole window yet (otherwise 9, after
    /// writing the files).
    #[arg(long)]
    pub allow_incomplete: bool,
}

/// What a build without the `parquet` feature says, before anything is read or written.
#[cfg(not(feature = "parquet"))]
pub const WITHOUT_PARQUET: &str = "export --format parquet: this flakestat was built without \
     Parquet (cargo feature `parquet`, left out of the default build to keep it quick); the \
     release binaries have it, or build it with `cargo install --locked --path . --features \
     parquet` (`cargo run --features parquet -- export ...` from a clone)";

pub fn run(global: &GlobalArgs, args: ExportArgs) -> Result<u8, CliError> {
    // Before the store is read: a wrong --output fails at once.
    let existed = check_output(&args.output)?;
    // A build without Parquet refuses before it reads the store or makes --output.
    #[cfg(not(feature = "parquet"))]
    {
        let _ = (global, existed);
        Err(CliError::Failed(WITHOUT_PARQUET.to_string()))
    }
    #[cfg(feature = "parquet")]
    export_to(global, &args, existed)
}

/// Reads the store's window, renders every file and writes them all into `--output`.
#[cfg(feature = "parquet")]
fn export_to(global: &GlobalArgs, args: &ExportArgs, existed: bool) -> Result<u8, CliError> {
    let loaded = load_from_store(&args.window, None)?;
    let (infos, snapshot, config) = (&loaded.signatures.infos, &loaded.snapshot, &loaded.config);
    pipeline::scope::say_classified(global, loaded.classified);
    let data = loaded.analyze();
    let tables = export(snapshot, infos, config, &data);
    let files = match args.format {
        ExportFormat::Parquet => parquet::render(&tables)
            .map_err(|e| CliError::Failed(format!("writing Parquet: {e}")))?,
    };
    write_all(&args.output, existed, &files)?;
    if !global.quiet {
        say!(
            "flakestat: wrote {} files to {}: {} runs, {} job executions, {} hits, {} pull requests, {} suspects",
            files.len(),
            args.output.display(),
            tables.runs.len(),
            tables.jobs.len(),
            tables.hits.len(),
            tables.pulls.len(),
            tables.suspects.len(),
        );
    }
    Ok(pipeline::incomplete_exit(
        global,
        &data.completeness,
        args.allow_incomplete,
    ))
}

fn cannot_write(dir: &Path, e: impl std::fmt::Display) -> CliError {
    CliError::Failed(format!(
        "cannot write into --output {}: {e}; nothing was written",
        dir.display()
    ))
}

/// Whether `dir` exists; `Err` when it is not a folder (exit 3) or cannot be written (exit 2).
pub(super) fn check_output(dir: &Path) -> Result<bool, CliError> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {
            // A file made and removed at once: a folder we may not write is said before the
            // store is read.
            tempfile::Builder::new()
                .prefix(".flakestat-export-")
                .tempfile_in(dir)
                .map_err(|e| cannot_write(dir, e))?;
            Ok(true)
        }
        Ok(_) => Err(CliError::Invalid(format!(
            "--output {} is not a folder: export writes five files into a folder (it is created when missing)",
            dir.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(cannot_write(dir, e)),
    }
}

/// Creates `dir` when missing (0700: the files name private repositories' jobs and log lines),
/// writes every file to a temporary file in it, then renames them into place. On an error
/// before the renames, the temporary files are removed and so is `dir` if this call made it.
#[cfg(feature = "parquet")]
fn write_all(dir: &Path, existed: bool, files: &[(&str, Vec<u8>)]) -> Result<(), CliError> {
    // A folder (or device) where a file goes would fail its rename after the others were
    // renamed: refused before anything is written.
    for (name, _) in files {
        let path = dir.join(name);
        if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
            return Err(cannot_write(
                dir,
                format!("{} is in the way and is not a file", path.display()),
            ));
        }
    }
    if !existed {
        create_private_dir(dir).map_err(|e| cannot_write(dir, e))?;
    }
    let written = files
        .iter()
        .map(|(name, bytes)| {
            use std::io::Write;
            let mut tmp = tempfile::Builder::new()
                .prefix(&format!(".{name}."))
                .tempfile_in(dir)?;
            tmp.write_all(bytes)?;
            tmp.as_file().sync_all()?;
            // A file being replaced keeps its permissions; a new one stays 0600.
            if let Ok(meta) = std::fs::metadata(dir.join(name)) {
                tmp.as_file().set_permissions(meta.permissions())?;
            }
            Ok((*name, tmp))
        })
        .collect::<std::io::Result<Vec<_>>>();
    let written = match written {
        Ok(w) => w,
        Err(e) => {
            if !existed {
                // Only if empty: the temporary files are gone with `written`.
                let _ = std::fs::remove_dir(dir);
            }
            return Err(cannot_write(dir, e));
        }
    };
    for (name, tmp) in written {
        let path = dir.join(name);
        tmp.persist(&path).map_err(|e| {
            CliError::file(
                format!("cannot write {}: {}", path.display(), e.error),
                e.error,
            )
        })?;
    }
    Ok(())
}

#[cfg(feature = "parquet")]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}
