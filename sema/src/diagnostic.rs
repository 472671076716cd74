//! What a rule reports: a diagnostic with its range, message, wiki citation and quick
//! fixes. Plain data, below the rules and the host that caches their answers.

use kernaut_syntax::TextRange;

use crate::config::Severity;

/// A diagnostic from a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleDiagnostic {
    /// The rule id.
    pub rule: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// The byte range it covers.
    pub range: TextRange,
    /// What is wrong and why, in one line.
    pub message: String,
    /// The wiki section it cites, `id#anchor`.
    pub wiki: String,
    /// Edits that repair it.
    pub fixes: Vec<Fix>,
}

/// A quick fix: a title and the edits that make it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, for a menu.
    pub title: String,
    /// Whether `kernaut-lsp check --fix` may apply it unreviewed: the edit is mechanical
    /// and cannot change what correct code computes (an unroll factor; the full mask of a
    /// `_sync` intrinsic reached by the whole warp). Fixes that add barriers, move
    /// commits, change numerics or layouts are for a person to apply.
    pub safe: bool,
    /// Non-overlapping edits to the file.
    pub edits: Vec<TextEdit>,
}

/// Replace `range` with `new_text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEdit {
    /// The byte range replaced (empty to insert).
    pub range: TextRange,
    /// The text put there.
    pub new_text: String,
}

impl TextEdit {
    /// Inserts `text` at `offset`.
    pub fn insert(offset: usize, text: impl Into<String>) -> TextEdit {
        TextEdit {
            range: offset..offset,
            new_text: text.into(),
        }
    }

    /// Replaces `range` with `text`.
    pub fn replace(range: TextRange, text: impl Into<String>) -> TextEdit {
        TextEdit {
            range,
            new_text: text.into(),
        }
    }
}
