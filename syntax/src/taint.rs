//! Thread dependence through local variables, where the index model cannot lower them.
//!
//! [`Lowerer::lower`] models an index exactly, so a local computed from `threadIdx` and
//! something it cannot model (a template parameter, a load) lowers to
//! [`IndexExpr::Unknown`](crate::IndexExpr::Unknown) and loses the thread index: `int i =
//! blockIdx.x * N + tx;` with `template <int N>` and `tx = threadIdx.x`. Whether a branch
//! diverges needs only to know that the thread index flows in, which this follows through
//! initialisers and loop starts.

use tree_sitter::Node;

use crate::access::Lowerer;
use crate::expr::{from_node, Expr};
use crate::util::NodeExt;

/// How many initialisers deep a name is followed.
const MAX_STEPS: usize = 8;

impl<'a> Lowerer<'a> {
    /// Whether `expr` (at `at`) reads the thread index, directly or through the
    /// initialisers of the locals (and the starts of the loop variables) it names.
    /// Parameters, template parameters and constants are the same for every thread.
    pub(crate) fn thread_tainted(&self, expr: &Expr, at: Node<'a>, depth: usize) -> bool {
        if depth > MAX_STEPS {
            return false;
        }
        let mut dep = false;
        expr.walk_pruned(&mut |e| {
            if dep {
                return false;
            }
            dep = match e {
                // Every thread of the block gets the same result, whatever it passes in:
                // `int c = __syncthreads_count(p);` is the same for the whole block.
                Expr::Call { callee, .. } if is_block_reduction(callee) => return false,
                Expr::Member(b, _) => matches!(&**b, Expr::Name(n) if n == "threadIdx"),
                Expr::Call { callee, .. } => {
                    callee.ends_with("thread_rank")
                        || callee.ends_with("laneid")
                        || callee.ends_with("lane_id")
                }
                Expr::Other(t) => t.contains("threadIdx") || t.contains("thread_rank"),
                Expr::Name(n) => self.name_tainted(n, at, depth),
                _ => false,
            };
            !dep
        });
        dep
    }

    fn name_tainted(&self, n: &str, at: Node<'a>, depth: usize) -> bool {
        if n == "threadIdx" {
            return true;
        }
        for &node in self.ancestors(at).iter() {
            if node.kind_name() == "function_definition" {
                break;
            }
            if node.kind_name() == "for_statement" {
                if let Some((start, ..)) = self.for_header(node, n) {
                    return start.is_some_and(|(e, s)| self.thread_tainted(&e, s, depth + 1));
                }
            }
        }
        match self.declaration(at, n) {
            Some((Some(init), false)) => {
                let e = from_node(init, self.text, 0);
                self.thread_tainted(&e, init, depth + 1)
            }
            // A followed helper's parameter carries what its argument does.
            Some((_, true)) => self
                .params
                .iter()
                .find(|(p, _)| p == n)
                .is_some_and(|(_, v)| v.unknown_reason().is_some() || v.depends_on_thread()),
            _ => false,
        }
    }
}

impl<'a> Lowerer<'a> {
    /// The element indices (lowered like a subscript's) of the memory loads whose values
    /// `expr` (at `at`) reads, directly or through the initialisers and assignments of
    /// the locals it names, pushed to `out`: `cnt` with `int cnt = pool[t];` gives `t`'s
    /// lowering. A load whose address is not an index (`*p`, `__ldg(p)`, an atomic's old
    /// value) gives an unknown one. The index of a load is not followed further: its
    /// value is the load's, whatever the index reads.
    pub(crate) fn loads_read(
        &self,
        expr: &Expr,
        at: Node<'a>,
        seen: &mut Vec<String>,
        out: &mut Vec<crate::IndexExpr>,
    ) {
        if seen.len() > 4 * MAX_STEPS || out.len() > 8 {
            return;
        }
        let mut names = Vec::new();
        expr.walk_pruned(&mut |e| match e {
            Expr::Subscript(_, index) => {
                out.push(self.lower(index, at, 0));
                false
            }
            Expr::Unary("*", _) => {
                out.push(crate::IndexExpr::Unknown("a load through a pointer".into()));
                false
            }
            Expr::Call { callee, .. } if loads_memory(callee) => {
                out.push(crate::IndexExpr::Unknown(format!(
                    "`{callee}(...)` loads from memory"
                )));
                false
            }
            // Every thread of the block gets the same result.
            Expr::Call { callee, .. } if is_block_reduction(callee) => false,
            Expr::Name(n) => {
                if !seen.contains(n) {
                    names.push(n.clone());
                }
                false
            }
            _ => true,
        });
        for n in names {
            if seen.contains(&n) {
                continue;
            }
            seen.push(n.clone());
            if let Some((Some(init), false)) = self.declaration(at, &n) {
                let e = from_node(init, self.text, 0);
                self.loads_read(&e, init, seen, out);
            }
            for w in self.writes_of(at, &n) {
                if let Some(r) = w.field("right") {
                    let e = from_node(r, self.text, 0);
                    self.loads_read(&e, r, seen, out);
                }
            }
        }
    }
}

/// Calls that return a value read from memory: the read-only and cache-hinted loads
/// and the atomics (the old value).
fn loads_memory(callee: &str) -> bool {
    let name = callee.rsplit("::").next().unwrap_or(callee);
    name.starts_with("__ld") || name.starts_with("atomic")
}

/// The block-wide barrier reductions: every thread of the block gets the same result.
pub(crate) fn is_block_reduction(callee: &str) -> bool {
    matches!(
        callee,
        "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or"
    )
}
