//! Small helpers over tree-sitter nodes: safe slicing and iterative traversal.

use std::borrow::Cow;
use std::num::NonZeroU16;
use std::sync::LazyLock;

use tree_sitter::{Node, TreeCursor};

use crate::TextRange;

/// The deepest recursion any recursive helper in this crate allows itself.
pub(crate) const MAX_DEPTH: usize = 96;

/// The grammar's node kind and field names, read once. tree-sitter's own `Node::kind`
/// measures and checks the C string on every call, and `child_by_field_name` compares
/// the name with each of the grammar's 53 field names in turn; the walks in this crate
/// ask both questions for nearly every node they visit.
struct Names {
    /// Kind names indexed by kind id.
    kinds: Vec<&'static str>,
    /// Field names with their ids, in an open-addressed table of [`FIELD_SLOTS`] slots
    /// hashed by [`field_hash`].
    fields: Vec<Option<(&'static str, NonZeroU16)>>,
}

/// The slots of the field table: a power of two, well above the grammar's field count.
const FIELD_SLOTS: usize = 256;

/// [`FxHasher`](rustc_hash::FxHasher) of a field name, folded to a slot.
fn field_hash(name: &str) -> usize {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(name) as usize & (FIELD_SLOTS - 1)
}

static NAMES: LazyLock<Names> = LazyLock::new(|| {
    let lang: tree_sitter::Language = tree_sitter_cuda::LANGUAGE.into();
    let kinds = (0..lang.node_kind_count() as u16)
        .map(|id| lang.node_kind_for_id(id).unwrap_or(""))
        .collect();
    let mut fields = vec![None; FIELD_SLOTS];
    for id in 1..=lang.field_count() as u16 {
        let (Some(name), Some(nz)) = (lang.field_name_for_id(id), NonZeroU16::new(id)) else {
            continue;
        };
        let mut slot = field_hash(name);
        // The grammar has 53 fields, so a free slot is always found.
        for _ in 0..FIELD_SLOTS {
            if fields[slot].is_none() {
                fields[slot] = Some((name, nz));
                break;
            }
            slot = (slot + 1) & (FIELD_SLOTS - 1);
        }
    }
    Names { kinds, fields }
});

/// The id of the field called `name`, if the grammar has one.
#[inline]
fn field_id(name: &str) -> Option<NonZeroU16> {
    let fields = &NAMES.fields;
    let mut slot = field_hash(name);
    for _ in 0..FIELD_SLOTS {
        match fields[slot] {
            Some((n, id)) if n == name => return Some(id),
            Some(_) => slot = (slot + 1) & (FIELD_SLOTS - 1),
            None => return None,
        }
    }
    None
}

/// A set of node kinds, tested by kind id: one look-up instead of comparing the kind's
/// name with each name of the set.
pub(crate) struct KindSet {
    names: &'static [&'static str],
    ids: std::sync::OnceLock<Box<[bool]>>,
}

impl KindSet {
    /// The set of the kinds called `names`.
    pub(crate) const fn new(names: &'static [&'static str]) -> KindSet {
        KindSet {
            names,
            ids: std::sync::OnceLock::new(),
        }
    }

    /// Whether `node`'s kind is in the set (as `names.contains(&node.kind())`).
    #[inline]
    pub(crate) fn contains(&self, node: Node) -> bool {
        let ids = self
            .ids
            .get_or_init(|| NAMES.kinds.iter().map(|k| self.names.contains(k)).collect());
        match ids.get(node.kind_id() as usize) {
            Some(&hit) => hit,
            None => self.names.contains(&node.kind()),
        }
    }
}

/// The last `::`-separated part of a name.
pub fn short_name(name: &str) -> &str {
    // As `rsplit("::").next()`, without a substring searcher for a two-byte pattern.
    match name.as_bytes().windows(2).rposition(|w| w == b"::") {
        Some(i) => &name[i + 2..],
        None => name,
    }
}

/// Faster spellings of [`Node::kind`] and [`Node::child_by_field_name`], answered from
/// tables built once for the grammar (same answers).
pub(crate) trait NodeExt<'t> {
    /// The node's kind, as [`Node::kind`] gives it.
    fn kind_name(&self) -> &'static str;
    /// The child in field `name`, as [`Node::child_by_field_name`] gives it.
    fn field(&self, name: &str) -> Option<Node<'t>>;
    /// The children in field `name`, as [`Node::children_by_field_name`] gives them.
    fn fields<'c>(
        &self,
        name: &str,
        cursor: &'c mut TreeCursor<'t>,
    ) -> impl Iterator<Item = Node<'t>> + 'c
    where
        't: 'c;
}

impl<'t> NodeExt<'t> for Node<'t> {
    #[inline]
    fn kind_name(&self) -> &'static str {
        NAMES
            .kinds
            .get(self.kind_id() as usize)
            .copied()
            .unwrap_or_else(|| self.kind())
    }

    #[inline]
    fn field(&self, name: &str) -> Option<Node<'t>> {
        self.child_by_field_id(field_id(name)?.get())
    }

    fn fields<'c>(
        &self,
        name: &str,
        cursor: &'c mut TreeCursor<'t>,
    ) -> impl Iterator<Item = Node<'t>> + 'c
    where
        't: 'c,
    {
        let id = field_id(name);
        let mut all = id.map(|id| self.children_by_field_id(id, cursor));
        std::iter::from_fn(move || all.as_mut()?.next())
    }
}

/// Whether `node` is a statement, expression or declaration whose text has no `byte`: a
/// walk that looks only for what needs that byte (a `[` for a subscript, a `(` for a
/// call) need not enter it.
pub(crate) fn lacks_byte(node: Node, kind: &str, text: &str, byte: u8) -> bool {
    (kind.ends_with("_statement") || kind.ends_with("_expression") || kind == "declaration")
        && !text
            .as_bytes()
            .get(node.byte_range())
            .is_some_and(|t| t.contains(&byte))
}

/// The text of `node`, or `""` when its range does not fall on character boundaries.
pub(crate) fn node_text<'a>(node: Node, text: &'a str) -> &'a str {
    text.get(node.byte_range()).unwrap_or("")
}

/// Calls `f` on every node under `root` (itself included) in document order, without
/// recursion, so deeply nested input cannot overflow the stack. `f` returns whether to
/// descend into the node's children.
pub(crate) fn preorder<'t>(root: Node<'t>, mut f: impl FnMut(Node<'t>) -> bool) {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if f(node) && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// [`preorder`] limited to the nodes that overlap `from..to` (end after `from` and start
/// before `to`): `f` is called on those only, in document order, and the children that
/// end at or before `from` are skipped by one seek instead of one by one (the others
/// cannot overlap: a node's children lie inside it). `f` returns whether to descend.
pub(crate) fn preorder_overlapping<'t>(
    root: Node<'t>,
    from: usize,
    to: usize,
    mut f: impl FnMut(Node<'t>) -> bool,
) {
    let overlaps = |n: Node<'_>| n.end_byte() > from && n.start_byte() < to;
    if !overlaps(root) {
        return;
    }
    let mut cursor = root.walk();
    loop {
        // The cursor's node overlaps the range here.
        if f(cursor.node()) && cursor.goto_first_child_for_byte(from).is_some() {
            if overlaps(cursor.node()) {
                continue;
            }
            // The first child that ends after `from` starts at or after `to`: so do the
            // ones after it.
            cursor.goto_parent();
        }
        loop {
            if cursor.node() == root {
                return;
            }
            // A later sibling ends after `from` too: it overlaps unless it starts at or
            // after `to`, and then so do the ones after it.
            if cursor.goto_next_sibling() && overlaps(cursor.node()) {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// The named children of `node` as a vector.
pub(crate) fn named_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// The arguments of the call `call` (its `arguments` list's named children, comments
/// left out); empty where it has none.
pub(crate) fn call_arguments(call: Node) -> Vec<Node> {
    call.field("arguments")
        .map(|a| {
            named_children(a)
                .into_iter()
                .filter(|n| n.kind_name() != "comment")
                .collect()
        })
        .unwrap_or_default()
}

/// All children of `node` as a vector.
pub(crate) fn children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// Collapses runs of whitespace to one space, for one-line display of code.
pub(crate) fn squash_ws(s: &str) -> String {
    // Most text is already squashed once trimmed: ASCII, single spaces only.
    let t = s.trim();
    let mut after_space = false;
    let squashed = t.bytes().all(|b| {
        let ok = b < 0x80
            && !matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
            && !(b == b' ' && after_space);
        after_space = b == b' ';
        ok
    });
    if squashed {
        return t.to_string();
    }
    let mut out = String::with_capacity(t.len());
    let mut space = false;
    for c in t.chars() {
        if c.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out
}

/// Removes every `<...>` group (template arguments) from a type or name, keeping the rest.
pub(crate) fn strip_template_args(s: &str) -> String {
    if !s.bytes().any(|b| b == b'<' || b == b'>') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// `r` moved from base offset `from` to base offset `to` (for results kept relative to
/// a chunk's start).
pub(crate) fn move_range(r: &TextRange, from: usize, to: usize) -> TextRange {
    r.start.wrapping_sub(from).wrapping_add(to)..r.end.wrapping_sub(from).wrapping_add(to)
}

pub(crate) use crate::lex::is_ident_byte;

pub use crate::cancel::threads;

/// `items.iter().map(f)`, spread over up to 8 threads (one per core) when there are
/// enough items to be worth it. The order of the results is that of the items. A panic
/// in `f` is passed on.
pub(crate) fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    par_map_with(items, 4, f)
}

/// [`par_map`] when `parallel`, else `items.iter().map(f)` on this thread. For copying
/// cached parts: after an edit, when few chunks were computed afresh, the copy is cheaper
/// on one thread than the cost of starting another (and of freeing across allocator
/// arenas).
pub(crate) fn copy_map<T: Sync, R: Send>(
    items: &[T],
    parallel: bool,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if parallel {
        par_map(items, f)
    } else {
        items.iter().map(f).collect()
    }
}

/// Whether copying cached parts is worth several threads: when at least half of the
/// `total` chunks were computed afresh (a new file), not after an edit.
pub(crate) fn mostly_fresh(fresh: usize, total: usize) -> bool {
    fresh * 2 >= total
}

/// [`par_map`] with at least `per_thread` items for each thread.
pub(crate) fn par_map_with<T: Sync, R: Send>(
    items: &[T],
    per_thread: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads().min(items.len() / per_thread.max(1)).max(1);
    if threads == 1 {
        return items
            .iter()
            .map(|x| {
                crate::cancel::checkpoint();
                f(x)
            })
            .collect();
    }
    let per = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(per)
            .map(|part| {
                let token = crate::cancel::current();
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || {
                        crate::cancel::with_token(token, || {
                            part.iter()
                                .map(|x| {
                                    crate::cancel::checkpoint();
                                    f(x)
                                })
                                .collect::<Vec<R>>()
                        })
                    })
                    .map_err(|_| part)
            })
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for h in handles {
            match h {
                Ok(h) => out.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
                // No thread to be had: do that part here.
                Err(part) => out.extend(part.iter().map(f)),
            }
        }
        out
    })
}

/// Moves `cursor` and `path` (the chain from the root down to the cursor's node) to the
/// deepest node that starts at or before byte `p` and ends after it, for a walk that goes
/// to bytes in increasing order: it climbs out of the nodes that end at or before `p`,
/// keeping the first `keep` entries of `path`, then goes down, calling
/// `entered(node, path)` for each node it enters, `path` being the chain above that node.
pub(crate) fn descend_to<'t>(
    cursor: &mut TreeCursor<'t>,
    path: &mut Vec<Node<'t>>,
    keep: usize,
    p: usize,
    mut entered: impl FnMut(Node<'t>, &[Node<'t>]),
) {
    while path.len() > keep && path.last().is_some_and(|n| n.end_byte() <= p) {
        cursor.goto_parent();
        path.pop();
    }
    while cursor.goto_first_child_for_byte(p).is_some() {
        let n = cursor.node();
        if n.start_byte() > p {
            cursor.goto_parent();
            break;
        }
        entered(n, path);
        path.push(n);
    }
}

/// Calls [`preorder`] on each of `roots` in turn.
pub(crate) fn preorder_all<'t>(roots: &[Node<'t>], mut f: impl FnMut(Node<'t>) -> bool) {
    for &root in roots {
        preorder(root, &mut f);
    }
}

/// The deepest node of `root`'s tree that spans `offset` (what
/// `root.descendant_for_byte_range(offset, offset)` finds) and its ancestors, nearest
/// first and `root` last: one descent, where the node and then its chain would be two.
pub(crate) fn chain_at(root: Node<'_>, offset: usize) -> Vec<Node<'_>> {
    let mut chain = vec![root];
    descend_to(&mut root.walk(), &mut chain, 1, offset, |_, _| {});
    chain.reverse();
    chain
}

/// Ancestor chains in the trees of one file (one tree per chunk), found without
/// `Node::parent()`.
///
/// tree-sitter finds a parent by descending from the root, scanning the root's children
/// one by one, so climbing costs one such descent per level. `Ancestry` descends once for
/// the whole chain. Made with [`Ancestry::new`] for many chains, it also keeps the roots'
/// children and finds the top-level node around a node by binary search instead of
/// scanning them.
pub(crate) struct Ancestry<'t> {
    /// The chunks' roots, in document order.
    roots: Vec<Node<'t>>,
    /// The roots' children (all chunks, in order), when listed.
    tops: Option<Vec<Node<'t>>>,
    /// The length of the file: the range of the file scope is `0..len`.
    len: usize,
}

impl<'t> Ancestry<'t> {
    /// The chains of the trees whose roots are `roots`, for many look-ups: lists the
    /// roots' children once.
    pub(crate) fn new(roots: Vec<Node<'t>>, len: usize) -> Ancestry<'t> {
        let tops = roots.iter().flat_map(|&r| children(r)).collect();
        Ancestry {
            roots,
            tops: Some(tops),
            len,
        }
    }

    /// The chains of the trees whose roots are `roots`, for a few look-ups: each scans
    /// the root's children, as listing them would.
    pub(crate) fn few(roots: Vec<Node<'t>>, len: usize) -> Ancestry<'t> {
        Ancestry {
            roots,
            tops: None,
            len,
        }
    }

    /// The root of the tree that holds `node`.
    fn root_of(&self, node: Node<'t>) -> Option<Node<'t>> {
        if self.roots.len() == 1 {
            return self.roots.first().copied();
        }
        let at = node.start_byte();
        let i = self
            .roots
            .partition_point(|r| r.start_byte() <= at)
            .saturating_sub(1);
        // A root starts at its first token, so a zero-width node at a chunk's very start
        // may sort before it.
        self.roots.get(i).copied()
    }

    /// The smallest node of the trees that spans `range`.
    pub(crate) fn node_spanning(&self, range: &std::ops::Range<usize>) -> Option<Node<'t>> {
        let at = range.start;
        let i = self
            .roots
            .partition_point(|r| r.start_byte() <= at)
            .saturating_sub(1);
        self.roots
            .get(i)
            .and_then(|r| r.descendant_for_byte_range(range.start, range.end))
    }

    /// Whether `node` is the root of one of the trees (the file scope).
    pub(crate) fn is_root(&self, node: Node<'t>) -> bool {
        self.root_of(node) == Some(node)
    }

    /// The range of the file scope.
    pub(crate) fn file_range(&self) -> std::ops::Range<usize> {
        0..self.len
    }

    /// The top-level node whose subtree holds the non-empty `node`: the child of its root
    /// that tree-sitter's `child_with_descendant` gives.
    fn top_of(&self, node: Node<'t>) -> Option<Node<'t>> {
        let Some(tops) = &self.tops else {
            return self.root_of(node)?.child_with_descendant(node);
        };
        // tree-sitter's step from the root picks the first child that ends at or after
        // `node` and either is `node` or has children, provided it starts at or before
        // `node`. Siblings do not overlap (nor do chunks), so their ends are sorted and
        // the first child ending at or after `node` is found by binary search.
        let (start, end) = (node.start_byte(), node.end_byte());
        match tops.get(tops.partition_point(|t| t.end_byte() < end)) {
            Some(&t) if t.start_byte() <= start && (t == node || t.child_count() > 0) => Some(t),
            _ => self.root_of(node)?.child_with_descendant(node),
        }
    }

    /// The roots' children (named or not, every chunk) that start at or before `offset`.
    pub(crate) fn top_level_before(&self, offset: usize) -> Cow<'_, [Node<'t>]> {
        let before = |tops: &[Node<'t>]| tops.partition_point(|t| t.start_byte() <= offset);
        match &self.tops {
            Some(tops) => Cow::Borrowed(&tops[..before(tops)]),
            None => {
                let mut tops: Vec<Node<'t>> = self
                    .roots
                    .iter()
                    .take_while(|r| r.start_byte() <= offset)
                    .flat_map(|&r| children(r))
                    .collect();
                tops.truncate(before(&tops));
                Cow::Owned(tops)
            }
        }
    }

    /// The ancestors of `node`, nearest first and its tree's root last: the nodes that
    /// repeated `parent()` calls give. A zero-width node (a missing token) is climbed
    /// with `parent()`, because tree-sitter has special rules for empty ranges.
    pub(crate) fn ancestors(&self, node: Node<'t>) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        let (start, end) = (node.start_byte(), node.end_byte());
        if start == end {
            let mut current = node.parent();
            while let Some(n) = current {
                out.push(n);
                current = n.parent();
            }
            return out;
        }
        let Some(root) = self.root_of(node) else {
            return out;
        };
        if node == root {
            return out;
        }
        out.push(root);
        let Some(top) = self.top_of(node) else {
            return out;
        };
        let mut current = top;
        while current != node {
            out.push(current);
            match current.child_with_descendant(node) {
                Some(next) => current = next,
                None => break,
            }
        }
        out.reverse();
        out
    }
}

/// The arguments of `<a, b<c, d>, (e, f)>`, split at the top-level commas. (Here, not
/// in `facts`, so that `consteval` can use it without a module circle.)
pub fn split_template_args(text: &str) -> Vec<String> {
    let inner = text.trim();
    let inner = inner.strip_prefix('<').unwrap_or(inner);
    let inner = inner.strip_suffix('>').unwrap_or(inner);
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(squash_ws(cur.trim()));
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(squash_ws(cur.trim()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `preorder_overlapping` visits the nodes that `preorder` meets overlapping the
    /// range, in the same order, for every range between two token boundaries of a
    /// small kernel (empty ranges included).
    #[test]
    fn preorder_overlapping_visits_what_preorder_meets_in_the_range() {
        let text = "__global__ void k(float* o, int c) {\n  __shared__ float s[8];\n  \
                    float a = s[1] + (c ? s[2] : 0.f);\n  if (c) { o[0] = a; }\n  \
                    __syncthreads();\n  o[1] = s[3];\n}\n";
        let file = crate::SourceFile::parse(text);
        let root = file.roots()[0];
        let mut bounds = Vec::new();
        preorder(root, |n| {
            bounds.extend([n.start_byte(), n.end_byte()]);
            true
        });
        bounds.sort_unstable();
        bounds.dedup();
        for (i, &from) in bounds.iter().enumerate() {
            for &to in &bounds[i..] {
                let mut want = Vec::new();
                preorder(root, |n| {
                    if n.end_byte() > from && n.start_byte() < to {
                        want.push(n.id());
                    }
                    true
                });
                let mut got = Vec::new();
                preorder_overlapping(root, from, to, |n| {
                    got.push(n.id());
                    true
                });
                assert_eq!(got, want, "{from}..{to}");
            }
        }
    }

    /// The fast paths of `squash_ws` and `strip_template_args` answer as the plain
    /// character loops do, on every string of up to five characters from an alphabet of
    /// ASCII and Unicode whitespace, brackets and letters.
    #[test]
    fn text_helpers_match_their_character_loops() {
        fn squash_ref(s: &str) -> String {
            let mut out = String::new();
            let mut space = false;
            for c in s.chars() {
                if c.is_whitespace() {
                    space = true;
                } else {
                    if space && !out.is_empty() {
                        out.push(' ');
                    }
                    space = false;
                    out.push(c);
                }
            }
            out
        }
        fn strip_ref(s: &str) -> String {
            let mut out = String::new();
            let mut depth = 0usize;
            for c in s.chars() {
                match c {
                    '<' => depth += 1,
                    '>' => depth = depth.saturating_sub(1),
                    _ if depth == 0 => out.push(c),
                    _ => {}
                }
            }
            out
        }
        let alphabet = [
            ' ', '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{a0}', 'a', 'é', '<', '>',
        ];
        // Every string of each length in turn, from the empty one.
        let mut level = vec![String::new()];
        let mut strings = level.clone();
        for _ in 0..5 {
            level = level
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            strings.extend(level.iter().cloned());
        }
        assert!(strings.len() > 100_000);
        for s in &strings {
            assert_eq!(squash_ws(s), squash_ref(s), "{s:?}");
            assert_eq!(strip_template_args(s), strip_ref(s), "{s:?}");
        }
    }

    /// The tables answer exactly what tree-sitter answers, for every node of a file with
    /// CUDA syntax and a syntax error, and for every field name of the grammar.
    #[test]
    fn node_names_match_tree_sitter() {
        let text = "#define T 32\n\
            template <int N> __global__ void __launch_bounds__(256) k(float* o) {\n\
            \x20   __shared__ float t[T][T + 1];\n\
            \x20   for (int i = 0; i < N; ++i) t[threadIdx.y][i] = o[i];\n\
            \x20   asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(0));\n\
            \x20   if (threadIdx.x == 0) { o[0] = t[0][0] +; }\n\
            }\n\
            void launch(float* o) { k<4><<<1, dim3(32, 8), 0, 0>>>(o); }\n";
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_cuda::LANGUAGE.into())
            .expect("the grammar loads");
        let tree = parser.parse(text, None).expect("a tree");
        let lang: tree_sitter::Language = tree_sitter_cuda::LANGUAGE.into();
        let names: Vec<&str> = (1..=lang.field_count() as u16)
            .filter_map(|id| lang.field_name_for_id(id))
            .collect();
        assert!(names.contains(&"declarator") && names.len() > 40);
        let (mut nodes, mut errors) = (0, 0);
        preorder(tree.root_node(), |n| {
            nodes += 1;
            errors += n.is_error() as usize;
            assert_eq!(n.kind_name(), n.kind());
            for name in names.iter().chain(&["no_such_field", ""]) {
                assert_eq!(n.field(name), n.child_by_field_name(name), "{name}");
                let mut a = n.walk();
                let mut b = n.walk();
                let ours: Vec<Node> = n.fields(name, &mut a).collect();
                let theirs: Vec<Node> = n.children_by_field_name(name, &mut b).collect();
                assert_eq!(ours, theirs, "{name}");
            }
            true
        });
        assert!(nodes > 100 && errors > 0, "{nodes} nodes, {errors} errors");
    }
}
