//! The mutable side: [`AnalysisHost`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::launches::LaunchIndex;

use kernaut_syntax::TextRange;
use rustc_hash::FxHashMap;

use super::change::ChangeOp;
use super::file_data::*;
use super::*;
use crate::compiled::CompiledFacts;
use crate::config::KernautConfig;
use crate::knowledge::{Knowledge, KnowledgeError};
use crate::line_index::floor_char_boundary;
use crate::model_cache::ReportCache;

/// The mutable side: files, configuration and the wiki. Hand out snapshots with
/// [`AnalysisHost::analysis`] and change it with [`AnalysisHost::apply_change`].
#[derive(Debug)]
pub struct AnalysisHost {
    config: Arc<AnalysisConfig>,
    knowledge: Option<Arc<Knowledge>>,
    file_set: Arc<FileSet>,
    files: Arc<FxHashMap<String, Arc<FileData>>>,
    dir_configs: Arc<BTreeMap<String, KernautConfig>>,
    compiled: Arc<FxHashMap<String, Arc<CompiledFacts>>>,
    builds: Arc<FxHashMap<String, Arc<crate::config::FileBuild>>>,
    /// Model results by their inputs, shared by every snapshot and kept across edits.
    cache: Arc<ReportCache>,
    /// The revision counter: bumped by every change, read by snapshots to see whether
    /// they are still current.
    revision: Arc<AtomicU64>,
    /// The launch index of the current revision, built by the first snapshot that needs
    /// it and shared by every snapshot of the revision (a fresh slot after each change).
    launches: Arc<OnceLock<LaunchIndex>>,
    /// Whether files keep their syntax trees ([`AnalysisHost::set_keep_trees`]).
    keep_trees: bool,
    /// The one file that keeps its trees when the others do not
    /// ([`AnalysisHost::set_tree_keeper`]).
    keeper: Option<FileId>,
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
            file_set: Arc::default(),
            files: Arc::new(FxHashMap::default()),
            dir_configs: Arc::new(BTreeMap::new()),
            compiled: Arc::new(FxHashMap::default()),
            builds: Arc::new(FxHashMap::default()),
            cache: Arc::new(ReportCache::default()),
            revision: Arc::new(AtomicU64::new(0)),
            launches: Arc::default(),
            keep_trees: true,
            keeper: None,
        }
    }

    /// With `false`, each file set or edited from now on keeps its text and facts but not
    /// its syntax trees, and the rules parse it again when they run
    /// (the diagnostics query of `kernaut-ide`). For a batch run over a whole repository
    /// (`kernaut-lsp check`): memory grows with the texts and facts, not with every file's
    /// trees, and other files still see its launches, attribute calls and definitions.
    /// Queries other than the diagnostics find no trees in such a file. Files already
    /// held drop theirs at the next change.
    pub fn set_keep_trees(&mut self, keep: bool) {
        self.keep_trees = keep;
    }

    /// With [`AnalysisHost::set_keep_trees`] `false`: `file` keeps its syntax trees all
    /// the same (parsed once, with its headers' macros, at the end of the change that
    /// sets it), the file whose rules run next in a batch run, while the others hold
    /// only their texts and facts. The previous keeper drops its trees at the next change.
    pub fn set_tree_keeper(&mut self, file: Option<FileId>) {
        self.keeper = file;
    }

    /// Whether the file at `path` keeps its syntax trees.
    fn keeps_trees(&self, path: &str) -> bool {
        self.keep_trees
            || self
                .keeper
                .is_some_and(|k| self.file_set.path(k) == Some(path))
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
        if let Some(id) = self.file_set.get(path) {
            return id;
        }
        Arc::make_mut(&mut self.file_set).intern(path)
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
        self.launches = Arc::default();
    }

    /// Applies a change: first cancels every query still running on a snapshot, then
    /// applies the steps in order.
    pub fn apply_change(&mut self, change: Change) {
        self.bump();
        // The paths whose text or build changes: only the preludes that read them may.
        let mut changed: Option<rustc_hash::FxHashSet<String>> = Some(Default::default());
        for op in &change.ops {
            let id = match op {
                ChangeOp::Set(id, _)
                | ChangeOp::Parsed(id, _)
                | ChangeOp::Edit(id, _, _)
                | ChangeOp::Remove(id)
                | ChangeOp::Build(id, _) => *id,
                ChangeOp::Compiled(..) | ChangeOp::Config(_) | ChangeOp::DirConfig(..) => continue,
            };
            match (self.file_set.path(id), changed.as_mut()) {
                (Some(p), Some(set)) => {
                    set.insert(super::includes::normalize_path(p));
                }
                _ => changed = None,
            }
        }
        for op in change.ops {
            match op {
                // Parsed at the end of the change, with its headers' macros, one file
                // at a time.
                ChangeOp::Set(id, text) if !self.keep_trees => {
                    if let Some(path) = self.file_set.path(id) {
                        let path = path.to_string();
                        Arc::make_mut(&mut self.files)
                            .insert(path, Arc::new(FileData::unparsed(&text)));
                    }
                }
                ChangeOp::Set(id, text) => {
                    let (source, failure) = parse_guarded(&text);
                    self.put(id, FileData::new(source, failure));
                }
                ChangeOp::Parsed(id, parsed) => {
                    // A text parsed away from the host (the server's edits) keeps the last
                    // rules run, as `edit` does: the next diagnostics rerun only the
                    // functions the change reaches (`rules/incremental.rs` compares the
                    // items of both texts, however the text changed).
                    let previous = self
                        .file_set
                        .path(id)
                        .and_then(|p| self.files.get(p))
                        .and_then(|f| f.last_run());
                    let mut data = FileData::new(parsed.0, None);
                    data.previous = previous;
                    self.put(id, data)
                }
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
                ChangeOp::Build(id, build) => {
                    if let Some(path) = self.file_set.path(id) {
                        let path = path.to_string();
                        let table = Arc::make_mut(&mut self.builds);
                        match build {
                            Some(b) => table.insert(path, Arc::new(b)),
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
        super::includes::refresh_preludes(&mut self.files, &self.builds, changed.as_ref());
        if self.keep_trees {
            return;
        }
        let keeper = self.keeper.and_then(|k| self.file_set.path(k));
        let stale = |p: &str, f: &FileData| {
            if Some(p) == keeper {
                f.unparsed
            } else {
                !f.trees_dropped || f.unparsed
            }
        };
        if self.files.iter().any(|(p, f)| stale(p, f)) {
            for (p, f) in Arc::make_mut(&mut self.files).iter_mut() {
                if !stale(p, f) {
                    continue;
                }
                *f = Arc::new(if Some(p.as_str()) == keeper {
                    f.parsed_with_trees()
                } else {
                    f.without_trees()
                });
            }
        }
    }

    fn put(&mut self, id: FileId, data: FileData) {
        let Some(path) = self.file_set.path(id) else {
            return;
        };
        let path = path.to_string();
        // Dropped at once, so that a change of many files never holds all their trees.
        let data = if self.keeps_trees(&path) {
            data
        } else {
            data.without_trees()
        };
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
        let restored = entry.with_trees();
        let old = &restored.source;
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
        drop(restored);
        let previous = entry.last_run();
        let mut data = FileData::new(source, failure);
        data.previous = previous;
        if let Some(starts) = starts {
            let _ = data.line_starts.set(starts);
        }
        let data = if self.keep_trees || self.keeper == Some(id) {
            data
        } else {
            data.without_trees()
        };
        *entry = Arc::new(data);
    }

    /// An immutable snapshot of the current state.
    pub fn analysis(&self) -> Analysis {
        Analysis {
            config: self.config.clone(),
            knowledge: self.knowledge.clone(),
            files: self.files.clone(),
            file_set: self.file_set.clone(),
            dir_configs: self.dir_configs.clone(),
            compiled: self.compiled.clone(),
            builds: self.builds.clone(),
            cache: self.cache.clone(),
            revision: self.revision.clone(),
            at: self.revision.load(Ordering::SeqCst),
            launches: self.launches.clone(),
        }
    }
}
