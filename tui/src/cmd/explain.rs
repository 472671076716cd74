//! `ktui explain FILE:LINE[:COL]`: what an editor's hover shows for that position, as
//! text (the hover's Markdown) or JSON (the structured result behind it).
use super::{out, outln};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use kernaut_ide::syntax::SymbolKind;
use kernaut_ide::{Analysis, HoverResult};
use kernaut_tui::app::model::{self, ArchChoice};
use serde_json::{json, Value};

use super::wiki_args::WikiArgs;

/// Arguments of `ktui explain`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "On a terminal the hover's Markdown is rendered as the interactive UI renders \
    it; piped (or with `--color never`, or `NO_COLOR` set) it is plain text, one paragraph a \
    line. `--json` gives the structured result."
)]
pub struct Args {
    /// The position: `FILE:LINE` or `FILE:LINE:COL` (1-based; the column counts
    /// characters and defaults to the first non-blank one of the line).
    pub position: String,
    /// The target architecture (`sm_90`, `sm_80`, `sm_90a`, `9.0`) or a GPU (`H200`,
    /// `A100`, `4090`) [default: the project's: `arch` of the `.kernaut.toml` above the
    /// file, else the build's targets, else sm_90, assumed].
    #[arg(long)]
    pub arch: Option<String>,
    /// Print the structured result as JSON instead of the hover text.
    #[arg(long)]
    pub json: bool,
    /// When to style the output: auto (on a terminal, unless `NO_COLOR` is set), always,
    /// never.
    #[arg(long, value_enum, default_value_t = super::render::ColorChoice::Auto, value_name = "WHEN")]
    pub color: super::render::ColorChoice,
    #[command(flatten)]
    pub wiki: WikiArgs,
}

/// A parsed `FILE:LINE[:COL]`.
#[derive(Debug, PartialEq, Eq)]
struct Position {
    file: PathBuf,
    line: usize,
    column: Option<usize>,
}

fn parse_position(s: &str) -> anyhow::Result<Position> {
    let parts: Vec<&str> = s.rsplitn(3, ':').collect();
    let num = |p: &str| p.parse::<usize>().ok().filter(|v| *v > 0);
    match parts.as_slice() {
        [c, l, f] if num(c).is_some() && num(l).is_some() && !f.is_empty() => Ok(Position {
            file: PathBuf::from(f),
            line: num(l).unwrap_or(1),
            column: num(c),
        }),
        [l, rest @ ..] if num(l).is_some() && !rest.is_empty() => {
            let file: Vec<&str> = rest.iter().rev().copied().collect();
            Ok(Position {
                file: PathBuf::from(file.join(":")),
                line: num(l).unwrap_or(1),
                column: None,
            })
        }
        _ => bail!("`{s}` is not FILE:LINE or FILE:LINE:COL (lines and columns start at 1)"),
    }
}

/// The byte offset of a 1-based line and character column; the column defaults to the
/// first non-blank character of the line.
fn offset_of(text: &str, line: usize, column: Option<usize>) -> Option<usize> {
    let mut start = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let body = l.trim_end_matches(['\n', '\r']);
            let col = match column {
                Some(c) => c,
                None => body.chars().take_while(|c| c.is_whitespace()).count() + 1,
            };
            let within: usize = body.chars().take(col - 1).map(char::len_utf8).sum();
            return Some(start + within);
        }
        start += l.len();
    }
    (line == text.split_inclusive('\n').count() + 1 && column.unwrap_or(1) == 1).then_some(start)
}

/// The 1-based line and character column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// Runs `ktui explain`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let pos = parse_position(&args.position)?;
    // The target: --arch, else the project's (its `.kernaut.toml`, else its build), as
    // the editor and `kernaut-lsp check` read it, else sm_90 (assumed).
    let arch = match &args.arch {
        Some(a) => Some(
            ArchChoice::parse(a)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("reading --arch {a}"))?,
        ),
        None => None,
    };
    // A broken `.kernaut.toml` is said with its file and line, as `check` says it.
    kernaut_project::ProjectLoader::new(None).dir_config(&pos.file)?;
    // Read as every front end reads a file: UTF-8, or lossily with a note.
    let bytes =
        std::fs::read(&pos.file).with_context(|| format!("reading {}", pos.file.display()))?;
    let decoded = kernaut_ide::source_text::decode(bytes);
    if let Some(note) = decoded.note(&pos.file.display().to_string()) {
        eprintln!("ktui: note: {note}");
    }
    let text = decoded.text;
    let Some(offset) = offset_of(&text, pos.line, pos.column) else {
        bail!(
            "{} has no line {} (it has {})",
            pos.file.display(),
            pos.line,
            text.lines().count()
        );
    };
    let knowledge = args.wiki.load()?;
    let path = pos.file.display().to_string();
    let (line, column) = line_col(&text, offset);
    let hover = model::hover_at(knowledge, args.wiki.config(), arch, &path, &text, offset)
        .map_err(|e| anyhow::anyhow!("explaining {path}:{line}:{column}: {e}"))?;
    let Some((hover, analysis)) = hover else {
        if args.json {
            outln!("null");
        }
        eprintln!("nothing to explain at {path}:{line}:{column}");
        return Ok(ExitCode::from(1));
    };
    if args.json {
        let v = to_json(&analysis, &hover, &text, &path);
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        out!(
            "{}",
            super::render::markdown(&hover.markdown, args.color.styled())
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn symbol_kind(k: &SymbolKind) -> &'static str {
    match k {
        SymbolKind::Identifier => "identifier",
        SymbolKind::Qualified => "qualified",
        SymbolKind::Member { .. } => "member",
        SymbolKind::Ptx => "ptx",
        SymbolKind::Macro => "macro",
        SymbolKind::Keyword => "keyword",
    }
}

/// The structured hover: the same fields the Markdown was written from.
fn to_json(analysis: &Analysis, h: &HoverResult, text: &str, path: &str) -> Value {
    let targets = analysis
        .file_id(path)
        .or_else(|| analysis.files().into_iter().next())
        .map(|id| analysis.file_config(id).targets);
    let (sl, sc) = line_col(text, h.range.start);
    let (el, ec) = line_col(text, h.range.end);
    let wiki = h.wiki.as_ref();
    let occupancy = h.occupancy.as_ref().map(|o| {
        let (ok, err) = match &o.result {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e.clone())),
        };
        json!({
            "blocks_per_sm": ok.map(|r| r.blocks_per_sm),
            "active_warps": ok.map(|r| r.active_warps),
            "max_warps_per_sm": ok.map(|r| r.max_warps_per_sm),
            "occupancy": ok.map(|r| r.occupancy),
            "limiter": o.limiter_names(),
            "block": o.block,
            "regs_per_thread": o.regs_per_thread,
            "regs_from_launch_bounds": matches!(o.regs_source, kernaut_ide::reports::RegsSource::LaunchBounds { .. }),
            "regs_source": o.regs_source.label(),
            "arch": o.arch.to_string(),
            "static_smem": o.static_smem,
            "dynamic_smem": o.dynamic_smem,
            "error": err,
            "notes": o.notes,
        })
    });
    let bank = h.bank.as_ref().map(|b| {
        let (ok, err) = match &b.result {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e.clone())),
        };
        json!({
            "conflict_degree": ok.map(|r| r.conflict_degree),
            "wavefronts": ok.map(|r| r.wavefronts),
            "banks": ok.map(|r| r.words_per_bank.to_vec()),
            "block": b.block,
            "byte_offset": b.lowered,
            "held_loops": b.held_loops.iter().map(|(n, s)| json!({"name": n, "start": s})).collect::<Vec<_>>(),
            "width": b.width,
            "reported": b.definite_conflict().is_some(),
            "block_uncertain": b.block_uncertain,
            "other_blocks": b.other_blocks.iter().map(|(block, d)| json!({"block": block, "conflict_degree": d})).collect::<Vec<_>>(),
            "merged_width": b.merged.as_ref().map(|m| m.width),
            "error": err,
        })
    });
    let shared = h.shared.as_ref().map(|s| {
        json!({
            "name": s.decl.name,
            "element_type": s.decl.element_type,
            "element_size": s.decl.element_size,
            "dims": s.decl.dims,
            "bytes": s.decl.static_bytes,
            "extern": s.decl.is_extern,
            "block": s.block,
            "blocks_per_sm_alone": s.blocks_per_sm_alone,
            "function_static_bytes": s.function_static_bytes,
            "blocks_per_sm_function": s.blocks_per_sm_function,
            "blocks_per_sm_warps": s.blocks_per_sm_warps,
        })
    });
    let kernel = h.kernel.as_ref().map(|k| {
        json!({
            "name": k.function.name,
            "launch_bounds": k.function.launch_bounds.as_ref().map(|lb| json!({
                "max_threads": lb.max_threads,
                "min_blocks": lb.min_blocks,
                "max_cluster": lb.max_cluster,
            })),
            "launch_bounds_regs": k.launch_bounds_regs,
            "launches": k.launches.iter().map(|(f, l)| json!({
                "file": analysis.path(*f),
                "grid": l.grid.text,
                "block": l.block.text,
                "block_value": l.block.value,
                "shared_bytes": l.shared_bytes,
            })).collect::<Vec<_>>(),
        })
    });
    json!({
        "file": path,
        "symbol": h.symbol,
        "kind": h.kind.as_str(),
        "symbol_kind": h.symbol_ref.as_ref().map(|s| symbol_kind(&s.kind)),
        "written": h.symbol_ref.as_ref().map(|s| s.text.clone()),
        "range": {
            "start": {"line": sl, "column": sc},
            "end": {"line": el, "column": ec},
        },
        "wiki_page": wiki.and_then(|w| w.page.clone()),
        "wiki_symbol": wiki.map(|w| w.symbol.clone()),
        "signatures": wiki.map(|w| w.signatures.clone()).unwrap_or_default(),
        "header": wiki.and_then(|w| w.header.clone()),
        "requires_sm": wiki.and_then(|w| w.requires_sm.as_ref().map(|r| r.required.clone())),
        "target": targets.as_ref().map(|t| t.primary().to_string()),
        "targets": targets.as_ref().map(|t| t.names()),
        "targets_origin": targets.as_ref().map(|t| if t.assumed { "assumed".to_string() } else { t.origin.clone() }),
        "target_satisfies": wiki.and_then(|w| w.requires_sm.as_ref().map(|r| r.satisfied)),
        "summary": wiki.and_then(|w| w.summary.clone()),
        "pitfalls": wiki.map(|w| w.pitfalls.iter().map(|p| json!({"id": p.id, "title": p.title})).collect::<Vec<_>>()).unwrap_or_default(),
        "related_pages": wiki.map(|w| w.related_pages.clone()).unwrap_or_default(),
        "kernel": kernel,
        "occupancy": occupancy,
        "shared": shared,
        "bank": bank,
        "markdown": h.markdown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_parse_from_the_right() {
        let p = parse_position("a:b.cu:3:7").unwrap();
        assert_eq!(
            (p.file, p.line, p.column),
            (PathBuf::from("a:b.cu"), 3, Some(7))
        );
        let p = parse_position("k.cu:12").unwrap();
        assert_eq!((p.line, p.column), (12, None));
        assert!(parse_position("k.cu").is_err());
        assert!(parse_position("k.cu:0").is_err());
    }

    #[test]
    fn columns_default_to_the_first_non_blank_character() {
        let text = "int a;\n    foo();\n";
        assert_eq!(offset_of(text, 2, None), Some(11));
        assert_eq!(offset_of(text, 2, Some(1)), Some(7));
        assert_eq!(offset_of(text, 9, None), None);
        assert_eq!(line_col(text, 11), (2, 5));
    }
}
