//! nvcc's errors and warnings as (file, line, column, severity, message).
//!
//! Four shapes reach us, all captured from nvcc 13.5 in `tests/data/`:
//!
//! ```text
//! errors.cu(3): error: identifier "undefined_name" is undefined        (the front end)
//!       out[i] = undefined_name * 2.0f;
//!                ^
//! include_missing.cu:1:10: fatal error: does_not_exist.cuh: No such file  (the host preprocessor)
//! ptxas /tmp/tmpxft_…_badasm.ptx, line 26; error   : Unknown symbol '%x'  (ptxas, on PTX)
//! nvcc fatal   : Failed to preprocess host compiler properties.           (a tool, no place)
//! ```

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How bad a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Severity {
    /// The compilation failed (`error`, `fatal error`, `catastrophic error`, `fatal`).
    Error,
    /// `warning`.
    Warning,
    /// `remark`, `note`, or a line of the toolkit's output kernaut could not place.
    Note,
}

/// One diagnostic from the toolkit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompilerMessage {
    /// The file the message is about, as the compiler printed it. For a compile
    /// through [`crate::Toolkit::compile`] this is the request's `source_path` for
    /// the main file (a `#line` directive maps the temporary copy back), or a
    /// header's path. `None` for messages without a place (ptxas on its temporary
    /// PTX, `nvcc fatal`).
    pub file: Option<PathBuf>,
    /// 1-based line.
    pub line: Option<u32>,
    /// 1-based column in characters, when the compiler showed one (a caret or
    /// `file:line:col`).
    pub column: Option<u32>,
    /// Error, warning or note.
    pub severity: Severity,
    /// The diagnostic number when printed (`177-D` for `warning #177-D`).
    pub code: Option<String>,
    /// The message; context lines (`detected during instantiation of …`) follow
    /// on their own lines.
    pub message: String,
    /// Which tool spoke: `nvcc` (the front end and the driver), `ptxas`, or the
    /// host compiler (`host`).
    pub tool: String,
}

/// Parses nvcc's stderr (or stdout and stderr together). `ptxas info` lines are
/// resources, not messages, and are skipped, as are summaries such as
/// `2 errors detected in the compilation of …`.
pub fn parse_nvcc_messages(text: &str) -> Vec<CompilerMessage> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if let Some(mut msg) = parse_edg_header(line) {
            // The block runs to the next blank line: an echo of the source line,
            // a caret under the column, and context lines.
            let start = i;
            while i < lines.len() && !lines[i].trim().is_empty() && !starts_new_message(lines[i]) {
                i += 1;
            }
            let block = &lines[start..i];
            let caret = block.iter().position(|l| is_caret_line(l));
            for (k, l) in block.iter().enumerate() {
                match caret {
                    Some(c) if k == c => {
                        // The echo is indented by two spaces more than the source.
                        let col = l.find('^').unwrap_or(0);
                        msg.column = Some(col.saturating_sub(2) as u32 + 1);
                    }
                    Some(c) if k + 1 == c => {}
                    _ => {
                        msg.message.push('\n');
                        msg.message.push_str(l.trim());
                    }
                }
            }
            out.push(msg);
        } else if let Some(msg) = parse_gcc_line(line) {
            out.push(msg);
            // gcc follows with `    1 | source` and `      |   ^~~~` lines.
            while i < lines.len() && is_gcc_context(lines[i]) {
                i += 1;
            }
        } else if let Some(msg) = parse_tool_line(line) {
            out.push(msg);
        }
    }
    out
}

fn starts_new_message(line: &str) -> bool {
    parse_edg_header(line).is_some() || parse_tool_line(line).is_some()
}

fn is_caret_line(line: &str) -> bool {
    let t = line.trim();
    t == "^"
}

fn is_gcc_context(line: &str) -> bool {
    let t = line.trim_start();
    match t.split_once('|') {
        Some((before, _)) => before.trim().chars().all(|c| c.is_ascii_digit()),
        None => false,
    }
}

fn severity_of(word: &str) -> Option<Severity> {
    match word {
        "error" | "fatal error" | "catastrophic error" | "internal error" | "fatal" => {
            Some(Severity::Error)
        }
        "warning" => Some(Severity::Warning),
        "remark" | "note" => Some(Severity::Note),
        _ => None,
    }
}

/// `file.cu(12): error #20-D: message` (the EDG front end inside nvcc).
fn parse_edg_header(line: &str) -> Option<CompilerMessage> {
    let (place, rest) = line.split_once("): ")?;
    let (file, line_no) = place.rsplit_once('(')?;
    let line_no: u32 = line_no.parse().ok()?;
    if file.is_empty() {
        return None;
    }
    let (head, message) = rest.split_once(": ")?;
    let (word, code) = match head.split_once(" #") {
        Some((w, c)) => (w, Some(c.to_string())),
        None => (head, None),
    };
    let severity = severity_of(word)?;
    Some(CompilerMessage {
        file: Some(PathBuf::from(file)),
        line: Some(line_no),
        column: None,
        severity,
        code,
        message: message.trim().to_string(),
        tool: "nvcc".to_string(),
    })
}

/// `file.cu:1:10: fatal error: message` (the host compiler, which preprocesses).
fn parse_gcc_line(line: &str) -> Option<CompilerMessage> {
    // Split at the severity word so that a path with colons (Windows) survives.
    for word in ["fatal error", "error", "warning", "note"] {
        let needle = format!(": {word}: ");
        let Some(at) = line.find(&needle) else {
            continue;
        };
        let place = &line[..at];
        let message = &line[at + needle.len()..];
        let mut parts = place.rsplitn(3, ':');
        let last = parts.next()?;
        let middle = parts.next();
        let first = parts.next();
        let (file, line_no, col) = match (first, middle) {
            (Some(f), Some(l)) if l.parse::<u32>().is_ok() => {
                (f, l.parse::<u32>().ok(), last.parse::<u32>().ok())
            }
            (_, Some(f)) if last.parse::<u32>().is_ok() => {
                let f = match first {
                    Some(head) => &place[..head.len() + 1 + f.len()],
                    None => f,
                };
                (f, last.parse::<u32>().ok(), None)
            }
            _ => continue,
        };
        line_no?;
        return Some(CompilerMessage {
            file: Some(PathBuf::from(file)),
            line: line_no,
            column: col,
            severity: severity_of(word)?,
            code: None,
            message: message.trim().to_string(),
            tool: "host".to_string(),
        });
    }
    None
}

/// `ptxas /tmp/x.ptx, line 26; error   : message`, `nvcc fatal   : message`,
/// `nvcc warning : message`, `ptxas warning : message`.
fn parse_tool_line(line: &str) -> Option<CompilerMessage> {
    let (head, message) = line.split_once(':')?;
    let mut words = head.split_whitespace();
    let tool = words.next()?;
    if !matches!(
        tool,
        "nvcc" | "ptxas" | "nvlink" | "fatbinary" | "cicc" | "cudafe++"
    ) {
        return None;
    }
    let rest: Vec<&str> = words.collect();
    let word = *rest.last()?;
    if word == "info" {
        return None;
    }
    let severity = severity_of(word)?;
    // `ptxas /tmp/x.ptx, line 26; error`: the place is in the temporary PTX.
    let ptx_line = rest
        .iter()
        .position(|w| *w == "line")
        .and_then(|k| rest.get(k + 1))
        .and_then(|n| n.trim_end_matches(';').parse::<u32>().ok());
    let mut message = demangle_words(message.trim());
    if let Some(n) = ptx_line {
        message.push_str(&format!(" (PTX line {n})"));
    }
    Some(CompilerMessage {
        file: None,
        line: None,
        column: None,
        severity,
        code: None,
        message,
        tool: tool.to_string(),
    })
}

/// Replaces mangled names in a message (`entry _Z6spillsPfPKfi is`) by their
/// demangled form (`entry spills(float*, float const*, int) is`).
fn demangle_words(message: &str) -> String {
    let mut out = message.to_string();
    for word in message.split_whitespace() {
        let name = word.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        if name.starts_with("_Z") {
            let readable = crate::demangle::demangle(name).full;
            if readable != name {
                out = out.replace(name, &readable);
            }
        }
    }
    out
}
