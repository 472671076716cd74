//! `ktui search QUERY`: ranked hits from the wiki.
use super::outln;
use std::process::ExitCode;

use kernaut_ide::index::{Hit, SearchOptions};
use kernaut_ide::knowledge::parse_kind;
use kernaut_ide::wiki::PageKind;

use super::render::{self, ColorChoice};
use super::wiki_args::WikiArgs;

/// Arguments of `ktui search`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 with hits; 1 when nothing matches well (the closest \
    pages are printed on stderr as suggestions); 2 on a usage error, such as an empty query.\n\
    A page id or `ID#ANCHOR` (`pitfall-bank-conflict#P1`) comes first as typed. On a terminal \
    the matched words are highlighted and inline code is coloured; piped (or with \
    `--color never`, or `NO_COLOR` set) the output is plain text."
)]
pub struct Args {
    /// What to look for: a symptom in your own words, pasted tool output, a symbol, a
    /// page id or `ID#ANCHOR`.
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,
    /// The most hits to print.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Only hits of this kind: pitfall, skill, api or skill-card.
    #[arg(long, value_parser = parse_kind_arg)]
    pub kind: Option<PageKind>,
    /// Print a JSON array of {id, anchor, title, kind, score, snippet}; the snippet marks
    /// matched words as `**word**`.
    #[arg(long)]
    pub json: bool,
    /// When to style the output: auto (on a terminal, unless `NO_COLOR` is set), always,
    /// never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    #[command(flatten)]
    pub wiki: WikiArgs,
}

fn parse_kind_arg(s: &str) -> Result<PageKind, String> {
    parse_kind(s)
        .ok_or_else(|| format!("unknown kind `{s}` (expected pitfall, skill, api or skill-card)"))
}

/// Runs `ktui search`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        anyhow::bail!("the query is empty: give a symptom, a symbol or a page id to look for");
    }
    let k = args.wiki.load()?;
    let found = k.search_report(
        &query,
        &SearchOptions {
            limit: args.limit,
            kind: args.kind,
        },
    );
    let hits = &found.hits;
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
    } else {
        if !hits.is_empty() {
            outln!(
                "{}",
                render_hits(hits, args.color.styled()).trim_end_matches('\n')
            );
        }
    }
    if hits.is_empty() {
        eprint!("{}", no_match_message(&query, &found.closest));
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The hits as printed: `ID#ANCHOR  title`, then the snippet indented; styled as the
/// UI's search box draws them, or plain.
pub fn render_hits(hits: &[Hit], styled: bool) -> String {
    let theme = kernaut_tui::app::theme::Theme { color: true };
    let mut out = String::new();
    for h in hits {
        let target = h.target();
        if styled {
            out.push_str(&format!(
                "{}  {}\n",
                render::styled(&target, theme.s(kernaut_tui::app::theme::Role::Link)),
                render::styled(&h.title, theme.s(kernaut_tui::app::theme::Role::Strong))
            ));
        } else {
            out.push_str(&format!("{target}  {}\n", h.title));
        }
        if !h.snippet.is_empty() {
            out.push_str(&format!("    {}\n", render::snippet(&h.snippet, styled)));
        }
    }
    out
}

/// What `ktui search` says on stderr when nothing matches well.
pub fn no_match_message(query: &str, closest: &[Hit]) -> String {
    let mut out = format!("no good match for `{query}`");
    if closest.is_empty() {
        out.push('\n');
        return out;
    }
    out.push_str("; the closest pages, in case one is meant:\n");
    for h in closest {
        out.push_str(&format!("  {}  {}\n", h.target(), h.title));
    }
    out
}
