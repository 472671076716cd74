//! The adapter: the one module of `ktui` that calls `kernaut_ide`.
//!
//! Everything a screen shows is computed by `kernaut-ide` (the wiki and its index, hover,
//! diagnostics, occupancy and bank reports) and handed to the rest of the UI as the plain
//! structs below, so the screens, the key handling and the subcommands never name an `ide`
//! type. When `ide`'s API changes (files named by a `FileId`, queries returning
//! `Cancellable<T>`), this file is the one to change.
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{mpsc, Arc};

use kernaut_ide::gpu::arch::{Arch, ComputeCapability};
use kernaut_ide::gpu::occupancy::{occupancy_curve, CurveAxis};
use kernaut_ide::index::SearchOptions;
use kernaut_ide::reports::{BlockSource, RegsSource};
use kernaut_ide::rules::{apply_edits, TextEdit};
use kernaut_ide::wiki::{PageKind, WikiConfig};
use kernaut_ide::{Analysis, AnalysisConfig, AnalysisHost, HoverKind, HoverResult, Knowledge};

/// Where the wiki comes from: the built-in pages, extra folders, or both.
#[derive(Clone, Debug, Default)]
pub struct WikiSource {
    /// Extra KernelWiki folders, loaded over the built-in pages.
    pub dirs: Vec<PathBuf>,
    /// Leave the built-in pages out.
    pub no_builtin: bool,
}

/// The wiki and its search index, loaded once.
#[derive(Clone)]
pub struct Library {
    k: Arc<Knowledge>,
}

/// One page as the navigator lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NavEntry {
    /// The page id.
    pub id: String,
    /// The title.
    pub title: String,
    /// `skill`, `pitfall`, `api` or `skill-card`.
    pub kind: String,
    /// The first folder of the page's path (`api`, `pitfalls`, ...).
    pub folder: String,
    /// Frontmatter tags.
    pub tags: Vec<String>,
    /// The minimum architecture as the page writes it (`>=9.0`).
    pub requires_sm: Option<String>,
}

/// A page to read: the header facts and the Markdown body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageDoc {
    /// The page id.
    pub id: String,
    /// The title.
    pub title: String,
    /// The kind.
    pub kind: String,
    /// Compact header facts, (label, value): evidence, measured on, requires, tags.
    pub facts: Vec<(String, String)>,
    /// The Markdown body (for an api page, its header and signatures come first).
    pub body: String,
    /// The anchor asked for, if any.
    pub anchor: Option<String>,
    /// The page's sections: (anchor, title).
    pub sections: Vec<(String, String)>,
}

/// A search query with its filters taken out: `kind:pitfall tag:tma sm:80 words`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    /// The words to search for.
    pub text: String,
    /// `kind:` filter.
    pub kind: Option<String>,
    /// `tag:` filters (all must match, by prefix).
    pub tags: Vec<String>,
    /// `sm:` filter: pages that apply on this architecture.
    pub sm: Option<String>,
}

impl Query {
    /// Splits the filters off the words.
    pub fn parse(input: &str) -> Query {
        let mut q = Query::default();
        let mut words = Vec::new();
        for w in input.split_whitespace() {
            if let Some(v) = w.strip_prefix("kind:") {
                q.kind = Some(v.to_string());
            } else if let Some(v) = w.strip_prefix("tag:") {
                q.tags.push(v.to_ascii_lowercase());
            } else if let Some(v) = w.strip_prefix("sm:") {
                q.sm = Some(v.to_string());
            } else {
                words.push(w);
            }
        }
        q.text = words.join(" ");
        q
    }

    /// Whether any filter is set.
    pub fn has_filters(&self) -> bool {
        self.kind.is_some() || !self.tags.is_empty() || self.sm.is_some()
    }
}

/// One search hit.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// `id#anchor` or `id`: what Enter opens.
    pub target: String,
    /// The page or section title.
    pub title: String,
    /// The kind.
    pub kind: String,
    /// The snippet, matched words between `**`.
    pub snippet: String,
}

/// An architecture name (`sm_90`, `9.0`, `90`), if it is one.
fn parse_arch(text: &str) -> Option<Arch> {
    Arch::parse(text).ok()
}

/// An architecture as typed, with the product it was named by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchChoice {
    arch: Arch,
    /// The product name it came from (`H200`), upper-cased, if it was one.
    pub product: Option<&'static str>,
}

impl ArchChoice {
    /// Parses `sm_90`, `9.0`, `90`, or a product name (`H200`, `h100`, `A100`, `4090`,
    /// `RTX 4090`): the table is `kernaut-gpu`'s, as everywhere an architecture is read.
    pub fn parse(text: &str) -> Result<ArchChoice, String> {
        let arch = Arch::parse(text).map_err(|e| e.to_string())?;
        Ok(ArchChoice {
            arch,
            product: kernaut_ide::gpu::target::product_name(text),
        })
    }

    /// The architecture itself.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The canonical name, `sm_90`.
    pub fn name(&self) -> String {
        self.arch.to_string()
    }

    /// How to show the choice: `sm_90 (H200)` or `sm_90`.
    pub fn describe(&self) -> String {
        match self.product {
            Some(p) => format!("{} ({})", self.arch, p.to_ascii_uppercase()),
            None => self.arch.to_string(),
        }
    }

    /// The next architecture in the table (wrapping), for the occupancy calculator.
    pub fn next(&self, step: i32) -> ArchChoice {
        let all = ComputeCapability::ALL;
        let i = all.iter().position(|c| *c == self.arch.cc).unwrap_or(0) as i32;
        let n = all.len() as i32;
        let j = (i + step).rem_euclid(n) as usize;
        ArchChoice {
            arch: Arch::new(all[j]),
            product: None,
        }
    }
}

impl Default for ArchChoice {
    fn default() -> Self {
        ArchChoice {
            arch: AnalysisConfig::default().arch,
            product: None,
        }
    }
}

/// A byte count as people type it: `49152`, `48K`, `48KB`, `48KiB`, `1.5K`, `1M`.
/// KB and K are 1024 bytes, as CUDA's documentation counts shared memory.
pub fn parse_bytes(text: &str) -> Result<u32, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let mult: f64 = match unit.as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "`{text}` is not a byte count (try 49152, 48K, 48KB or 48KiB)"
            ))
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a byte count (try 49152, 48K, 48KB or 48KiB)"))?;
    let bytes = (v * mult).round();
    if !(0.0..=u32::MAX as f64).contains(&bytes) {
        return Err(format!("`{text}` is too large"));
    }
    Ok(bytes as u32)
}

/// The closest of `candidates` to `word` by edit distance, if close enough to suggest.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        let score = strsim::jaro_winkler(&w, &c.to_ascii_lowercase());
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, c));
        }
    }
    best.filter(|(s, _)| *s >= 0.85).map(|(_, c)| c)
}

fn kind_name(k: PageKind) -> String {
    k.as_str().to_string()
}

/// Whether a page that needs `requires` (`>=9.0`, `9.0`, `sm_90`) runs on `arch`.
fn applies_on(requires: Option<&str>, arch: &Arch) -> bool {
    let Some(r) = requires else {
        return true;
    };
    let r = r.trim().trim_start_matches(">=").trim();
    match Arch::parse(r) {
        Ok(need) => arch.at_least(need.cc.major(), need.cc.minor()),
        Err(_) => true,
    }
}

impl Library {
    /// Loads the wiki and builds its index.
    pub fn load(source: &WikiSource) -> anyhow::Result<Library> {
        let config = WikiConfig {
            no_builtin: source.no_builtin,
            dirs: source.dirs.clone(),
        }
        .with_env_paths(std::env::var_os("KERNAUT_WIKI").as_deref());
        let k = Knowledge::load(&config)?;
        Ok(Library { k: Arc::new(k) })
    }

    /// The built-in wiki alone.
    pub fn builtin() -> anyhow::Result<Library> {
        let k = Knowledge::load(&WikiConfig::builtin())?;
        Ok(Library { k: Arc::new(k) })
    }

    /// Every page, in the wiki's order.
    pub fn entries(&self) -> Vec<NavEntry> {
        self.k
            .wiki
            .pages()
            .iter()
            .map(|p| NavEntry {
                id: p.id.clone(),
                title: p.title.clone(),
                kind: kind_name(p.kind),
                folder: p
                    .path
                    .trim_start_matches("builtin:")
                    .trim_start_matches("wiki/pages/")
                    .split('/')
                    .next()
                    .filter(|f| !f.ends_with(".md"))
                    .unwrap_or("(top)")
                    .to_string(),
                tags: p.frontmatter.tags.clone(),
                requires_sm: p.frontmatter.requires_sm.clone(),
            })
            .collect()
    }

    /// Whether an entry passes the `kind:`, `tag:` and `sm:` filters of a query.
    pub fn passes(&self, e: &NavEntry, q: &Query) -> bool {
        if let Some(k) = &q.kind {
            if PageKind::parse(k).map(kind_name).as_deref() != Some(e.kind.as_str()) {
                return false;
            }
        }
        for t in &q.tags {
            if !e
                .tags
                .iter()
                .any(|x| x.to_ascii_lowercase().starts_with(t.as_str()))
            {
                return false;
            }
        }
        if let Some(sm) = &q.sm {
            if let Some(arch) = parse_arch(sm) {
                if !applies_on(e.requires_sm.as_deref(), &arch) {
                    return false;
                }
            }
        }
        true
    }

    /// Whether `link` (`id`, `id#anchor`, a short skill name, a symbol the wiki
    /// documents) names a page.
    pub fn resolves(&self, link: &str) -> bool {
        let link = link.trim();
        !link.is_empty()
            && !link.contains(' ')
            && (self.k.resolve(link).is_some() || self.symbol_page(link).is_some())
    }

    /// The page `link` names, opened at its anchor.
    pub fn page(&self, link: &str) -> Option<PageDoc> {
        let link = link.trim();
        let by_symbol;
        let (page, anchor) = match self.k.resolve(link) {
            Some(found) => found,
            None => {
                // A symbol as written in code opens the page that documents it.
                by_symbol = self.symbol_page(link)?;
                (self.k.wiki.page(&by_symbol)?, None)
            }
        };
        let fm = &page.frontmatter;
        let mut facts = Vec::new();
        facts.push(("kind".to_string(), kind_name(page.kind)));
        if let Some(e) = &fm.evidence_level {
            facts.push(("evidence".to_string(), e.clone()));
        }
        if let Some(m) = &fm.measured_on {
            facts.push(("measured on".to_string(), m.clone()));
        }
        if let Some(r) = &fm.requires_sm {
            facts.push(("requires sm".to_string(), r.clone()));
        }
        if !fm.tags.is_empty() {
            facts.push(("tags".to_string(), fm.tags.join(", ")));
        }
        let mut body = String::new();
        if let Some(api) = &page.api {
            if let Some(h) = &api.header {
                body.push_str(&format!("**header:** `{h}`\n\n"));
            }
            if !api.signatures.is_empty() {
                body.push_str("```cuda\n");
                for s in &api.signatures {
                    body.push_str(s);
                    body.push('\n');
                }
                body.push_str("```\n\n");
            }
        }
        body.push_str(&page.body);
        if !fm.related_skills.is_empty() || !fm.related_apis.is_empty() {
            body.push_str("\n\n## Related\n\n");
            for s in &fm.related_skills {
                body.push_str(&format!("- `{s}`\n"));
            }
            for a in &fm.related_apis {
                body.push_str(&format!("- `{a}`\n"));
            }
        }
        Some(PageDoc {
            id: page.id.clone(),
            title: page.title.clone(),
            kind: kind_name(page.kind),
            facts,
            body,
            anchor: anchor
                .filter(|a| page.section(a).is_some())
                .map(str::to_string),
            sections: page
                .sections
                .iter()
                .map(|s| (s.anchor.clone(), s.title.clone()))
                .collect(),
        })
    }

    /// The symbol table's page for a name as written in code (`__syncthreads`).
    pub fn symbol_page(&self, name: &str) -> Option<String> {
        let m = self.k.symbol(name)?;
        m.api.or_else(|| m.related_pages.first().cloned())
    }

    /// Ranked hits for a query, filters applied.
    pub fn search(&self, q: &Query, limit: usize) -> Vec<SearchHit> {
        if q.text.trim().is_empty() {
            return Vec::new();
        }
        let kind = q.kind.as_deref().and_then(PageKind::parse);
        let want = if q.tags.is_empty() && q.sm.is_none() {
            limit
        } else {
            limit * 4
        };
        let hits = self.k.search(&q.text, &SearchOptions { limit: want, kind });
        let entries: BTreeMap<String, NavEntry> = if q.has_filters() {
            self.entries()
                .into_iter()
                .map(|e| (e.id.clone(), e))
                .collect()
        } else {
            BTreeMap::new()
        };
        hits.into_iter()
            .filter(|h| !q.has_filters() || entries.get(&h.id).is_some_and(|e| self.passes(e, q)))
            .take(limit)
            .map(|h| SearchHit {
                target: h.target(),
                title: h.title.clone(),
                kind: kind_name(h.kind),
                snippet: h.snippet.clone(),
            })
            .collect()
    }

    /// Page ids and symbol names close to `word`, for "did you mean".
    pub fn suggest(&self, word: &str) -> Option<String> {
        suggest(&self.k, word)
    }
}

/// The page id or symbol name closest to `word` (`pitfal-bank-conflict`,
/// `__syncthread`), for "did you mean"; an anchor is kept.
pub fn suggest(k: &Knowledge, word: &str) -> Option<String> {
    {
        let ids: Vec<&str> = k.wiki.pages().iter().map(|p| p.id.as_str()).collect();
        let symbols = k.index.symbols().symbols();
        let (id, anchor) = match word.split_once('#') {
            Some((i, a)) => (i, Some(a)),
            None => (word, None),
        };
        let hit = closest(id, ids.iter().copied().chain(symbols.iter().copied()))?;
        Some(match anchor {
            Some(a) => format!("{hit}#{a}"),
            None => hit.to_string(),
        })
    }
}

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// A suggestion.
    Hint,
    /// Likely slow or wrong.
    Warning,
    /// Wrong.
    Error,
}

/// One line of a fix's diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    /// Unchanged context.
    Same(String),
    /// Removed.
    Removed(String),
    /// Added.
    Added(String),
}

/// A rule diagnostic, with the wiki text it cites and its first fix as a diff.
#[derive(Clone, Debug, PartialEq)]
pub struct Diag {
    /// The byte range it covers.
    pub range: std::ops::Range<usize>,
    /// 0-based line of its start.
    pub line: usize,
    /// How bad.
    pub level: Level,
    /// The rule id.
    pub rule: String,
    /// The message.
    pub message: String,
    /// The wiki anchor it cites (`pitfall-bank-conflict#P1`).
    pub wiki: String,
    /// The first paragraph of the cited section.
    pub wiki_text: Option<String>,
    /// The first fix: its title and diff.
    pub fix: Option<(String, Vec<DiffLine>)>,
    /// The first fix's edits: (byte range, new text).
    pub edits: Vec<(std::ops::Range<usize>, String)>,
}

/// The occupancy calculator's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OccInputs {
    /// The architecture.
    pub arch: ArchChoice,
    /// Threads per block.
    pub threads: u32,
    /// Registers per thread.
    pub regs: u32,
    /// Static shared memory, bytes.
    pub static_smem: u32,
    /// Dynamic shared memory, bytes.
    pub dyn_smem: u32,
    /// `__launch_bounds__` maximum, if the kernel has one.
    pub launch_bounds: Option<u32>,
}

/// The calculator's outputs for one input.
#[derive(Clone, Debug, PartialEq)]
pub struct OccOutputs {
    /// Blocks per SM.
    pub blocks_per_sm: u32,
    /// Active warps per SM.
    pub active_warps: u32,
    /// Warp slots per SM.
    pub max_warps: u32,
    /// 0 to 1.
    pub occupancy: f64,
    /// The binding resources, by name.
    pub limiters: Vec<String>,
}

/// The three curves: (x, occupancy in percent) points.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct OccCurves {
    /// Against threads per block.
    pub threads: Vec<(f64, f64)>,
    /// Against registers per thread.
    pub regs: Vec<(f64, f64)>,
    /// Against shared memory per block, in KiB.
    pub smem: Vec<(f64, f64)>,
}

/// Occupancy for some inputs: outputs (or why none) and the curves.
#[derive(Clone, Debug, PartialEq)]
pub struct OccView {
    /// The inputs.
    pub inputs: OccInputs,
    /// The outputs, or the model's reason for rejecting the inputs.
    pub result: Result<OccOutputs, String>,
    /// The curves.
    pub curves: OccCurves,
}

/// The calculator for one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelPanel {
    /// The kernel.
    pub name: String,
    /// The inputs found in the code.
    pub found: OccInputs,
    /// Where the block and register count came from, in words.
    pub sources: Vec<String>,
    /// The analysis' caveats.
    pub notes: Vec<String>,
    /// Whether the register count is assumed (not from ptxas or `__launch_bounds__`), as
    /// the hover marks it.
    pub regs_assumed: bool,
    /// The model's report, which the what-if starts from.
    report: kernaut_ide::reports::OccupancyReport,
}

/// One warp's bank picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankMap {
    /// The bank each lane's first word falls in (`None`: inactive or unknown).
    pub lane_bank: [Option<u8>; 32],
    /// Lanes that share a bank with another word in their lane group.
    pub conflicting: u32,
    /// The conflict degree (1 is conflict-free).
    pub degree: u32,
    /// Wavefronts.
    pub wavefronts: u32,
}

/// The bank panel: the map of an access, and the padded one where a fix exists.
#[derive(Clone, Debug, PartialEq)]
pub struct BankPanel {
    /// The array accessed.
    pub array: String,
    /// The byte offset as evaluated.
    pub lowered: Option<String>,
    /// The map, or why the access cannot be modelled.
    pub map: Result<BankMap, String>,
    /// The access' byte range.
    pub range: std::ops::Range<usize>,
    /// The bank-conflict rule's padding fix for this access, by title, if it has one.
    pub padding: Option<String>,
    /// The fix's title and the map after it, once asked for ([`Workspace::padded_map`]).
    pub padded: Option<(String, Result<BankMap, String>)>,
}

/// What the side panel shows for the symbol under the cursor.
#[derive(Clone, Debug, PartialEq)]
pub enum Panel {
    /// An intrinsic, API or PTX mnemonic: its wiki entry.
    Symbol {
        /// The symbol.
        symbol: String,
        /// Its page, if any.
        page: Option<String>,
        /// The hover's Markdown (signature, header, minimum architecture, pitfalls).
        markdown: String,
    },
    /// A kernel: the occupancy calculator.
    Kernel(KernelPanel),
    /// A shared-memory access: the bank map.
    Bank(BankPanel),
    /// A diagnostic on this line.
    Diagnostic(Diag),
    /// The kernel report: its what-ifs as a list to apply, then the whole report.
    Report(ReportPanel),
    /// The barrier intervals of the kernel around the cursor.
    Intervals(IntervalsPanel),
    /// Anything else the hover says (a shared declaration, a constant, a device function).
    Note {
        /// A title.
        title: String,
        /// The hover's Markdown.
        markdown: String,
    },
}

/// One what-if of a kernel report: a quick fix applied in a scratch copy and the
/// report's figures after it.
#[derive(Clone, Debug, PartialEq)]
pub struct WhatIfItem {
    /// The fix's title.
    pub title: String,
    /// The rule whose finding it fixes.
    pub rule: String,
    /// The 1-based line of the finding.
    pub line: u32,
    /// What changes, in one line.
    pub summary: String,
    /// The edits (empty: the report describes the change, the user makes it).
    pub edits: Vec<(std::ops::Range<usize>, String)>,
}

/// The kernel report panel.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportPanel {
    /// The kernel.
    pub kernel: String,
    /// The report's Markdown without its what-if section (the panel lists them).
    pub markdown: String,
    /// The what-ifs.
    pub what_ifs: Vec<WhatIfItem>,
}

/// One access of a barrier interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntervalAccess {
    /// 1-based line.
    pub line: u32,
    /// The access as written.
    pub text: String,
    /// `reads`, `writes`, `updates`.
    pub op: String,
    /// `shared` or `global`.
    pub space: String,
    /// The races with another access of the interval, in words.
    pub conflicts: Vec<String>,
}

/// One barrier interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntervalView {
    /// What opens it: `kernel entry`, `__syncthreads() (line 9)`.
    pub opens: String,
    /// What can close it.
    pub closes: Vec<String>,
    /// The 1-based lines it covers, as the lines of its accesses (first, last).
    pub lines: Option<(u32, u32)>,
    /// Its accesses.
    pub accesses: Vec<IntervalAccess>,
    /// Warp barriers inside it, named.
    pub warp_barriers: Vec<String>,
}

/// The barrier intervals panel of one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntervalsPanel {
    /// The kernel.
    pub kernel: String,
    /// The barriers, named with their scope and line.
    pub barriers: Vec<String>,
    /// The intervals.
    pub intervals: Vec<IntervalView>,
    /// Whether a launch fixes the block (without one, the race model does not run).
    pub launched: bool,
}

/// An analysed source file.
pub struct Workspace {
    lib: Library,
    host: AnalysisHost,
    path: String,
    text: String,
    line_starts: Vec<usize>,
    diags: Vec<Diag>,
    pending: Option<mpsc::Receiver<Vec<Diag>>>,
    /// The background compile (register counts and SASS), when a CUDA toolkit is found.
    compiling: Option<mpsc::Receiver<Compiled>>,
    /// Each kernel's SASS by base name, with its architecture.
    sass: Vec<(String, String, String)>,
    arch: ArchChoice,
    /// The file's targets and where they came from (the project loader's answer).
    targets: kernaut_ide::config::TargetSet,
    /// The flags a background compile uses (the loader's, from the compile database).
    flags: kernaut_compiler::CompileFlags,
    /// When the file and its `.kernaut.toml` were last read, to reload on a change.
    stamps: Vec<(std::path::PathBuf, Option<std::time::SystemTime>)>,
    /// Whether the rules run on a worker thread ([`Workspace::open_in_background`]).
    background: bool,
    /// Whether the text is the file's with fixes applied or undone here.
    edited: bool,
    /// Each kernel's barrier intervals, computed when first shown.
    intervals: std::cell::RefCell<BTreeMap<String, Option<IntervalsPanel>>>,
}

/// The rules' diagnostics of the file `path` in `analysis`, with the wiki text each
/// cites and its first fix as a diff. A free function over owned data so that it can run
/// on a worker thread ([`Workspace::open_in_background`]).
fn diagnostics_of(
    analysis: &Analysis,
    lib: &Library,
    path: &str,
    text: &str,
    line_starts: &[usize],
) -> Vec<Diag> {
    let found = analysis
        .file_id(path)
        .and_then(|id| analysis.diagnostics(id).ok())
        .unwrap_or_default();
    let mut out: Vec<Diag> = found
        .into_iter()
        .map(|d| {
            let wiki_text = lib.k.resolve(&d.wiki).and_then(|(p, a)| {
                let text = match a {
                    Some(a) => p.section(a).map(|s| s.content.clone())?,
                    None => p.body.clone(),
                };
                Some(kernaut_ide::wiki::first_paragraph(&text))
            });
            let fix = d
                .fixes
                .first()
                .map(|f| (f.title.clone(), fix_diff(text, &f.edits)));
            let edits = d
                .fixes
                .first()
                .map(|f| {
                    f.edits
                        .iter()
                        .map(|e| (e.range.clone(), e.new_text.clone()))
                        .collect()
                })
                .unwrap_or_default();
            Diag {
                line: line_of(line_starts, d.range.start),
                range: d.range,
                level: level(d.severity),
                rule: d.rule.to_string(),
                message: d.message,
                wiki: d.wiki,
                wiki_text,
                fix,
                edits,
            }
        })
        .collect();
    out.sort_by_key(|d| (d.range.start, d.range.end));
    out
}

fn line_of(line_starts: &[usize], offset: usize) -> usize {
    line_starts
        .partition_point(|&s| s <= offset)
        .saturating_sub(1)
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(memchr_newlines(text));
    v
}

fn memchr_newlines(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.bytes()
        .enumerate()
        .filter(|(_, b)| *b == b'\n')
        .map(|(i, _)| i + 1)
}

/// The diff a fix makes: the lines its edits touch, before and after, with one line of
/// context each side. Only those lines are copied, so a file with hundreds of fixes
/// opens without copying the whole text for each.
fn fix_diff(text: &str, edits: &[TextEdit]) -> Vec<DiffLine> {
    let (Some(lo), Some(hi)) = (
        edits.iter().map(|e| e.range.start).min(),
        edits.iter().map(|e| e.range.end).max(),
    ) else {
        return Vec::new();
    };
    let hi = hi.min(text.len());
    let lo = lo.min(hi);
    let start = text[..lo].rfind('\n').map_or(0, |p| p + 1);
    let end = text[hi..].find('\n').map_or(text.len(), |p| hi + p);
    let old = &text[start..end];
    let local: Vec<TextEdit> = edits
        .iter()
        .map(|e| {
            TextEdit::replace(
                e.range.start.saturating_sub(start)..e.range.end.min(end).saturating_sub(start),
                e.new_text.clone(),
            )
        })
        .collect();
    let new = apply_edits(old, &local);
    let mut out = Vec::new();
    if start > 0 {
        let prev = text[..start - 1].rsplit('\n').next().unwrap_or("");
        out.push(DiffLine::Same(prev.to_string()));
    }
    out.extend(
        diff(old, &new)
            .into_iter()
            .filter(|d| !matches!(d, DiffLine::Same(_))),
    );
    if end < text.len() {
        let next = text[end + 1..].split('\n').next().unwrap_or("");
        out.push(DiffLine::Same(next.to_string()));
    }
    out
}

/// A line diff of `old` against `new`: the changed lines and one line of context.
fn diff(old: &str, new: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = Vec::new();
    if pre > 0 {
        out.push(DiffLine::Same(a[pre - 1].to_string()));
    }
    for l in &a[pre..a.len() - suf] {
        out.push(DiffLine::Removed(l.to_string()));
    }
    for l in &b[pre..b.len() - suf] {
        out.push(DiffLine::Added(l.to_string()));
    }
    if suf > 0 {
        out.push(DiffLine::Same(a[a.len() - suf].to_string()));
    }
    out
}

fn bank_map(b: &kernaut_ide::reports::BankAnalysis) -> Result<BankMap, String> {
    let r = b.result.as_ref().map_err(Clone::clone)?;
    let mut lane_bank = [None; 32];
    let mut words = [None; 32];
    for (i, a) in b.addresses.iter().take(32).enumerate() {
        if let Some(a) = a.filter(|a| *a >= 0) {
            let w = (a / 4) as u32;
            words[i] = Some(w);
            lane_bank[i] = Some((w % 32) as u8);
        }
    }
    let group = r.lanes_per_group.clamp(1, 32) as usize;
    let mut conflicting = 0u32;
    for g in (0..32).step_by(group) {
        for i in g..g + group {
            let (Some(bi), Some(wi)) = (lane_bank[i], words[i]) else {
                continue;
            };
            if (g..g + group).any(|j| lane_bank[j] == Some(bi) && words[j].is_some_and(|w| w != wi))
            {
                conflicting |= 1 << i;
            }
        }
    }
    Ok(BankMap {
        lane_bank,
        conflicting,
        degree: r.conflict_degree,
        wavefronts: r.wavefronts,
    })
}

fn level(s: kernaut_ide::config::Severity) -> Level {
    match s {
        kernaut_ide::config::Severity::Hint => Level::Hint,
        kernaut_ide::config::Severity::Warning => Level::Warning,
        kernaut_ide::config::Severity::Error => Level::Error,
    }
}

impl Workspace {
    /// Analyses `text` as the file at `path` on `arch`.
    pub fn open(
        lib: &Library,
        path: &str,
        text: String,
        arch: impl Into<Option<ArchChoice>>,
    ) -> Workspace {
        let mut ws = Workspace::analysed(lib, path, text, arch);
        ws.diags = diagnostics_of(&ws.host.analysis(), lib, path, &ws.text, &ws.line_starts);
        ws
    }

    /// Like [`Workspace::open`], but the rules run on a worker thread, so the file can
    /// be shown before its diagnostics arrive ([`Workspace::poll`] installs them).
    pub fn open_in_background(
        lib: &Library,
        path: &str,
        text: String,
        arch: impl Into<Option<ArchChoice>>,
    ) -> Workspace {
        let mut ws = Workspace::analysed(lib, path, text, arch);
        ws.background = true;
        let (tx, rx) = mpsc::channel();
        let analysis = ws.host.analysis();
        let (lib, path, text, starts) = (
            lib.clone(),
            path.to_string(),
            ws.text.clone(),
            ws.line_starts.clone(),
        );
        std::thread::spawn(move || {
            let _ = tx.send(diagnostics_of(&analysis, &lib, &path, &text, &starts));
        });
        ws.pending = Some(rx);
        // With a CUDA toolkit, the file is compiled on a third thread: the occupancy
        // panel then uses ptxas' register count and a kernel's panels include its SASS.
        let (ctx, crx) = mpsc::channel();
        let (path, text, flags) = (ws.path.clone(), ws.text.clone(), ws.flags.clone());
        std::thread::spawn(move || {
            if let Some(c) = compile(&path, &text, flags) {
                let _ = ctx.send(c);
            }
        });
        ws.compiling = Some(crx);
        ws
    }

    /// Installs diagnostics and compiler facts computed in the background; true when
    /// something arrived now.
    pub fn poll(&mut self) -> bool {
        let compiled = self.poll_compile();
        let Some(rx) = &self.pending else {
            return compiled;
        };
        match rx.try_recv() {
            Ok(d) => {
                self.diags = d;
                self.pending = None;
                true
            }
            Err(mpsc::TryRecvError::Empty) => false,
            Err(mpsc::TryRecvError::Disconnected) => {
                self.pending = None;
                true
            }
        }
    }

    /// Whether the rules are still running.
    pub fn diagnostics_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Installs the background compile's results, if they arrived.
    fn poll_compile(&mut self) -> bool {
        let Some(rx) = &self.compiling else {
            return false;
        };
        match rx.try_recv() {
            Ok(c) => {
                self.compiling = None;
                let mut change = kernaut_ide::Change::new();
                let id = self.host.file_id(&self.path);
                change.set_compiled(id, Some(c.facts));
                self.host.apply_change(change);
                self.sass = c.sass;
                // The compile changes what the rules say (spills): they run again.
                let (tx, rx) = mpsc::channel();
                let analysis = self.host.analysis();
                let (lib, path, text, starts) = (
                    self.lib.clone(),
                    self.path.clone(),
                    self.text.clone(),
                    self.line_starts.clone(),
                );
                std::thread::spawn(move || {
                    let _ = tx.send(diagnostics_of(&analysis, &lib, &path, &text, &starts));
                });
                self.pending = Some(rx);
                true
            }
            Err(mpsc::TryRecvError::Empty) => false,
            Err(mpsc::TryRecvError::Disconnected) => {
                self.compiling = None;
                false
            }
        }
    }

    fn analysed(
        lib: &Library,
        path: &str,
        text: String,
        arch: impl Into<Option<ArchChoice>>,
    ) -> Workspace {
        let arch: Option<ArchChoice> = arch.into();
        let mut config = AnalysisConfig::default();
        if let Some(a) = arch {
            config.choose_targets(vec![kernaut_ide::gpu::Target::of_arch(a.arch)], "--arch");
        }
        let mut host = AnalysisHost::new(config);
        host.set_knowledge(lib.k.clone());
        // The file with its `.kernaut.toml`, its build's targets and macros, and its
        // headers: the project loader, as the editor and `check` load it.
        let mut loader = kernaut_project::ProjectLoader::new(None);
        // Where no `.git` bounds the project, the folder the command runs in does (as
        // `check .` there reads it).
        loader.add_scan_roots(&[std::path::PathBuf::from(".")]);
        let disk = std::path::Path::new(path);
        let id = match loader.load_text(&mut host, path, disk, &text) {
            Ok(id) => id,
            Err(_) => host.set_file(path, &text),
        };
        let fc = host.analysis().file_config(id);
        let arch = arch.unwrap_or(ArchChoice {
            arch: fc.arch,
            product: None,
        });
        let flags = loader.compile_flags(disk, &fc.arch.to_string());
        let line_starts = line_starts(&text);
        Workspace {
            lib: lib.clone(),
            host,
            path: path.to_string(),
            text,
            line_starts,
            diags: Vec::new(),
            pending: None,
            compiling: None,
            sass: Vec::new(),
            arch,
            targets: fc.targets,
            flags,
            stamps: stamps(path),
            background: false,
            edited: false,
            intervals: std::cell::RefCell::new(BTreeMap::new()),
        }
    }

    /// The file's targets and where they came from: `sm_80, sm_90a (from
    /// CMakeLists.txt:3)`, `sm_90 (assumed)`.
    pub fn targets(&self) -> &kernaut_ide::config::TargetSet {
        &self.targets
    }

    /// The title's target: the `--arch` choice as typed (`sm_90 (H200)`), else the
    /// project's targets and their source.
    pub fn target_title(&self) -> String {
        if self.targets.origin == "--arch" {
            self.arch.describe()
        } else {
            self.targets.describe()
        }
    }

    /// Whether the file or a `.kernaut.toml` above it changed on disk since it was read.
    pub fn changed_on_disk(&self) -> bool {
        stamps(&self.path) != self.stamps
    }

    /// The file read again from disk (the same decoder as `check`), with the same
    /// `--arch` choice; `None` when it cannot be read or is binary.
    pub fn reloaded(&self, explicit_arch: Option<ArchChoice>) -> Option<Workspace> {
        let bytes = std::fs::read(&self.path).ok()?;
        if kernaut_ide::source_text::is_binary(&bytes) {
            return None;
        }
        let text = kernaut_ide::source_text::decode(bytes).text;
        Some(Workspace::open_in_background(
            &self.lib,
            &self.path,
            text,
            explicit_arch,
        ))
    }

    /// The same file analysed with `text` in place of its contents (a fix applied, or
    /// undone), in memory: nothing is written until [`Workspace::save`].
    pub fn with_text(&self, text: String, explicit_arch: Option<ArchChoice>) -> Workspace {
        let mut ws = if self.background {
            Workspace::open_in_background(&self.lib, &self.path, text, explicit_arch)
        } else {
            Workspace::open(&self.lib, &self.path, text, explicit_arch)
        };
        // The file on disk is as it was: a change there is still a change.
        ws.stamps = self.stamps.clone();
        ws.edited = true;
        ws
    }

    /// Writes the text to the file, which then counts as read.
    pub fn save(&mut self) -> std::io::Result<()> {
        std::fs::write(&self.path, &self.text)?;
        self.stamps = stamps(&self.path);
        Ok(())
    }

    /// The file's path as given.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The architecture analysed for.
    pub fn arch(&self) -> ArchChoice {
        self.arch
    }

    /// Number of lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The text of a 0-based line, without its newline.
    pub fn line(&self, i: usize) -> &str {
        let Some(&s) = self.line_starts.get(i) else {
            return "";
        };
        let e = self
            .line_starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.text.len());
        self.text[s..e].trim_end_matches(['\n', '\r'])
    }

    /// The 0-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        line_of(&self.line_starts, offset)
    }

    /// The byte offset of a 0-based line and character column.
    pub fn offset(&self, line: usize, col: usize) -> usize {
        let s = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len());
        let body = self.line(line);
        s + body.chars().take(col).map(char::len_utf8).sum::<usize>()
    }

    /// The diagnostics, by position.
    pub fn diagnostics(&self) -> &[Diag] {
        &self.diags
    }

    /// What the side panel can show at a byte offset: the hover's panel first, then
    /// the diagnostics on that line.
    pub fn panels_at(&self, offset: usize) -> Vec<Panel> {
        let analysis = self.host.analysis();
        let mut out = Vec::new();
        let hover = analysis
            .file_id(&self.path)
            .and_then(|id| analysis.hover(id, offset).ok().flatten());
        if let Some(h) = hover {
            out.push(self.panel_of(&h));
            if h.kind == HoverKind::Kernel {
                let short = h.symbol.rsplit("::").next().unwrap_or(&h.symbol);
                for (name, arch, text) in self.sass.iter().filter(|(n, _, _)| n == short) {
                    out.push(Panel::Note {
                        title: format!("SASS of {name} ({arch})"),
                        markdown: format!("```\n{text}\n```\n"),
                    });
                }
                // The kernel report, when the model costs a finding of the kernel (the
                // hover lists the same top costs).
                let report = analysis.file_id(&self.path).and_then(|id| {
                    let config = kernaut_ide::kernel_report::ReportConfig { what_ifs: true };
                    analysis.kernel_report(id, &h.symbol, config).ok().flatten()
                });
                // After a fix applied here, the report stays, with the figures after it.
                if let Some(r) = report.filter(|r| self.edited || !r.top_costs(1).is_empty()) {
                    out.push(Panel::Report(report_panel(&r)));
                }
            }
        }
        let intervals = self.intervals_at(offset);
        let line = self.line_of(offset);
        let start = self.line_starts.get(line).copied().unwrap_or(0);
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |s| s.saturating_sub(1));
        for d in &self.diags {
            if kernaut_ide::hover::finding_on_line(&d.range, start..end)
                || d.range.contains(&offset)
            {
                out.push(Panel::Diagnostic(d.clone()));
            }
        }
        if let Some(p) = intervals {
            out.push(Panel::Intervals(p));
        }
        out
    }

    /// The barrier intervals of the kernel whose definition holds `offset`, when it has
    /// accesses the race model follows.
    fn intervals_at(&self, offset: usize) -> Option<IntervalsPanel> {
        let analysis = self.host.analysis();
        let id = analysis.file_id(&self.path)?;
        let kernel = analysis.kernel_at(id, offset).ok().flatten()?;
        if let Some(p) = self.intervals.borrow().get(&kernel) {
            return p.clone();
        }
        let p = analysis
            .barrier_intervals(id, &kernel)
            .ok()
            .flatten()
            .filter(|b| b.intervals.iter().any(|i| !i.accesses.is_empty()))
            .map(|b| intervals_panel(&b));
        self.intervals.borrow_mut().insert(kernel, p.clone());
        p
    }

    fn panel_of(&self, h: &HoverResult) -> Panel {
        match h.kind {
            HoverKind::Kernel => match &h.occupancy {
                Some(o) => {
                    let mut sources = Vec::new();
                    sources.push(match &o.block_source {
                        BlockSource::Launch { line, .. } => {
                            format!("block from the launch on line {line}")
                        }
                        BlockSource::LaunchBounds => "block from __launch_bounds__".to_string(),
                        BlockSource::Default => "block: no launch seen, default".to_string(),
                    });
                    // The same source names as the hover and `ktui explain --json`.
                    sources.push(match o.regs_source {
                        RegsSource::LaunchBounds { .. } => {
                            "registers: __launch_bounds__ limit".to_string()
                        }
                        RegsSource::Default | RegsSource::Project | RegsSource::Comment => {
                            format!(
                                "registers: from {} (assumed until ptxas reports)",
                                o.regs_source.label()
                            )
                        }
                        RegsSource::Compiler => "registers: as ptxas reported".to_string(),
                    });
                    // The model's own input, as the hover and the lens show it.
                    let input = &o.input;
                    Panel::Kernel(KernelPanel {
                        name: o.kernel.clone(),
                        found: OccInputs {
                            arch: ArchChoice {
                                arch: o.arch,
                                product: (o.arch == self.arch.arch)
                                    .then_some(self.arch.product)
                                    .flatten(),
                            },
                            threads: input.threads_per_block,
                            regs: input.regs_per_thread,
                            static_smem: input.static_smem,
                            dyn_smem: input.dynamic_smem,
                            launch_bounds: input.launch_bounds_max_threads,
                        },
                        sources,
                        regs_assumed: matches!(
                            o.regs_source,
                            RegsSource::Default | RegsSource::Project | RegsSource::Comment
                        ),
                        notes: o.notes.clone(),
                        report: o.clone(),
                    })
                }
                None => Panel::Note {
                    title: format!("kernel {}", h.symbol),
                    markdown: h.markdown.clone(),
                },
            },
            HoverKind::SharedAccess => match &h.bank {
                Some(b) => Panel::Bank(BankPanel {
                    array: b.access.array.clone(),
                    lowered: b.lowered.clone(),
                    map: bank_map(b),
                    range: b.access.range.clone(),
                    padding: self
                        .padding_fix(&b.access.range)
                        .and_then(|d| d.fix.as_ref())
                        .map(|(t, _)| t.clone()),
                    padded: None,
                }),
                None => Panel::Note {
                    title: format!("shared access {}", h.symbol),
                    markdown: h.markdown.clone(),
                },
            },
            HoverKind::Symbol => Panel::Symbol {
                symbol: h.symbol.clone(),
                page: h.wiki.as_ref().and_then(|w| w.page.clone()),
                markdown: h.markdown.clone(),
            },
            HoverKind::SharedDeclaration
            | HoverKind::DeviceFunction
            | HoverKind::Constant
            | HoverKind::Finding => Panel::Note {
                title: format!("{} {}", h.kind.as_str().replace('-', " "), h.symbol),
                markdown: h.markdown.clone(),
            },
        }
    }

    /// The bank-conflict diagnostic with a fix for the access at `range`.
    fn padding_fix(&self, range: &std::ops::Range<usize>) -> Option<&Diag> {
        self.diags.iter().find(|d| {
            d.rule == "bank-conflict"
                && !d.edits.is_empty()
                && d.range.start <= range.start
                && range.start < d.range.end
        })
    }

    /// The bank map after the bank-conflict rule's padding fix, for the access at
    /// `range`: the fix is applied to a copy of the file and the copy analysed (so it
    /// costs an analysis of the file, and is computed only when asked for).
    pub fn padded_map(
        &self,
        range: &std::ops::Range<usize>,
    ) -> Option<(String, Result<BankMap, String>)> {
        let d = self.padding_fix(range)?;
        let (title, _) = d.fix.as_ref()?;
        let edits: Vec<TextEdit> = d
            .edits
            .iter()
            .map(|(r, t)| TextEdit::replace(r.clone(), t.clone()))
            .collect();
        let padded = apply_edits(&self.text, &edits);
        let shift: isize = d
            .edits
            .iter()
            .filter(|(r, _)| r.end <= range.start)
            .map(|(r, t)| t.len() as isize - (r.end - r.start) as isize)
            .sum();
        let at = (range.start as isize + shift).max(0) as usize;
        let mut host = AnalysisHost::new(self.host.config().clone());
        host.set_knowledge(self.lib.k.clone());
        let path = format!("{} (padded)", self.path);
        let id = host.set_file(&path, &padded);
        let a = host.analysis();
        let access = a
            .shared_accesses(id)
            .ok()?
            .iter()
            .find(|x| x.range.start == at)?
            .clone();
        let report = a.bank(id, &access).ok()??;
        Some((title.clone(), bank_map(&report)))
    }
}

/// `text` with a fix's edits applied (as `kernaut-lsp check --fix` applies them).
pub fn apply_fix(text: &str, edits: &[(std::ops::Range<usize>, String)]) -> String {
    let edits: Vec<TextEdit> = edits
        .iter()
        .map(|(r, t)| TextEdit::replace(r.clone(), t.clone()))
        .collect();
    apply_edits(text, &edits)
}

/// Where byte `offset` lands after `edits` (an offset inside a replaced range stays at
/// its start).
pub fn shift_offset(offset: usize, edits: &[(std::ops::Range<usize>, String)]) -> usize {
    let mut sorted: Vec<&(std::ops::Range<usize>, String)> = edits.iter().collect();
    sorted.sort_by_key(|(r, _)| r.start);
    let mut delta: isize = 0;
    for (r, t) in sorted {
        if r.end <= offset {
            delta += t.len() as isize - (r.end - r.start) as isize;
        } else if r.start < offset {
            return (r.start as isize + delta).max(0) as usize;
        }
    }
    (offset as isize + delta).max(0) as usize
}

/// The report as the panel shows it: the what-ifs as a list, the rest as Markdown.
fn report_panel(r: &kernaut_ide::kernel_report::KernelReport) -> ReportPanel {
    let md = r.markdown();
    // The what-if section is drawn as a list the user can apply.
    let markdown = match md.find("\n## What if\n") {
        Some(start) => {
            let rest = &md[start + 1..];
            let end = rest[3..]
                .find("\n## ")
                .map_or(md.len(), |e| start + 1 + 3 + e + 1);
            format!("{}{}", &md[..start + 1], &md[end..])
        }
        None => md,
    };
    ReportPanel {
        kernel: r.kernel.clone(),
        markdown,
        what_ifs: r
            .what_ifs
            .iter()
            .map(|w| WhatIfItem {
                title: w.title.clone(),
                rule: w.rule.clone(),
                line: w.line,
                summary: w.summary.clone(),
                edits: w
                    .edits
                    .iter()
                    .map(|e| (e.range.clone(), e.new_text.clone()))
                    .collect(),
            })
            .collect(),
    }
}

fn intervals_panel(b: &kernaut_ide::barrier_intervals::BarrierIntervals) -> IntervalsPanel {
    IntervalsPanel {
        kernel: b.kernel.clone(),
        barriers: b
            .barriers
            .iter()
            .map(|x| format!("line {}: {} ({})", x.line, x.text, x.scope.as_str()))
            .collect(),
        intervals: b
            .intervals
            .iter()
            .map(|i| IntervalView {
                opens: b.edge_name(i.opens),
                closes: i.closes.iter().map(|e| b.edge_name(*e)).collect(),
                lines: i
                    .accesses
                    .iter()
                    .map(|a| a.line)
                    .min()
                    .zip(i.accesses.iter().map(|a| a.line).max()),
                accesses: i
                    .accesses
                    .iter()
                    .map(|a| IntervalAccess {
                        line: a.line,
                        text: a.text.clone(),
                        op: a.op.to_string(),
                        space: a.space.to_string(),
                        conflicts: a.conflicts.clone(),
                    })
                    .collect(),
                warp_barriers: i
                    .warp_barriers
                    .iter()
                    .filter_map(|w| b.barriers.get(*w))
                    .map(|x| format!("{} (line {})", x.text, x.line))
                    .collect(),
            })
            .collect(),
        launched: b.launched,
    }
}

/// The hover at a byte offset of `text`, analysed as the file `path` on `arch`, for
/// `ktui explain` (which prints the hover's own fields as JSON), with the snapshot that
/// names its files.
pub fn hover_at(
    knowledge: Knowledge,
    wiki: WikiConfig,
    arch: impl Into<Option<ArchChoice>>,
    path: &str,
    text: &str,
    offset: usize,
) -> Result<Option<(HoverResult, Analysis)>, kernaut_ide::QueryError> {
    let mut config = AnalysisConfig {
        wiki,
        ..AnalysisConfig::default()
    };
    if let Some(a) = arch.into() {
        config.choose_targets(vec![kernaut_ide::gpu::Target::of_arch(a.arch)], "--arch");
    }
    let mut host = AnalysisHost::new(config);
    host.set_knowledge(Arc::new(knowledge));
    // The file with its `.kernaut.toml`, build and headers: the project loader, as
    // `kernaut-lsp check` and the editor load it.
    let mut loader = kernaut_project::ProjectLoader::new(None);
    // Where no `.git` bounds the project, the folder the command runs in does (as
    // `check .` there reads it).
    loader.add_scan_roots(&[std::path::PathBuf::from(".")]);
    let id = match loader.load_text(&mut host, path, std::path::Path::new(path), text) {
        Ok(id) => id,
        Err(_) => host.set_file(path, text),
    };
    let analysis = host.analysis();
    Ok(analysis.hover(id, offset)?.map(|h| (h, analysis)))
}

/// The occupancy and the three curves for the kernel of `panel` at `inputs` (`None`:
/// as found). The model answers ([`kernaut_ide::reports::OccupancyReport::what_if`]):
/// at the inputs found, its own figure, the one the hover and the lens show; edited, the
/// same model on the model's input with the edited fields.
pub fn occupancy_view(panel: &KernelPanel, inputs: Option<OccInputs>) -> OccView {
    let inputs = inputs.unwrap_or(panel.found);
    let arch = inputs.arch.arch;
    let (input, result) = panel.report.what_if(
        arch,
        inputs.threads,
        inputs.regs,
        inputs.static_smem,
        inputs.dyn_smem,
    );
    let result = result.map(|o| OccOutputs {
        blocks_per_sm: o.blocks_per_sm,
        active_warps: o.active_warps,
        max_warps: o.max_warps_per_sm,
        occupancy: o.occupancy,
        limiters: o.limiters.iter().map(|l| l.name().to_string()).collect(),
    });
    let curve = |axis: CurveAxis, scale: f64| -> Vec<(f64, f64)> {
        occupancy_curve(arch, &input, axis)
            .map(|pts| {
                pts.iter()
                    .map(|p| (f64::from(p.x) / scale, p.occupancy * 100.0))
                    .collect()
            })
            .unwrap_or_default()
    };
    let curves = OccCurves {
        threads: curve(CurveAxis::Threads, 1.0),
        regs: curve(CurveAxis::Registers, 1.0),
        smem: curve(CurveAxis::SharedMemory, 1024.0),
    };
    OccView {
        inputs,
        result,
        curves,
    }
}

/// Limits of an architecture the calculator's keys step within: (max threads per
/// block, max registers per thread, max shared memory per block in bytes).
pub fn arch_limits(arch: ArchChoice) -> (u32, u32, u32) {
    let l = arch.arch.limits();
    (
        l.max_threads_per_block,
        l.max_regs_per_thread,
        l.smem_per_block_optin,
    )
}

/// What a background compile brings: the facts `ide` uses and each kernel's SASS.
struct Compiled {
    facts: kernaut_ide::compiled::CompiledFacts,
    sass: Vec<(String, String, String)>,
}

/// When `path` and each `.kernaut.toml` above it were last modified (`None`: absent).
fn stamps(path: &str) -> Vec<(std::path::PathBuf, Option<std::time::SystemTime>)> {
    let file = std::path::Path::new(path);
    let abs = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let mut out = vec![(abs.clone(), modified(&abs))];
    for d in abs.ancestors().skip(1) {
        let c = d.join(kernaut_ide::config::CONFIG_FILE_NAME);
        out.push((c.clone(), modified(&c)));
    }
    out
}

fn modified(p: &std::path::Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Compiles `text` (as the file `path`) with `flags` (the project loader's) and the CUDA
/// toolkit found as `kernaut-lsp` finds it; `None` without a toolkit or when the compile
/// fails. The facts are converted as everywhere else (`kernaut_project::compiled`).
fn compile(path: &str, text: &str, flags: kernaut_compiler::CompileFlags) -> Option<Compiled> {
    let toolkit =
        kernaut_compiler::Toolkit::discover(&kernaut_compiler::ToolkitConfig::default()).ok()?;
    let mut request = kernaut_compiler::CompileRequest::new(path, text, flags);
    request.sass = toolkit.has_sass_tools();
    let out = toolkit.compile(&request, &std::sync::Arc::default()).ok()?;
    let facts = kernaut_project::compiled::to_compiled(&out, std::path::Path::new(path));
    let sass = out
        .kernels
        .iter()
        .filter_map(|k| {
            let s = out.sass_for(&k.mangled, &k.arch)?;
            Some((k.base_name.clone(), k.arch.clone(), s.text.clone()))
        })
        .collect();
    Some(Compiled { facts, sass })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_take_the_units_people_type() {
        for t in ["49152", "48K", "48KB", "48KiB", "48 kb", "48k"] {
            assert_eq!(parse_bytes(t), Ok(49152), "{t}");
        }
        assert_eq!(parse_bytes("1.5K"), Ok(1536));
        assert!(parse_bytes("48 parsecs").is_err());
    }

    #[test]
    fn product_names_map_to_compute_capabilities() {
        for (t, sm) in [
            ("H200", "sm_90"),
            ("h100", "sm_90"),
            ("A100", "sm_80"),
            ("4090", "sm_89"),
            ("RTX 4090", "sm_89"),
            ("sm_86", "sm_86"),
        ] {
            assert_eq!(ArchChoice::parse(t).unwrap().name(), sm, "{t}");
        }
        assert_eq!(
            ArchChoice::parse("H200").unwrap().describe(),
            "sm_90 (H200)"
        );
        let e = ArchChoice::parse("H20O").unwrap_err();
        assert!(e.contains("did you mean `H200`"), "{e}");
    }

    #[test]
    fn queries_split_filters_from_words() {
        let q = Query::parse("kind:pitfall tag:tma  slow copy sm:80");
        assert_eq!(q.text, "slow copy");
        assert_eq!(q.kind.as_deref(), Some("pitfall"));
        assert_eq!(q.tags, ["tma"]);
        assert_eq!(q.sm.as_deref(), Some("80"));
    }

    #[test]
    fn a_diff_shows_changed_lines_with_context() {
        let d = diff("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            d,
            [
                DiffLine::Same("a".into()),
                DiffLine::Removed("b".into()),
                DiffLine::Added("B".into()),
                DiffLine::Same("c".into())
            ]
        );
    }
}
