//! What a chunk of a [`SourceFile`](crate::SourceFile) keeps across edits that do not
//! touch it ([`ChunkCache`]), filled by the facts, flow and access modules.

use std::sync::{Arc, Mutex, OnceLock};

use super::{Enclosing, FileFacts, FunctionScan, SharedAccess};

/// What is kept of a chunk across edits that do not touch it, with offsets relative to
/// the chunk's start (so that a chunk moved by an edit elsewhere keeps it as it is).
#[derive(Default, Debug)]
pub(crate) struct ChunkCache {
    /// The chunk's own constants, macros, namespace aliases and `using` directives.
    pub(crate) scan: OnceLock<ChunkScan>,
    /// Its functions, `__shared__` declarations, carves, launches and attribute calls,
    /// for the file-wide inputs (see [`ChunkScan::global`]) they were computed with.
    pub(crate) derived: Mutex<Option<(u64, Arc<FileFacts>)>>,
    /// What a walk of each of its functions found (calls, the parts of `enclosing`
    /// chains), by the function's end, in offsets relative to the chunk, for the
    /// file-wide inputs they were computed with.
    pub(crate) scans: Mutex<(u64, ScansByEnd)>,
    /// [`SourceFile::enclosing`](crate::SourceFile::enclosing) by offset in the chunk, for the file-wide inputs they
    /// were computed with.
    pub(crate) enclosing: OffsetCache<Enclosing>,
    /// Its shared-memory accesses, for the file-wide inputs they were computed with.
    pub(crate) accesses: AccessSlot,
    /// Its subscripts of pointer parameters (global-memory accesses), likewise.
    pub(crate) global_accesses: AccessSlot,
}

/// A chunk's accesses with the fingerprint of the file-wide inputs they were computed
/// with.
pub(crate) type AccessSlot = Mutex<Option<(u64, Arc<Vec<SharedAccess>>)>>;

/// The walks of a chunk's functions by the end of each (relative to the chunk's start):
/// more than one where error recovery nests a function in another that ends there too.
pub(crate) type ScansByEnd = rustc_hash::FxHashMap<usize, Vec<Arc<FunctionScan>>>;

/// Results kept by offset relative to a chunk's start, with the fingerprint of the
/// file-wide inputs they were computed with.
pub(crate) type OffsetCache<T> = Mutex<(u64, rustc_hash::FxHashMap<usize, Arc<Vec<T>>>)>;

#[derive(Debug)]
pub(crate) struct ChunkScan {
    pub(crate) facts: FileFacts,
    /// A hash of what this chunk gives the rest of the file: its file-scope constants and
    /// the text of its top-level declarations.
    pub(crate) global: u64,
    pub(crate) has_function: bool,
}
