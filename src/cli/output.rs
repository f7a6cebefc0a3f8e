//! Where reports go: stdout, or a file written atomically (a temporary file renamed into place,
//! so an interrupted run never leaves half a report).
//!
//! `--output FILE`: a new file is created readable by its owner only (0600: reports name private
//! repositories' jobs and log lines); an existing file keeps its permission bits; a symlink is
//! written through, replacing its target (the link stays a link); a device or FIFO is written in
//! place.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use super::ColorChoice;
use super::error::CliError;
use crate::report::{Format, RenderOptions};

/// Report format, as the command line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Text tables for the terminal
    Table,
    /// GitHub-flavoured markdown, to paste into an issue
    Markdown,
    /// The versioned JSON document
    Json,
    /// One self-contained HTML page.
    Html,
}

impl From<FormatArg> for Format {
    fn from(arg: FormatArg) -> Format {
        match arg {
            FormatArg::Table => Format::Table,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Json => Format::Json,
            FormatArg::Html => Format::Html,
        }
    }
}

/// The formats a file name's extension stands for: the one it picks when `--format` is not
/// given, and every one it accepts (`.txt` is plain text: a table, or markdown). `None` for an
/// extension that says nothing about the format (or none at all).
pub fn extension_formats(path: &Path) -> Option<(FormatArg, &'static [FormatArg])> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "md" | "markdown" => (FormatArg::Markdown, &[FormatArg::Markdown]),
        "json" => (FormatArg::Json, &[FormatArg::Json]),
        "html" | "htm" => (FormatArg::Html, &[FormatArg::Html]),
        "txt" | "text" => (FormatArg::Table, &[FormatArg::Table, FormatArg::Markdown]),
        _ => return None,
    })
}

/// The `--format` name of `format`, for messages.
pub(super) fn format_name(format: FormatArg) -> String {
    use clap::ValueEnum;
    format
        .to_possible_value()
        .map_or_else(|| format!("{format:?}"), |v| v.get_name().to_string())
}

/// A `--format` that `--output`'s name contradicts.
pub(super) struct Mismatch<'a> {
    pub given: FormatArg,
    pub path: &'a Path,
    /// The format the name picks.
    pub named: FormatArg,
}

/// What `--format` and `--output`'s name decide together, for every command that takes both:
/// `--format` given, else the format the name's extension picks; `None` when neither says. A
/// `--format` the extension does not accept is a [`Mismatch`] (each command words its message).
pub(super) fn given_or_named(
    given: Option<FormatArg>,
    output: Option<&Path>,
) -> Result<Option<FormatArg>, Mismatch<'_>> {
    let named = output.and_then(|p| extension_formats(p).map(|f| (p, f)));
    match (given, named) {
        (Some(given), Some((path, (named, accepted)))) if !accepted.contains(&given) => {
            Err(Mismatch { given, path, named })
        }
        (Some(given), _) => Ok(Some(given)),
        (None, named) => Ok(named.map(|(_, (picked, _))| picked)),
    }
}

/// `--format` given, else what `--output`'s extension names, else table on a terminal and
/// markdown otherwise (so `> report.md` pastes). A `--format` the extension contradicts
/// (`--format json --output report.html`) is refused (exit 3) rather than leaving a file whose
/// name lies about what it holds.
pub fn resolve_format(
    given: Option<FormatArg>,
    output: Option<&Path>,
) -> Result<FormatArg, CliError> {
    match given_or_named(given, output) {
        Err(Mismatch { given, path, named }) => Err(CliError::Invalid(format!(
            "--format {} does not match --output {}, a name for {}: drop --format, or name the \
             file for what it holds",
            format_name(given),
            path.display(),
            format_name(named)
        ))),
        Ok(Some(format)) => Ok(format),
        Ok(None) => Ok(if output.is_none() && io::stdout().is_terminal() {
            FormatArg::Table
        } else {
            FormatArg::Markdown
        }),
    }
}

/// Where a report goes and how it looks, decided once from `--format`, `--output`, `--color`,
/// `NO_COLOR`, `COLUMNS` and whether stdout is a terminal.
#[derive(Debug, Clone)]
pub struct ReportOutput {
    /// `--output FILE`, or stdout.
    pub path: Option<PathBuf>,
    pub format: Format,
    pub options: RenderOptions,
}

impl ReportOutput {
    pub fn resolve(
        format: Option<FormatArg>,
        path: Option<PathBuf>,
        color: ColorChoice,
    ) -> Result<Self, CliError> {
        let format = Format::from(resolve_format(format, path.as_deref())?);
        let to_stdout = path.is_none();
        let options = RenderOptions {
            // Colour is for a table on stdout only (a file keeps no escape sequences).
            color: format == Format::Table && to_stdout && use_color(color),
            width: table_width(to_stdout && io::stdout().is_terminal()),
        };
        Ok(ReportOutput {
            path,
            format,
            options,
        })
    }

    /// Writes `render`'s output where it goes.
    pub fn write(
        &self,
        render: impl FnOnce(&mut dyn Write, Format, &RenderOptions) -> io::Result<()>,
    ) -> Result<(), CliError> {
        write_output(self.path.as_deref(), |out| {
            render(out, self.format, &self.options)
        })
    }
}

/// The width tables and prose are fitted to, wherever they go: `COLUMNS` when set (on a
/// terminal, into a pipe or into an `--output` file alike: `COLUMNS=100 flakestat … -o r.txt`
/// gives lines of at most 100 characters), else the terminal's own width when the output is one
/// (`to_terminal`); `None` (no `COLUMNS`, not a terminal) leaves tables at their natural width,
/// one line per row, for tools that read the lines.
pub(super) fn table_width(to_terminal: bool) -> Option<u16> {
    columns(std::env::var("COLUMNS").ok().as_deref()).or_else(|| {
        to_terminal
            .then(|| terminal_size::terminal_size_of(io::stdout()).map(|(w, _)| w.0))
            .flatten()
    })
}

/// `COLUMNS` as a width, when it is one.
fn columns(value: Option<&str>) -> Option<u16> {
    value?.trim().parse().ok().filter(|w| *w > 0)
}

/// Writes `render`'s output to `path` atomically, or to stdout.
pub fn write_output(
    path: Option<&Path>,
    render: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), CliError> {
    match path {
        None => {
            let stdout = io::stdout();
            let mut lock = io::BufWriter::new(stdout.lock());
            render(&mut lock)?;
            lock.flush()?;
            Ok(())
        }
        // A device, FIFO or socket (`--output /dev/null`, `--output /dev/stderr`, a named pipe)
        // is written in place: renaming a temporary file onto it would replace the device node
        // with a regular file (as root, /dev/null itself).
        Some(path) if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) => {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| CliError::file(format!("cannot write {}: {e}", path.display()), e))?;
            let mut buf = io::BufWriter::new(file);
            render(&mut buf)?;
            buf.flush()?;
            Ok(())
        }
        Some(path) => {
            let resolved = resolve_symlinks(path)?;
            let path = resolved.as_path();
            if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
                return write_output(Some(path), render);
            }
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| {
                let e = without_temp_path(&e);
                CliError::file(
                    format!(
                        "cannot write {}: {e}; check the folder exists and is writable",
                        path.display()
                    ),
                    e,
                )
            })?;
            {
                let mut buf = io::BufWriter::new(tmp.as_file_mut());
                render(&mut buf)?;
                buf.flush()?;
            }
            // The file being replaced keeps its permissions; a new one stays 0600.
            if let Ok(meta) = std::fs::metadata(path) {
                tmp.as_file()
                    .set_permissions(meta.permissions())
                    .map_err(|e| {
                        CliError::file(format!("cannot write {}: {e}", path.display()), e)
                    })?;
            }
            tmp.persist(path).map_err(|e| {
                CliError::file(
                    format!("cannot write {}: {}", path.display(), e.error),
                    e.error,
                )
            })?;
            Ok(())
        }
    }
}

/// `err` without what tempfile appends to it (` at path "DIR/.tmpXXXXXX"`: a random name the
/// user never asked for, which made the message differ run to run): the OS's error alone.
fn without_temp_path(err: &io::Error) -> io::Error {
    if let Some(code) = err.raw_os_error() {
        return io::Error::from_raw_os_error(code);
    }
    let text = err.to_string();
    let reason = text
        .rfind(" at path \"")
        .map_or(text.as_str(), |at| &text[..at]);
    io::Error::new(err.kind(), reason.to_string())
}

/// Links followed before giving up (the kernel's own limit for a path is 40).
const MAX_SYMLINKS: usize = 40;

/// `path` with every symlink at its end followed (a dangling link names the file to create), so
/// that the rename replaces the target, not the link.
fn resolve_symlinks(path: &Path) -> Result<PathBuf, CliError> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current).map_err(|e| {
                    CliError::file(format!("cannot write {}: {e}", path.display()), e)
                })?;
                current = match current.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(CliError::Failed(format!(
        "cannot write {}: more than {MAX_SYMLINKS} symlinks in a row (a loop?)",
        path.display()
    )))
}

/// Whether colour is wanted on stderr/stdout, honouring `--color` and `NO_COLOR`.
pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && io::stdout().is_terminal()
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn a_special_file_is_written_in_place_not_replaced() {
        // Regression: `--output /dev/null` once renamed a temporary file onto /dev/null.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                std::fs::File::open(fifo)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                text
            })
        };
        write_output(Some(&fifo), |w| w.write_all(b"report\n")).unwrap();
        assert_eq!(reader.join().unwrap(), "report\n");
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(
            kind.is_fifo(),
            "the FIFO is still a FIFO, not a regular file"
        );
    }

    #[test]
    fn columns_wins_when_it_is_a_width() {
        assert_eq!(columns(Some("120")), Some(120));
        assert_eq!(columns(Some(" 80 ")), Some(80));
        for not_a_width in [None, Some(""), Some("0"), Some("wide"), Some("-1")] {
            assert_eq!(columns(not_a_width), None, "{not_a_width:?}");
        }
    }

    #[test]
    fn a_regular_file_is_replaced_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report.md");
        std::fs::write(&out, "old").unwrap();
        write_output(Some(&out), |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file left behind");
    }
}
