//! `ktui search QUERY`: ranked hits from the wiki.
use super::outln;
use std::process::ExitCode;

use kernaut_ide::index::SearchOptions;
use kernaut_ide::knowledge::parse_kind;
use kernaut_ide::wiki::PageKind;

use super::wiki_args::WikiArgs;

/// Arguments of `ktui search`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to look for: a symptom in your own words, a symbol, a topic.
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,
    /// The most hits to print.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Only hits of this kind: pitfall, skill, api or skill-card.
    #[arg(long, value_parser = parse_kind_arg)]
    pub kind: Option<PageKind>,
    /// Print a JSON array of {id, anchor, title, kind, score, snippet}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub wiki: WikiArgs,
}

fn parse_kind_arg(s: &str) -> Result<PageKind, String> {
    parse_kind(s)
        .ok_or_else(|| format!("unknown kind `{s}` (expected pitfall, skill, api or skill-card)"))
}

/// Runs `ktui search`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let k = args.wiki.load()?;
    let query = args.query.join(" ");
    let hits = k.search(
        &query,
        &SearchOptions {
            limit: args.limit,
            kind: args.kind,
        },
    );
    if args.json {
        let items: Vec<_> = hits
            .iter()
            .map(|h| {
                serde_json::json!({
                    "id": h.id,
                    "anchor": h.anchor,
                    "title": h.title,
                    "kind": h.kind.as_str(),
                    "score": (h.score * 1000.0).round() / 1000.0,
                    "snippet": h.snippet,
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&items)?);
    } else if hits.is_empty() {
        eprintln!("no results for `{query}`");
    } else {
        for h in &hits {
            outln!("{}  {}", h.target(), h.title);
            if !h.snippet.is_empty() {
                outln!("    {}", h.snippet);
            }
        }
    }
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
