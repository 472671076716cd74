//! The path table ([`FileId`], [`FileSet`]) and the changes a front end hands the
//! host ([`Change`], [`ParsedFile`]).

use std::sync::Arc;

use kernaut_syntax::{SourceFile, TextRange};
use rustc_hash::FxHashMap;

use super::*;
use crate::compiled::CompiledFacts;
use crate::config::KernautConfig;

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
pub struct ParsedFile(pub(super) SourceFile);

impl ParsedFile {
    /// Parses `text`; never fails (a panic in the parser is caught and reported when the
    /// file is queried).
    pub fn parse(text: &str) -> ParsedFile {
        ParsedFile(parse_guarded(text).0)
    }

    /// The parse of `file` in `analysis`, to edit away from the host's thread
    /// ([`ParsedFile::apply_edit`]: a large file's re-parse takes a while) and hand back
    /// with [`Change::set_parsed_file`]; `None` for a file the snapshot does not have.
    pub fn of(analysis: &Analysis, file: FileId) -> Option<ParsedFile> {
        let path = analysis.file_set.path(file)?;
        let data = analysis.files.get(path)?;
        Some(ParsedFile(data.with_trees().source.clone()))
    }

    /// The text.
    pub fn text(&self) -> &str {
        self.0.text()
    }

    /// Replaces `range` (bytes, clamped to the text) with `new_text`, re-parsing
    /// incrementally, as [`Change::edit_file`] does in the host; afresh when the
    /// incremental path fails.
    pub fn apply_edit(&mut self, range: TextRange, new_text: &str) {
        let edited = guarded(|| {
            let mut source = self.0.clone();
            source.apply_edit(range.clone(), new_text);
            source
        });
        self.0 = match edited {
            Some(source) => source,
            None => {
                let old = self.0.text();
                let start = crate::line_index::floor_char_boundary(old, range.start.min(range.end));
                let end = crate::line_index::floor_char_boundary(old, range.end.max(range.start));
                parse_guarded(&format!("{}{}{}", &old[..start], new_text, &old[end..])).0
            }
        };
    }
}

/// One step of a [`Change`].
#[derive(Clone, Debug)]
pub(super) enum ChangeOp {
    Set(FileId, String),
    Parsed(FileId, ParsedFile),
    Edit(FileId, TextRange, String),
    Remove(FileId),
    Config(Box<AnalysisConfig>),
    DirConfig(String, Option<KernautConfig>),
    Compiled(FileId, Option<CompiledFacts>),
    Build(FileId, Option<crate::config::FileBuild>),
}

/// Everything that changes between two revisions, applied in order by
/// [`AnalysisHost::apply_change`]: file contents, edits of several files, the
/// configuration and the per-directory `.kernaut.toml` settings.
#[derive(Clone, Debug, Default)]
pub struct Change {
    pub(super) ops: Vec<ChangeOp>,
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

    /// Sets (or with `None` forgets) what the build says about a file (its targets, `-D`
    /// macros and include folders), as the project loader found it.
    pub fn set_build(
        &mut self,
        file: FileId,
        build: Option<crate::config::FileBuild>,
    ) -> &mut Change {
        self.ops.push(ChangeOp::Build(file, build));
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
