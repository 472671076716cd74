//! The per-file data: the parsed source and what is computed from it on first use
//! (facts, accesses, line starts, name look-up tables, the rules' last run).

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, OnceLock};

use kernaut_syntax::{
    FileFacts, FuncAttributeCall, LaunchSite, SharedAccess, SharedDecl, SourceFile, TextRange,
};
use rustc_hash::FxBuildHasher;

use super::*;
use crate::line_index::{floor_char_boundary, LineIndex};

/// One file: the parsed source and what is computed from it on first use.
#[derive(Clone, Debug)]
pub struct FileData {
    /// The parsed source (facts, and syntax trees unless dropped).
    pub source: SourceFile,
    /// The file's `__shared__` accesses, found on first use.
    pub accesses: OnceLock<Vec<SharedAccess>>,
    /// The byte offset where each line starts; carried across edits (see
    /// `spliced_line_starts`) once built.
    pub line_starts: OnceLock<Vec<usize>>,
    /// The line index, built on first use.
    pub line_index: OnceLock<Arc<LineIndex>>,
    /// The file's name tables, built on first use.
    pub index: OnceLock<FileIndex>,
    /// The rules' diagnostics of this version of the file, for one configuration: hover
    /// and the diagnostics query of `kernaut-ide` share one run.
    pub diagnostics: DiagnosticsCache,
    /// The last rules run on an earlier version of the file (carried across edits): what
    /// an incremental run reuses for the items an edit did not reach.
    pub previous: Option<Arc<super::RulesRun>>,
    /// Why the parse failed (a bug in the parser), reported by every query on the file.
    pub failure: Option<String>,
    /// Whether the syntax trees were dropped ([`FileData::without_trees`]): the facts
    /// stay, and the rules parse the text again when they run.
    pub trees_dropped: bool,
    /// Whether the text is not parsed yet ([`SourceFile::unparsed`]): the host parses it,
    /// with the prelude its headers give, at the end of the change that set it.
    pub unparsed: bool,
    /// What include resolution reads of the text, found on first use.
    pub(crate) header: OnceLock<HeaderFacts>,
    /// The summaries of the file's device functions, for the files that include it
    /// ([`FileData::helper_summaries`]).
    pub(crate) helpers: OnceLock<Arc<Vec<kernaut_syntax::HelperSummary>>>,
    /// What the file's prelude was made of when it was last found the same: a hash of
    /// its build's macros, its headers and their `#define`s, and the hashes of the paths
    /// of those headers and of the last segments of every include name they and the file
    /// hold (a change of another file reaches the prelude only through one of those).
    pub(crate) prelude_key: OnceLock<(u64, Box<[u64]>)>,
    /// The calls of host functions by name ([`super::calls_named`]) last looked up in
    /// this version of the file, with a hash of the names asked: a file no edit reaches
    /// keeps them across revisions (its trees may be dropped, and then each look-up
    /// would parse it again).
    pub(crate) calls_by_name: CallsCache,
}

/// Calls, each with the name of the function it calls (`None`: its address used).
pub(crate) type NamedCalls = Arc<super::launches::CallsOf>;

/// [`FileData::calls_by_name`]: the calls and the hash of the names asked, for each
/// level of callers last asked about. A clone starts empty.
#[derive(Debug, Default)]
pub(crate) struct CallsCache(pub(crate) Mutex<Vec<(u64, NamedCalls)>>);

impl Clone for CallsCache {
    fn clone(&self) -> CallsCache {
        CallsCache::default()
    }
}

/// What the host's include resolution reads of a file: its quoted and angled includes
/// written as `#include` lines ([`crate::includes::include_lines`]), its `#define`s and
/// a hash of them.
#[derive(Clone, Debug)]
pub(crate) struct HeaderFacts {
    pub(crate) includes: Arc<str>,
    pub(crate) macros: Arc<Vec<kernaut_syntax::MacroDef>>,
    pub(crate) constants: Arc<Vec<(String, String)>>,
    pub(crate) macros_hash: u64,
}

/// The last run of the rules on one version of a file, with what it depended on
/// besides the text. A clone starts empty (a cloned file is about to change).
#[derive(Debug, Default)]
pub struct DiagnosticsCache(pub Mutex<Option<Arc<super::RulesRun>>>);

impl Clone for DiagnosticsCache {
    fn clone(&self) -> DiagnosticsCache {
        DiagnosticsCache::default()
    }
}

impl FileData {
    /// The last rules run on this version of the file, else the one carried from an
    /// earlier version.
    pub fn last_run(&self) -> Option<Arc<super::RulesRun>> {
        let cached = self
            .diagnostics
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        cached.or_else(|| self.previous.clone())
    }
}

/// What a file's diagnostics depend on besides its text: the file's configuration,
/// the wiki and the compiled facts (by identity).
#[derive(Clone, Debug, PartialEq)]
pub struct DiagnosticsKey {
    /// The file's configuration (targets, rule levels).
    pub config: FileConfig,
    /// The wiki, by identity.
    pub knowledge: usize,
    /// The compiled facts, by identity.
    pub compiled: usize,
    /// `launch_fingerprint`: the rules' model reads launches in every file.
    pub launches: u64,
}

/// Look-up tables over a file's facts, by function or kernel name.
#[derive(Clone, Debug, Default)]
pub struct FileIndex {
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

impl FileData {
    /// A file of `source`; `failure` says why its parse failed, if it did.
    pub fn new(source: SourceFile, failure: Option<String>) -> FileData {
        FileData {
            source,
            accesses: OnceLock::new(),
            line_starts: OnceLock::new(),
            line_index: OnceLock::new(),
            index: OnceLock::new(),
            diagnostics: DiagnosticsCache::default(),
            previous: None,
            failure,
            trees_dropped: false,
            unparsed: false,
            header: OnceLock::new(),
            helpers: OnceLock::new(),
            prelude_key: OnceLock::new(),
            calls_by_name: CallsCache::default(),
        }
    }

    /// What include resolution reads of the file (found on first use).
    pub(crate) fn header_facts(&self) -> &HeaderFacts {
        self.header.get_or_init(|| {
            let text = self.source.text();
            let macros = kernaut_syntax::macro_definitions(text);
            let constants = kernaut_syntax::constant_definitions(text);
            HeaderFacts {
                includes: Arc::from(crate::includes::include_lines(text)),
                macros_hash: FxBuildHasher.hash_one((&macros, &constants)),
                macros: Arc::new(macros),
                constants: Arc::new(constants),
            }
        })
    }

    /// What decides whether each of the file's device functions returns one value for
    /// the block ([`SourceFile::helper_summaries`]), found once (from trees parsed again
    /// where they were dropped): what a file that includes this one sees of its helpers.
    pub(crate) fn helper_summaries(&self) -> Arc<Vec<kernaut_syntax::HelperSummary>> {
        self.helpers
            .get_or_init(|| {
                let text = self.source.text();
                if !(text.contains("return") && text.contains("__device__")) {
                    return Arc::default();
                }
                Arc::new(self.with_trees().source.helper_summaries())
            })
            .clone()
    }

    /// A file whose text the host parses later ([`FileData::unparsed`]).
    pub fn unparsed(text: &str) -> FileData {
        FileData {
            trees_dropped: true,
            unparsed: true,
            ..FileData::new(SourceFile::unparsed(text), None)
        }
    }

    /// An unparsed file parsed (with its prelude), its facts computed and its trees
    /// dropped; a parser panic is kept as the file's failure.
    pub fn parsed_without_trees(&self) -> FileData {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.source.reparsed())) {
            Ok(source) => FileData::new(source, None).without_trees(),
            Err(e) => FileData::new(SourceFile::parse(""), Some(super::panic_message(&*e))),
        }
    }

    /// An unparsed file parsed (with its prelude) and its facts computed, keeping its
    /// trees; a parser panic is kept as the file's failure.
    pub fn parsed_with_trees(&self) -> FileData {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.source.reparsed())) {
            Ok(source) => FileData::new(source, None),
            Err(e) => FileData::new(SourceFile::parse(""), Some(super::panic_message(&*e))),
        }
    }

    /// This file without its syntax trees ([`SourceFile::without_trees`]), with its
    /// facts and their look-up tables: what the analyses of other files read of it. A
    /// host that keeps many files this way holds their texts and facts, not their trees.
    pub fn without_trees(&self) -> FileData {
        if self.unparsed {
            return self.parsed_without_trees();
        }
        if self.trees_dropped || self.failure.is_some() {
            return self.clone();
        }
        let _ = self.index();
        FileData {
            source: self.source.without_trees(),
            accesses: OnceLock::new(),
            line_starts: OnceLock::new(),
            line_index: OnceLock::new(),
            index: self.index.clone(),
            diagnostics: DiagnosticsCache::default(),
            previous: None,
            failure: None,
            trees_dropped: true,
            unparsed: false,
            header: self.header.clone(),
            helpers: self.helpers.clone(),
            prelude_key: self.prelude_key.clone(),
            calls_by_name: CallsCache::default(),
        }
    }

    /// The file with its syntax trees: parsed again when they were dropped.
    pub fn with_trees(&self) -> std::borrow::Cow<'_, FileData> {
        if !self.trees_dropped {
            return std::borrow::Cow::Borrowed(self);
        }
        std::borrow::Cow::Owned(FileData::new(self.source.reparsed(), None))
    }

    /// This file seeing `prelude`, the macros of the headers it includes
    /// ([`crate::includes`]): a fresh `FileData`, so that nothing computed without the
    /// headers' macros is kept.
    pub fn with_prelude(&self, prelude: Option<Arc<kernaut_syntax::Prelude>>) -> FileData {
        if self.unparsed {
            return FileData {
                source: self.source.with_prelude(prelude),
                ..FileData::unparsed("")
            };
        }
        if self.trees_dropped {
            // The facts must be computed with the new macros, from trees.
            let source = SourceFile::parse(self.source.text()).with_prelude(prelude);
            return FileData::new(source, None).without_trees();
        }
        FileData::new(self.source.with_prelude(prelude), self.failure.clone())
    }

    /// The 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> u32 {
        let starts = self
            .line_starts
            .get_or_init(|| line_starts(self.source.text()));
        let line = starts.partition_point(|&s| s <= offset);
        u32::try_from(line.max(1)).unwrap_or(u32::MAX)
    }

    /// The parse's facts (kernels, functions, shared declarations, launches).
    pub fn facts(&self) -> &FileFacts {
        self.source.facts()
    }

    /// The file's `__shared__` accesses (found on first use).
    pub fn accesses(&self) -> &[SharedAccess] {
        self.accesses.get_or_init(|| self.source.shared_accesses())
    }

    /// The slot behind [`FileData::accesses`], for the rules to fill or borrow.
    pub fn accesses_slot(&self) -> &OnceLock<Vec<SharedAccess>> {
        &self.accesses
    }

    /// The file's name tables (built on first use).
    pub fn index(&self) -> &FileIndex {
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
    pub fn shared_in<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a SharedDecl> {
        let shared = &self.facts().shared;
        self.index()
            .shared
            .get(name)
            .map(move |i| &shared[i])
            .filter(move |d| d.function.as_deref() == Some(name))
    }

    /// The launches of kernels whose name without namespaces is `short`, in document
    /// order.
    pub fn launches_named<'a>(&'a self, short: &'a str) -> impl Iterator<Item = &'a LaunchSite> {
        let launches = &self.facts().launches;
        self.index()
            .launches
            .get(short)
            .map(move |i| &launches[i])
            .filter(move |l| short_name(&l.kernel) == short)
    }

    /// The `cudaFuncSetAttribute` calls naming a kernel whose name without namespaces
    /// is `short`, in document order.
    pub fn attributes_named<'a>(
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
pub fn line_starts(text: &str) -> Vec<usize> {
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
pub fn spliced_line_starts(
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
