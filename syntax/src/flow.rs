//! Control-flow helpers for the rule engine: enclosing statements, calls, `#pragma unroll`
//! sites and `// kernaut: allow(...)` comments.

use tree_sitter::Node;

use crate::access::{for_header, Lowerer};
use crate::expr::{from_node, Expr};
use crate::facts::{function_name, ChunkCache, OffsetCache};
use crate::source::SourceFile;
use crate::symbol::{ptx_instructions, SymbolKind};
use crate::util::{
    lacks_byte, move_range, named_children, node_text, preorder_all, squash_ws, Ancestry, NodeExt,
};
use crate::TextRange;

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
        self.kept_per_chunk(offset, |c| &c.enclosing, || self.enclosing_uncached(offset))
    }

    fn enclosing_uncached(&self, offset: usize) -> Vec<Enclosing> {
        let mut out = Vec::new();
        let Some(leaf) = self.node_at(offset) else {
            return out;
        };
        let text = self.text();
        let facts = self.facts();
        let tree = Ancestry::few(self.roots(), text.len());
        let low = Lowerer::new(text, facts, &tree);
        // The chain from the leaf up to the root, taken in one descent rather than one
        // `parent()` call (itself a descent from the root) per level.
        let mut chain = vec![leaf];
        chain.extend(tree.ancestors(leaf));
        let mut child = leaf;
        for (i, &node) in chain.iter().enumerate() {
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
            let dep = |n: Option<_>| n.is_some_and(|n| thread_dependent(n, &low));
            let kind = match node.kind_name() {
                "if_statement" => {
                    let c = cond("condition");
                    let in_else = cond("alternative").is_some_and(|a| {
                        a.byte_range().contains(&child.start_byte()) && a == child
                    });
                    Some(EnclosingKind::If {
                        condition: show(c),
                        condition_range: c
                            .map_or(node.start_byte()..node.start_byte(), |c| c.byte_range()),
                        in_else,
                        thread_dependent: dep(c),
                    })
                }
                "for_statement" => {
                    let header = match (node_text(node, text).find('('), cond("body")) {
                        (Some(p), Some(b)) => text
                            .get(node.start_byte() + p..b.start_byte())
                            .map(|h| {
                                squash_ws(h.trim().trim_start_matches('(').trim_end_matches(')'))
                            })
                            .unwrap_or_default(),
                        _ => String::new(),
                    };
                    let h = for_header(node, text, facts, "");
                    Some(EnclosingKind::For {
                        header,
                        var: h.as_ref().map(|h| h.1.clone()),
                        start: h.as_ref().and_then(|h| {
                            h.0.as_ref().map(|(_, n)| squash_ws(node_text(*n, text)))
                        }),
                        end: h.as_ref().and_then(|h| h.2),
                        step: h.as_ref().and_then(|h| h.3),
                        thread_dependent: dep(cond("condition")) || dep(cond("initializer")),
                    })
                }
                "while_statement" => Some(EnclosingKind::While {
                    condition: show(cond("condition")),
                    thread_dependent: dep(cond("condition")),
                }),
                "do_statement" => Some(EnclosingKind::DoWhile {
                    condition: show(cond("condition")),
                    thread_dependent: dep(cond("condition")),
                }),
                "switch_statement" => Some(EnclosingKind::Switch {
                    condition: show(cond("condition")),
                    thread_dependent: dep(cond("condition")),
                }),
                "conditional_expression" if cond("condition") != Some(child) => {
                    Some(EnclosingKind::Conditional {
                        condition: show(cond("condition")),
                        thread_dependent: dep(cond("condition")),
                    })
                }
                "function_definition" => {
                    let name = function_name(node)
                        .map(|n| node_text(n, text).to_string())
                        .unwrap_or_default();
                    let is_kernel = facts.kernel(&name).is_some();
                    Some(EnclosingKind::Function { name, is_kernel })
                }
                _ => None,
            };
            if let Some(kind) = kind {
                let range = match chain.get(i + 1) {
                    Some(p)
                        if p.kind_name() == "template_declaration"
                            && node.kind_name() == "function_definition" =>
                    {
                        p.byte_range()
                    }
                    _ => node.byte_range(),
                };
                out.push(Enclosing { kind, range });
            }
            child = node;
        }
        out
    }

    /// The calls inside the function that contains `offset` (all calls in the file when
    /// `offset` is outside every function), in document order, PTX instructions included.
    pub fn calls_in(&self, offset: usize) -> Vec<CallSite> {
        // The leaf's own tree is the only one its chain goes through.
        let function = self.root_at(offset).and_then(|root| {
            let leaf = root.descendant_for_byte_range(offset, offset)?;
            std::iter::once(leaf)
                .chain(Ancestry::few(vec![root], self.text().len()).ancestors(leaf))
                .find(|n| n.kind_name() == "function_definition")
        });
        let Some(f) = function else {
            return self.collect_calls(&self.roots());
        };
        self.kept_per_chunk(f.start_byte(), |c| &c.calls, || self.collect_calls(&[f]))
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

    fn collect_calls(&self, scopes: &[Node]) -> Vec<CallSite> {
        let text = self.text();
        let facts = self.facts();
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
                    let function = facts.function_at(node.start_byte()).map(|f| f.name.clone());
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
                    return false;
                }
                _ => {}
            }
            true
        });
        out
    }

    fn call_site(&self, call: Node) -> Option<CallSite> {
        let text = self.text();
        let f = call.field("function")?;
        // The rightmost name of the callee.
        let mut leaf = f;
        for _ in 0..16 {
            let next = match leaf.kind_name() {
                "field_expression" => leaf.field("field"),
                "qualified_identifier" | "template_function" | "template_method" => {
                    leaf.field("name")
                }
                _ => None,
            };
            match next {
                Some(n) => leaf = n,
                None => break,
            }
        }
        let sym = self.symbol_at(leaf.start_byte())?;
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
        let tree = Ancestry::few(self.roots(), text.len());
        let mut calls = Vec::new();
        for at in pragma_unroll_lines(text) {
            let Some(leaf) = self.node_at(at) else {
                continue;
            };
            let call = std::iter::once(leaf)
                .chain(tree.ancestors(leaf))
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

/// Whether the expression at `node` depends on the thread index.
fn thread_dependent<'a>(node: Node<'a>, low: &Lowerer<'a>) -> bool {
    let node = if node.kind_name() == "condition_clause" {
        node.field("value").unwrap_or(node)
    } else {
        node
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
                dep = low.lower(e, node, 0).depends_on_thread();
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
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix('#') {
            let rest = rest.trim_start();
            if let Some(rest) = rest.strip_prefix("pragma") {
                if rest.trim_start().starts_with("unroll") {
                    out.push(line_start + (line.len() - trimmed.len()));
                }
            }
        }
        line_start += line.len();
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
        let kind = match &self.kind {
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
        };
        Enclosing {
            kind,
            range: move_range(&self.range, from, to),
        }
    }

    fn start(&self) -> usize {
        self.range.start
    }
}
