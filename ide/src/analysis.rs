//! The analysis host and its snapshots.
//!
//! [`AnalysisHost`] holds the mutable state: the path table ([`FileId`]s), the files, the
//! configuration (with a `.kernaut.toml` per directory), the wiki, the one cache of model
//! results and the revision counter. It changes only through [`AnalysisHost::apply_change`],
//! which takes a [`Change`] (edits of several files and configuration updates, in order)
//! and bumps the revision. [`AnalysisHost::analysis`] hands out an [`Analysis`], an
//! immutable `Send + Sync` snapshot that is cheap to clone and answers every question a
//! front end asks. Its queries return [`Cancellable`]: a query on a snapshot older than
//! the host's revision stops at its next checkpoint with [`QueryError::Cancelled`], and a
//! bug (a panic deep in a model) comes back as [`QueryError::Failed`] with its message,
//! never as an empty answer.
//!
//! ```
//! use kernaut_ide::{AnalysisConfig, AnalysisHost, Change};
//!
//! let mut host = AnalysisHost::new(AnalysisConfig::default());
//! let file = host.file_id("/k.cu");
//! let mut change = Change::new();
//! change.set_file(file, "__global__ void k() { __shared__ float t[32][33]; t[threadIdx.x][0] = 1.0f; }");
//! host.apply_change(change);
//! let analysis = host.analysis();
//! let access = &analysis.shared_accesses(file).unwrap()[0];
//! let bank = analysis.bank(file, access).unwrap().unwrap();
//! assert_eq!(bank.result.unwrap().conflict_degree, 1);
//! ```

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use kernaut_gpu::Arch;
use kernaut_syntax::cancel::CancelToken;
use kernaut_syntax::{
    FileFacts, FuncAttributeCall, Function, LaunchSite, SharedAccess, SharedDecl, SourceFile,
    SymbolRef, SyntaxError, TextRange,
};
use kernaut_wiki::WikiConfig;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::compiled::{CompiledFacts, CompiledKernel};
use crate::config::{KernautConfig, RulesConfig};
use crate::hover::HoverResult;
use crate::knowledge::{Knowledge, KnowledgeError};
use crate::line_index::{floor_char_boundary, LineIndex};
use crate::reports::{BankAnalysis, OccupancyReport, ReportCache};
use crate::rules::{RuleContext, RuleDiagnostic, RuleSettings};

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
    /// Rule levels (a `.kernaut.toml` above a file is laid over them).
    pub rules: RulesConfig,
    /// How many threads one large file's parse and analysis may use (0: leave the
    /// process's setting, by default one per core, at most 8). A server with a worker pool of its own sets this so that the two do not
    /// oversubscribe the cores.
    pub threads: usize,
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
            rules: RulesConfig::default(),
            threads: 0,
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
    line_index: OnceLock<Arc<LineIndex>>,
    index: OnceLock<FileIndex>,
    /// The rules' diagnostics of this version of the file, for one configuration: hover
    /// and [`Analysis::diagnostics`] share one run.
    diagnostics: DiagnosticsCache,
    /// Why the parse failed (a bug in the parser), reported by every query on the file.
    failure: Option<String>,
}

/// The last run of the rules on one version of a file, with what it depended on
/// besides the text. A clone starts empty (a cloned file is about to change).
#[derive(Debug, Default)]
struct DiagnosticsCache(Mutex<Option<(DiagnosticsKey, Arc<Vec<RuleDiagnostic>>)>>);

impl Clone for DiagnosticsCache {
    fn clone(&self) -> DiagnosticsCache {
        DiagnosticsCache::default()
    }
}

/// What a file's diagnostics depend on besides its text: the file's configuration,
/// the wiki and the compiled facts (by identity).
#[derive(Clone, Debug, PartialEq)]
struct DiagnosticsKey {
    config: FileConfig,
    knowledge: usize,
    compiled: usize,
    /// [`Analysis::launch_fingerprint`]: the rules' model reads launches in every file.
    launches: u64,
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
    FxBuildHasher.hash_one(name)
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
    fn new(source: SourceFile, failure: Option<String>) -> FileData {
        FileData {
            source,
            accesses: OnceLock::new(),
            line_starts: OnceLock::new(),
            line_index: OnceLock::new(),
            index: OnceLock::new(),
            diagnostics: DiagnosticsCache::default(),
            failure,
        }
    }

    /// This file seeing `prelude`, the macros of the headers it includes
    /// ([`crate::includes`]): a fresh `FileData`, so that nothing computed without the
    /// headers' macros is kept.
    pub(crate) fn with_prelude(&self, prelude: Option<Arc<kernaut_syntax::Prelude>>) -> FileData {
        FileData::new(self.source.with_prelude(prelude), self.failure.clone())
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

    /// The slot behind [`FileData::accesses`], for the rules to fill or borrow.
    pub(crate) fn accesses_slot(&self) -> &OnceLock<Vec<SharedAccess>> {
        &self.accesses
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
    let start = floor_char_boundary(old, range.start.min(range.end));
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

/// A file of the host, named by the host's path table ([`AnalysisHost::file_id`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// The path table: every path the host has seen, by id and id by path. Ids are never
/// reused, so a closed file's id stays meaningful.
#[derive(Clone, Debug, Default)]
pub struct FileSet {
    paths: Vec<Arc<str>>,
    ids: FxHashMap<Arc<str>, FileId>,
}

impl FileSet {
    /// The id of `path`, allocating one the first time.
    pub fn intern(&mut self, path: &str) -> FileId {
        if let Some(id) = self.ids.get(path) {
            return *id;
        }
        let id = FileId(u32::try_from(self.paths.len()).unwrap_or(u32::MAX));
        let path: Arc<str> = Arc::from(path);
        self.paths.push(path.clone());
        self.ids.insert(path, id);
        id
    }

    /// The id of `path`, if it has one.
    pub fn get(&self, path: &str) -> Option<FileId> {
        self.ids.get(path).copied()
    }

    /// The path of `id`.
    pub fn path(&self, id: FileId) -> Option<&str> {
        self.paths.get(id.0 as usize).map(|p| &**p)
    }
}

/// A source parsed away from the host's thread (a large file's parse takes a while), to
/// hand to [`Change::set_parsed_file`].
#[derive(Clone, Debug)]
pub struct ParsedFile(SourceFile);

impl ParsedFile {
    /// Parses `text`; never fails (a panic in the parser is caught and reported when the
    /// file is queried).
    pub fn parse(text: &str) -> ParsedFile {
        ParsedFile(parse_guarded(text).0)
    }
}

/// One step of a [`Change`].
#[derive(Clone, Debug)]
enum ChangeOp {
    Set(FileId, String),
    Parsed(FileId, ParsedFile),
    Edit(FileId, TextRange, String),
    Remove(FileId),
    Config(Box<AnalysisConfig>),
    DirConfig(String, Option<KernautConfig>),
    Compiled(FileId, Option<CompiledFacts>),
}

/// Everything that changes between two revisions, applied in order by
/// [`AnalysisHost::apply_change`]: file contents, edits of several files, the
/// configuration and the per-directory `.kernaut.toml` settings.
#[derive(Clone, Debug, Default)]
pub struct Change {
    ops: Vec<ChangeOp>,
}

impl Change {
    /// An empty change.
    pub fn new() -> Change {
        Change::default()
    }

    /// Whether the change does nothing.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Sets a file's whole text (opening it, or replacing it), parsing from scratch.
    pub fn set_file(&mut self, file: FileId, text: impl Into<String>) -> &mut Change {
        self.ops.push(ChangeOp::Set(file, text.into()));
        self
    }

    /// Sets a file to a text parsed already (see [`ParsedFile::parse`]).
    pub fn set_parsed_file(&mut self, file: FileId, parsed: ParsedFile) -> &mut Change {
        self.ops.push(ChangeOp::Parsed(file, parsed));
        self
    }

    /// Replaces `range` (bytes) of a file with `new_text`, re-parsing incrementally. A
    /// range past the end is clamped; an edit of a file the host does not have is ignored.
    pub fn edit_file(
        &mut self,
        file: FileId,
        range: TextRange,
        new_text: impl Into<String>,
    ) -> &mut Change {
        self.ops.push(ChangeOp::Edit(file, range, new_text.into()));
        self
    }

    /// Removes a file (closed in the editor).
    pub fn remove_file(&mut self, file: FileId) -> &mut Change {
        self.ops.push(ChangeOp::Remove(file));
        self
    }

    /// Replaces the configuration (the wiki is not reloaded).
    pub fn set_config(&mut self, config: AnalysisConfig) -> &mut Change {
        self.ops.push(ChangeOp::Config(Box::new(config)));
        self
    }

    /// Sets (or with `None` forgets) what the compiler reported for a file: the
    /// occupancy model then uses its register counts and kernels that spill get the
    /// `resources/spills` diagnostic. It is kept across edits until replaced (a front end
    /// compiles again on save).
    pub fn set_compiled(&mut self, file: FileId, facts: Option<CompiledFacts>) -> &mut Change {
        self.ops.push(ChangeOp::Compiled(file, facts));
        self
    }

    /// Sets (or with `None` removes) the `.kernaut.toml` of a directory: it applies to
    /// the files below it, the nearest one winning.
    pub fn set_dir_config(
        &mut self,
        dir: impl Into<String>,
        config: Option<KernautConfig>,
    ) -> &mut Change {
        self.ops.push(ChangeOp::DirConfig(dir.into(), config));
        self
    }
}

/// Why a query gave no answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// A change arrived after the snapshot was taken: ask again on a fresh one.
    #[error("cancelled: the file or configuration changed")]
    Cancelled,
    /// The host has no such file.
    #[error("no such file")]
    UnknownFile,
    /// A bug: the analysis panicked. The process goes on; report it.
    #[error("internal error in {query}: {message}")]
    Failed {
        /// Which query failed.
        query: &'static str,
        /// The panic's message.
        message: String,
    },
}

/// The answer of a query, or why there is none.
pub type Cancellable<T> = Result<T, QueryError>;

/// The mutable side: files, configuration and the wiki. Hand out snapshots with
/// [`AnalysisHost::analysis`] and change it with [`AnalysisHost::apply_change`].
#[derive(Debug)]
pub struct AnalysisHost {
    config: Arc<AnalysisConfig>,
    knowledge: Option<Arc<Knowledge>>,
    file_set: FileSet,
    files: Arc<FxHashMap<String, Arc<FileData>>>,
    dir_configs: Arc<BTreeMap<String, KernautConfig>>,
    compiled: Arc<FxHashMap<String, Arc<CompiledFacts>>>,
    /// Model results by their inputs, shared by every snapshot and kept across edits.
    cache: Arc<ReportCache>,
    /// The revision counter: bumped by every change, read by snapshots to see whether
    /// they are still current.
    revision: Arc<AtomicU64>,
}

impl AnalysisHost {
    /// A host with no files and no wiki loaded (hovers then show only the code's facts;
    /// see [`AnalysisHost::load_knowledge`] and [`AnalysisHost::set_knowledge`]).
    pub fn new(config: AnalysisConfig) -> AnalysisHost {
        if config.threads > 0 {
            kernaut_syntax::cancel::set_max_threads(config.threads);
        }
        AnalysisHost {
            config: Arc::new(config),
            knowledge: None,
            file_set: FileSet::default(),
            files: Arc::new(FxHashMap::default()),
            dir_configs: Arc::new(BTreeMap::new()),
            compiled: Arc::new(FxHashMap::default()),
            cache: Arc::new(ReportCache::default()),
            revision: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Loads the wiki the configuration names (built-in pages and extra folders) and
    /// builds its index. Problems with single pages are in the wiki's diagnostics.
    pub fn load_knowledge(&mut self) -> Result<(), KnowledgeError> {
        let k = Knowledge::load(&self.config.wiki)?;
        self.set_knowledge(Arc::new(k));
        Ok(())
    }

    /// Uses an already loaded wiki (shared between hosts, or loaded by the front end).
    pub fn set_knowledge(&mut self, knowledge: Arc<Knowledge>) {
        self.bump();
        self.knowledge = Some(knowledge);
    }

    /// The configuration.
    pub fn config(&self) -> &AnalysisConfig {
        &self.config
    }

    /// The id of `path`, allocated the first time (a file needs an id before a
    /// [`Change`] can name it).
    pub fn file_id(&mut self, path: &str) -> FileId {
        self.file_set.intern(path)
    }

    /// The path table.
    pub fn file_set(&self) -> &FileSet {
        &self.file_set
    }

    /// The current revision (bumped by every change).
    pub fn revision(&self) -> u64 {
        self.revision.load(Ordering::SeqCst)
    }

    /// Cancels every query running on an older snapshot.
    fn bump(&mut self) {
        self.revision.fetch_add(1, Ordering::SeqCst);
    }

    /// Applies a change: first cancels every query still running on a snapshot, then
    /// applies the steps in order.
    pub fn apply_change(&mut self, change: Change) {
        self.bump();
        for op in change.ops {
            match op {
                ChangeOp::Set(id, text) => {
                    let (source, failure) = parse_guarded(&text);
                    self.put(id, FileData::new(source, failure));
                }
                ChangeOp::Parsed(id, parsed) => self.put(id, FileData::new(parsed.0, None)),
                ChangeOp::Edit(id, range, text) => self.edit(id, range, &text),
                ChangeOp::Remove(id) => {
                    if let Some(path) = self.file_set.path(id) {
                        let path = path.to_string();
                        Arc::make_mut(&mut self.files).remove(&path);
                    }
                }
                ChangeOp::Config(config) => {
                    if config.threads > 0 {
                        kernaut_syntax::cancel::set_max_threads(config.threads);
                    }
                    self.config = Arc::new(*config);
                }
                ChangeOp::Compiled(id, facts) => {
                    if let Some(path) = self.file_set.path(id) {
                        let path = path.to_string();
                        let table = Arc::make_mut(&mut self.compiled);
                        match facts {
                            Some(f) => table.insert(path, Arc::new(f)),
                            None => table.remove(&path),
                        };
                    }
                }
                ChangeOp::DirConfig(dir, config) => {
                    let dir = dir.trim_end_matches('/').to_string();
                    let table = Arc::make_mut(&mut self.dir_configs);
                    match config {
                        Some(c) => table.insert(dir, c),
                        None => table.remove(&dir),
                    };
                }
            }
        }
        crate::includes::refresh_preludes(&mut self.files);
    }

    fn put(&mut self, id: FileId, data: FileData) {
        let Some(path) = self.file_set.path(id) else {
            return;
        };
        let path = path.to_string();
        Arc::make_mut(&mut self.files).insert(path, Arc::new(data));
    }

    /// Adds or replaces a file (a one-step [`Change`]) and returns its id.
    pub fn set_file(&mut self, path: &str, text: &str) -> FileId {
        let id = self.file_id(path);
        let mut change = Change::new();
        change.set_file(id, text);
        self.apply_change(change);
        id
    }

    /// Replaces `range` of a file with `new_text` (a one-step [`Change`]). Returns
    /// whether the file exists.
    pub fn apply_edit(&mut self, path: &str, range: TextRange, new_text: &str) -> bool {
        let Some(id) = self.file_set.get(path) else {
            return false;
        };
        if !self.files.contains_key(path) {
            return false;
        }
        let mut change = Change::new();
        change.edit_file(id, range, new_text);
        self.apply_change(change);
        true
    }

    fn edit(&mut self, id: FileId, range: TextRange, new_text: &str) {
        let Some(path) = self.file_set.path(id) else {
            return;
        };
        let files = Arc::make_mut(&mut self.files);
        let Some(entry) = files.get_mut(path) else {
            return;
        };
        let old = &entry.source;
        let edited = guarded(|| {
            let mut source = old.clone();
            source.apply_edit(range.clone(), new_text);
            source
        });
        let (source, failure) = match edited {
            Some(s) => (s, None),
            None => {
                // The incremental path failed: splice the text here and parse afresh.
                let old = old.text();
                let start = floor_char_boundary(old, range.start.min(range.end));
                let end = floor_char_boundary(old, range.end.max(range.start));
                let text = format!("{}{}{}", &old[..start], new_text, &old[end..]);
                parse_guarded(&text)
            }
        };
        let starts = entry.line_starts.get().and_then(|starts| {
            spliced_line_starts(starts, old.text(), source.text(), &range, new_text)
        });
        let data = FileData::new(source, failure);
        if let Some(starts) = starts {
            let _ = data.line_starts.set(starts);
        }
        *entry = Arc::new(data);
    }

    /// An immutable snapshot of the current state.
    pub fn analysis(&self) -> Analysis {
        Analysis {
            config: self.config.clone(),
            knowledge: self.knowledge.clone(),
            files: self.files.clone(),
            file_set: Arc::new(self.file_set.clone()),
            dir_configs: self.dir_configs.clone(),
            compiled: self.compiled.clone(),
            cache: self.cache.clone(),
            revision: self.revision.clone(),
            at: self.revision.load(Ordering::SeqCst),
        }
    }
}

/// Parses `text`; a panic in the parser gives an empty file and the panic's message.
fn parse_guarded(text: &str) -> (SourceFile, Option<String>) {
    match catch_unwind(AssertUnwindSafe(|| SourceFile::parse(text))) {
        Ok(s) => (s, None),
        Err(e) => (SourceFile::parse(""), Some(panic_message(&*e))),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs `f`, turning a panic into `None` (inside queries, for the parts of an answer that
/// may fail alone; cancellation still unwinds to the query's guard).
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(e) if e.is::<kernaut_syntax::cancel::Cancelled>() => std::panic::resume_unwind(e),
        Err(_) => None,
    }
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

/// An immutable, cheaply cloned view of the host's files, configuration and wiki, at one
/// revision. Every query returns [`Cancellable`]: `Err(QueryError::Cancelled)` once the
/// host has moved on, `Err(QueryError::Failed)` when the analysis hit a bug.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub(crate) config: Arc<AnalysisConfig>,
    pub(crate) knowledge: Option<Arc<Knowledge>>,
    pub(crate) files: Arc<FxHashMap<String, Arc<FileData>>>,
    file_set: Arc<FileSet>,
    dir_configs: Arc<BTreeMap<String, KernautConfig>>,
    compiled: Arc<FxHashMap<String, Arc<CompiledFacts>>>,
    pub(crate) cache: Arc<ReportCache>,
    revision: Arc<AtomicU64>,
    at: u64,
}

const _: () = {
    fn send_sync<T: Send + Sync>() {}
    let _ = send_sync::<Analysis>;
    let _ = send_sync::<AnalysisHost>;
};

/// The settings that apply to one file: the host's configuration with the nearest
/// `.kernaut.toml` above the file laid over it.
#[derive(Clone, Debug, PartialEq)]
pub struct FileConfig {
    /// The target architecture.
    pub arch: Arch,
    /// Whether the user chose it (a setting, a flag, or a `.kernaut.toml`).
    pub arch_configured: bool,
    /// The rule levels.
    pub rules: RulesConfig,
    /// Registers per thread to assume, when the `.kernaut.toml` sets it (otherwise
    /// [`AnalysisConfig::default_regs_per_thread`]).
    pub registers: Option<u32>,
    /// The directory of the `.kernaut.toml` that applies, if any.
    pub config_dir: Option<String>,
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

    /// Whether a change has arrived since this snapshot was taken.
    pub fn is_cancelled(&self) -> bool {
        self.revision.load(Ordering::Relaxed) != self.at
    }

    /// The id of a path the host knows.
    pub fn file_id(&self, path: &str) -> Option<FileId> {
        self.file_set.get(path)
    }

    /// The path of a file.
    pub fn path(&self, file: FileId) -> Option<&str> {
        self.file_set.path(file)
    }

    /// The files of the snapshot, sorted by path.
    pub fn files(&self) -> Vec<FileId> {
        let mut v: Vec<(&str, FileId)> = self
            .files
            .keys()
            .filter_map(|p| Some((p.as_str(), self.file_set.get(p)?)))
            .collect();
        v.sort_unstable();
        v.into_iter().map(|(_, id)| id).collect()
    }

    /// Runs a query under the snapshot's cancellation token, turning a cancellation and
    /// a panic into their errors.
    fn query<T>(&self, name: &'static str, f: impl FnOnce() -> T) -> Cancellable<T> {
        if self.is_cancelled() {
            return Err(QueryError::Cancelled);
        }
        let token = CancelToken::new(self.revision.clone(), self.at);
        match catch_unwind(AssertUnwindSafe(|| {
            kernaut_syntax::cancel::with_token(Some(token), f)
        })) {
            Ok(v) => Ok(v),
            Err(e) if e.is::<kernaut_syntax::cancel::Cancelled>() => Err(QueryError::Cancelled),
            Err(e) => Err(QueryError::Failed {
                query: name,
                message: panic_message(&*e),
            }),
        }
    }

    /// The path and data of a file, or why there is none.
    fn data(&self, file: FileId) -> Cancellable<(&str, &FileData)> {
        let path = self.file_set.path(file).ok_or(QueryError::UnknownFile)?;
        let (path, data) = self
            .files
            .get_key_value(path)
            .ok_or(QueryError::UnknownFile)?;
        if let Some(message) = &data.failure {
            return Err(QueryError::Failed {
                query: "parse",
                message: message.clone(),
            });
        }
        Ok((path.as_str(), data))
    }

    /// The settings that apply to a file (its directory's `.kernaut.toml` over the host's
    /// configuration).
    pub fn file_config(&self, file: FileId) -> FileConfig {
        let path = self.file_set.path(file).unwrap_or("");
        self.config_for_path(path)
    }

    pub(crate) fn config_for_path(&self, path: &str) -> FileConfig {
        let mut out = FileConfig {
            arch: self.config.arch,
            arch_configured: self.config.arch_configured,
            rules: self.config.rules.clone(),
            registers: None,
            config_dir: None,
        };
        // The nearest directory above the file with a configuration.
        let mut dir = path;
        let found = loop {
            let Some(i) = dir.rfind('/') else {
                break self.dir_configs.get("").map(|c| ("", c));
            };
            dir = &dir[..i];
            if let Some(c) = self.dir_configs.get(dir) {
                break Some((dir, c));
            }
        };
        if let Some((dir, c)) = found {
            out.config_dir = Some(dir.to_string());
            // A target the user chose in the front end (a flag, an editor setting) wins
            // over the file's.
            if let (Some(arch), false) = (c.arch, self.config.arch_configured) {
                out.arch = arch;
                out.arch_configured = true;
            }
            for (rule, level) in &c.rules.levels {
                out.rules.levels.insert(rule.clone(), *level);
            }
            out.registers = c.registers;
        }
        out
    }

    /// This snapshot with the configuration of `path`'s directory (itself when nothing
    /// differs).
    fn for_path(&self, path: &str) -> std::borrow::Cow<'_, Analysis> {
        if self.dir_configs.is_empty() {
            return std::borrow::Cow::Borrowed(self);
        }
        let fc = self.config_for_path(path);
        if fc.arch == self.config.arch && fc.arch_configured == self.config.arch_configured {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut config = (*self.config).clone();
        config.arch = fc.arch;
        config.arch_configured = fc.arch_configured;
        let mut a = self.clone();
        a.config = Arc::new(config);
        std::borrow::Cow::Owned(a)
    }

    /// The parsed file (for features such as the rules that walk it).
    pub fn source_file(&self, file: FileId) -> Cancellable<&SourceFile> {
        Ok(&self.data(file)?.1.source)
    }

    /// The text of a file.
    pub fn text(&self, file: FileId) -> Cancellable<&str> {
        Ok(self.data(file)?.1.source.text())
    }

    /// The line index of a file (byte offsets ↔ lines and columns in every encoding).
    pub fn line_index(&self, file: FileId) -> Cancellable<Arc<LineIndex>> {
        let (_, data) = self.data(file)?;
        Ok(data
            .line_index
            .get_or_init(|| Arc::new(LineIndex::new(data.source.text())))
            .clone())
    }

    /// The syntax errors of a file (at most 200).
    pub fn syntax_errors(&self, file: FileId) -> Cancellable<Vec<SyntaxError>> {
        let (_, f) = self.data(file)?;
        self.query("syntax_errors", || f.source.errors())
    }

    /// The symbol at a byte offset, as the user means it.
    pub fn symbol_at(&self, file: FileId, offset: usize) -> Cancellable<Option<SymbolRef>> {
        let (_, f) = self.data(file)?;
        self.query("symbol_at", || f.source.symbol_at(offset))
    }

    /// What a hover at a byte offset shows, or `None` where there is nothing to say.
    pub fn hover(&self, file: FileId, offset: usize) -> Cancellable<Option<HoverResult>> {
        let (path, _) = self.data(file)?;
        self.query("hover", || {
            crate::hover::hover(&self.for_path(path), path, offset)
        })
    }

    /// The pitfall rules' diagnostics for a file, at the rule levels of its configuration
    /// (none without a wiki: every rule cites it).
    pub fn diagnostics(&self, file: FileId) -> Cancellable<Vec<RuleDiagnostic>> {
        let (path, _) = self.data(file)?;
        if self.knowledge().is_none() {
            return Ok(Vec::new());
        }
        self.query("diagnostics", || {
            self.diagnostics_at(path, true)
                .map(|d| (*d).clone())
                .unwrap_or_default()
        })
    }

    /// The diagnostics of the file at `path`, for features inside a query: computed once
    /// per version of the file and configuration, and shared with
    /// [`Analysis::diagnostics`]. With `compute` false, only what is already computed
    /// (`None` otherwise).
    pub(crate) fn diagnostics_at(
        &self,
        path: &str,
        compute: bool,
    ) -> Option<Arc<Vec<RuleDiagnostic>>> {
        let (path, f) = self.files.get_key_value(path)?;
        if f.failure.is_some() {
            return None;
        }
        let k = self.knowledge.as_ref()?;
        let fc = self.config_for_path(path);
        let compiled = self.compiled.get(path.as_str());
        let key = DiagnosticsKey {
            config: fc.clone(),
            knowledge: Arc::as_ptr(k) as usize,
            compiled: compiled.map_or(0, |c| Arc::as_ptr(c) as usize),
            launches: self.launch_fingerprint(path),
        };
        {
            let cached = f
                .diagnostics
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((k, d)) = cached.as_ref() {
                if *k == key {
                    return Some(d.clone());
                }
            }
        }
        if !compute {
            return None;
        }
        // No lock is held while the rules run (they reach cancellation checkpoints).
        let out = Arc::new(self.run_rules(path, f, k, &fc, compiled.map(|c| &**c)));
        *f.diagnostics
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((key, out.clone()));
        Some(out)
    }

    /// A hash of what the model reads from files other than `path`: their launches'
    /// kernels and blocks, and the default block.
    fn launch_fingerprint(&self, path: &str) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = crate::reports::FxHasher::default();
        self.config.default_block.hash(&mut h);
        if self.files.len() > 1 {
            let mut others: Vec<(&String, &Arc<FileData>)> =
                self.files.iter().filter(|(p, _)| *p != path).collect();
            others.sort_unstable_by_key(|(p, _)| *p);
            for (p, f) in others {
                p.hash(&mut h);
                for l in &f.facts().launches {
                    (&l.kernel, l.block.value, &l.block.text).hash(&mut h);
                    (&l.shared_bytes_text, l.shared_bytes).hash(&mut h);
                }
            }
        }
        h.finish()
    }

    fn run_rules(
        &self,
        path: &str,
        f: &FileData,
        k: &Knowledge,
        fc: &FileConfig,
        compiled: Option<&CompiledFacts>,
    ) -> Vec<RuleDiagnostic> {
        let settings = RuleSettings {
            arch: fc.arch,
            arch_configured: fc.arch_configured,
            levels: &fc.rules,
        };
        let ctx = RuleContext::with_settings(&f.source, k, settings)
            .in_host(self, path)
            .with_shared_accesses(f.accesses_slot());
        let mut out = crate::rules::check(&ctx);
        if let Some(compiled) = compiled {
            let kernels: Vec<(String, TextRange, bool)> = f
                .facts()
                .kernels
                .iter()
                .map(|k| {
                    (
                        k.name.clone(),
                        k.name_range.clone(),
                        k.launch_bounds.is_some(),
                    )
                })
                .collect();
            out.extend(crate::compiled::spill_diagnostics(
                compiled,
                &kernels,
                &fc.arch.to_string(),
                fc.rules.level(crate::compiled::SPILLS_RULE),
            ));
            crate::compiled::check_l1_mode_against_sass(
                compiled,
                &f.facts().kernels,
                &fc.arch.to_string(),
                &mut out,
            );
            out.sort_by(|a, b| {
                (a.range.start, a.range.end, a.rule).cmp(&(b.range.start, b.range.end, b.rule))
            });
        }
        out
    }

    /// What the compiler reported for a file, if a front end handed it over.
    pub fn compiled(&self, file: FileId) -> Option<&CompiledFacts> {
        let path = self.file_set.path(file)?;
        self.compiled.get(path).map(|c| &**c)
    }

    /// The compiled instantiations of kernel `short` of the file at `path`, those for
    /// the target first.
    pub(crate) fn compiled_kernel(
        &self,
        path: &str,
        short: &str,
    ) -> Option<(&CompiledFacts, Vec<&CompiledKernel>)> {
        let facts = self.compiled.get(path)?;
        let v = facts.kernel(short, &self.config.arch.to_string());
        (!v.is_empty()).then_some((&**facts, v))
    }

    /// Every fact syntax found in a file (kernels, shared memory, launches, constants).
    pub fn file_facts(&self, file: FileId) -> Cancellable<&FileFacts> {
        let (_, f) = self.data(file)?;
        self.query("file_facts", || f.facts())
    }

    /// The kernels of a file, each with its launch sites (from every file), shared
    /// declarations and attributes.
    pub fn kernel_facts(&self, file: FileId) -> Cancellable<Vec<KernelFacts<'_>>> {
        let (path, _) = self.data(file)?;
        self.query("kernel_facts", || self.kernel_facts_inner(path))
    }

    /// Every shared-memory access of a file, with its index lowered over the thread
    /// index, in document order.
    pub fn shared_accesses(&self, file: FileId) -> Cancellable<&[SharedAccess]> {
        let (_, f) = self.data(file)?;
        self.query("shared_accesses", || f.accesses())
    }

    /// The occupancy of `kernel` (defined in `file`) at the launch configuration found.
    pub fn occupancy(&self, file: FileId, kernel: &str) -> Cancellable<Option<OccupancyReport>> {
        let (path, _) = self.data(file)?;
        self.query("occupancy", || {
            crate::reports::occupancy_for(&self.for_path(path), path, kernel)
        })
    }

    /// The bank model run on one access of `file` (from [`Analysis::shared_accesses`]).
    pub fn bank(&self, file: FileId, access: &SharedAccess) -> Cancellable<Option<BankAnalysis>> {
        let (path, _) = self.data(file)?;
        self.query("bank", || {
            crate::reports::bank_report(&self.for_path(path), path, access)
        })
    }

    pub(crate) fn file(&self, path: &str) -> Option<&FileData> {
        self.files.get(path).map(|f| &**f)
    }

    /// The text of the file at `path`.
    pub(crate) fn text_at(&self, path: &str) -> Option<&str> {
        self.file(path).map(|f| f.source.text())
    }

    /// The occupancy of `kernel` (defined in `path`), for features inside a query.
    pub(crate) fn occupancy_at(&self, path: &str, kernel: &str) -> Option<OccupancyReport> {
        guarded(|| crate::reports::occupancy_for(self, path, kernel)).flatten()
    }

    /// The bank model of an access of `path`, for features inside a query.
    pub(crate) fn bank_at(&self, path: &str, access: &SharedAccess) -> Option<BankAnalysis> {
        guarded(|| crate::reports::bank_report(self, path, access)).flatten()
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
                let static_shared_bytes =
                    crate::model::kernel_static_shared(facts, &k.name).exact();
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
                    let _ = host.set_file("/f.cu", text);
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
    fn a_panic_in_a_query_is_a_failure_not_an_empty_answer() {
        let mut host = AnalysisHost::new(AnalysisConfig::default());
        let _ = host.set_file("/f.cu", "int x;");
        let a = host.analysis();
        let r: Cancellable<()> = a.query("test", || panic!("boom"));
        assert_eq!(
            r,
            Err(QueryError::Failed {
                query: "test",
                message: "boom".into()
            })
        );
        // Cancellation inside the query is told apart from failure.
        let r: Cancellable<()> = a.query("test", || {
            std::panic::resume_unwind(Box::new(kernaut_syntax::cancel::Cancelled))
        });
        assert_eq!(r, Err(QueryError::Cancelled));
        // `guarded` inside a query passes cancellation on.
        let r: Cancellable<Option<()>> = a.query("test", || {
            guarded(|| std::panic::resume_unwind(Box::new(kernaut_syntax::cancel::Cancelled)))
        });
        assert_eq!(r, Err(QueryError::Cancelled));
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
