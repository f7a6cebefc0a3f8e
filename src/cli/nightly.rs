//! `flakestat nightly`.

use clap::Args;

use super::GlobalArgs;

#[derive(Debug, Args)]
pub struct NightlyArgs {}

pub fn run(_global: &GlobalArgs, _args: NightlyArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`flakestat nightly` is not built yet")
}
