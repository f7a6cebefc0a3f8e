//! `flakestat classify`: classify local job logs (files, `-` for stdin, a run's logs `.zip`)
//! against signatures; print a table or the versioned JSON; exit like grep (0 some log matched,
//! 1 none did, 3 invalid input, 2 other errors).
//!
//! Logs are streamed (bounded memory whatever their size; a file of 1 to 16 MiB is mapped
//! instead, `map_log`) and classified on a few threads at once, one file per thread; a `.zip` is one unit of work, its entries read in archive order. The
//! table is built here rather than in `report/` because it renders a classification, not a
//! survey's `ReportData`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Args;
use serde::{Deserialize, Serialize};

use super::GlobalArgs;
use super::error::CliError;
use super::output::write_output;
use super::pipeline::Signatures;
use crate::exit;
use crate::model::Classification;
use crate::report::sanitize::{terminal, terminal_line};
use crate::report::{RenderOptions, grid, markdown_text};
use crate::signatures::SignatureSet;
use crate::signatures::normalize::{
    Utf16Reader, binary_reason, gh_log_prefix, utf16_bom, utf16_without_bom,
};
use crate::signatures::testids::junit;

/// Bytes looked at to tell a binary file from a log.
const SNIFF: usize = 64 * 1024;
/// Most files classified at once.
const MAX_WORKERS: usize = 8;

const EXAMPLES: &str = "\
Examples:
  flakestat classify job.log
  flakestat classify run-logs.zip -o classified.json
  flakestat classify job.log --format markdown > found.md
  gh run view 29647957539 --log-failed | flakestat classify -
  flakestat classify --signatures ./signatures logs/*.txt
  flakestat classify --tests job.log junit/TEST-*.xml --format json

With --tests: the failing tests each log's runners name (pytest, unittest, go,
cargo, nextest, jest, vitest, mocha, Maven, Gradle, GoogleTest, ctest, RSpec,
dotnet, PHPUnit, TAP, or a JUnit XML report), and the tests that failed and
then passed on a retry in it (flaky).

Exit codes, like grep: 0 some log matched a signature, 1 none did, 3 invalid input (a broken
signature file, an unreadable or binary log), 2 any other error.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ClassifyArgs {
    /// Folder of signature files [default: ./signatures if it exists, else the bundled set].
    #[arg(long, value_name = "DIR")]
    pub signatures: Option<PathBuf>,
    /// Output format. Default: what --output's extension names (.json, .md, .txt), else table.
    #[arg(long, value_enum)]
    pub format: Option<ClassifyFormat>,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// List each log's failing tests and the tests that failed, then passed on a retry in it
    /// (JSON: `files[].tests_failed`, `files[].tests_flaky`); exit 0 when some test failed or
    /// was flaky, 1 when none.
    #[arg(long)]
    pub tests: bool,
    /// Files classified at once [default: the number of CPUs, at most 8].
    #[arg(long, short, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Job logs: files, `-` for stdin, `.zip` archives of a run's logs as GitHub serves them, or
    /// JUnit XML reports.
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClassifyFormat {
    /// A table fitted to the terminal's width (COLUMNS wins); at its natural width elsewhere
    Table,
    /// A GitHub-flavoured markdown table, to paste into an issue
    Markdown,
    /// The versioned JSON document
    Json,
}

impl From<ClassifyFormat> for super::output::FormatArg {
    fn from(format: ClassifyFormat) -> Self {
        match format {
            ClassifyFormat::Table => Self::Table,
            ClassifyFormat::Markdown => Self::Markdown,
            ClassifyFormat::Json => Self::Json,
        }
    }
}

/// `--format`, else what `--output`'s extension names, else a table; a format the name
/// contradicts (`--format json -o found.md`, or `.html`, which classify does not write) is
/// refused (exit 3). The same decision as a report's (`output::given_or_named`).
fn resolve_format(
    given: Option<ClassifyFormat>,
    output: Option<&Path>,
) -> Result<ClassifyFormat, CliError> {
    use super::output::{FormatArg, Mismatch, extension_formats, format_name, given_or_named};
    if let Some(path) = output
        && let Some((FormatArg::Html, _)) = extension_formats(path)
    {
        return Err(CliError::Invalid(format!(
            "--output {} names an HTML file: classify writes a table, markdown or JSON{}",
            path.display(),
            if given.is_some() { "" } else { " (--format)" }
        )));
    }
    match given_or_named(given.map(FormatArg::from), output) {
        Err(Mismatch { given, path, .. }) => Err(CliError::Invalid(format!(
            "--format {} does not match --output {}: drop --format, or name the file for what \
             it holds",
            format_name(given),
            path.display()
        ))),
        Ok(Some(FormatArg::Markdown)) => Ok(ClassifyFormat::Markdown),
        Ok(Some(FormatArg::Json)) => Ok(ClassifyFormat::Json),
        Ok(Some(FormatArg::Table) | None) => Ok(ClassifyFormat::Table),
        Ok(Some(FormatArg::Html)) => {
            unreachable!("classify takes no --format html; .html is refused above")
        }
    }
}

/// The JSON document (`--format json`), schema 1. Documented in docs/matching.md; fields are
/// only ever added, and a breaking change bumps `schema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassifyJson {
    pub schema: u32,
    pub files: Vec<FileJson>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileJson {
    /// The path as given, `-` for stdin, `archive.zip:entry` for a zip entry.
    pub file: String,
    /// The job, for a file in `gh run view --log` format (one entry per job); line numbers
    /// are the file's.
    #[serde(default)]
    pub job: Option<String>,
    pub matches: Vec<MatchJson>,
    pub unclassified: bool,
    pub error_lines: Vec<LineJson>,
    /// Something worth knowing, e.g. `empty file`.
    pub note: Option<String>,
    /// Why the input was refused (unreadable, binary, a broken zip); `null` when it was
    /// classified. A refused input has no matches and no error lines.
    #[serde(default)]
    pub error: Option<String>,
    /// With `--tests`: the failing tests' ids as the runner prints them, sorted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_failed: Option<Vec<String>>,
    /// With `--tests`: the tests that failed and then passed on a retry in this log, sorted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_flaky: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchJson {
    pub signature: String,
    pub line: u64,
    pub lines: Vec<u64>,
    pub text: String,
    pub step: Option<String>,
    pub count: u64,
    pub tests: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineJson {
    pub line: u64,
    pub text: String,
}

/// One classified log.
#[derive(Debug)]
struct Classified {
    name: String,
    job: Option<String>,
    classification: Classification,
    note: Option<String>,
}

/// A log that could not be classified: unreadable, binary, a broken archive.
#[derive(Debug)]
struct InputError {
    /// The input as `Classified::name` would name it.
    name: String,
    message: String,
}

type UnitResult = Vec<Result<Classified, InputError>>;

pub fn run(global: &GlobalArgs, args: ClassifyArgs) -> Result<u8, CliError> {
    let format = resolve_format(args.format, args.output.as_deref())?;
    // The telling-line and test forms compile while the signatures load and compile here (all
    // of it before the first log is read); the thread is not waited for: the first log to
    // need the forms waits for them, if they are not ready by then.
    std::thread::spawn(crate::signatures::warm_up);
    // Without --tests there is nothing to do without signatures; with it, the tests are named.
    let signatures = if args.tests {
        Signatures::load(args.signatures.as_deref())?
    } else {
        Signatures::load_strict(args.signatures.as_deref())?
    };
    let set: &SignatureSet = &signatures.set;
    if args.logs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(CliError::Invalid(
            "`-` (stdin) may be given only once".into(),
        ));
    }
    let workers = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_WORKERS)
        })
        .min(args.logs.len())
        .max(1);
    let results = classify_all(set, &args.logs, workers);

    let results: Vec<Result<Classified, InputError>> = results.into_iter().flatten().collect();
    let mut files = Vec::new();
    let mut invalid = 0;
    for result in &results {
        match result {
            Ok(c) => files.push(c),
            Err(e) => {
                invalid += 1;
                say!("flakestat: error: {}", terminal(&e.message));
            }
        }
    }
    if !global.quiet {
        for f in &files {
            if let Some(note) = &f.note {
                say!(
                    "flakestat: note: {}: {}",
                    terminal_line(&f.name),
                    terminal_line(note)
                );
            }
        }
    }
    let any_match = if args.tests {
        files.iter().any(|f| !f.classification.tests.is_empty())
    } else {
        files.iter().any(|f| !f.classification.is_unclassified())
    };
    // On a terminal the table fits its width (COLUMNS wins; a table too wide for it becomes one
    // record per row, so no id is broken); to a pipe or a file it is plain text at its natural
    // width.
    let options = RenderOptions {
        color: false,
        width: (args.output.is_none() && io::stdout().is_terminal())
            .then(|| super::output::table_width(true))
            .flatten(),
    };
    match format {
        // Every input, refused ones with their error, even when all were refused: a script
        // reads one document whatever happened.
        ClassifyFormat::Json => {
            write_output(args.output.as_deref(), |w| {
                render_json(w, &results, args.tests)
            })?;
        }
        // When no input could be read there is nothing to tabulate: an empty table would only
        // bury the error lines above it.
        _ if files.is_empty() && invalid > 0 => {}
        ClassifyFormat::Table => {
            write_output(args.output.as_deref(), |w| {
                if args.tests {
                    render_tests_table(w, &files, &options)
                } else {
                    render_table(w, &files, &options)
                }
            })?;
        }
        ClassifyFormat::Markdown => {
            write_output(args.output.as_deref(), |w| {
                if args.tests {
                    render_tests_markdown(w, &files)
                } else {
                    render_markdown(w, &files)
                }
            })?;
        }
    }
    Ok(if invalid > 0 {
        exit::INVALID_INPUT
    } else if any_match {
        exit::SUCCESS
    } else {
        exit::NO_MATCH
    })
}

fn classify_all(set: &SignatureSet, logs: &[PathBuf], workers: usize) -> Vec<UnitResult> {
    // Largest first, so that no worker is left alone with a big log at the end; results keep
    // the order given.
    let mut order: Vec<usize> = (0..logs.len()).collect();
    let size = |p: &PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    let sizes: Vec<u64> = logs.iter().map(size).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<UnitResult>> = logs.iter().map(|_| Mutex::new(Vec::new())).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let path = &logs[i];
                    let result = classify_unit(set, path);
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = result;
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

fn classify_unit(set: &SignatureSet, path: &Path) -> UnitResult {
    let name = path.display().to_string();
    if path.as_os_str() == "-" {
        let stdin = io::stdin();
        return classify_stream(set, "-".into(), stdin.lock());
    }
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return vec![Err(unreadable(&name, &e))],
    };
    if path.is_dir() {
        return vec![Err(InputError {
            message: format!("{name} is a directory; give the log files inside it"),
            name,
        })];
    }
    let mut reader = BufReader::with_capacity(SNIFF, file);
    let is_zip = match reader.fill_buf() {
        Ok(head) => head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06"),
        Err(e) => return vec![Err(unreadable(&name, &e))],
    };
    if is_zip
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
    {
        return classify_zip(set, &name, path);
    }
    if let Some(map) = map_log(reader.get_ref()) {
        return classify_mapped(set, name, &map);
    }
    classify_stream(set, name, reader)
}

/// The sizes of regular files mapped rather than read (`map_log`).
const MAPPED: std::ops::RangeInclusive<u64> = (1 << 20)..=(16 << 20);

/// The file's bytes mapped into memory, when it is a regular file whose size is in [`MAPPED`]
/// and the system maps it (else `None`: it is read as a stream). Reading copies every byte
/// from the page cache into a buffer, a sixth of `classify`'s time on large logs
/// (`benches/classify.sh`, docs/matching.md); a mapping lets the matcher scan the page cache
/// itself. Small files are read: mapping and unmapping cost more than the copy. Larger ones
/// are streamed too, so that memory stays bounded whatever a log's size: a mapped file's pages
/// count in the resident set, at most twice the stream's 8 MiB chunk.
fn map_log(file: &File) -> Option<memmap2::Mmap> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || !MAPPED.contains(&meta.len()) {
        return None;
    }
    // SAFETY: the mapping is only read, for as long as this unit is classified. A log that
    // another process truncates meanwhile would make reading its lost pages fail (SIGBUS),
    // as it does for ripgrep, which maps files the same way; a log appended to is read as it
    // was when mapped.
    unsafe { memmap2::Mmap::map(file) }.ok()
}

/// [`classify_stream`] over a mapped file: a plain log (the usual case) is classified in
/// place; UTF-16, JUnit XML and `gh run view --log` files take the stream's path over the
/// same bytes.
fn classify_mapped(set: &SignatureSet, name: String, bytes: &[u8]) -> UnitResult {
    let head = &bytes[..bytes.len().min(SNIFF)];
    if !matches!(sniff(head), Sniffed::Text) || is_gh_log(head) {
        return classify_stream(set, name, bytes);
    }
    if let Some(refused) = refuse_binary(&name, head) {
        return vec![Err(refused)];
    }
    vec![Ok(log_result(name, set.classify(bytes), bytes.is_empty()))]
}

/// What a file's first bytes say it holds.
enum Sniffed {
    /// UTF-16 text: its byte order, and whether it starts with a BOM (two bytes to skip).
    Utf16 {
        big_endian: bool,
        bom: bool,
    },
    JunitXml,
    /// Bytes read as they are: a log (perhaps in `gh run view --log` form), or binary.
    Text,
}

fn sniff(head: &[u8]) -> Sniffed {
    if let Some(big_endian) = utf16_bom(head) {
        Sniffed::Utf16 {
            big_endian,
            bom: true,
        }
    } else if let Some(big_endian) = utf16_without_bom(head) {
        Sniffed::Utf16 {
            big_endian,
            bom: false,
        }
    } else if junit::looks_like_xml(head) {
        Sniffed::JunitXml
    } else {
        Sniffed::Text
    }
}

/// Whether text starting with `head` is in `gh run view --log` form (its first line says so).
fn is_gh_log(head: &[u8]) -> bool {
    let first_line = &head[..memchr::memchr(b'\n', head).unwrap_or(head.len())];
    gh_log_prefix(first_line).is_some()
}

fn unreadable(name: &str, e: &io::Error) -> InputError {
    InputError {
        name: name.to_string(),
        message: format!("cannot read {name}: {e}; check the path and its permissions"),
    }
}

/// Classifies one log stream, refusing binary input: UTF-16 (with a BOM, or recognised without
/// one) is decoded, and a
/// file in `gh run view --log` format gives one result per job.
fn classify_stream(set: &SignatureSet, name: String, reader: impl Read) -> UnitResult {
    let mut reader = BufReader::with_capacity(SNIFF, reader);
    let head = match reader.fill_buf() {
        Ok(head) => head,
        Err(e) => return vec![Err(unreadable(&name, &e))],
    };
    match sniff(head) {
        Sniffed::Utf16 { big_endian, bom } => {
            if bom {
                reader.consume(2);
            }
            classify_text(set, name, Utf16Reader::new(reader, big_endian))
        }
        Sniffed::JunitXml => vec![read_junit(name, reader)],
        Sniffed::Text => classify_text(set, name, reader),
    }
}

/// A JUnit XML report: its tests, no signature matches (a report holds no log lines).
fn read_junit(name: String, reader: impl BufRead) -> Result<Classified, InputError> {
    match junit::parse(reader) {
        Ok(tests) => Ok(Classified {
            name,
            job: None,
            classification: Classification {
                tests,
                ..Classification::default()
            },
            note: Some("JUnit XML report".into()),
        }),
        Err(e) => Err(InputError {
            message: format!("{name}: {e}; give a JUnit XML report or a job log"),
            name,
        }),
    }
}

fn classify_text(set: &SignatureSet, name: String, reader: impl Read) -> UnitResult {
    let mut reader = BufReader::with_capacity(SNIFF, reader);
    let head = match reader.fill_buf() {
        Ok(head) => head,
        Err(e) => return vec![Err(unreadable(&name, &e))],
    };
    if is_gh_log(head) {
        return classify_gh_log(set, &name, reader);
    }
    vec![classify_one(set, name, reader)]
}

/// A log in `gh run view --log` format: lines `job TAB step TAB message`, the jobs of a run one
/// after the other. Each job is classified on its own; line numbers stay the file's. A line
/// in no such form (a message's continuation) belongs to the job before it.
fn classify_gh_log(set: &SignatureSet, name: &str, mut reader: impl BufRead) -> UnitResult {
    struct JobLog {
        name: String,
        text: Vec<u8>,
        /// The file line number of each of `text`'s lines.
        numbers: Vec<u64>,
    }
    let mut jobs: Vec<JobLog> = Vec::new();
    let mut index = std::collections::HashMap::<Vec<u8>, usize>::new();
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut current: Option<usize> = None;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return vec![Err(unreadable(name, &e))],
        }
        number += 1;
        let (job, message) = match gh_log_prefix(line.strip_suffix(b"\n").unwrap_or(&line)) {
            Some((job, at)) => (Some(job.to_vec()), &line[at..]),
            None => (None, &line[..]),
        };
        let slot = match job {
            Some(job) => {
                let next = jobs.len();
                let slot = *index.entry(job.clone()).or_insert(next);
                if slot == next {
                    jobs.push(JobLog {
                        name: String::from_utf8_lossy(&job).into_owned(),
                        text: Vec::new(),
                        numbers: Vec::new(),
                    });
                }
                slot
            }
            None => match current {
                Some(slot) => slot,
                None => continue,
            },
        };
        current = Some(slot);
        let j = &mut jobs[slot];
        j.text.extend_from_slice(message);
        if !message.ends_with(b"\n") {
            j.text.push(b'\n');
        }
        j.numbers.push(number);
    }
    jobs.into_iter()
        .map(|j| {
            let mut classification = set.classify(&j.text);
            let file_line = |l: u64| {
                j.numbers
                    .get((l as usize).wrapping_sub(1))
                    .copied()
                    .unwrap_or(l)
            };
            for m in &mut classification.matches {
                m.line = file_line(m.line);
                for l in &mut m.lines {
                    *l = file_line(*l);
                }
            }
            for l in &mut classification.error_lines {
                l.line = file_line(l.line);
            }
            let tests = &mut classification.tests;
            for t in tests.failed.iter_mut().chain(tests.flaky.iter_mut()) {
                t.line = file_line(t.line);
            }
            Ok(Classified {
                name: name.to_string(),
                job: Some(j.name),
                classification,
                note: None,
            })
        })
        .collect()
}

/// Classifies one plain log stream, refusing binary input.
fn classify_one(
    set: &SignatureSet,
    name: String,
    reader: impl Read,
) -> Result<Classified, InputError> {
    let mut reader = BufReader::with_capacity(SNIFF, reader);
    // fill_buf may return less than is available; gather a full sample for the binary check.
    let mut sample = Vec::with_capacity(SNIFF);
    while sample.len() < SNIFF {
        let got = reader.fill_buf().map_err(|e| unreadable(&name, &e))?;
        if got.is_empty() {
            break;
        }
        let take = got.len().min(SNIFF - sample.len());
        sample.extend_from_slice(&got[..take]);
        reader.consume(take);
    }
    if let Some(refused) = refuse_binary(&name, &sample) {
        return Err(refused);
    }
    let empty = sample.is_empty();
    let classification = set
        .classify_reader(io::Cursor::new(sample).chain(reader))
        .map_err(|e| unreadable(&name, &e))?;
    Ok(log_result(name, classification, empty))
}

/// The refusal of a file whose first bytes, `sample`, show it is binary.
fn refuse_binary(name: &str, sample: &[u8]) -> Option<InputError> {
    let reason = binary_reason(sample)?;
    Some(InputError {
        message: format!(
            "{name}: binary, not a log ({reason}); give the job log itself as text \
             (a run's logs .zip is read directly)"
        ),
        name: name.to_string(),
    })
}

/// One log's result (`empty`: the file held nothing).
fn log_result(name: String, classification: Classification, empty: bool) -> Classified {
    Classified {
        name,
        job: None,
        classification,
        note: empty.then(|| "empty file".to_string()),
    }
}

fn classify_zip(set: &SignatureSet, name: &str, path: &Path) -> UnitResult {
    let bad_zip = |e: &dyn std::fmt::Display| InputError {
        name: name.to_string(),
        message: format!(
            "{name} is not a readable zip archive ({e}); download the run's logs again"
        ),
    };
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return vec![Err(unreadable(name, &e))],
    };
    let mut out = Vec::new();
    let visited = flakestat_zip::visit_files(io::BufReader::new(file), |entry| match entry {
        Ok((entry, reader)) => out.extend(classify_stream(set, format!("{name}:{entry}"), reader)),
        Err(e) => out.push(Err(bad_zip(&e))),
    });
    if let Err(e) = visited {
        return vec![Err(bad_zip(&e))];
    }
    if out.is_empty() {
        out.push(Err(InputError {
            name: name.to_string(),
            message: format!("{name} holds no files; download the run's logs again"),
        }));
    }
    out
}

fn to_json(results: &[Result<Classified, InputError>], tests: bool) -> ClassifyJson {
    ClassifyJson {
        schema: 1,
        files: results
            .iter()
            .map(|result| match result {
                Ok(f) => classified_json(f, tests),
                Err(e) => FileJson {
                    file: e.name.clone(),
                    job: None,
                    matches: Vec::new(),
                    unclassified: false,
                    error_lines: Vec::new(),
                    note: None,
                    error: Some(e.message.clone()),
                    tests_failed: tests.then(Vec::new),
                    tests_flaky: tests.then(Vec::new),
                },
            })
            .collect(),
    }
}

fn classified_json(f: &Classified, tests: bool) -> FileJson {
    let ids = |records: &[crate::model::TestRecord]| {
        tests.then(|| records.iter().map(|t| t.id.clone()).collect())
    };
    FileJson {
        file: f.name.clone(),
        job: f.job.clone(),
        matches: f
            .classification
            .matches
            .iter()
            .map(|m| MatchJson {
                signature: m.signature.0.clone(),
                line: m.line,
                lines: m.lines.clone(),
                text: m.text.clone(),
                step: m.step.clone(),
                count: m.count,
                tests: m.tests.iter().cloned().collect(),
            })
            .collect(),
        unclassified: f.classification.is_unclassified(),
        error_lines: f
            .classification
            .error_lines
            .iter()
            .map(|l| LineJson {
                line: l.line,
                text: l.text.clone(),
            })
            .collect(),
        note: f.note.clone(),
        error: None,
        tests_failed: ids(&f.classification.tests.failed),
        tests_flaky: ids(&f.classification.tests.flaky),
    }
}

fn render_json(
    w: &mut dyn Write,
    results: &[Result<Classified, InputError>],
    tests: bool,
) -> io::Result<()> {
    crate::report::sanitize::write_json(w, &to_json(results, tests))
}

/// Longest log text shown in a table cell.
const CELL: usize = 120;

fn cell(text: &str) -> String {
    let clean = terminal_line(text);
    if clean.chars().count() <= CELL {
        clean
    } else {
        let mut s: String = clean.chars().take(CELL - 1).collect();
        s.push('…');
        s
    }
}

/// Error lines shown for an unclassified log in the table (JSON has them all).
const TABLE_ERROR_LINES: usize = 3;

/// The first column of a log's rows: its name, and the job a `gh run view --log` file's part
/// belongs to.
fn log_cell(f: &Classified) -> String {
    match &f.job {
        Some(job) => format!("{}\njob: {}", cell(&f.name), cell(job)),
        None => cell(&f.name),
    }
}

const HEADERS: [&str; 6] = ["log", "signature", "line", "count", "step", "text"];

/// The rows both the table and markdown show: one per match, or up to three error lines of an
/// unclassified log.
fn rows(files: &[&Classified]) -> Vec<Vec<String>> {
    let mut table: Vec<Vec<String>> = Vec::new();
    for f in files {
        let file = log_cell(f);
        if f.classification.is_unclassified() {
            let label = match &f.note {
                Some(note) => format!("unclassified ({note})"),
                None => "unclassified".to_string(),
            };
            let lines = &f.classification.error_lines;
            if lines.is_empty() {
                table.push(vec![
                    file.clone(),
                    label.clone(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]);
            }
            for (i, l) in lines.iter().take(TABLE_ERROR_LINES).enumerate() {
                let (file, label) = if i == 0 {
                    (file.clone(), label.clone())
                } else {
                    (String::new(), String::new())
                };
                table.push(vec![
                    file,
                    label,
                    l.line.to_string(),
                    String::new(),
                    String::new(),
                    cell(&l.text),
                ]);
            }
        } else {
            for (i, m) in f.classification.matches.iter().enumerate() {
                let tests = if m.tests.is_empty() {
                    String::new()
                } else {
                    let shown: Vec<&str> = m.tests.iter().take(3).map(String::as_str).collect();
                    let more = m.tests.len().saturating_sub(shown.len());
                    let more = if more > 0 {
                        format!(" (+{more})")
                    } else {
                        String::new()
                    };
                    format!("\ntests: {}{more}", shown.join(", "))
                };
                table.push(vec![
                    if i == 0 { file.clone() } else { String::new() },
                    cell(&m.signature.0),
                    m.line.to_string(),
                    m.count.to_string(),
                    m.step.as_deref().map(cell).unwrap_or_default(),
                    format!("{}{}", cell(&m.text), cell_multiline(&tests)),
                ]);
            }
        }
    }
    table
}

fn matched_line(files: &[&Classified]) -> String {
    let matched = files
        .iter()
        .filter(|f| !f.classification.is_unclassified())
        .count();
    format!("{matched} of {} logs matched a signature", files.len())
}

/// The table, through the reports' grid: fitted to the terminal's width when there is one.
fn render_table(
    w: &mut dyn Write,
    files: &[&Classified],
    options: &RenderOptions,
) -> io::Result<()> {
    writeln!(w, "{}", grid(&HEADERS, &rows(files), options))?;
    writeln!(w, "{}", matched_line(files))
}

/// A GitHub-flavoured markdown table of the same rows, then the same count.
fn render_markdown(w: &mut dyn Write, files: &[&Classified]) -> io::Result<()> {
    markdown_table(
        w,
        &HEADERS,
        "| --- | --- | ---: | ---: | --- | --- |",
        rows(files),
    )?;
    writeln!(w)?;
    writeln!(w, "{}", matched_line(files))
}

/// `--tests --format markdown`: the tests table's rows, then its count.
fn render_tests_markdown(w: &mut dyn Write, files: &[&Classified]) -> io::Result<()> {
    let (rows, summary) = tests_rows(files);
    markdown_table(w, &TEST_HEADERS, "| --- | --- | --- | --- | ---: |", rows)?;
    writeln!(w)?;
    writeln!(w, "{summary}")
}

fn markdown_table(
    w: &mut dyn Write,
    headers: &[&str],
    rule: &str,
    rows: Vec<Vec<String>>,
) -> io::Result<()> {
    writeln!(w, "| {} |", headers.join(" | "))?;
    writeln!(w, "{rule}")?;
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| {
                c.lines()
                    .map(markdown_text)
                    .collect::<Vec<_>>()
                    .join("<br>")
            })
            .collect();
        writeln!(w, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}

const TEST_HEADERS: [&str; 5] = ["log", "test", "outcome", "runner", "line"];

/// `--tests`: one row per failing or flaky test of each log.
fn render_tests_table(
    w: &mut dyn Write,
    files: &[&Classified],
    options: &RenderOptions,
) -> io::Result<()> {
    let (rows, summary) = tests_rows(files);
    writeln!(w, "{}", grid(&TEST_HEADERS, &rows, options))?;
    writeln!(w, "{summary}")
}

/// The rows of `--tests` (one per failing or flaky test) and the line counting them.
fn tests_rows(files: &[&Classified]) -> (Vec<Vec<String>>, String) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let (mut failed, mut flaky) = (0, 0);
    for f in files {
        let file = log_cell(f);
        let tests = &f.classification.tests;
        failed += tests.failed.len();
        flaky += tests.flaky.len();
        let found = tests
            .failed
            .iter()
            .map(|t| (t, "failed"))
            .chain(tests.flaky.iter().map(|t| (t, "flaky")));
        let mut first = true;
        for (t, outcome) in found {
            rows.push(vec![
                if first { file.clone() } else { String::new() },
                cell(&t.id),
                outcome.to_string(),
                t.runner.clone(),
                if t.line == 0 {
                    String::new()
                } else {
                    t.line.to_string()
                },
            ]);
            first = false;
        }
        if first {
            rows.push(vec![
                file,
                "no failing tests found".to_string(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
    }
    let summary = format!(
        "{failed} failing and {flaky} flaky tests in {} logs",
        files.len()
    );
    (rows, summary)
}

fn cell_multiline(text: &str) -> String {
    text.split('\n').map(cell).collect::<Vec<_>>().join("\n")
}
