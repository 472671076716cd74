//! Allow comments: `// kernaut: allow(rule, ...)` and the line each applies to.

use super::*;

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
