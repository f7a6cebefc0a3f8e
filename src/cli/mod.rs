//! The only place clap lives. Parses the command line, resolves settings (flag > environment >
//! `flakestat.toml` > default), runs one command, and maps its outcome to a named exit code
//! (`crate::exit`). One file per command; each orchestrates the layers below and returns the exit
//! code to use on success.

/// `eprintln!` for everything the CLI says on stderr: a closed stderr (`2>&1 | head`, whose
/// reader is gone) is as quiet as a closed stdout, never a panic. What could not be said is
/// dropped: the exit code still tells the outcome.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod classify;
mod completions;
pub mod config;
pub mod error;
mod export;
mod green;
mod man;
mod nightly;
pub mod output;
mod pipeline;
mod pr;
mod progress;
#[cfg(feature = "replay")]
mod replay;
mod report;
mod repos;
mod serve;
pub mod settings;
mod signatures;
mod source;
mod suggest;
mod survey;
pub mod when;

use clap::{Args, Parser, Subcommand};

use crate::exit;
use error::{CliError, ExitCode};

const EXAMPLES: &str = "\
Examples:
  flakestat survey --repo NVIDIA/cuda-python --since 2026-06-15
  flakestat survey --repo NVIDIA/cuda-python --since 30d \\
      -o flakes.md
  flakestat report --repo NVIDIA/cuda-python --since 2026-06-15 \\
      --signature wait-until-timeout
  flakestat export --repo NVIDIA/cuda-python --since 30d \\
      --format parquet -o warehouse/
  flakestat classify job.log run-logs.zip
  flakestat signatures check --signatures signatures/
  flakestat completions bash > /etc/bash_completion.d/flakestat";

/// Which of our red CI runs are flakes, how often does each one hit, where in the job matrix,
/// and since which merge?
#[derive(Debug, Parser)]
#[command(name = "flakestat", version, after_help = EXAMPLES, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The heading of the flags every command takes, apart from each command's own in `--help`.
const GLOBAL: &str = "Global options";

/// Flags every command takes.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Print nothing on stderr but errors; no progress bars.
    #[arg(short, long, global = true, conflicts_with = "verbose", help_heading = GLOBAL)]
    pub quiet: bool,
    /// Say more on stderr (-v: each phase; -vv: each request).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,
    /// Colour in terminal output. `NO_COLOR` set to anything turns `auto` off.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN",
          help_heading = GLOBAL)]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Classify local job logs (files, `-` for stdin, or a run's logs `.zip`) against signatures.
    Classify(classify::ClassifyArgs),
    /// Check, audit or import signature files.
    #[command(subcommand, after_help = signatures::SIGNATURES_EXAMPLES)]
    Signatures(signatures::SignaturesCommand),
    /// Fetch every run, attempt, job and failed-job log of a window into the store, classify them
    /// and report.
    Survey(Box<survey::SurveyArgs>),
    /// Report from the store alone: the overview, or one signature's issue-ready account.
    Report(report::ReportArgs),
    /// Write the store's window as Parquet files for a warehouse (DuckDB, BigQuery, ClickHouse).
    Export(export::ExportArgs),
    /// What changed since the last period: new, rising and fading flakes, new unknown failures.
    Nightly(nightly::NightlyArgs),
    /// Receive GitHub's workflow webhooks and keep the store current (docs/serve.md).
    Serve(Box<serve::ServeArgs>),
    /// The fake GitHub's tools for tests and benchmarks (docs/serve.md).
    // Hidden from --help and the man pages (clap's completions still list it); only in builds
    // with the fake.
    #[cfg(feature = "replay")]
    #[command(subcommand, hide = true, after_help = replay::EXAMPLES)]
    Replay(replay::ReplayCommand),
    /// Explain one pull request's failed jobs: known flake, broken on the default branch,
    /// infrastructure, or likely its own (docs/pr.md).
    Pr(Box<pr::PrArgs>),
    /// Draft signature files for the groups of failed jobs no signature explains (from the store).
    Suggest(suggest::SuggestArgs),
    /// Print a shell completion script.
    Completions(completions::CompletionsArgs),
    /// Print the manual page (or write one per command into a folder).
    Man(man::ManArgs),
}

/// Parses the process arguments, runs the command, prints any error, returns the exit code:
/// the one place an error becomes a code.
pub fn main() -> u8 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => exit::SUCCESS,
        Err(err) => {
            // Messages quote paths, names and answers from outside: nothing in them may drive
            // the terminal.
            say!(
                "flakestat: error: {}",
                crate::report::sanitize::terminal(&render_chain(&err))
            );
            err.exit_code()
        }
    }
}

fn run(cli: Cli) -> Result<u8, CliError> {
    let global = cli.global;
    pipeline::quiet_notices(global.quiet);
    match cli.command {
        Command::Classify(args) => classify::run(&global, args),
        Command::Signatures(cmd) => signatures::run(&global, cmd),
        Command::Survey(args) => survey::run(&global, *args),
        Command::Report(args) => report::run(&global, args),
        Command::Export(args) => export::run(&global, args),
        Command::Nightly(args) => nightly::run(&global, args),
        Command::Suggest(args) => suggest::run(&global, args),
        Command::Pr(args) => pr::run(&global, *args),
        Command::Serve(args) => serve::run(&global, *args),
        #[cfg(feature = "replay")]
        Command::Replay(cmd) => replay::run(&global, cmd),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
    }
}

/// The causes of `err`, itself first.
fn chain<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(err), |e| e.source())
}

/// The error and its causes on one line, de-duplicated (a message often repeats its source).
fn render_chain(err: &CliError) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in chain(err) {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

fn is_broken_pipe(err: &CliError) -> bool {
    // `Io` is transparent: its source is the io::Error's own source, so the chain skips it.
    if let CliError::Io(e) = err
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        return true;
    }
    chain(err).any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// Every command and subcommand, with its path (`signatures check`).
    fn all_commands() -> Vec<(String, clap::Command)> {
        let mut all = Vec::new();
        let mut todo = vec![(String::new(), Cli::command())];
        while let Some((path, cmd)) = todo.pop() {
            for sub in cmd.get_subcommands() {
                let name = format!("{path} {}", sub.get_name()).trim().to_string();
                todo.push((name, sub.clone()));
            }
            all.push((path, cmd));
        }
        all
    }

    #[test]
    fn every_command_has_examples_that_fit_an_80_column_terminal() {
        for (path, cmd) in all_commands() {
            let examples = cmd
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(
                examples.contains("Examples:\n  "),
                "`flakestat {path} --help` has no examples"
            );
            // clap wraps help at the terminal's width: an example line longer than 80 columns
            // would break mid-command. Longer commands continue with `\` on the next line.
            for line in examples.lines().filter(|l| l.starts_with("  ")) {
                assert!(
                    line.chars().count() <= 80,
                    "`flakestat {path} --help`: {line:?} is over 80 columns"
                );
            }
        }
    }

    /// The commands that write a report or files, and read signatures.
    const WRITERS: &[&str] = &[
        "classify",
        "survey",
        "report",
        "export",
        "nightly",
        "suggest",
        "signatures import",
        "man",
        "pr",
    ];
    const SIGNATURE_READERS: &[&str] = &[
        "classify",
        "survey",
        "report",
        "export",
        "nightly",
        "suggest",
        "signatures check",
        "signatures audit",
        "pr",
    ];

    fn command(path: &str) -> clap::Command {
        all_commands()
            .into_iter()
            .find(|(p, _)| p == path)
            .unwrap_or_else(|| panic!("no command `{path}`"))
            .1
    }

    #[test]
    fn every_command_speaks_the_same_flags() {
        for path in WRITERS {
            let cmd = command(path);
            let output = cmd
                .get_arguments()
                .find(|a| a.get_id() == "output")
                .unwrap_or_else(|| panic!("`flakestat {path}` writes without --output"));
            assert_eq!(output.get_long(), Some("output"), "{path}");
            assert_eq!(output.get_short(), Some('o'), "`flakestat {path}`: -o");
        }
        for path in SIGNATURE_READERS {
            let cmd = command(path);
            assert!(
                cmd.get_arguments()
                    .any(|a| a.get_long() == Some("signatures") && !a.is_hide_set()),
                "`flakestat {path}` names its signatures folder without --signatures"
            );
        }
        // No command shows another spelling of a flag another command has: the old ones are
        // hidden aliases only.
        for (path, cmd) in all_commands() {
            for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
                let long = arg.get_long().unwrap_or_default();
                assert!(
                    !["out", "write", "dir", "now", "signature-dir"].contains(&long),
                    "`flakestat {path}` shows --{long}"
                );
                assert!(
                    arg.get_visible_aliases().unwrap_or_default().is_empty(),
                    "`flakestat {path} --{long}`: a visible alias is a second spelling"
                );
            }
        }
        let nightly = command("nightly");
        assert!(
            nightly
                .get_arguments()
                .any(|a| a.get_long() == Some("until"))
        );
    }

    #[test]
    fn the_old_spellings_still_parse() {
        for line in [
            "flakestat man --dir pages",
            "flakestat suggest --repo o/r --since 7d --write drafts",
            "flakestat signatures import --format pytorch --out sigs rules.toml",
            "flakestat signatures check sigs",
            "flakestat nightly --repo o/r --now 2026-07-17T00:00:00Z",
        ] {
            Cli::try_parse_from(line.split(' ')).unwrap_or_else(|e| panic!("{line}: {e}"));
        }
        // The folder twice, in the old spelling and the new, is one too many.
        assert!(
            Cli::try_parse_from("flakestat signatures check sigs --signatures other".split(' '))
                .is_err()
        );
    }

    #[test]
    fn global_flags_have_a_heading_of_their_own() {
        // Global flags reach the subcommands when the whole command is built.
        let mut root = Cli::command();
        root.build();
        let mut todo = vec![(String::new(), root)];
        while let Some((path, cmd)) = todo.pop() {
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                todo.push((format!("{path} {}", sub.get_name()), sub.clone()));
            }
            for id in ["quiet", "verbose", "color"] {
                let arg = cmd
                    .get_arguments()
                    .find(|a| a.get_id() == id)
                    .unwrap_or_else(|| panic!("`flakestat{path}` lacks --{id}"));
                assert_eq!(arg.get_help_heading(), Some(GLOBAL), "{path} --{id}");
            }
        }
    }
}
