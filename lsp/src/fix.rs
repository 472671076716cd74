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
    /// The edits that make it, in order, none touching another.
    pub edits: Vec<TextEdit>,
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
    let edits = taken.edits();
    let new = apply_edits(text, &edits);
    (new != text).then_some(Plan {
        text: new,
        edits,
        by_rule,
    })
}

/// A unified diff of one file, `--- a/PATH` / `+++ b/PATH`, three lines of context, as
/// `git apply` and `patch -p1` take it, built from the edits (sorted, none touching
/// another) rather than by comparing texts: linear in the file and the edits, where a
/// line diff of 40,000 changed lines took seconds.
pub fn unified_diff(path: &str, old: &str, edits: &[TextEdit]) -> String {
    const CONTEXT: usize = 3;
    // Line starts of the old text; a last line without a newline counts as a line.
    let mut starts = vec![0];
    starts.extend(
        old.bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i + 1)
            .filter(|&i| i < old.len()),
    );
    let n_lines = if old.is_empty() { 0 } else { starts.len() };
    let line_of = |offset: usize| starts.partition_point(|&s| s <= offset).saturating_sub(1);
    let line_end = |line: usize| starts.get(line + 1).copied().unwrap_or(old.len());
    // Changes: (first old line, last old line, new text of those lines), merged where
    // edits share or touch lines.
    let mut changes: Vec<(usize, usize, Vec<&TextEdit>)> = Vec::new();
    for e in edits {
        let first = line_of(e.range.start);
        let last = if e.range.end > e.range.start {
            line_of(e.range.end - 1)
        } else {
            first
        };
        match changes.last_mut() {
            Some((_, l, group)) if first <= *l => {
                *l = (*l).max(last);
                group.push(e);
            }
            _ => changes.push((first, last, vec![e])),
        }
    }
    let split = |t: &str| -> Vec<String> { t.split_inclusive('\n').map(str::to_string).collect() };
    let old_line = |l: usize| &old[starts[l]..line_end(l)];
    // (first old line, end old line exclusive, new lines), with the lines an edit left
    // as they were trimmed off both ends: a whole line inserted is one `+`.
    let changes: Vec<(usize, usize, Vec<String>)> = changes
        .into_iter()
        .filter(|(first, ..)| *first < n_lines.max(1))
        .map(|(first, last, group)| {
            let (from, to) = (starts[first.min(starts.len() - 1)], line_end(last));
            let mut new = String::new();
            let mut at = from;
            for e in group {
                new.push_str(&old[at..e.range.start]);
                new.push_str(&e.new_text);
                at = e.range.end;
            }
            new.push_str(&old[at..to]);
            let new = split(&new);
            let (mut first, mut end) = (first, (last + 1).min(n_lines));
            let (mut lo, mut hi) = (0, new.len());
            while first < end && lo < hi && old_line(first) == new[lo] {
                first += 1;
                lo += 1;
            }
            while first < end && lo < hi && old_line(end - 1) == new[hi - 1] {
                end -= 1;
                hi -= 1;
            }
            (first, end, new[lo..hi].to_vec())
        })
        .filter(|(first, end, new)| first < end || !new.is_empty())
        .collect();
    let mut out = String::new();
    if changes.is_empty() {
        return out;
    }
    let _ = writeln!(out, "--- a/{path}\n+++ b/{path}");
    let push_line = |out: &mut String, mark: char, line: &str| {
        out.push(mark);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    // Hunks: changes closer than twice the context share one.
    let mut delta: isize = 0; // new line number minus old, before the current hunk
    let mut i = 0;
    while i < changes.len() {
        let mut j = i;
        while j + 1 < changes.len() && changes[j + 1].0 <= changes[j].1 + 2 * CONTEXT {
            j += 1;
        }
        let start = changes[i].0.saturating_sub(CONTEXT);
        let end = (changes[j].1 + CONTEXT).min(n_lines); // exclusive
        let mut body = String::new();
        let (mut old_count, mut new_count) = (0usize, 0usize);
        let mut line = start;
        for (first, end, new) in &changes[i..=j] {
            for l in line..*first {
                push_line(&mut body, ' ', old_line(l));
            }
            for l in *first..*end {
                push_line(&mut body, '-', old_line(l));
            }
            for n in new {
                push_line(&mut body, '+', n);
            }
            old_count += end - line;
            new_count += first - line + new.len();
            line = *end;
        }
        for l in line..end {
            push_line(&mut body, ' ', old_line(l));
        }
        old_count += end.saturating_sub(line);
        new_count += end.saturating_sub(line);
        let new_start = (start as isize + delta) as usize;
        // `start,count`, the count left out when it is 1 and the start the line before
        // when it is 0, as diff -u writes them.
        let range = |start: usize, count: usize| match count {
            0 => format!("{start},0"),
            1 => format!("{}", start + 1),
            n => format!("{},{n}", start + 1),
        };
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            range(start, old_count),
            range(new_start, new_count)
        );
        out.push_str(&body);
        delta += new_count as isize - old_count as isize;
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{unified_diff, Taken, TextEdit};
    use kernaut_ide::rules::apply_edits;

    /// The diff built from the edits is the line diff of the two texts.
    #[test]
    fn diff_from_edits_matches_a_line_diff() {
        let old: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let cases: Vec<(String, Vec<TextEdit>)> = vec![
            (old.clone(), vec![TextEdit::replace(0..4, "LINE")]),
            (
                old.clone(),
                vec![
                    TextEdit::replace(7..13, "X"),
                    TextEdit::replace(100..104, "Y"),
                ],
            ),
            (
                old.clone(),
                vec![
                    TextEdit::insert(14, "new\n"),
                    TextEdit::replace(200..205, "a\nb"),
                ],
            ),
            (
                old.clone(),
                vec![TextEdit::replace(old.len() - 8..old.len(), "")],
            ),
            ("a\nb\nc".to_string(), vec![TextEdit::replace(4..5, "C")]),
            ("a\nb\nc\n".to_string(), vec![TextEdit::insert(6, "d\n")]),
            ("a\nb\nc\n".to_string(), vec![TextEdit::replace(2..4, "")]),
            ("".to_string(), vec![TextEdit::insert(0, "x\n")]),
        ];
        // Changes 6 and 7 unchanged lines apart: one hunk, then two.
        let at = |line: usize| old.match_indices('\n').nth(line - 1).unwrap().0 + 1;
        let mut cases = cases;
        for gap in [6, 7] {
            cases.push((
                old.clone(),
                vec![
                    TextEdit::replace(at(10)..at(10) + 4, "LINE"),
                    TextEdit::replace(at(11 + gap)..at(11 + gap) + 4, "LINE"),
                ],
            ));
        }
        for (old, edits) in cases {
            let new = apply_edits(&old, &edits);
            let expected = similar::TextDiff::from_lines(old.as_str(), new.as_str())
                .unified_diff()
                .context_radius(3)
                .header("a/f.cu", "b/f.cu")
                .to_string();
            assert_eq!(unified_diff("f.cu", &old, &edits), expected, "{edits:?}");
        }
    }

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
