//! A device helper's result, for a question of uniformity: the same in every thread of the
//! block when everything that decides it is, with the helper's parameters bound to the
//! arguments of the call.

use super::*;
use crate::util::short_name;

/// How many helpers deep a call's result is followed (a helper calling a helper).
const MAX_HELPER_DEPTH: usize = 2;

/// How many `return`s and deciding statements a followed helper may hold.
const MAX_HELPER_STATEMENTS: usize = 64;

impl<'a> Lowerer<'a> {
    /// With [`Self::for_uniformity`], the result of the call `callee(args)` at `at` as
    /// one value for the whole block, where the file defines one device function of that
    /// name with as many parameters, with no `goto`, and, with each parameter bound to
    /// its argument as the call lowers it, every value it returns and every condition of
    /// a branch or loop that holds a `return`, `break` or `continue` or assigns a name a
    /// `return` reads is the same in every thread: `switch (order) { case 0: …; break;
    /// default: return 0; } return 1;` with `order` a block-uniform argument, whatever
    /// the helper does with the thread index it is also passed. `None` otherwise (the
    /// call stays what [`Self::lower`] makes of an unknown call).
    pub(crate) fn helper_result(
        &self,
        callee: &str,
        args: &[Expr],
        at: Node<'a>,
        depth: usize,
    ) -> Option<IndexExpr> {
        if !self.opaque_uniform || self.helper_depth >= MAX_HELPER_DEPTH {
            return None;
        }
        if !callee
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
        {
            return None;
        }
        let name = short_name(callee);
        let mut defs = self
            .facts
            .device_functions
            .iter()
            .filter(|f| short_name(&f.name) == name && f.params.len() == args.len());
        let lowered = |a: &Expr| self.lower(a, at, depth + 1);
        let result = Some(IndexExpr::Uniform(format!("{callee}(...)")));
        let Some(function) = defs.next() else {
            // A header's helper, as its summary says.
            let mut found = self
                .facts
                .prelude()?
                .helpers
                .iter()
                .filter(|h| h.name == name && h.params == args.len());
            let summary = found.next()?;
            if found.next().is_some() {
                return None;
            }
            let uniform = summary
                .uniform_when
                .iter()
                .all(|&i| args.get(i).is_some_and(|a| !varies(&lowered(a))));
            return if uniform { result } else { None };
        };
        if defs.next().is_some() {
            return None;
        }
        let body = self.tree.node_spanning(function.body_range.as_ref()?)?;
        let params: Vec<(String, IndexExpr)> = function
            .params
            .iter()
            .zip(args)
            .filter(|(p, _)| !p.name.is_empty())
            .map(|(p, a)| (p.name.clone(), lowered(a)))
            .collect();
        if self.returns_uniform(body, params) {
            result
        } else {
            None
        }
    }

    /// Whether the function whose body is `body` returns one value for the block with its
    /// parameters bound to `params` ([`Self::helper_result`] says when).
    fn returns_uniform(&self, body: Node<'a>, params: Vec<(String, IndexExpr)>) -> bool {
        if body.kind_name() != "compound_statement" {
            return false;
        }
        let mut inner = Lowerer::new(self.text, self.facts, self.tree);
        inner.opaque_uniform = true;
        inner.block = self.block;
        inner.params = params;
        inner.helper_depth = self.helper_depth + 1;

        // The `return`s, the jumps, the branches and loops, and the writes to plain
        // names, outside lambdas.
        let (mut returns, mut decisions, mut writes) = (Vec::new(), Vec::new(), Vec::new());
        let mut jumps = Vec::new();
        let mut gives_up = false;
        preorder(body, |n| {
            match n.kind_name() {
                "lambda_expression" => return false,
                "goto_statement" => gives_up = true,
                "return_statement" => {
                    returns.push(n);
                    jumps.push(n);
                }
                "break_statement" | "continue_statement" => jumps.push(n),
                "if_statement"
                | "switch_statement"
                | "while_statement"
                | "do_statement"
                | "for_statement"
                | "conditional_expression" => decisions.push(n),
                "assignment_expression" | "update_expression" => {
                    let target = n.field("left").or_else(|| n.field("argument"));
                    if let Some(t) = target.filter(|t| t.kind_name() == "identifier") {
                        writes.push((node_text(t, self.text), n));
                    }
                }
                _ => {}
            }
            true
        });
        if gives_up || returns.is_empty() || returns.len() + decisions.len() > MAX_HELPER_STATEMENTS
        {
            return false;
        }
        // Each returned value, and the names it reads.
        let mut read: Vec<String> = Vec::new();
        for r in &returns {
            let Some(value) = named_children(*r)
                .into_iter()
                .find(|c| c.kind_name() != "comment")
            else {
                return false;
            };
            let e = from_node(value, self.text, 0);
            if varies(&inner.lower(&e, value, 0)) {
                return false;
            }
            e.walk_pruned(&mut |x| {
                if let Expr::Name(n) = x {
                    read.push(n.clone());
                }
                true
            });
        }
        // Each branch or loop that decides which `return` runs, or what a returned name
        // holds there.
        for d in decisions {
            let inside = |n: Node<'a>| {
                d.byte_range().contains(&n.start_byte())
                    && !d
                        .field("condition")
                        .is_some_and(|c| c.byte_range().contains(&n.start_byte()))
            };
            let decides = jumps.iter().any(|j| inside(*j))
                || writes
                    .iter()
                    .any(|(n, w)| read.iter().any(|r| r == n) && inside(*w));
            if decides && !inner.uniform_condition(d) {
                return false;
            }
        }
        true
    }

    /// Whether the condition of the branch or loop `statement` has one value in every
    /// thread: each comparison and value of it lowers to a value that reads no thread
    /// index (a loop variable counts its start and stride).
    fn uniform_condition(&self, statement: Node<'a>) -> bool {
        let Some(mut c) = statement.field("condition") else {
            // `for (;;)`: no condition; its body's jumps decide.
            return statement.kind_name() == "for_statement";
        };
        while matches!(
            c.kind_name(),
            "condition_clause" | "parenthesized_expression"
        ) {
            c = match c.field("value") {
                Some(v) => v,
                None => match named_children(c).as_slice() {
                    [one] => *one,
                    _ => return false,
                },
            };
        }
        let mut leaves = 0;
        let Some(lowered) = super::condition::condition(self, c, self.text, &mut leaves) else {
            return false;
        };
        let leaf_varies = |e: &IndexExpr| varies(e);
        !lowered.leaves().iter().any(|l| match l {
            GuardCondition::Compare(cmp) => leaf_varies(&cmp.left) || leaf_varies(&cmp.right),
            GuardCondition::Value(e) => leaf_varies(e),
            _ => true,
        })
    }
}

/// Whether `e` has no value or may differ between threads (a loop variable's start or
/// stride included).
fn varies(e: &IndexExpr) -> bool {
    e.unknown_reason().is_some()
        || e.mentions(&|x| match x {
            IndexExpr::ThreadIdx(_) | IndexExpr::Lane | IndexExpr::Unknown(_) => true,
            IndexExpr::LoopVar {
                stride: Some(s), ..
            } => varies(s),
            _ => false,
        })
}

/// How many parameters a summarised helper may take.
const MAX_SUMMARY_PARAMS: usize = 32;

impl SourceFile {
    /// For each device function of the file (not a kernel, its name defined once with
    /// that many parameters) whose result is one value for the whole block where some of
    /// its arguments are ([`Lowerer::helper_result`] with every parameter one such value),
    /// which parameters those are: each that, alone taken to be the thread index, makes
    /// the result differ. A file that includes this one as a header follows its helpers
    /// through these.
    pub fn helper_summaries(&self) -> Vec<crate::HelperSummary> {
        let text = self.text();
        if !text.contains("return") {
            return Vec::new();
        }
        let facts = self.facts();
        let roots = self.roots();
        let tree = Ancestry::few(roots, text.len());
        let low = Lowerer::new(text, facts, &tree).for_uniformity(&[], None);
        let mut out = Vec::new();
        for f in &facts.device_functions {
            let name = short_name(&f.name);
            let n = f.params.len();
            if n > MAX_SUMMARY_PARAMS
                || f.params.iter().any(|p| p.name.is_empty())
                || facts
                    .device_functions
                    .iter()
                    .filter(|g| short_name(&g.name) == name && g.params.len() == n)
                    .count()
                    != 1
            {
                continue;
            }
            let Some(body) = f.body_range.as_ref().and_then(|b| tree.node_spanning(b)) else {
                continue;
            };
            let bound = |varying: Option<usize>| -> Vec<(String, IndexExpr)> {
                f.params
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let v = if Some(i) == varying {
                            IndexExpr::ThreadIdx(crate::Axis::X)
                        } else {
                            IndexExpr::Uniform(p.name.clone())
                        };
                        (p.name.clone(), v)
                    })
                    .collect()
            };
            if !low.returns_uniform(body, bound(None)) {
                continue;
            }
            let uniform_when = (0..n)
                .filter(|&i| !low.returns_uniform(body, bound(Some(i))))
                .collect();
            out.push(crate::HelperSummary {
                name: name.to_string(),
                params: n,
                uniform_when,
            });
        }
        out
    }
}
