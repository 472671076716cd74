//! `ktui search QUERY`: ranked hits from the wiki.
use super::outln;
use std::io::IsTerminal;
use std::process::ExitCode;

use kernaut_ide::index::{Hit, SearchOptions};
use kernaut_ide::knowledge::parse_kind;
use kernaut_ide::wiki::PageKind;

use super::wiki_args::WikiArgs;

/// Arguments of `ktui search`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 with hits; 1 when nothing matches well (the closest \
    pages are printed on stderr as suggestions); 2 on a usage error, such as an empty query.\n\
    A page id or `ID#ANCHOR` (`pitfall-bank-conflict#P1`) comes first as typed. Snippets mark \
    the matched words in bold on a terminal, and are plain text when piped."
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
        let style = if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
            Style::Terminal
        } else {
            Style::Plain
        };
        if !hits.is_empty() {
            outln!("{}", render_hits(hits, style).trim_end_matches('\n'));
        }
    }
    if hits.is_empty() {
        eprint!("{}", no_match_message(&query, &found.closest));
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// How hits are printed: with bold matches on a terminal, plain text into a pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// ANSI bold for matched words.
    Terminal,
    /// No markup at all.
    Plain,
}

/// The hits as printed: `ID#ANCHOR  title`, then the snippet indented.
pub fn render_hits(hits: &[Hit], style: Style) -> String {
    let mut out = String::new();
    for h in hits {
        out.push_str(&format!("{}  {}\n", h.target(), h.title));
        if !h.snippet.is_empty() {
            out.push_str(&format!("    {}\n", render_snippet(&h.snippet, style)));
        }
    }
    out
}

/// A snippet whose matched words are marked `**word**` (the index's only use of `**` in
/// a snippet), for the terminal or as plain text.
pub fn render_snippet(snippet: &str, style: Style) -> String {
    let mut out = String::with_capacity(snippet.len());
    for (i, part) in snippet.split("**").enumerate() {
        let marked = i % 2 == 1;
        match (style, marked) {
            (Style::Terminal, true) => {
                out.push_str("\u{1b}[1m");
                out.push_str(part);
                out.push_str("\u{1b}[0m");
            }
            _ => out.push_str(part),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_bold_on_a_terminal_and_plain_in_a_pipe() {
        let s = "the **gizmo** stalls on `__syncthreads()` and **never** **arms**";
        assert_eq!(
            render_snippet(s, Style::Plain),
            "the gizmo stalls on `__syncthreads()` and never arms"
        );
        assert_eq!(
            render_snippet(s, Style::Terminal),
            "the \u{1b}[1mgizmo\u{1b}[0m stalls on `__syncthreads()` and \u{1b}[1mnever\u{1b}[0m \
             \u{1b}[1marms\u{1b}[0m"
        );
    }
}
