//! Hover: what the code under the cursor is, from the wiki and the GPU models.
//!
//! One [`HoverResult`] holds both the Markdown a front end shows and the structured
//! fields it was made from, so an editor, the TUI side panel and `ktui explain --json`
//! all show the same thing. What is hovered decides the content:
//!
//! - a kernel's name (definition or launch): its `__launch_bounds__`, launch sites and
//!   occupancy at the launch configuration found;
//! - a `__shared__` declaration: its bytes and what it does to occupancy;
//! - any symbol the wiki knows (intrinsics, library and member calls, PTX in `asm`
//!   strings): signatures, header, minimum architecture against the target, summary,
//!   measured figures, pitfalls;
//! - a `__shared__` access: conflict degree, wavefronts and the 32-bank map for warp 0.

use kernaut_gpu::banks::BANKS;
use kernaut_gpu::occupancy::{occupancy, OccupancyInput};
use kernaut_index::SymbolMatch;
use kernaut_syntax::short_name;
use kernaut_syntax::{
    ConstantKind, Function, LaunchSite, SharedAccess, SharedDecl, SymbolKind, SymbolRef, TextRange,
};
use kernaut_wiki::{parse_requires_sm, Page};

use crate::analysis::{Analysis, FileId};
use crate::diagnostic::RuleDiagnostic;
use crate::knowledge::Knowledge;
use crate::reports::{block_for, BankAnalysis, BlockSource, OccupancyReport, RegsSource};

mod wiki;
pub(crate) use wiki::{lookup, wiki_info};

pub use crate::signatures::MAX_SIGNATURES;
pub(crate) use crate::signatures::{
    matching_signatures, names_token, overload_range, overload_requirement, pick_overloads,
};

mod kernel;
pub(crate) use kernel::{block_source_text, block_text, kernel_hover, location};

mod shared;
pub(crate) use shared::{access_hover, access_hover_with, shared_hover};

/// What a hover is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoverKind {
    /// A symbol the wiki documents (or lists as related).
    Symbol,
    /// A kernel's name.
    Kernel,
    /// A `__shared__` declaration.
    SharedDeclaration,
    /// A subscript of shared memory.
    SharedAccess,
    /// A `__device__` function the files define (and the wiki does not know).
    DeviceFunction,
    /// A named constant the file folds (`#define`, `constexpr`, enumerator).
    Constant,
    /// Only a rule's finding: the cursor is on flagged code with nothing else to say.
    Finding,
}

impl HoverKind {
    /// The kebab-case name (`shared-access`).
    pub fn as_str(self) -> &'static str {
        match self {
            HoverKind::Symbol => "symbol",
            HoverKind::Kernel => "kernel",
            HoverKind::SharedDeclaration => "shared-declaration",
            HoverKind::SharedAccess => "shared-access",
            HoverKind::DeviceFunction => "device-function",
            HoverKind::Constant => "constant",
            HoverKind::Finding => "finding",
        }
    }
}

/// Everything a hover shows: the Markdown and the data behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct HoverResult {
    /// The content, in Markdown.
    pub markdown: String,
    /// The range of the hovered code.
    pub range: TextRange,
    /// The symbol: the name resolved (`cooperative_groups::thread_block::sync`), the
    /// kernel or array name, or the access as written.
    pub symbol: String,
    /// What the hover is about.
    pub kind: HoverKind,
    /// The symbol as syntax resolved it, when the cursor is on one.
    pub symbol_ref: Option<SymbolRef>,
    /// The wiki entry, for a symbol the wiki knows.
    pub wiki: Option<WikiInfo>,
    /// The kernel, for a kernel's name.
    pub kernel: Option<KernelInfo>,
    /// The occupancy, for a kernel (or the kernel around a declaration).
    pub occupancy: Option<OccupancyReport>,
    /// The declaration, for a `__shared__` declaration.
    pub shared: Option<SharedInfo>,
    /// The bank model, for a shared-memory access.
    pub bank: Option<BankAnalysis>,
    /// The rules' findings on the hovered line (shown first in `markdown`).
    pub findings: Vec<RuleDiagnostic>,
}

/// The wiki's entry for a symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WikiInfo {
    /// The symbol as the wiki lists it.
    pub symbol: String,
    /// The api page that documents it.
    pub page: Option<String>,
    /// That page's title.
    pub title: Option<String>,
    /// The signatures of this symbol that fit the use, at most [`MAX_SIGNATURES`] (the
    /// page's first ones when none names it).
    pub signatures: Vec<String>,
    /// How many more of the page's signatures name the symbol but are not shown.
    pub signatures_left_out: usize,
    /// The overload the call's argument types pick, when the page gives it a minimum
    /// architecture of its own (`atomicAdd(float4*)`); `requires_sm` is then that one.
    pub overload: Option<String>,
    /// The minimum architectures of the symbol's overloads (`sm_50 to sm_90`), when they
    /// differ and no overload was picked.
    pub requires_range: Option<String>,
    /// The header (`cuda_fp16.h`, `built-in`, `ptx`).
    pub header: Option<String>,
    /// The minimum architecture, checked against the target.
    pub requires_sm: Option<ArchRequirement>,
    /// The first paragraph of the page's Semantics.
    pub summary: Option<String>,
    /// The first paragraph of the page's Performance section: measured figures.
    pub performance: Option<String>,
    /// Where the figures were measured (`measured_on`).
    pub measured_on: Option<String>,
    /// Pitfalls as `id#anchor` with their titles.
    pub pitfalls: Vec<PitfallLink>,
    /// Other pages that list the symbol (skills, pitfall pages).
    pub related_pages: Vec<String>,
}

/// A minimum architecture and whether the target meets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchRequirement {
    /// The requirement as `sm_80` (or `sm_90a`).
    pub required: String,
    /// The target, as `sm_90`.
    pub target: String,
    /// Whether the target has it.
    pub satisfied: bool,
}

/// A pitfall link with its title.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PitfallLink {
    /// `pitfall-warp-primitives#P2`.
    pub id: String,
    /// The pitfall's title, when the page is loaded.
    pub title: Option<String>,
}

/// A kernel and its launch sites.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelInfo {
    /// The definition.
    pub function: Function,
    /// The file it is defined in.
    pub file: FileId,
    /// Launch sites in every file, as (file, launch): those in `file` first, then the
    /// others by path.
    pub launches: Vec<(FileId, LaunchSite)>,
    /// The register limit `__launch_bounds__` implies, when it has one.
    pub launch_bounds_regs: Option<u32>,
}

/// A `__shared__` declaration and what it costs.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedInfo {
    /// The declaration.
    pub decl: SharedDecl,
    /// The block size the limits below are for.
    pub block: [u32; 3],
    /// Where that block size came from.
    pub block_source: BlockSource,
    /// Blocks per SM that shared memory allows with this declaration alone.
    pub blocks_per_sm_alone: Option<u32>,
    /// All static shared memory of the enclosing function, in bytes.
    pub function_static_bytes: Option<u64>,
    /// Blocks per SM that shared memory allows with all of it.
    pub blocks_per_sm_function: Option<u32>,
    /// Blocks per SM that warps allow at this block size, for comparison.
    pub blocks_per_sm_warps: Option<u32>,
}

pub(crate) fn hover(analysis: &Analysis, path: &str, offset: usize) -> Option<HoverResult> {
    let file = analysis.file(path)?;
    if offset > file.source.text().len() {
        return None;
    }
    let entry = entry(analysis, path, offset);
    // The hovered line, as a byte range: a finding belongs to every line it covers.
    let text = file.source.text();
    let mut at = offset;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    // A finding shows where the cursor is inside it or it overlaps what is hovered, and
    // on the rest of its line, unless it is about another shared access there (`t[x][y]
    // + padded[x][y]`: the padded read does not show the other's conflict).
    let entry_range = entry.as_ref().map(|h| h.range.clone());
    // On a large file the rules take tens of milliseconds: a hover shows the findings
    // once they are computed (a front end runs them after every change) and never waits
    // for them; on a small file it runs them.
    let compute = text.len() < LARGE_FILE_BYTES;
    let findings: Vec<RuleDiagnostic> = crate::rules::host::diagnostics_at(analysis, path, compute)
        .map(|all| {
            all.iter()
                .filter(|d| {
                    if d.range.contains(&offset) {
                        return true;
                    }
                    let Some(r) = &entry_range else {
                        return false;
                    };
                    if d.range.start < r.end && r.start < d.range.end {
                        return true;
                    }
                    finding_on_line(&d.range, line_start..line_end)
                        && !file.accesses().iter().any(|a| a.range == d.range)
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    if findings.is_empty() {
        return entry;
    }
    let mut md = String::new();
    for d in &findings {
        md.push_str(&finding_markdown(analysis, d));
    }
    Some(match entry {
        Some(mut h) => {
            md.push_str("---\n\n");
            md.push_str(&h.markdown);
            h.markdown = md;
            h.findings = findings;
            h
        }
        None => HoverResult {
            markdown: md.trim_end().to_string() + "\n",
            range: findings[0].range.clone(),
            symbol: findings[0].rule.to_string(),
            kind: HoverKind::Finding,
            symbol_ref: None,
            wiki: None,
            kernel: None,
            occupancy: None,
            shared: None,
            bank: None,
            findings,
        },
    })
}

/// Whether a finding over `range` shows on the line `line` (its start up to the `\n`
/// that ends it): the finding starts on it, or covers part of it (a finding over a
/// statement that spans several lines shows on each of them). Hover and `ktui`'s side
/// panel both ask this.
pub fn finding_on_line(range: &TextRange, line: TextRange) -> bool {
    // An empty range belongs to the line it sits on.
    let end = range.end.max(range.start + 1);
    range.start <= line.end && line.start < end
}

/// A rule's finding: severity, rule, message, the fixes' titles and the wiki section.
fn finding_markdown(analysis: &Analysis, d: &RuleDiagnostic) -> String {
    let mut md = format!(
        "**{}** `{}`: {}\n\n",
        d.severity.as_str(),
        d.rule,
        d.message.trim_end()
    );
    if !d.fixes.is_empty() {
        let titles: Vec<&str> = d.fixes.iter().map(|f| f.title.as_str()).collect();
        md.push_str(&format!("Fix: {}\n\n", titles.join("; ")));
    }
    if !d.wiki.is_empty() {
        let title = analysis.knowledge().and_then(|k| {
            let (p, anchor) = k.resolve(&d.wiki)?;
            match anchor {
                Some(a) => p
                    .pitfall(a)
                    .map(|x| x.title.clone())
                    .or_else(|| p.section(a).map(|x| x.title.clone())),
                None => Some(p.title.clone()),
            }
        });
        match title {
            Some(t) => md.push_str(&format!("Wiki: `{}` ({})\n\n", d.wiki, code_names(&t))),
            None => md.push_str(&format!("Wiki: `{}`\n\n", d.wiki)),
        }
    }
    md
}

/// The size from which a hover no longer runs the rules itself (the threshold from which
/// the rules share the cores).
const LARGE_FILE_BYTES: usize = 64 * 1024;

/// The entry for what is under the cursor, without the rules' findings.
fn entry(analysis: &Analysis, path: &str, offset: usize) -> Option<HoverResult> {
    let file = analysis.file(path)?;
    let text = file.source.text();
    if offset > text.len() {
        return None;
    }
    let facts = file.facts();
    let sym = file.source.symbol_at(offset);

    if let Some(s) = &sym {
        if matches!(s.kind, SymbolKind::Identifier | SymbolKind::Qualified) {
            if let Some(h) = kernel_hover(analysis, path, s) {
                return Some(h);
            }
        }
    }
    let decl_here = facts
        .shared
        .iter()
        .find(|d| d.name_range.contains(&offset) || (d.name_range.end == offset && offset > 0));
    let on_shared_keyword = sym
        .as_ref()
        .is_some_and(|s| s.kind == SymbolKind::Keyword && s.name == "__shared__");
    let decl_around = facts
        .shared
        .iter()
        .filter(|d| d.range.contains(&offset))
        .min_by_key(|d| d.range.len());
    if let Some(d) = decl_here.or(decl_around.filter(|_| on_shared_keyword)) {
        return Some(shared_hover(analysis, path, d, sym));
    }
    if let (Some(s), Some(k)) = (&sym, analysis.knowledge()) {
        if let Some(m) = lookup(k, s, &file.source) {
            let call = (s.is_call && s.kind != SymbolKind::Ptx).then_some(&file.source);
            return Some(symbol_hover(analysis, k, s, &m, call));
        }
    }
    // An access of a device function, as the kernels that call it run it.
    if let Some((a, bank, place)) = crate::callers::shared_access_in_callers(analysis, path, offset)
    {
        return Some(access_hover_with(
            analysis,
            path,
            &a,
            sym,
            bank,
            Some(place),
        ));
    }
    let access = file
        .accesses()
        .iter()
        .filter(|a| a.range.contains(&offset) || (a.range.end == offset && offset > 0))
        .min_by_key(|a| a.range.len());
    if let Some(a) = access {
        return access_hover(analysis, path, a, sym);
    }
    if let Some(s) = sym.as_ref().filter(|s| {
        matches!(
            s.kind,
            SymbolKind::Identifier | SymbolKind::Qualified | SymbolKind::Macro
        )
    }) {
        if let Some(h) = constant_hover(analysis, path, s, offset) {
            return Some(h);
        }
        if let Some(h) = device_function_hover(analysis, path, s) {
            return Some(h);
        }
    }
    if let Some(d) = decl_around {
        return Some(shared_hover(analysis, path, d, sym));
    }
    None
}

/// A named constant and its folded value.
fn constant_hover(
    analysis: &Analysis,
    path: &str,
    s: &SymbolRef,
    offset: usize,
) -> Option<HoverResult> {
    let facts = analysis.file(path)?.facts();
    let c = facts
        .constants
        .iter()
        .find(|c| c.name == s.name && c.scope.as_ref().is_none_or(|r| r.contains(&offset)))?;
    let value = facts.constant_value(&c.name, offset);
    let origin = match c.kind {
        ConstantKind::Define => format!("#define {} {}", c.name, c.text),
        ConstantKind::Constexpr => format!("constexpr {} = {}", c.name, c.text),
        ConstantKind::Const => format!("const {} = {}", c.name, c.text),
        ConstantKind::Enum if c.text.is_empty() => format!("enumerator {}", c.name),
        ConstantKind::Enum => format!("enumerator {} = {}", c.name, c.text),
        ConstantKind::TemplateDefault => format!("template parameter {} = {}", c.name, c.text),
    };
    let md = match value {
        Some(v) => format!("`{}` = **{v}**\n\n```cuda\n{origin}\n```\n", c.name),
        None => format!(
            "`{}`: its value is not known from the file.\n\n```cuda\n{origin}\n```\n",
            c.name
        ),
    };
    Some(HoverResult {
        markdown: md,
        range: s.range.clone(),
        symbol: c.name.clone(),
        kind: HoverKind::Constant,
        symbol_ref: Some(s.clone()),
        wiki: None,
        kernel: None,
        occupancy: None,
        shared: None,
        bank: None,
        findings: Vec::new(),
    })
}

/// A `__device__` function of the open files, with its signature.
fn device_function_hover(analysis: &Analysis, path: &str, s: &SymbolRef) -> Option<HoverResult> {
    let name = short_name(&s.name);
    let (file, f) = analysis.sorted_files(path).into_iter().find_map(|(p, d)| {
        d.facts()
            .device_functions
            .iter()
            .find(|f| f.name == name || short_name(&f.name) == name)
            .cloned()
            .map(|f| (p, f))
    })?;
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| {
            if p.name.is_empty() {
                p.ty.clone()
            } else {
                format!("{} {}", p.ty, p.name)
            }
        })
        .collect();
    let data = analysis.file(file)?;
    let line = data.line_of(f.name_range.start);
    // The declaration's head as written: template header, qualifiers, return type.
    let head: String = data
        .source
        .text()
        .get(f.range.start..f.name_range.start)
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let md = format!(
        "**device function** `{}`\n\n```cuda\n{head} {}({})\n```\n\nDefined at {}; the wiki has no entry for it.\n",
        f.name,
        f.name,
        params.join(", "),
        location(file, path, line)
    );
    Some(HoverResult {
        markdown: md,
        range: s.range.clone(),
        symbol: f.name.clone(),
        kind: HoverKind::DeviceFunction,
        symbol_ref: Some(s.clone()),
        wiki: None,
        kernel: None,
        occupancy: None,
        shared: None,
        bank: None,
        findings: Vec::new(),
    })
}

fn symbol_hover(
    analysis: &Analysis,
    k: &Knowledge,
    s: &SymbolRef,
    m: &SymbolMatch,
    call: Option<&kernaut_syntax::SourceFile>,
) -> HoverResult {
    let page = m.api.as_deref().and_then(|id| k.wiki.page(id));
    let info = wiki_info(analysis, k, s, m, page, call);
    let mut md = String::new();
    let written = if s.text != s.name && s.kind != SymbolKind::Ptx {
        format!("`{}` → `{}`", s.text, s.name)
    } else {
        format!("`{}`", s.text)
    };
    // No bold around code: Neovim 0.7 renders `**`__hfma2`**` as "`_hfma2`**".
    md.push_str(&written);
    if info.symbol != s.name {
        md.push_str(&format!(" (wiki: `{}`)", info.symbol));
    }
    if let (Some(id), Some(t)) = (&info.page, &info.title) {
        md.push_str(&format!(" · {} · `{id}`", code_names(t)));
    }
    md.push_str("\n\n");
    if !info.signatures.is_empty() {
        let lang = if s.kind == SymbolKind::Ptx || info.header.as_deref() == Some("ptx") {
            "ptx"
        } else {
            "cuda"
        };
        md.push_str(&format!("```{lang}\n"));
        for sig in &info.signatures {
            md.push_str(sig);
            md.push('\n');
        }
        md.push_str("```\n\n");
        if info.signatures_left_out > 0 {
            let n = info.signatures_left_out;
            md.push_str(&format!(
                "{n} more signature{} on the page `{}`.\n\n",
                if n == 1 { "" } else { "s" },
                info.page.as_deref().unwrap_or("?")
            ));
        }
    }
    let mut facts = Vec::new();
    if let Some(h) = &info.header {
        let names: Vec<String> = h.split(", ").map(|n| format!("`{n}`")).collect();
        let s = if names.len() > 1 { "s" } else { "" };
        facts.push(format!("header{s}: {}", names.join(", ")));
    }
    if let Some(r) = &info.requires_sm {
        let which = info
            .overload
            .as_deref()
            .map_or(String::new(), |o| format!(" (overload `{o}`)"));
        if r.satisfied {
            facts.push(format!(
                "requires {}{which}; target {} has it",
                r.required, r.target
            ));
        } else {
            facts.push(format!(
                "**requires {}{which}, target is {}**: not available on the target",
                r.required, r.target
            ));
        }
    }
    if let Some(range) = &info.requires_range {
        facts.push(format!("overloads need {range}"));
    }
    if !facts.is_empty() {
        md.push_str(&facts.join(" · "));
        md.push_str("\n\n");
    }
    if let Some(sum) = &info.summary {
        md.push_str(sum);
        md.push_str("\n\n");
    }
    if let Some(p) = &info.performance {
        match &info.measured_on {
            Some(on) => md.push_str(&format!("**Measured** ({on}): {p}\n\n")),
            None => md.push_str(&format!("**Performance**: {p}\n\n")),
        }
    }
    if !info.pitfalls.is_empty() {
        md.push_str("**Pitfalls**\n");
        for p in &info.pitfalls {
            match &p.title {
                Some(t) => md.push_str(&format!("- `{}`: {}\n", p.id, code_names(t))),
                None => md.push_str(&format!("- `{}`\n", p.id)),
            }
        }
        md.push('\n');
    }
    if !info.related_pages.is_empty() {
        let shown: Vec<String> = info
            .related_pages
            .iter()
            .map(|id| match k.wiki.page(id) {
                Some(p) => format!("`{id}` ({})", code_names(&p.title)),
                None => format!("`{id}`"),
            })
            .collect();
        md.push_str(&format!("See also: {}\n", shown.join(", ")));
    }
    HoverResult {
        markdown: md.trim_end().to_string() + "\n",
        range: s.range.clone(),
        symbol: s.name.clone(),
        kind: HoverKind::Symbol,
        symbol_ref: Some(s.clone()),
        wiki: Some(info),
        kernel: None,
        occupancy: None,
        shared: None,
        bank: None,
        findings: Vec::new(),
    }
}

use crate::Cancellable;

/// What a hover at a byte offset shows, or `None` where there is nothing to say.
pub(crate) fn hover_query(
    db: &Analysis,
    file: FileId,
    offset: usize,
) -> Cancellable<Option<HoverResult>> {
    let (path, _) = db.data(file)?;
    db.query("hover", || {
        crate::hover::hover(&db.for_path(path), path, offset)
    })
}

/// Text from a page (a title) with every name that holds `__` put in a code span
/// (`__hfma2`, `__launch_bounds__`), where no Markdown renderer reads the underscores
/// as emphasis; names already in backticks stay as they are.
pub(crate) fn code_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
            continue;
        }
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            if word.contains("__") {
                out.push('`');
                out.push_str(word);
                out.push('`');
            } else {
                out.push_str(word);
            }
            word.clear();
        };
        for c in part.chars() {
            if c.is_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
    }
    out
}
