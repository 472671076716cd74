//! Lexical colouring of CUDA source for the screen: a line at a time, carrying only
//! "inside a block comment" from one line to the next. It colours words; it knows
//! nothing about what they mean (that is `ide`'s job, and the side panel shows it).
use ratatui::text::Span;

use super::theme::{Role, Theme};

const KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "constexpr",
    "continue",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "explicit",
    "extern",
    "false",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "namespace",
    "new",
    "nullptr",
    "operator",
    "private",
    "protected",
    "public",
    "return",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "dynamic_cast",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typename",
    "union",
    "using",
    "virtual",
    "volatile",
    "while",
    "asm",
    "alignas",
    "alignof",
    "decltype",
    "noexcept",
    "register",
    "restrict",
    "__restrict__",
];

const TYPES: &[&str] = &[
    "void",
    "bool",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "unsigned",
    "signed",
    "size_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "half",
    "half2",
    "float2",
    "float3",
    "float4",
    "int2",
    "int3",
    "int4",
    "uint2",
    "uint3",
    "uint4",
    "dim3",
    "double2",
    "__half",
    "__half2",
    "__nv_bfloat16",
    "__nv_bfloat162",
    "cudaError_t",
    "cudaStream_t",
];

const BUILTINS: &[&str] = &["threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"];

/// Which role a word has.
fn word_role(w: &str) -> Role {
    if KEYWORDS.contains(&w) {
        Role::Keyword
    } else if TYPES.contains(&w) {
        Role::Type
    } else if w.starts_with("__") || BUILTINS.contains(&w) || w.starts_with("cuda") {
        Role::Cuda
    } else {
        Role::Text
    }
}

fn flush<'a>(out: &mut Vec<(Role, &'a str)>, from: usize, to: usize, line: &'a str) {
    if to > from {
        out.push((Role::Text, &line[from..to]));
    }
}

/// Pieces of one line with their roles, and whether a block comment is still open at
/// its end.
pub fn lex_line(line: &str, in_comment: bool) -> (Vec<(Role, &str)>, bool) {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut comment = in_comment;
    if !comment && line.trim_start().starts_with('#') {
        out.push((Role::Preproc, line));
        return (out, false);
    }
    let mut plain_start = 0;
    // SAFETY of slicing: every index below stops on an ASCII byte or the line's end.
    while i < bytes.len() {
        if comment {
            let end = line[i..].find("*/").map_or(line.len(), |p| i + p + 2);
            out.push((Role::Comment, &line[i..end]));
            comment = end == line.len() && !line[i..].contains("*/");
            i = end;
            plain_start = i;
            continue;
        }
        let c = bytes[i];
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            flush(&mut out, plain_start, i, line);
            out.push((Role::Comment, &line[i..]));
            return (out, false);
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            flush(&mut out, plain_start, i, line);
            comment = true;
            continue;
        }
        if c == b'"' || c == b'\'' {
            flush(&mut out, plain_start, i, line);
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != c {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(bytes.len());
            out.push((Role::Str, &line[i..end]));
            i = end;
            plain_start = i;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            let role = word_role(&line[i..j]);
            if role != Role::Text {
                flush(&mut out, plain_start, i, line);
                out.push((role, &line[i..j]));
                plain_start = j;
            }
            i = j;
            continue;
        }
        if c.is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
        {
            flush(&mut out, plain_start, i, line);
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'.') {
                j += 1;
            }
            out.push((Role::Number, &line[i..j]));
            i = j;
            plain_start = i;
            continue;
        }
        i += 1;
        while i < bytes.len() && !line.is_char_boundary(i) {
            i += 1;
        }
    }
    flush(&mut out, plain_start, bytes.len(), line);
    (out, comment)
}

/// For each line, whether it starts inside a block comment.
pub fn comment_states<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<bool> {
    let mut out = Vec::new();
    let mut c = false;
    for l in lines {
        out.push(c);
        c = lex_line(l, c).1;
    }
    out
}

/// One line as styled spans.
pub fn spans(line: &str, in_comment: bool, theme: &Theme) -> Vec<Span<'static>> {
    lex_line(line, in_comment)
        .0
        .into_iter()
        .map(|(r, t)| Span::styled(t.replace('\t', "    "), theme.s(r)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_comments_and_strings_get_their_roles() {
        let (parts, open) = lex_line("__global__ void k() { int x = 32; // hi", false);
        assert!(!open);
        assert_eq!(parts[0], (Role::Cuda, "__global__"));
        assert!(parts.contains(&(Role::Type, "void")));
        assert!(parts.contains(&(Role::Number, "32")));
        assert_eq!(parts.last(), Some(&(Role::Comment, "// hi")));
        let (_, open) = lex_line("x /* open", false);
        assert!(open);
        let (parts, open) = lex_line("still */ int", true);
        assert!(!open);
        assert_eq!(parts[0], (Role::Comment, "still */"));
        let joined: String = lex_line("a \"s\\\"t\" é b", false)
            .0
            .iter()
            .map(|p| p.1)
            .collect();
        assert_eq!(joined, "a \"s\\\"t\" é b");
    }
}
