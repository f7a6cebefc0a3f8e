//! Where reports go: stdout, or a file written atomically (a temporary file renamed into place,
//! so an interrupted run never leaves half a report).

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Report format, as the command line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Table,
    Markdown,
    Json,
}

/// `--format` given, or table on a terminal and markdown otherwise (so `> report.md` pastes).
pub fn resolve_format(given: Option<FormatArg>, output: Option<&Path>) -> FormatArg {
    given.unwrap_or(if output.is_none() && io::stdout().is_terminal() {
        FormatArg::Table
    } else {
        FormatArg::Markdown
    })
}

/// Writes `render`'s output to `path` atomically, or to stdout.
pub fn write_output(
    path: Option<&Path>,
    render: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    match path {
        None => {
            let stdout = io::stdout();
            let mut lock = io::BufWriter::new(stdout.lock());
            render(&mut lock)?;
            lock.flush()?;
            Ok(())
        }
        Some(path) => {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| {
                anyhow::anyhow!(
                    "cannot write {}: {e}; check the folder exists and is writable",
                    path.display()
                )
            })?;
            {
                let mut buf = io::BufWriter::new(tmp.as_file_mut());
                render(&mut buf)?;
                buf.flush()?;
            }
            tmp.persist(path)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {}", path.display(), e.error))?;
            Ok(())
        }
    }
}

/// Whether colour is wanted on stderr/stdout, honouring `--color` and `NO_COLOR`.
pub fn use_color(choice: super::ColorChoice) -> bool {
    match choice {
        super::ColorChoice::Always => true,
        super::ColorChoice::Never => false,
        super::ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && io::stdout().is_terminal()
        }
    }
}
