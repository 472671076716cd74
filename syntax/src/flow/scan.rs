//! The function scan: one walk of a function that finds its calls and the parts of the
//! `enclosing` chains, kept per chunk.

use super::*;

/// The node kinds that [`SourceFile::enclosing`] reports.
pub(crate) const CONSTRUCTS: &[&str] = &[
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
pub(crate) fn shown_range(node: Node, parent: Option<Node>) -> TextRange {
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
pub(crate) fn part_key(node: Node, base: usize) -> (usize, usize, u16) {
    (
        node.start_byte() - base,
        node.end_byte() - base,
        node.kind_id(),
    )
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
    pub(crate) fn part(&self, node: Node, base: usize) -> Option<EnclosingKind> {
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
    pub(crate) fn enclosing(&self, offset: usize, base: usize) -> Option<Vec<Enclosing>> {
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

impl SourceFile {
    /// The walk of function `f` ([`SourceFile::scan_function`]) in offsets relative to
    /// the returned base: kept in the chunk of `f` while the chunk and the file-wide
    /// inputs (the facts' fingerprint) are unchanged.
    pub(crate) fn function_scan<'t>(
        &'t self,
        root: Node<'t>,
        f: Node<'t>,
    ) -> (Arc<FunctionScan>, usize) {
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
    pub(crate) fn cached_scan(
        &self,
        start: usize,
        end: usize,
    ) -> Option<(Arc<FunctionScan>, usize)> {
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
    pub(crate) fn kept_per_chunk<T: Moved>(
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

    /// The calls in function `scope` as `collect_calls(&[scope])` finds them, in the same
    /// order, and the chain parts of the statements in it, found from the text: a call's
    /// argument list starts with a `(`, and so does every `asm` statement, and each
    /// statement in [`CONSTRUCTS`] has a `(` (or a `?`) of its own. So the walk descends
    /// to each `(` and `?` of the text instead of visiting every node. On the way it holds
    /// each node's ancestors, which resolving a callee needs.
    ///
    /// `root` is the root of the tree that holds `scope`.
    pub(crate) fn scan_function<'t>(&'t self, root: Node<'t>, scope: Node<'t>) -> FunctionScan {
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
}
