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

use crate::analysis::Analysis;
use crate::knowledge::Knowledge;
use crate::reports::{block_for, BankAnalysis, BlockSource, OccupancyReport, RegsSource};
use crate::rules::RuleDiagnostic;

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
    pub file: String,
    /// Launch sites in every file, as (path, launch).
    pub launches: Vec<(String, LaunchSite)>,
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
    let findings: Vec<RuleDiagnostic> = analysis
        .diagnostics_at(path, compute)
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
        "**{} `{}`**: {}\n\n",
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
            Some(t) => md.push_str(&format!("Wiki: `{}` ({t})\n\n", d.wiki)),
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
        Some(v) => format!("**`{}` = {v}**\n\n```cuda\n{origin}\n```\n", c.name),
        None => format!(
            "**`{}`**: its value is not known from the file.\n\n```cuda\n{origin}\n```\n",
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
        "**device function `{}`**\n\n```cuda\n{head} {}({})\n```\n\nDefined at {}; the wiki has no entry for it.\n",
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

/// The wiki's entry for a symbol, trying each of syntax's candidates. A name the user
/// declared (a local, a parameter, a field) is not a library symbol, and a member of a
/// library type is reached only through an object of that type (`frag.x`,
/// `block.size()`), never by its bare name.
fn lookup(k: &Knowledge, s: &SymbolRef, file: &kernaut_syntax::SourceFile) -> Option<SymbolMatch> {
    let mut names: Vec<&str> = s.candidates.iter().map(String::as_str).collect();
    if names.is_empty() {
        names.push(&s.name);
    }
    let mut user_name: Option<bool> = None;
    names
        .into_iter()
        .filter_map(|n| k.symbol(n))
        .filter(|m| s.kind == SymbolKind::Ptx || !is_bare_ptx(k, m))
        .find(|m| match &s.kind {
            SymbolKind::Identifier => {
                // A call names a function: the user's own functions are looked up after
                // the wiki, as before. Other plain names are checked against the file's
                // declarations.
                (s.is_call
                    || !*user_name.get_or_insert_with(|| file.is_user_name_at(s.range.start)))
                    && !member_of_type(k, &m.symbol)
            }
            SymbolKind::Member { receiver_type, .. } => {
                // `threadIdx.x` is documented with `threadIdx` itself.
                s.name
                    .strip_prefix(m.symbol.as_str())
                    .is_some_and(|r| r.starts_with('.'))
                    || reached_through(k, receiver_type.as_deref(), m, s.is_call)
            }
            SymbolKind::Qualified => {
                same_library(&s.name, &m.symbol) && !static_member_of_users_type(k, &s.name, m)
            }
            _ => true,
        })
}

/// Whether a qualified name (`x128::size`) matched a bare wiki symbol (`size`, a
/// member the wiki lists without its class) through a qualifier that is no library
/// namespace: no wiki symbol lives in it. It is then a static member of the user's own
/// type (llm.c's `x128::size` is the lanes of its `Packed128`), not the library member.
fn static_member_of_users_type(k: &Knowledge, written: &str, m: &SymbolMatch) -> bool {
    let qualifier = namespace_of(written).trim_start_matches("::");
    if qualifier.is_empty() || m.symbol.contains("::") {
        return false;
    }
    let root = qualifier.split("::").next().unwrap_or(qualifier);
    let prefix = format!("{root}::");
    !k.index
        .symbols()
        .symbols()
        .iter()
        .any(|s| s.starts_with(&prefix))
}

/// Whether a qualified name as written (`std::sort`) and the wiki symbol it matched
/// (`thrust::sort`) are in the same library: one's namespaces contain the other's, or
/// the name is `std::` or `cuda::std::` and the symbol libcu++'s `cuda::`.
fn same_library(written: &str, symbol: &str) -> bool {
    let (w, m) = (namespace_of(written), namespace_of(symbol));
    if w.is_empty() || m.is_empty() || w.contains(m) || m.contains(w) {
        return true;
    }
    let root = |ns: &str| ns.split("::").next().unwrap_or("").to_string();
    root(w) == root(m) || (matches!(root(w).as_str(), "std" | "cuda") && root(m) == "cuda")
}

/// Whether a wiki symbol is a member of a type the wiki documents
/// (`nvcuda::wmma::fragment::x`, `cooperative_groups::thread_block::size`).
fn member_of_type(k: &Knowledge, symbol: &str) -> bool {
    symbol
        .rsplit_once("::")
        .is_some_and(|(owner, _)| k.symbol(owner).is_some_and(|o| o.symbol == owner))
}

/// A type's last name, without namespaces, template arguments, `const`, `*` or `&`.
fn type_name(t: &str) -> &str {
    let t = t.split('<').next().unwrap_or(t);
    let t = t.trim().trim_end_matches(['*', '&', ' ']);
    let t = t.rsplit("::").next().unwrap_or(t);
    t.rsplit(' ').next().unwrap_or(t).trim()
}

/// The namespaces of a qualified symbol (`cooperative_groups` for
/// `cooperative_groups::thread_block`), empty for a bare one.
fn namespace_of(symbol: &str) -> &str {
    symbol.rsplit_once("::").map_or("", |(ns, _)| ns)
}

/// Whether member `m` is reached through a receiver of type `receiver_type`: the wiki's
/// symbol belongs to that type, or to a type of the same library when the receiver's
/// type is a library type (a tile reaches the group interface). A receiver of unknown
/// type reaches only called members (`g.sync()`), never a field such as `.x`.
fn reached_through(
    k: &Knowledge,
    receiver_type: Option<&str>,
    m: &SymbolMatch,
    is_call: bool,
) -> bool {
    let Some(t) = receiver_type else {
        return is_call;
    };
    let library_type = k
        .symbol(t)
        .map(|tm| tm.symbol)
        .filter(|ts| ts.contains("::") && type_name(ts) == type_name(t));
    match m.symbol.rsplit_once("::") {
        Some((owner, _)) => {
            type_name(owner) == type_name(t)
                || library_type.is_some_and(|ts| {
                    let ns = namespace_of(&ts);
                    ns == owner || ns == namespace_of(owner)
                })
        }
        None => library_type.is_some(),
    }
}

/// Whether a match is a bare PTX mnemonic (`add`, `mov`, `fence`): C++ code that names
/// it is using a variable or function of its own, not the instruction.
fn is_bare_ptx(k: &Knowledge, m: &SymbolMatch) -> bool {
    let ptx_page = m
        .api
        .as_deref()
        .and_then(|id| k.wiki.page(id))
        .and_then(|p| p.api.as_ref())
        .is_some_and(|a| a.header.as_deref() == Some("ptx"));
    ptx_page && !m.symbol.contains("::") && !m.symbol.contains('_')
}

fn kernel_hover(analysis: &Analysis, path: &str, s: &SymbolRef) -> Option<HoverResult> {
    let name = short_name(&s.name);
    let (kpath, function) = analysis
        .sorted_files(path)
        .into_iter()
        .find_map(|(p, d)| d.facts().kernel(name).cloned().map(|k| (p, k)))?;
    let launches = analysis.launches_of(kpath, name);
    // A template kernel's launch bounds in the instantiation the occupancy uses.
    let inst = analysis
        .file(kpath)
        .and_then(|f| crate::instances::chosen_instantiation(f.facts(), &function.name));
    let function = match (&inst, analysis.file(kpath)) {
        (Some(i), Some(f)) => crate::instances::bind_function(f.facts(), &function, &i.bound),
        _ => function,
    };
    let limits = analysis.config.arch.limits();
    let launch_bounds_regs = function.launch_bounds.as_ref().and_then(|lb| {
        let max = u32::try_from(lb.max_threads?).ok().filter(|v| *v > 0)?;
        let min = lb
            .min_blocks
            .and_then(|v| u32::try_from(v).ok())
            .filter(|v| *v > 0)
            .unwrap_or(1);
        Some(crate::reports::launch_bounds_register_limit(
            limits, max, min,
        ))
    });
    let occ = analysis.occupancy_at(kpath, name);
    let mut md = String::new();
    let params: Vec<String> = function
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
    let template = if function.template_params.is_empty() {
        String::new()
    } else {
        let ps: Vec<String> = function
            .template_params
            .iter()
            .map(|t| match &t.default {
                Some(d) => format!("{} {} = {d}", t.ty, t.name),
                None => format!("{} {}", t.ty, t.name),
            })
            .collect();
        format!("template <{}> ", ps.join(", "))
    };
    md.push_str(&format!(
        "**kernel `{}`**\n\n```cuda\n{template}__global__ void {}({})\n```\n",
        function.name,
        function.name,
        params.join(", ")
    ));
    match &function.launch_bounds {
        Some(lb) => {
            md.push_str(&format!("\n`__launch_bounds__({})`", lb.args.join(", ")));
            if let Some(r) = launch_bounds_regs {
                let max = lb.max_threads.unwrap_or(0);
                let min = lb.min_blocks.unwrap_or(1);
                let with = match &inst {
                    Some(i) if !i.bound.is_empty() => format!(" with {}", i.describe()),
                    _ => String::new(),
                };
                md.push_str(&format!(
                    "{with}: at most {max} threads per block and at least {min} block{} per SM, so the compiler keeps to at most {r} registers per thread on {}.\n",
                    if min == 1 { "" } else { "s" },
                    analysis.config.arch
                ));
            } else {
                md.push_str(": the values are not known from the file.\n");
            }
        }
        None => md.push_str("\nNo `__launch_bounds__`.\n"),
    }
    if let Some(c) = function.cluster_dims {
        let show = |v: Option<i64>| v.map_or("?".to_string(), |v| v.to_string());
        md.push_str(&format!(
            "\n`__cluster_dims__`: {} × {} × {}.\n",
            show(c[0]),
            show(c[1]),
            show(c[2])
        ));
    }
    if launches.is_empty() {
        md.push_str("\nNo launch site in the open files.\n");
    } else {
        md.push_str(&format!("\nLaunch sites ({}):\n", launches.len()));
        for (f, l) in launches.iter().take(8) {
            let line = analysis.file(f).map_or(1, |d| d.line_of(l.range.start));
            let mut cfg = format!("<<<{}, {}", l.grid.text, l.block.text);
            if let Some(s) = &l.shared_bytes_text {
                cfg.push_str(&format!(", {s}"));
            }
            if let Some(s) = &l.stream {
                cfg.push_str(&format!(", {s}"));
            }
            cfg.push_str(">>>");
            let mut block = match l.block.value {
                Some([x, y, z]) => format!("block {x}×{y}×{z} = {} threads", x * y * z),
                None => "block not known from the file".to_string(),
            };
            if let (false, Some(caller)) = (l.caller_bound.is_empty(), &l.function) {
                let b: Vec<String> = l
                    .caller_bound
                    .iter()
                    .map(|(n, v)| format!("{n} = {v}"))
                    .collect();
                block.push_str(&format!(
                    " (with `{}` as the file's call of `{caller}` binds them)",
                    b.join(", ")
                ));
            }
            md.push_str(&format!(
                "- {}: `{}{cfg}`: {block}\n",
                location(f, path, line),
                l.kernel
            ));
        }
    }
    if let Some(o) = &occ {
        md.push('\n');
        md.push_str(&occupancy_markdown(o, path));
    }
    if let Some((facts, compiled)) =
        analysis.compiled_kernel(kpath, crate::analysis::short_name(name))
    {
        md.push('\n');
        md.push_str(&compiled[0].markdown(&facts.toolkit));
    }
    Some(HoverResult {
        markdown: md,
        range: s.range.clone(),
        symbol: function.name.clone(),
        kind: HoverKind::Kernel,
        symbol_ref: Some(s.clone()),
        wiki: None,
        kernel: Some(KernelInfo {
            function,
            file: kpath.to_string(),
            launches,
            launch_bounds_regs,
        }),
        occupancy: occ,
        shared: None,
        bank: None,
        findings: Vec::new(),
    })
}

fn location(file: &str, current: &str, line: u32) -> String {
    if file == current {
        format!("line {line}")
    } else {
        format!("{file}:{line}")
    }
}

fn block_text(b: [u32; 3]) -> String {
    format!("{}×{}×{}", b[0], b[1], b[2])
}

fn block_source_text(src: &BlockSource, current: &str) -> String {
    match src {
        BlockSource::Launch { file, line, .. } => {
            format!("from the launch at {}", location(file, current, *line))
        }
        BlockSource::LaunchBounds => {
            "the `__launch_bounds__` maximum; no launch with a known block was found".into()
        }
        BlockSource::Default => "the configured default; no launch was found".into(),
    }
}

fn occupancy_markdown(o: &OccupancyReport, current: &str) -> String {
    let threads: u32 = o.block.iter().product();
    let regs = match o.regs_source {
        RegsSource::LaunchBounds { .. } => "the `__launch_bounds__` limit",
        RegsSource::Default => "assumed: a typical count, not measured",
        RegsSource::Project => "assumed: `registers` in `.kernaut.toml`",
        RegsSource::Comment => "assumed: the `kernaut: registers=` comment",
        RegsSource::Compiler => "ptxas (compiled)",
    };
    let mut md = format!(
        "**Occupancy on {}**: block {} = {threads} threads ({}), {} registers per thread ({regs}), {} B static + {} B dynamic shared memory.\n\n",
        o.arch,
        block_text(o.block),
        block_source_text(&o.block_source, current),
        o.regs_per_thread,
        o.static_smem,
        o.dynamic_smem,
    );
    match &o.result {
        Ok(occ) => {
            let lim = o.limiter_names();
            md.push_str(&format!(
                "{} blocks/SM · {} of {} warps active ({:.0}%) · limited by {}.\n",
                occ.blocks_per_sm,
                occ.active_warps,
                occ.max_warps_per_sm,
                occ.occupancy * 100.0,
                if lim.is_empty() {
                    "nothing".to_string()
                } else {
                    lim.join(" and ")
                }
            ));
        }
        Err(e) => md.push_str(&format!("The configuration cannot launch: {e}.\n")),
    }
    for n in &o.notes {
        md.push_str(&format!("\n{n}\n"));
    }
    md
}

fn shared_hover(
    analysis: &Analysis,
    path: &str,
    d: &SharedDecl,
    sym: Option<SymbolRef>,
) -> HoverResult {
    let arch = analysis.config.arch;
    let file = analysis.file(path);
    let function = file.and_then(|f| {
        d.function
            .as_deref()
            .and_then(|n| f.facts().kernels.iter().find(|k| k.name == n))
    });
    // A template kernel's declaration: its sizes in the instantiation chosen.
    let facts = file.map(|f| f.facts());
    let inst = facts.zip(d.function.as_deref()).and_then(|(fa, k)| {
        function
            .is_some_and(|f| !f.template_params.is_empty())
            .then(|| crate::instances::chosen_instantiation(fa, k))
            .flatten()
    });
    let bound: &[(String, i64)] = inst.as_ref().map_or(&[], |i| &i.bound);
    let bound_function = facts
        .zip(function)
        .map(|(fa, f)| crate::instances::bind_function(fa, f, bound));
    let written = d;
    let bound_decl = facts.map(|fa| crate::instances::bind_shared(fa, d, bound));
    let d = bound_decl.as_ref().unwrap_or(d);
    let (block, block_source, dynamic, _) = block_for(analysis, path, bound_function.as_ref());
    let threads: u32 = block.iter().fold(1u32, |a, b| a.saturating_mul(*b));
    let smem_limit = |bytes: u64| -> (Option<u32>, Option<u32>) {
        let Ok(b) = u32::try_from(bytes) else {
            return (None, None);
        };
        let input = OccupancyInput {
            threads_per_block: threads,
            static_smem: b.min(arch.limits().smem_per_block),
            dynamic_smem: b.saturating_sub(arch.limits().smem_per_block),
            ..OccupancyInput::default()
        };
        match occupancy(arch, &input) {
            Ok(o) => (o.limits.shared_memory, Some(o.limits.warps)),
            Err(_) => (Some(0), None),
        }
    };
    let bytes = if d.is_extern {
        dynamic.map(u64::from)
    } else {
        d.static_bytes
    };
    let (alone, warps) = bytes.map_or((None, None), smem_limit);
    let function_static_bytes = file.and_then(|f| {
        let name = d.function.as_deref()?;
        f.facts()
            .shared
            .iter()
            .filter(|s| s.function.as_deref() == Some(name) && !s.is_extern)
            .try_fold(0u64, |acc, s| {
                acc.checked_add(crate::instances::bind_shared(f.facts(), s, bound).static_bytes?)
            })
    });
    let total = function_static_bytes.map(|s| {
        s + if d.is_extern {
            bytes.unwrap_or(0)
        } else {
            dynamic.map_or(0, u64::from)
        }
    });
    let (with_all, warps2) = total.map_or((None, None), smem_limit);
    let warps = warps.or(warps2);

    let dims: String = d.dims_text.iter().map(|t| format!("[{t}]")).collect();
    let mut md = format!(
        "**`{}__shared__ {} {}{dims}`**",
        if d.is_extern { "extern " } else { "" },
        d.element_type,
        d.name
    );
    if let Some(f) = &d.function {
        md.push_str(&format!(" in `{f}`"));
    }
    md.push_str("\n\n");
    let folded: Vec<String> = d
        .dims
        .iter()
        .map(|v| v.map_or("?".to_string(), |v| v.to_string()))
        .collect();
    let elem = d
        .element_size
        .map_or("unknown size".to_string(), |s| format!("{s} B"));
    if d.is_extern {
        md.push_str(&format!(
            "Dynamic shared memory of `{}` ({elem} each), sized at launch",
            d.element_type
        ));
        match dynamic {
            Some(b) => md.push_str(&format!(": {b} B at the launch found.\n")),
            None => md.push_str("; no launch found gives its size.\n"),
        }
    } else {
        match d.static_bytes {
            Some(b) => md.push_str(&format!(
                "{} × {elem} = **{b} bytes** ({:.1} KiB).\n",
                folded.join(" × "),
                b as f64 / 1024.0
            )),
            None => md.push_str(&format!(
                "Size not known from the file (dimensions {}, element {elem}).\n",
                folded.join(" × ")
            )),
        }
    }
    if let (Some(fa), Some(f)) = (facts, function) {
        md.push_str(&template_sizes(fa, written, f, inst.as_ref()));
    }
    if let Some(a) = d.alignment {
        md.push_str(&format!("\nAligned to {a} bytes.\n"));
    }
    let limits = arch.limits();
    md.push_str(&format!(
        "\n**Occupancy on {arch}** at {} = {threads} threads ({}); {} KiB of shared memory per SM, {} B reserved per block:\n",
        block_text(block),
        block_source_text(&block_source, path),
        limits.smem_per_sm / 1024,
        limits.reserved_smem_per_block
    ));
    if let Some(a) = alone {
        md.push_str(&format!("- this buffer alone allows {a} blocks/SM\n"));
    }
    if let (Some(t), Some(w)) = (total, with_all) {
        md.push_str(&format!(
            "- with all {t} B of `{}`'s shared memory: {w} blocks/SM\n",
            d.function.as_deref().unwrap_or("the function")
        ));
    }
    if let Some(w) = warps {
        md.push_str(&format!("- warps allow {w} blocks/SM at this block size"));
        match with_all.or(alone) {
            Some(s) if s < w => md.push_str(", so shared memory is the limit\n"),
            Some(_) => md.push_str(", so shared memory is not the limit\n"),
            None => md.push('\n'),
        }
    }
    HoverResult {
        markdown: md,
        range: d.name_range.clone(),
        symbol: d.name.clone(),
        kind: HoverKind::SharedDeclaration,
        symbol_ref: sym,
        wiki: None,
        kernel: None,
        occupancy: None,
        shared: Some(SharedInfo {
            decl: d.clone(),
            block,
            block_source,
            blocks_per_sm_alone: alone,
            function_static_bytes,
            blocks_per_sm_function: with_all,
            blocks_per_sm_warps: warps,
        }),
        bank: None,
        findings: Vec::new(),
    }
}

/// What a template kernel's shared declaration says about its template arguments: the
/// instantiation its size is shown for (and the size in each other one the file
/// launches), or which parameters are unbound and what was assumed. Empty when the
/// dimensions name no template parameter.
fn template_sizes(
    facts: &kernaut_syntax::FileFacts,
    d: &SharedDecl,
    f: &Function,
    inst: Option<&crate::reports::Instantiation>,
) -> String {
    let names = |p: &&kernaut_syntax::TemplateParam| {
        !p.is_type && d.dims_text.iter().any(|t| names_token(t, &p.name))
    };
    let Some(inst) = inst else {
        // Unbound: the parameters the dimensions name, or every value parameter when a
        // size is not known (a constant between them, `constexpr int N = BM * 2`).
        let unknown = !d.is_extern && d.static_bytes.is_none();
        let unbound: Vec<_> = crate::instances::unbound_params(facts, f)
            .into_iter()
            .filter(|p| names(p) || unknown)
            .collect();
        return crate::instances::unbound_sentence(&f.name, &unbound)
            .map_or(String::new(), |s| format!("\n{s}\n"));
    };
    let bound = crate::instances::bind_shared(facts, d, &inst.bound);
    if !f.template_params.iter().any(|p| names(&p)) && bound.dims == d.dims {
        return String::new();
    }
    let mut md = format!(
        "\nTemplate arguments: {}.\n",
        crate::instances::chosen_phrase(inst)
    );
    if inst.of > 1 {
        let all = crate::reports::launched_instantiations(facts, &f.name);
        for other in all.iter().take(8) {
            let b = crate::instances::bind_shared(facts, d, &other.bound);
            let dims: Vec<String> = b
                .dims
                .iter()
                .map(|v| v.map_or("?".to_string(), |v| v.to_string()))
                .collect();
            let bytes = b
                .static_bytes
                .map_or("size not known".to_string(), |v| format!("{v} bytes"));
            md.push_str(&format!(
                "- {}: {} = {bytes}\n",
                other.describe(),
                dims.join(" × ")
            ));
        }
    }
    md
}

fn access_hover(
    analysis: &Analysis,
    path: &str,
    a: &SharedAccess,
    sym: Option<SymbolRef>,
) -> Option<HoverResult> {
    let bank = analysis.bank_at(path, a)?;
    let text = analysis.text_at(path).unwrap_or("");
    let written = text.get(a.range.clone()).unwrap_or(&a.array);
    let written: String = written.split_whitespace().collect::<Vec<_>>().join(" ");
    let kind = match a.kind {
        kernaut_syntax::AccessKind::Load => "load",
        kernaut_syntax::AccessKind::Store => "store",
        kernaut_syntax::AccessKind::LoadStore => "load and store",
        kernaut_syntax::AccessKind::AddressOf => "address taken",
    };
    let width = bank
        .width
        .map_or("unknown width".to_string(), |w| format!("{w} B per lane"));
    let mut md = format!(
        "**shared {kind} `{written}`** · {width} · warp 0 of a {} block ({})\n\n",
        block_text(bank.block),
        block_source_text(&bank.block_source, path)
    );
    match (&bank.copy, a.kind) {
        (Some(callee), _) => md.push_str(&format!(
            "The destination of `{callee}`: modelled as its {}-byte shared write per lane.\n\n",
            bank.width.unwrap_or(0)
        )),
        (None, kernaut_syntax::AccessKind::AddressOf) => md.push_str("The address is taken (for `cp.async`, `ldmatrix` or a pointer); modelled as a load of the element width.\n\n"),
        _ => {}
    }
    if let Some(defaults) = &bank.assumed_defaults {
        md.push_str(&format!(
            "Template defaults assumed: `{defaults}` (no launch in the file instantiates the kernel).\n\n"
        ));
    }
    if let Some(inst) = &bank.instantiation {
        md.push_str(&format!("In {}.", inst.phrase()));
        let file = analysis.file(path);
        let decl = file.and_then(|f| {
            f.facts()
                .shared_named(&a.array, a.range.start)
                .map(|d| (f, d))
        });
        if let Some((f, d)) = decl.filter(|_| a.root == a.array) {
            let b = crate::instances::bind_shared(f.facts(), d, &inst.bound);
            if let (Some(bytes), true) = (b.static_bytes, b.dims != d.dims) {
                let dims: Vec<String> = b.dims.iter().flatten().map(u64::to_string).collect();
                md.push_str(&format!(
                    " There `{}` is {} × {} B = {bytes} bytes.",
                    d.name,
                    dims.join(" × "),
                    d.element_size.unwrap_or(0)
                ));
            }
        }
        md.push_str("\n\n");
    }
    if let Some(l) = &bank.lowered {
        md.push_str(&format!("Byte offset: `{l}`\n\n"));
    }
    for (name, start) in &bank.held_loops {
        md.push_str(&format!(
            "Loop variable `{name}` held at its start value `{start}` (the first iteration).\n\n"
        ));
    }
    if !bank.uniforms.is_empty() && bank.result.is_ok() {
        md.push_str(&format!(
            "{} is the same for every lane; the result does not depend on its value.\n\n",
            bank.uniforms
                .iter()
                .map(|u| format!("`{u}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match &bank.result {
        Ok(r) => {
            let verdict = if r.conflict_degree <= 1 {
                "conflict-free".to_string()
            } else {
                format!("{}-way bank conflict", r.conflict_degree)
            };
            md.push_str(&format!(
                "**{verdict}**: {} wavefront{} per request ({} active lanes, {} distinct words",
                r.wavefronts,
                if r.wavefronts == 1 { "" } else { "s" },
                r.active_lanes,
                r.distinct_words
            ));
            if r.lanes_per_group < 32 {
                md.push_str(&format!(
                    ", resolved in groups of {} lanes",
                    r.lanes_per_group
                ));
            }
            if r.pair_packed {
                md.push_str(", pair-packed");
            }
            md.push(')');
            if r.conflict_degree <= 1 && r.wavefronts > 1 {
                md.push_str(&format!(
                    "; {} is the minimum for {}-byte accesses",
                    r.wavefronts,
                    bank.width.unwrap_or(0)
                ));
            }
            md.push_str(".\n\n");
            md.push_str(&bank_map(&r.words_per_bank));
        }
        Err(reason) => md.push_str(&format!("**Cannot be modelled**: {reason}.\n")),
    }
    let range = a.range.clone();
    Some(HoverResult {
        markdown: md,
        range,
        symbol: written,
        kind: HoverKind::SharedAccess,
        symbol_ref: sym,
        wiki: None,
        kernel: None,
        occupancy: None,
        shared: None,
        bank: Some(bank),
        findings: Vec::new(),
    })
}

/// The distinct words per bank, as two rows of 16 banks.
fn bank_map(words: &[u32; BANKS]) -> String {
    let mut out = String::from("```text\nbank  ");
    let row = |out: &mut String, from: usize| {
        for b in from..from + 16 {
            out.push_str(&format!("{b:>3}"));
        }
        out.push_str("\nwords ");
        for &w in &words[from..from + 16] {
            if w == 0 {
                out.push_str("  .");
            } else {
                out.push_str(&format!("{w:>3}"));
            }
        }
        out.push('\n');
    };
    row(&mut out, 0);
    out.push_str("bank  ");
    row(&mut out, 16);
    out.push_str("```\n");
    out
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
    md.push_str(&format!("**{written}**"));
    if info.symbol != s.name {
        md.push_str(&format!(" (wiki: `{}`)", info.symbol));
    }
    if let (Some(id), Some(t)) = (&info.page, &info.title) {
        md.push_str(&format!(" · {t} · `{id}`"));
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
        facts.push(format!("header: `{h}`"));
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
                Some(t) => md.push_str(&format!("- `{}`: {t}\n", p.id)),
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
                Some(p) => format!("`{id}` ({})", p.title),
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

fn wiki_info(
    analysis: &Analysis,
    k: &Knowledge,
    s: &SymbolRef,
    m: &SymbolMatch,
    page: Option<&Page>,
    call: Option<&kernaut_syntax::SourceFile>,
) -> WikiInfo {
    let api = page.and_then(|p| p.api.as_ref());
    let (mut signatures, mut signatures_left_out) = api.map_or_else(
        || (Vec::new(), 0),
        |a| matching_signatures(&a.signatures, s, &m.symbol),
    );
    // The call's argument types, read only where they can choose something: several
    // overloads, or overloads with a requirement of their own.
    let short = m.symbol.rsplit("::").next().unwrap_or(&m.symbol);
    let has_overload_reqs = api.is_some_and(|a| {
        a.symbol_requires_sm
            .keys()
            .any(|key| key.strip_prefix(short).is_some_and(|r| r.starts_with('(')))
    });
    let args = call
        .filter(|_| signatures.len() > 1 || has_overload_reqs)
        .and_then(|f| f.call_argument_types(s.range.start));
    let args = args.as_deref();
    // The overloads the call's argument types pick, where the file shows them.
    let mut picked_one = false;
    if let Some(args) = args {
        let picked = pick_overloads(&signatures, args);
        if !picked.is_empty() && picked.len() < signatures.len() {
            signatures_left_out += signatures.len() - picked.len();
            signatures = picked;
            picked_one = true;
        }
    }
    if signatures.len() > MAX_SIGNATURES {
        signatures_left_out += signatures.len() - MAX_SIGNATURES;
        signatures.truncate(MAX_SIGNATURES);
    }
    let overload = page
        .zip(args)
        .and_then(|(p, a)| overload_requirement(p, &m.symbol, a));
    let requires_sm = overload
        .as_ref()
        .map(|(_, r)| *r)
        .or_else(|| page.and_then(|p| p.requires_sm_for(&m.symbol)))
        .and_then(|r| requirement(r, analysis));
    let requires_range = match (&overload, page) {
        (None, Some(p)) if !picked_one => overload_range(p, &m.symbol),
        _ => None,
    };
    let summary = page
        .and_then(|p| p.section("semantics").map(|s| lead(&s.content)))
        .or_else(|| page.map(|p| cap(&p.summary(), SUMMARY_CHARS)))
        .filter(|s| !s.is_empty());
    let performance = page
        .and_then(|p| p.section("performance"))
        .map(|s| measured(&s.content))
        .filter(|s| !s.is_empty());
    let pitfalls = api
        .map(|a| {
            a.related_pitfalls
                .iter()
                .map(|id| PitfallLink {
                    id: id.clone(),
                    title: k.resolve(id).and_then(|(p, anchor)| match anchor {
                        Some(a) => p
                            .pitfall(a)
                            .map(|x| x.title.clone())
                            .or_else(|| p.section(a).map(|x| x.title.clone())),
                        None => Some(p.title.clone()),
                    }),
                })
                .collect()
        })
        .unwrap_or_default();
    let related_pages = m
        .related_pages
        .iter()
        .filter(|id| Some(id.as_str()) != m.api.as_deref())
        .filter(|id| {
            // Pitfall pages already linked by anchor are not repeated.
            !api.is_some_and(|a| {
                a.related_pitfalls
                    .iter()
                    .any(|p| p.starts_with(&format!("{id}#")))
            })
        })
        .take(6)
        .cloned()
        .collect();
    WikiInfo {
        symbol: m.symbol.clone(),
        page: page.map(|p| p.id.clone()),
        title: page.map(|p| p.title.clone()),
        signatures,
        signatures_left_out,
        overload: overload.map(|(key, _)| key),
        requires_range,
        header: api.and_then(|a| a.header.clone()),
        requires_sm,
        summary,
        performance,
        measured_on: page.and_then(|p| p.frontmatter.measured_on.clone()),
        pitfalls,
        related_pages,
    }
}

/// A requirement such as `>=8.0` against the configured target.
fn requirement(r: &str, analysis: &Analysis) -> Option<ArchRequirement> {
    let (major, minor, specific) = parse_requires_sm(r)?;
    let target = analysis.config.arch;
    let (tmaj, tmin) = (target.cc.major(), target.cc.minor());
    let satisfied = if specific {
        (tmaj, tmin) == (major, minor) && target.arch_specific
    } else {
        (tmaj, tmin) >= (major, minor)
    };
    Some(ArchRequirement {
        required: format!("sm_{major}{minor}{}", if specific { "a" } else { "" }),
        target: target.to_string(),
        satisfied,
    })
}

/// The most signatures a hover shows; the page has the rest.
pub const MAX_SIGNATURES: usize = 6;

/// The signatures that name the symbol (by the name as written, then as the wiki
/// lists it), or the page's first ones when none does; with how many that name it are
/// left out. Where more than [`MAX_SIGNATURES`] name it (a type such as `__half` is a
/// parameter of dozens of functions), only those that declare it are kept, when there
/// are such. The caller picks overloads and caps the list.
fn matching_signatures(all: &[String], s: &SymbolRef, wiki_symbol: &str) -> (Vec<String>, usize) {
    let mut tries: Vec<String> = Vec::new();
    if s.kind == SymbolKind::Ptx {
        // The mnemonic as written, then with modifiers dropped from the right, down to
        // the symbol the wiki lists.
        let mut cur = s.text.as_str();
        loop {
            tries.push(cur.to_string());
            match cur.rsplit_once('.') {
                Some((head, _)) if head.len() >= wiki_symbol.len() => cur = head,
                _ => break,
            }
        }
        tries.push(wiki_symbol.to_string());
    } else {
        for name in [s.name.as_str(), wiki_symbol] {
            // `cooperative_groups::thread_block::sync`, then `thread_block::sync`, then
            // `sync`.
            let parts: Vec<&str> = name.split("::").collect();
            for k in (0..parts.len()).rev() {
                let tail = parts[parts.len() - 1 - k..].join("::");
                if !tries.contains(&tail) {
                    tries.push(tail);
                }
            }
        }
        if let Some(last) = s.text.rsplit(['.', ':']).next() {
            tries.push(last.to_string());
        }
    }
    for t in tries {
        let hits: Vec<&String> = all.iter().filter(|sig| names_token(sig, &t)).collect();
        if hits.is_empty() {
            continue;
        }
        let total = hits.len();
        let declaring: Vec<&String> = hits
            .iter()
            .copied()
            .filter(|sig| s.kind == SymbolKind::Ptx || declares(sig, &t))
            .collect();
        let shown: Vec<String> = if total > MAX_SIGNATURES && !declaring.is_empty() {
            declaring
        } else {
            hits
        }
        .into_iter()
        .cloned()
        .collect();
        let left_out = total.saturating_sub(shown.len());
        return (shown, left_out);
    }
    (all.iter().take(MAX_SIGNATURES).cloned().collect(), 0)
}

/// The plain types of a C++ signature's parameters (`float4 *address` → `float4*`).
fn param_types(sig: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (sig.find('('), sig.rfind(')')) else {
        return Vec::new();
    };
    if close <= open {
        return Vec::new();
    }
    let mut params: Vec<String> = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in sig[open + 1..close].chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                params.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        params.push(cur);
    }
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    params
        .iter()
        .map(|p| {
            let p = p.split('=').next().unwrap_or(p).trim();
            // Drop the parameter's name when there is a type before it.
            let ty = p.trim_end_matches(ident);
            let ty = if ty.trim().is_empty() || ty.ends_with("::") {
                p
            } else {
                ty
            };
            kernaut_syntax::plain_type(ty)
        })
        .collect()
}

/// The overloads among `sigs` that a call with these argument types picks: every known
/// argument's type matches; failing that, the first argument's alone (the pointer of an
/// atomic). Empty when the first argument's type is not known (a literal alone does not
/// decide: it converts) or nothing matches.
fn pick_overloads(sigs: &[String], args: &[Option<String>]) -> Vec<String> {
    if args.first().is_none_or(Option::is_none) {
        return Vec::new();
    }
    let fits = |sig: &String, n: usize| {
        let params = param_types(sig);
        params.len() >= args.len()
            && args
                .iter()
                .take(n)
                .zip(&params)
                .all(|(a, p)| a.as_ref().is_none_or(|a| a == p))
    };
    let all: Vec<String> = sigs
        .iter()
        .filter(|s| fits(s, args.len()))
        .cloned()
        .collect();
    if !all.is_empty() || args[0].is_none() {
        return all;
    }
    sigs.iter().filter(|s| fits(s, 1)).cloned().collect()
}

/// The page's own minimum architecture for the overload a call picks by its first
/// argument's type: `symbol_requires_sm` keys such as `atomicAdd(float4*)`.
pub(crate) fn overload_requirement<'p>(
    page: &'p Page,
    symbol: &str,
    args: &[Option<String>],
) -> Option<(String, &'p str)> {
    let api = page.api.as_ref()?;
    let short = symbol.rsplit("::").next().unwrap_or(symbol);
    let first = args.first()?.as_ref()?;
    let key = format!("{short}({first})");
    api.symbol_requires_sm.get(&key).map(|r| (key, r.as_str()))
}

/// `sm_50 to sm_90` when the page gives some of the symbol's overloads a minimum
/// architecture of their own.
fn overload_range(page: &Page, symbol: &str) -> Option<String> {
    let api = page.api.as_ref()?;
    let short = symbol.rsplit("::").next().unwrap_or(symbol);
    let prefix = format!("{short}(");
    let mut reqs: Vec<(u32, u32)> = api
        .symbol_requires_sm
        .iter()
        .filter(|(k, _)| k.starts_with(&prefix))
        .filter_map(|(_, r)| parse_requires_sm(r).map(|(a, b, _)| (a, b)))
        .collect();
    if reqs.is_empty() {
        return None;
    }
    if let Some((a, b, _)) = page.requires_sm_for(symbol).and_then(parse_requires_sm) {
        reqs.push((a, b));
    }
    let lo = reqs.iter().min()?;
    let hi = reqs.iter().max()?;
    Some(format!(
        "sm_{}{} to sm_{}{}, by argument type",
        lo.0, lo.1, hi.0, hi.1
    ))
}

/// Whether a C++ signature declares `name` (rather than only using it): a function
/// `name(`, a `struct`/`class`/`union name`, or a `typedef … name;`.
fn declares(sig: &str, name: &str) -> bool {
    let last = name.rsplit("::").next().unwrap_or(name);
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let t = sig.trim().trim_end_matches(';').trim_end();
    if t.starts_with("typedef") {
        return t.rsplit(|c: char| !ident(c)).next() == Some(last);
    }
    if ["struct ", "class ", "union "]
        .iter()
        .any(|k| t.contains(&format!("{k}{last}")) && !t.contains('('))
    {
        return true;
    }
    let mut from = 0;
    while let Some(i) = t[from..].find(last) {
        let start = from + i;
        let end = start + last.len();
        let before_ok = start == 0 || !t[..start].ends_with(ident);
        let after = t[end..].trim_start();
        if before_ok && after.starts_with('(') {
            return true;
        }
        from = end;
    }
    false
}

/// Whether `sig` contains `name` as a whole name (for PTX, a prefix of a dotted
/// mnemonic counts).
fn names_token(sig: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = sig.as_bytes();
    let mut from = 0;
    while let Some(i) = sig[from..].find(name) {
        let start = from + i;
        let end = start + name.len();
        let before_ok = start == 0 || !(ident(bytes[start - 1]) || bytes[start - 1] == b'.');
        let after_ok = end >= bytes.len() || !ident(bytes[end]);
        if before_ok && after_ok {
            return true;
        }
        from = start + 1;
        if from >= sig.len() {
            break;
        }
        while !sig.is_char_boundary(from) {
            from += 1;
        }
    }
    false
}

/// The most characters of a summary.
const SUMMARY_CHARS: usize = 600;

/// The lead of a section: its first paragraph, or the first item when it opens with a
/// list, capped at a sentence end.
fn lead(md: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
            if !out.is_empty() {
                break;
            }
            continue;
        }
        if in_code || t.starts_with('#') || t.is_empty() {
            if !out.is_empty() {
                break;
            }
            continue;
        }
        let bullet = t.starts_with("- ") || t.starts_with("* ");
        if bullet && !out.is_empty() {
            break;
        }
        out.push(t.trim_start_matches("- ").trim_start_matches("* "));
    }
    cap(&out.join(" "), SUMMARY_CHARS)
}

/// The first paragraph of a Performance section and, when it introduces them with a
/// colon, the table or list that follows (at most 12 lines).
fn measured(md: &str) -> String {
    let mut lines = md.lines().map(str::trim_end).peekable();
    let mut para: Vec<&str> = Vec::new();
    for line in lines.by_ref() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            if para.is_empty() {
                continue;
            }
            break;
        }
        para.push(t);
    }
    let mut out = cap(&para.join(" "), SUMMARY_CHARS);
    if out.ends_with(':') {
        while lines.peek().is_some_and(|l| l.trim().is_empty()) {
            lines.next();
        }
        let block: Vec<&str> = lines
            .take_while(|l| !l.trim().is_empty())
            .take(12)
            .collect();
        if !block.is_empty() {
            out.push_str("\n\n");
            out.push_str(&block.join("\n"));
        }
    }
    out
}

/// `text` cut to at most `max` characters, at the last sentence end when there is one.
fn cap(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    match cut.rfind(". ") {
        Some(i) if i > max / 3 => cut[..=i].to_string(),
        _ => format!("{}…", cut.trim_end()),
    }
}
