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

/// The edits taken so far, by (start, end): they never touch each other, so in order of
/// their starts they are in order of their ends too, and an edit can only touch the one
/// before its start or those from its start on (a look-up, not a scan: a file may have
/// tens of thousands of fixes).
#[derive(Debug, Default)]
struct Taken(BTreeMap<(usize, usize), String>);

impl Taken {
    fn has(&self, e: &TextEdit) -> bool {
        self.0.get(&(e.range.start, e.range.end)) == Some(&e.new_text)
    }

    /// Whether `e` touches an edit taken: overlapping ranges, or two edits starting at
    /// one offset where one is an insertion (their order would be a guess).
    fn touches(&self, e: &TextEdit) -> bool {
        let (start, end) = (e.range.start, e.range.end);
        let before = self.0.range(..(start, 0)).next_back();
        if before.is_some_and(|(&(_, b_end), _)| b_end > start) {
            return true;
        }
        self.0
            .range((start, 0)..)
            .next()
            .is_some_and(|(&(a_start, a_end), _)| {
                a_start < end || (a_start == start && (start == end || a_start == a_end))
            })
    }

    fn edits(self) -> Vec<TextEdit> {
        self.0
            .into_iter()
            .map(|((start, end), new_text)| TextEdit::replace(start..end, new_text))
            .collect()
    }
}

/// The first safe fix of each diagnostic, in document order, leaving out a fix that
/// repeats one already taken or whose edits touch one already taken; `None` when
/// nothing changes.
pub fn plan(text: &str, diagnostics: &[RuleDiagnostic]) -> Option<Plan> {
    let mut taken = Taken::default();
    let mut by_rule = BTreeMap::new();
    for d in diagnostics {
        let Some(fix) = d.fixes.iter().find(|f| f.safe) else {
            continue;
        };
        if fix.edits.iter().all(|e| taken.has(e)) {
            continue;
        }
        if fix.edits.iter().any(|e| taken.touches(e)) {
            continue;
        }
        for e in &fix.edits {
            taken
                .0
                .insert((e.range.start, e.range.end), e.new_text.clone());
        }
        *by_rule.entry(d.rule).or_insert(0) += 1;
    }
    if by_rule.is_empty() {
        return None;
    }
    let new = apply_edits(text, &taken.edits());
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

#[cfg(test)]
mod tests {
    use super::{Taken, TextEdit};

    #[test]
    fn touching_edits() {
        let mut t = Taken::default();
        t.0.insert((10, 20), "x".into());
        t.0.insert((30, 30), "y".into());
        let touches = |s: usize, e: usize| t.touches(&TextEdit::replace(s..e, "z"));
        assert!(touches(5, 11) && touches(19, 25) && touches(12, 14) && touches(10, 10));
        assert!(touches(30, 30) && touches(25, 31) && touches(30, 35));
        assert!(!touches(0, 10) && !touches(20, 30) && !touches(20, 20) && !touches(31, 40));
        assert!(t.has(&TextEdit::replace(10..20, "x")) && !t.has(&TextEdit::replace(10..20, "q")));
    }
}
