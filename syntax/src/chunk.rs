//! Splitting a large file into runs of top-level items that are parsed as separate trees.
//!
//! tree-sitter-cuda reads about 5 MB/s on the 2-core machine we measure on, so a
//! 10,000-line file takes some 70 ms to parse from scratch. A file is therefore cut, at
//! the start of lines where a top-level item (a function body's `}`, a `;`, a
//! preprocessor line) has just ended, into chunks of a few kilobytes. Each chunk is
//! parsed on its own (tree-sitter's included ranges keep the node offsets those of the
//! whole file), the chunks of a new file are parsed on several threads at once, and an
//! edit reparses only the chunks it touches.
//!
//! The cut is purely lexical: comments, string and character literals (raw strings
//! included), preprocessor lines (with `\` continuations) and `#if` nesting are skipped,
//! and a cut is made only where the brace and parenthesis depths are zero and no `#if`
//! is open. A `namespace { ... }` or an include guard around the whole file therefore
//! leaves it as one chunk, which is correct, only slower. Broken code (an unclosed `{`)
//! does the same from that point on.

use crate::TextRange;

/// Files shorter than this are one chunk, parsed exactly as a whole file.
pub(crate) const MIN_FILE: usize = 32 * 1024;
/// The size a chunk grows to before it is cut at the next item boundary.
pub(crate) const TARGET: usize = 2 * 1024;

/// How far top-level text may run without a `;`, `{` or `}` before a line start after a
/// `,` in it is taken as a cut ([`Scanner::next_cut`]).
const FORCED_CUT: usize = 8 * 1024;

/// The lexical state between two bytes of the file, as far as cutting needs it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scanner {
    /// The next byte to read.
    pos: usize,
    /// The open braces, innermost last: `true` for a scope (`namespace`, `extern "C"`,
    /// `struct`/`class`/`union`/`enum` bodies), `false` for code (a function body, a
    /// block, an initializer).
    braces: Vec<bool>,
    /// Where the text that a `{` would open starts: just after the last `;`, `{` or `}`.
    head_start: usize,
    parens: usize,
    /// Open `#if`/`#ifdef`/`#ifndef` directives.
    pp_depth: usize,
    /// Whether a top-level item ended and nothing significant followed it yet.
    item_ended: bool,
    /// A line start after an ended item, waiting for the next significant byte to
    /// confirm it (a `;` or `,` there means the item goes on).
    pending: Option<usize>,
    at_line_start: bool,
    /// The last byte read that is no blank or comment.
    last_significant: u8,
}

impl Scanner {
    /// A scanner at `pos`, which must be a cut (or the start of the file): top-level
    /// state, at the start of a line.
    pub(crate) fn at(pos: usize) -> Scanner {
        Scanner {
            pos,
            head_start: pos,
            at_line_start: true,
            ..Scanner::default()
        }
    }

    /// The next cut: a line start where a new top-level item begins. `None` at the end.
    pub(crate) fn next_cut(&mut self, bytes: &[u8]) -> Option<usize> {
        let len = bytes.len();
        while self.pos < len {
            let i = self.pos;
            let b = bytes[i];
            match b {
                b'\n' => {
                    self.pos += 1;
                    self.at_line_start = true;
                    if self.braces.contains(&false) && starts_top_level_item(bytes, self.pos) {
                        // A function body (or block) is still open where only a new
                        // top-level item can start: it was left unclosed (an edit in
                        // progress). Close it here, so that the damage stays in this chunk.
                        let scopes = self.braces.iter().take_while(|&&s| s).count();
                        self.braces.truncate(scopes);
                        self.parens = 0;
                        self.head_start = self.pos;
                        if self.braces.is_empty() && self.pp_depth == 0 {
                            self.pending = None;
                            self.item_ended = false;
                            return Some(self.pos);
                        }
                    }
                    if self.item_ended
                        && self.braces.is_empty()
                        && self.parens == 0
                        && self.pp_depth == 0
                        && self.pending.is_none()
                    {
                        self.pending = Some(self.pos);
                    }
                    // Top-level text that runs on without a `;`, `{` or `}`, line after
                    // line ending in `,`, is no declaration or function: the values of an
                    // array a header is included into (`0,\n1,\n…`). Parsed whole, its
                    // error recovery costs the parser time quadratic in its length (24,000
                    // values: 8 s); cut at such a line end every `FORCED_CUT` bytes.
                    if self.braces.is_empty()
                        && self.parens == 0
                        && self.pp_depth == 0
                        && self.pending.is_none()
                        && self.last_significant == b','
                        && self.pos - self.head_start >= FORCED_CUT
                    {
                        self.head_start = self.pos;
                        self.item_ended = false;
                        return Some(self.pos);
                    }
                    continue;
                }
                b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => {
                    self.pos += 1;
                    continue;
                }
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    self.pos = skip_line_comment(bytes, i);
                    continue;
                }
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    self.pos = skip_block_comment(bytes, i);
                    continue;
                }
                b'#' if self.at_line_start => {
                    // A directive starts a new item: it confirms a pending cut, and is
                    // read on the next call.
                    if let Some(cut) = self.pending.take() {
                        return Some(cut);
                    }
                    self.pos = self.directive(bytes, i);
                    if self.braces.is_empty() && self.parens == 0 {
                        self.item_ended = true;
                    }
                    continue;
                }
                _ => {}
            }
            // A significant byte: it confirms or cancels a pending cut.
            if let Some(cut) = self.pending.take() {
                if !matches!(
                    b,
                    b';' | b',' | b')' | b'=' | b':' | b'[' | b'(' | b'{' | b'.'
                ) {
                    self.item_ended = false;
                    return Some(cut);
                }
            }
            self.item_ended = false;
            self.at_line_start = false;
            self.last_significant = b;
            match b {
                b'"' => {
                    self.pos = skip_string(bytes, i);
                    continue;
                }
                b'\'' if i == 0 || !is_alnum(bytes[i - 1]) => {
                    self.pos = skip_char(bytes, i);
                    continue;
                }
                b'{' => {
                    self.braces.push(opens_scope(bytes, self.head_start, i));
                    self.head_start = i + 1;
                }
                b'}' => {
                    self.braces.pop();
                    self.head_start = i + 1;
                    self.item_ended = self.braces.is_empty() && self.parens == 0;
                }
                b'(' => self.parens += 1,
                b')' => self.parens = self.parens.saturating_sub(1),
                b';' => {
                    self.head_start = i + 1;
                    self.item_ended = self.braces.is_empty() && self.parens == 0;
                }
                _ => {}
            }
            self.pos += 1;
        }
        None
    }

    /// Reads a preprocessor line starting at the `#` at `i`; returns the offset of the
    /// newline that ends it (or the end of the file).
    fn directive(&mut self, bytes: &[u8], i: usize) -> usize {
        let mut j = i + 1;
        while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
            j += 1;
        }
        let start = j;
        while j < bytes.len() && bytes[j].is_ascii_alphabetic() {
            j += 1;
        }
        match &bytes[start..j] {
            b"if" | b"ifdef" | b"ifndef" => self.pp_depth += 1,
            b"endif" => self.pp_depth = self.pp_depth.saturating_sub(1),
            _ => {}
        }
        while j < bytes.len() {
            match bytes[j] {
                b'\n' => return j,
                b'\\' if bytes.get(j + 1) == Some(&b'\n') => j += 2,
                b'\\' if bytes.get(j + 1) == Some(&b'\r') && bytes.get(j + 2) == Some(&b'\n') => {
                    j += 3
                }
                b'/' if bytes.get(j + 1) == Some(&b'*') => j = skip_block_comment(bytes, j),
                b'/' if bytes.get(j + 1) == Some(&b'/') => return skip_line_comment(bytes, j),
                _ => j += 1,
            }
        }
        j
    }
}

/// Whether the line at `at` starts, in column 0, with a word that only a top-level item
/// can start with: `__global__`, `__device__`, `__host__`, `template`, `namespace` or
/// `extern "C"` (none of them can start a statement inside a function body).
fn starts_top_level_item(bytes: &[u8], at: usize) -> bool {
    let rest = &bytes[at.min(bytes.len())..];
    let word_end = rest
        .iter()
        .position(|&b| !is_alnum(b))
        .unwrap_or(rest.len());
    match &rest[..word_end] {
        b"__global__" | b"__device__" | b"__host__" | b"template" | b"namespace" => true,
        b"extern" => rest[word_end..].trim_ascii_start().starts_with(b"\"C"),
        _ => false,
    }
}

/// Whether the `{` at `brace`, whose declaration head starts at `head`, opens a scope
/// (`namespace`, `extern "C" {`, `struct`, `class`, `union`, `enum`) rather than code.
fn opens_scope(bytes: &[u8], head: usize, brace: usize) -> bool {
    let mut t = &bytes[head.min(brace)..brace];
    // Leading blanks, comments and preprocessor lines.
    loop {
        t = t.trim_ascii_start();
        if t.starts_with(b"//") || t.starts_with(b"#") {
            let nl = t.iter().position(|&b| b == b'\n').unwrap_or(t.len());
            t = &t[nl..];
        } else if t.starts_with(b"/*") {
            let end = t
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(t.len(), |e| e + 2);
            t = &t[end..];
        } else {
            break;
        }
    }
    // `template <...>`, then specifiers that may come before the keyword.
    if let Some(rest) = t.strip_prefix(b"template") {
        let rest = rest.trim_ascii_start();
        if rest.starts_with(b"<") {
            let mut depth = 0usize;
            let mut end = rest.len();
            for (k, &b) in rest.iter().enumerate() {
                match b {
                    b'<' => depth += 1,
                    b'>' => {
                        depth -= 1;
                        if depth == 0 {
                            end = k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            t = rest[end..].trim_ascii_start();
        }
    }
    for prefix in [&b"inline "[..], b"typedef ", b"export "] {
        if let Some(rest) = t.strip_prefix(prefix) {
            t = rest.trim_ascii_start();
        }
    }
    let word_end = t.iter().position(|&b| !is_alnum(b)).unwrap_or(t.len());
    match &t[..word_end] {
        b"namespace" | b"struct" | b"class" | b"union" | b"enum" => true,
        // `extern "C" {`, not `extern "C" __global__ void k() {`.
        b"extern" => {
            let rest = t[word_end..].trim_ascii_start();
            rest.starts_with(b"\"") && {
                let close = rest[1..]
                    .iter()
                    .position(|&b| b == b'"')
                    .map_or(rest.len(), |c| c + 2);
                rest[close.min(rest.len())..].trim_ascii().is_empty()
            }
        }
        _ => false,
    }
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The offset of the newline that ends the `//` comment at `i` (or the end).
fn skip_line_comment(bytes: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < bytes.len() && bytes[j] != b'\n' {
        j += 1;
    }
    j
}

/// The offset just past the `*/` that closes the comment at `i` (or the end).
fn skip_block_comment(bytes: &[u8], i: usize) -> usize {
    let mut j = i + 2;
    while j + 1 < bytes.len() {
        if bytes[j] == b'*' && bytes[j + 1] == b'/' {
            return j + 2;
        }
        j += 1;
    }
    bytes.len()
}

/// The offset just past the string literal whose `"` is at `i`. A raw string
/// (`R"d(...)d"`) runs to its delimiter; any other stops at an unescaped newline.
fn skip_string(bytes: &[u8], i: usize) -> usize {
    if i > 0 && bytes[i - 1] == b'R' && (i < 2 || !is_alnum(bytes[i - 2]) || is_prefix(bytes, i)) {
        let mut j = i + 1;
        while j < bytes.len() && j - i <= 17 && bytes[j] != b'(' && bytes[j] != b'\n' {
            j += 1;
        }
        if bytes.get(j) == Some(&b'(') {
            let delim = &bytes[i + 1..j];
            let mut k = j + 1;
            while k < bytes.len() {
                if bytes[k] == b')'
                    && bytes[k + 1..].starts_with(delim)
                    && bytes.get(k + 1 + delim.len()) == Some(&b'"')
                {
                    return k + 2 + delim.len();
                }
                k += 1;
            }
            return bytes.len();
        }
    }
    let mut j = i + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            b'\n' => return j,
            _ => j += 1,
        }
    }
    bytes.len()
}

/// Whether the `R` before the quote at `i` follows an encoding prefix (`u8R"`, `LR"`).
fn is_prefix(bytes: &[u8], i: usize) -> bool {
    let before = &bytes[..i - 1];
    [&b"u8"[..], b"u", b"U", b"L"].iter().any(|p| {
        before.ends_with(p)
            && (before.len() == p.len() || !is_alnum(before[before.len() - p.len() - 1]))
    })
}

/// The offset just past the character literal whose `'` is at `i` (it stops at a newline).
fn skip_char(bytes: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'\'' => return j + 1,
            b'\n' => return j,
            _ => j += 1,
        }
    }
    bytes.len()
}

/// Cuts `bytes[start..end]` into chunks of at least `target` bytes (the last may be
/// shorter) at the cuts the scanner finds, and returns their ranges. `start` must be a
/// cut or 0, and `end` a cut or the end of the file.
pub(crate) fn split(bytes: &[u8], start: usize, end: usize, target: usize) -> Vec<TextRange> {
    let mut out = Vec::new();
    let mut scanner = Scanner::at(start);
    let mut chunk_start = start;
    while let Some(cut) = scanner.next_cut(bytes) {
        if cut >= end {
            break;
        }
        if cut - chunk_start >= target {
            out.push(chunk_start..cut);
            chunk_start = cut;
        }
    }
    out.push(chunk_start..end);
    out
}

/// The top-level items of `text` (functions, declarations, preprocessor lines, each with
/// the comments and blank lines before it), in order, covering the whole text: the cuts
/// [`split`] chooses between, every one of them taken. Lexical, like the cut itself.
pub fn top_level_items(text: &str) -> Vec<TextRange> {
    if text.is_empty() {
        return Vec::new();
    }
    split(text.as_bytes(), 0, text.len(), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuts(text: &str) -> Vec<usize> {
        let mut s = Scanner::at(0);
        let mut out = Vec::new();
        while let Some(c) = s.next_cut(text.as_bytes()) {
            out.push(c);
        }
        out
    }

    fn lines_at(text: &str, cuts: &[usize]) -> Vec<String> {
        cuts.iter()
            .map(|&c| text[c..].lines().next().unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn a_long_run_of_top_level_values_is_cut_at_lines() {
        // The values an array's initializer includes from a header: no item ends, but
        // the text is cut every `FORCED_CUT` bytes at a line start.
        let text: String = (0..4000).map(|i| format!("{i},\n")).collect();
        let c = cuts(&text);
        assert!(c.len() >= text.len() / FORCED_CUT - 1, "{} cuts", c.len());
        assert!(c.iter().all(|&at| text.as_bytes()[at - 1] == b'\n'));
        assert!(c.windows(2).all(|w| w[1] - w[0] >= FORCED_CUT));
        // Inside an initializer's braces nothing is cut.
        let text = format!("int t[] = {{\n{text}}};\n");
        assert!(cuts(&text).is_empty());
    }

    #[test]
    fn cuts_between_functions_and_declarations() {
        let text = "#include <cuda.h>\n#define N 4\nint a = 1;\n\n__global__ void k() {\n  if (x) { y(); }\n}\n\n// next\nvoid h() {}\nstruct S {\n  int x;\n};\nint b;\n";
        assert_eq!(
            lines_at(text, &cuts(text)),
            ["#define N 4", "int a = 1;", "", "", "struct S {", "int b;"]
        );
    }

    #[test]
    fn no_cut_inside_comments_strings_macros_or_preprocessor_conditionals() {
        let text = "/* }\n;\n*/\nint a;\nconst char* s = \"}\\n;\";\n#define M { \\\n }\n#if X\nint b;\n#endif\nchar c = '}';\nauto r = R\"x(\n}\n;\n)x\";\nint d;\n";
        assert_eq!(
            lines_at(text, &cuts(text)),
            [
                "const char* s = \"}\\n;\";",
                "#define M { \\",
                "#if X",
                "char c = '}';",
                "auto r = R\"x(",
                "int d;"
            ]
        );
    }

    #[test]
    fn a_brace_followed_by_a_declarator_on_the_next_line_is_not_cut() {
        let text = "struct S {\n  int x;\n}\n;\nint y;\n";
        assert_eq!(lines_at(text, &cuts(text)), ["int y;"]);
    }

    #[test]
    fn namespaces_and_unclosed_braces_stay_whole() {
        let text = "namespace a {\nvoid f() {}\nint x;\n}\nvoid g() {\nint y;\nvoid h() {}\n";
        assert_eq!(lines_at(text, &cuts(text)), ["void g() {"]);
    }

    #[test]
    fn an_unclosed_function_body_ends_where_a_top_level_item_starts_in_column_0() {
        // The `}` of `k` is missing (an edit in progress): `h` still starts a chunk.
        let text = "__global__ void k() {\n  int x;\n\n__device__ float h() {\n  return 1.0f;\n}\n\nint y;\n";
        assert_eq!(lines_at(text, &cuts(text)), ["__device__ float h() {", ""]);
        // Indented, the same words are not taken as a new item.
        let text = "__global__ void k() {\n  int x;\n  __device__ float h();\n}\nint y;\n";
        assert_eq!(lines_at(text, &cuts(text)), ["int y;"]);
        // Inside a namespace, the unclosed body is closed but the namespace stays open.
        let text = "namespace a {\nvoid f() {\n  int x;\ntemplate <int N> void g() {}\n}\nint y;\n";
        assert_eq!(lines_at(text, &cuts(text)), ["int y;"]);
        // `extern "C" {` and `struct` bodies are scopes, a kernel after `extern "C"` is code.
        let text = "extern \"C\" {\nstruct S {\ntemplate <int N> void g();\n};\n}\nextern \"C\" __global__ void k() {\n  int x;\n__global__ void k2() {}\nint z;\n";
        assert_eq!(
            lines_at(text, &cuts(text)),
            [
                "extern \"C\" __global__ void k() {",
                "__global__ void k2() {}",
                "int z;"
            ]
        );
    }

    #[test]
    fn split_groups_items_into_chunks_that_cover_the_file() {
        let item = "__global__ void k() {\n  int x = threadIdx.x;\n}\n\n";
        let text = item.repeat(1000);
        let chunks = split(text.as_bytes(), 0, text.len(), TARGET);
        assert!(chunks.len() > 4);
        assert_eq!(chunks[0].start, 0);
        assert_eq!(chunks.last().unwrap().end, text.len());
        for w in chunks.windows(2) {
            assert_eq!(w[0].end, w[1].start);
            assert!(text[w[1].start..].trim_start().starts_with("__global__"));
        }
    }
}
