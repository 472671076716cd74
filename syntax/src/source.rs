//! Parsing, the CUDA macro mask, incremental edits and syntax errors.

use std::sync::OnceLock;

use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

use crate::facts::FileFacts;

use crate::util::{is_ident_byte, preorder};
use crate::TextRange;

/// A parsed CUDA file: the text, its syntax tree, and the macros blanked before parsing.
///
/// Cloning is cheap enough for snapshots (the tree is reference counted by tree-sitter).
#[derive(Clone)]
pub struct SourceFile {
    text: String,
    masked: String,
    tree: Option<Tree>,
    masks: Vec<MaskedMacro>,
    facts: OnceLock<FileFacts>,
}

impl std::fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceFile")
            .field("len", &self.text.len())
            .field("masks", &self.masks.len())
            .finish()
    }
}

/// A CUDA macro that tree-sitter-cuda does not understand and that was replaced by spaces
/// (or by a same-length keyword) before parsing, so the code around it parses into the
/// right nodes. Byte offsets are unchanged by the replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaskedMacro {
    /// The macro name as written, for example `__align__` or `CUTLASS_DEVICE`.
    pub name: String,
    /// The range of the name.
    pub name_range: TextRange,
    /// The range of the name and its parenthesised arguments, if any.
    pub range: TextRange,
    /// The text between the parentheses, for `__align__(16)` or `__cluster_dims__(2, 1, 1)`.
    pub args: Option<String>,
    /// The keyword the parser saw in its place (`__global__`, `__device__`), if any.
    pub replacement: Option<&'static str>,
}

/// A syntax error: an `ERROR` node or a token the parser had to assume was missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// The range of the error (empty for a missing token).
    pub range: TextRange,
    /// A one-line description, such as ``missing `;` `` or ``unexpected `)` ``.
    pub message: String,
}

/// The most syntax errors [`SourceFile::errors`] reports.
const MAX_ERRORS: usize = 200;

/// Macros whose name, and parenthesised arguments, are blanked.
const ATTRIBUTE_MACROS: &[&str] = &["__align__", "__cluster_dims__", "__maxnreg__"];
/// Macros that are blanked on their own.
const WORD_MACROS: &[&str] = &[
    "__forceinline__",
    "__noinline__",
    "__inline__",
    "__restrict__",
];

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

impl SourceFile {
    /// Parses `text`. Never fails: broken code gives a tree with errors.
    pub fn parse(text: &str) -> SourceFile {
        let (masked, masks) = mask_macros(text);
        let tree = new_parser().and_then(|mut p| p.parse(&masked, None));
        SourceFile {
            text: text.to_string(),
            masked,
            tree,
            masks,
            facts: OnceLock::new(),
        }
    }

    /// Facts about the whole file, computed on first use and kept until the next edit.
    pub fn facts(&self) -> &FileFacts {
        self.facts
            .get_or_init(|| crate::facts::compute(self).unwrap_or_default())
    }

    /// Replaces `range` with `new_text` and reparses incrementally, reusing the old tree.
    ///
    /// A range past the end is clamped to the text, and a range that splits a character
    /// is widened to whole characters.
    pub fn apply_edit(&mut self, range: TextRange, new_text: &str) {
        let len = self.text.len();
        let mut start = range.start.min(range.end).min(len);
        let mut end = range.end.max(range.start).min(len);
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        let mut text = String::with_capacity(len - (end - start) + new_text.len());
        text.push_str(&self.text[..start]);
        text.push_str(new_text);
        text.push_str(&self.text[end..]);
        let (masked, masks) = mask_macros(&text);

        let old = self.masked.as_bytes();
        let new = masked.as_bytes();
        let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let max_suffix = old.len().min(new.len()) - prefix;
        let suffix = old
            .iter()
            .rev()
            .zip(new.iter().rev())
            .take(max_suffix)
            .take_while(|(a, b)| a == b)
            .count();
        let edit = InputEdit {
            start_byte: prefix,
            old_end_byte: old.len() - suffix,
            new_end_byte: new.len() - suffix,
            start_position: point_at(old, prefix),
            old_end_position: point_at(old, old.len() - suffix),
            new_end_position: point_at(new, new.len() - suffix),
        };
        let tree = match (self.tree.as_mut(), new_parser()) {
            (Some(tree), Some(mut parser)) => {
                tree.edit(&edit);
                parser.parse(&masked, Some(tree))
            }
            (None, Some(mut parser)) => parser.parse(&masked, None),
            _ => None,
        };
        self.text = text;
        self.masked = masked;
        self.masks = masks;
        self.tree = tree;
        self.facts = OnceLock::new();
    }

    /// The text as given (not the masked text the parser saw).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The macros blanked before parsing, in document order.
    pub fn masked_macros(&self) -> &[MaskedMacro] {
        &self.masks
    }

    /// The syntax errors, in document order (at most 200).
    pub fn errors(&self) -> Vec<SyntaxError> {
        let mut out = Vec::new();
        let Some(root) = self.root() else {
            return out;
        };
        if !root.has_error() {
            return out;
        }
        preorder(root, |node| {
            if out.len() >= MAX_ERRORS {
                return false;
            }
            if node.is_missing() {
                out.push(SyntaxError {
                    range: node.start_byte()..node.start_byte(),
                    message: format!("missing `{}`", node.kind()),
                });
                return false;
            }
            if node.is_error() {
                let snippet: String = self
                    .text
                    .get(node.byte_range())
                    .unwrap_or("")
                    .chars()
                    .take(24)
                    .collect();
                out.push(SyntaxError {
                    range: node.byte_range(),
                    message: format!("unexpected `{}`", crate::util::squash_ws(&snippet)),
                });
                return false;
            }
            node.has_error()
        });
        out
    }

    /// Whether the parse produced a tree at all. It always does, except when tree-sitter
    /// refuses the grammar, which would be a build problem.
    pub fn has_tree(&self) -> bool {
        self.tree.is_some()
    }

    /// The tree-sitter root node (crate-private: tree-sitter never leaves this crate).
    pub(crate) fn root(&self) -> Option<Node<'_>> {
        self.tree.as_ref().map(|t| t.root_node())
    }

    /// The S-expression of the tree, for debugging and tests.
    pub fn debug_tree(&self) -> String {
        self.root().map(|r| r.to_sexp()).unwrap_or_default()
    }
}

fn point_at(bytes: &[u8], offset: usize) -> Point {
    let before = &bytes[..offset.min(bytes.len())];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let column = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(before.len(), |nl| before.len() - nl - 1);
    Point { row, column }
}

/// Blanks the macros the grammar does not know. Returns the masked text (same length as
/// `text`, same line breaks) and what was masked.
pub(crate) fn mask_macros(text: &str) -> (String, Vec<MaskedMacro>) {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut masks = Vec::new();
    let mut i = 0;
    let mut line_is_directive = false;
    let mut at_line_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line_is_directive = false;
                at_line_start = true;
                i += 1;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
                continue;
            }
            b'"' | b'\'' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            b'#' if at_line_start => {
                line_is_directive = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            at_line_start = false;
        }
        if !(b.is_ascii_alphabetic() || b == b'_') || (i > 0 && is_ident_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_ident_byte(bytes[i]) {
            i += 1;
        }
        let word = &text[start..i];
        if line_is_directive {
            continue;
        }
        if word == "__launch_bounds__" {
            // The grammar knows two arguments; the third (maximum blocks per cluster) is
            // blanked and kept here.
            let mut j = i;
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                j += 1;
            }
            if let Some(close) = (bytes.get(j) == Some(&b'('))
                .then(|| matching_paren(bytes, j))
                .flatten()
            {
                let mut depth = 0usize;
                let mut commas = Vec::new();
                for (k, &c) in bytes.iter().enumerate().take(close).skip(j + 1) {
                    match c {
                        b'(' | b'<' | b'[' => depth += 1,
                        b')' | b'>' | b']' => depth = depth.saturating_sub(1),
                        b',' if depth == 0 => commas.push(k),
                        _ => {}
                    }
                }
                if let Some(&second) = commas.get(1) {
                    blank(&mut out, second, close);
                    masks.push(MaskedMacro {
                        name: word.to_string(),
                        name_range: start..i,
                        range: second..close,
                        args: text.get(second + 1..close).map(|a| a.trim().to_string()),
                        replacement: None,
                    });
                }
            }
            continue;
        }
        if ATTRIBUTE_MACROS.contains(&word) {
            let mut j = i;
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                j += 1;
            }
            let mut end = i;
            let mut args = None;
            if bytes.get(j) == Some(&b'(') {
                if let Some(close) = matching_paren(bytes, j) {
                    end = close + 1;
                    args = text.get(j + 1..close).map(str::to_string);
                }
            }
            blank(&mut out, start, end);
            masks.push(MaskedMacro {
                name: word.to_string(),
                name_range: start..i,
                range: start..end,
                args,
                replacement: None,
            });
            i = end;
        } else if WORD_MACROS.contains(&word) {
            blank(&mut out, start, i);
            masks.push(MaskedMacro {
                name: word.to_string(),
                name_range: start..i,
                range: start..i,
                args: None,
                replacement: None,
            });
        } else if is_wrapper_macro(word) && next_is_word(bytes, i) {
            let replacement = wrapper_replacement(word);
            blank(&mut out, start, i);
            if let Some(r) = replacement {
                out[start..start + r.len()].copy_from_slice(r.as_bytes());
            }
            masks.push(MaskedMacro {
                name: word.to_string(),
                name_range: start..i,
                range: start..i,
                args: None,
                replacement,
            });
        }
    }
    let masked = String::from_utf8(out).unwrap_or_else(|_| text.to_string());
    (masked, masks)
}

/// Whether `word` looks like an all-caps function-qualifier wrapper such as
/// `CUTLASS_DEVICE`, `CUTLASS_HOST_DEVICE`, `CUTE_HOST_DEVICE` or `MY_KERNEL_INLINE`.
fn is_wrapper_macro(word: &str) -> bool {
    if word.len() < 4
        || !word.contains('_')
        || !word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    {
        return false;
    }
    word.split('_').any(|part| {
        matches!(
            part,
            "DEVICE" | "HOST" | "INLINE" | "FORCEINLINE" | "GLOBAL" | "KERNEL" | "HD" | "NOINLINE"
        )
    })
}

fn wrapper_replacement(word: &str) -> Option<&'static str> {
    let parts: Vec<&str> = word.split('_').collect();
    let r = if parts.iter().any(|p| *p == "GLOBAL" || *p == "KERNEL") {
        "__global__"
    } else if parts.iter().any(|p| *p == "DEVICE" || *p == "HD") {
        "__device__"
    } else {
        return None;
    };
    (word.len() >= r.len()).then_some(r)
}

/// Whether the next token after `i` (skipping blanks, not newlines only) starts a word.
fn next_is_word(bytes: &[u8], mut i: usize) -> bool {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    bytes
        .get(i)
        .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_')
}

fn matching_paren(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &b) in bytes.iter().enumerate().skip(open).take(4096) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

fn blank(out: &mut [u8], start: usize, end: usize) {
    for b in &mut out[start..end] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}
