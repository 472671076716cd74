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
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

use kernaut_gpu::Arch;
use kernaut_syntax::{
    FileFacts, Function, LaunchSite, SharedAccess, SharedDecl, SourceFile, SymbolRef, SyntaxError,
    TextRange,
};
use kernaut_wiki::WikiConfig;

use crate::config::RulesConfig;
use crate::hover::HoverResult;
use crate::knowledge::{Knowledge, KnowledgeError};
use crate::reports::{BankAnalysis, OccupancyReport};
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

/// One file: the parsed source and the accesses computed from it on first use.
#[derive(Clone, Debug)]
pub(crate) struct FileData {
    pub(crate) source: SourceFile,
    accesses: OnceLock<Vec<SharedAccess>>,
    line_starts: OnceLock<Vec<usize>>,
}

impl FileData {
    fn new(source: SourceFile) -> FileData {
        FileData {
            source,
            accesses: OnceLock::new(),
            line_starts: OnceLock::new(),
        }
    }

    /// The 1-based line of a byte offset.
    pub(crate) fn line_of(&self, offset: usize) -> u32 {
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(
                    self.source
                        .text()
                        .bytes()
                        .enumerate()
                        .filter(|(_, b)| *b == b'\n')
                        .map(|(i, _)| i + 1),
                )
                .collect()
        });
        let line = starts.partition_point(|&s| s <= offset);
        u32::try_from(line.max(1)).unwrap_or(u32::MAX)
    }

    pub(crate) fn facts(&self) -> &FileFacts {
        self.source.facts()
    }

    pub(crate) fn accesses(&self) -> &[SharedAccess] {
        self.accesses.get_or_init(|| self.source.shared_accesses())
    }
}

/// The mutable side: files, configuration and the wiki. Hand out snapshots with
/// [`AnalysisHost::analysis`].
#[derive(Clone, Debug)]
pub struct AnalysisHost {
    config: Arc<AnalysisConfig>,
    knowledge: Option<Arc<Knowledge>>,
    files: Arc<HashMap<String, Arc<FileData>>>,
}

impl AnalysisHost {
    /// A host with no files and no wiki loaded (hovers then show only the code's facts;
    /// see [`AnalysisHost::load_knowledge`] and [`AnalysisHost::set_knowledge`]).
    pub fn new(config: AnalysisConfig) -> AnalysisHost {
        AnalysisHost {
            config: Arc::new(config),
            knowledge: None,
            files: Arc::new(HashMap::new()),
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
        let data = Arc::make_mut(entry);
        let edited = guarded(|| {
            let mut source = data.source.clone();
            source.apply_edit(range.clone(), new_text);
            source
        });
        let source = match edited {
            Some(s) => s,
            None => {
                // The incremental path failed: splice the text here and parse afresh.
                let old = data.source.text();
                let start = floor_boundary(old, range.start.min(range.end));
                let end = floor_boundary(old, range.end.max(range.start));
                let text = format!("{}{}{}", &old[..start], new_text, &old[end..]);
                guarded(|| SourceFile::parse(&text)).unwrap_or_else(|| SourceFile::parse(""))
            }
        };
        *data = FileData::new(source);
        true
    }

    /// An immutable snapshot of the current state.
    pub fn analysis(&self) -> Analysis {
        Analysis {
            config: self.config.clone(),
            knowledge: self.knowledge.clone(),
            files: self.files.clone(),
            launch_index: Arc::new(OnceLock::new()),
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

/// A kernel and what the file says about how it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelFacts {
    /// The kernel's definition: name, parameters, template parameters,
    /// `__launch_bounds__`, `__cluster_dims__`.
    pub function: Function,
    /// Its launch sites in every file of the host, as (path, launch).
    pub launches: Vec<(String, LaunchSite)>,
    /// The `__shared__` declarations inside it.
    pub shared: Vec<SharedDecl>,
    /// The static shared memory it declares, in bytes, when every size is known.
    pub static_shared_bytes: Option<u64>,
    /// `cudaFuncSetAttribute` calls naming it, as (attribute, folded value).
    pub attributes: Vec<(String, Option<i64>)>,
}

/// An immutable, cheaply cloned view of the host's files, configuration and wiki.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub(crate) config: Arc<AnalysisConfig>,
    pub(crate) knowledge: Option<Arc<Knowledge>>,
    pub(crate) files: Arc<HashMap<String, Arc<FileData>>>,
    /// Launch sites of every file by kernel name (without namespaces), built on first use.
    launch_index: Arc<OnceLock<LaunchIndex>>,
}

type LaunchIndex = HashMap<String, Vec<(String, LaunchSite)>>;

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
    pub fn file_facts(&self, path: &str) -> Option<FileFacts> {
        let f = self.file(path)?;
        guarded(|| f.facts().clone())
    }

    /// The kernels of a file, each with its launch sites (from every file), shared
    /// declarations and attributes.
    pub fn kernel_facts(&self, path: &str) -> Vec<KernelFacts> {
        guarded(|| self.kernel_facts_inner(path)).unwrap_or_default()
    }

    fn kernel_facts_inner(&self, path: &str) -> Vec<KernelFacts> {
        let Some(f) = self.file(path) else {
            return Vec::new();
        };
        let facts = f.facts();
        let mut by_function: HashMap<&str, Vec<&SharedDecl>> = HashMap::new();
        for d in &facts.shared {
            if let Some(func) = d.function.as_deref() {
                by_function.entry(func).or_default().push(d);
            }
        }
        let mut launches: HashMap<&str, Vec<(String, LaunchSite)>> = HashMap::new();
        let mut attributes: HashMap<&str, Vec<(String, Option<i64>)>> = HashMap::new();
        for (p, data) in self.sorted_files(path) {
            for l in &data.facts().launches {
                let name = l.kernel.rsplit("::").next().unwrap_or(&l.kernel);
                launches
                    .entry(name)
                    .or_default()
                    .push((p.to_string(), l.clone()));
            }
            for a in &data.facts().func_attributes {
                let name = a.kernel.rsplit("::").next().unwrap_or(&a.kernel);
                attributes
                    .entry(name)
                    .or_default()
                    .push((a.attribute.clone(), a.value));
            }
        }
        facts
            .kernels
            .iter()
            .map(|k| {
                let short = k.name.rsplit("::").next().unwrap_or(&k.name);
                let shared: Vec<SharedDecl> = by_function
                    .get(k.name.as_str())
                    .map(|v| v.iter().map(|d| (*d).clone()).collect())
                    .unwrap_or_default();
                let static_shared_bytes = shared
                    .iter()
                    .filter(|d| !d.is_extern)
                    .try_fold(0u64, |acc, d| acc.checked_add(d.static_bytes?));
                KernelFacts {
                    function: k.clone(),
                    launches: launches.get(short).cloned().unwrap_or_default(),
                    shared,
                    static_shared_bytes,
                    attributes: attributes.get(short).cloned().unwrap_or_default(),
                }
            })
            .collect()
    }

    /// Every shared-memory access of a file, with its index lowered over the thread
    /// index, in document order.
    pub fn shared_accesses(&self, path: &str) -> Vec<SharedAccess> {
        let Some(f) = self.file(path) else {
            return Vec::new();
        };
        guarded(|| f.accesses().to_vec()).unwrap_or_default()
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
        let index = self.launch_index.get_or_init(|| {
            let mut index = LaunchIndex::new();
            for (p, data) in self.sorted_files("") {
                for l in &data.facts().launches {
                    let short = l.kernel.rsplit("::").next().unwrap_or(&l.kernel);
                    index
                        .entry(short.to_string())
                        .or_default()
                        .push((p.to_string(), l.clone()));
                }
            }
            index
        });
        let short = kernel.rsplit("::").next().unwrap_or(kernel);
        let mut out: Vec<(String, LaunchSite)> = index
            .get(short)
            .map(|v| {
                v.iter()
                    .filter(|(_, l)| l.kernel == kernel || short == kernel)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by_key(|(p, _)| p != first);
        out
    }
}
