//! Control-flow helpers for the rule engine: enclosing statements, calls, `#pragma unroll`
//! sites and `// kernaut: allow(...)` comments.

use tree_sitter::Node;

use crate::access::Lowerer;
use crate::declarator::function_name;
use crate::expr::{from_node, Expr};
use crate::facts::FileFacts;
use crate::facts::{ChunkCache, OffsetCache};
use crate::source::SourceFile;
use crate::symbol::{ptx_instructions, SymbolKind};
#[cfg(test)]
use crate::util::preorder;
use crate::util::{
    chain_at, descend_to, lacks_byte, move_range, node_text, preorder_all, squash_ws, Ancestry,
    NodeExt,
};
use crate::TextRange;

pub use crate::data::{CallData, CallSite, Enclosing, EnclosingKind};
pub(crate) use crate::data::{Construct, FunctionScan};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

mod calls;
pub(crate) use calls::thread_dependent;

mod pragmas;
#[cfg(test)]
use pragmas::pragma_unroll_lines;
pub use pragmas::UnrollPragma;

mod allow;
pub use allow::AllowComment;

mod control;
pub use control::{ControlFlow, Jump, JumpKind, LaterKind, LaterStatement, StatementShape};

mod scan;
pub(crate) use scan::{shown_range, CONSTRUCTS};

/// The header of a `for` loop ([`SourceFile::for_bounds`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForBounds {
    /// The variable its initialiser sets.
    pub var: String,
    /// Its start value, as written.
    pub start: Option<String>,
    /// The exclusive end, when the condition bounds the variable by a constant.
    pub end: Option<i64>,
    /// The step, when constant.
    pub step: Option<i64>,
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

    /// The header of the `for` statement that spans exactly `range`, as the enclosing
    /// chain's [`EnclosingKind::For`] gives it, without the chain: the variable, its start
    /// as written, the exclusive end and the step when constant (`for (int i = 0; i < 64;
    /// ++i)` gives `i`, `0`, 64, 1). `None` when no `for` statement spans `range` or its
    /// header initialises no variable.
    pub fn for_bounds(&self, range: &TextRange) -> Option<ForBounds> {
        let text = self.text();
        let root = self.root_at(range.start)?;
        let mut node = root.descendant_for_byte_range(range.start, range.end)?;
        while node.byte_range() == *range && node.kind_name() != "for_statement" {
            node = node.parent()?;
        }
        if node.byte_range() != *range || node.kind_name() != "for_statement" {
            return None;
        }
        let (start, var, end, step, _) = crate::access::for_header(node, text, self.facts(), "")?;
        Some(ForBounds {
            var,
            start: start.map(|(_, n)| squash_ws(node_text(n, text))),
            end,
            step,
        })
    }

    /// Which arm of the conditional expression that spans exactly `range` (as the
    /// enclosing chain's [`EnclosingKind::Conditional`] gives it) holds `offset`: `true`
    /// for the one taken when the condition holds (`c ? this : …`), `false` for the
    /// other. `None` when no conditional expression spans `range` or `offset` is in its
    /// condition.
    pub fn conditional_arm(&self, range: &TextRange, offset: usize) -> Option<bool> {
        let root = self.root_at(range.start)?;
        let mut node = root.descendant_for_byte_range(range.start, range.end)?;
        while node.byte_range() == *range && node.kind_name() != "conditional_expression" {
            node = node.parent()?;
        }
        if node.byte_range() != *range || node.kind_name() != "conditional_expression" {
            return None;
        }
        let holds = |field: &str| {
            node.field(field)
                .is_some_and(|n| n.byte_range().contains(&offset))
        };
        if holds("consequence") {
            Some(true)
        } else if holds("alternative") {
            Some(false)
        } else {
            None
        }
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
        let show = |n: Option<Node>| -> Arc<str> {
            n.map(|n| {
                let t = squash_ws(node_text(n, text));
                t.strip_prefix('(')
                    .and_then(|t| t.strip_suffix(')'))
                    .map(|t| t.trim().to_string())
                    .unwrap_or(t)
            })
            .unwrap_or_default()
            .into()
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
                    header: header.into(),
                    var: h.as_ref().map(|h| h.1.as_str().into()),
                    start: h.as_ref().and_then(|h| {
                        h.0.as_ref()
                            .map(|(_, n)| squash_ws(node_text(*n, text)).into())
                    }),
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
                condition_range: cond("condition")
                    .map_or(node.start_byte()..node.start_byte(), |c| c.byte_range()),
                thread_dependent: dep(cond("condition")),
            },
            "conditional_expression" => EnclosingKind::Conditional {
                condition: show(cond("condition")),
                condition_range: cond("condition")
                    .map_or(node.start_byte()..node.start_byte(), |c| c.byte_range()),
                thread_dependent: dep(cond("condition")),
            },
            _ => {
                let name = function_name(node)
                    .map(|n| node_text(n, text).to_string())
                    .unwrap_or_default();
                let is_kernel = facts.kernel(&name).is_some();
                EnclosingKind::Function {
                    name: name.into(),
                    is_kernel,
                }
            }
        }
    }
}

/// A result whose offsets can be moved from one base to another (for per-chunk caches).
pub(crate) trait Moved: Sized {
    /// The value with every offset moved from base `from` to base `to`.
    fn moved(&self, from: usize, to: usize) -> Self;
    /// Where it starts.
    fn start(&self) -> usize;
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

/// `kind` with its offsets (a condition's range) moved from base `from` to `to`.
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
        EnclosingKind::Switch {
            condition,
            condition_range,
            thread_dependent,
        } => EnclosingKind::Switch {
            condition: condition.clone(),
            condition_range: move_range(condition_range, from, to),
            thread_dependent: *thread_dependent,
        },
        EnclosingKind::Conditional {
            condition,
            condition_range,
            thread_dependent,
        } => EnclosingKind::Conditional {
            condition: condition.clone(),
            condition_range: move_range(condition_range, from, to),
            thread_dependent: *thread_dependent,
        },
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unroll_pragma_gives_its_factor_and_where_it_is_written() {
        let text = "#define N 32\n__global__ void k(float* a) {\n    #pragma unroll N\n    for (int i = 0; i < 64; ++i) a[i] = 0;\n    #pragma  unroll\n    for (int i = 0; i < 64; ++i) a[i] = 1;\n}\n";
        let file = SourceFile::parse(text);
        let shown: Vec<_> = file
            .unroll_pragmas()
            .into_iter()
            .map(|p| {
                (
                    p.factor,
                    text[p.range].to_string(),
                    text[p.factor_range].to_string(),
                    p.loop_range
                        .map(|r| text[r].starts_with("for (int i = 0; i < 64")),
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                (Some(32), "#pragma unroll N".into(), " N".into(), Some(true)),
                (None, "#pragma  unroll".into(), "".into(), Some(true)),
            ]
        );
        let lp = file.unroll_pragmas()[0].loop_range.clone().unwrap();
        assert_eq!(
            file.for_bounds(&lp),
            Some(ForBounds {
                var: "i".to_string(),
                start: Some("0".to_string()),
                end: Some(64),
                step: Some(1)
            })
        );
        assert_eq!(file.for_bounds(&(lp.start..lp.end - 1)), None);
    }

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
