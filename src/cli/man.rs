//! `flakestat man [-o DIR]`: the manual pages, generated from the same clap definition as
//! `--help` (clap_mangen), so they can never disagree with the flags the binary takes.

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::error::CliError;
use crate::exit;

const EXAMPLES: &str = "\
Examples:
  flakestat man | man -l -
  flakestat man -o ~/.local/share/man/man1
  flakestat man > /usr/local/share/man/man1/flakestat.1";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ManArgs {
    /// Write flakestat.1 and a page per command (flakestat-survey.1, …) into DIR, made if
    /// missing, instead of the main page on stdout.
    // `--dir` was its name before every command wrote with `-o/--output`: kept, hidden.
    #[arg(short, long, value_name = "DIR", alias = "dir")]
    pub output: Option<PathBuf>,
}

pub fn run(args: ManArgs) -> Result<u8, CliError> {
    // As `generate_to` makes it: `help` is no command with a page of its own.
    let command = super::Cli::command().disable_help_subcommand(true);
    match args.output {
        None => clap_mangen::Man::new(command).render(&mut std::io::stdout().lock())?,
        Some(dir) => {
            let named = |e| CliError::file(format!("man pages into {}", dir.display()), e);
            std::fs::create_dir_all(&dir).map_err(named)?;
            clap_mangen::generate_to(command, &dir).map_err(named)?;
        }
    }
    Ok(exit::SUCCESS)
}
