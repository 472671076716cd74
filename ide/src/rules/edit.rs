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

/// The end of the statement that contains `offset`: just past the next `;` at the same
/// nesting depth, outside string and character literals. `in_string` says whether
/// `offset` is inside a string literal (a PTX instruction in an `asm` statement).
pub(crate) fn statement_end(text: &str, offset: usize, in_string: bool) -> usize {
    let bytes = text.as_bytes();
    // Inside a string of an `asm(...)` statement the parenthesis is still open.
    let mut depth = i32::from(in_string);
    let mut quote = if in_string { Some(b'"') } else { None };
    let mut i = offset;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' | b'\'' => quote = Some(b),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth < 0 {
                    return i;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    text.len()
}
