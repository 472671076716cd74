//! Parsing, the CUDA macro mask, incremental edits and syntax errors.

use std::sync::{Arc, OnceLock};

use tree_sitter::{InputEdit, Node, Parser, Point, Range, Tree};

use crate::chunk::{self, Scanner};
use crate::data::{ChunkCache, FileFacts};
use crate::macros::{Include, Prelude};

use crate::util::{is_ident_byte, preorder, NodeExt};
use crate::TextRange;

/// A parsed CUDA file: the text, its syntax tree, and the macros blanked before parsing.
///
/// Cloning is cheap enough for snapshots (the tree is reference counted by tree-sitter).
#[derive(Clone)]
pub struct SourceFile {
    /// Shared by clones (an editor's snapshots).
    text: Arc<str>,
    masked: Arc<str>,
    /// The syntax trees, one per chunk (see [`crate::chunk`]), covering the text in order.
    /// A file under [`chunk::MIN_FILE`] bytes is one tree parsed without included ranges.
    /// Empty only when tree-sitter refused the grammar.
    chunks: Vec<Chunk>,
    /// The size chunks grow to before they are cut; 0 for a file kept as one tree.
    chunk_target: usize,
    masks: Vec<MaskedMacro>,
    /// Shared by clones (snapshots), replaced by an edit.
    pub(crate) facts: Arc<OnceLock<FileFacts>>,
    /// The macros of the headers the file includes, as a host resolved them
    /// ([`SourceFile::with_prelude`]); kept across edits.
    prelude: Option<Arc<Prelude>>,
}

/// One chunk of a file, its syntax tree (whose node offsets are those of the file) and
/// what has been computed from it, kept across edits that do not touch it.
#[derive(Clone)]
struct Chunk {
    range: TextRange,
    tree: Tree,
    cache: Arc<ChunkCache>,
}

impl Chunk {
    fn view(&self) -> ChunkView<'_> {
        ChunkView {
            start: self.range.start,
            root: self.tree.root_node(),
            cache: &self.cache,
        }
    }

    fn new(range: TextRange, tree: Tree) -> Chunk {
        Chunk {
            range,
            tree,
            cache: Arc::default(),
        }
    }
}

/// A chunk as the analyses see it: where it starts, its root and its cache.
pub(crate) struct ChunkView<'a> {
    pub(crate) start: usize,
    pub(crate) root: Node<'a>,
    pub(crate) cache: &'a ChunkCache,
}

impl std::fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceFile")
            .field("len", &self.text.len())
            .field("chunks", &self.chunks.len())
            .field("masks", &self.masks.len())
            .field("prelude", &self.prelude.as_ref().map(|p| p.macros.len()))
            .finish()
    }
}

/// A CUDA macro that tree-sitter-cuda does not understand and that was replaced by spaces
/// (or by a same-length keyword) before parsing, so the code around it parses into the
/// right nodes. Byte offsets are unchanged by the replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaskedMacro {
    /// The macro name as written, for example `__align__` or `CUTLASS_DEVICE`.
    pub name: String,
    /// The range of the name.
    pub name_range: TextRange,
    /// The range of the name and its parenthesised arguments, if any.
    pub range: TextRange,
    /// The text between the parentheses, for `__align__(16)` or `__cluster_dims__(2, 1, 1)`.
    pub args: Option<String>,
    /// The keyword the parser saw in its place (`__global__`, `__device__`), if any.
    pub replacement: Option<&'static str>,
}

/// A syntax error: an `ERROR` node or a token the parser had to assume was missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// The range of the error (empty for a missing token).
    pub range: TextRange,
    /// A one-line description, such as ``missing `;` `` or ``unexpected `)` ``.
    pub message: String,
}

/// The most syntax errors [`SourceFile::errors`] reports.
const MAX_ERRORS: usize = 200;

/// Macros whose name, and parenthesised arguments, are blanked.
const ATTRIBUTE_MACROS: &[&str] = &["__align__", "__cluster_dims__", "__maxnreg__"];
/// Macros that are blanked on their own.
const WORD_MACROS: &[&str] = &[
    "__forceinline__",
    "__noinline__",
    "__inline__",
    "__restrict__",
    // Loop pragmas of CuTe and CUTLASS (`_Pragma("unroll")` and friends) written before a
    // `for`: unmasked, the parser does not see the loop.
    "CUTE_UNROLL",
    "CUTE_NO_UNROLL",
    "CUTLASS_PRAGMA_UNROLL",
    "CUTLASS_PRAGMA_NO_UNROLL",
];

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

/// Chunks this file alone holds, from which dropping it frees the trees on every core:
/// freeing a 10,000-line file's trees and caches takes about 10 ms on one.
const PARALLEL_DROP_CHUNKS: usize = 32;

impl Drop for SourceFile {
    fn drop(&mut self) {
        // A clone's chunks are shared (trees and caches reference counted): dropping
        // them frees nothing, so only a file that holds most of its chunks alone
        // spreads the work.
        let alone = self
            .chunks
            .iter()
            .filter(|c| Arc::strong_count(&c.cache) == 1)
            .count();
        let threads = crate::util::threads();
        if alone < PARALLEL_DROP_CHUNKS || threads < 2 {
            return;
        }
        let mut chunks = std::mem::take(&mut self.chunks);
        let per = chunks.len().div_ceil(threads);
        let mut parts: Vec<Vec<Chunk>> = Vec::new();
        while chunks.len() > per {
            parts.push(chunks.split_off(chunks.len() - per));
        }
        std::thread::scope(|scope| {
            for part in parts {
                // Without a thread, the part is dropped here when the closure is.
                let _ = std::thread::Builder::new().spawn_scoped(scope, move || drop(part));
            }
            drop(chunks);
        });
    }
}

impl SourceFile {
    /// Parses `text`. Never fails: broken code gives a tree with errors.
    ///
    /// A file of [`chunk::MIN_FILE`] bytes or more is cut into chunks of top-level items
    /// that are parsed on several threads (see [`crate::chunk`]).
    pub fn parse(text: &str) -> SourceFile {
        let target = match std::env::var("KERNAUT_TEST_CHUNK_TARGET") {
            // A testing aid: cut every file, whatever its size, to run a test suite
            // against chunked parses.
            Ok(t) => t.parse().unwrap_or(chunk::TARGET),
            Err(_) if text.len() >= chunk::MIN_FILE => chunk::TARGET,
            Err(_) => 0,
        };
        SourceFile::parse_with_target(text, target)
    }

    /// Parses `text` cut into chunks of at least `target` bytes, whatever its size
    /// (`target` 1 cuts at every top-level item; 0 keeps one tree). For tests that compare
    /// chunked and whole-file parses; [`SourceFile::parse`] chooses by size.
    #[doc(hidden)]
    pub fn parse_with_target(text: &str, target: usize) -> SourceFile {
        let (masked, masks) = mask_macros(text);
        let masked = blank_dead(masked, &dead_regions(text));
        let chunks = parse_all(&masked, target);
        SourceFile {
            text: Arc::from(text),
            masked: Arc::from(masked),
            chunks,
            chunk_target: target,
            masks,
            facts: Arc::default(),
            prelude: None,
        }
    }

    /// How many syntax trees the file is parsed into.
    #[doc(hidden)]
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The macros of the headers the file includes, when a host gave them.
    pub fn prelude(&self) -> Option<&Arc<Prelude>> {
        self.prelude.as_ref()
    }

    /// This file seeing `prelude`'s macros (the headers' `#define`s) after its own: the
    /// same trees, with every fact, access and cache computed afresh. `None` or an empty
    /// prelude is a file that sees only its own macros.
    pub fn with_prelude(&self, prelude: Option<Arc<Prelude>>) -> SourceFile {
        let prelude = prelude
            .filter(|p| !(p.macros.is_empty() && p.constants.is_empty() && p.helpers.is_empty()));
        SourceFile {
            text: self.text.clone(),
            masked: self.masked.clone(),
            chunks: self
                .chunks
                .iter()
                .map(|c| Chunk::new(c.range.clone(), c.tree.clone()))
                .collect(),
            chunk_target: self.chunk_target,
            masks: self.masks.clone(),
            facts: Arc::default(),
            prelude,
        }
    }

    /// This file without its syntax trees: the text, the prelude and the facts (computed
    /// now if they were not), for a host that keeps many files for what the others read
    /// of them (launches, attribute calls, definitions) and parses each one again when it
    /// is analysed ([`SourceFile::reparsed`]). Queries that need a tree find none.
    pub fn without_trees(&self) -> SourceFile {
        let _ = self.facts();
        SourceFile {
            text: self.text.clone(),
            // Only a parse reads the masked text, and a parse masks the text again.
            masked: self.text.clone(),
            chunks: Vec::new(),
            chunk_target: self.chunk_target,
            masks: self.masks.clone(),
            facts: self.facts.clone(),
            prelude: self.prelude.clone(),
        }
    }

    /// A file of `text` not parsed yet: no trees and no facts until
    /// [`SourceFile::reparsed`] parses it (with the prelude given meanwhile). For a host
    /// that parses each file of a large change one at a time.
    pub fn unparsed(text: &str) -> SourceFile {
        let text: Arc<str> = Arc::from(text);
        SourceFile {
            masked: text.clone(),
            text,
            chunks: Vec::new(),
            chunk_target: 0,
            masks: Vec::new(),
            facts: Arc::default(),
            prelude: None,
        }
    }

    /// The same text parsed again, seeing the same prelude: a file given back its trees
    /// after [`SourceFile::without_trees`].
    pub fn reparsed(&self) -> SourceFile {
        let mut file = SourceFile::parse(&self.text).with_prelude(self.prelude.clone());
        // The same text seeing the same macros has the same facts.
        if self.facts.get().is_some() {
            file.facts = self.facts.clone();
        }
        file
    }

    /// The quoted `#include "…"` directives of the file, in order.
    pub fn quoted_includes(&self) -> Vec<Include> {
        crate::macros::quoted_includes(&self.text)
    }

    /// Replaces `range` with `new_text` and reparses incrementally, reusing the old tree.
    ///
    /// A range past the end is clamped to the text, and a range that splits a character
    /// is widened to whole characters.
    pub fn apply_edit(&mut self, range: TextRange, new_text: &str) {
        let len = self.text.len();
        let mut start = range.start.min(range.end).min(len);
        let mut end = range.end.max(range.start).min(len);
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        let mut text = String::with_capacity(len - (end - start) + new_text.len());
        text.push_str(&self.text[..start]);
        text.push_str(new_text);
        text.push_str(&self.text[end..]);
        // Mask the new text: a chunked file again only from the chunk the edit starts in
        // to the first old chunk boundary after it, copying the rest.
        // Code no compile includes (`#if 0`) is blank for the parser. Where the edit
        // changes which code that is, everything is masked again.
        let dead = dead_regions(&text);
        let same_dead = {
            let old_dead = dead_regions(&self.text);
            let moved: Option<Vec<TextRange>> = old_dead
                .iter()
                .map(|r| {
                    if r.end < start {
                        Some(r.clone())
                    } else if r.start > end {
                        let to = |i: usize| i + new_text.len() + start - end;
                        Some(to(r.start)..to(r.end))
                    } else {
                        None
                    }
                })
                .collect();
            moved.as_ref() == Some(&dead)
        };
        let (masked, masks, lo, tail) =
            if same_dead && self.chunk_target != 0 && !self.chunks.is_empty() {
                self.remask(&text, start, end, start + new_text.len())
            } else {
                let (masked, masks) = mask_macros(&text);
                (masked, masks, 0, 0)
            };
        let masked = blank_dead(masked, &dead);

        // The bytes that differ: from the first to the last, both searched only where the
        // masking may have changed something (from `lo`, and before the last `tail` bytes,
        // which are the old ones moved).
        let old = self.masked.as_bytes();
        let new = masked.as_bytes();
        let prefix = lo
            + old[lo.min(old.len())..]
                .iter()
                .zip(&new[lo.min(new.len())..])
                .take_while(|(a, b)| a == b)
                .count();
        let max_suffix = old.len().min(new.len()) - prefix.min(old.len().min(new.len()));
        let tail = tail.min(max_suffix);
        let suffix = tail
            + old[..old.len() - tail]
                .iter()
                .rev()
                .zip(new[..new.len() - tail].iter().rev())
                .take(max_suffix - tail)
                .take_while(|(a, b)| a == b)
                .count();
        let start_position = point_at(old, prefix);
        let edit = InputEdit {
            start_byte: prefix,
            old_end_byte: old.len() - suffix,
            new_end_byte: new.len() - suffix,
            start_position,
            old_end_position: advance(
                old,
                &mut prefix.clone(),
                &mut start_position.clone(),
                old.len() - suffix,
            ),
            new_end_position: advance(
                new,
                &mut prefix.clone(),
                &mut start_position.clone(),
                new.len() - suffix,
            ),
        };
        let chunks = std::mem::take(&mut self.chunks);
        let target = if self.chunk_target == 0 && masked.len() >= 2 * chunk::MIN_FILE {
            // Grown well past the size where files are cut: cut it now.
            chunk::TARGET
        } else {
            self.chunk_target
        };
        let chunks = if chunks.is_empty() {
            parse_all(&masked, target)
        } else if target == 0 || self.chunk_target == 0 {
            match (chunks.into_iter().next(), target) {
                (Some(mut old), 0) => {
                    // One tree: tree-sitter's incremental reparse.
                    old.tree.edit(&edit);
                    new_parser()
                        .and_then(|mut p| p.parse(&masked, Some(&old.tree)))
                        .map(|tree| vec![Chunk::new(0..masked.len(), tree)])
                        .unwrap_or_default()
                }
                _ => parse_all(&masked, target),
            }
        } else {
            reparse_chunks(chunks, &masked, &edit, target)
                .unwrap_or_else(|| parse_all(&masked, target))
        };
        self.text = Arc::from(text);
        self.masked = Arc::from(masked);
        self.masks = masks;
        self.chunks = chunks;
        self.chunk_target = target;
        self.facts = Arc::default();
    }

    /// Masks `text`, this file's text with `old_start..old_end` replaced so that it now ends
    /// at `new_end`, reusing the old masking outside the chunks the edit touches. Returns
    /// the masked text, the masks, where re-masking started and how many bytes at the end
    /// are the old masked bytes moved.
    fn remask(
        &self,
        text: &str,
        old_start: usize,
        old_end: usize,
        new_end: usize,
    ) -> (String, Vec<MaskedMacro>, usize, usize) {
        let first = self
            .chunks
            .partition_point(|c| c.range.start < old_start)
            .saturating_sub(1);
        let from = self.chunks[first].range.start;
        let old_masked = self.masked.as_bytes();
        let starts: Vec<usize> = self.chunks.iter().map(|c| c.range.start).collect();
        let to_old = |i: usize| (i + old_end).checked_sub(new_end);
        let mut out = text.as_bytes().to_vec();
        out[..from].copy_from_slice(&old_masked[..from]);
        let mut masks: Vec<MaskedMacro> = self
            .masks
            .iter()
            .take_while(|m| m.range.start < from)
            .cloned()
            .collect();
        // Stop at a line start past the edit that was a chunk boundary: the lexical state
        // there is the same as before, so is everything after it.
        let stop = |i: usize| {
            i >= new_end
                && to_old(i).is_some_and(|o| o >= old_end && starts.binary_search(&o).is_ok())
        };
        let end = mask_from(text, &mut out, &mut masks, from, stop);
        let old_at = to_old(end)
            .unwrap_or(old_masked.len())
            .min(old_masked.len());
        let tail = text.len() - end;
        if old_masked.len() - old_at == tail {
            out[end..].copy_from_slice(&old_masked[old_at..]);
            let moved = |r: &TextRange| (r.start + end - old_at)..(r.end + end - old_at);
            masks.extend(
                self.masks
                    .iter()
                    .skip_while(|m| m.range.start < old_at)
                    .map(|m| MaskedMacro {
                        name_range: moved(&m.name_range),
                        range: moved(&m.range),
                        ..m.clone()
                    }),
            );
        }
        let masked = String::from_utf8(out).unwrap_or_else(|_| text.to_string());
        (masked, masks, from, tail)
    }

    /// The text as given (not the masked text the parser saw).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The macros blanked before parsing, in document order.
    pub fn masked_macros(&self) -> &[MaskedMacro] {
        &self.masks
    }

    /// The syntax errors, in document order (at most 200).
    pub fn errors(&self) -> Vec<SyntaxError> {
        let mut out = Vec::new();
        for root in self.roots() {
            if root.has_error() && out.len() < MAX_ERRORS {
                self.errors_in(root, &mut out);
            }
        }
        out
    }

    fn errors_in(&self, root: Node, out: &mut Vec<SyntaxError>) {
        preorder(root, |node| {
            if out.len() >= MAX_ERRORS {
                return false;
            }
            if node.is_missing() {
                out.push(SyntaxError {
                    range: node.start_byte()..node.start_byte(),
                    message: format!("missing `{}`", node.kind_name()),
                });
                return false;
            }
            if node.is_error() {
                let snippet: String = self
                    .text
                    .get(node.byte_range())
                    .unwrap_or("")
                    .chars()
                    .take(24)
                    .collect();
                out.push(SyntaxError {
                    range: node.byte_range(),
                    message: format!("unexpected `{}`", crate::util::squash_ws(&snippet)),
                });
                return false;
            }
            node.has_error()
        });
    }

    /// Whether the parse produced a tree at all. It always does, except when tree-sitter
    /// refuses the grammar, which would be a build problem.
    pub fn has_tree(&self) -> bool {
        !self.chunks.is_empty()
    }

    /// The roots of the chunks' trees, in document order (crate-private: tree-sitter never
    /// leaves this crate). Empty when there is no tree.
    /// The memo of answers about the file's text kept with its facts, for queries that
    /// read the trees: `None` for a file without them ([`SourceFile::without_trees`]),
    /// whose facts a parsed copy shares, so that an answer found without the trees is
    /// not kept for it.
    pub(crate) fn tree_memo(&self) -> Option<&crate::data::LocalsMemo> {
        (!self.chunks.is_empty()).then(|| &self.facts().locals_memo)
    }

    pub(crate) fn roots(&self) -> Vec<Node<'_>> {
        self.chunks.iter().map(|c| c.tree.root_node()).collect()
    }

    /// The chunks, in document order.
    pub(crate) fn chunk_views(&self) -> Vec<ChunkView<'_>> {
        self.chunks.iter().map(Chunk::view).collect()
    }

    /// The chunk that holds `offset` (the last one for the end of the file).
    pub(crate) fn chunk_at(&self, offset: usize) -> Option<ChunkView<'_>> {
        let i = self
            .chunks
            .partition_point(|c| c.range.start <= offset)
            .checked_sub(1)?;
        Some(self.chunks[i].view())
    }

    /// The root of the tree whose chunk holds `offset` (the last chunk for the end of the
    /// file).
    pub(crate) fn root_at(&self, offset: usize) -> Option<Node<'_>> {
        let i = self
            .chunks
            .partition_point(|c| c.range.start <= offset)
            .checked_sub(1)?;
        Some(self.chunks[i].tree.root_node())
    }

    /// The S-expression of each top-level item, in order, whichever chunk holds it: the
    /// same for an edited file and a fresh parse of its text even where the two cut
    /// their chunks at different items. For tests.
    pub fn debug_items(&self) -> Vec<String> {
        self.roots()
            .iter()
            .flat_map(|r| {
                let mut cursor = r.walk();
                r.children(&mut cursor)
                    .map(|c| c.to_sexp())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The S-expression of the tree (one line per chunk), for debugging and tests.
    pub fn debug_tree(&self) -> String {
        self.roots()
            .iter()
            .map(|r| r.to_sexp())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Parses `masked` whole (`target` 0) or cut into chunks of at least `target` bytes.
fn parse_all(masked: &str, target: usize) -> Vec<Chunk> {
    if target == 0 || masked.is_empty() {
        return new_parser()
            .and_then(|mut p| p.parse(masked, None))
            .map(|tree| vec![Chunk::new(0..masked.len(), tree)])
            .unwrap_or_default();
    }
    let ranges = chunk::split(masked.as_bytes(), 0, masked.len(), target);
    parse_ranges(masked, &ranges).unwrap_or_default()
}

/// Parses each of `ranges` (consecutive, line-aligned chunks of `masked`) as its own tree,
/// on up to 8 threads. `None` when a parse fails.
fn parse_ranges(masked: &str, ranges: &[TextRange]) -> Option<Vec<Chunk>> {
    let bytes = masked.as_bytes();
    // The position of each chunk's start and end, counted once from the first start.
    let first = ranges.first()?.start;
    let mut point = point_at(bytes, first);
    let mut at = first;
    let mut spans = Vec::with_capacity(ranges.len());
    for r in ranges {
        let start = advance(bytes, &mut at, &mut point, r.start);
        let end = advance(bytes, &mut at, &mut point, r.end);
        spans.push((r.clone(), start, end));
    }
    let parse_some = |spans: &&[(TextRange, Point, Point)]| -> Option<Vec<Chunk>> {
        let mut parser = new_parser()?;
        spans
            .iter()
            .map(|(range, start, end)| {
                let tree = parse_range(&mut parser, masked, range.clone(), *start, *end, None)?;
                Some(Chunk::new(range.clone(), tree))
            })
            .collect()
    };
    // One group of consecutive chunks per thread, each group with one parser.
    let threads = crate::util::threads().min(spans.len() / 4).max(1);
    let groups: Vec<&[(TextRange, Point, Point)]> =
        spans.chunks(spans.len().div_ceil(threads)).collect();
    let parsed = crate::util::par_map_with(&groups, 1, parse_some);
    let mut out = Vec::with_capacity(spans.len());
    for group in parsed {
        out.extend(group?);
    }
    Some(out)
}

/// Parses one chunk of `masked`.
/// Parses the bytes `range` of `masked` (at `start`..`end`) alone, reusing `old` (a tree
/// of the same range, edited) when given.
fn parse_range(
    parser: &mut Parser,
    masked: &str,
    range: TextRange,
    start: Point,
    end: Point,
    old: Option<&Tree>,
) -> Option<Tree> {
    parser
        .set_included_ranges(&[Range {
            start_byte: range.start,
            end_byte: range.end,
            start_point: start,
            end_point: end,
        }])
        .ok()?;
    parser.parse(masked, old)
}

/// Moves `point` (the position of byte `*at`) forward to byte `to`, and returns it.
fn advance(bytes: &[u8], at: &mut usize, point: &mut Point, to: usize) -> Point {
    let to = to.min(bytes.len());
    if to > *at {
        let span = &bytes[*at..to];
        match span.iter().rposition(|&b| b == b'\n') {
            Some(nl) => {
                point.row += span.iter().filter(|&&b| b == b'\n').count();
                point.column = span.len() - nl - 1;
            }
            None => point.column += span.len(),
        }
        *at = to;
    }
    *point
}

/// Reparses the chunks an edit touched. The chunks before them are kept as they are, the
/// chunks after them are shifted with `edit`, and the touched region is cut again from
/// its first chunk's start until a cut falls on an old chunk boundary (or the end of the
/// file). A region that is still one chunk with the same bounds is reparsed
/// incrementally. `None` when a parse fails.
fn reparse_chunks(
    old: Vec<Chunk>,
    masked: &str,
    edit: &InputEdit,
    target: usize,
) -> Option<Vec<Chunk>> {
    let bytes = masked.as_bytes();
    let shift = |o: usize| (o + edit.new_end_byte).checked_sub(edit.old_end_byte);
    // The chunks the edit touches: from the one before its start (a cut at the start of
    // the edit may no longer be one) to the one holding its end.
    let first = old
        .partition_point(|c| c.range.start < edit.start_byte)
        .saturating_sub(1);
    let last = old
        .partition_point(|c| c.range.start <= edit.old_end_byte)
        .saturating_sub(1)
        .max(first);
    let region_start = old[first].range.start;
    let min_end = shift(old[last].range.end)?;
    // Cut from the region's start until a cut lands on a shifted old boundary.
    let mut scanner = Scanner::at(region_start);
    let mut next_old = last + 1;
    let mut resync = None;
    while let Some(cut) = scanner.next_cut(bytes) {
        if cut < min_end {
            continue;
        }
        while next_old < old.len() && shift(old[next_old].range.start)? < cut {
            next_old += 1;
        }
        if next_old < old.len() && shift(old[next_old].range.start)? == cut {
            resync = Some((cut, next_old));
            break;
        }
    }
    let (region_end, kept_from) = resync.unwrap_or((bytes.len(), old.len()));
    let ranges = chunk::split(bytes, region_start, region_end, target);

    let mut out = Vec::with_capacity(old.len() + ranges.len());
    let mut old = old.into_iter();
    out.extend(old.by_ref().take(first));
    let mut touched: Vec<Chunk> = old.by_ref().take(kept_from - first).collect();
    if let ([range], [only]) = (ranges.as_slice(), touched.as_mut_slice()) {
        // The same chunk as before, edited inside: reparse it incrementally.
        only.tree.edit(edit);
        let start = point_at(bytes, range.start);
        let end = point_at(bytes, range.end);
        let mut parser = new_parser()?;
        let tree = parse_range(
            &mut parser,
            masked,
            range.clone(),
            start,
            end,
            Some(&only.tree),
        )?;
        out.push(Chunk::new(range.clone(), tree));
    } else {
        out.extend(parse_ranges(masked, &ranges)?);
    }
    for mut c in old {
        c.tree.edit(edit);
        c.range = shift(c.range.start)?..shift(c.range.end)?;
        out.push(c);
    }
    Some(out)
}

fn point_at(bytes: &[u8], offset: usize) -> Point {
    let before = &bytes[..offset.min(bytes.len())];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let column = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(before.len(), |nl| before.len() - nl - 1);
    Point { row, column }
}

/// Blanks the macros the grammar does not know. Returns the masked text (same length as
/// `text`, same line breaks) and what was masked.
pub(crate) fn mask_macros(text: &str) -> (String, Vec<MaskedMacro>) {
    let mut out = text.as_bytes().to_vec();
    let mut masks = Vec::new();
    mask_from(text, &mut out, &mut masks, 0, |_| false);
    let masked = String::from_utf8(out).unwrap_or_else(|_| text.to_string());
    (masked, masks)
}

/// Masks `text` from `start` (a line start outside comments and strings) into `out` (a
/// copy of the text), appending to `masks`, until a line start for which `stop` is true.
/// Returns where it stopped (the end of the text when `stop` never was true).
fn mask_from(
    text: &str,
    out: &mut [u8],
    masks: &mut Vec<MaskedMacro>,
    start: usize,
    mut stop: impl FnMut(usize) -> bool,
) -> usize {
    let bytes = text.as_bytes();
    let mut i = start;
    let mut line_is_directive = false;
    let mut at_line_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line_is_directive = false;
                at_line_start = true;
                i += 1;
                if stop(i) {
                    return i;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
                continue;
            }
            b'"' | b'\'' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            b'#' if at_line_start => {
                line_is_directive = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            at_line_start = false;
        }
        if !(b.is_ascii_alphabetic() || b == b'_') || (i > 0 && is_ident_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_ident_byte(bytes[i]) {
            i += 1;
        }
        let word = &text[start..i];
        if line_is_directive {
            continue;
        }
        if word == "__launch_bounds__" {
            // The grammar knows two arguments; the third (maximum blocks per cluster) is
            // blanked and kept here.
            let mut j = i;
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                j += 1;
            }
            if let Some(close) = (bytes.get(j) == Some(&b'('))
                .then(|| matching_paren(bytes, j))
                .flatten()
            {
                let mut depth = 0usize;
                let mut commas = Vec::new();
                for (k, &c) in bytes.iter().enumerate().take(close).skip(j + 1) {
                    match c {
                        b'(' | b'<' | b'[' => depth += 1,
                        b')' | b'>' | b']' => depth = depth.saturating_sub(1),
                        b',' if depth == 0 => commas.push(k),
                        _ => {}
                    }
                }
                if let Some(&second) = commas.get(1) {
                    blank(out, second, close);
                    masks.push(MaskedMacro {
                        name: word.to_string(),
                        name_range: start..i,
                        range: second..close,
                        args: text.get(second + 1..close).map(|a| a.trim().to_string()),
                        replacement: None,
                    });
                }
            }
            continue;
        }
        if ATTRIBUTE_MACROS.contains(&word) {
            let mut j = i;
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                j += 1;
            }
            let mut end = i;
            let mut args = None;
            if bytes.get(j) == Some(&b'(') {
                if let Some(close) = matching_paren(bytes, j) {
                    end = close + 1;
                    args = text.get(j + 1..close).map(str::to_string);
                }
            }
            blank(out, start, end);
            masks.push(MaskedMacro {
                name: word.to_string(),
                name_range: start..i,
                range: start..end,
                args,
                replacement: None,
            });
            i = end;
        } else if WORD_MACROS.contains(&word) {
            blank(out, start, i);
            masks.push(MaskedMacro {
                name: word.to_string(),
                name_range: start..i,
                range: start..i,
                args: None,
                replacement: None,
            });
        } else if is_wrapper_macro(word) && next_is_word(bytes, i) {
            let replacement = wrapper_replacement(word);
            blank(out, start, i);
            if let Some(r) = replacement {
                out[start..start + r.len()].copy_from_slice(r.as_bytes());
            }
            masks.push(MaskedMacro {
                name: word.to_string(),
                name_range: start..i,
                range: start..i,
                args: None,
                replacement,
            });
        }
    }
    bytes.len()
}

/// Whether `word` looks like an all-caps function-qualifier wrapper such as
/// `CUTLASS_DEVICE`, `CUTLASS_HOST_DEVICE`, `CUTE_HOST_DEVICE` or `MY_KERNEL_INLINE`.
fn is_wrapper_macro(word: &str) -> bool {
    if word.len() < 4
        || !word.contains('_')
        || !word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    {
        return false;
    }
    word.split('_').any(|part| {
        matches!(
            part,
            "DEVICE" | "HOST" | "INLINE" | "FORCEINLINE" | "GLOBAL" | "KERNEL" | "HD" | "NOINLINE"
        )
    })
}

fn wrapper_replacement(word: &str) -> Option<&'static str> {
    let parts: Vec<&str> = word.split('_').collect();
    let r = if parts.iter().any(|p| *p == "GLOBAL" || *p == "KERNEL") {
        "__global__"
    } else if parts.iter().any(|p| *p == "DEVICE" || *p == "HD") {
        "__device__"
    } else {
        return None;
    };
    (word.len() >= r.len()).then_some(r)
}

/// Whether the next token after `i` (skipping blanks, not newlines only) starts a word.
fn next_is_word(bytes: &[u8], mut i: usize) -> bool {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    bytes
        .get(i)
        .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_')
}

fn matching_paren(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &b) in bytes.iter().enumerate().skip(open).take(4096) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

/// The lines that no compile of the file includes, whatever the target and the macros:
/// the body of `#if 0` (`#elif 0`, `#if false`), and the arms after one that is surely
/// taken (`#else` of `#if 1`), from the line after the directive to the start of the next
/// directive of the same `#if`. Directive lines themselves are kept. Lines starting `#`
/// inside block comments are not directives ([`crate::macros::directives`]).
pub(crate) fn dead_regions(text: &str) -> Vec<TextRange> {
    /// One open `#if`: whether an arm was surely taken, where the current dead arm
    /// started, and whether the whole `#if` sits inside dead code.
    struct Open {
        taken: bool,
        dead_from: Option<usize>,
        inert: bool,
    }
    let known = |cond: &str| -> Option<bool> {
        let c = cond.split("//").next().unwrap_or("");
        let c = match c.find("/*") {
            Some(at) => &c[..at],
            None => c,
        };
        let c: String = c
            .chars()
            .filter(|ch| !ch.is_whitespace() && *ch != '(' && *ch != ')')
            .collect();
        match c.as_str() {
            "0" | "false" => Some(false),
            "1" | "true" => Some(true),
            _ => None,
        }
    };
    if !text.contains("#if") && !text.contains("# if") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    // The directives outside block comments (`\`-continued lines joined): each one's
    // line start, and where the line after it starts.
    for (start, end, directive) in crate::macros::directives(text) {
        let at = text
            .get(end..)
            .and_then(|t| t.find('\n'))
            .map_or(text.len(), |i| end + i + 1);
        let directive = directive.trim_start();
        let word_end = directive
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(directive.len());
        let (word, cond) = directive.split_at(word_end);
        let parent_dead = stack
            .last()
            .is_some_and(|o| o.inert || o.dead_from.is_some());
        match word {
            "if" | "ifdef" | "ifndef" => {
                let value = if word == "if" { known(cond) } else { None };
                stack.push(Open {
                    taken: value == Some(true),
                    dead_from: (value == Some(false) && !parent_dead).then_some(at),
                    inert: parent_dead,
                });
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                let Some(open) = stack.last_mut() else {
                    continue;
                };
                if open.inert {
                    continue;
                }
                if let Some(from) = open.dead_from.take() {
                    out.push(from..start);
                }
                let value = if word == "elif" { known(cond) } else { None };
                if open.taken || value == Some(false) {
                    open.dead_from = Some(at);
                }
                open.taken |= value == Some(true) || word == "else";
            }
            "endif" => {
                if let Some(open) = stack.pop() {
                    if let Some(from) = open.dead_from {
                        out.push(from..start);
                    }
                }
            }
            _ => {}
        }
    }
    // An `#if 0` never closed: dead to the end.
    for open in stack {
        if let (Some(from), false) = (open.dead_from, open.inert) {
            out.push(from..text.len());
        }
    }
    out.sort_by_key(|r| r.start);
    out.retain(|r| r.start < r.end);
    out
}

/// `masked` with every byte of `dead` blank but line breaks.
fn blank_dead(masked: String, dead: &[TextRange]) -> String {
    if dead.is_empty() {
        return masked;
    }
    let mut out = masked.into_bytes();
    for r in dead {
        let end = r.end.min(out.len());
        if r.start < end {
            blank(&mut out, r.start, end);
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

fn blank(out: &mut [u8], start: usize, end: usize) {
    for b in &mut out[start..end] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}
