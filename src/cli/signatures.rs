//! `flakestat signatures check|import`.

use clap::Subcommand;

use super::GlobalArgs;

#[derive(Debug, Subcommand)]
pub enum SignaturesCommand {
    /// Validate every signature file and run its examples.
    Check {},
}

pub fn run(_global: &GlobalArgs, _cmd: SignaturesCommand) -> anyhow::Result<u8> {
    anyhow::bail!("`flakestat signatures` is not built yet")
}
