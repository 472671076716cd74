//! Shared-memory accesses, with each index lowered to an [`IndexExpr`] over the thread
//! index.

use rustc_hash::{FxHashMap as HashMap, FxHashSet};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use kernaut_gpu::expr::{Scale, Stepping, Trip};
use tree_sitter::Node;

use crate::data::{AccessSlot, ChunkCache};
use crate::declarator::declarator_name;
use crate::expr::{from_node, Expr};
use crate::facts::FileFacts;
use crate::source::SourceFile;
use crate::symbol::{
    declarators, declarators_into, init_and_param, is_file_scope, scope_candidates, SCOPE_KINDS,
};
use crate::types::type_size;
use crate::util::{
    copy_map, descend_to, lacks_byte, mostly_fresh, move_range, named_children, node_text, par_map,
    preorder, preorder_overlapping, squash_ws, strip_template_args, Ancestry, NodeExt, MAX_DEPTH,
};
use crate::TextRange;

pub use crate::data::{AccessData, AccessKind, Axis, BinOp, IndexExpr, SharedAccess};

mod for_header;
pub(crate) use for_header::{
    for_header, loop_condition, scale_update, while_header, ForHeader, WhileHeader,
};

mod vector_macros;
pub(crate) use vector_macros::{is_modified, vector_macros};

mod lower;
pub(crate) use lower::Lowerer;
pub use lower::NameWrite;

mod terms;
pub use terms::IndexTerm;

mod condition;
pub use condition::GuardCondition;

mod helpers;

mod steps;
pub use steps::{BodySteps, Step};

/// One comparison of a guard ([`SourceFile::guard_comparisons`]): `left op right`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardComparison {
    /// The left side, lowered.
    pub left: IndexExpr,
    /// `<`, `<=`, `>`, `>=`, `==` or `!=`.
    pub op: String,
    /// The right side, lowered.
    pub right: IndexExpr,
}

impl GuardComparison {
    /// The comparison that holds exactly where `op` fails (`<` for `>=`); `None` for
    /// what is no comparison.
    pub fn negated_op(op: &str) -> Option<&'static str> {
        Some(match op {
            "<" => ">=",
            "<=" => ">",
            ">" => "<=",
            ">=" => "<",
            "==" => "!=",
            "!=" => "==",
            _ => return None,
        })
    }

    /// The comparison with its sides swapped (`a < b` as `b > a`); `None` for what is
    /// no comparison.
    pub fn swapped_op(op: &str) -> Option<&'static str> {
        Some(match op {
            "<" => ">",
            "<=" => ">=",
            ">" => "<",
            ">=" => "<=",
            "==" => "==",
            "!=" => "!=",
            _ => return None,
        })
    }

    /// Whether the comparison holds for the values `l` and `r` of its sides.
    pub fn holds(&self, l: i64, r: i64) -> bool {
        match self.op.as_str() {
            "<" => l < r,
            "<=" => l <= r,
            ">" => l > r,
            ">=" => l >= r,
            "==" => l == r,
            _ => l != r,
        }
    }
}

/// One subscript `base[index]` of a named array or pointer inside a range
/// ([`SourceFile::subscripts_in`]), whatever the base is: a `__shared__` array, a pointer
/// local or parameter, a register array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscript {
    /// The range of the subscript expression.
    pub range: TextRange,
    /// The name subscripted.
    pub base: String,
    /// The range of the index expression.
    pub index_range: TextRange,
    /// The index, lowered.
    pub index: IndexExpr,
    /// Load, store, both, or address taken.
    pub kind: AccessKind,
    /// When the subscript is written: the operator (`=`, `+=`, …, `++`, `--`) and the
    /// assigned value's range (`None` for `++`/`--`).
    pub write: Option<(String, Option<TextRange>)>,
}

impl SourceFile {
    /// Every subscript of a `__shared__` array, or of a pointer carved from an
    /// `extern __shared__` buffer, inside a function, in document order.
    pub fn shared_accesses(&self) -> Vec<SharedAccess> {
        let facts = self.facts();
        let chunks = self.chunk_views();
        if facts.shared.is_empty() || chunks.is_empty() {
            return Vec::new();
        }
        let has_function = crate::facts::chunk_has_function(self);
        // Subscripts count from the first function on (as one walk over the file would).
        // A chunk's accesses depend on its own text and on the file-wide inputs that the
        // facts' fingerprint covers, so they are kept per chunk under that key.
        let mut keys = Vec::with_capacity(chunks.len());
        let mut in_function_at = Vec::with_capacity(chunks.len());
        let mut in_function = false;
        for has in &has_function {
            keys.push((facts.fingerprint() ^ u64::from(in_function), in_function));
            in_function_at.push(in_function);
            in_function |= has;
        }
        let keys: Vec<u64> = keys.iter().map(|(k, _)| *k).collect();
        let tree = OnceLock::new();
        self.kept_accesses(
            &chunks,
            &tree,
            &keys,
            |c| &c.accesses,
            |i, low| self.accesses_in(chunks[i].root, low, in_function_at[i]),
        )
    }

    /// Accesses found chunk by chunk, each chunk's kept in its cache (the slot `slot`
    /// picks) under `keys[i]`, the fingerprint of the file-wide inputs it was computed
    /// with; `compute(i, low)` finds chunk `i`'s in file offsets. The chunks missing
    /// from the cache are computed in parallel; the result is in document order.
    fn kept_accesses<'a>(
        &'a self,
        chunks: &[crate::source::ChunkView<'a>],
        tree: &'a OnceLock<Ancestry<'a>>,
        keys: &[u64],
        slot: impl Fn(&ChunkCache) -> &AccessSlot,
        compute: impl Fn(usize, &Lowerer<'a>) -> Vec<SharedAccess> + Sync,
    ) -> Vec<SharedAccess> {
        let text: &'a str = self.text();
        let facts: &'a FileFacts = self.facts();
        let cached: Vec<Option<Arc<Vec<SharedAccess>>>> = chunks
            .iter()
            .zip(keys)
            .map(|(c, key)| {
                let slot = slot(c.cache).lock().ok()?;
                slot.as_ref()
                    .filter(|(k, _)| k == key)
                    .map(|(_, a)| a.clone())
            })
            .collect();
        let todo: Vec<usize> = (0..chunks.len()).filter(|&i| cached[i].is_none()).collect();
        let computed = if todo.is_empty() {
            Vec::new()
        } else {
            let tree = tree
                .get_or_init(|| Ancestry::new(chunks.iter().map(|c| c.root).collect(), text.len()));
            par_map(&todo, |&i| {
                let c = &chunks[i];
                let low = Lowerer::new(text, facts, tree);
                let mut part = compute(i, &low);
                for a in &mut part {
                    a.range = move_range(&a.range, c.start, 0);
                }
                Arc::new(part)
            })
        };
        let mut computed = todo.iter().zip(computed);
        let mut parts: Vec<(usize, Arc<Vec<SharedAccess>>)> = Vec::with_capacity(chunks.len());
        for (i, (c, cached)) in chunks.iter().zip(cached).enumerate() {
            let part = match cached {
                Some(part) => part,
                None => {
                    let Some((_, part)) = computed.next() else {
                        continue;
                    };
                    if let Ok(mut slot) = slot(c.cache).lock() {
                        *slot = Some((keys[i], part.clone()));
                    }
                    part
                }
            };
            parts.push((c.start, part));
        }
        // Copied to the file's offsets (in parallel for a new file), then moved in order.
        copy_map(
            &parts,
            mostly_fresh(todo.len(), chunks.len()),
            |(start, part)| {
                part.iter()
                    .map(|a| {
                        let mut a = a.clone();
                        a.range = move_range(&a.range, 0, *start);
                        a
                    })
                    .collect::<Vec<_>>()
            },
        )
        .into_iter()
        .flatten()
        .collect()
    }

    /// The accesses under one chunk's `root`.
    ///
    /// They are the subscripts a preorder walk of the chunk meets once it has entered a
    /// function, skipping statements, expressions and declarations without a `[`, and
    /// taking a chain like `a[i][j]` at its outermost link. Every subscript holds a `[`,
    /// so the subscripts that walk meets are those on the way down to some `[` of the
    /// text: the walk descends to each `[` instead of visiting every node, holding each
    /// node's ancestors on the way (which the lowering of the indices and the access's
    /// kind need), and takes the subscripts in the preorder's order (by start, an
    /// enclosing one first).
    fn accesses_in<'a>(
        &self,
        root: Node<'a>,
        low: &Lowerer<'a>,
        in_function: bool,
    ) -> Vec<SharedAccess> {
        let text = low.text;
        // Where the preorder walk would enter its first function: the first function it
        // visits, not being inside a statement, expression or declaration without `[`.
        let first_function = if in_function {
            Some(0)
        } else {
            let mut found = None;
            preorder(root, |node| {
                if found.is_some() {
                    return false;
                }
                let kind = node.kind_name();
                if kind == "function_definition" {
                    found = Some(node.start_byte());
                    return false;
                }
                !lacks_byte(node, kind, text, b'[')
            });
            found
        };
        let Some(first_function) = first_function else {
            return Vec::new();
        };
        // Each subscript on the way down to a `[` from the first function on, with its
        // ancestors (nearest first, the root last).
        let mut subscripts: Vec<(Node<'a>, Vec<Node<'a>>)> = Vec::new();
        let mut seen = FxHashSet::default();
        let range = root.byte_range();
        let mut cursor = root.walk();
        // `path` is the chain from the root down to the cursor's node.
        let mut path = vec![root];
        let bytes = text.as_bytes().get(range.clone()).unwrap_or(&[]);
        for p in memchr::memchr_iter(b'[', bytes).map(|i| range.start + i) {
            descend_to(&mut cursor, &mut path, 1, p, |_, _| {});
            for (i, &n) in path.iter().enumerate().skip(1) {
                if n.start_byte() >= first_function
                    && n.kind_name() == "subscript_expression"
                    && seen.insert(n.id())
                {
                    subscripts.push((n, path[..i].iter().rev().copied().collect()));
                }
            }
        }
        subscripts.sort_by(|(a, _), (b, _)| {
            (a.start_byte(), b.end_byte()).cmp(&(b.start_byte(), a.end_byte()))
        });
        let mut out: Vec<SharedAccess> = Vec::new();
        let mut consumed: Vec<TextRange> = Vec::new();
        let mut inner_subscripts = FxHashSet::default();
        let mut decided = HashMap::default();
        for (node, above) in &subscripts {
            // Code under an `if` whose condition is a constant of the file, in the branch
            // it never takes, is not compiled.
            let dead = std::iter::once(node)
                .chain(above.iter())
                .zip(above.iter())
                .any(|(child, parent)| dead_branch(*child, *parent, low, &mut decided));
            if dead {
                continue;
            }
            // A subscript comes before its argument, so the arguments of the subscripts
            // taken so far are the inner links of a chain like `a[i][j]`.
            let inner = inner_subscripts.contains(&node.id());
            if let Some(arg) = node.field("argument") {
                inner_subscripts.insert(arg.id());
            }
            if !inner {
                if let Some(a) = self.access(*node, above, low, &mut consumed) {
                    out.push(a);
                }
            }
        }
        let consumed: FxHashSet<TextRange> = consumed.into_iter().collect();
        out.retain(|a| !consumed.contains(&a.range));
        out
    }

    /// Every one-index subscript of a pointer parameter of the enclosing function
    /// (`A[row * K + i]` with `const float* A`), in document order: the global-memory
    /// accesses whose lane addresses the coalescing rule models. `array` is the parameter,
    /// `byte_offset` the index times the pointee's size (unknown for a template or
    /// incomplete type); subscripts of `__shared__` arrays and carves are not among them.
    pub fn global_accesses(&self) -> Vec<SharedAccess> {
        let facts = self.facts();
        let chunks = self.chunk_views();
        if chunks.is_empty()
            || !facts
                .kernels
                .iter()
                .chain(&facts.device_functions)
                .any(|f| f.params.iter().any(|p| p.ty.contains('*')))
        {
            return Vec::new();
        }
        // A chunk's accesses depend on its own text and on the file-wide inputs that
        // the facts' fingerprint covers: kept per chunk under that key, as the shared ones.
        let text = self.text();
        let keys = vec![facts.fingerprint(); chunks.len()];
        let tree = OnceLock::new();
        self.kept_accesses(
            &chunks,
            &tree,
            &keys,
            |c| &c.global_accesses,
            |i, low| {
                let mut out = Vec::new();
                let mut decided = HashMap::default();
                preorder(chunks[i].root, |node| {
                    let kind = node.kind_name();
                    if lacks_byte(node, kind, text, b'[') {
                        return false;
                    }
                    if node
                        .parent()
                        .is_some_and(|p| dead_branch(node, p, low, &mut decided))
                    {
                        return false;
                    }
                    if kind == "subscript_expression" {
                        if let Some(a) = self.global_access(node, low) {
                            out.push(a);
                        }
                    }
                    true
                });
                out
            },
        )
    }

    /// The access of subscript `node` when its base is a pointer parameter.
    fn global_access<'a>(&self, node: Node<'a>, low: &Lowerer<'a>) -> Option<SharedAccess> {
        let text = low.text;
        let facts = low.facts;
        let base = node.field("argument")?;
        if base.kind_name() != "identifier" {
            return None;
        }
        let idx = node
            .field("indices")
            .and_then(|l| named_children(l).first().copied())?;
        let name = node_text(base, text);
        let function = facts.function_at(node.start_byte())?;
        let param = function.params.iter().find(|p| p.name == name)?;
        let stars = param.ty.matches('*').count();
        if stars != 1 || param.ty.contains('[') || param.ty.contains('&') {
            return None;
        }
        if facts.shared_named(name, node.start_byte()).is_some()
            || facts.carves.iter().any(|c| c.name == name)
        {
            return None;
        }
        // The parameter must not be shadowed, reassigned or moved in the body.
        let body = function.body_range.clone()?;
        let body_text = text.get(body)?;
        if is_modified(body_text, name) {
            return None;
        }
        let pointee: String = param
            .ty
            .replace('*', " ")
            .split_whitespace()
            .filter(|w| {
                !matches!(
                    *w,
                    "const" | "volatile" | "__restrict__" | "__restrict" | "restrict"
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
        let element_size = type_size(&pointee).filter(|_| !pointee.is_empty());
        let index = low.lower(&from_node(idx, text, 0), idx, 0);
        let esize = element_size.map_or_else(
            || IndexExpr::Unknown(format!("the element size of `{name}` is not known")),
            |s| IndexExpr::Int(s as i64),
        );
        let byte_offset = IndexExpr::binary(index.clone(), BinOp::Mul, esize);
        let above = low.ancestors(node);
        let mut kind = access_kind(&above, node, text);
        // Through one of the file's vector macros (`FLOAT4(in[i])`), as for shared
        // memory: one access of the vector's width.
        let mut width = element_size;
        let mut cast_type = None;
        if let Some((ty, call, call_above)) =
            macro_call_of(node, &above, low).or_else(|| reference_cast_of(node, &above, text))
        {
            if let Some(w) = type_size(&strip_template_args(&ty)) {
                width = Some(w);
                cast_type = Some(ty);
                kind = access_kind(call_above, call, text);
            }
        }
        let byte_offset = match unknown_macro_call_of(node, &above, low) {
            Some(m) => {
                width = None;
                IndexExpr::Unknown(format!(
                    "the access is the argument of `{m}(…)`, a macro the file does not define"
                ))
            }
            None => byte_offset,
        };
        Some(SharedAccess::new(
            node.byte_range(),
            AccessData {
                array: name.to_string(),
                root: name.to_string(),
                kind,
                index_texts: vec![squash_ws(node_text(idx, text))],
                indices: vec![index],
                element_size,
                width,
                cast_type,
                byte_offset,
                function: Some(function.name.clone()),
            },
        ))
    }

    /// The element indices of the memory loads the value of the condition at `range` (an
    /// `if`'s condition as [`crate::EnclosingKind::If`] gives its range) reads, each
    /// lowered like a subscript's index: directly (`if (s[t] > 0)`) or through the locals
    /// it names (`int cnt = pool[t]; if (cnt)`). A load through a pointer or a loading
    /// call has an unknown index. Empty when the condition reads no memory.
    pub fn condition_loads(&self, range: &TextRange) -> Vec<IndexExpr> {
        let text = self.text();
        let roots = self.roots();
        let Some(root) = roots
            .iter()
            .find(|r| r.start_byte() <= range.start && range.end <= r.end_byte())
        else {
            return Vec::new();
        };
        let Some(mut node) = root.descendant_for_byte_range(range.start, range.end) else {
            return Vec::new();
        };
        if node.kind_name() == "condition_clause" {
            match node.field("value") {
                Some(v) => node = v,
                None => return Vec::new(),
            }
        }
        let tree = Ancestry::few(roots.clone(), text.len());
        let low = Lowerer::new(text, self.facts(), &tree);
        let mut out = Vec::new();
        low.loads_read(&from_node(node, text, 0), node, &mut Vec::new(), &mut out);
        out
    }

    /// Every identifier token of the file spelled `name` (outside comments and strings),
    /// whatever it names: a variable, a callee, a template's name in `k<4>`; not the name
    /// a function declaration declares (`template <int B> __global__ void k(int*);`), which
    /// uses nothing. (An explicit instantiation, `template void k<4>(int*);`, names `k<4>`.)
    pub fn identifier_uses(&self, name: &str) -> Vec<TextRange> {
        let text = self.text();
        let mut out = Vec::new();
        if !text.contains(name) {
            return out;
        }
        for root in self.roots() {
            crate::util::preorder(root, |n| {
                let declared = n.parent().is_some_and(|p| {
                    p.kind_name() == "function_declarator"
                        && p.field("declarator").is_some_and(|d| d.id() == n.id())
                });
                if matches!(n.kind_name(), "identifier" | "type_identifier")
                    && &text[n.byte_range()] == name
                    && !declared
                {
                    out.push(n.start_byte()..n.end_byte());
                }
                true
            });
        }
        out
    }

    /// The function template whose definition holds `offset` (a host or device function
    /// declared `template <…>`, the innermost): its short name and its definition's range.
    pub fn enclosing_template_function(&self, offset: usize) -> Option<(String, TextRange)> {
        let mut node = self
            .root_at(offset)?
            .descendant_for_byte_range(offset, offset)?;
        loop {
            if node.kind_name() == "function_definition" {
                let template = node
                    .parent()
                    .filter(|p| p.kind_name() == "template_declaration")?;
                let name = declarator_name(node.field("declarator")?)?;
                let text = &self.text()[name.byte_range()];
                let short = text.rsplit("::").next().unwrap_or(text).trim().to_string();
                return Some((short, template.start_byte()..template.end_byte()));
            }
            node = node.parent()?;
        }
    }

    /// The conditions of the `for` and `while` loops around `offset` in its function,
    /// innermost first, where `offset` is in the loop's body: each holds whenever the
    /// body runs.
    pub fn loop_conditions_around(&self, offset: usize) -> Vec<TextRange> {
        let mut out = Vec::new();
        let Some(mut node) = self
            .root_at(offset)
            .and_then(|r| r.descendant_for_byte_range(offset, offset))
        else {
            return out;
        };
        while let Some(parent) = node.parent() {
            match parent.kind_name() {
                "function_definition" | "lambda_expression" => break,
                "for_statement" | "while_statement" => {
                    let in_body = parent.field("body").is_some_and(|b| b.id() == node.id());
                    if let Some(c) = parent.field("condition").filter(|_| in_body) {
                        out.push(c.start_byte()..c.end_byte());
                    }
                }
                _ => {}
            }
            node = parent;
        }
        out
    }

    /// The condition at `range` (an `if`'s condition as [`crate::EnclosingKind::If`]
    /// gives its range) as comparisons that all hold, each side lowered like an index:
    /// `lane < MMA_K && tid % 32 >= 4` gives two. `None` when it is anything else (a
    /// call, `||`, a bare value).
    pub fn guard_comparisons(&self, range: &TextRange) -> Option<Vec<GuardComparison>> {
        self.guard_comparisons_with(range, &[])
    }

    /// [`SourceFile::guard_comparisons`] in one instantiation of a template: a side the
    /// lowering does not know that folds with the template arguments in `bound` (`R` in
    /// `tid < R`) takes its value.
    pub fn guard_comparisons_with(
        &self,
        range: &TextRange,
        bound: &[(String, i64)],
    ) -> Option<Vec<GuardComparison>> {
        self.guard_comparisons_in(range, bound, false, false)
            .map(|(comps, _)| comps)
    }

    /// [`SourceFile::guard_comparisons_with`] for a question about the lanes of one warp:
    /// the results of warp votes and broadcasts (`hit = __ballot_sync(…)`, `__ffs(hit)`)
    /// are one value for the warp.
    pub fn lane_guard_comparisons(
        &self,
        range: &TextRange,
        bound: &[(String, i64)],
    ) -> Option<Vec<GuardComparison>> {
        self.guard_comparisons_in(range, bound, true, false)
            .map(|(comps, _)| comps)
    }

    /// [`SourceFile::lane_guard_comparisons`], where a disjunction of comparisons is read
    /// too, as the negation of the conjunction of their negations (`tx <= 0 || tx >= 31`
    /// is `!(tx > 0 && tx < 31)`): the comparisons, and whether the condition is their
    /// conjunction's negation.
    pub fn lane_guard_clauses(
        &self,
        range: &TextRange,
        bound: &[(String, i64)],
    ) -> Option<(Vec<GuardComparison>, bool)> {
        self.guard_comparisons_in(range, bound, true, true)
    }

    fn guard_comparisons_in(
        &self,
        range: &TextRange,
        bound: &[(String, i64)],
        warp_values: bool,
        disjunctions: bool,
    ) -> Option<(Vec<GuardComparison>, bool)> {
        match self.tree_memo() {
            Some(memo) => memo.guard(range, bound, (warp_values, disjunctions), || {
                self.lower_guard(range, bound, warp_values, disjunctions)
            }),
            None => self.lower_guard(range, bound, warp_values, disjunctions),
        }
    }

    fn lower_guard(
        &self,
        range: &TextRange,
        bound: &[(String, i64)],
        warp_values: bool,
        disjunctions: bool,
    ) -> Option<(Vec<GuardComparison>, bool)> {
        let text = self.text();
        let roots = self.roots();
        let root = roots
            .iter()
            .find(|r| r.start_byte() <= range.start && range.end <= r.end_byte())?;
        let mut node = root.descendant_for_byte_range(range.start, range.end)?;
        let facts = self.facts();
        let tree = Ancestry::few(roots.clone(), text.len());
        let mut low = Lowerer::new(text, facts, &tree);
        low.warp_values = warp_values;
        // For the lanes of one warp, a load every lane makes from the same address
        // (`cuts[blockIdx.x]`) is one value, as a parameter is.
        low.opaque_uniform = warp_values;
        let mut out = Vec::new();
        let mut todo = Vec::new();
        // The condition clause and parentheses around the expression.
        while matches!(
            node.kind_name(),
            "condition_clause" | "parenthesized_expression"
        ) {
            node = match named_children(node).as_slice() {
                [one] => *one,
                _ => return None,
            };
        }
        // `a || b`: the comparisons of `!a && !b`, negated as a whole.
        let negated = disjunctions
            && node.kind_name() == "binary_expression"
            && node.field("operator").map(|o| node_text(o, text)) == Some("||");
        let joins = if negated { "||" } else { "&&" };
        todo.push(node);
        let mut followed = 0;
        while let Some(n) = todo.pop() {
            if out.len() > 8 {
                return None;
            }
            match n.kind_name() {
                "parenthesized_expression" => todo.push(*named_children(n).first()?),
                // A guard held in a local no assignment reaches (`const bool p = lane <
                // 8; if (p)`) is its initialiser.
                "identifier" if followed < 4 => {
                    followed += 1;
                    todo.push(low.read_only_initializer(n, node_text(n, text))?);
                }
                "binary_expression" => {
                    let op = node_text(n.field("operator")?, text);
                    let (l, r) = (n.field("left")?, n.field("right")?);
                    if op == joins {
                        todo.push(r);
                        todo.push(l);
                        continue;
                    }
                    let op = if negated {
                        GuardComparison::negated_op(op)?
                    } else if matches!(op, "<" | "<=" | ">" | ">=" | "==" | "!=") {
                        op
                    } else {
                        return None;
                    };
                    let mut sides = [l, r].map(|x| low.lower(&from_node(x, text, 0), x, 0));
                    for (e, x) in sides.iter_mut().zip([l, r]) {
                        if bound.is_empty() || e.unknown_reason().is_none() {
                            continue;
                        }
                        if let Some(v) =
                            facts.fold_text_with(node_text(x, text), x.start_byte(), bound)
                        {
                            *e = IndexExpr::Int(v);
                        }
                    }
                    let [left, right] = sides;
                    out.push(GuardComparison {
                        left,
                        op: op.to_string(),
                        right,
                    });
                }
                _ => return None,
            }
        }
        Some((out, negated))
    }

    /// The pointer expression at `range` (an `asm` operand, a call argument) as a base
    /// name and an element index lowered like a subscript: `&g[i]`, `g + i` and `g`
    /// (index 0), through parentheses and casts. `None` for anything else. Kept with the
    /// file's facts: asked again, the operand is not lowered again.
    pub fn pointer_operand(&self, range: &TextRange) -> Option<(String, IndexExpr)> {
        match self.tree_memo() {
            Some(memo) => memo.operand(range, || self.lower_pointer_operand(range)),
            None => self.lower_pointer_operand(range),
        }
    }

    fn lower_pointer_operand(&self, range: &TextRange) -> Option<(String, IndexExpr)> {
        let text = self.text();
        let roots = self.roots();
        let mut node = expression_at(&roots, range)?;
        let tree = Ancestry::few(roots.clone(), text.len());
        let low = Lowerer::new(text, self.facts(), &tree);
        for _ in 0..8 {
            match node.kind_name() {
                "parenthesized_expression" => node = *named_children(node).first()?,
                "cast_expression" => node = node.field("value")?,
                _ => break,
            }
        }
        let ident =
            |n: Node<'_>| (n.kind_name() == "identifier").then(|| node_text(n, text).to_string());
        match node.kind_name() {
            "identifier" => Some((node_text(node, text).to_string(), IndexExpr::Int(0))),
            "pointer_expression" => {
                if node.field("operator").map(|o| node_text(o, text)) != Some("&") {
                    return None;
                }
                let sub = node.field("argument")?;
                if sub.kind_name() != "subscript_expression" {
                    return None;
                }
                let base = ident(sub.field("argument")?)?;
                let idx = sub
                    .field("indices")
                    .and_then(|l| named_children(l).first().copied())?;
                Some((base, low.lower(&from_node(idx, text, 0), idx, 0)))
            }
            "binary_expression" => {
                // `g + a + b` is `(g + a) + b`: the terms added to the pointer.
                let mut terms = Vec::new();
                let mut cur = node;
                while cur.kind_name() == "binary_expression" && terms.len() < 8 {
                    if cur.field("operator").map(|o| node_text(o, text)) != Some("+") {
                        return None;
                    }
                    terms.push(cur.field("right")?);
                    cur = cur.field("left")?;
                }
                let base = ident(cur)?;
                let index = terms.iter().rev().fold(IndexExpr::Int(0), |acc, t| {
                    IndexExpr::binary(acc, BinOp::Add, low.lower(&from_node(*t, text, 0), *t, 0))
                });
                Some((base, index))
            }
            _ => None,
        }
    }

    /// Whether the value a plain assignment stores through the access that ends at
    /// `access_end` (`c[k] = coef[2 * blockIdx.y];`, `flag = 1;`) is the same in every
    /// thread: its right side reads no thread index, through locals, and loads only at
    /// addresses that read none. `false` where the access is not the left side of a
    /// plain `=`.
    pub fn stores_same_value(&self, access_end: usize) -> bool {
        self.stores_same_value_in(access_end, None)
    }

    /// [`Self::stores_same_value`] in a block of `block` threads: an axis of one thread
    /// reads as 0 (`m = in[row * n]` with `row = blockIdx.y * blockDim.y + threadIdx.y`
    /// in a block of 64 × 1 stores one value).
    pub fn stores_same_value_in(&self, access_end: usize, block: Option<[u32; 3]>) -> bool {
        let Some((left, right)) = self.plain_assignment(access_end) else {
            return false;
        };
        let text = self.text();
        let tree = Ancestry::few(self.roots().clone(), text.len());
        let low = Lowerer::new(text, self.facts(), &tree).for_uniformity(&[], block);
        let value = low.lower(&from_node(right, text, 0), right, 0);
        if value.unknown_reason().is_none() && !value.depends_on_thread() {
            return true;
        }
        self.value_follows_address(left, right, &low)
    }

    /// The axes of `threadIdx` that the value a plain assignment stores through the
    /// access ending at `access_end` reads, in a block of `block` threads (`m = row` with
    /// `row = blockIdx.y * blockDim.y + threadIdx.y`: `y` alone), where the value lowers;
    /// the lane reads every axis. Two threads equal on those axes store the same value.
    /// `None` where the access is not the left side of a plain `=` or the value does not
    /// lower (a load at an address that names the thread).
    pub fn stored_value_axes_in(
        &self,
        access_end: usize,
        block: Option<[u32; 3]>,
    ) -> Option<[bool; 3]> {
        use kernaut_gpu::expr::{Axis, Expr as Value};
        let (_, right) = self.plain_assignment(access_end)?;
        let text = self.text();
        let tree = Ancestry::few(self.roots().clone(), text.len());
        let low = Lowerer::new(text, self.facts(), &tree).for_uniformity(&[], block);
        let value = low.lower(&from_node(right, text, 0), right, 0);
        if value.unknown_reason().is_some() {
            // `bin[c] = min(n - 2, max(0, int(t[c] * 0.1f)))`: loads of arrays the
            // function never writes and pure calls, read at indices of known axes.
            let mut axes = [false; 3];
            return self
                .value_thread_axes(right, &low, &mut axes, 0)
                .then_some(axes);
        }
        let reads = |axis: Axis| {
            value.mentions(&|e| matches!(e, Value::Lane) || *e == Value::ThreadIdx(axis))
        };
        Some([reads(Axis::X), reads(Axis::Y), reads(Axis::Z)])
    }

    /// The axes of `threadIdx` that the value `node` reads, added to `axes`, where the
    /// index model does not lower it: through locals (their initialisers and the
    /// assignments that reach the use), elements of arrays the function never writes at
    /// indices of known axes, arithmetic, casts and calls of pure math functions
    /// (`min`, `fmaxf`, `int(…)`). `false` where anything else is read: the lane, a load
    /// through a pointer or of a written array, an atomic, a call of another function.
    fn value_thread_axes<'t>(
        &self,
        node: Node<'t>,
        low: &Lowerer<'t>,
        axes: &mut [bool; 3],
        depth: usize,
    ) -> bool {
        use kernaut_gpu::expr::{Axis, Expr as Value};
        // Expression nesting and locals followed together.
        if depth > 40 {
            return false;
        }
        let text = self.text();
        let function = self
            .facts()
            .function_at(node.start_byte())
            .map(|f| f.range.clone());
        // Axes of a value the index model lowers; `false` for an unknown one.
        let lowered = |axes: &mut [bool; 3], v: &IndexExpr| -> bool {
            if v.unknown_reason().is_some() {
                return false;
            }
            if v.mentions(&|e| matches!(e, Value::Lane)) {
                *axes = [true; 3];
            }
            for (i, a) in [Axis::X, Axis::Y, Axis::Z].into_iter().enumerate() {
                axes[i] |= v.mentions(&|e| *e == Value::ThreadIdx(a));
            }
            true
        };
        match node.kind_name() {
            "number_literal" | "true" | "false" | "primitive_type" | "type_descriptor"
            | "type_identifier" | "sizeof_expression" => true,
            "identifier" => {
                let name = node_text(node, text);
                let v = low.lower(&Expr::Name(name.to_string()), node, 0);
                if lowered(axes, &v) {
                    return true;
                }
                // A local: what its initialiser and the assignments reaching here read.
                match low.declaration(node, name) {
                    Some((Some(init), false)) => {
                        self.value_thread_axes(init, low, axes, depth + 1)
                            && low.writes_of(node, name).into_iter().all(|w| {
                                w.kind_name() == "assignment_expression"
                                    && w.field("operator")
                                        .is_some_and(|o| node_text(o, text) == "=")
                                    && w.field("right").is_some_and(|r| {
                                        self.value_thread_axes(r, low, axes, depth + 1)
                                    })
                            })
                    }
                    _ => false,
                }
            }
            "field_expression" => {
                let v = low.lower(&from_node(node, text, 0), node, 0);
                lowered(axes, &v)
            }
            "subscript_expression" => {
                let Some((a, i)) = subscript_parts(node) else {
                    return false;
                };
                if a.kind_name() != "identifier" {
                    return false;
                }
                let array = node_text(a, text);
                let written = self.writes_array(array, function.as_ref(), true);
                !written && self.value_thread_axes(i, low, axes, depth + 1)
            }
            "call_expression" => {
                let Some(f) = node.field("function") else {
                    return false;
                };
                let callee = node_text(f, text);
                let short = callee.rsplit("::").next().unwrap_or(callee);
                let args_literal = node.field("arguments").is_some_and(|a| {
                    named_children(a)
                        .iter()
                        .all(|c| c.kind_name() == "number_literal")
                });
                // `Float(1.)`: a cast through a type alias, or any call of literals
                // alone, unless it is a function of the file that reads the thread.
                let literal_call = args_literal
                    && !self.facts().device_functions.iter().any(|d| {
                        crate::short_name(&d.name) == short
                            && d.body_range.as_ref().is_some_and(|b| {
                                let body = text.get(b.clone()).unwrap_or_default();
                                body.contains("threadIdx") || body.contains("atomic")
                            })
                    });
                let pure = literal_call
                    || matches!(f.kind_name(), "primitive_type" | "type_identifier")
                    || short.starts_with("static_cast")
                    || short.starts_with("__float2")
                    || short.starts_with("__int2")
                    || short.starts_with("__double2")
                    || PURE_MATH.contains(&short);
                if !pure {
                    return false;
                }
                let Some(args) = node.field("arguments") else {
                    return false;
                };
                named_children(args)
                    .into_iter()
                    .all(|c| self.value_thread_axes(c, low, axes, depth + 1))
            }
            "binary_expression"
            | "parenthesized_expression"
            | "cast_expression"
            | "conditional_expression"
            | "comma_expression"
            | "unary_expression" => {
                // `*p` and `&x` are no arithmetic.
                if node.kind_name() == "unary_expression"
                    && node
                        .field("operator")
                        .is_some_and(|o| matches!(node_text(o, text), "*" | "&"))
                {
                    return false;
                }
                named_children(node)
                    .into_iter()
                    .all(|c| self.value_thread_axes(c, low, axes, depth + 1))
            }
            _ => false,
        }
    }

    /// Whether the function in `function` (the whole file where `None`) stores to an
    /// element of `array` (or, with `address_taken`, takes one's address too).
    fn writes_array(&self, array: &str, function: Option<&TextRange>, address_taken: bool) -> bool {
        self.global_accesses()
            .iter()
            .chain(self.shared_accesses().iter())
            .any(|a| {
                a.root == array
                    && (matches!(a.kind, AccessKind::Store | AccessKind::LoadStore)
                        || (address_taken && a.kind == AccessKind::AddressOf))
                    && function.is_none_or(|f| f.contains(&a.range.start))
            })
    }

    /// The left and right sides of the plain `=` whose left side is the access that ends
    /// at `access_end`.
    fn plain_assignment(&self, access_end: usize) -> Option<(Node<'_>, Node<'_>)> {
        let text = self.text();
        let roots = self.roots();
        let root = roots
            .iter()
            .find(|r| r.start_byte() < access_end && access_end <= r.end_byte())?;
        let mut node = root.descendant_for_byte_range(access_end.saturating_sub(1), access_end)?;
        let assignment = loop {
            match node.kind_name() {
                "assignment_expression" => break node,
                "expression_statement" | "compound_statement" | "function_definition" => {
                    return None
                }
                _ => {}
            }
            node = node.parent()?;
        };
        let (left, op, right) = (
            assignment.field("left")?,
            assignment.field("operator")?,
            assignment.field("right")?,
        );
        (node_text(op, text) == "=" && left.end_byte() == access_end).then_some((left, right))
    }

    /// Whether the value `right` stored at `left` (`out[i] = a[i] + b[i]`, `sh[lane][0] =
    /// (float)lane`, `buf[threadIdx.x][r] = in[(r0 + r) * n + threadIdx.x]`) is the same
    /// wherever two threads store to the same element: each index is a variable, a
    /// thread index or a constant, and the value reads those, values the same in every
    /// thread, and elements of arrays the function never writes at indices built the same
    /// way, through casts and arithmetic only. Two threads that store to one element then
    /// agree on every index, so they store the same value.
    fn value_follows_address<'t>(
        &self,
        left: Node<'t>,
        right: Node<'t>,
        low: &Lowerer<'t>,
    ) -> bool {
        let text = self.text();
        // The indices of `left`, outermost last: each a variable or a number.
        let mut vars: Vec<&str> = Vec::new();
        let mut n = left;
        let mut depth = 0;
        while n.kind_name() == "subscript_expression" && depth < 4 {
            depth += 1;
            let index = n
                .field("indices")
                .and_then(|l| named_children(l).first().copied())
                .or_else(|| n.field("index"));
            let Some(index) = index else {
                return false;
            };
            match index.kind_name() {
                "number_literal" => {}
                "identifier" => vars.push(node_text(index, text)),
                // `buf[threadIdx.x][r]`: a thread index picks the element too.
                "field_expression" if node_text(index, text).starts_with("threadIdx.") => {
                    vars.push(node_text(index, text));
                }
                _ => return false,
            }
            let Some(a) = n.field("argument") else {
                return false;
            };
            n = a;
        }
        if vars.is_empty() {
            return false;
        }
        let function = self
            .facts()
            .function_at(left.start_byte())
            .map(|f| f.range.clone());
        // The array is one for every thread: a `__shared__` array, or a parameter of the
        // function that its body never moves (`out += tid` would give each thread its own
        // `out`, and then one element for different `v`).
        if n.kind_name() != "identifier" {
            return false;
        }
        let array = node_text(n, text);
        let shared = self
            .facts()
            .shared
            .iter()
            .any(|d| d.name == array && !d.is_extern);
        let param = self
            .facts()
            .function_at(left.start_byte())
            .is_some_and(|f| f.params.iter().any(|p| p.name == array));
        let moved = function.as_ref().is_some_and(|f| {
            let body = text.get(f.clone()).unwrap_or_default();
            let mut from = 0;
            while let Some(at) = crate::lex::find_word(body, array, from) {
                let rest = body[at + array.len()..].trim_start();
                if (rest.starts_with('=') && !rest.starts_with("=="))
                    || ["+=", "-=", "++", "--"].iter().any(|o| rest.starts_with(o))
                {
                    return true;
                }
                from = at + array.len();
            }
            false
        });
        if !(shared || param) || moved {
            return false;
        }
        let written = |array: &str| self.writes_array(array, function.as_ref(), false);
        // One value for every thread that can meet at the element: the block's, for a
        // `__shared__` array; the grid's for global memory, where threads of two blocks
        // meet too (`out[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x]`).
        let one_value = |v: &IndexExpr| {
            v.unknown_reason().is_none()
                && !v.depends_on_thread()
                && (shared
                    || !v.mentions(
                        &|e| matches!(e, IndexExpr::Uniform(n) if n.contains("blockIdx")),
                    ))
        };
        let mut ok = true;
        let mut stack = vec![right];
        while let Some(n) = stack.pop() {
            if !ok {
                break;
            }
            match n.kind_name() {
                "identifier" => {
                    let name = node_text(n, text);
                    if !vars.contains(&name) {
                        let v = low.lower(&Expr::Name(name.to_string()), n, 0);
                        ok = one_value(&v);
                    }
                }
                "field_expression" => {
                    if !vars.contains(&node_text(n, text)) {
                        let v = low.lower(&from_node(n, text, 0), n, 0);
                        ok = one_value(&v);
                    }
                }
                "subscript_expression" => {
                    let Some((a, i)) = subscript_parts(n) else {
                        ok = false;
                        continue;
                    };
                    // An element of an array the function never writes, at an index
                    // that reads the same variables (`in[(r0 + r) * n + threadIdx.x]`).
                    ok = a.kind_name() == "identifier" && !written(node_text(a, text));
                    stack.push(i);
                }
                "binary_expression"
                | "parenthesized_expression"
                | "cast_expression"
                | "unary_expression"
                | "number_literal"
                | "type_descriptor"
                | "primitive_type"
                | "type_identifier"
                | "template_argument_list" => {
                    let mut c = n.walk();
                    stack.extend(n.named_children(&mut c));
                }
                // `static_cast<float>(v)`.
                "call_expression"
                    if n.field("function").is_some_and(|f| {
                        node_text(f, text).ends_with("_cast<float>")
                            || node_text(f, text).starts_with("static_cast")
                    }) =>
                {
                    if let Some(args) = n.field("arguments") {
                        let mut c = args.walk();
                        stack.extend(args.named_children(&mut c));
                    }
                }
                "argument_list" => {
                    let mut c = n.walk();
                    stack.extend(n.named_children(&mut c));
                }
                _ => ok = false,
            }
        }
        ok
    }

    /// The expression at `range` (a call argument) lowered like an index: `threadIdx.x`,
    /// `row * N + 1`, a local followed to its initialiser, a parameter as a uniform
    /// symbol. `None` when `range` is not one expression of the file.
    pub fn lower_at(&self, range: &TextRange) -> Option<IndexExpr> {
        let text = self.text();
        let roots = self.roots();
        let node = expression_at(&roots, range)?;
        let tree = Ancestry::few(roots.clone(), text.len());
        let low = Lowerer::new(text, self.facts(), &tree);
        Some(low.lower(&from_node(node, text, 0), node, 0))
    }

    /// The top of the expression at `range` (an assigned value, a call argument), its
    /// parentheses unwrapped: a call with its callee and arguments, a binary or prefix
    /// operation with its operands, a plain name, or something else. `None` when `range` is not one
    /// expression of the file. Kept with the file's facts.
    pub fn expression_shape(&self, range: &TextRange) -> Option<ExprShape> {
        match self.tree_memo() {
            Some(memo) => memo.expression_shape(range, || self.find_expression_shape(range)),
            None => self.find_expression_shape(range),
        }
    }

    fn find_expression_shape(&self, range: &TextRange) -> Option<ExprShape> {
        let text = self.text();
        let roots = self.roots();
        let mut node = expression_at(&roots, range)?;
        while node.kind_name() == "parenthesized_expression" {
            match named_children(node).as_slice() {
                [one] => node = *one,
                _ => return Some(ExprShape::Other),
            }
        }
        Some(match node.kind_name() {
            "call_expression" => {
                let Some(function) = node.field("function") else {
                    return Some(ExprShape::Other);
                };
                ExprShape::Call {
                    callee: squash_ws(&strip_template_args(node_text(function, text))),
                    args: node
                        .field("arguments")
                        .map(|a| {
                            named_children(a)
                                .into_iter()
                                .filter(|c| c.kind_name() != "comment")
                                .map(|c| c.byte_range())
                                .collect()
                        })
                        .unwrap_or_default(),
                }
            }
            "binary_expression" => match (
                node.field("left"),
                node.field("operator"),
                node.field("right"),
            ) {
                (Some(l), Some(op), Some(r)) => ExprShape::Binary {
                    left: l.byte_range(),
                    op: node_text(op, text).to_string(),
                    right: r.byte_range(),
                },
                _ => ExprShape::Other,
            },
            "identifier" => ExprShape::Name(node_text(node, text).to_string()),
            "unary_expression" | "pointer_expression" => {
                match (node.field("operator"), node.field("argument")) {
                    (Some(op), Some(a)) => ExprShape::Unary {
                        op: node_text(op, text).to_string(),
                        operand: a.byte_range(),
                    },
                    _ => ExprShape::Other,
                }
            }
            _ => ExprShape::Other,
        })
    }

    /// Whether the call at `range` is a statement of its own (`assign(out[i], v);`): its
    /// value, if it has one, is dropped, so the call acts through its arguments or has
    /// other effects.
    pub fn is_call_statement(&self, range: &TextRange) -> bool {
        let roots = self.roots();
        let Some(root) = roots
            .iter()
            .find(|r| r.start_byte() <= range.start && range.end <= r.end_byte())
        else {
            return false;
        };
        let Some(mut node) = root.descendant_for_byte_range(range.start, range.end) else {
            return false;
        };
        while node.kind_name() != "call_expression" || node.byte_range() != *range {
            match node.parent() {
                Some(p) if p.byte_range() == *range => node = p,
                _ => return false,
            }
        }
        node.parent()
            .is_some_and(|p| p.kind_name() == "expression_statement")
    }

    /// Every comparison inside the condition at `range` (under `&&`, `||`, `!`, calls and
    /// parentheses), as its operator and each side's value where the file fixes it:
    /// `lane == src || i < 10` gives `("==", None, None)` and `("<", None, Some(10))`.
    pub fn condition_comparisons(
        &self,
        range: &TextRange,
    ) -> Vec<(String, Option<i64>, Option<i64>)> {
        let text = self.text();
        let roots = self.roots();
        let Some(root) = roots
            .iter()
            .find(|r| r.start_byte() <= range.start && range.end <= r.end_byte())
        else {
            return Vec::new();
        };
        let Some(node) = root.descendant_for_byte_range(range.start, range.end) else {
            return Vec::new();
        };
        let tree = Ancestry::few(roots.clone(), text.len());
        let low = Lowerer::new(text, self.facts(), &tree);
        let mut out = Vec::new();
        preorder(node, |n| {
            if n.kind_name() == "binary_expression" {
                if let (Some(op), Some(l), Some(r)) =
                    (n.field("operator"), n.field("left"), n.field("right"))
                {
                    let op = node_text(op, text);
                    if matches!(op, "<" | "<=" | ">" | ">=" | "==" | "!=") {
                        let left = low.lower(&from_node(l, text, 0), l, 0).constant();
                        let right = low.lower(&from_node(r, text, 0), r, 0).constant();
                        out.push((op.to_string(), left, right));
                    }
                }
            }
            true
        });
        out
    }

    /// Whether the code from the end of one of `a`, `b` to the start of the other runs
    /// straight: both in one statement (or one condition) with no `?:` between them, or
    /// in plain statements (expressions, declarations) of one block with only plain
    /// statements between; and nothing between names a barrier (a name or string with
    /// `sync` in it). Kept with the file's facts.
    pub fn straight_line(&self, a: &TextRange, b: &TextRange) -> bool {
        let (first, second) = if a.start <= b.start { (a, b) } else { (b, a) };
        match self.tree_memo() {
            Some(memo) => memo.straight(first, second, || self.find_straight_line(first, second)),
            None => self.find_straight_line(first, second),
        }
    }

    /// Whether the statements at `first` and `second` (two loops, say) follow each other
    /// in one block with only plain statements (expressions, declarations), comments and
    /// `#pragma`s between them, and nothing between or inside them names a barrier (a
    /// name with `sync` in it): the second runs right after the first on every path.
    pub fn statements_in_line(&self, first: &TextRange, second: &TextRange) -> bool {
        let text = self.text();
        if first.end > second.start
            || text
                .get(first.start..second.end)
                .is_none_or(|t| t.contains("sync") || t.contains("barrier"))
        {
            return false;
        }
        let Some(root) = self
            .root_at(first.start)
            .filter(|r| r.start_byte() <= first.start && second.end <= r.end_byte())
        else {
            return false;
        };
        let node = |r: &TextRange| {
            let n = root.descendant_for_byte_range(r.start, r.end)?;
            (n.start_byte() == r.start && n.end_byte() == r.end).then_some(n)
        };
        let (Some(s1), Some(s2)) = (node(first), node(second)) else {
            return false;
        };
        let (Some(p1), Some(p2)) = (s1.parent(), s2.parent()) else {
            return false;
        };
        if p1.id() != p2.id() || p1.kind_name() != "compound_statement" {
            return false;
        }
        let mut cursor = p1.walk();
        if cursor.goto_first_child_for_byte(s1.start_byte()).is_none() {
            return false;
        }
        while cursor.goto_next_sibling() {
            let c = cursor.node();
            if c.id() == s2.id() || c.start_byte() >= s2.start_byte() {
                return true;
            }
            if c.is_named()
                && !matches!(
                    c.kind_name(),
                    "comment" | "expression_statement" | "declaration" | "preproc_call"
                )
            {
                return false;
            }
        }
        false
    }

    /// [`SourceFile::straight_line`] for `first` and `second` in document order.
    fn find_straight_line(&self, first: &TextRange, second: &TextRange) -> bool {
        let (from, to) = (first.end.min(second.start), second.start);
        let text = self.text();
        let Some(root) = self
            .root_at(first.start)
            .filter(|r| r.start_byte() <= first.start && second.end <= r.end_byte())
        else {
            return false;
        };
        // The nearest statement (or condition) around a range.
        let statement = |r: &TextRange| -> Option<Node<'_>> {
            let mut n = root.descendant_for_byte_range(r.start, r.end)?;
            loop {
                let kind = n.kind_name();
                if kind.ends_with("_statement")
                    || kind == "declaration"
                    || kind == "condition_clause"
                {
                    return Some(n);
                }
                n = n.parent()?;
            }
        };
        let (Some(s1), Some(s2)) = (statement(first), statement(second)) else {
            return false;
        };
        let plain = |n: Node<'_>| matches!(n.kind_name(), "expression_statement" | "declaration");
        let scope = if s1.id() == s2.id() {
            s1
        } else {
            let (Some(p1), Some(p2)) = (s1.parent(), s2.parent()) else {
                return false;
            };
            // A block, or one branch of `#if` (the accesses of a branch the build does
            // not compile are not recorded).
            let block = matches!(
                p1.kind_name(),
                "compound_statement"
                    | "preproc_if"
                    | "preproc_ifdef"
                    | "preproc_else"
                    | "preproc_elif"
            );
            if p1.id() != p2.id() || !block || !plain(s1) || !plain(s2) {
                return false;
            }
            // The statements between, from `s1` on (not every child of the block).
            let mut cursor = p1.walk();
            let at_s1 = cursor.goto_first_child_for_byte(s1.start_byte()).is_some();
            while at_s1 && cursor.goto_next_sibling() {
                let c = cursor.node();
                if c.id() == s2.id() || c.start_byte() > s2.start_byte() {
                    break;
                }
                if c.is_named()
                    && c.kind_name() != "comment"
                    && c.start_byte() >= s1.end_byte()
                    && c.end_byte() <= s2.start_byte()
                    && !plain(c)
                {
                    return false;
                }
            }
            p1
        };
        // Between the two: no `?:` around or between them, no barrier. Only the nodes
        // that overlap `from..to` are visited, and none where the text of two plain
        // statements and those between them has no `?`, `{` or `sync` (long unrolled
        // code).
        if s1.id() != s2.id() {
            let span = text.get(s1.start_byte()..s2.end_byte()).unwrap_or("?");
            if !span.contains(['?', '{']) && !span.contains("sync") {
                return true;
            }
        }
        let mut straight = true;
        preorder_overlapping(scope, from, to, |n| {
            if !straight {
                return false;
            }
            match n.kind_name() {
                "conditional_expression" | "lambda_expression" | "compound_statement"
                    if n.id() != scope.id() =>
                {
                    straight = false;
                }
                "identifier" | "field_identifier" | "string_content" | "string_literal"
                    if node_text(n, text).contains("sync") =>
                {
                    straight = false;
                }
                _ => {}
            }
            straight
        });
        straight
    }

    /// Whether the plain statement (an expression or a declaration) or the `if` condition
    /// around `first` runs on every path to `second`, which lies later in a statement of the same block,
    /// perhaps inside `if`s, `switch`es and blocks there but in no loop or lambda that
    /// does not also hold `first`: a value `first` reads is still in its register when
    /// `second` runs, where nothing between writes it (the caller's question). `false`
    /// where the two are in one statement: [`SourceFile::straight_line`] answers that.
    pub fn runs_before_on_every_path(&self, first: &TextRange, second: &TextRange) -> bool {
        if first.end > second.start {
            return false;
        }
        let Some(root) = self
            .root_at(first.start)
            .filter(|r| r.start_byte() <= first.start && second.end <= r.end_byte())
        else {
            return false;
        };
        let mut s1 = match root.descendant_for_byte_range(first.start, first.end) {
            Some(n) => n,
            None => return false,
        };
        loop {
            let kind = s1.kind_name();
            if kind.ends_with("_statement") || kind == "declaration" || kind == "condition_clause" {
                break;
            }
            match s1.parent() {
                Some(p) => s1 = p,
                None => return false,
            }
        }
        if s1.kind_name() == "condition_clause" {
            // An `if`'s condition runs on every path through the `if`: into its branches
            // and past it. (A load in the right operand of `&&` or `||` counts too: nvcc
            // 13.5 loads `s[i + 1]` of `if (n > 3 && s[i + 1] > 0)` unconditionally,
            // merged with a load of `s[i]` before it into one `LDS.64`.)
            let Some(branching) = s1.parent().filter(|p| p.kind_name() == "if_statement") else {
                return false;
            };
            if branching.start_byte() <= second.start && second.end <= branching.end_byte() {
                return root
                    .descendant_for_byte_range(second.start, second.end)
                    .and_then(|n| child_reached_once(n, branching))
                    .is_some_and(|c| c.kind_name() != "condition_clause");
            }
            s1 = branching;
        } else if !matches!(s1.kind_name(), "expression_statement" | "declaration") {
            return false;
        }
        // A `for` header's declaration runs whenever the loop is reached: the loop stands
        // for it in its block.
        if let Some(header) = s1
            .parent()
            .filter(|p| p.kind_name() == "for_statement" && p.field("initializer") == Some(s1))
        {
            s1 = header;
        }
        let Some(block) = s1
            .parent()
            .filter(|p| p.kind_name() == "compound_statement")
        else {
            return false;
        };
        root.descendant_for_byte_range(second.start, second.end)
            .and_then(|n| child_reached_once(n, block))
            .is_some_and(|c| c.start_byte() >= s1.end_byte())
    }

    /// The inline `asm` statements inside `range` (a function's body), in order: their
    /// PTX template and operands.
    pub fn asm_statements(&self, range: &TextRange) -> Vec<crate::AsmStatement> {
        let text = self.text();
        let mut out = Vec::new();
        for root in self.roots() {
            if root.end_byte() <= range.start || root.start_byte() >= range.end {
                continue;
            }
            preorder(root, |n| {
                if n.end_byte() <= range.start || n.start_byte() >= range.end {
                    return false;
                }
                if lacks_byte(n, n.kind_name(), text, b'(') {
                    return false;
                }
                if n.kind_name() != "gnu_asm_expression" {
                    return true;
                }
                let mut template = String::new();
                if let Some(code) = n.field("assembly_code") {
                    preorder(code, |c| {
                        match c.kind_name() {
                            "string_content" => template.push_str(node_text(c, text)),
                            "escape_sequence" => template.push_str(match node_text(c, text) {
                                "\\n" => "\n",
                                "\\t" => " ",
                                other => other,
                            }),
                            _ => return true,
                        }
                        false
                    });
                }
                let mut operands = Vec::new();
                for list in ["output_operands", "input_operands"] {
                    let Some(l) = n.field(list) else {
                        continue;
                    };
                    for op in named_children(l) {
                        if let Some(v) = op.field("value") {
                            operands.push(v.byte_range());
                        }
                    }
                }
                out.push(crate::AsmStatement {
                    range: n.byte_range(),
                    template,
                    operands,
                });
                false
            });
        }
        out
    }

    /// The initialiser of the local `name` as it is seen at `at`: `a` in `unsigned a =
    /// __cvta_generic_to_shared(&s[i]);` gives the call's range. `None` for a parameter,
    /// a name declared without one, or one not declared in the function.
    pub fn initializer_of(&self, name: &str, at: usize) -> Option<TextRange> {
        let text = self.text();
        let roots = self.roots();
        let root = roots
            .iter()
            .find(|r| r.start_byte() <= at && at < r.end_byte())?;
        let node = root.descendant_for_byte_range(at, at)?;
        let tree = Ancestry::few(roots.clone(), text.len());
        let low = Lowerer::new(text, self.facts(), &tree);
        match low.declaration(node, name)? {
            (Some(init), false) => Some(init.byte_range()),
            _ => None,
        }
    }

    /// Every one-index subscript of a name (`s[tid + 16]`, `v[i]`) inside `range` (a
    /// statement), in document order, with its index lowered and how it is used. A chain
    /// like `a[i][j]` is not among them.
    pub fn subscripts_in(&self, range: &TextRange) -> Vec<Subscript> {
        let text = self.text();
        let roots = self.roots();
        let Some(root) = roots
            .iter()
            .find(|r| r.start_byte() <= range.start && range.end <= r.end_byte())
        else {
            return Vec::new();
        };
        let tree = Ancestry::few(roots.clone(), text.len());
        let low = Lowerer::new(text, self.facts(), &tree);
        let mut out = Vec::new();
        preorder(*root, |n| {
            if n.end_byte() <= range.start || n.start_byte() >= range.end {
                return false;
            }
            let kind = n.kind_name();
            if lacks_byte(n, kind, text, b'[') {
                return false;
            }
            if kind != "subscript_expression"
                || n.start_byte() < range.start
                || n.end_byte() > range.end
            {
                return true;
            }
            let base = n
                .field("argument")
                .filter(|b| b.kind_name() == "identifier");
            let index = n
                .field("indices")
                .and_then(|l| match named_children(l).as_slice() {
                    [one] => Some(*one),
                    _ => None,
                });
            let (Some(base), Some(idx)) = (base, index) else {
                return true;
            };
            let above = low.ancestors(n);
            if above
                .first()
                .is_some_and(|p| p.kind_name() == "subscript_expression")
            {
                return true;
            }
            let kind = access_kind(&above, n, text);
            let write = match kind {
                AccessKind::Store | AccessKind::LoadStore => above
                    .iter()
                    .find(|p| p.kind_name() != "parenthesized_expression")
                    .and_then(|p| {
                        let op = p
                            .field("operator")
                            .map(|o| node_text(o, text).to_string())?;
                        let value = (p.kind_name() == "assignment_expression")
                            .then(|| p.field("right").map(|r| r.byte_range()))
                            .flatten();
                        Some((op, value))
                    }),
                _ => None,
            };
            out.push(Subscript {
                range: n.byte_range(),
                base: node_text(base, text).to_string(),
                index_range: idx.byte_range(),
                index: low.lower(&from_node(idx, text, 0), idx, 0),
                kind,
                write,
            });
            true
        });
        out
    }

    /// The shared-memory access whose range contains `offset`, innermost first.
    pub fn shared_access_at(&self, offset: usize) -> Option<SharedAccess> {
        self.shared_accesses()
            .into_iter()
            .filter(|a| a.range.contains(&offset))
            .min_by_key(|a| a.range.len())
    }

    /// The access of subscript `node`, whose ancestors are `above` (nearest first, the
    /// root last).
    fn access<'a>(
        &self,
        node: Node<'a>,
        above: &[Node<'a>],
        low: &Lowerer<'a>,
        consumed: &mut Vec<TextRange>,
    ) -> Option<SharedAccess> {
        let text = low.text;
        let facts = low.facts;
        // Collect the chain of subscripts down to the base.
        let mut index_nodes = Vec::new();
        // The ancestors of each index (nearest first, the root last): its list, then the
        // links of the chain out to `node`, then `above`.
        let mut index_ancestors: Vec<Vec<Node<'a>>> = Vec::new();
        let mut links: Vec<Node<'a>> = Vec::new();
        let mut base = node;
        for _ in 0..8 {
            if base.kind_name() != "subscript_expression" {
                break;
            }
            let list = base.field("indices");
            let idx = list.and_then(|l| named_children(l).first().copied())?;
            index_nodes.push(idx);
            links.push(base);
            let mut up = Vec::with_capacity(links.len() + above.len() + 1);
            up.extend(list);
            up.extend(links.iter().rev());
            up.extend_from_slice(above);
            index_ancestors.push(up);
            base = base.field("argument")?;
        }
        index_nodes.reverse();
        index_ancestors.reverse();
        let mut cast_type = None;
        let mut outer_extra: Option<Node> = None;
        let mut inner_node = None;
        // `reinterpret_cast<float4*>(&tile[..])[i]` and `((float4*)&tile[..])[i]`.
        let mut cur = base;
        while cur.kind_name() == "parenthesized_expression" {
            cur = *named_children(cur).first()?;
        }
        if cur.kind_name() != "identifier" {
            let (ty, arg) = cast_parts(cur, text)?;
            let mut arg = arg;
            while arg.kind_name() == "parenthesized_expression" {
                arg = *named_children(arg).first()?;
            }
            if arg.kind_name() != "pointer_expression" || index_nodes.len() != 1 {
                return None;
            }
            let inner = arg.field("argument")?;
            if inner.kind_name() != "subscript_expression" {
                return None;
            }
            cast_type = Some(ty.trim_end_matches('*').trim().to_string());
            outer_extra = Some(index_nodes[0]);
            inner_node = Some(inner);
            index_nodes.clear();
            // The indices inside the cast find their ancestors in the tree.
            index_ancestors.clear();
            let mut b = inner;
            for _ in 0..8 {
                if b.kind_name() != "subscript_expression" {
                    break;
                }
                index_nodes.push(
                    b.field("indices")
                        .and_then(|l| named_children(l).first().copied())?,
                );
                b = b.field("argument")?;
            }
            index_nodes.reverse();
            cur = b;
            if cur.kind_name() != "identifier" {
                return None;
            }
        }
        let name = node_text(cur, text);
        let function = facts.function_at(node.start_byte()).map(|f| f.name.clone());
        let (root, element_size, dims, base_offset) = if let Some(c) =
            facts.carves.iter().rev().find(|c| {
                c.name == name && c.function == function && c.range.start < node.start_byte()
            }) {
            let off = match c.offset_bytes {
                Some(v) => IndexExpr::Int(v),
                None => carve_offset(c, above, low, 0),
            };
            (c.root.clone(), c.element_size, Vec::new(), off)
        } else {
            let d = facts.shared_named(name, node.start_byte())?;
            (
                d.name.clone(),
                d.element_size,
                d.dims.clone(),
                IndexExpr::Int(0),
            )
        };
        if let Some(inner) = inner_node {
            consumed.push(inner.byte_range());
        }
        let indices: Vec<IndexExpr> = index_nodes
            .iter()
            .enumerate()
            .map(|(k, i)| {
                if let Some(up) = index_ancestors.get(k) {
                    low.know_ancestors(*i, up);
                }
                low.lower(&from_node(*i, text, 0), *i, 0)
            })
            .collect();
        // Flatten row-major.
        let mut linear = IndexExpr::Int(0);
        for (k, idx) in indices.iter().enumerate() {
            if k > 0 {
                let dim = match dims.get(k) {
                    Some(Some(d)) => IndexExpr::Int(*d as i64),
                    _ => IndexExpr::Unknown(format!("dimension {k} of `{name}` is not known")),
                };
                linear = IndexExpr::binary(linear, BinOp::Mul, dim);
            }
            linear = IndexExpr::binary(linear, BinOp::Add, idx.clone());
        }
        let esize = element_size.map_or_else(
            || IndexExpr::Unknown(format!("the element size of `{name}` is not known")),
            |s| IndexExpr::Int(s as i64),
        );
        let mut byte_offset = IndexExpr::binary(
            base_offset,
            BinOp::Add,
            IndexExpr::binary(linear, BinOp::Mul, esize),
        );
        let mut width = match &cast_type {
            Some(t) => type_size(&strip_template_args(t)),
            None => element_size,
        };
        let mut kind = access_kind(above, node, text);
        // `FLOAT4(tile[i][j])` with `#define FLOAT4(v) (reinterpret_cast<float4*>(&(v))[0])`:
        // the macro expanded, one vector access of the element's address, a store when the
        // call is assigned to.
        if cast_type.is_none() {
            if let Some((ty, call, call_above)) =
                macro_call_of(node, above, low).or_else(|| reference_cast_of(node, above, text))
            {
                if let Some(w) = type_size(&strip_template_args(&ty)) {
                    width = Some(w);
                    cast_type = Some(ty);
                    kind = access_kind(call_above, call, text);
                }
            } else if let Some(m) = unknown_macro_call_of(node, above, low) {
                width = None;
                byte_offset = IndexExpr::Unknown(format!(
                    "the access is the argument of `{m}(…)`, a macro the file does not define"
                ));
            }
        }
        if let (Some(extra), Some(w)) = (outer_extra, width) {
            // `extra` is the index of `node` itself, the one link of its chain.
            if let Some(list) = node.field("indices") {
                let mut up = vec![list, node];
                up.extend_from_slice(above);
                low.know_ancestors(extra, &up);
            }
            let e = low.lower(&from_node(extra, text, 0), extra, 0);
            byte_offset = IndexExpr::binary(
                byte_offset,
                BinOp::Add,
                IndexExpr::binary(e, BinOp::Mul, IndexExpr::Int(w as i64)),
            );
        }
        Some(SharedAccess::new(
            node.byte_range(),
            AccessData {
                array: name.to_string(),
                root,
                kind,
                index_texts: index_nodes
                    .iter()
                    .map(|i| squash_ws(node_text(*i, text)))
                    .collect(),
                indices,
                element_size,
                width,
                cast_type,
                byte_offset,
                function,
            },
        ))
    }
}

/// The byte offset of carve `c` from the start of its root buffer when the file does not
/// fold it: the offset as written (`float* p = smem + off`, `&smem[off]`), lowered where
/// the pointer is declared, times the base's element size, plus the base's own offset.
/// A kernel parameter or `blockIdx.x` stays a symbol that every lane shares, which the
/// bank model tries several values for; what cannot be lowered stays unknown.
/// `above` holds the ancestors of an access through `c` (the declaration is a statement
/// of one of them).
fn carve_offset<'a>(
    c: &crate::facts::SharedCarve,
    above: &[Node<'a>],
    low: &Lowerer<'a>,
    depth: usize,
) -> IndexExpr {
    let unknown = || {
        IndexExpr::Unknown(format!(
            "the offset of `{}` in `{}` is not constant",
            c.name, c.root
        ))
    };
    if depth > 4 {
        return unknown();
    }
    let text = low.text;
    let facts = low.facts;
    // The declaration statement, a child of a block enclosing the access.
    let decl = above
        .iter()
        .filter(|a| a.start_byte() <= c.range.start && c.range.end <= a.end_byte())
        .find_map(|a| {
            named_children(*a)
                .into_iter()
                .find(|n| n.byte_range() == c.range)
        });
    let Some(decl) = decl else {
        return unknown();
    };
    let value = declarators(decl).and_then(|ds| {
        ds.into_iter().find_map(|d| {
            let target = d.field("declarator")?;
            (d.kind_name() == "init_declarator"
                && declarator_name(target).is_some_and(|n| node_text(n, text) == c.name))
            .then(|| d.field("value"))
            .flatten()
        })
    });
    let Some(value) = value else {
        return unknown();
    };
    let expr = from_node(value, text, 0);
    let offset = match crate::facts::strip_casts(&expr).0 {
        Expr::Binary(l, "+", r) if matches!(crate::facts::strip_casts(l).0, Expr::Name(b) if *b == c.base) => {
            (**r).clone()
        }
        Expr::Unary("&", sub) => match &**sub {
            Expr::Subscript(b, i) if matches!(&**b, Expr::Name(b) if *b == c.base) => (**i).clone(),
            _ => return unknown(),
        },
        _ => return unknown(),
    };
    // The base: the root buffer, or an earlier carve in the same function.
    let (base_offset, base_elem) = if c.base == c.root {
        match facts.shared_named(&c.base, c.range.start) {
            Some(d) => (IndexExpr::Int(0), d.element_size),
            None => return unknown(),
        }
    } else if let Some(b) = facts
        .carves
        .iter()
        .rev()
        .find(|b| b.name == c.base && b.function == c.function && b.range.end <= c.range.start)
    {
        let off = match b.offset_bytes {
            Some(v) => IndexExpr::Int(v),
            None => carve_offset(b, above, low, depth + 1),
        };
        (off, b.element_size)
    } else {
        return unknown();
    };
    let Some(base_elem) = base_elem.and_then(|e| i64::try_from(e).ok()) else {
        return unknown();
    };
    let lowered = low.lower(&offset, value, 0);
    if lowered.unknown_reason().is_some() {
        return unknown();
    }
    IndexExpr::binary(
        base_offset,
        BinOp::Add,
        IndexExpr::binary(lowered, BinOp::Mul, IndexExpr::Int(base_elem)),
    )
}

/// The function-like macro call whose one argument is subscript `node` (ancestors `above`,
/// nearest first), when the macro is one of the file's vector macros: its vector type, the
/// call node and the call's ancestors.
/// The type of the reference cast around subscript `node` (ancestors `above`, nearest
/// first): `(float4 &)src[i]` is one 16-byte access of `src[i]`'s address, read or
/// written as the cast is. The type, the node and the ancestors that say which (the
/// parser reads `(float4 &)dst[i] = v` as a cast of the assignment: there the store is
/// the subscript's own).
fn reference_cast_of<'a, 'b>(
    node: Node<'a>,
    above: &'b [Node<'a>],
    text: &str,
) -> Option<(String, Node<'a>, &'b [Node<'a>])> {
    let mut i = 0;
    let mut inner = node;
    while above.get(i)?.kind_name() == "parenthesized_expression" {
        inner = above[i];
        i += 1;
    }
    let (cast, found) = match above.get(i)?.kind_name() {
        "cast_expression" => (above[i], (node, &above[i + 1..])),
        "assignment_expression" if above[i].field("left") == Some(inner) => {
            let cast = *above.get(i + 1)?;
            if cast.kind_name() != "cast_expression" || cast.field("value") != Some(above[i]) {
                return None;
            }
            (cast, (node, above))
        }
        _ => return None,
    };
    let ty = node_text(cast.field("type")?, text);
    let ty = ty.trim().strip_suffix('&')?.trim();
    let ty: Vec<&str> = ty
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile"))
        .collect();
    if ty.is_empty() || ty.iter().any(|w| w.contains('&') || w.contains('*')) {
        return None;
    }
    Some((ty.join(" "), found.0, found.1))
}

fn macro_call_of<'a, 'b>(
    node: Node<'a>,
    above: &'b [Node<'a>],
    low: &Lowerer<'a>,
) -> Option<(String, Node<'a>, &'b [Node<'a>])> {
    let mut i = 0;
    while above.get(i)?.kind_name() == "parenthesized_expression" {
        i += 1;
    }
    let list = above.get(i)?;
    let call = above.get(i + 1)?;
    if list.kind_name() != "argument_list"
        || call.kind_name() != "call_expression"
        || named_children(*list).len() != 1
        || !list.byte_range().contains(&node.start_byte())
    {
        return None;
    }
    let f = call.field("function")?;
    if f.kind_name() != "identifier" {
        return None;
    }
    let ty = low.vector_macro(node_text(f, low.text))?;
    Some((ty, *call, &above[i + 2..]))
}

/// The name of the function-like macro call whose one argument is subscript `node`
/// (ancestors `above`, nearest first), when the file neither defines nor sees that macro
/// (it comes from a header the check did not find: `FLOAT4(x[i])` with `utils.cuh` on the
/// build's `-I` path) and no function of the file has the name. Such a macro may take
/// the element's address and reinterpret it (`(*(float4*)(&(v)))`): the access's width
/// and kind are not known. Only a name written as a macro, in capitals (`FLOAT4`,
/// `LDG`), counts: a lower-case callee is a function (`sqrtf(x[i])`, `__half2float`),
/// which reads its argument by value.
fn unknown_macro_call_of<'a>(
    node: Node<'a>,
    above: &[Node<'a>],
    low: &Lowerer<'a>,
) -> Option<String> {
    let mut i = 0;
    while above.get(i)?.kind_name() == "parenthesized_expression" {
        i += 1;
    }
    let (list, call) = (above.get(i)?, above.get(i + 1)?);
    if list.kind_name() != "argument_list"
        || call.kind_name() != "call_expression"
        || named_children(*list).len() != 1
        || !list.byte_range().contains(&node.start_byte())
    {
        return None;
    }
    let f = call.field("function")?;
    if f.kind_name() != "identifier" {
        return None;
    }
    let name = node_text(f, low.text);
    let macro_like = name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    let known = low.facts.defines_macro(name)
        || low
            .facts
            .kernels
            .iter()
            .chain(&low.facts.device_functions)
            .any(|d| d.name == name);
    (macro_like && !known).then(|| name.to_string())
}

/// The type and the operand of a cast node.
fn cast_parts<'t>(node: Node<'t>, text: &str) -> Option<(String, Node<'t>)> {
    match node.kind_name() {
        "cast_expression" => Some((
            squash_ws(node_text(node.field("type")?, text)).replace(' ', ""),
            node.field("value")?,
        )),
        "call_expression" => {
            let f = node.field("function")?;
            if f.kind_name() != "template_function" {
                return None;
            }
            let name = node_text(f.field("name")?, text);
            if !name.ends_with("_cast") {
                return None;
            }
            let args = f.field("arguments")?;
            let ty = node_text(args, text)
                .trim_start_matches('<')
                .trim_end_matches('>');
            let arg = *named_children(node.field("arguments")?).first()?;
            Some((squash_ws(ty).replace(' ', ""), arg))
        }
        _ => None,
    }
}

/// How subscript `node`, whose ancestors are `above` (nearest first), is used.
fn access_kind(above: &[Node], node: Node, text: &str) -> AccessKind {
    let mut n = node;
    for &p in above {
        if p.kind_name() == "parenthesized_expression" {
            n = p;
            continue;
        }
        return match p.kind_name() {
            "assignment_expression" if p.field("left") == Some(n) => {
                match p.field("operator").map(|o| node_text(o, text)) {
                    Some("=") => AccessKind::Store,
                    _ => AccessKind::LoadStore,
                }
            }
            "update_expression" => AccessKind::LoadStore,
            "pointer_expression"
                if p.field("operator").map(|o| node_text(o, text)) == Some("&") =>
            {
                AccessKind::AddressOf
            }
            _ => AccessKind::Load,
        };
    }
    AccessKind::Load
}

/// The node of `roots` that spans exactly `range` (a call argument, an `asm` operand).
/// The smallest node covering the range may be an ancestor of the expression (an argument
/// list); then the child that spans the range.
/// The top of an expression, as [`SourceFile::expression_shape`] gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprShape {
    /// `callee(args…)`: the callee as written, template arguments and spaces removed
    /// (`__hadd`, `cuda::std::max`, `v.load`), and each argument's range.
    Call {
        /// The callee.
        callee: String,
        /// The arguments' ranges.
        args: Vec<TextRange>,
    },
    /// `left op right`, for a binary operator.
    Binary {
        /// The left operand's range.
        left: TextRange,
        /// The operator (`+`, `-`, `*`, `&&`, …).
        op: String,
        /// The right operand's range.
        right: TextRange,
    },
    /// `op operand`, for a prefix operator (`-x`, `!x`, `*p`, `&v`).
    Unary {
        /// The operator.
        op: String,
        /// The operand's range.
        operand: TextRange,
    },
    /// A plain name.
    Name(String),
    /// Anything else (a literal, a member, a subscript, a cast).
    Other,
}

fn expression_at<'t>(roots: &[Node<'t>], range: &TextRange) -> Option<Node<'t>> {
    let root = roots
        .iter()
        .find(|r| r.start_byte() <= range.start && range.end <= r.end_byte())?;
    let node = root.descendant_for_byte_range(range.start, range.end)?;
    if node.byte_range() == *range {
        return Some(node);
    }
    named_children(node)
        .into_iter()
        .find(|n| n.byte_range() == *range)
}

/// The child of `until` on the way up from `n`, where that way runs once each time
/// `until` does: it leaves no loop or lambda (a `for` entered through its initialiser,
/// which runs once, excepted). `None` where it does, or where `until` is not above `n`.
fn child_reached_once<'t>(mut n: Node<'t>, until: Node<'t>) -> Option<Node<'t>> {
    let mut from: Option<Node<'t>> = None;
    loop {
        let parent = n.parent()?;
        let once = n.kind_name() == "for_statement"
            && from.is_some_and(|f| n.field("initializer") == Some(f));
        if !once
            && matches!(
                n.kind_name(),
                "for_statement"
                    | "while_statement"
                    | "do_statement"
                    | "for_range_loop"
                    | "lambda_expression"
            )
        {
            return None;
        }
        if parent.id() == until.id() {
            return Some(n);
        }
        from = Some(n);
        n = parent;
    }
}

/// Whether `child` is the branch of the `if` statement `parent` that its condition, a
/// constant of the file (`#define DEBUG 0`, `constexpr int kRow = 64;`, an enumerator),
/// never takes: nvcc compiles no code for it. A condition that names a template
/// parameter with a default is not decided (other instantiations take the other
/// branch). `decided` keeps each `if`'s answer (by node id): `Some(taken)`.
fn dead_branch<'a>(
    child: Node<'a>,
    parent: Node<'a>,
    low: &Lowerer<'a>,
    decided: &mut HashMap<usize, Option<bool>>,
) -> bool {
    if parent.kind_name() != "if_statement" {
        return false;
    }
    let then = parent.field("consequence");
    let otherwise = parent.field("alternative");
    let is_then = then == Some(child);
    if !is_then && otherwise != Some(child) {
        return false;
    }
    let taken = *decided.entry(parent.id()).or_insert_with(|| {
        let cond = parent.field("condition")?;
        let value = cond.field("value").unwrap_or(cond);
        let at = value.start_byte();
        let expr = crate::expr::from_node(value, low.text, 0);
        let facts = low.facts;
        let names_default = facts.constants.iter().any(|c| {
            c.kind == crate::ConstantKind::TemplateDefault
                && c.scope.as_ref().is_some_and(|s| s.contains(&at))
                && {
                    let mut named = false;
                    expr.walk_pruned(&mut |e| {
                        named |= matches!(e, crate::expr::Expr::Name(n) if *n == c.name);
                        !named
                    });
                    named
                }
        });
        if names_default {
            return None;
        }
        facts.env.fold(&expr, at).map(|v| v != 0)
    });
    match taken {
        Some(taken) => taken != is_then,
        None => false,
    }
}

/// A subscript's array and its (first) index: `a` and `i` of `a[i]`.
fn subscript_parts(node: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    let index = node
        .field("indices")
        .and_then(|l| named_children(l).first().copied())
        .or_else(|| node.field("index"))?;
    Some((node.field("argument")?, index))
}

/// Math functions whose result is a function of their arguments alone.
const PURE_MATH: &[&str] = &[
    "min",
    "max",
    "abs",
    "fabs",
    "fabsf",
    "fminf",
    "fmaxf",
    "fmin",
    "fmax",
    "sqrt",
    "sqrtf",
    "rsqrtf",
    "exp",
    "expf",
    "__expf",
    "exp2f",
    "log",
    "logf",
    "__logf",
    "log2f",
    "pow",
    "powf",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "round",
    "roundf",
    "rintf",
    "truncf",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "__sinf",
    "__cosf",
    "tanhf",
    "umin",
    "umax",
    "llmin",
    "llmax",
    "log10",
    "log10f",
    "log1p",
    "log1pf",
    "log2",
    "expm1f",
    "exp2",
    "tanh",
    "atan",
    "atanf",
    "atan2",
    "atan2f",
    "erff",
    "fmodf",
    "copysignf",
    "hypotf",
    "cbrt",
    "cbrtf",
    "__fdividef",
    "__powf",
    "__saturatef",
    "lrint",
    "lround",
    "nearbyint",
];

#[cfg(test)]
mod tests {
    use super::{BinOp, IndexExpr, Lowerer, SharedAccess};
    use crate::consteval::binary;
    use crate::source::SourceFile;
    use crate::util::{lacks_byte, preorder, Ancestry, NodeExt};
    use crate::TextRange;
    use rustc_hash::FxHashSet;

    /// The accesses of one chunk as the walk over every node found them before
    /// `accesses_in` went down to each `[` instead.
    fn accesses_by_nodes<'a>(
        file: &SourceFile,
        root: tree_sitter::Node<'a>,
        low: &Lowerer<'a>,
        mut in_function: bool,
    ) -> Vec<SharedAccess> {
        let mut out = Vec::new();
        let mut consumed: Vec<TextRange> = Vec::new();
        let mut inner_subscripts = FxHashSet::default();
        preorder(root, |node| {
            let kind = node.kind_name();
            if kind == "function_definition" {
                in_function = true;
            }
            if lacks_byte(node, kind, low.text, b'[') {
                return false;
            }
            if !in_function || kind != "subscript_expression" {
                return true;
            }
            let inner = inner_subscripts.contains(&node.id());
            if let Some(arg) = node.field("argument") {
                inner_subscripts.insert(arg.id());
            }
            if !inner {
                let above = low.tree.ancestors(node);
                if let Some(a) = file.access(node, &above, low, &mut consumed) {
                    out.push(a);
                }
            }
            true
        });
        let consumed: FxHashSet<TextRange> = consumed.into_iter().collect();
        out.retain(|a| !consumed.contains(&a.range));
        out
    }

    /// Subscripts of pointer parameters, with the index times the pointee size; not of
    /// shared arrays, moved parameters or template element types' sizes.
    #[test]
    fn global_accesses_of_pointer_parameters() {
        let text = "template <typename T>\n\
                    __global__ void k(const float* __restrict__ a, double* b, T* c, float* d, int n) {\n\
                    \x20   __shared__ float s[32];\n\
                    \x20   int row = blockIdx.x * blockDim.x + threadIdx.x;\n\
                    \x20   d += n;\n\
                    \x20   b[row] = a[row * n + 1] + s[threadIdx.x] + c[row] + d[row];\n\
                    }\n";
        let file = SourceFile::parse(text);
        let got: Vec<String> = file
            .global_accesses()
            .iter()
            .map(|a| format!("{} {:?} {:?} {:#}", a.array, a.kind, a.width, a.byte_offset))
            .collect();
        assert_eq!(got.len(), 3, "{got:#?}");
        assert!(got[0].starts_with("b Store Some(8)"), "{got:#?}");
        assert!(got[1].starts_with("a Load Some(4)"), "{got:#?}");
        assert!(got[1].contains("uniform(n)"), "{got:#?}");
        assert!(got[2].starts_with("c Load None"), "{got:#?}");
    }

    /// Going down to each `[` finds the accesses that visiting every node found, in the
    /// same order and with the same index expressions and kinds: subscripts at file scope
    /// before and after the first function, a function inside a namespace with no `[`,
    /// chains, casts, a local class, a lambda, attributes, a syntax error, brackets in
    /// comments and strings; each file whole and cut at every item.
    #[test]
    fn bracket_walk_matches_node_walk() {
        let files = [
            "__shared__ float g[64];\nint early = g[1];\n\
             namespace n { __device__ void f() { int x = 1; } }\n\
             int late = g[2];\n\
             __global__ void k(float* o) {\n\
             \x20   __shared__ float t[32][33];\n\
             \x20   int tx = threadIdx.x, ty = threadIdx.y;\n\
             \x20   t[ty][tx] = o[tx];\n\
             \x20   for (int i = 0; i < 32; ++i) o[i] += t[i][(tx + 1) % 32] * g[i];\n\
             \x20   float4 v = reinterpret_cast<float4*>(&t[ty][0])[tx / 4];\n\
             \x20   ((float2*)&g[0])[tx] = make_float2(t[0][tx], 1.f);\n\
             \x20   auto l = [&](int j) { return t[j][tx]; };\n\
             \x20   struct S { __device__ float get(float* s) { return s[threadIdx.x]; } };\n\
             \x20   [[maybe_unused]] int z = t[tx & 31][ty]++; // t[0][0] in a comment\n\
             \x20   const char* c = \"t[1][2]\"; t[tx][tx] = t[tx][ty] + ;\n\
             \x20   &t[tx][0];\n\
             }\n",
            "extern __shared__ char smem[];\n\
             __global__ void k2(int n) {\n\
             \x20   float* a = reinterpret_cast<float*>(smem);\n\
             \x20   float* b = reinterpret_cast<float*>(smem + 128);\n\
             \x20   a[threadIdx.x] = b[threadIdx.x * 2] + a[b[0]];\n\
             \x20   int arr[4] = {1, 2, 3, 4}; a[arr[threadIdx.x % 4]] = 0;\n\
             }\n\
             __device__ float h(float (*p)[8]) { __shared__ float q[8][8]; return q[1][p[0][1]]; }\n",
        ];
        for (text, least) in files.into_iter().zip([12, 5]) {
            let items = text.match_indices('\n').count();
            for target in [usize::MAX, 1, 64, 200] {
                let file = SourceFile::parse_with_target(text, target.min(text.len().max(1)));
                let facts = file.facts();
                let chunks = file.chunk_views();
                let tree = Ancestry::new(chunks.iter().map(|c| c.root).collect(), text.len());
                let has_function = crate::facts::chunk_has_function(&file);
                let mut in_function = false;
                let mut total = 0;
                for (c, has) in chunks.iter().zip(&has_function) {
                    let low = Lowerer::new(text, facts, &tree);
                    let fast = file.accesses_in(c.root, &low, in_function);
                    let low = Lowerer::new(text, facts, &tree);
                    let slow = accesses_by_nodes(&file, c.root, &low, in_function);
                    assert_eq!(
                        format!("{fast:#?}"),
                        format!("{slow:#?}"),
                        "target {target}"
                    );
                    total += slow.len();
                    in_function |= has;
                }
                if target == usize::MAX {
                    assert!(
                        total >= least,
                        "{total} accesses in a file of {items} lines"
                    );
                }
            }
        }
    }

    #[test]
    fn vector_macro_bodies() {
        let table = super::vector_macros(
            "#define FLOAT4(value) (reinterpret_cast<float4 *>(&(value))[0])\n\
             #  define LDST64BITS(v) (*(float2 *)(&(v)))\n\
             #define HALF2(a) \\\n  (((half2*)&(a))[0])\n\
             #define INT4(x) (*reinterpret_cast<const int4*>(&x))\n\
             #define SQ(v) ((v) * (v))\n\
             #define SECOND(v) (reinterpret_cast<float4 *>(&(v))[1])\n\
             #define PLUS(v) (reinterpret_cast<float4 *>(&(v) + 4)[0])\n\
             #define F4P(VALUE) (reinterpret_cast<float4*>((&VALUE))[0])\n",
        );
        let mut got: Vec<_> = table.iter().map(|(k, v)| format!("{k}={v}")).collect();
        got.sort();
        assert_eq!(
            got,
            [
                "F4P=float4",
                "FLOAT4=float4",
                "HALF2=half2",
                "INT4=int4",
                "LDST64BITS=float2"
            ]
        );
    }

    #[test]
    fn bin_op_apply_matches_binary_on_its_symbol() {
        let ops = [
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Div,
            BinOp::Rem,
            BinOp::Shl,
            BinOp::Shr,
            BinOp::And,
            BinOp::Or,
            BinOp::Xor,
        ];
        let values = [i64::MIN, -65, -1, 0, 1, 2, 3, 31, 63, 64, 1 << 40, i64::MAX];
        for op in ops {
            for l in values {
                for r in values {
                    let folded = match IndexExpr::binary(IndexExpr::Int(l), op, IndexExpr::Int(r)) {
                        IndexExpr::Int(v) => Some(v),
                        _ => None,
                    };
                    assert_eq!(folded, binary(l, op.symbol(), r), "{l} {op:?} {r}");
                }
            }
        }
    }

    fn range_of(text: &str, what: &str) -> TextRange {
        let start = text.find(what).unwrap();
        start..start + what.len()
    }

    /// Code between two accesses runs straight within one statement or through plain
    /// statements of one block; a branch, a `?:`, a loop, a jump or a barrier between
    /// them, or another block, breaks it.
    #[test]
    fn straight_line_between_two_ranges() {
        let text = r#"
__global__ void k(float* out, int c) {
    __shared__ float s[64];
    float a = s[2 * threadIdx.x] + s[2 * threadIdx.x + 1];
    float b = s[4 * threadIdx.x];
    int j = 3;
    float d = s[4 * threadIdx.x + 1];
    __syncthreads();
    float e = s[4 * threadIdx.x + 2];
    if (c) { out[0] = s[4 * threadIdx.x + 3]; }
    float f = c ? s[8 * threadIdx.x] : s[8 * threadIdx.x + 1];
    out[threadIdx.x] = a + b + d + e + f + j;
}
"#;
        let file = SourceFile::parse(text);
        let r = |w: &str| range_of(text, w);
        let straight = |a: &str, b: &str| file.straight_line(&r(a), &r(b));
        assert!(straight("s[2 * threadIdx.x]", "s[2 * threadIdx.x + 1]"));
        assert!(straight("s[4 * threadIdx.x]", "s[4 * threadIdx.x + 1]"));
        assert!(!straight(
            "s[4 * threadIdx.x + 1]",
            "s[4 * threadIdx.x + 2]"
        ));
        assert!(!straight(
            "s[4 * threadIdx.x + 2]",
            "s[4 * threadIdx.x + 3]"
        ));
        assert!(!straight("s[8 * threadIdx.x]", "s[8 * threadIdx.x + 1]"));
    }

    /// The comparisons of a condition with the sides the file fixes; a call alone as a
    /// statement; an argument lowered like an index.
    #[test]
    fn conditions_statements_and_arguments() {
        let text = r#"
#define HALF 16
__global__ void k(float* out, int src) {
    int lane = threadIdx.x % 32;
    if (lane == src || lane < HALF) out[0] = 1.0f;
    assign(out[lane], 2.0f);
    float v = scaled(out[lane * 2]);
    out[1] = v;
}
"#;
        let file = SourceFile::parse(text);
        let cond = range_of(text, "lane == src || lane < HALF");
        assert_eq!(
            file.condition_comparisons(&cond),
            vec![
                ("==".to_string(), None, None),
                ("<".to_string(), None, Some(16))
            ]
        );
        assert!(file.is_call_statement(&range_of(text, "assign(out[lane], 2.0f)")));
        assert!(!file.is_call_statement(&range_of(text, "scaled(out[lane * 2])")));
        let arg = range_of(text, "lane * 2");
        assert_eq!(
            file.lower_at(&arg).unwrap().to_string(),
            "threadIdx.x % 32 * 2"
        );
    }

    /// `thread_rank()` of the block and of a tile of known size lowers; of a group whose
    /// size the file does not fix it does not.
    #[test]
    fn thread_rank_lowers_for_the_block_and_sized_tiles() {
        let text = r#"
namespace cg = cooperative_groups;
template <int T>
__global__ void k(float* out, int n) {
    cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(cg::this_thread_block());
    auto block = cg::this_thread_block();
    auto t4 = cg::tiled_partition<4>(block);
    auto tile = cg::tiled_partition(block, 8);
    auto some = cg::tiled_partition(block, n);
    out[block.thread_rank()] = 0;
    out[cg::this_thread_block().thread_rank()] = 0;
    out[t16.thread_rank()] = 0;
    out[t4.thread_rank()] = 0;
    out[tile.thread_rank()] = 0;
    out[some.thread_rank()] = 0;
}
"#;
        let file = SourceFile::parse(text);
        let lowered = |what: &str| {
            let at = text.find(&format!("[{what}]")).unwrap() + 1;
            file.lower_at(&(at..at + what.len())).unwrap().to_string()
        };
        let block = "threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)";
        assert_eq!(lowered("block.thread_rank()"), block);
        assert_eq!(lowered("cg::this_thread_block().thread_rank()"), block);
        assert_eq!(lowered("t16.thread_rank()"), format!("({block}) % 16"));
        assert_eq!(lowered("t4.thread_rank()"), format!("({block}) % 4"));
        assert_eq!(lowered("tile.thread_rank()"), format!("({block}) % 8"));
        assert!(file
            .lower_at(&range_of(text, "some.thread_rank()"))
            .unwrap()
            .unknown_reason()
            .is_some());
    }

    /// An inline `asm` statement's template and operands, and a local's initialiser.
    #[test]
    fn asm_statements_and_initialisers() {
        let text = r#"
__global__ void k(const float* g, int n) {
    __shared__ float s[128];
    unsigned a = __cvta_generic_to_shared(&s[threadIdx.x]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" :: "r"(a), "l"(g + threadIdx.x), "n"(4));
}
"#;
        let file = SourceFile::parse(text);
        let body = range_of(text, "{\n    __shared__");
        let body = body.start..text.len();
        let asm = file.asm_statements(&body);
        assert_eq!(asm.len(), 1);
        assert_eq!(
            asm[0].template,
            "cp.async.ca.shared.global [%0], [%1], %2;\n"
        );
        let ops: Vec<&str> = asm[0].operands.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(ops, ["a", "g + threadIdx.x", "4"]);
        let init = file.initializer_of("a", asm[0].range.start).unwrap();
        assert_eq!(&text[init], "__cvta_generic_to_shared(&s[threadIdx.x])");
        assert_eq!(file.initializer_of("n", asm[0].range.start), None);
    }

    #[test]
    fn subscripts_of_any_name_with_their_writes() {
        let text = "__device__ void f(volatile float* s, float* g, int base) {\n    int i = base + threadIdx.x;\n    s[i] = m = m + s[i + 16] + g[2 * i] + t[i][1];\n    s[i] += s[i + 8];\n    g[i]++;\n}\n";
        let file = SourceFile::parse(text);
        let at = |n: &str| text.find(n).unwrap();
        let stmt = |n: &str| at(n)..at(n) + text[at(n)..].find(';').unwrap() + 1;
        let subs = file.subscripts_in(&stmt("s[i] = m"));
        let shown: Vec<String> = subs
            .iter()
            .map(|s| {
                format!(
                    "{} {} {:?} {:?} {:?}",
                    &text[s.range.clone()],
                    s.base,
                    s.kind,
                    s.index,
                    s.write
                        .as_ref()
                        .map(|(op, v)| (op.clone(), v.clone().map(|v| &text[v])))
                )
            })
            .collect();
        let i = IndexExpr::binary(
            IndexExpr::uniform("base"),
            BinOp::Add,
            IndexExpr::ThreadIdx(crate::Axis::X),
        );
        assert_eq!(
            shown,
            vec![
                format!("s[i] s Store {i:?} Some((\"=\", Some(\"m = m + s[i + 16] + g[2 * i] + t[i][1]\")))"),
                format!(
                    "s[i + 16] s Load {:?} None",
                    IndexExpr::binary(i.clone(), BinOp::Add, IndexExpr::Int(16))
                ),
                format!(
                    "g[2 * i] g Load {:?} None",
                    IndexExpr::binary(IndexExpr::Int(2), BinOp::Mul, i.clone())
                ),
            ],
            "a chain `t[i][1]` is no subscript of a name"
        );
        let plus = file.subscripts_in(&stmt("s[i] +="));
        assert_eq!(plus[0].kind, crate::AccessKind::LoadStore);
        assert_eq!(
            plus[0]
                .write
                .as_ref()
                .map(|(op, v)| (op.as_str(), v.clone().map(|v| &text[v]))),
            Some(("+=", Some("s[i + 8]")))
        );
        let inc = file.subscripts_in(&stmt("g[i]++"));
        assert_eq!(inc[0].write, Some(("++".to_string(), None)));
        let s = file.variable_named("s", at("s[i] =")).unwrap();
        let g = file.variable_named("g", at("s[i] =")).unwrap();
        assert!(s.is_volatile && !g.is_volatile);
    }
}
