//! `flakestat classify`.

use clap::Args;

use super::GlobalArgs;

#[derive(Debug, Args)]
pub struct ClassifyArgs {}

pub fn run(_global: &GlobalArgs, _args: ClassifyArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`flakestat classify` is not built yet")
}
