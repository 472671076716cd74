//! The typed page model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What kind of page this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PageKind {
    /// A technique (`type: skill`).
    Skill,
    /// A numbered list of failure modes (`type: pitfall`).
    Pitfall,
    /// Reference entries for intrinsics, library calls and PTX (`type: api`).
    Api,
    /// An agent-style checklist without frontmatter.
    SkillCard,
}

impl PageKind {
    /// The name used in frontmatter and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            PageKind::Skill => "skill",
            PageKind::Pitfall => "pitfall",
            PageKind::Api => "api",
            PageKind::SkillCard => "skill-card",
        }
    }

    /// Parses a kind as written in `type:` or on the command line.
    pub fn parse(s: &str) -> Option<PageKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "skill" | "skills" => Some(PageKind::Skill),
            "pitfall" | "pitfalls" => Some(PageKind::Pitfall),
            "api" | "apis" => Some(PageKind::Api),
            "skill-card" | "card" | "skill_card" => Some(PageKind::SkillCard),
            _ => None,
        }
    }
}

/// Where a page came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Origin {
    /// Embedded in the binary from `wiki/pages/`.
    Builtin,
    /// Read from a user's wiki folder.
    External,
}

/// One `{source_id, path, anchor}` entry of `source_refs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRef {
    /// The source's id, e.g. `cuda-programming-guide`.
    pub source_id: String,
    /// A path or URL inside the source.
    pub path: String,
    /// An anchor inside `path`.
    pub anchor: String,
}

/// The known frontmatter fields, typed. Unknown fields land in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Frontmatter {
    /// `status`: draft or verified.
    pub status: Option<String>,
    /// `vendor`.
    pub vendor: Option<String>,
    /// `evidence_level`: spec, measured or inferred.
    pub evidence_level: Option<String>,
    /// `confidence`.
    pub confidence: Option<String>,
    /// `measured_on`.
    pub measured_on: Option<String>,
    /// `requires_sm`, e.g. `>=8.0`.
    pub requires_sm: Option<String>,
    /// `parent_skill` (short name or id).
    pub parent_skill: Option<String>,
    /// `tags`.
    pub tags: Vec<String>,
    /// `architectures`.
    pub architectures: Vec<String>,
    /// `related_apis`: names as written in code or PTX.
    pub related_apis: Vec<String>,
    /// `related_skills`: short names resolving to `skill-<name>`.
    pub related_skills: Vec<String>,
    /// `source_refs`.
    pub source_refs: Vec<SourceRef>,
    /// `artifact_dir`.
    pub artifact_dir: Option<String>,
    /// Every other field, kept as YAML text.
    pub extra: BTreeMap<String, String>,
    /// 1-based line of each top-level key, for messages.
    pub key_lines: BTreeMap<String, u32>,
}

impl Frontmatter {
    /// The line of a top-level key (1 when unknown).
    pub fn line_of(&self, key: &str) -> u32 {
        self.key_lines.get(key).copied().unwrap_or(1)
    }
}

/// A heading and the text under it (up to the next heading of the same or higher level).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// Heading level (2 for `##`).
    pub level: u8,
    /// Heading text without the anchor prefix (`P1: Foo` gives `Foo`).
    pub title: String,
    /// `P1`, `S2`, or the heading's slug.
    pub anchor: String,
    /// 1-based line of the heading in the file.
    pub line: u32,
    /// The Markdown under the heading, sub-headings included.
    pub content: String,
}

/// One pitfall of a pitfall page, split into its labelled parts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pitfall {
    /// `P1`, `P2`, …
    pub anchor: String,
    /// The pitfall's title.
    pub title: String,
    /// 1-based line of its heading.
    pub line: u32,
    /// What the user sees.
    pub symptom: Option<String>,
    /// Why it happens (`Cause` or `Root cause`).
    pub cause: Option<String>,
    /// The example, usually a code block.
    pub example: Option<String>,
    /// What to do.
    pub fix: Option<String>,
    /// How to detect it.
    pub detection: Option<String>,
    /// Text under the heading that carries no known label.
    pub other: String,
}

/// The API extension of `type: api` pages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiEntry {
    /// Every name the family answers to.
    pub symbols: Vec<String>,
    /// C++ declarations or PTX syntax, one per overload.
    pub signatures: Vec<String>,
    /// The header (`cuda_fp16.h`), `built-in` or `ptx`.
    pub header: Option<String>,
    /// The header of the overloads that take a type, where it is not `header`: a type as
    /// written in `signatures` (`__nv_bfloat162`) → its header (`cuda_bf16.h`).
    pub overload_headers: BTreeMap<String, String>,
    /// Per-symbol minimum architecture where it differs from the page's.
    pub symbol_requires_sm: BTreeMap<String, String>,
    /// PTX instructions it lowers to.
    pub ptx: Vec<String>,
    /// SASS instructions it lowers to.
    pub sass: Vec<String>,
    /// Anchored pitfall ids.
    pub related_pitfalls: Vec<String>,
}

/// A parsed wiki page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// The unique id (`pitfall-async-copy`).
    pub id: String,
    /// The kind of page.
    pub kind: PageKind,
    /// The title.
    pub title: String,
    /// The file it came from, as shown in messages (`builtin:skills/ilp.md` or a path).
    pub path: String,
    /// Built-in or external.
    pub origin: Origin,
    /// Typed frontmatter (empty for skill cards).
    pub frontmatter: Frontmatter,
    /// The Markdown body (no frontmatter), without the hidden lines of its code blocks
    /// ([`crate::HIDDEN_PREFIX`]): what every reader sees.
    pub body: String,
    /// 1-based line in the file where `body` starts.
    pub body_line: u32,
    /// The hidden lines of the body's cuda blocks, as (1-based line in the file, the line
    /// as written), in order; [`Page::source_body`] puts them back.
    pub hidden_lines: Vec<(u32, String)>,
    /// Every heading of level 2 or 3, in order.
    pub sections: Vec<Section>,
    /// Pitfalls, for pitfall pages.
    pub pitfalls: Vec<Pitfall>,
    /// API fields, for api pages.
    pub api: Option<ApiEntry>,
}

impl Page {
    /// The body as written in the file, hidden lines included: line `n` of it is line
    /// `body_line + n` of the file.
    pub fn source_body(&self) -> std::borrow::Cow<'_, str> {
        if self.hidden_lines.is_empty() {
            return self.body.as_str().into();
        }
        let mut out = String::with_capacity(self.body.len() + 64 * self.hidden_lines.len());
        let mut hidden = self.hidden_lines.iter().peekable();
        let mut line = self.body_line;
        let mut put_hidden = |out: &mut String, line: &mut u32| {
            while let Some((_, text)) = hidden.next_if(|(l, _)| *l == *line) {
                out.push_str(text);
                out.push('\n');
                *line += 1;
            }
        };
        for raw in self.body.split_inclusive('\n') {
            put_hidden(&mut out, &mut line);
            out.push_str(raw);
            line += 1;
        }
        put_hidden(&mut out, &mut line);
        out.into()
    }

    /// The fenced code blocks of the page as written, hidden lines included
    /// ([`crate::CodeBlock::source`] is what the compile test compiles), with their
    /// lines in the file.
    pub fn code_blocks(&self) -> Vec<crate::CodeBlock> {
        crate::code_blocks(&self.source_body(), self.body_line)
    }

    /// The section with this anchor, if any.
    pub fn section(&self, anchor: &str) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.anchor.eq_ignore_ascii_case(anchor))
    }

    /// The pitfall with this anchor, if any.
    pub fn pitfall(&self, anchor: &str) -> Option<&Pitfall> {
        self.pitfalls
            .iter()
            .find(|p| p.anchor.eq_ignore_ascii_case(anchor))
    }

    /// The headers that declare `signatures` (some of this page's), in order, without
    /// repeats: an overload taking a type of `overload_headers` is declared there, any other
    /// in `header`. `None` without a `header`.
    pub fn headers_for<'a>(&'a self, signatures: &[String]) -> Option<Vec<&'a str>> {
        let api = self.api.as_ref()?;
        let base = api.header.as_deref()?;
        let mut out: Vec<&str> = Vec::new();
        for sig in signatures {
            let h = api
                .overload_headers
                .iter()
                .find(|(ty, _)| has_word(sig, ty))
                .map_or(base, |(_, h)| h.as_str());
            if !out.contains(&h) {
                out.push(h);
            }
        }
        if out.is_empty() {
            out.push(base);
        }
        Some(out)
    }

    /// The minimum architecture for one of this page's symbols: its own entry in
    /// `symbol_requires_sm`, else the page's `requires_sm`.
    pub fn requires_sm_for(&self, symbol: &str) -> Option<&str> {
        self.api
            .as_ref()
            .and_then(|a| a.symbol_requires_sm.get(symbol))
            .or(self.frontmatter.requires_sm.as_ref())
            .map(String::as_str)
    }

    /// A short summary: the first paragraph of `## What`, `## Semantics` or `## Purpose`,
    /// or else of the body.
    pub fn summary(&self) -> String {
        let from = ["what", "semantics", "purpose"]
            .iter()
            .find_map(|a| self.section(a).map(|s| s.content.as_str()))
            .unwrap_or(&self.body);
        first_paragraph(from)
    }
}

/// Whether `word` occurs in `text` as a whole identifier (`__nv_bfloat16` is not in
/// `__nv_bfloat162`).
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// The first prose paragraph of some Markdown (skips headings, code and blank lines).
pub fn first_paragraph(markdown: &str) -> String {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_code = !in_code;
            if !out.is_empty() {
                break;
            }
            continue;
        }
        if in_code || t.starts_with('#') {
            if !out.is_empty() {
                break;
            }
            continue;
        }
        if t.is_empty() {
            if !out.is_empty() {
                break;
            }
            continue;
        }
        out.push(t);
    }
    out.join(" ")
}
