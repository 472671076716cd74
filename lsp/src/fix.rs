//! `check --fix`: the safe fixes of the diagnostics (the same edits the editor offers as
//! quick fixes), merged into one new text per file, and the unified diff `--dry-run`
//! prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kernaut_ide::rules::{apply_edits, RuleDiagnostic, TextEdit};

/// The fixes chosen for one file and the text they make.
#[derive(Debug)]
pub struct Plan {
    /// The file's text with the fixes applied.
    pub text: String,
    /// How many fixes each rule contributed.
    pub by_rule: BTreeMap<&'static str, usize>,
}

impl Plan {
    /// `2 fixes (warp/legacy-sync-free-intrinsic ×2)`.
    pub fn summary(&self) -> String {
        let total: usize = self.by_rule.values().sum();
        let rules: Vec<String> = self
            .by_rule
            .iter()
            .map(|(rule, n)| format!("{rule} ×{n}"))
            .collect();
        format!(
            "{total} fix{} ({})",
            if total == 1 { "" } else { "es" },
            rules.join(", ")
        )
    }
}

/// Whether two edits touch: overlapping ranges, or two insertions at one offset (their
/// order would be a guess).
fn clash(a: &TextEdit, b: &TextEdit) -> bool {
    (a.range.start < b.range.end && b.range.start < a.range.end)
        || (a.range.start == b.range.start && (a.range.is_empty() || b.range.is_empty()))
}

/// The first safe fix of each diagnostic, in document order, leaving out a fix that
/// repeats one already taken or whose edits touch one already taken; `None` when
/// nothing changes.
pub fn plan(text: &str, diagnostics: &[RuleDiagnostic]) -> Option<Plan> {
    let mut taken: Vec<TextEdit> = Vec::new();
    let mut by_rule = BTreeMap::new();
    for d in diagnostics {
        let Some(fix) = d.fixes.iter().find(|f| f.safe) else {
            continue;
        };
        if fix.edits.iter().all(|e| taken.contains(e)) {
            continue;
        }
        if fix.edits.iter().any(|e| taken.iter().any(|t| clash(e, t))) {
            continue;
        }
        taken.extend(fix.edits.iter().cloned());
        *by_rule.entry(d.rule).or_insert(0) += 1;
    }
    if taken.is_empty() {
        return None;
    }
    let new = apply_edits(text, &taken);
    (new != text).then_some(Plan { text: new, by_rule })
}

/// A unified diff of one file, `--- a/PATH` / `+++ b/PATH`, three lines of context, as
/// `git apply` and `patch -p1` take it.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out = String::new();
    let _ = write!(
        out,
        "{}",
        diff.unified_diff()
            .context_radius(3)
            .header(&format!("a/{path}"), &format!("b/{path}"))
    );
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out
}
