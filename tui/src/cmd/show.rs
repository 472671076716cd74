//! `ktui show ID[#ANCHOR]`: one page or one section, rendered for a terminal.
use super::out;
use std::process::ExitCode;

use kernaut_ide::knowledge::render_page;

use super::wiki_args::WikiArgs;

/// Arguments of `ktui show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A page id (`pitfall-async-copy`), a short skill name (`ilp`), optionally with
    /// `#ANCHOR` (`pitfall-async-copy#P2`).
    #[arg(value_name = "ID[#ANCHOR]")]
    pub target: String,
    #[command(flatten)]
    pub wiki: WikiArgs,
}

/// Runs `ktui show`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let k = args.wiki.load()?;
    let Some((page, anchor)) = k.resolve(&args.target) else {
        eprintln!(
            "no page `{}`; try `ktui search {}`",
            args.target,
            args.target.split('#').next().unwrap_or_default()
        );
        return Ok(ExitCode::from(1));
    };
    match render_page(page, anchor) {
        Some(text) => {
            out!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let anchors: Vec<&str> = page.sections.iter().map(|s| s.anchor.as_str()).collect();
            eprintln!(
                "page `{}` has no section `{}`; its anchors are: {}",
                page.id,
                anchor.unwrap_or_default(),
                anchors.join(", ")
            );
            Ok(ExitCode::from(1))
        }
    }
}
