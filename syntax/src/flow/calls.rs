//! Call sites: the calls in a function or under an offset, and the look-up of a callee by
//! name (including PTX instructions in `asm` strings).

use super::*;

/// The rightmost name of a call's callee, and its ancestors up to the call (nearest
/// first, the call last).
pub(crate) fn callee_name(call: Node) -> Option<(Node, Vec<Node>)> {
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
pub(crate) fn thread_dependent<'a>(
    node: Node<'a>,
    ancestors: &[Node<'a>],
    low: &Lowerer<'a>,
) -> bool {
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
    expr.walk_pruned(&mut |e| {
        if dep {
            return false;
        }
        match e {
            // Every thread of the block gets the same result, whatever it passes in.
            Expr::Call { callee, .. } if crate::taint::is_block_reduction(callee) => {
                return false;
            }
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
        !dep
    });
    dep
}

impl SourceFile {
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

    /// [`SourceFile::calls_in`] for each of `offsets`, spread over one thread per core.
    pub fn calls_in_each(&self, offsets: &[usize]) -> Vec<Vec<CallSite>> {
        // The facts every call site reads, computed once before the threads start.
        let _ = self.facts();
        crate::util::par_map(offsets, |&o| self.calls_in(o))
    }

    /// The calls inside the functions that contain one of `offsets` (each function once,
    /// in the order first reached; an offset outside every function gives nothing): a
    /// look-up of the calls of a few functions found by their text, without gathering
    /// every call of the file.
    pub fn calls_in_functions_at(&self, offsets: &[usize]) -> Vec<CallSite> {
        let mut seen: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        for &at in offsets {
            let Some(root) = self.root_at(at) else {
                continue;
            };
            let Some(f) = chain_at(root, at)
                .into_iter()
                .find(|n| n.kind_name() == "function_definition")
            else {
                continue;
            };
            if seen.contains(&f.start_byte()) {
                continue;
            }
            seen.push(f.start_byte());
            let (scan, base) = self.function_scan(root, f);
            out.extend(scan.calls.iter().map(|c| c.moved(0, base)));
        }
        out
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

    /// The PTX instructions of an `asm` statement, as calls.
    pub(crate) fn asm_calls(&self, node: Node, out: &mut Vec<CallSite>) {
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

    pub(crate) fn collect_calls(&self, scopes: &[Node]) -> Vec<CallSite> {
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

    pub(crate) fn call_site(&self, call: Node) -> Option<CallSite> {
        let (leaf, _) = callee_name(call)?;
        let sym = self.symbol_at(leaf.start_byte())?;
        self.call_site_for(call, sym)
    }

    /// [`SourceFile::call_site`] for a call whose ancestors (nearest first, the root
    /// last) the caller holds.
    pub(crate) fn call_site_in(&self, call: Node, ancestors: &[Node]) -> Option<CallSite> {
        let (leaf, mut parents) = callee_name(call)?;
        parents.extend_from_slice(ancestors);
        let sym = self.symbol_at_leaf(leaf, &parents)?;
        self.call_site_for(call, sym)
    }

    /// The call site of `call`, whose callee resolves to `sym`.
    pub(crate) fn call_site_for(
        &self,
        call: Node,
        sym: crate::symbol::SymbolRef,
    ) -> Option<CallSite> {
        let text = self.text();
        let args: Vec<Node> = crate::util::call_arguments(call);
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
