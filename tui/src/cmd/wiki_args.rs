//! The wiki options every subcommand that reads the wiki shares.
use std::path::PathBuf;

use anyhow::Context;
use kernaut_ide::wiki::{Severity, WikiConfig};
use kernaut_ide::Knowledge;

/// `--wiki DIR` (repeatable) and `--no-builtin`; `KERNAUT_WIKI` adds folders too.
#[derive(Debug, Clone, clap::Args)]
pub struct WikiArgs {
    /// An extra wiki folder, loaded over the built-in pages (repeatable). KERNAUT_WIKI
    /// (a path list) adds folders too.
    #[arg(long = "wiki", value_name = "DIR")]
    pub wiki: Vec<PathBuf>,
    /// Leave the built-in pages out.
    #[arg(long)]
    pub no_builtin: bool,
}

impl WikiArgs {
    /// The wiki configuration these flags and the environment describe.
    pub fn config(&self) -> WikiConfig {
        WikiConfig {
            no_builtin: self.no_builtin,
            dirs: self.wiki.clone(),
        }
        .with_env_paths(std::env::var_os("KERNAUT_WIKI").as_deref())
    }

    /// Loads the wiki and its index. Load errors and overrides are reported on stderr
    /// (once); warnings are left to `ktui wiki check`.
    pub fn load(&self) -> anyhow::Result<Knowledge> {
        let k = Knowledge::load(&self.config()).context("loading the wiki")?;
        for d in &k.wiki.diagnostics {
            if d.severity == Severity::Error || d.severity == Severity::Note {
                eprintln!("{d}");
            }
        }
        Ok(k)
    }
}
