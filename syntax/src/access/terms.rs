//! The additive terms of a subscript's indices, each with the range it is written at and
//! its lowered form: the spans of the one expression form, kept beside it (a side table
//! asked for on demand) rather than inside [`IndexExpr`], so that the models and the
//! accesses they store stay as they are.

use super::*;

/// One additive term of an index: `threadIdx.x * 33` and `k` in `s[threadIdx.x * 33 + k]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexTerm {
    /// Which index of the access it belongs to, outermost first.
    pub index: usize,
    /// Where it is written: in the subscript, or in the initialiser of a local the
    /// subscript names (`int row = threadIdx.x * 33;` … `s[row + k]`).
    pub range: TextRange,
    /// The term as written, whitespace squashed.
    pub text: String,
    /// Whether it is subtracted.
    pub negated: bool,
    /// The term lowered like the index.
    pub expr: IndexExpr,
}

/// How many locals an index is followed through to their initialisers.
const MAX_FOLLOW: usize = 4;

impl SourceFile {
    /// The additive terms of the indices of the subscript at `range` (a
    /// [`SharedAccess`]'s range), outermost index first: each index split at its
    /// top-level `+` and `-` (through parentheses); a term that is a local written only by
    /// its initialiser is split in that initialiser. Empty when `range` is not a
    /// subscript. Kept with the file's facts: asked again, the terms are not recomputed.
    pub fn index_terms(&self, range: &TextRange) -> std::sync::Arc<[IndexTerm]> {
        match self.tree_memo() {
            Some(memo) => memo.terms(range, || self.compute_index_terms(range)),
            None => self.compute_index_terms(range).into(),
        }
    }

    fn compute_index_terms(&self, range: &TextRange) -> Vec<IndexTerm> {
        let text = self.text();
        let Some(root) = self.root_at(range.start) else {
            return Vec::new();
        };
        let Some(mut node) = root.descendant_for_byte_range(range.start, range.end) else {
            return Vec::new();
        };
        while node.kind_name() != "subscript_expression" || node.byte_range() != *range {
            match node.parent() {
                Some(p) if p.start_byte() >= range.start && p.end_byte() <= range.end => node = p,
                _ => return Vec::new(),
            }
        }
        // The indices, innermost subscript last: `s[i][j]` is `(s[i])[j]`.
        let mut indices = Vec::new();
        let mut cur = node;
        while cur.kind_name() == "subscript_expression" {
            let index = cur
                .field("indices")
                .and_then(|l| named_children(l).first().copied())
                .or_else(|| cur.field("index"));
            let Some(index) = index else {
                return Vec::new();
            };
            indices.push(index);
            match cur.field("argument") {
                Some(a) => cur = a,
                None => break,
            }
        }
        indices.reverse();
        let mut out = Vec::new();
        for (i, index) in indices.into_iter().enumerate() {
            self.terms_into(index, i, false, 0, text, &mut out);
        }
        out
    }

    fn terms_into(
        &self,
        mut node: Node<'_>,
        index: usize,
        negated: bool,
        follow: usize,
        text: &str,
        out: &mut Vec<IndexTerm>,
    ) {
        while node.kind_name() == "parenthesized_expression" {
            match named_children(node).as_slice() {
                [one] => node = *one,
                _ => break,
            }
        }
        if node.kind_name() == "binary_expression" {
            let op = node.field("operator").map(|o| node_text(o, text));
            if let (Some(op @ ("+" | "-")), Some(l), Some(r)) =
                (op, node.field("left"), node.field("right"))
            {
                self.terms_into(l, index, negated, follow, text, out);
                self.terms_into(r, index, negated ^ (op == "-"), follow, text, out);
                return;
            }
        }
        if node.kind_name() == "identifier" && follow < MAX_FOLLOW {
            let local = self
                .variable_at(node.start_byte())
                .filter(|v| !v.is_param && v.init.is_some())
                .filter(|v| {
                    self.facts().locals_memo.read_only(v.name_range.start, || {
                        self.uses_of(v)
                            .iter()
                            .all(|u| u.write.is_none() && !u.address_of)
                    })
                });
            let init = local.and_then(|v| {
                let r = v.init?;
                let root = self.root_at(r.start)?;
                root.descendant_for_byte_range(r.start, r.end)
                    .filter(|n| n.byte_range() == r)
            });
            if let Some(init) = init {
                self.terms_into(init, index, negated, follow + 1, text, out);
                return;
            }
        }
        let range = node.byte_range();
        let Some(expr) = self.lower_at(&range) else {
            return;
        };
        out.push(IndexTerm {
            index,
            text: squash_ws(node_text(node, text)),
            range,
            negated,
            expr,
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::SourceFile;

    fn terms(text: &str, access: &str) -> Vec<String> {
        let f = SourceFile::parse(text);
        let at = text.find(access).unwrap();
        f.index_terms(&(at..at + access.len()))
            .iter()
            .map(|t| {
                format!(
                    "{} {}{} @{} = {}",
                    t.index,
                    if t.negated { "-" } else { "" },
                    t.text,
                    &text[t.range.clone()],
                    t.expr
                )
            })
            .collect()
    }

    #[test]
    fn terms_of_an_index_and_of_a_local_it_names() {
        let text = "__global__ void k(int ld) {\n    __shared__ float s[32][33];\n    int row = threadIdx.x * ld;\n    for (int k = 0; k < 4; ++k)\n        s[threadIdx.y][(row + k) - 1] = 0;\n}\n";
        assert_eq!(
            terms(text, "s[threadIdx.y][(row + k) - 1]"),
            vec![
                "0 threadIdx.y @threadIdx.y = threadIdx.y",
                "1 threadIdx.x * ld @threadIdx.x * ld = threadIdx.x * ld",
                "1 k @k = k",
                "1 -1 @1 = 1",
            ]
        );
    }

    /// The terms are kept with the facts, which a copy without trees shares with the
    /// file parsed again: what the copy found without its trees is not kept for it.
    #[test]
    fn terms_asked_without_trees_are_not_kept() {
        let text = "__global__ void k() {\n    __shared__ float s[64];\n    int row = threadIdx.x * 2;\n    s[row + 1] = 0;\n}\n";
        let at = text.find("s[row + 1]").unwrap();
        let range = at..at + "s[row + 1]".len();
        let bare = SourceFile::parse(text).without_trees();
        assert!(bare.index_terms(&range).is_empty());
        let parsed = bare.reparsed();
        let texts: Vec<_> = parsed
            .index_terms(&range)
            .iter()
            .map(|t| t.text.clone())
            .collect();
        assert_eq!(texts, ["threadIdx.x * 2", "1"]);
        // Asked again, the same answer.
        assert_eq!(parsed.index_terms(&range).len(), 2);
    }
}
