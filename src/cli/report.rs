//! `flakestat report`.

use clap::Args;

use super::GlobalArgs;

#[derive(Debug, Args)]
pub struct ReportArgs {}

pub fn run(_global: &GlobalArgs, _args: ReportArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`flakestat report` is not built yet")
}
