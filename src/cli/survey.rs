//! `flakestat survey`.

use clap::Args;

use super::GlobalArgs;

#[derive(Debug, Args)]
pub struct SurveyArgs {}

pub fn run(_global: &GlobalArgs, _args: SurveyArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`flakestat survey` is not built yet")
}
