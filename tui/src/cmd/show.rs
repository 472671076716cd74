//! `ktui show ID[#ANCHOR]`: one page or one section, rendered for a terminal.
use super::out;
use std::process::ExitCode;

use kernaut_ide::knowledge::render_page;
use kernaut_tui::app::model::suggest;

use super::wiki_args::WikiArgs;

/// Arguments of `ktui show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A page id (`pitfall-async-copy`), a short skill name (`ilp`), optionally with
    /// `#ANCHOR` (`pitfall-async-copy#P2`), or a symbol as written in code
    /// (`__syncthreads`), which opens the page that documents it.
    #[arg(value_name = "ID[#ANCHOR]")]
    pub target: String,
    #[command(flatten)]
    pub wiki: WikiArgs,
}

/// Runs `ktui show`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let k = args.wiki.load()?;
    // A symbol as written in code (`__syncthreads`) opens the page that documents it.
    let by_symbol = k
        .symbol(&args.target)
        .and_then(|m| m.api.or_else(|| m.related_pages.first().cloned()));
    let found = k.resolve(&args.target).or_else(|| {
        by_symbol
            .as_deref()
            .and_then(|id| k.wiki.page(id))
            .map(|p| (p, None))
    });
    let Some((page, anchor)) = found else {
        let hint = match suggest(&k, &args.target) {
            Some(s) => format!("did you mean `{s}`? or try"),
            None => "try".to_string(),
        };
        eprintln!(
            "no page or symbol `{}`; {hint} `ktui search {}`",
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
