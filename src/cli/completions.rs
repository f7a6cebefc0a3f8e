//! `flakestat completions SHELL`: a completion script on stdout.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::exit;

const EXAMPLES: &str = "\
Examples:
  flakestat completions bash \\
      > ~/.local/share/bash-completion/completions/flakestat
  flakestat completions zsh > ~/.zfunc/_flakestat
  flakestat completions fish > ~/.config/fish/completions/flakestat.fish
  flakestat completions powershell >> $PROFILE";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs) -> Result<u8, super::error::CliError> {
    let mut command = super::Cli::command();
    clap_complete::generate(
        args.shell,
        &mut command,
        "flakestat",
        &mut std::io::stdout(),
    );
    Ok(exit::SUCCESS)
}
