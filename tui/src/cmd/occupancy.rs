//! Filled in by the GPU-models work (issue 3).
use std::process::ExitCode;

/// Arguments of this subcommand.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
