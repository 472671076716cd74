//! Parsing one page: frontmatter, sections, pitfalls and API fields.

use std::collections::BTreeMap;

use serde_yaml::{Mapping, Value};

use crate::diag::{Diagnostic, Severity};
use crate::model::{ApiEntry, Frontmatter, Origin, Page, PageKind, Pitfall, Section, SourceRef};

/// The outcome of parsing one file: the page (if it could be built) and any problems.
#[derive(Debug, Default)]
pub struct Parsed {
    /// The page, or `None` when it had to be skipped (or is not a wiki page at all).
    pub page: Option<Page>,
    /// Problems found.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses the text of one file.
///
/// `path` is how the file is named in messages; `file_stem` (the file name without
/// `.md`) gives skill cards their id.
pub fn parse_page(path: &str, origin: Origin, text: &str, file_stem: &str) -> Parsed {
    let mut out = Parsed::default();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match split_frontmatter(text) {
        Some((yaml, yaml_line, body, body_line)) => {
            parse_with_frontmatter(path, origin, yaml, yaml_line, body, body_line, &mut out)
        }
        None => parse_card(path, origin, text, file_stem, &mut out),
    }
    out
}

/// Splits `---\nyaml\n---\nbody`. Returns (yaml, first yaml line, body, first body line).
fn split_frontmatter(text: &str) -> Option<(&str, u32, &str, u32)> {
    let first_line_end = text.find('\n').unwrap_or(text.len());
    if text[..first_line_end].trim_end() != "---" {
        return None;
    }
    let yaml_start = (first_line_end + 1).min(text.len());
    let mut pos = yaml_start;
    let mut line_no = 2u32;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = text[pos..end].trim_end();
        if line == "---" || line == "..." {
            let body_start = (end + 1).min(text.len());
            return Some((&text[yaml_start..pos], 2, &text[body_start..], line_no + 1));
        }
        pos = end + 1;
        line_no += 1;
    }
    // An opening `---` with no closing one: body line 0 says so.
    Some((&text[yaml_start..], 2, "", 0))
}

fn parse_with_frontmatter(
    path: &str,
    origin: Origin,
    yaml: &str,
    yaml_line: u32,
    body: &str,
    body_line: u32,
    out: &mut Parsed,
) {
    if body_line == 0 {
        out.diagnostics.push(Diagnostic::new(
            path,
            1,
            1,
            Severity::Error,
            "frontmatter starts with `---` but has no closing `---` line; add one after the YAML; the page was skipped",
        ));
        return;
    }
    let value: Value = match serde_yaml::from_str(yaml) {
        Ok(v) => v,
        Err(e) => {
            let (line, col) = e
                .location()
                .map(|l| (l.line() as u32 + yaml_line - 1, l.column() as u32))
                .unwrap_or((yaml_line, 1));
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            out.diagnostics.push(Diagnostic::new(
                path,
                line,
                col.max(1),
                Severity::Error,
                format!("malformed YAML frontmatter: {msg}; the page was skipped"),
            ));
            return;
        }
    };
    let map = match value {
        Value::Mapping(m) => m,
        Value::Null => Mapping::new(),
        _ => {
            out.diagnostics.push(Diagnostic::new(
                path,
                yaml_line,
                1,
                Severity::Error,
                "frontmatter is not a YAML mapping of `key: value` lines; the page was skipped",
            ));
            return;
        }
    };
    let field_line = |key: &str| -> u32 {
        yaml.lines()
            .position(|l| l.starts_with(key) && l[key.len()..].trim_start().starts_with(':'))
            .map_or(yaml_line, |i| yaml_line + i as u32)
    };
    let mut fields = Fields {
        map,
        path,
        diags: Vec::new(),
        line_of: &field_line,
    };
    let id = fields.string("id");
    let Some(id) = id.filter(|s| !s.trim().is_empty()) else {
        out.diagnostics.append(&mut fields.diags);
        out.diagnostics.push(Diagnostic::new(
            path,
            yaml_line,
            1,
            Severity::Error,
            "page has no `id` in its frontmatter; add `id: <kind>-<topic>`; the page was skipped",
        ));
        return;
    };
    let id = id.trim().to_string();
    let kind = match fields.string("type") {
        Some(t) => {
            match PageKind::parse(&t) {
                Some(k) => k,
                None => {
                    fields.diags.push(Diagnostic::new(
                    path,
                    field_line("type"),
                    1,
                    Severity::Warning,
                    format!("unknown `type: {t}` (expected skill, pitfall or api); treated as a skill"),
                ));
                    PageKind::Skill
                }
            }
        }
        None => kind_from_id(&id),
    };
    let sections = parse_sections(body, body_line);
    let (body, hidden_lines) = hide(body, body_line);
    let body = body.as_str();
    let title = fields
        .string("title")
        .or_else(|| first_heading(body))
        .unwrap_or_else(|| id.clone());
    let mut fm = Frontmatter {
        status: fields.string("status"),
        vendor: fields.string("vendor"),
        evidence_level: fields.string("evidence_level"),
        confidence: fields.string("confidence"),
        measured_on: fields.string("measured_on"),
        requires_sm: fields.string("requires_sm"),
        parent_skill: fields.string("parent_skill"),
        tags: fields.list("tags"),
        architectures: fields.list("architectures"),
        related_apis: fields.list("related_apis"),
        related_skills: fields.list("related_skills"),
        source_refs: fields.source_refs(),
        artifact_dir: fields.string("artifact_dir"),
        extra: BTreeMap::new(),
        key_lines: yaml
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.starts_with([' ', '\t', '-', '#']))
            .filter_map(|(i, l)| {
                l.split_once(':')
                    .map(|(k, _)| (k.trim().to_string(), yaml_line + i as u32))
            })
            .collect(),
    };
    let api = if kind == PageKind::Api {
        Some(ApiEntry {
            symbols: fields.list("symbols"),
            signatures: fields.list("signatures"),
            header: fields.string("header"),
            overload_headers: fields.string_map("overload_headers"),
            symbol_requires_sm: fields.string_map("symbol_requires_sm"),
            ptx: fields.list("ptx"),
            sass: fields.list("sass"),
            related_pitfalls: fields.list("related_pitfalls"),
        })
    } else {
        None
    };
    for key in ["id", "type", "title"] {
        fields.map.remove(key);
    }
    for (k, v) in std::mem::take(&mut fields.map) {
        let key = match k {
            Value::String(s) => s,
            other => yaml_text(&other),
        };
        fm.extra.insert(key, yaml_text(&v));
    }
    out.diagnostics.append(&mut fields.diags);
    let pitfalls = if kind == PageKind::Pitfall {
        parse_pitfalls(&sections)
    } else {
        Vec::new()
    };
    out.page = Some(Page {
        id,
        kind,
        title,
        path: path.to_string(),
        origin,
        frontmatter: fm,
        body: body.to_string(),
        body_line,
        hidden_lines,
        sections,
        pitfalls,
        api,
    });
}

fn kind_from_id(id: &str) -> PageKind {
    if id.starts_with("pitfall") {
        PageKind::Pitfall
    } else if id.starts_with("api") {
        PageKind::Api
    } else {
        PageKind::Skill
    }
}

fn yaml_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => String::new(),
        other => serde_yaml::to_string(other)
            .unwrap_or_default()
            .trim_end()
            .to_string(),
    }
}

struct Fields<'a> {
    map: Mapping,
    path: &'a str,
    diags: Vec<Diagnostic>,
    line_of: &'a dyn Fn(&str) -> u32,
}

impl Fields<'_> {
    fn take(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key)
    }

    fn string(&mut self, key: &str) -> Option<String> {
        match self.take(key)? {
            Value::Null => None,
            Value::String(s) => Some(s),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            other => {
                self.diags.push(Diagnostic::new(
                    self.path,
                    (self.line_of)(key),
                    1,
                    Severity::Warning,
                    format!(
                        "`{key}` should be a single value, found a list or map; it was ignored"
                    ),
                ));
                let _ = other;
                None
            }
        }
    }

    fn list(&mut self, key: &str) -> Vec<String> {
        match self.take(key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Sequence(items)) => items
                .iter()
                .filter(|v| !v.is_null())
                .map(yaml_text)
                .collect(),
            Some(Value::Mapping(_)) => {
                self.diags.push(Diagnostic::new(
                    self.path,
                    (self.line_of)(key),
                    1,
                    Severity::Warning,
                    format!("`{key}` should be a list, found a map; it was ignored"),
                ));
                Vec::new()
            }
            Some(v) => vec![yaml_text(&v)],
        }
    }

    fn string_map(&mut self, key: &str) -> BTreeMap<String, String> {
        match self.take(key) {
            Some(Value::Mapping(m)) => m
                .iter()
                .map(|(k, v)| (yaml_text(k), yaml_text(v)))
                .collect(),
            None | Some(Value::Null) => BTreeMap::new(),
            Some(_) => {
                self.diags.push(Diagnostic::new(
                    self.path,
                    (self.line_of)(key),
                    1,
                    Severity::Warning,
                    format!("`{key}` should be a map of `name: value`; it was ignored"),
                ));
                BTreeMap::new()
            }
        }
    }

    fn source_refs(&mut self) -> Vec<SourceRef> {
        let Some(Value::Sequence(items)) = self.take("source_refs") else {
            return Vec::new();
        };
        items
            .iter()
            .map(|item| match item {
                Value::Mapping(m) => {
                    let get = |k: &str| m.get(k).map(yaml_text).unwrap_or_default();
                    SourceRef {
                        source_id: get("source_id"),
                        path: get("path"),
                        anchor: get("anchor"),
                    }
                }
                other => SourceRef {
                    source_id: yaml_text(other),
                    ..SourceRef::default()
                },
            })
            .collect()
    }
}

fn parse_card(path: &str, origin: Origin, text: &str, file_stem: &str, out: &mut Parsed) {
    let sections = parse_sections(text, 1);
    let is_card = sections.iter().any(|s| s.anchor == "purpose")
        || text.lines().any(|l| l.trim_start().starts_with("# Skill:"));
    if !is_card {
        // A README or index file in a wiki checkout: not a page, nothing to report.
        return;
    }
    let title = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| {
            let l = l.trim_start_matches('#').trim();
            l.strip_prefix("Skill:").unwrap_or(l).trim().to_string()
        })
        .unwrap_or_else(|| file_stem.to_string());
    let stem = file_stem.trim_start_matches("skill-");
    let (body, hidden_lines) = hide(text, 1);
    out.page = Some(Page {
        id: format!("skill-{stem}"),
        kind: PageKind::SkillCard,
        title,
        path: path.to_string(),
        origin,
        frontmatter: Frontmatter::default(),
        body,
        body_line: 1,
        hidden_lines,
        sections,
        pitfalls: Vec::new(),
        api: None,
    });
}

/// `body` without the hidden lines of its cuda blocks, and those lines with their line in
/// the file.
fn hide(body: &str, body_line: u32) -> (String, Vec<(u32, String)>) {
    let (shown, hidden) = crate::blocks::split_hidden(body);
    let hidden = hidden
        .into_iter()
        .map(|(i, l)| (body_line + i as u32, l))
        .collect();
    (shown, hidden)
}

fn first_heading(body: &str) -> Option<String> {
    body.lines()
        .find(|l| l.starts_with("# "))
        .map(|l| l[2..].trim().to_string())
}

/// Splits a body into its level-2 and level-3 sections (code blocks are not headings).
pub fn parse_sections(body: &str, body_line: u32) -> Vec<Section> {
    struct Head {
        level: u8,
        title: String,
        anchor: String,
        line: u32,
        start: usize,
        end_of_line: usize,
    }
    let mut heads: Vec<Head> = Vec::new();
    let mut in_code = false;
    let mut offset = 0;
    for (i, raw) in body.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
        } else if !in_code {
            let level = line.bytes().take_while(|&b| b == b'#').count();
            if (2..=3).contains(&level) && line[level..].starts_with(' ') {
                let text = line[level..].trim().trim_end_matches('#').trim();
                let (anchor, title) = heading_anchor(text);
                heads.push(Head {
                    level: level as u8,
                    title,
                    anchor,
                    line: body_line + i as u32,
                    start: offset,
                    end_of_line: offset + raw.len(),
                });
            }
        }
        offset += raw.len();
    }
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let mut sections = Vec::with_capacity(heads.len());
    for (i, h) in heads.iter().enumerate() {
        let end = heads[i + 1..]
            .iter()
            .find(|n| n.level <= h.level)
            .map_or(body.len(), |n| n.start);
        let _ = h.start;
        let count = seen.entry(h.anchor.clone()).or_insert(0);
        let anchor = if *count == 0 {
            h.anchor.clone()
        } else {
            format!("{}-{}", h.anchor, count)
        };
        *count += 1;
        sections.push(Section {
            level: h.level,
            title: h.title.clone(),
            anchor,
            line: h.line,
            content: crate::blocks::strip_hidden(body[h.end_of_line.min(end)..end].trim())
                .trim()
                .to_string(),
        });
    }
    sections
}

/// `P1: Title`, `Pitfall 1: Title`, `S1. Title` give (`P1`/`S1`, `Title`); anything else
/// gives (slug, text).
pub fn heading_anchor(text: &str) -> (String, String) {
    let strip_sep = |s: &str| {
        s.trim_start_matches([':', '.', ')', ' ', '-', '—', '–'])
            .trim()
            .to_string()
    };
    for (prefix, letter) in [("Pitfall ", 'P'), ("Sub-skill ", 'S'), ("Skill ", 'S')] {
        if let Some(rest) = text.strip_prefix(prefix) {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() {
                return (
                    format!("{letter}{digits}"),
                    strip_sep(&rest[digits.len()..]),
                );
            }
        }
    }
    let mut chars = text.chars();
    if let Some(c @ ('P' | 'S')) = chars.next() {
        let rest = &text[1..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let after = &rest[digits.len()..];
        if !digits.is_empty()
            && (after.is_empty() || after.starts_with([':', '.', ')', ' ', '-', '—', '–']))
        {
            return (format!("{c}{digits}"), strip_sep(after));
        }
    }
    (slug(text), text.to_string())
}

/// GitHub-style heading slug: lowercase, alphanumerics kept, spaces and dashes to `-`.
pub fn slug(text: &str) -> String {
    let mut s = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            s.extend(c.to_lowercase());
        } else if (c == ' ' || c == '-' || c == '_') && !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_matches('-').to_string()
}

#[derive(Clone, Copy, PartialEq)]
enum Part {
    Symptom,
    Cause,
    Example,
    Fix,
    Detection,
}

fn label_of(line: &str) -> Option<(Part, usize)> {
    let t = line.trim_start();
    let rest = t.strip_prefix("**")?;
    let close = rest.find("**")?;
    let label = rest[..close].trim().trim_end_matches([':', '.']).trim();
    let lower = label.to_ascii_lowercase();
    let part = match lower.as_str() {
        "symptom" | "symptoms" => Part::Symptom,
        "cause" | "root cause" | "causes" | "why" => Part::Cause,
        "example" | "examples" => Part::Example,
        "fix" | "fixes" | "solution" | "remedy" => Part::Fix,
        "detection" | "detect" | "how to detect" => Part::Detection,
        _ => return None,
    };
    let after = &rest[close + 2..];
    let after = after.trim_start_matches([':', '.']).trim_start();
    Some((part, line.len() - after.len()))
}

fn parse_pitfalls(sections: &[Section]) -> Vec<Pitfall> {
    sections
        .iter()
        .filter(|s| s.level == 2 && is_pitfall_anchor(&s.anchor))
        .map(|s| {
            let mut p = Pitfall {
                anchor: s.anchor.clone(),
                title: s.title.clone(),
                line: s.line,
                ..Pitfall::default()
            };
            let mut current: Option<Part> = None;
            let mut buf = String::new();
            let flush = |p: &mut Pitfall, part: Option<Part>, buf: &mut String| {
                let text = buf.trim().to_string();
                buf.clear();
                let slot = match part {
                    Some(Part::Symptom) => &mut p.symptom,
                    Some(Part::Cause) => &mut p.cause,
                    Some(Part::Example) => &mut p.example,
                    Some(Part::Fix) => &mut p.fix,
                    Some(Part::Detection) => &mut p.detection,
                    None => {
                        if !text.is_empty() {
                            if !p.other.is_empty() {
                                p.other.push_str("\n\n");
                            }
                            p.other.push_str(&text);
                        }
                        return;
                    }
                };
                match slot {
                    Some(existing) => {
                        existing.push_str("\n\n");
                        existing.push_str(&text);
                    }
                    None => *slot = Some(text),
                }
            };
            let mut in_code = false;
            for line in s.content.lines() {
                if line.trim_start().starts_with("```") {
                    in_code = !in_code;
                }
                if !in_code {
                    if let Some((part, start)) = label_of(line) {
                        flush(&mut p, current, &mut buf);
                        current = Some(part);
                        buf.push_str(&line[start..]);
                        buf.push('\n');
                        continue;
                    }
                }
                buf.push_str(line);
                buf.push('\n');
            }
            flush(&mut p, current, &mut buf);
            p
        })
        .collect()
}

/// `P` followed by digits.
pub fn is_pitfall_anchor(anchor: &str) -> bool {
    anchor.len() > 1 && anchor.starts_with('P') && anchor[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_anchors() {
        assert_eq!(heading_anchor("P1: Foo bar").0, "P1");
        assert_eq!(heading_anchor("P12: Foo").1, "Foo");
        assert_eq!(heading_anchor("Pitfall 3: Foo").0, "P3");
        assert_eq!(heading_anchor("S2. Packed math").0, "S2");
        assert_eq!(heading_anchor("When NOT to use").0, "when-not-to-use");
        assert_eq!(
            heading_anchor("Precision (annotation)").0,
            "precision-annotation"
        );
        assert_eq!(heading_anchor("PTX notes").0, "ptx-notes");
    }
}
