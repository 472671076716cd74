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
            _ => false,
        }
    }
}

/// The block-wide barrier reductions: every thread of the block gets the same result.
pub(crate) fn is_block_reduction(callee: &str) -> bool {
    matches!(
        callee,
        "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or"
    )
}
