//! The analysis host and its snapshots.
//!
//! [`AnalysisHost`] holds the mutable state: the files by path, the configuration and
//! the wiki. [`AnalysisHost::analysis`] hands out an [`Analysis`], an immutable snapshot
//! that is cheap to clone (reference counted) and answers every question a front end
//! asks. Every entry point of [`Analysis`] is guarded: broken code, odd offsets and even
//! a panic deep in a model give `None` or an empty `Vec`, never a crash.
//!
//! ```
//! use kernaut_ide::{AnalysisConfig, AnalysisHost};
//!
//! let mut host = AnalysisHost::new(AnalysisConfig::default());
//! host.set_file("/k.cu", "__global__ void k() { __shared__ float t[32][33]; t[threadIdx.x][0] = 1.0f; }");
//! let analysis = host.analysis();
//! let access = &analysis.shared_accesses("/k.cu")[0];
//! let bank = analysis.bank_report("/k.cu", access).unwrap();
//! assert_eq!(bank.result.unwrap().conflict_degree, 1);
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

use kernaut_gpu::Arch;
use kernaut_syntax::{
    FileFacts, FuncAttributeCall, Function, LaunchSite, SharedAccess, SharedDecl, SourceFile,
    SymbolRef, SyntaxError, TextRange,
};
use kernaut_wiki::WikiConfig;

use crate::config::RulesConfig;
use crate::hover::HoverResult;
use crate::knowledge::{Knowledge, KnowledgeError};
use crate::reports::{BankAnalysis, FxHasher, OccupancyReport, ReportCache};
use crate::rules::{RuleContext, RuleDiagnostic};

/// What the analysis assumes where the code does not say.
#[derive(Clone, Debug)]
pub struct AnalysisConfig {
    /// The target architecture: minimum-architecture checks and every model use it.
    pub arch: Arch,
    /// Whether the user chose `arch` (a flag, `.kernaut.toml`, an editor setting) rather
    /// than leaving the default; rules that compare the code with the target stay silent
    /// on a default target.
    pub arch_configured: bool,
    /// The block size (x, y, z) used when no launch of a kernel is seen.
    pub default_block: [u32; 3],
    /// Registers per thread when a kernel has no `__launch_bounds__` to derive a limit
    /// from. Real counts need ptxas; this is an assumption, and hovers say so.
    pub default_regs_per_thread: u32,
    /// The wiki to load: the built-in pages and extra folders.
    pub wiki: WikiConfig,
}

impl Default for AnalysisConfig {
    /// `sm_90` (not chosen by the user), blocks of 256 threads, 32 registers per thread,
    /// the built-in wiki.
    fn default() -> AnalysisConfig {
        AnalysisConfig {
            arch: Arch::parse("sm_90").unwrap_or(Arch {
                cc: kernaut_gpu::ComputeCapability::ALL[0],
                arch_specific: false,
            }),
            arch_configured: false,
            default_block: [256, 1, 1],
            default_regs_per_thread: 32,
            wiki: WikiConfig::builtin(),
        }
    }
}

/// One file: the parsed source and what is computed from it on first use.
#[derive(Clone, Debug)]
pub(crate) struct FileData {
    pub(crate) source: SourceFile,
    accesses: OnceLock<Vec<SharedAccess>>,
    /// The byte offset where each line starts; carried across edits (see
    /// [`spliced_line_starts`]) once built.
    line_starts: OnceLock<Vec<usize>>,
    index: OnceLock<FileIndex>,
}

/// Look-up tables over a file's facts, by function or kernel name.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileIndex {
    /// The declarations in `facts.shared` by the function they are inside.
    shared: NameTable,
    /// The launches in `facts.launches` by the kernel's name without namespaces.
    launches: NameTable,
    /// The calls in `facts.func_attributes` by the kernel's name without namespaces.
    attributes: NameTable,
}

/// Positions in a list by a name: (hash of the name, position), sorted. One allocation
/// per list and none per name; a look-up yields the positions whose name has the same
/// hash, in document order, and the caller compares the names.
#[derive(Clone, Debug, Default)]
struct NameTable(Vec<(u64, usize)>);

fn name_hash(name: &str) -> u64 {
    BuildHasherDefault::<FxHasher>::default().hash_one(name)
}

impl NameTable {
    fn new<'a>(names: impl Iterator<Item = Option<&'a str>>) -> NameTable {
        let mut table: Vec<(u64, usize)> = names
            .enumerate()
            .filter_map(|(i, n)| Some((name_hash(n?), i)))
            .collect();
        table.sort_unstable();
        NameTable(table)
    }

    fn get(&self, name: &str) -> impl Iterator<Item = usize> + '_ {
        let hash = name_hash(name);
        let first = self.0.partition_point(|e| e.0 < hash);
        self.0[first..]
            .iter()
            .take_while(move |e| e.0 == hash)
            .map(|e| e.1)
    }
}

pub(crate) use kernaut_syntax::short_name;

impl FileData {
    fn new(source: SourceFile) -> FileData {
        FileData {
            source,
            accesses: OnceLock::new(),
            line_starts: OnceLock::new(),
            index: OnceLock::new(),
        }
    }

    /// The 1-based line of a byte offset.
    pub(crate) fn line_of(&self, offset: usize) -> u32 {
        let starts = self
            .line_starts
            .get_or_init(|| line_starts(self.source.text()));
        let line = starts.partition_point(|&s| s <= offset);
        u32::try_from(line.max(1)).unwrap_or(u32::MAX)
    }

    pub(crate) fn facts(&self) -> &FileFacts {
        self.source.facts()
    }

    pub(crate) fn accesses(&self) -> &[SharedAccess] {
        self.accesses.get_or_init(|| self.source.shared_accesses())
    }

    fn index(&self) -> &FileIndex {
        self.index.get_or_init(|| {
            let facts = self.facts();
            FileIndex {
                shared: NameTable::new(facts.shared.iter().map(|d| d.function.as_deref())),
                launches: NameTable::new(
                    facts.launches.iter().map(|l| Some(short_name(&l.kernel))),
                ),
                attributes: NameTable::new(
                    facts
                        .func_attributes
                        .iter()
                        .map(|a| Some(short_name(&a.kernel))),
                ),
            }
        })
    }

    /// The `__shared__` declarations inside the function `name`, in document order.
    pub(crate) fn shared_in<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a SharedDecl> {
        let shared = &self.facts().shared;
        self.index()
            .shared
            .get(name)
            .map(move |i| &shared[i])
            .filter(move |d| d.function.as_deref() == Some(name))
    }

    /// The launches of kernels whose name without namespaces is `short`, in document
    /// order.
    pub(crate) fn launches_named<'a>(
        &'a self,
        short: &'a str,
    ) -> impl Iterator<Item = &'a LaunchSite> {
        let launches = &self.facts().launches;
        self.index()
            .launches
            .get(short)
            .map(move |i| &launches[i])
            .filter(move |l| short_name(&l.kernel) == short)
    }

    /// The `cudaFuncSetAttribute` calls naming a kernel whose name without namespaces
    /// is `short`, in document order.
    fn attributes_named<'a>(
        &'a self,
        short: &'a str,
    ) -> impl Iterator<Item = &'a FuncAttributeCall> {
        let calls = &self.facts().func_attributes;
        self.index()
            .attributes
            .get(short)
            .map(move |i| &calls[i])
            .filter(move |a| short_name(&a.kernel) == short)
    }
}

/// The byte offset where each line of `text` starts.
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::with_capacity(text.len() / 32 + 1);
    starts.push(0);
    starts.extend(
        text.bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(i, _)| i + 1),
    );
    starts
}

/// The line starts of `new`, which is `old` with `range` replaced by `inserted`, from
/// those of `old`: the starts before the edit are kept, those after it shifted, and only
/// the inserted text is scanned. `None` when `new` is not that splice (the caller then
/// scans `new` on first use).
fn spliced_line_starts(
    starts: &[usize],
    old: &str,
    new: &str,
    range: &TextRange,
    inserted: &str,
) -> Option<Vec<usize>> {
    let start = floor_boundary(old, range.start.min(range.end));
    let removed = (old.len() + inserted.len()).checked_sub(new.len())?;
    let end = start.checked_add(removed).filter(|e| *e <= old.len())?;
    if new.get(start..start + inserted.len())? != inserted {
        return None;
    }
    debug_assert!(old[..start] == new[..start] && old[end..] == new[start + inserted.len()..]);
    // A start `s` follows the newline at `s - 1`: kept when that is before the edit,
    // dropped when it was replaced, shifted when it is after.
    let kept = starts.partition_point(|&s| s <= start);
    let after = starts.partition_point(|&s| s <= end);
    let shifted = starts[after..]
        .iter()
        .map(|&s| s - end + start + inserted.len());
    let mut out = Vec::with_capacity(starts.len() + 8);
    out.extend_from_slice(&starts[..kept]);
    out.extend(
        inserted
            .bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(i, _)| start + i + 1),
    );
    out.extend(shifted);
    Some(out)
}

/// The mutable side: files, configuration and the wiki. Hand out snapshots with
/// [`AnalysisHost::analysis`].
#[derive(Clone, Debug)]
pub struct AnalysisHost {
    config: Arc<AnalysisConfig>,
    knowledge: Option<Arc<Knowledge>>,
    files: Arc<HashMap<String, Arc<FileData>>>,
    /// Model results by their inputs, shared by every snapshot and kept across edits.
    cache: Arc<ReportCache>,
}

impl AnalysisHost {
    /// A host with no files and no wiki loaded (hovers then show only the code's facts;
    /// see [`AnalysisHost::load_knowledge`] and [`AnalysisHost::set_knowledge`]).
    pub fn new(config: AnalysisConfig) -> AnalysisHost {
        AnalysisHost {
            config: Arc::new(config),
            knowledge: None,
            files: Arc::new(HashMap::new()),
            cache: Arc::new(ReportCache::default()),
        }
    }

    /// Loads the wiki the configuration names (built-in pages and extra folders) and
    /// builds its index. Problems with single pages are in the wiki's diagnostics.
    pub fn load_knowledge(&mut self) -> Result<(), KnowledgeError> {
        let k = Knowledge::load(&self.config.wiki)?;
        self.knowledge = Some(Arc::new(k));
        Ok(())
    }

    /// Uses an already loaded wiki (shared between hosts, or loaded by the front end).
    pub fn set_knowledge(&mut self, knowledge: Arc<Knowledge>) {
        self.knowledge = Some(knowledge);
    }

    /// The configuration.
    pub fn config(&self) -> &AnalysisConfig {
        &self.config
    }

    /// Replaces the configuration. The wiki is not reloaded.
    pub fn set_config(&mut self, config: AnalysisConfig) {
        self.config = Arc::new(config);
    }

    /// Adds or replaces a file, parsing it from scratch.
    pub fn set_file(&mut self, path: &str, text: &str) {
        let source = guarded(|| SourceFile::parse(text)).unwrap_or_else(|| SourceFile::parse(""));
        Arc::make_mut(&mut self.files).insert(path.to_string(), Arc::new(FileData::new(source)));
    }

    /// Removes a file.
    pub fn remove_file(&mut self, path: &str) {
        Arc::make_mut(&mut self.files).remove(path);
    }

    /// Replaces `range` of a file with `new_text`, reparsing incrementally. Returns
    /// whether the file exists. A range past the end is clamped.
    pub fn apply_edit(&mut self, path: &str, range: TextRange, new_text: &str) -> bool {
        let files = Arc::make_mut(&mut self.files);
        let Some(entry) = files.get_mut(path) else {
            return false;
        };
        let old = &entry.source;
        let edited = guarded(|| {
            let mut source = old.clone();
            source.apply_edit(range.clone(), new_text);
            source
        });
        let source = match edited {
            Some(s) => s,
            None => {
                // The incremental path failed: splice the text here and parse afresh.
                let old = old.text();
                let start = floor_boundary(old, range.start.min(range.end));
                let end = floor_boundary(old, range.end.max(range.start));
                let text = format!("{}{}{}", &old[..start], new_text, &old[end..]);
                guarded(|| SourceFile::parse(&text)).unwrap_or_else(|| SourceFile::parse(""))
            }
        };
        let starts = entry.line_starts.get().and_then(|starts| {
            spliced_line_starts(starts, old.text(), source.text(), &range, new_text)
        });
        let data = FileData::new(source);
        if let Some(starts) = starts {
            let _ = data.line_starts.set(starts);
        }
        *entry = Arc::new(data);
        true
    }

    /// An immutable snapshot of the current state.
    pub fn analysis(&self) -> Analysis {
        Analysis {
            config: self.config.clone(),
            knowledge: self.knowledge.clone(),
            files: self.files.clone(),
            cache: self.cache.clone(),
        }
    }
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Runs `f`, turning a panic into `None`.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok()
}

/// A kernel and what the file says about how it runs, borrowed from the snapshot that
/// found it (nothing is copied).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelFacts<'a> {
    /// The kernel's definition: name, parameters, template parameters,
    /// `__launch_bounds__`, `__cluster_dims__`.
    pub function: &'a Function,
    /// Its launch sites in every file of the host, as (path, launch).
    pub launches: Vec<(&'a str, &'a LaunchSite)>,
    /// The `__shared__` declarations inside it.
    pub shared: Vec<&'a SharedDecl>,
    /// The static shared memory it declares, in bytes, when every size is known.
    pub static_shared_bytes: Option<u64>,
    /// `cudaFuncSetAttribute` calls naming it, as (attribute, folded value).
    pub attributes: Vec<(&'a str, Option<i64>)>,
}

/// An immutable, cheaply cloned view of the host's files, configuration and wiki.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub(crate) config: Arc<AnalysisConfig>,
    pub(crate) knowledge: Option<Arc<Knowledge>>,
    pub(crate) files: Arc<HashMap<String, Arc<FileData>>>,
    pub(crate) cache: Arc<ReportCache>,
}

impl Analysis {
    /// The configuration of this snapshot.
    pub fn config(&self) -> &AnalysisConfig {
        &self.config
    }

    /// The wiki, if one was loaded.
    pub fn knowledge(&self) -> Option<&Knowledge> {
        self.knowledge.as_deref()
    }

    /// The paths of every file, sorted.
    pub fn files(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.files.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// The parsed file at `path` (for features such as the rules that walk it).
    pub fn source_file(&self, path: &str) -> Option<&SourceFile> {
        self.files.get(path).map(|f| &f.source)
    }

    pub(crate) fn file(&self, path: &str) -> Option<&FileData> {
        self.files.get(path).map(|f| &**f)
    }

    /// The text of a file.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.source_file(path).map(SourceFile::text)
    }

    /// The syntax errors of a file (at most 200).
    pub fn syntax_errors(&self, path: &str) -> Vec<SyntaxError> {
        let Some(f) = self.file(path) else {
            return Vec::new();
        };
        guarded(|| f.source.errors()).unwrap_or_default()
    }

    /// The symbol at a byte offset, as the user means it.
    pub fn symbol_at(&self, path: &str, offset: usize) -> Option<SymbolRef> {
        let f = self.file(path)?;
        guarded(|| f.source.symbol_at(offset)).flatten()
    }

    /// What a hover at a byte offset shows, or `None` where there is nothing to say.
    pub fn hover(&self, path: &str, offset: usize) -> Option<HoverResult> {
        guarded(|| crate::hover::hover(self, path, offset)).flatten()
    }

    /// The pitfall rules' diagnostics for a file, at the given rule levels (none without
    /// a wiki: every rule cites it).
    pub fn diagnostics(&self, path: &str, rules: &RulesConfig) -> Vec<RuleDiagnostic> {
        let (Some(f), Some(k)) = (self.file(path), self.knowledge()) else {
            return Vec::new();
        };
        guarded(|| {
            let mut ctx = RuleContext::new(&f.source, self.config.arch, k, rules);
            ctx.arch_configured = self.config.arch_configured;
            crate::rules::check(&ctx)
        })
        .unwrap_or_default()
    }

    /// Every fact syntax found in a file (kernels, shared memory, launches, constants).
    pub fn file_facts(&self, path: &str) -> Option<&FileFacts> {
        let f = self.file(path)?;
        guarded(|| f.facts())
    }

    /// The kernels of a file, each with its launch sites (from every file), shared
    /// declarations and attributes.
    pub fn kernel_facts(&self, path: &str) -> Vec<KernelFacts<'_>> {
        guarded(|| self.kernel_facts_inner(path)).unwrap_or_default()
    }

    fn kernel_facts_inner(&self, path: &str) -> Vec<KernelFacts<'_>> {
        let Some(f) = self.file(path) else {
            return Vec::new();
        };
        let facts = f.facts();
        let files = self.sorted_files(path);
        facts
            .kernels
            .iter()
            .map(|k| {
                let short = short_name(&k.name);
                let shared: Vec<&SharedDecl> = f.shared_in(&k.name).collect();
                let static_shared_bytes = shared
                    .iter()
                    .filter(|d| !d.is_extern)
                    .try_fold(0u64, |acc, d| acc.checked_add(d.static_bytes?));
                let mut launches = Vec::new();
                let mut attributes = Vec::new();
                for &(p, data) in &files {
                    launches.extend(data.launches_named(short).map(|l| (p, l)));
                    attributes.extend(
                        data.attributes_named(short)
                            .map(|a| (a.attribute.as_str(), a.value)),
                    );
                }
                KernelFacts {
                    function: k,
                    launches,
                    shared,
                    static_shared_bytes,
                    attributes,
                }
            })
            .collect()
    }

    /// Every shared-memory access of a file, with its index lowered over the thread
    /// index, in document order.
    pub fn shared_accesses(&self, path: &str) -> &[SharedAccess] {
        let Some(f) = self.file(path) else {
            return &[];
        };
        guarded(|| f.accesses()).unwrap_or(&[])
    }

    /// The occupancy of `kernel` (defined in `path`) at the launch configuration found.
    pub fn occupancy_for(&self, path: &str, kernel: &str) -> Option<OccupancyReport> {
        guarded(|| crate::reports::occupancy_for(self, path, kernel)).flatten()
    }

    /// The bank model run on one access of `path` (from [`Analysis::shared_accesses`]).
    pub fn bank_report(&self, path: &str, access: &SharedAccess) -> Option<BankAnalysis> {
        guarded(|| crate::reports::bank_report(self, path, access)).flatten()
    }

    /// The files with `first` first, then the others by path.
    pub(crate) fn sorted_files<'a>(&'a self, first: &str) -> Vec<(&'a str, &'a FileData)> {
        let mut v: Vec<(&str, &FileData)> =
            self.files.iter().map(|(p, f)| (p.as_str(), &**f)).collect();
        v.sort_by(|a, b| (a.0 != first, a.0).cmp(&(b.0 != first, b.0)));
        v
    }

    /// Launch sites of `kernel`, those in `first` first, then by path.
    pub(crate) fn launches_of(&self, first: &str, kernel: &str) -> Vec<(String, LaunchSite)> {
        self.launches_of_ref(first, kernel)
            .map(|(p, l)| (p.to_string(), l.clone()))
            .collect()
    }

    /// [`Analysis::launches_of`] without copying: the launches of `kernel` (or of any
    /// namespace's kernel of that name when `kernel` has none), those in `first` first,
    /// then by path, each in document order.
    pub(crate) fn launches_of_ref<'a>(
        &'a self,
        first: &str,
        kernel: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a LaunchSite)> + 'a {
        let short = short_name(kernel);
        let first = self.files.get_key_value(first);
        // The other files by path (no allocation for a single file).
        let mut others: Vec<(&str, &FileData)> = Vec::new();
        if self.files.len() > usize::from(first.is_some()) {
            others = self
                .files
                .iter()
                .filter(|(p, _)| first.is_none_or(|(f, _)| *p != f))
                .map(|(p, f)| (p.as_str(), &**f))
                .collect();
            others.sort_unstable_by_key(|(p, _)| *p);
        }
        first
            .map(|(p, f)| (p.as_str(), &**f))
            .into_iter()
            .chain(others)
            .flat_map(move |(p, data)| {
                data.launches_named(short)
                    .filter(move |l| l.kernel == kernel || short == kernel)
                    .map(move |l| (p, l))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_starts_carried_across_edits_match_a_fresh_scan() {
        let text = "a\nbc\n\ndéf\nghi\n";
        let inserts = ["", "x", "\n", "y\nz\n", "\n\n", "é"];
        for start in 0..=text.len() {
            for end in start..=text.len() + 1 {
                for ins in inserts {
                    let mut host = AnalysisHost::new(AnalysisConfig::default());
                    host.set_file("/f.cu", text);
                    let a = host.analysis();
                    let before = a.file("/f.cu").unwrap();
                    before.line_of(0);
                    drop(a);
                    host.apply_edit("/f.cu", start..end, ins);
                    let a = host.analysis();
                    let data = a.file("/f.cu").unwrap();
                    let expected = line_starts(data.source.text());
                    if let Some(carried) = data.line_starts.get() {
                        assert_eq!(carried, &expected, "{start}..{end} <- {ins:?}");
                    }
                    for offset in 0..=data.source.text().len() {
                        let line = expected.partition_point(|&s| s <= offset).max(1);
                        assert_eq!(data.line_of(offset) as usize, line);
                    }
                }
            }
        }
    }

    #[test]
    fn line_starts_are_carried_for_a_plain_edit() {
        let mut host = AnalysisHost::new(AnalysisConfig::default());
        host.set_file("/f.cu", "int a;\nint b;\nint c;\n");
        host.analysis().file("/f.cu").unwrap().line_of(0);
        host.apply_edit("/f.cu", 7..13, "int bb;\n// x");
        let a = host.analysis();
        let data = a.file("/f.cu").unwrap();
        assert_eq!(data.line_starts.get(), Some(&vec![0, 7, 15, 20, 27]));
        assert_eq!(data.source.text(), "int a;\nint bb;\n// x\nint c;\n");
    }
}
