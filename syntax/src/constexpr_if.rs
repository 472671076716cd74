//! `if constexpr` statements as the tree shows them: the condition and both branches,
//! for the semantic layer to fold per target or per instantiation.

use crate::source::SourceFile;
use crate::util::{children, named_children, node_text, preorder, NodeExt};
use crate::TextRange;

/// One `if constexpr (cond) then else other`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstexprIf {
    /// The condition inside its parentheses.
    pub condition: TextRange,
    /// The statement taken when it holds.
    pub then: TextRange,
    /// The statement after `else`, when there is one.
    pub otherwise: Option<TextRange>,
}

impl SourceFile {
    /// Every `if constexpr` of the file inside `range`, in document order.
    pub fn constexpr_ifs(&self, range: &TextRange) -> Vec<ConstexprIf> {
        let text = self.text();
        let mut out = Vec::new();
        // Only the top-level items that mention `constexpr` are walked.
        let items = self.roots().into_iter().flat_map(children).filter(|n| {
            n.end_byte() > range.start
                && n.start_byte() < range.end
                && text
                    .get(n.byte_range())
                    .is_some_and(|t| t.contains("constexpr"))
        });
        for item in items {
            preorder(item, |n| {
                if n.end_byte() <= range.start || n.start_byte() >= range.end {
                    return false;
                }
                if n.kind_name() != "if_statement"
                    || !children(n)
                        .iter()
                        .any(|c| node_text(*c, text) == "constexpr")
                {
                    return true;
                }
                let condition =
                    n.field("condition")
                        .and_then(|c| match named_children(c).as_slice() {
                            [one] => Some(one.byte_range()),
                            _ => None,
                        });
                let then = n.field("consequence").map(|c| c.byte_range());
                let otherwise = n.field("alternative").and_then(|e| {
                    // The `else_clause`'s statement.
                    if e.kind_name() == "else_clause" {
                        named_children(e).last().map(|s| s.byte_range())
                    } else {
                        Some(e.byte_range())
                    }
                });
                if let (Some(condition), Some(then)) = (condition, then) {
                    out.push(ConstexprIf {
                        condition,
                        then,
                        otherwise,
                    });
                }
                true
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::SourceFile;

    #[test]
    fn branches_of_if_constexpr() {
        let text = "template <class T> __global__ void k(T* p) {\n    // if constexpr (false) { no }\n    if constexpr (sizeof(T) == 2) { p[0] = 1; } else if constexpr (X) p[1] = 2; else { p[2] = 3; }\n    if (true) { }\n}\n";
        let f = SourceFile::parse(text);
        let shown: Vec<String> = f
            .constexpr_ifs(&(0..text.len()))
            .iter()
            .map(|c| {
                format!(
                    "{} | {} | {}",
                    &text[c.condition.clone()],
                    &text[c.then.clone()],
                    c.otherwise.clone().map_or("-", |o| &text[o])
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                "sizeof(T) == 2 | { p[0] = 1; } | if constexpr (X) p[1] = 2; else { p[2] = 3; }",
                "X | p[1] = 2; | { p[2] = 3; }",
            ]
        );
    }
}
