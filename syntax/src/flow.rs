//! Control-flow helpers for the rule engine: enclosing statements, calls, `#pragma unroll`
//! sites and `// kernaut: allow(...)` comments.

use tree_sitter::Node;

use crate::access::Lowerer;
use crate::expr::{from_node, Expr};
use crate::facts::FileFacts;
use crate::facts::{function_name, ChunkCache, OffsetCache};
use crate::hash::FxHashMap as HashMap;
use crate::source::SourceFile;
use crate::symbol::{ptx_instructions, SymbolKind};
#[cfg(test)]
use crate::util::preorder;
use crate::util::{
    chain_at, descend_to, lacks_byte, move_range, named_children, node_text, preorder_all,
    squash_ws, Ancestry, NodeExt,
};
use crate::TextRange;
use std::sync::Arc;

/// A statement or function around an offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enclosing {
    /// What it is.
    pub kind: EnclosingKind,
    /// Its range.
    pub range: TextRange,
}

/// The kinds of [`Enclosing`] statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnclosingKind {
    /// An `if`; `in_else` says whether the offset is in the `else` branch.
    If {
        /// The condition, without the parentheses.
        condition: String,
        /// The range of the condition.
        condition_range: TextRange,
        /// Whether the offset is in the `else` branch.
        in_else: bool,
        /// Whether the condition depends on `threadIdx`, the lane, a `thread_rank()` or a
        /// local alias of them (so threads of one warp may take different branches).
        thread_dependent: bool,
    },
    /// A `for` loop.
    For {
        /// The header between the parentheses.
        header: String,
        /// The variable it initialises.
        var: Option<String>,
        /// The start value, as written.
        start: Option<String>,
        /// The exclusive end, when constant.
        end: Option<i64>,
        /// The step, when constant.
        step: Option<i64>,
        /// Whether the condition depends on the thread index.
        thread_dependent: bool,
    },
    /// A `while` loop.
    While {
        /// The condition.
        condition: String,
        /// Whether it depends on the thread index.
        thread_dependent: bool,
    },
    /// A `do ... while` loop.
    DoWhile {
        /// The condition.
        condition: String,
        /// Whether it depends on the thread index.
        thread_dependent: bool,
    },
    /// A `switch`.
    Switch {
        /// The controlling expression.
        condition: String,
        /// Whether it depends on the thread index.
        thread_dependent: bool,
    },
    /// A conditional expression `c ? a : b`.
    Conditional {
        /// The condition.
        condition: String,
        /// Whether it depends on the thread index.
        thread_dependent: bool,
    },
    /// The function.
    Function {
        /// Its name.
        name: String,
        /// Whether it is a `__global__` kernel.
        is_kernel: bool,
    },
}

/// The node kinds that [`SourceFile::enclosing`] reports.
const CONSTRUCTS: &[&str] = &[
    "if_statement",
    "for_statement",
    "while_statement",
    "do_statement",
    "switch_statement",
    "conditional_expression",
    "function_definition",
];

/// The range [`Enclosing`] reports for `node`, whose parent is `parent`: a function
/// template's starts at `template`.
fn shown_range(node: Node, parent: Option<Node>) -> TextRange {
    match parent {
        Some(p)
            if p.kind_name() == "template_declaration"
                && node.kind_name() == "function_definition" =>
        {
            p.byte_range()
        }
        _ => node.byte_range(),
    }
}

/// A node's key in [`FunctionScan::parts`]: its range from `base` and its kind.
fn part_key(node: Node, base: usize) -> (usize, usize, u16) {
    (
        node.start_byte() - base,
        node.end_byte() - base,
        node.kind_id(),
    )
}

/// What one walk of a function finds: its calls, and the chain part of each statement in
/// it (see [`SourceFile::scan_function`]).
#[derive(Debug)]
pub(crate) struct FunctionScan {
    /// The calls, in document order.
    calls: Vec<CallSite>,
    /// The range of the function (its `function_definition`).
    range: TextRange,
    /// Whether the function lies inside another function (a method of a local class).
    nested: bool,
    /// The statements of [`CONSTRUCTS`] in the function, the function included, in the
    /// order the walk met them.
    constructs: Vec<Construct>,
    /// The position in `constructs` of each statement, by [`part_key`].
    parts: HashMap<(usize, usize, u16), usize>,
}

/// A statement of [`CONSTRUCTS`] as a [`FunctionScan`] keeps it.
#[derive(Debug)]
struct Construct {
    /// Its node's range.
    range: TextRange,
    /// The range its [`Enclosing`] reports (a function template's starts at `template`).
    shown: TextRange,
    /// An `if`'s `else` branch, a conditional expression's condition.
    inner: Option<TextRange>,
    /// Its [`EnclosingKind`], an `if`'s `in_else` left `false`.
    kind: EnclosingKind,
}

impl Construct {
    fn moved(&self, from: usize, to: usize) -> Construct {
        Construct {
            range: move_range(&self.range, from, to),
            shown: move_range(&self.shown, from, to),
            inner: self.inner.as_ref().map(|r| move_range(r, from, to)),
            kind: kind_moved(&self.kind, from, to),
        }
    }
}

impl FunctionScan {
    /// The part of `node`, whose offsets are those of this scan plus `base`.
    fn part(&self, node: Node, base: usize) -> Option<EnclosingKind> {
        if node.start_byte() < base {
            return None;
        }
        let i = *self.parts.get(&part_key(node, base))?;
        Some(kind_moved(&self.constructs[i].kind, 0, base))
    }

    /// [`SourceFile::enclosing`] at `offset` (relative to this scan's base), from the
    /// ranges of the statements the walk found: the chain is every one whose range holds
    /// the offset, innermost first (a tree's nodes nest). `None` where the function may
    /// not hold the whole chain: outside it, or in a function nested in another.
    fn enclosing(&self, offset: usize, base: usize) -> Option<Vec<Enclosing>> {
        if self.nested || !self.range.contains(&offset) {
            return None;
        }
        let mut around: Vec<&Construct> = self
            .constructs
            .iter()
            .filter(|c| c.range.contains(&offset))
            .collect();
        around.sort_by(|a, b| (b.range.start, a.range.end).cmp(&(a.range.start, b.range.end)));
        let mut out = Vec::with_capacity(around.len());
        for c in around {
            let inside = c.inner.as_ref().is_some_and(|r| r.contains(&offset));
            let mut kind = kind_moved(&c.kind, 0, base);
            match &mut kind {
                // The offset is in the condition: the condition is not inside the `?:`.
                EnclosingKind::Conditional { .. } if inside => continue,
                EnclosingKind::If { in_else, .. } => *in_else = inside,
                _ => {}
            }
            out.push(Enclosing {
                kind,
                range: move_range(&c.shown, 0, base),
            });
        }
        Some(out)
    }

    /// The scan with every offset moved from base `from` to base `to`.
    fn moved(&self, from: usize, to: usize) -> FunctionScan {
        FunctionScan {
            calls: self.calls.iter().map(|c| c.moved(from, to)).collect(),
            range: move_range(&self.range, from, to),
            nested: self.nested,
            constructs: self.constructs.iter().map(|c| c.moved(from, to)).collect(),
            parts: self
                .parts
                .iter()
                .map(|(&(s, e, k), &i)| ((s + to - from, e + to - from, k), i))
                .collect(),
        }
    }
}

/// A call expression, or a PTX instruction in an `asm` string: its ranges, and what is
/// called with what ([`CallData`], read through `Deref`: `call.callee`, `call.args`).
///
/// The data is shared between copies, so moving a function's cached calls to new
/// offsets after an edit copies no strings.
#[derive(Clone, PartialEq, Eq)]
pub struct CallSite {
    /// The range of the callee.
    pub callee_range: TextRange,
    /// The ranges of the arguments.
    pub arg_ranges: Vec<TextRange>,
    /// The range of the whole call (for PTX, the instruction statement).
    pub range: TextRange,
    data: std::sync::Arc<CallData>,
}

/// What a [`CallSite`] calls, and with what.
#[derive(Debug, PartialEq, Eq)]
pub struct CallData {
    /// The callee resolved as [`SourceFile::symbol_at`] would (aliases expanded, members
    /// qualified by their receiver's type, the full PTX mnemonic).
    pub callee: String,
    /// The callee as written, without template arguments.
    pub callee_text: String,
    /// The kind of the callee symbol.
    pub kind: SymbolKind,
    /// The arguments, as written (for PTX, the operands).
    pub args: Vec<String>,
    /// The enclosing function.
    pub function: Option<String>,
}

impl CallSite {
    /// The call at these ranges of what `data` describes.
    pub fn new(
        callee_range: TextRange,
        arg_ranges: Vec<TextRange>,
        range: TextRange,
        data: CallData,
    ) -> CallSite {
        CallSite {
            callee_range,
            arg_ranges,
            range,
            data: std::sync::Arc::new(data),
        }
    }
}

impl std::ops::Deref for CallSite {
    type Target = CallData;

    fn deref(&self) -> &CallData {
        &self.data
    }
}

/// One flat struct, in the field order it had before its data was shared.
impl std::fmt::Debug for CallSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = &*self.data;
        f.debug_struct("CallSite")
            .field("callee", &d.callee)
            .field("callee_text", &d.callee_text)
            .field("kind", &d.kind)
            .field("callee_range", &self.callee_range)
            .field("args", &d.args)
            .field("arg_ranges", &self.arg_ranges)
            .field("range", &self.range)
            .field("function", &d.function)
            .finish()
    }
}

/// A `#pragma unroll` site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnrollPragma {
    /// The range of the pragma line.
    pub range: TextRange,
    /// The factor: `Some(n)` for `#pragma unroll n`, `None` for full unrolling.
    pub factor: Option<i64>,
    /// The text after `unroll`.
    pub factor_text: String,
    /// The loop it applies to, if one follows.
    pub loop_range: Option<TextRange>,
}

/// A `// kernaut: allow(rule-id, ...)` comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowComment {
    /// The rule ids listed.
    pub rule_ids: Vec<String>,
    /// The range of the comment.
    pub range: TextRange,
    /// The zero-based line of the comment.
    pub line: usize,
    /// Whether code precedes the comment on its line (it then applies to that line; a
    /// comment on its own line applies to the next line).
    pub trailing: bool,
}

impl SourceFile {
    /// The statements and the function around `offset`, innermost first.
    pub fn enclosing(&self, offset: usize) -> Vec<Enclosing> {
        self.kept_per_chunk(
            offset,
            |c| &c.enclosing,
            || self.enclosing_uncached(offset, true),
        )
    }

    /// The chain at `offset`, its parts taken from the walk of the function around it
    /// when `scanned` (the walk computes every part of the function at once; a test
    /// compares both ways).
    fn enclosing_uncached(&self, offset: usize, scanned: bool) -> Vec<Enclosing> {
        // Inside a kernel or device function already walked, the chain is read off the
        // ranges of its statements, without a descent of the tree.
        if scanned {
            let from_scan = self.facts().function_at(offset).and_then(|f| {
                let (scan, base) = self.cached_scan(f.range.start, f.range.end)?;
                scan.enclosing(offset.checked_sub(base)?, base)
            });
            if let Some(chain) = from_scan {
                return chain;
            }
        }
        let mut out = Vec::new();
        let Some(root) = self.root_at(offset) else {
            return out;
        };
        let text = self.text();
        // The chain from the leaf up to the root, taken in one descent rather than one
        // `parent()` call (itself a descent from the root) per level.
        let chain = chain_at(root, offset);
        let leaf = chain[0];
        // The parts of the chain come from the walk of the outermost function, which
        // computes those of all its statements at once (and is kept per chunk); one it
        // did not reach is computed here.
        let scan = chain
            .iter()
            .rev()
            .find(|n| scanned && n.kind_name() == "function_definition")
            .map(|&f| self.function_scan(root, f));
        let mut fallback: Option<(Ancestry, &FileFacts)> = None;
        let mut child = leaf;
        for (i, &node) in chain.iter().enumerate() {
            let kind_name = node.kind_name();
            let is_construct = CONSTRUCTS.contains(&kind_name)
                && !(kind_name == "conditional_expression"
                    && node.field("condition") == Some(child));
            if is_construct {
                let part = scan
                    .as_ref()
                    .and_then(|(scan, base)| scan.part(node, *base));
                let mut kind = part.unwrap_or_else(|| {
                    let (tree, facts) = fallback.get_or_insert_with(|| {
                        (Ancestry::few(self.roots(), text.len()), self.facts())
                    });
                    let low = Lowerer::new(text, facts, tree);
                    self.construct_kind(node, &chain[i + 1..], &low)
                });
                if let EnclosingKind::If { in_else, .. } = &mut kind {
                    *in_else = node.field("alternative").is_some_and(|a| {
                        a.byte_range().contains(&child.start_byte()) && a == child
                    });
                }
                out.push(Enclosing {
                    kind,
                    range: shown_range(node, chain.get(i + 1).copied()),
                });
            }
            child = node;
        }
        out
    }

    /// What the chain entry of `node` (a kind in [`CONSTRUCTS`]) says whatever the
    /// offset: an `if`'s `in_else` is left `false`.
    ///
    /// `ancestors` is the chain above `node` (nearest first, the root last).
    fn construct_kind<'t>(
        &self,
        node: Node<'t>,
        ancestors: &[Node<'t>],
        low: &Lowerer<'t>,
    ) -> EnclosingKind {
        let text = low.text;
        let facts = low.facts;
        let cond = |field: &str| node.field(field);
        let show = |n: Option<Node>| {
            n.map(|n| {
                let t = squash_ws(node_text(n, text));
                t.strip_prefix('(')
                    .and_then(|t| t.strip_suffix(')'))
                    .map(|t| t.trim().to_string())
                    .unwrap_or(t)
            })
            .unwrap_or_default()
        };
        let mut up = Vec::with_capacity(ancestors.len() + 1);
        up.push(node);
        up.extend_from_slice(ancestors);
        let dep = |n: Option<_>| n.is_some_and(|n| thread_dependent(n, &up, low));
        match node.kind_name() {
            "if_statement" => {
                let c = cond("condition");
                EnclosingKind::If {
                    condition: show(c),
                    condition_range: c
                        .map_or(node.start_byte()..node.start_byte(), |c| c.byte_range()),
                    in_else: false,
                    thread_dependent: dep(c),
                }
            }
            "for_statement" => {
                let header = match (node_text(node, text).find('('), cond("body")) {
                    (Some(p), Some(b)) => text
                        .get(node.start_byte() + p..b.start_byte())
                        .map(|h| squash_ws(h.trim().trim_start_matches('(').trim_end_matches(')')))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                let h = low.for_header(node, "");
                EnclosingKind::For {
                    header,
                    var: h.as_ref().map(|h| h.1.clone()),
                    start: h
                        .as_ref()
                        .and_then(|h| h.0.as_ref().map(|(_, n)| squash_ws(node_text(*n, text)))),
                    end: h.as_ref().and_then(|h| h.2),
                    step: h.as_ref().and_then(|h| h.3),
                    thread_dependent: dep(cond("condition")) || dep(cond("initializer")),
                }
            }
            "while_statement" => EnclosingKind::While {
                condition: show(cond("condition")),
                thread_dependent: dep(cond("condition")),
            },
            "do_statement" => EnclosingKind::DoWhile {
                condition: show(cond("condition")),
                thread_dependent: dep(cond("condition")),
            },
            "switch_statement" => EnclosingKind::Switch {
                condition: show(cond("condition")),
                thread_dependent: dep(cond("condition")),
            },
            "conditional_expression" => EnclosingKind::Conditional {
                condition: show(cond("condition")),
                thread_dependent: dep(cond("condition")),
            },
            _ => {
                let name = function_name(node)
                    .map(|n| node_text(n, text).to_string())
                    .unwrap_or_default();
                let is_kernel = facts.kernel(&name).is_some();
                EnclosingKind::Function { name, is_kernel }
            }
        }
    }

    /// The calls inside the function that contains `offset` (all calls in the file when
    /// `offset` is outside every function), in document order, PTX instructions included.
    pub fn calls_in(&self, offset: usize) -> Vec<CallSite> {
        // The leaf's own tree is the only one its chain goes through.
        let function = self.root_at(offset).and_then(|root| {
            chain_at(root, offset)
                .into_iter()
                .find(|n| n.kind_name() == "function_definition")
                .map(|f| (root, f))
        });
        let Some((root, f)) = function else {
            return self.collect_calls(&self.roots());
        };
        let (scan, base) = self.function_scan(root, f);
        scan.calls.iter().map(|c| c.moved(0, base)).collect()
    }

    /// The walk of function `f` ([`SourceFile::scan_function`]) in offsets relative to
    /// the returned base: kept in the chunk of `f` while the chunk and the file-wide
    /// inputs (the facts' fingerprint) are unchanged.
    fn function_scan<'t>(&'t self, root: Node<'t>, f: Node<'t>) -> (Arc<FunctionScan>, usize) {
        let Some(chunk) = self
            .chunk_at(f.start_byte())
            .filter(|c| c.start <= f.start_byte())
        else {
            return (Arc::new(self.scan_function(root, f)), 0);
        };
        let key = self.facts().fingerprint();
        let end = f.end_byte() - chunk.start;
        let range = f.start_byte() - chunk.start..end;
        let cached = chunk.cache.scans.lock().ok().and_then(|slot| {
            (slot.0 == key)
                .then(|| slot.1.get(&end)?.iter().find(|s| s.range == range).cloned())
                .flatten()
        });
        if let Some(scan) = cached {
            return (scan, chunk.start);
        }
        let scan = Arc::new(self.scan_function(root, f).moved(chunk.start, 0));
        if let Ok(mut slot) = chunk.cache.scans.lock() {
            if slot.0 != key {
                *slot = (key, Default::default());
            }
            let same_end = slot.1.entry(end).or_default();
            if !same_end.iter().any(|s| s.range == range) {
                same_end.push(scan.clone());
            }
        }
        (scan, chunk.start)
    }

    /// The kept walk of the one function that ends at `end` and starts at or after
    /// `start` (a function template ends with its function, so the facts' range of
    /// either finds it), with its base; `None` when it was not walked yet, or when two
    /// walked functions end there (error recovery can nest one in another so).
    fn cached_scan(&self, start: usize, end: usize) -> Option<(Arc<FunctionScan>, usize)> {
        let chunk = self.chunk_at(start).filter(|c| c.start <= start)?;
        let key = self.facts().fingerprint();
        let slot = chunk.cache.scans.lock().ok()?;
        if slot.0 != key {
            return None;
        }
        match slot.1.get(&end.checked_sub(chunk.start)?)?.as_slice() {
            [scan] if scan.range.start + chunk.start >= start => Some((scan.clone(), chunk.start)),
            _ => None,
        }
    }

    /// `compute()`, kept in `slot` of the chunk that holds `at`, by `at` relative to the
    /// chunk's start, while the chunk and the file-wide inputs (the facts' fingerprint)
    /// are unchanged. A result reaching before the chunk is not kept.
    fn kept_per_chunk<T: Moved>(
        &self,
        at: usize,
        slot: fn(&ChunkCache) -> &OffsetCache<T>,
        compute: impl FnOnce() -> Vec<T>,
    ) -> Vec<T> {
        let Some(chunk) = self.chunk_at(at) else {
            return compute();
        };
        let key = self.facts().fingerprint();
        let relative = at - chunk.start;
        let moved = |items: &[T], from: usize, to: usize| -> Vec<T> {
            items.iter().map(|i| i.moved(from, to)).collect()
        };
        let cached = slot(chunk.cache).lock().ok().and_then(|slot| {
            (slot.0 == key)
                .then(|| slot.1.get(&relative).cloned())
                .flatten()
        });
        if let Some(items) = cached {
            return moved(items.as_slice(), 0, chunk.start);
        }
        let items = compute();
        if items.iter().all(|i| i.start() >= chunk.start) {
            if let Ok(mut slot) = slot(chunk.cache).lock() {
                if slot.0 != key {
                    *slot = (key, Default::default());
                }
                slot.1
                    .insert(relative, std::sync::Arc::new(moved(&items, chunk.start, 0)));
            }
        }
        items
    }

    /// [`SourceFile::calls_in`] for each of `offsets`, spread over one thread per core.
    pub fn calls_in_each(&self, offsets: &[usize]) -> Vec<Vec<CallSite>> {
        // The facts every call site reads, computed once before the threads start.
        let _ = self.facts();
        crate::util::par_map(offsets, |&o| self.calls_in(o))
    }

    /// Every call of `name` in the file: calls whose resolved callee, or one of its lookup
    /// candidates, is `name` or ends in `::name`, member calls through their receiver's
    /// type, and PTX instructions whose mnemonic is `name` or starts with `name.`.
    pub fn find_calls(&self, name: &str) -> Vec<CallSite> {
        let name = name.trim_start_matches("::");
        let suffix = format!("::{name}");
        self.collect_calls(&self.roots())
            .into_iter()
            .filter(|c| match c.kind {
                SymbolKind::Ptx => c.callee == name || c.callee.starts_with(&format!("{name}.")),
                _ => c.callee == name || c.callee.ends_with(&suffix) || c.callee_text == name,
            })
            .collect()
    }

    /// The calls in function `scope` as `collect_calls(&[scope])` finds them, in the same
    /// order, and the chain parts of the statements in it, found from the text: a call's
    /// argument list starts with a `(`, and so does every `asm` statement, and each
    /// statement in [`CONSTRUCTS`] has a `(` (or a `?`) of its own. So the walk descends
    /// to each `(` and `?` of the text instead of visiting every node. On the way it holds
    /// each node's ancestors, which resolving a callee needs.
    ///
    /// `root` is the root of the tree that holds `scope`.
    fn scan_function<'t>(&'t self, root: Node<'t>, scope: Node<'t>) -> FunctionScan {
        let text = self.text();
        let facts = self.facts();
        let tree = Ancestry::few(self.roots(), text.len());
        let low = Lowerer::new(text, facts, &tree);
        let mut parts = HashMap::default();
        let mut constructs = Vec::new();
        // `above` is the chain from the root down to the node's parent.
        let mut part = |node: Node<'t>, above: &[Node<'t>]| {
            let kind_name = node.kind_name();
            if !CONSTRUCTS.contains(&kind_name) {
                return;
            }
            let key = part_key(node, 0);
            if parts.contains_key(&key) {
                return;
            }
            let ancestors: Vec<Node> = above.iter().rev().copied().collect();
            let kind = self.construct_kind(node, &ancestors, &low);
            let shown = shown_range(node, ancestors.first().copied());
            let inner = match kind_name {
                "if_statement" => node.field("alternative"),
                "conditional_expression" => node.field("condition"),
                _ => None,
            };
            parts.insert(key, constructs.len());
            constructs.push(Construct {
                range: node.byte_range(),
                shown,
                inner: inner.map(|n| n.byte_range()),
                kind,
            });
        };
        // `path` is the chain from the root down to the cursor's node.
        let mut path = Ancestry::few(vec![root], text.len()).ancestors(scope);
        path.reverse();
        let nested = path.iter().any(|n| n.kind_name() == "function_definition");
        part(scope, &path);
        path.push(scope);
        let base = path.len();
        let mut cursor = scope.walk();
        let mut out = Vec::new();
        // Calls found, by start and end: stray `(`s that error recovery left in an
        // argument list must not report its call twice.
        let mut seen: Vec<TextRange> = Vec::new();
        let mut skip_to = 0;
        let range = scope.byte_range();
        let bytes = text.as_bytes().get(range.clone()).unwrap_or(&[]);
        for p in bytes
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'(' || b == b'?')
            .map(|(i, _)| range.start + i)
        {
            descend_to(&mut cursor, &mut path, base, p, &mut part);
            if p < skip_to || text.as_bytes()[p] != b'(' {
                continue;
            }
            // The outermost `asm` around the `(`: the node walk stops there.
            if let Some(&asm) = path[base..]
                .iter()
                .find(|n| matches!(n.kind_name(), "gnu_asm_expression" | "asm_statement"))
            {
                self.asm_calls(asm, &mut out);
                skip_to = asm.end_byte();
                continue;
            }
            let n = path.len();
            if n < base + 3 || path[n - 1].kind_name() != "(" {
                continue;
            }
            let (args, call) = (path[n - 2], path[n - 3]);
            if args.kind_name() != "argument_list"
                || call.kind_name() != "call_expression"
                || call.field("arguments") != Some(args)
                || seen.contains(&call.byte_range())
            {
                continue;
            }
            seen.push(call.byte_range());
            let ancestors: Vec<Node> = path[..n - 3].iter().rev().copied().collect();
            if let Some(c) = self.call_site_in(call, &ancestors) {
                out.push(c);
            }
        }
        // In the node walk's order: an enclosing call before the calls inside it.
        out.sort_by(|a, b| (a.range.start, b.range.end).cmp(&(b.range.start, a.range.end)));
        FunctionScan {
            calls: out,
            range: scope.byte_range(),
            nested,
            constructs,
            parts,
        }
    }

    /// The PTX instructions of an `asm` statement, as calls.
    fn asm_calls(&self, node: Node, out: &mut Vec<CallSite>) {
        let text = self.text();
        let function = self
            .facts()
            .function_at(node.start_byte())
            .map(|f| f.name.clone());
        for i in ptx_instructions(node, text) {
            let ops = text.get(i.range.end..i.statement.end).unwrap_or("");
            let ops = ops.trim_end_matches(';');
            let args: Vec<String> = ops
                .split(',')
                .map(|a| {
                    squash_ws(
                        a.replace("\\n", " ")
                            .replace("\\t", " ")
                            .replace('"', " ")
                            .trim(),
                    )
                })
                .filter(|a| !a.is_empty())
                .collect();
            out.push(CallSite::new(
                i.range.clone(),
                Vec::new(),
                i.statement.clone(),
                CallData {
                    callee: i.mnemonic.clone(),
                    callee_text: i.mnemonic.clone(),
                    kind: SymbolKind::Ptx,
                    args,
                    function: function.clone(),
                },
            ));
        }
    }

    fn collect_calls(&self, scopes: &[Node]) -> Vec<CallSite> {
        let text = self.text();
        let mut out = Vec::new();
        preorder_all(scopes, |node| {
            let kind = node.kind_name();
            // A call and an `asm` statement hold a `(`.
            if lacks_byte(node, kind, text, b'(') {
                return false;
            }
            match kind {
                "call_expression" => {
                    if let Some(c) = self.call_site(node) {
                        out.push(c);
                    }
                }
                "gnu_asm_expression" | "asm_statement" => {
                    self.asm_calls(node, &mut out);
                    return false;
                }
                _ => {}
            }
            true
        });
        out
    }

    fn call_site(&self, call: Node) -> Option<CallSite> {
        let (leaf, _) = callee_name(call)?;
        let sym = self.symbol_at(leaf.start_byte())?;
        self.call_site_for(call, sym)
    }

    /// [`SourceFile::call_site`] for a call whose ancestors (nearest first, the root
    /// last) the caller holds.
    fn call_site_in(&self, call: Node, ancestors: &[Node]) -> Option<CallSite> {
        let (leaf, mut parents) = callee_name(call)?;
        parents.extend_from_slice(ancestors);
        let sym = self.symbol_at_leaf(leaf, &parents)?;
        self.call_site_for(call, sym)
    }

    /// The call site of `call`, whose callee resolves to `sym`.
    fn call_site_for(&self, call: Node, sym: crate::symbol::SymbolRef) -> Option<CallSite> {
        let text = self.text();
        let args: Vec<Node> = call
            .field("arguments")
            .map(|a| {
                named_children(a)
                    .into_iter()
                    .filter(|n| n.kind_name() != "comment")
                    .collect()
            })
            .unwrap_or_default();
        let facts = self.facts();
        Some(CallSite::new(
            sym.range,
            args.iter().map(|a| a.byte_range()).collect(),
            call.byte_range(),
            CallData {
                callee: sym.name,
                callee_text: sym.text,
                kind: sym.kind,
                args: args
                    .iter()
                    .map(|a| squash_ws(node_text(*a, text)))
                    .collect(),
                function: facts.function_at(call.start_byte()).map(|f| f.name.clone()),
            },
        ))
    }

    /// Every `#pragma unroll` in the file, with the loop that follows it.
    pub fn unroll_pragmas(&self) -> Vec<UnrollPragma> {
        let mut out = Vec::new();
        let text = self.text();
        // Found in the text first (most files have few), then in the tree: a match in a
        // comment or a string has no `preproc_call` around it.
        let mut calls = Vec::new();
        for at in pragma_unroll_lines(text) {
            let Some(root) = self.root_at(at) else {
                continue;
            };
            let call = chain_at(root, at)
                .into_iter()
                .find(|n| n.kind_name() == "preproc_call");
            if let Some(call) = call {
                if calls.last() != Some(&call) {
                    calls.push(call);
                }
            }
        }
        for node in calls {
            let directive = node.field("directive").map(|d| node_text(d, text));
            let arg = node
                .field("argument")
                .map(|a| node_text(a, text).trim())
                .unwrap_or("");
            if directive == Some("#pragma")
                && (arg == "unroll" || arg.starts_with("unroll ") || arg.starts_with("unroll("))
            {
                let factor_text = arg["unroll".len()..].trim().to_string();
                let factor = if factor_text.is_empty() {
                    None
                } else {
                    self.facts().fold_text(&factor_text, node.start_byte())
                };
                let mut next = node.next_named_sibling();
                while let Some(n) = next {
                    if n.kind_name() == "comment" {
                        next = n.next_named_sibling();
                    } else {
                        break;
                    }
                }
                let loop_range = next
                    .filter(|n| {
                        matches!(
                            n.kind_name(),
                            "for_statement" | "while_statement" | "do_statement" | "for_range_loop"
                        )
                    })
                    .map(|n| n.byte_range());
                let end = node.end_byte().min(text.len());
                let trimmed_end = text
                    .get(node.start_byte()..end)
                    .map_or(end, |t| node.start_byte() + t.trim_end().len());
                out.push(UnrollPragma {
                    range: node.start_byte()..trimmed_end,
                    factor,
                    factor_text,
                    loop_range,
                });
            }
        }
        out
    }

    /// Every `// kernaut: allow(rule-id, ...)` comment in the file.
    pub fn allow_comments(&self) -> Vec<AllowComment> {
        let mut out = Vec::new();
        let text = self.text();
        preorder_all(&self.roots(), |node| {
            if node.kind_name() != "comment" {
                return true;
            }
            let t = node_text(node, text);
            let Some(pos) = t.find("kernaut:") else {
                return false;
            };
            let rest = t[pos + "kernaut:".len()..].trim_start();
            let Some(args) = rest
                .strip_prefix("allow")
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix('('))
            else {
                return false;
            };
            let Some(close) = args.find(')') else {
                return false;
            };
            let rule_ids = args[..close]
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let line_start = text[..node.start_byte()].rfind('\n').map_or(0, |i| i + 1);
            let trailing = !text[line_start..node.start_byte()].trim().is_empty();
            out.push(AllowComment {
                rule_ids,
                range: node.byte_range(),
                line: node.start_position().row,
                trailing,
            });
            false
        });
        out
    }
}

/// The rightmost name of a call's callee, and its ancestors up to the call (nearest
/// first, the call last).
fn callee_name(call: Node) -> Option<(Node, Vec<Node>)> {
    let mut leaf = call.field("function")?;
    let mut parents = vec![call];
    for _ in 0..16 {
        let next = match leaf.kind_name() {
            "field_expression" => leaf.field("field"),
            "qualified_identifier" | "template_function" | "template_method" => leaf.field("name"),
            _ => None,
        };
        match next {
            Some(n) => {
                parents.push(leaf);
                leaf = n;
            }
            None => break,
        }
    }
    parents.reverse();
    Some((leaf, parents))
}

/// Whether the expression at `node` depends on the thread index.
///
/// `ancestors` is the chain above `node` (nearest first, the root last): the lowering
/// of its names climbs it, and need not find it again.
fn thread_dependent<'a>(node: Node<'a>, ancestors: &[Node<'a>], low: &Lowerer<'a>) -> bool {
    let value = (node.kind_name() == "condition_clause")
        .then(|| node.field("value"))
        .flatten();
    let node = match value {
        Some(value) => {
            let mut up = Vec::with_capacity(ancestors.len() + 1);
            up.push(node);
            up.extend_from_slice(ancestors);
            low.know_ancestors(value, &up);
            value
        }
        None => {
            low.know_ancestors(node, ancestors);
            node
        }
    };
    let expr = from_node(node, low.text, 0);
    let mut dep = false;
    expr.walk(&mut |e| {
        if dep {
            return;
        }
        match e {
            Expr::Member(b, _) => {
                if matches!(&**b, Expr::Name(n) if n == "threadIdx") {
                    dep = true;
                }
            }
            Expr::Name(_) => {
                // A local the index model cannot lower (a template parameter in it) may
                // still carry the thread index.
                let lowered = low.lower(e, node, 0);
                dep = lowered.depends_on_thread()
                    || (matches!(lowered, crate::IndexExpr::Unknown(_))
                        && low.thread_tainted(e, node, 0));
            }
            Expr::Call { callee, .. }
                if callee.ends_with("thread_rank")
                    || callee.ends_with("laneid")
                    || callee.ends_with("lane_id") =>
            {
                dep = true;
            }
            Expr::Other(t) if t.contains("threadIdx") || t.contains("thread_rank") => {
                dep = true;
            }
            _ => {}
        }
    });
    dep
}

/// The offsets of the `#` of every line that reads `#pragma unroll…` (blanks allowed
/// around `#`), in order.
fn pragma_unroll_lines(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    // Each such line holds `unroll`: only the lines around its occurrences are read.
    for (at, _) in text.match_indices("unroll") {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[line_start..];
        let trimmed = line.trim_start();
        let hash = line_start + (line.len() - trimmed.len());
        if out.last() == Some(&hash) {
            continue;
        }
        let Some(rest) = trimmed.strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(rest) = rest.strip_prefix("pragma") {
            if rest.trim_start().starts_with("unroll") {
                out.push(hash);
            }
        }
    }
    out
}

/// A result whose offsets can be moved from one base to another (for per-chunk caches).
pub(crate) trait Moved: Sized {
    /// The value with every offset moved from base `from` to base `to`.
    fn moved(&self, from: usize, to: usize) -> Self;
    /// Where it starts.
    fn start(&self) -> usize;
}

impl Moved for CallSite {
    fn moved(&self, from: usize, to: usize) -> CallSite {
        CallSite {
            callee_range: move_range(&self.callee_range, from, to),
            arg_ranges: self
                .arg_ranges
                .iter()
                .map(|r| move_range(r, from, to))
                .collect(),
            range: move_range(&self.range, from, to),
            data: self.data.clone(),
        }
    }

    fn start(&self) -> usize {
        self.range.start
    }
}

impl Moved for Enclosing {
    fn moved(&self, from: usize, to: usize) -> Enclosing {
        Enclosing {
            kind: kind_moved(&self.kind, from, to),
            range: move_range(&self.range, from, to),
        }
    }

    fn start(&self) -> usize {
        self.range.start
    }
}

/// `kind` with its offsets (an `if`'s condition range) moved from base `from` to `to`.
fn kind_moved(kind: &EnclosingKind, from: usize, to: usize) -> EnclosingKind {
    match kind {
        EnclosingKind::If {
            condition,
            condition_range,
            in_else,
            thread_dependent,
        } => EnclosingKind::If {
            condition: condition.clone(),
            condition_range: move_range(condition_range, from, to),
            in_else: *in_else,
            thread_dependent: *thread_dependent,
        },
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `#pragma unroll` lines are found around each `unroll` as a line-by-line reading
    /// finds them.
    #[test]
    fn pragma_lines_match_a_line_by_line_reading() {
        let text = "#pragma unroll\n  # pragma unroll 4 // unroll unroll\n#pragma\nunroll\n\
            x = unroll; #pragma unroll\n#pragma unroll_x\n\t#\tpragma\tunroll(2)\n\
            #pragma omp unroll\n#unroll pragma\nunroll";
        let mut expected = Vec::new();
        let mut line_start = 0;
        for line in text.split_inclusive('\n') {
            let trimmed = line.trim_start();
            if let Some(rest) = trimmed.strip_prefix('#') {
                if let Some(rest) = rest.trim_start().strip_prefix("pragma") {
                    if rest.trim_start().starts_with("unroll") {
                        expected.push(line_start + (line.len() - trimmed.len()));
                    }
                }
            }
            line_start += line.len();
        }
        assert_eq!(expected.len(), 4);
        assert_eq!(pragma_unroll_lines(text), expected);
    }

    /// Calls and chains found by the walk over `(` and `?` tokens are those the walk over
    /// every node finds, and the chain computed part by part.
    #[test]
    fn text_walk_matches_node_walk() {
        let text = "#include <cuda_pipeline.h>\n\
            template <int N> __global__ void k(float* o, int n) {\n\
            \x20   __shared__ float t[32][33];\n\
            \x20   int tx = threadIdx.x; // a (comment) with parens ? and a question\n\
            \x20   const char* s = \"(not a call) ?\";\n\
            \x20   auto f = [&](int i) { return i > 0 ? g(i)(tx) : h<2>(i); };\n\
            \x20   for (int i = 0; i < N; ++i) {\n\
            \x20       if (tx < 16) { o[i] = t[tx][i] + f(i); } else if (n) o[i] = 0; else { __syncthreads(); }\n\
            \x20   }\n\
            \x20   while (n-- > 0) { do { o[0] += obj.member(n).other(1); } while (tx == n); }\n\
            \x20   switch (tx % 4) { case 0: __pipeline_commit(); break; }\n\
            \x20   asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(tx ? f(1) : 0));\n\
            \x20   struct Local { __device__ void m(int x) { if (x) { o2(x); } } };\n\
            \x20   o[0] = (tx > 1) ? (n ? 1.0f : 2.0f) : ::ns::call<int>(n, (1 + 2));\n\
            \x20   broken( ;\n\
            }\n";
        let file = SourceFile::parse(text);
        let mut functions = Vec::new();
        for root in file.roots() {
            preorder(root, |n| {
                if n.kind_name() == "function_definition" {
                    functions.push((root, n));
                }
                true
            });
        }
        assert_eq!(functions.len(), 2);
        let mut total = 0;
        for (root, f) in functions {
            let walked = file.collect_calls(&[f]);
            let scanned = file.scan_function(root, f).calls;
            total += walked.len();
            assert_eq!(format!("{scanned:#?}"), format!("{walked:#?}"));
        }
        // `o2` is counted in both functions: the outer walk includes the local class.
        assert_eq!(total, 13);
        let callees: Vec<String> = file
            .collect_calls(&file.roots())
            .iter()
            .map(|c| c.callee_text.clone())
            .collect();
        assert_eq!(
            callees,
            [
                "g",
                "g",
                "h",
                "f",
                "__syncthreads",
                "obj.member(n).other",
                "obj.member",
                "__pipeline_commit",
                "cp.async.wait_group",
                "o2",
                "::ns::call",
                "broken"
            ]
        );
        // Error recovery can end a function inside another at the other's end: each has
        // its own calls.
        let broken = "__global__ void k(float* o) {\n  f(1);\n  void g() { h(2); }\n";
        let file2 = SourceFile::parse(broken);
        let (in_k, in_g) = (broken.find("f(1)").unwrap(), broken.find("h(2)").unwrap());
        let callees = |at: usize| -> Vec<String> {
            file2
                .calls_in(at)
                .iter()
                .map(|c| c.callee.clone())
                .collect()
        };
        assert_eq!(callees(in_g), ["h"]);
        assert_eq!(callees(in_k), ["f", "h"]);
        assert_eq!(callees(in_g), ["h"]);
        for offset in 0..=broken.len() {
            assert_eq!(
                file2.enclosing_uncached(offset, true),
                file2.enclosing_uncached(offset, false),
                "at {offset}"
            );
        }
        for offset in 0..=text.len() + 1 {
            for root in file.roots() {
                let leaf = root.descendant_for_byte_range(offset, offset).unwrap();
                let mut chain = vec![leaf];
                chain.extend(Ancestry::few(vec![root], text.len()).ancestors(leaf));
                assert_eq!(chain_at(root, offset), chain, "at {offset}");
            }
            assert_eq!(
                file.enclosing_uncached(offset, true),
                file.enclosing_uncached(offset, false),
                "at {offset}: {:?}",
                &text[offset.min(text.len())..]
            );
        }
    }
}
