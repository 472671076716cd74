//! Preprocessor text a file shares with others: its quoted `#include "…"` lines and its
//! `#define`s, read from the text alone, and the [`Prelude`] of macros a host hands a file
//! from the headers it includes.
//!
//! Nothing here reads the disk: a host resolves an [`Include`] to a file it holds and
//! gives the including file the headers' [`MacroDef`]s as a prelude
//! ([`crate::SourceFile::with_prelude`]). The file's own definitions win over the
//! prelude's.

use std::hash::{Hash, Hasher};

use crate::TextRange;

/// An include directive: `#include "ptx.h"` (quoted: next to the including file, then
/// in the include folders) or `#include <mylib/ptx.cuh>` (angled: in the include folders
/// only, where a project's `-I` puts its own headers; the toolkit's and the system's are
/// never there), with the name as written and the range of the whole directive line
/// (without its newline).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Include {
    /// The path as written, `../common/x.cuh`.
    pub name: String,
    /// The directive.
    pub range: TextRange,
    /// Written `#include <name>`: searched only in the include folders (`-I`), never
    /// next to the including file.
    pub angled: bool,
}

/// A `#define`, object-like (`params` is `None`) or function-like.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MacroDef {
    /// The macro's name.
    pub name: String,
    /// The parameter names of a function-like macro (`...` kept as written).
    pub params: Option<Vec<String>>,
    /// The replacement text, joined over `\` continuations, trimmed.
    pub body: String,
}

/// The macros a file sees from the headers it includes, in the order they win (the first
/// definition of a name wins, as the host lists the nearest header first).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Prelude {
    /// The definitions.
    pub macros: Vec<MacroDef>,
    /// The headers' integral constants ([`constant_definitions`]): folded like object-like
    /// macros, but not seen by `#if`.
    pub constants: Vec<(String, String)>,
    /// The headers' device functions whose result can be one value for the whole block
    /// ([`crate::SourceFile::helper_summaries`]).
    pub helpers: Vec<HelperSummary>,
}

/// What decides whether a device function's result is the same in every thread of the
/// block ([`crate::SourceFile::helper_summaries`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HelperSummary {
    /// The function's name, its last segment.
    pub name: String,
    /// How many parameters it takes.
    pub params: usize,
    /// The parameters (by position) whose arguments must be the same in every thread for
    /// the result to be; the result is one value for the block where they are.
    pub uniform_when: Vec<usize>,
}

impl Prelude {
    /// The first definition of `name`.
    pub fn get(&self, name: &str) -> Option<&MacroDef> {
        self.macros.iter().find(|m| m.name == name)
    }

    /// A fingerprint of the definitions, for caches keyed by what a file sees.
    pub fn fingerprint(&self) -> u64 {
        // An identity, not a table key: the standard SipHash, as the facts' fingerprints.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }
}

/// The integral constants a header declares at file or namespace scope, as (name,
/// initialiser text): `static const int tblock = 32;`, `constexpr unsigned kWarps = 4;`,
/// `const size_t kBytes = 64 * 1024;`. A file that includes the header folds these
/// names in launch configurations and indices; they are not macros (`#if` does not see
/// them). Read from the text: statements at brace depth 0 or inside `namespace` blocks
/// only, one declarator each, an initialiser after `=`.
pub fn constant_definitions(text: &str) -> Vec<(String, String)> {
    if !(text.contains("const") && (text.contains('=') || text.contains("dim3"))) {
        return Vec::new();
    }
    let code = crate::lex::strip_comments(text);
    let mut out = Vec::new();
    // The kinds of the braces open at this point: true for a namespace's.
    let mut stack: Vec<bool> = Vec::new();
    let mut start = 0;
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                i = crate::lex::literal_end(b, i).unwrap_or(b.len());
                continue;
            }
            b'#' if code[start..i].trim().is_empty() => {
                // A directive line: skipped, with its continuations.
                while i < b.len() && !(b[i] == b'\n' && b.get(i.wrapping_sub(1)) != Some(&b'\\')) {
                    i += 1;
                }
                start = i + 1;
            }
            b'{' => {
                let head = code[start..i].trim();
                stack.push(head.starts_with("namespace") || head.starts_with("inline namespace"));
                start = i + 1;
            }
            b'}' => {
                stack.pop();
                start = i + 1;
            }
            b';' => {
                if stack.iter().all(|n| *n) {
                    if let Some(c) = constant_statement(&code[start..i]) {
                        out.push(c);
                    }
                    out.extend(dim3_constant(&code[start..i]));
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// `constexpr dim3 name(x, y)` (also `{x, y}`, `= dim3(x, y)`; the text before `;`) as
/// its parts `name.x`, `name.y`, `name.z` (1 where not written), the form a launch that
/// names the constant folds.
fn dim3_constant(stmt: &str) -> Vec<(String, String)> {
    let Some((head, rest)) = stmt.split_once("dim3") else {
        return Vec::new();
    };
    let quals: Vec<&str> = head.split_whitespace().collect();
    if !quals.iter().any(|w| matches!(*w, "const" | "constexpr"))
        || !quals.iter().all(|w| {
            matches!(
                *w,
                "static" | "inline" | "const" | "constexpr" | "__device__" | "__host__"
            )
        })
    {
        return Vec::new();
    }
    let rest = rest.trim_start();
    let name_len = rest
        .bytes()
        .take_while(|b| crate::util::is_ident_byte(*b))
        .count();
    let (name, after) = rest.split_at(name_len);
    if name.is_empty() || name.bytes().next().is_some_and(|c| c.is_ascii_digit()) {
        return Vec::new();
    }
    let mut after = after.trim();
    if let Some(v) = after.strip_prefix('=') {
        after = v.trim().strip_prefix("dim3").unwrap_or(v).trim();
    }
    let Some(inner) = after
        .strip_prefix('(')
        .and_then(|a| a.strip_suffix(')'))
        .or_else(|| after.strip_prefix('{').and_then(|a| a.strip_suffix('}')))
    else {
        return Vec::new();
    };
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(inner[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(inner[from..].trim());
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Vec::new();
    }
    ["x", "y", "z"]
        .iter()
        .enumerate()
        .map(|(i, axis)| {
            (
                format!("{name}.{axis}"),
                parts.get(i).map_or("1".to_string(), |p| p.to_string()),
            )
        })
        .collect()
}

/// `static const int name = value` (the text before `;`) as (name, value).
fn constant_statement(stmt: &str) -> Option<(String, String)> {
    let (decl, value) = stmt.split_once('=')?;
    let value = value.trim();
    if value.is_empty() || value.contains(['{', '"']) || value.starts_with('=') {
        return None;
    }
    let words: Vec<&str> = decl.split_whitespace().collect();
    let (name, quals) = words.split_last()?;
    if !quals.iter().any(|w| matches!(*w, "const" | "constexpr"))
        || !name.bytes().all(crate::util::is_ident_byte)
        || name.bytes().next().is_some_and(|c| c.is_ascii_digit())
    {
        return None;
    }
    let integral = quals.iter().all(|w| {
        matches!(
            *w,
            "static"
                | "inline"
                | "const"
                | "constexpr"
                | "__device__"
                | "__constant__"
                | "unsigned"
                | "signed"
                | "int"
                | "long"
                | "short"
                | "char"
                | "size_t"
                | "std::size_t"
                | "int8_t"
                | "int16_t"
                | "int32_t"
                | "int64_t"
                | "uint8_t"
                | "uint16_t"
                | "uint32_t"
                | "uint64_t"
                | "auto"
        )
    });
    // `__constant__` memory is a runtime value (set with `cudaMemcpyToSymbol`).
    (integral && !quals.contains(&"__constant__")).then(|| (name.to_string(), value.to_string()))
}

/// The innermost `#if` (`#ifdef`, `#ifndef`) around `offset` that has an `#else` or
/// `#elif`, as (where its directive starts, which arm holds `offset`, from 0): code in
/// two arms of one `#if` is never compiled together. `None` outside any such `#if`.
pub(crate) fn preprocessor_arm(text: &str, offset: usize) -> Option<(usize, usize)> {
    // Each open `#if`: where its directive starts, and the arm reached so far.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut found: Option<(usize, usize)> = None;
    let mut depth_at_offset: Option<usize> = None;
    for (start, _, directive) in directives(text) {
        if start > offset && depth_at_offset.is_none() {
            depth_at_offset = Some(stack.len());
            // The arms around `offset`, innermost last, are those open now.
            if let Some(&(if_start, arm)) = stack.last() {
                found = Some((if_start, arm));
            }
        }
        let d = directive.trim_start();
        let word: String = d.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        match word.as_str() {
            "if" | "ifdef" | "ifndef" => stack.push((start, 0)),
            "elif" | "elifdef" | "elifndef" | "else" => {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
            }
            "endif" => {
                // The `#if` that held `offset` closes: it counts only with a second arm.
                if let (Some(depth), Some((if_start, arm))) = (depth_at_offset, stack.pop()) {
                    if stack.len() + 1 == depth && found.is_some_and(|f| f.0 == if_start) {
                        return if arm > 0 { found } else { None };
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// The directive lines of `text` outside block comments: (start of the line, the text
/// after `#`, trimmed at the start), with `\` continuations joined.
pub(crate) fn directives(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut in_comment = false;
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start();
        let was_in_comment = in_comment;
        // Track `/* … */` across lines (approximately: strings are not followed).
        let mut rest = line;
        loop {
            if in_comment {
                match rest.find("*/") {
                    Some(i) => {
                        in_comment = false;
                        rest = &rest[i + 2..];
                    }
                    None => break,
                }
            } else {
                let open = rest.find("/*");
                let line_comment = rest.find("//");
                match open {
                    Some(i) if line_comment.is_none_or(|l| i < l) => {
                        in_comment = true;
                        rest = &rest[i + 2..];
                    }
                    _ => break,
                }
            }
        }
        if was_in_comment || !trimmed.starts_with('#') {
            continue;
        }
        let mut body = trimmed[1..].trim_start().to_string();
        let mut end = start + line.trim_end_matches(['\n', '\r']).len();
        while body.trim_end().ends_with('\\') {
            let cut = body.trim_end().len() - 1;
            body.truncate(cut);
            match lines.next() {
                Some(next) => {
                    end = offset + next.trim_end_matches(['\n', '\r']).len();
                    offset += next.len();
                    body.push(' ');
                    body.push_str(next.trim_end_matches(['\n', '\r']));
                }
                None => break,
            }
        }
        out.push((start, end, body));
    }
    out
}

/// The include directives of `text`, quoted and angled, in order.
pub fn quoted_includes(text: &str) -> Vec<Include> {
    if !text.contains("include") {
        return Vec::new();
    }
    directives(text)
        .into_iter()
        .filter_map(|(start, end, d)| {
            let rest = d.strip_prefix("include")?.trim_start();
            let (rest, close, angled) = match rest.strip_prefix('"') {
                Some(r) => (r, '"', false),
                None => (rest.strip_prefix('<')?, '>', true),
            };
            let name = &rest[..rest.find(close)?];
            (!name.is_empty()).then(|| Include {
                name: name.to_string(),
                range: start..end,
                angled,
            })
        })
        .collect()
}

/// The `#define`s of `text`, in order, without comments in their bodies.
pub fn macro_definitions(text: &str) -> Vec<MacroDef> {
    macro_definitions_at(text)
        .into_iter()
        .map(|(_, m)| m)
        .collect()
}

/// [`macro_definitions`], each with the offset of its `#` line.
pub fn macro_definitions_at(text: &str) -> Vec<(usize, MacroDef)> {
    if !text.contains("define") {
        return Vec::new();
    }
    directives(text)
        .into_iter()
        .filter_map(|(start, _, d)| {
            let rest = d.strip_prefix("define")?;
            if !rest.starts_with([' ', '\t']) {
                return None;
            }
            let rest = rest.trim_start();
            let name_len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..name_len];
            if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let after = &rest[name_len..];
            let (params, body) = match after.strip_prefix('(') {
                Some(p) => {
                    let close = p.find(')')?;
                    let params: Vec<String> = p[..close]
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                    (Some(params), &p[close + 1..])
                }
                None => (None, after),
            };
            Some((
                start,
                MacroDef {
                    name: name.to_string(),
                    params,
                    body: crate::lex::strip_comments(body).trim().to_string(),
                },
            ))
        })
        .collect()
}

/// `text` with `< < <` and `> > >` (spaces or tabs between) written `<<<` and `>>>`.
pub(crate) fn squash_chevrons(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if matches!(b[i], b'<' | b'>') {
            if let Some(end) = crate::lex::chevron_triple(b, i, b[i]) {
                out.push_str(&text[copied..i]);
                out.push_str(if b[i] == b'<' { "<<<" } else { ">>>" });
                (i, copied) = (end, end);
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_constants_at_file_and_namespace_scope() {
        let text = "#pragma once\n\
            static const int tblock = 32; // fixed\n\
            namespace cfg { constexpr unsigned kWarps = 4; }\n\
            const size_t kBytes = 64 * 1024;\n\
            __constant__ int dev_n = 3;\n\
            const float scale = 0.5f;\n\
            struct S { static const int inner = 7; };\n\
            __device__ int f() { const int local = 2; return local; }\n\
            /* const int commented = 1; */\n\
            namespace lib { constexpr dim3 kBlock(128, 2); }\n\
            dim3 loose(64);\n";
        assert_eq!(
            constant_definitions(text),
            vec![
                ("tblock".to_string(), "32".to_string()),
                ("kWarps".to_string(), "4".to_string()),
                ("kBytes".to_string(), "64 * 1024".to_string()),
                ("kBlock.x".to_string(), "128".to_string()),
                ("kBlock.y".to_string(), "2".to_string()),
                ("kBlock.z".to_string(), "1".to_string()),
            ]
        );
    }

    #[test]
    fn includes_quoted_only_outside_comments() {
        let text = "#include <cuda.h>\n#include \"ptx.h\"\n  #  include \"../common/x.cuh\" // c\n/* #include \"no.h\" */\n#include_next \"n.h\"\n";
        let inc = quoted_includes(text);
        let names: Vec<&str> = inc.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["cuda.h", "ptx.h", "../common/x.cuh"]);
        assert!(inc[0].angled && !inc[1].angled);
        assert_eq!(&text[inc[1].range.clone()], "#include \"ptx.h\"");
    }

    #[test]
    fn defines_object_and_function_like() {
        let text = "#define BM 128 // rows\n#define CP_ASYNC_WAIT_GROUP(n) \\\n  asm volatile(\"cp.async.wait_group %0;\\n\" ::\"n\"(n))\n#define EMPTY\n#defineX 1\n";
        let defs = macro_definitions(text);
        assert_eq!(defs.len(), 3, "{defs:?}");
        assert_eq!(defs[0].name, "BM");
        assert_eq!(defs[0].params, None);
        assert_eq!(defs[0].body, "128");
        assert_eq!(defs[1].params.as_deref(), Some(&["n".to_string()][..]));
        assert!(defs[1]
            .body
            .starts_with("asm volatile(\"cp.async.wait_group"));
        assert_eq!(defs[2].body, "");
    }

    #[test]
    fn chevrons_with_blanks() {
        assert_eq!(squash_chevrons("k< < <g, b> > >(x)"), "k<<<g, b>>>(x)");
        assert_eq!(squash_chevrons("a < b && c > d"), "a < b && c > d");
        assert_eq!(squash_chevrons("k<<<g,b>>>()"), "k<<<g,b>>>()");
    }
}
