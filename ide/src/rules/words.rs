//! Words in source text: identifiers and whole-word search.

/// Whether `s` is a C identifier.
pub(crate) fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !s.as_bytes()[0].is_ascii_digit()
}

/// The first occurrence of the identifier `word` in `s` at or after `from`.
pub(crate) fn find_word(s: &str, word: &str, from: usize) -> Option<usize> {
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let (bytes, w) = (s.as_bytes(), word.as_bytes());
    // Matched from each occurrence of the word's first byte: the words are short, and a
    // substring searcher costs more to set up than the search. A match of a whole word
    // starts and ends on character boundaries.
    if !s.is_char_boundary(from) {
        return None;
    }
    let Some((&first, _)) = w.split_first() else {
        // An empty word is found where no identifier character touches the offset.
        let mut at = from;
        while at <= bytes.len() {
            let before = at == 0 || !is_ident(bytes[at - 1]);
            let after = at >= bytes.len() || !is_ident(bytes[at]);
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
    let mut at = from;
    while at + w.len() <= bytes.len() {
        let start = at + memchr::memchr(first, &bytes[at..=bytes.len() - w.len()])?;
        let end = start + w.len();
        if &bytes[start..end] != w {
            at = start + 1;
            continue;
        }
        let before = start == 0 || !is_ident(bytes[start - 1]);
        let after = end >= bytes.len() || !is_ident(bytes[end]);
        if before && after {
            return Some(start);
        }
        at = end;
    }
    None
}
