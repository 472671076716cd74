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

/// The directive lines of `text` outside block comments: (start of the line, the text
/// after `#`, trimmed at the start), with `\` continuations joined.
fn directives(text: &str) -> Vec<(usize, usize, String)> {
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
    if !text.contains("define") {
        return Vec::new();
    }
    directives(text)
        .into_iter()
        .filter_map(|(_, _, d)| {
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
            Some(MacroDef {
                name: name.to_string(),
                params,
                body: crate::lex::strip_comments(body).trim().to_string(),
            })
        })
        .collect()
}

/// `text` with `< < <` and `> > >` (spaces or tabs between) written `<<<` and `>>>`.
pub(crate) fn squash_chevrons(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        out.push(c);
        if c != '<' && c != '>' {
            continue;
        }
        // Three of `c` with only blanks between: drop the blanks.
        let rest = &text[i + 1..];
        let mut count = 1;
        let mut j = 0;
        let bytes = rest.as_bytes();
        let mut k = 0;
        while k < bytes.len() && count < 3 {
            match bytes[k] {
                b' ' | b'\t' => k += 1,
                b if b == c as u8 => {
                    count += 1;
                    k += 1;
                    j = k;
                }
                _ => break,
            }
        }
        if count == 3 {
            out.push(c);
            out.push(c);
            for _ in 0..rest[..j].chars().count() {
                chars.next();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
