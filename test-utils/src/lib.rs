//! Fixture parsing for kernaut's tests (a dev-dependency only).
//!
//! A fixture is a small CUDA snippet with markers:
//! - `$0` marks the cursor; two `$0` mark a range.
//! - `//- /file.cu arch:sm_80 block:32x8` starts a file and gives its metadata, so one
//!   fixture can hold several files. Without a header the fixture is one file, `/main.cu`.
//! - `// ^^^ warning: message` lines are expected annotations: the carets mark columns on
//!   the previous line that is not an annotation. They are removed from the text.
//!
//! ```
//! use kernaut_test_utils::Fixture;
//!
//! let f = Fixture::parse(
//!     "//- /k.cu arch:sm_80\n__syncthreads$0();\n// ^^^^^^^^^^^ warning: barrier\n",
//! );
//! let file = &f.files[0];
//! assert_eq!(file.path, "/k.cu");
//! assert_eq!(file.meta["arch"], "sm_80");
//! assert_eq!(file.text, "__syncthreads();\n");
//! assert_eq!(file.cursor, Some(13));
//! assert_eq!(file.annotations[0].range, 3..14);
//! assert_eq!(file.annotations[0].severity, "warning");
//! ```
#![deny(missing_docs)]

pub mod gen;
pub mod lsp;

use std::collections::BTreeMap;
use std::ops::Range;

/// The cursor marker.
pub const CURSOR_MARKER: &str = "$0";

/// A parsed fixture: one or more files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fixture {
    /// The files, in the order written.
    pub files: Vec<FixtureFile>,
}

/// One file of a fixture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FixtureFile {
    /// The path from the `//-` header (`/main.cu` when there is none).
    pub path: String,
    /// The `key:value` pairs from the header (`arch` → `sm_80`, `block` → `32x8`).
    pub meta: BTreeMap<String, String>,
    /// The text with markers and annotation lines removed.
    pub text: String,
    /// The cursor offset: the single `$0`, or the start of a `$0 … $0` range.
    pub cursor: Option<usize>,
    /// The range between two `$0` markers.
    pub range: Option<Range<usize>>,
    /// The expected annotations, in the order written.
    pub annotations: Vec<Annotation>,
}

/// An expected annotation from a `// ^^^ severity: message` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// The byte range the carets mark in the cleaned text.
    pub range: Range<usize>,
    /// The word before the first `:` (`warning`, `error`, `hint`), or empty when absent.
    pub severity: String,
    /// The message after the severity.
    pub message: String,
}

impl FixtureFile {
    /// The block size from `block:32x8` metadata, as x, y, z (missing dimensions are 1).
    pub fn block(&self) -> Option<[u32; 3]> {
        let raw = self.meta.get("block")?;
        let mut dims = [1u32; 3];
        for (i, part) in raw.split('x').enumerate() {
            *dims.get_mut(i)? = part.trim().parse().ok()?;
        }
        Some(dims)
    }
}

impl Fixture {
    /// Parses a fixture. Common leading indentation is removed first, so fixtures can be
    /// indented raw strings.
    pub fn parse(text: &str) -> Fixture {
        let text = trim_indent(text);
        let mut files: Vec<(String, BTreeMap<String, String>, String)> = Vec::new();
        for line in text.split_inclusive('\n') {
            if let Some(header) = line.trim_end().strip_prefix("//- ") {
                let mut parts = header.split_whitespace();
                let path = parts.next().unwrap_or("/main.cu").to_string();
                let meta = parts
                    .filter_map(|p| p.split_once(':'))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                files.push((path, meta, String::new()));
                continue;
            }
            if files.is_empty() {
                files.push(("/main.cu".into(), BTreeMap::new(), String::new()));
            }
            if let Some(last) = files.last_mut() {
                last.2.push_str(line);
            }
        }
        Fixture {
            files: files
                .into_iter()
                .map(|(path, meta, body)| parse_file(path, meta, &body))
                .collect(),
        }
    }

    /// The only file. Panics when the fixture has several (a test-writing mistake).
    pub fn single(&self) -> &FixtureFile {
        assert_eq!(
            self.files.len(),
            1,
            "fixture has {} files",
            self.files.len()
        );
        &self.files[0]
    }

    /// The file at `path`.
    pub fn file(&self, path: &str) -> Option<&FixtureFile> {
        self.files.iter().find(|f| f.path == path)
    }
}

/// Removes the `$0` markers from `text`: the cleaned text and the marker offsets.
pub fn extract_markers(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut offsets = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(CURSOR_MARKER) {
        out.push_str(&rest[..i]);
        offsets.push(out.len());
        rest = &rest[i + CURSOR_MARKER.len()..];
    }
    out.push_str(rest);
    (out, offsets)
}

/// Removes the common leading indentation of the non-blank lines, and a leading newline.
pub fn trim_indent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    text.split_inclusive('\n')
        .map(|l| {
            if l.len() >= indent && l[..indent].trim().is_empty() {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect()
}

/// An annotation line: `// ^^^ message` (spaces allowed before `//` and the carets).
fn annotation_line(line: &str) -> Option<(usize, usize, &str)> {
    let body = line.trim_start().strip_prefix("//")?;
    let caret_start_in_body = body.find('^')?;
    if !body[..caret_start_in_body].trim().is_empty() {
        return None;
    }
    let offset = line.len() - body.len();
    let start = offset + caret_start_in_body;
    let len = body[caret_start_in_body..]
        .chars()
        .take_while(|c| *c == '^')
        .count();
    let message = line[start + len..].trim();
    Some((start, start + len, message))
}

fn parse_file(path: String, meta: BTreeMap<String, String>, body: &str) -> FixtureFile {
    let mut cleaned = String::with_capacity(body.len());
    let mut markers = Vec::new();
    let mut annotations = Vec::new();
    let mut prev_line_start: Option<usize> = None;
    for line in body.split_inclusive('\n') {
        if let Some((s, e, message)) = annotation_line(line.trim_end_matches('\n')) {
            if let Some(base) = prev_line_start {
                let (severity, message) = match message.split_once(':') {
                    Some((sev, msg))
                        if !sev.is_empty() && sev.chars().all(|c| c.is_ascii_alphabetic()) =>
                    {
                        (sev.to_string(), msg.trim().to_string())
                    }
                    _ => (String::new(), message.to_string()),
                };
                annotations.push(Annotation {
                    range: base + s..base + e,
                    severity,
                    message,
                });
                continue;
            }
        }
        let (clean_line, offs) = extract_markers(line);
        let start = cleaned.len();
        markers.extend(offs.into_iter().map(|o| start + o));
        cleaned.push_str(&clean_line);
        prev_line_start = Some(start);
    }
    let (cursor, range) = match markers.as_slice() {
        [] => (None, None),
        [a] => (Some(*a), None),
        [a, b, ..] => (Some(*a), Some(*a..*b)),
    };
    FixtureFile {
        path,
        meta,
        text: cleaned,
        cursor,
        range,
        annotations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_cursor() {
        let f = Fixture::parse("int a$0 = 1;");
        let file = f.single();
        assert_eq!(file.text, "int a = 1;");
        assert_eq!(file.cursor, Some(5));
        assert_eq!(file.range, None);
        assert_eq!(file.path, "/main.cu");
    }

    #[test]
    fn range_cursor() {
        let f = Fixture::parse("int $0abc$0 = 1;");
        let file = f.single();
        assert_eq!(file.text, "int abc = 1;");
        assert_eq!(file.range, Some(4..7));
        assert_eq!(file.cursor, Some(4));
    }

    #[test]
    fn multi_file_headers() {
        let f = Fixture::parse(
            r#"
            //- /a.cu arch:sm_80 block:32x8
            __global__ void k() {}
            //- /b.cuh
            #define N 4
            "#,
        );
        assert_eq!(f.files.len(), 2);
        let a = f.file("/a.cu").unwrap();
        assert_eq!(a.meta["arch"], "sm_80");
        assert_eq!(a.block(), Some([32, 8, 1]));
        assert_eq!(a.text, "__global__ void k() {}\n");
        assert_eq!(f.files[1].path, "/b.cuh");
        assert_eq!(f.files[1].text, "#define N 4\n");
        assert!(f.files[1].meta.is_empty());
    }

    #[test]
    fn annotations_mark_previous_line() {
        let f = Fixture::parse(
            r#"
            __global__ void k() {
                tile[threadIdx.x][0] = 1;
             // ^^^^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict [bank-conflict]
                // ^^^^ hint: second
            }
            "#,
        );
        let file = f.single();
        assert_eq!(
            file.text,
            "__global__ void k() {\n    tile[threadIdx.x][0] = 1;\n}\n"
        );
        assert_eq!(file.annotations.len(), 2);
        let a = &file.annotations[0];
        assert_eq!(&file.text[a.range.clone()], "tile[threadIdx.x][0]");
        assert_eq!(a.severity, "warning");
        assert_eq!(a.message, "32-way bank conflict [bank-conflict]");
        let b = &file.annotations[1];
        assert_eq!(&file.text[b.range.clone()], "e[th");
        assert_eq!(b.severity, "hint");
    }

    #[test]
    fn annotation_without_severity_and_markers_on_same_file() {
        let f = Fixture::parse("a$0b\n//^^ plain note\n");
        let file = f.single();
        assert_eq!(file.text, "ab\n");
        assert_eq!(file.cursor, Some(1));
        assert_eq!(file.annotations[0].range, 2..4);
        assert_eq!(file.annotations[0].severity, "");
        assert_eq!(file.annotations[0].message, "plain note");
    }

    #[test]
    fn ordinary_comments_are_kept() {
        let f = Fixture::parse("int a; // not ^^ an annotation\n// just a comment\n");
        let file = f.single();
        assert!(file.annotations.is_empty());
        assert_eq!(
            file.text,
            "int a; // not ^^ an annotation\n// just a comment\n"
        );
    }

    #[test]
    fn trim_indent_keeps_relative_indentation() {
        assert_eq!(trim_indent("\n    a\n      b\n"), "a\n  b\n");
    }
}
