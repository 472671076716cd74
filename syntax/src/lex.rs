//! Lexical helpers over C and CUDA text, for what the tree does not cover (macro bodies,
//! `asm` templates and operands, the place an edit goes after a statement): one copy of
//! each, here, so that no rule writes its own.

/// Whether `b` can be part of a C identifier.
pub fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `s` is a C identifier.
pub fn is_identifier(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_ident_byte) && !s.as_bytes()[0].is_ascii_digit()
}

/// The index of the byte that closes the string or character literal opening at `i`
/// (a `"` or `'`), or `None` when the text ends first.
pub(crate) fn literal_end(b: &[u8], i: usize) -> Option<usize> {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            c if c == q => return Some(j),
            _ => {}
        }
        j += 1;
    }
    None
}

/// The `)` matching the `(` at `open`: parentheses, brackets and braces nest, string and
/// character literals are skipped. `None` when the text ends first or a bracket of
/// another kind closes the list.
pub fn matching_paren(text: &str, open: usize) -> Option<usize> {
    if text.as_bytes().get(open) != Some(&b'(') {
        return None;
    }
    list_end(text, open + 1)
}

/// The `)` that closes the parenthesised list `text` continues from `from` (just after
/// its `(`), as [`matching_paren`] finds it.
pub fn list_end(text: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut stack: Vec<u8> = vec![b'('];
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => i = literal_end(b, i)?,
            c @ (b'(' | b'[' | b'{') => stack.push(c),
            c @ (b')' | b']' | b'}') => {
                let want = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if stack.pop() != Some(want) {
                    return None;
                }
                if stack.is_empty() {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The end of the statement that contains `offset`: `Ok` just past the next `;` at the
/// same nesting depth, outside string and character literals; `Err` with the offset of
/// the bracket that closes the enclosing list or block first (or the end of the text).
/// `in_string` says whether `offset` is inside a string literal (a PTX instruction in an
/// `asm` statement, whose parenthesis is still open).
pub fn statement_end(text: &str, offset: usize, in_string: bool) -> Result<usize, usize> {
    let bytes = text.as_bytes();
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
                    return Err(i);
                }
            }
            b';' if depth == 0 => return Ok(i + 1),
            _ => {}
        }
        i += 1;
    }
    Err(text.len())
}

/// The `//` and `/* */` comments of `s` outside string and character literals, in order:
/// each byte range (a line comment's without its line break, an unclosed block comment's
/// to the end), and whether it is a block comment.
fn comments(s: &str) -> Vec<(std::ops::Range<usize>, bool)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => match literal_end(b, i) {
                Some(j) => i = j,
                None => break,
            },
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = s[i..].find('\n').map_or(b.len(), |n| i + n);
                out.push((i..end, false));
                i = end;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = s[i + 2..].find("*/").map_or(b.len(), |e| i + e + 4);
                out.push((i..end, true));
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// `s` without `//` and `/* */` comments (each block comment becomes one space), outside
/// string and character literals.
pub fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut from = 0;
    for (r, block) in comments(s) {
        out.push_str(&s[from..r.start]);
        if block {
            out.push(' ');
        }
        from = r.end;
    }
    out.push_str(&s[from..]);
    out
}

/// `s` with every byte of its `//` and `/* */` comments (outside string and character
/// literals) a space, line breaks kept: each offset stays where it was.
pub fn blank_comments(s: &str) -> String {
    let mut out = s.as_bytes().to_vec();
    for (r, _) in comments(s) {
        for c in &mut out[r] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    }
    // Only whole characters were blanked, byte for byte.
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Where the run of three `c` (`<` or `>`) that starts at `i` ends, with only blanks
/// between them (`<<<`, `<< <`, `< < <`); `None` when there is no such run.
pub fn chevron_triple(b: &[u8], i: usize, c: u8) -> Option<usize> {
    let mut count = 0;
    let mut j = i;
    let mut end = i;
    while j < b.len() && count < 3 {
        match b[j] {
            x if x == c => {
                count += 1;
                end = j + 1;
            }
            b' ' | b'\t' if count > 0 => {}
            _ => break,
        }
        j += 1;
    }
    (count == 3).then_some(end)
}

/// Whether `text` holds launch chevrons: `<<<`, or three `<` with blanks between, which
/// nvcc and the grammar read as the same launch (`k << <grid, block >> > (args)`, as Visual
/// Studio's formatter writes it).
pub fn has_launch_chevrons(text: &str) -> bool {
    let b = text.as_bytes();
    text.contains("<<<")
        || memchr::memchr_iter(b'<', b).any(|i| chevron_triple(b, i, b'<').is_some())
}

/// The first occurrence of the identifier `word` in `s` at or after `from`, as a whole
/// word (no identifier character touches it).
pub fn find_word(s: &str, word: &str, from: usize) -> Option<usize> {
    let (bytes, w) = (s.as_bytes(), word.as_bytes());
    if !s.is_char_boundary(from) {
        return None;
    }
    let Some((&first, _)) = w.split_first() else {
        // An empty word is found where no identifier character touches the offset.
        let mut at = from;
        while at <= bytes.len() {
            let before = at == 0 || !is_ident_byte(bytes[at - 1]);
            let after = at >= bytes.len() || !is_ident_byte(bytes[at]);
            if before && after {
                return Some(at);
            }
            at += 1;
            while at < bytes.len() && !s.is_char_boundary(at) {
                at += 1;
            }
        }
        return None;
    };
    // Matched from each occurrence of the word's first byte: the words are short, and a
    // substring searcher costs more to set up than the search.
    let mut at = from;
    while at + w.len() <= bytes.len() {
        let start = at + memchr::memchr(first, &bytes[at..=bytes.len() - w.len()])?;
        let end = start + w.len();
        if &bytes[start..end] != w {
            at = start + 1;
            continue;
        }
        let before = start == 0 || !is_ident_byte(bytes[start - 1]);
        let after = end >= bytes.len() || !is_ident_byte(bytes[end]);
        if before && after {
            return Some(start);
        }
        at = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_chevrons_with_and_without_blanks() {
        assert!(has_launch_chevrons("k<<<g, b>>>(x);"));
        assert!(has_launch_chevrons("k << <g, b >> > (x);"));
        assert!(has_launch_chevrons("k< <\t<g, b> > >(x);"));
        assert!(!has_launch_chevrons("a << b < c; x < y < z;"));
        let b = b"k << <1, 1 >> > (x)";
        assert_eq!(chevron_triple(b, 2, b'<'), Some(6));
        assert_eq!(chevron_triple(b, 11, b'>'), Some(15));
        assert_eq!(chevron_triple(b, 3, b'<'), None);
    }

    #[test]
    fn parens_skip_literals_and_nest_brackets() {
        let t = r#"f(a[")"], ')', g(b), {c})"#;
        assert_eq!(matching_paren(t, 1), Some(t.len() - 1));
        assert_eq!(matching_paren("f(a]", 1), None);
        assert_eq!(matching_paren("x", 0), None);
    }

    #[test]
    fn statements_end_at_their_semicolon() {
        let t = r#"x = f(";", 1); y = 2; }"#;
        assert_eq!(statement_end(t, 0, false), Ok(14));
        assert_eq!(statement_end(t, 22, false), Err(22));
        let asm = r#"asm("cp.async.wait_all;" ::);"#;
        assert_eq!(statement_end(asm, 5, true), Ok(asm.len()));
    }

    #[test]
    fn comments_go_strings_stay() {
        assert_eq!(
            strip_comments("a /* b */ c // d\n\"//e\" '/' f"),
            "a   c \n\"//e\" '/' f"
        );
    }

    #[test]
    fn whole_words_only() {
        assert_eq!(find_word("tid2 tid", "tid", 0), Some(5));
        assert_eq!(find_word("a, b", "", 1), Some(2));
        assert!(is_identifier("_x1") && !is_identifier("1x") && !is_identifier(""));
    }
}
