//! The three output formats of `check`: compiler-style text, JSON and SARIF 2.1.0. Lines
//! and columns are 1-based; columns count Unicode code points.

use std::io::{self, Write};

use kernaut_ide::config::Severity;
use kernaut_ide::rules::{Rule, RuleDiagnostic, RULES};
use kernaut_ide::{LineIndex, PositionEncoding};
use serde_json::{json, Value};

/// One checked file and what the rules found.
#[derive(Debug)]
pub struct FileReport {
    /// The path as printed.
    pub path: String,
    /// The file's text.
    pub text: String,
    /// The diagnostics, sorted by position.
    pub diagnostics: Vec<RuleDiagnostic>,
}

/// A 1-based position.
#[derive(Clone, Copy, Debug)]
struct Pos {
    line: usize,
    col: usize,
}

/// 1-based line and column, the column counted in characters as compilers print it.
fn pos(_text: &str, lines: &LineIndex, offset: usize) -> Pos {
    let lc = lines.line_col(offset, PositionEncoding::Utf32);
    Pos {
        line: lc.line as usize + 1,
        col: lc.col as usize + 1,
    }
}

/// ` (wiki id#anchor)`, or nothing for a diagnostic that cites no page.
fn wiki_suffix(wiki: &str) -> String {
    if wiki.is_empty() {
        String::new()
    } else {
        format!(" (wiki {wiki})")
    }
}

/// Compiler-style lines.
pub fn text(out: &mut impl Write, reports: &[FileReport]) -> std::io::Result<()> {
    for r in reports {
        let lines = LineIndex::new(&r.text);
        for d in &r.diagnostics {
            let p = pos(&r.text, &lines, d.range.start);
            writeln!(
                out,
                "{}:{}:{}: {}: {} [{}]{}",
                r.path,
                p.line,
                p.col,
                d.severity.as_str(),
                d.message,
                d.rule,
                wiki_suffix(&d.wiki)
            )?;
        }
    }
    Ok(())
}

/// `--list-rules`: one aligned line per rule, `id  severity  wiki  summary`.
pub fn rules_text(out: &mut impl Write) -> io::Result<()> {
    let id_w = RULES.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let wiki_w = RULES
        .iter()
        .map(|r| r.wiki.first().map_or(0, |w| w.len()))
        .max()
        .unwrap_or(0);
    for r in RULES {
        writeln!(
            out,
            "{:<id_w$}  {:<7}  {:<wiki_w$}  {}",
            r.id,
            r.severity.as_str(),
            r.wiki.first().copied().unwrap_or("-"),
            r.summary()
        )?;
    }
    Ok(())
}

/// `--list-rules --format json`: `[{id, severity, wiki, wiki_anchors, summary}]`.
pub fn rules_json(out: &mut impl Write) -> io::Result<()> {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "severity": r.severity.as_str(),
                "wiki": r.wiki.first(),
                "wiki_anchors": r.wiki,
                "summary": r.summary(),
            })
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &Value::Array(rules))?;
    writeln!(out)
}

/// `--explain RULE`: its id, default severity and anchors, then its documentation.
pub fn explain(out: &mut impl Write, rule: &Rule) -> io::Result<()> {
    writeln!(
        out,
        "{} (default severity: {}; wiki {})\n",
        rule.id,
        rule.severity.as_str(),
        rule.wiki.join(", ")
    )?;
    write!(out, "{}", rule.doc())
}

fn range_json(text: &str, lines: &LineIndex, range: &std::ops::Range<usize>) -> (Pos, Pos) {
    (pos(text, lines, range.start), pos(text, lines, range.end))
}

/// A JSON array.
pub fn json(out: &mut impl Write, reports: &[FileReport]) -> std::io::Result<()> {
    let mut all = Vec::new();
    for r in reports {
        let lines = LineIndex::new(&r.text);
        for d in &r.diagnostics {
            let (s, e) = range_json(&r.text, &lines, &d.range);
            let fixes: Vec<Value> = d
                .fixes
                .iter()
                .map(|f| {
                    let edits: Vec<Value> = f
                        .edits
                        .iter()
                        .map(|ed| {
                            let (s, e) = range_json(&r.text, &lines, &ed.range);
                            json!({
                                "line": s.line, "col": s.col,
                                "end_line": e.line, "end_col": e.col,
                                "new_text": ed.new_text,
                            })
                        })
                        .collect();
                    json!({"title": f.title, "safe": f.safe, "edits": edits})
                })
                .collect();
            all.push(json!({
                "file": r.path,
                "line": s.line,
                "col": s.col,
                "end_line": e.line,
                "end_col": e.col,
                "severity": d.severity.as_str(),
                "rule": d.rule,
                "message": d.message,
                "wiki": d.wiki,
                "fixes": fixes,
            }));
        }
    }
    serde_json::to_writer_pretty(&mut *out, &Value::Array(all))?;
    writeln!(out)
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Hint => "note",
    }
}

fn uri(path: &str) -> String {
    path.replace('\\', "/")
}

/// SARIF 2.1.0, one run.
pub fn sarif(out: &mut impl Write, reports: &[FileReport]) -> std::io::Result<()> {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.id,
                "defaultConfiguration": {"level": sarif_level(r.severity)},
                "properties": {"wiki": r.wiki},
            })
        })
        .collect();
    let mut results = Vec::new();
    for r in reports {
        let lines = LineIndex::new(&r.text);
        let region = |range: &std::ops::Range<usize>| {
            let (s, e) = range_json(&r.text, &lines, range);
            json!({"startLine": s.line, "startColumn": s.col, "endLine": e.line, "endColumn": e.col})
        };
        for d in &r.diagnostics {
            let fixes: Vec<Value> = d
                .fixes
                .iter()
                .map(|f| {
                    let replacements: Vec<Value> = f
                        .edits
                        .iter()
                        .map(|ed| json!({"deletedRegion": region(&ed.range), "insertedContent": {"text": ed.new_text}}))
                        .collect();
                    json!({
                        "description": {"text": f.title},
                        "artifactChanges": [{"artifactLocation": {"uri": uri(&r.path)}, "replacements": replacements}],
                    })
                })
                .collect();
            let mut result = json!({
                "ruleId": d.rule,
                "level": sarif_level(d.severity),
                "message": {"text": format!("{}{}", d.message, wiki_suffix(&d.wiki))},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": uri(&r.path)},
                    "region": region(&d.range),
                }}],
                "properties": {"wiki": d.wiki},
            });
            if let Some(i) = RULES.iter().position(|x| x.id == d.rule) {
                result["ruleIndex"] = json!(i);
            }
            if !fixes.is_empty() {
                result["fixes"] = Value::Array(fixes);
            }
            results.push(result);
        }
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kernaut",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}

/// One kernel's resources, as `check --resources` prints them.
#[derive(Clone, Debug)]
pub struct ResourceRow {
    /// The file, as shown.
    pub file: String,
    /// The kernel (demangled, with template arguments).
    pub kernel: String,
    /// The architecture compiled for.
    pub arch: String,
    /// Registers per thread.
    pub registers: u32,
    /// Spill stores, bytes per thread.
    pub spill_store_bytes: u64,
    /// Spill loads, bytes per thread.
    pub spill_load_bytes: u64,
    /// Stack frame, bytes per thread.
    pub stack_bytes: u64,
    /// Static shared memory, bytes per block.
    pub shared_bytes: u64,
    /// Occupancy (fraction) and blocks per SM at the launch found, with these registers.
    pub occupancy: Option<(f64, u32)>,
    /// Whether it breaks the budget given.
    pub over_budget: bool,
}

/// The resource table, aligned, for a terminal.
pub fn resources_table(out: &mut impl Write, rows: &[ResourceRow]) -> io::Result<()> {
    let header = [
        "file",
        "kernel",
        "arch",
        "regs",
        "spill st/ld B",
        "stack B",
        "smem B",
        "occupancy",
    ];
    let cells: Vec<[String; 8]> = rows
        .iter()
        .map(|r| {
            [
                r.file.clone(),
                r.kernel.clone(),
                r.arch.clone(),
                format!("{}{}", r.registers, if r.over_budget { " !" } else { "" }),
                format!("{}/{}", r.spill_store_bytes, r.spill_load_bytes),
                r.stack_bytes.to_string(),
                r.shared_bytes.to_string(),
                r.occupancy.map_or("-".into(), |(o, b)| {
                    format!("{:.0}% ({b} blocks/SM)", o * 100.0)
                }),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for c in &cells {
        for (w, v) in widths.iter_mut().zip(c) {
            *w = (*w).max(v.chars().count());
        }
    }
    let line = |out: &mut dyn Write, c: &[String]| -> io::Result<()> {
        let parts: Vec<String> = c
            .iter()
            .zip(widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect();
        writeln!(out, "{}", parts.join("  ").trim_end())
    };
    line(out, &header.map(String::from))?;
    for c in &cells {
        line(out, c)?;
    }
    Ok(())
}

/// The resource table as JSON lines: `{"resources": [...]}`.
pub fn resources_json(out: &mut impl Write, rows: &[ResourceRow]) -> io::Result<()> {
    let v: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "file": r.file, "kernel": r.kernel, "arch": r.arch, "registers": r.registers,
                "spill_store_bytes": r.spill_store_bytes, "spill_load_bytes": r.spill_load_bytes,
                "stack_bytes": r.stack_bytes, "shared_bytes": r.shared_bytes,
                "occupancy": r.occupancy.map(|o| o.0), "blocks_per_sm": r.occupancy.map(|o| o.1),
                "over_budget": r.over_budget,
            })
        })
        .collect();
    writeln!(out, "{}", serde_json::json!({ "resources": v }))
}
