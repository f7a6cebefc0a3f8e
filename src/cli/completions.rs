//! `flakestat completions SHELL`: a completion script on stdout.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::exit;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<u8> {
    let mut command = super::Cli::command();
    clap_complete::generate(
        args.shell,
        &mut command,
        "flakestat",
        &mut std::io::stdout(),
    );
    Ok(exit::SUCCESS)
}
