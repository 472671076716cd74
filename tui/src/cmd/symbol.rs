//! `ktui symbol NAME`: what the symbol table returns for a name as written in code.
use super::outln;
use std::process::ExitCode;

use kernaut_ide::index::MatchKind;
use kernaut_tui::app::model::suggest;

use super::wiki_args::WikiArgs;

/// Arguments of `ktui symbol`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A name as written in code or PTX: `__hfma2`, `cuda::memcpy_async`,
    /// `cp.async.cg.shared.global`.
    pub name: String,
    /// Print JSON: {query, symbol, api, related_pages, matched}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub wiki: WikiArgs,
}

/// Runs `ktui symbol`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let k = args.wiki.load()?;
    let Some(m) = k.symbol(&args.name) else {
        if args.json {
            outln!("null");
        }
        let hint = match suggest(&k, &args.name) {
            Some(s) => format!("did you mean `{s}`? or try"),
            None => "try".to_string(),
        };
        eprintln!(
            "`{}` is not in the symbol table; {hint} `ktui search {}`",
            args.name, args.name
        );
        return Ok(ExitCode::from(1));
    };
    let matched = match m.matched {
        MatchKind::Exact => "exact",
        MatchKind::Normalized => "normalized",
    };
    if args.json {
        let v = serde_json::json!({
            "query": m.query,
            "symbol": m.symbol,
            "api": m.api,
            "related_pages": m.related_pages,
            "matched": matched,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{}  ({matched} match for `{}`)", m.symbol, m.query);
    if let Some(api) = m.api.as_deref().and_then(|id| k.wiki.page(id)) {
        outln!("api: {}  {}", api.id, api.title);
        if let Some(entry) = &api.api {
            let short = m.symbol.rsplit("::").next().unwrap_or(&m.symbol);
            let signatures: Vec<String> = entry
                .signatures
                .iter()
                .filter(|s| s.contains(short))
                .cloned()
                .collect();
            if let Some(h) = api.headers_for(&signatures) {
                outln!("header: {}", h.join(", "));
            }
            if let Some(r) = api.requires_sm_for(&m.symbol) {
                outln!("requires: {}", kernaut_ide::wiki::sm_label(r));
            }
            for s in &signatures {
                outln!("    {s}");
            }
        }
    }
    if !m.related_pages.is_empty() {
        outln!("related pages: {}", m.related_pages.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
