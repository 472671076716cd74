//! Text edits: the quick fixes' edits, applying them, and the text positions fixes are
//! built from (line start, indentation, end of statement).

use super::*;

/// Applies non-overlapping edits to `text`.
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> String {
    let mut edits: Vec<&TextEdit> = edits.iter().collect();
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in edits {
        if e.range.start < at || e.range.end > text.len() {
            continue;
        }
        out.push_str(&text[at..e.range.start]);
        out.push_str(&e.new_text);
        at = e.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The start of the line containing `offset`.
pub(crate) fn line_start(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1)
}

/// The indentation of the line containing `offset`.
pub(crate) fn indent_at(text: &str, offset: usize) -> &str {
    let start = line_start(text, offset);
    let line = &text[start..];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// The end of the statement that contains `offset` ([`kernaut_syntax::lex::statement_end`]):
/// just past its `;`, or the bracket that closes the enclosing list or block first.
pub(crate) fn statement_end(text: &str, offset: usize, in_string: bool) -> usize {
    match kernaut_syntax::lex::statement_end(text, offset, in_string) {
        Ok(end) | Err(end) => end,
    }
}
