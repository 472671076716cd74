//! `wiki check`: links, required parts of each page kind, API fields.

use std::collections::HashMap;
use std::path::Path;

use crate::diag::{Diagnostic, Severity};
use crate::load::{split_link, Wiki};
use crate::model::{Origin, Page, PageKind, SourceRef};

/// How strict the check is.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckConfig {
    /// Apply kernaut's authoring standard (every pitfall part, `When NOT to use`,
    /// `source_refs`, `measured_on` for measured pages) to external pages too. Built-in
    /// pages always get it.
    pub strict: bool,
}

/// Checks every page of the wiki. Returns the problems found (not the load problems,
/// which are in `wiki.diagnostics`).
pub fn check(wiki: &Wiki, config: CheckConfig) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut symbol_owner: HashMap<&str, &Page> = HashMap::new();
    for page in wiki.pages() {
        let standard = config.strict || page.origin == Origin::Builtin;
        check_links(wiki, page, &mut out);
        match page.kind {
            PageKind::Pitfall => check_pitfalls(page, standard, &mut out),
            PageKind::Skill if standard && page.section("when-not-to-use").is_none() => {
                warn(
                    &mut out,
                    page,
                    page.body_line,
                    "skill page has no `## When NOT to use` section; say when the technique does not pay",
                );
            }
            PageKind::SkillCard if standard && page.section("do-not-use-this-when").is_none() => {
                warn(
                    &mut out,
                    page,
                    1,
                    "skill card has no `## Do not use this when` section",
                );
            }
            PageKind::Api => {
                check_api(page, &mut out);
                if let Some(api) = &page.api {
                    for s in &api.symbols {
                        if let Some(other) = symbol_owner.insert(s.as_str(), page) {
                            if other.id != page.id {
                                warn(
                                    &mut out,
                                    page,
                                    page.frontmatter.line_of("symbols"),
                                    &format!(
                                        "symbol `{s}` is also listed by `{}`; list each symbol on one page",
                                        other.id
                                    ),
                                );
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        if standard && page.kind != PageKind::SkillCard {
            let fm = &page.frontmatter;
            if fm.source_refs.is_empty() {
                warn(
                    &mut out,
                    page,
                    1,
                    "page has no `source_refs`; every fact needs a source",
                );
            }
            if fm.evidence_level.as_deref() == Some("measured") && fm.measured_on.is_none() {
                warn(
                    &mut out,
                    page,
                    fm.line_of("evidence_level"),
                    "`evidence_level: measured` without `measured_on`: say where it was measured",
                );
            }
        }
        check_code_block_markers(page, standard, &mut out);
        if let Some(req) = &page.frontmatter.requires_sm {
            if parse_requires_sm(req).is_none() {
                warn(
                    &mut out,
                    page,
                    page.frontmatter.line_of("requires_sm"),
                    &format!("`requires_sm: {req}` is not of the form '>=8.0' (or '>=9.0a')"),
                );
            }
        }
    }
    if let Some(root) = builtin_repo_root() {
        let builtin = wiki.pages().iter().filter(|p| p.origin == Origin::Builtin);
        out.extend(source_ref_problems(builtin, root));
    }
    out
}

/// The source id that marks a `source_refs` entry as a file of the kernaut repository.
pub const REPO_SOURCE_ID: &str = "kernaut-groundtruth";

/// Whether a `source_refs` entry names a file of the kernaut repository: its
/// `source_id` is [`REPO_SOURCE_ID`] or its `path` starts with `wiki/`.
pub fn is_repo_ref(r: &SourceRef) -> bool {
    r.source_id.trim() == REPO_SOURCE_ID || r.path.trim().starts_with("wiki/")
}

/// The checkout the built-in pages were compiled from, if it is still on disk (the
/// parent of this crate's folder, holding `wiki/pages`). `None` for a binary whose
/// sources are gone, in which case `check` skips the repository `source_refs`.
fn builtin_repo_root() -> Option<&'static Path> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    root.join("wiki").join("pages").is_dir().then_some(root)
}

/// Checks the `source_refs` of every page of `wiki` that name a repository file
/// ([`is_repo_ref`]) against the repository at `repo_root`: the `path` must be a file
/// inside it, and the `anchor` must be a heading of that file for Markdown (its text or
/// its GitHub-style slug) or text that occurs in it for any other file. `check` runs
/// this on the built-in pages when the checkout they were built from is on disk.
pub fn check_source_refs(wiki: &Wiki, repo_root: &Path) -> Vec<Diagnostic> {
    source_ref_problems(wiki.pages().iter(), repo_root)
}

fn source_ref_problems<'a>(
    pages: impl Iterator<Item = &'a Page>,
    repo_root: &Path,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut files: HashMap<String, Option<String>> = HashMap::new();
    for page in pages {
        let line = page.frontmatter.line_of("source_refs");
        for r in page
            .frontmatter
            .source_refs
            .iter()
            .filter(|r| is_repo_ref(r))
        {
            let path = r.path.trim();
            let anchor = r.anchor.trim();
            let inside = !path.is_empty()
                && Path::new(path)
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
            let text = if inside {
                files
                    .entry(path.to_string())
                    .or_insert_with(|| std::fs::read_to_string(repo_root.join(path)).ok())
                    .as_deref()
            } else {
                None
            };
            let Some(text) = text else {
                warn(
                    &mut out,
                    page,
                    line,
                    &format!(
                        "source_ref `{path}` (anchor `{anchor}`) names no file of the repository; give a path relative to the repository root"
                    ),
                );
                continue;
            };
            if anchor.is_empty() {
                warn(
                    &mut out,
                    page,
                    line,
                    &format!(
                        "source_ref `{path}` has no anchor; name a heading or a key of the file"
                    ),
                );
            } else if path.ends_with(".md") {
                let headings = markdown_headings(text);
                if !headings.iter().any(|(h, s)| h == anchor || s == anchor) {
                    let list: Vec<String> = headings
                        .iter()
                        .map(|(h, s)| format!("`{h}` ({s})"))
                        .collect();
                    warn(
                        &mut out,
                        page,
                        line,
                        &format!(
                            "source_ref `{path}` has no heading `{anchor}`; its headings: {}",
                            if list.is_empty() {
                                "none".to_string()
                            } else {
                                list.join(", ")
                            }
                        ),
                    );
                }
            } else if !text.contains(anchor) {
                warn(
                    &mut out,
                    page,
                    line,
                    &format!(
                        "source_ref `{path}` does not contain `{anchor}`; the anchor of a file that is not Markdown is text of the file (a column, key or name)"
                    ),
                );
            }
        }
    }
    out
}

/// The ATX headings of a Markdown file outside code fences, any level, as (text,
/// GitHub-style slug). Repeated slugs get `-1`, `-2`, … as on GitHub.
pub fn markdown_headings(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if t.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if t.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        let hashes = t.bytes().take_while(|&b| b == b'#').count();
        if !(1..=6).contains(&hashes) || line.len() - t.len() > 3 {
            continue;
        }
        let rest = &t[hashes..];
        if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
            continue;
        }
        let heading = rest.trim().trim_end_matches('#').trim_end().to_string();
        let base = github_slug(&heading);
        let n = seen.entry(base.clone()).or_insert(0);
        let slug = if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        *n += 1;
        out.push((heading, slug));
    }
    out
}

/// GitHub's heading anchor: lowercase, letters, digits, `-` and `_` kept, each space
/// turned into `-`, everything else dropped (`Results (run2, median GB/s)` gives
/// `results-run2-median-gbs`).
pub fn github_slug(heading: &str) -> String {
    let mut s = String::new();
    for c in heading.chars() {
        if c.is_alphanumeric() || c == '_' || c == '-' {
            s.extend(c.to_lowercase());
        } else if c == ' ' {
            s.push('-');
        }
    }
    s
}

/// Parses `>=8.0`, `>= 9.0a`, `8.0`, `sm_80` into (major, minor, arch-specific).
pub fn parse_requires_sm(s: &str) -> Option<(u32, u32, bool)> {
    let s = s.trim().trim_start_matches(">=").trim();
    let s = s
        .strip_prefix("sm_")
        .or_else(|| s.strip_prefix("sm"))
        .unwrap_or(s);
    let (s, arch_specific) = match s.strip_suffix(['a', 'f']) {
        Some(rest) => (rest, true),
        None => (s, false),
    };
    let (major, minor) = match s.split_once('.') {
        Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
        None if s.len() >= 2 => {
            let (a, b) = s.split_at(s.len() - 1);
            (a.parse().ok()?, b.parse().ok()?)
        }
        None => return None,
    };
    Some((major, minor, arch_specific))
}

/// A `requires_sm` value written as every front end writes a minimum architecture:
/// `>=5.3` → `sm_53`, `>=9.0a` → `sm_90a`, `>=10.0f` → `sm_100f`; the text as it is when it
/// does not parse.
pub fn sm_label(requires: &str) -> String {
    match parse_requires_sm(requires) {
        Some((major, minor, specific)) => {
            let suffix = requires
                .trim()
                .chars()
                .last()
                .filter(|c| specific && (*c == 'a' || *c == 'f'))
                .map(String::from)
                .unwrap_or_default();
            format!("sm_{major}{minor}{suffix}")
        }
        None => requires.trim().to_string(),
    }
}

/// The words after `cuda` on a fence must be known markers (`docs/WIKI_FORMAT.md`, "Code
/// blocks"): a misspelt `fragmnet` would otherwise make the compile test compile an
/// excerpt, or skip nothing.
/// On checked pages a `fragment` is a warning too: every block compiles, the context it
/// needs given in hidden `#~` lines.
fn check_code_block_markers(page: &Page, standard: bool, out: &mut Vec<Diagnostic>) {
    for block in page.code_blocks() {
        if block.lang != "cuda" {
            continue;
        }
        for m in &block.markers {
            if !crate::blocks::CUDA_MARKERS.contains(&m.as_str())
                && !crate::blocks::is_arch_marker(m)
            {
                warn(
                    out,
                    page,
                    block.line,
                    &format!(
                        "unknown marker `{m}` on a cuda code block; known: {}, or an architecture such as `sm_90a`",
                        crate::blocks::CUDA_MARKERS.join(", ")
                    ),
                );
            }
        }
        if standard && block.has("fragment") && !block.has("deliberately-wrong") {
            warn(
                out,
                page,
                block.line,
                "a cuda code block is marked `fragment`, so it is not compiled; give the declarations it needs in hidden `#~` lines instead",
            );
        }
        if block.has("fragment") && block.has("deliberately-wrong") {
            warn(
                out,
                page,
                block.line,
                "a cuda code block is marked both `fragment` and `deliberately-wrong`; a deliberately wrong block must be complete, so that it fails for the reason the page gives",
            );
        }
        if block
            .markers
            .iter()
            .filter(|m| crate::blocks::is_arch_marker(m))
            .count()
            > 1
        {
            warn(
                out,
                page,
                block.line,
                "a cuda code block names more than one architecture",
            );
        }
    }
}

fn warn(out: &mut Vec<Diagnostic>, page: &Page, line: u32, msg: &str) {
    out.push(Diagnostic::new(&page.path, line, 1, Severity::Warning, msg));
}

fn check_links(wiki: &Wiki, page: &Page, out: &mut Vec<Diagnostic>) {
    let fm = &page.frontmatter;
    if let Some(parent) = &fm.parent_skill {
        if wiki.resolve_page(parent).is_none() {
            warn(
                out,
                page,
                fm.line_of("parent_skill"),
                &format!("dangling link: parent_skill `{parent}` names no page"),
            );
        }
    }
    for s in &fm.related_skills {
        if wiki.resolve_page(s).is_none() {
            warn(
                out,
                page,
                fm.line_of("related_skills"),
                &format!("dangling link: related skill `{s}` names no page (expected skill-{s})"),
            );
        }
    }
    if let Some(api) = &page.api {
        for link in &api.related_pitfalls {
            if !wiki.resolves(link) {
                warn(
                    out,
                    page,
                    fm.line_of("related_pitfalls"),
                    &format!("dangling link: `{link}` names no page or anchor"),
                );
            }
        }
    }
    for (line, col, link) in body_links(&page.source_body()) {
        if !wiki.resolves(&link) {
            let (id, anchor) = split_link(&link);
            let why = match (wiki.resolve_page(id), anchor) {
                (Some(_), Some(a)) => format!("page `{id}` has no anchor `{a}`"),
                _ => format!("no page `{id}`"),
            };
            out.push(Diagnostic::new(
                &page.path,
                page.body_line + line - 1,
                col,
                Severity::Warning,
                format!("dangling link `{link}`: {why}"),
            ));
        }
    }
}

/// Links in a body: inline code spans or Markdown link targets whose whole text is
/// `skill-…`, `pitfall-…` or `api-…`, optionally with `#anchor`. Returns (1-based line
/// within the body, 1-based column, link).
pub fn body_links(body: &str) -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    let mut in_code = false;
    for (i, line) in body.lines().enumerate() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let bytes = line.as_bytes();
        let mut j = 0;
        while j < bytes.len() {
            let (open, close) = match bytes[j] {
                b'`' => ('`', '`'),
                b'(' if j > 0 && bytes[j - 1] == b']' => ('(', ')'),
                _ => {
                    j += 1;
                    continue;
                }
            };
            let start = j + open.len_utf8();
            let Some(len) = line[start..].find(close) else {
                break;
            };
            let inner = line[start..start + len].trim();
            if is_link(inner) {
                let col = line[..start].chars().count() as u32 + 1;
                out.push((i as u32 + 1, col, inner.to_string()));
            }
            j = start + len + 1;
        }
    }
    out
}

fn is_link(s: &str) -> bool {
    let (id, anchor) = split_link(s);
    let kind_ok = ["skill-", "pitfall-", "api-"]
        .iter()
        .any(|p| id.strip_prefix(p).is_some_and(|r| !r.is_empty()));
    kind_ok
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.ends_with('-')
        && anchor.is_none_or(|a| {
            !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

fn check_pitfalls(page: &Page, standard: bool, out: &mut Vec<Diagnostic>) {
    if page.pitfalls.is_empty() {
        warn(
            out,
            page,
            page.body_line,
            "pitfall page has no `## P1: …` (or `## Pitfall 1: …`) sections",
        );
    }
    for p in &page.pitfalls {
        let mut missing = Vec::new();
        if p.symptom.is_none() {
            missing.push("Symptom");
        }
        if p.cause.is_none() {
            missing.push("Cause");
        }
        if p.fix.is_none() {
            missing.push("Fix");
        }
        if standard {
            if p.example.is_none() {
                missing.push("Example");
            }
            if p.detection.is_none() {
                missing.push("Detection");
            }
        }
        if !missing.is_empty() {
            let labels: Vec<String> = missing.iter().map(|m| format!("**{m}**:")).collect();
            warn(
                out,
                page,
                p.line,
                &format!(
                    "pitfall {} has no {}; add {}",
                    p.anchor,
                    missing.join(", "),
                    labels.join(", ")
                ),
            );
        }
    }
}

fn check_api(page: &Page, out: &mut Vec<Diagnostic>) {
    let Some(api) = &page.api else { return };
    let fm = &page.frontmatter;
    if api.symbols.is_empty() {
        warn(
            out,
            page,
            1,
            "api page has no `symbols`: list every name the family answers to",
        );
    }
    if api.signatures.is_empty() {
        warn(
            out,
            page,
            1,
            "api page has no `signatures`: one declaration per overload",
        );
    }
    if api.header.is_none() {
        warn(
            out,
            page,
            1,
            "api page has no `header` (a header name, `built-in` or `ptx`)",
        );
    }
    if fm.requires_sm.is_none() {
        warn(out, page, 1, "api page has no `requires_sm` (e.g. '>=8.0')");
    }
    for ty in api.overload_headers.keys() {
        if !api.signatures.iter().any(|s| s.contains(ty.as_str())) {
            warn(
                out,
                page,
                fm.line_of("overload_headers"),
                &format!("`overload_headers` names `{ty}`, which no signature takes"),
            );
        }
    }
    for (sym, req) in &api.symbol_requires_sm {
        // An overload by its first parameter's type: `atomicAdd(float4*)`.
        let name = match sym.split_once('(') {
            Some((name, rest)) if rest.ends_with(')') => name,
            _ => sym.as_str(),
        };
        if !api
            .symbols
            .iter()
            .any(|s| s == name || s.rsplit("::").next() == Some(name))
        {
            warn(
                out,
                page,
                fm.line_of("symbol_requires_sm"),
                &format!("`symbol_requires_sm` names `{sym}`, which is not in `symbols`"),
            );
        }
        if parse_requires_sm(req).is_none() {
            warn(
                out,
                page,
                fm.line_of("symbol_requires_sm"),
                &format!("`symbol_requires_sm` value `{req}` is not of the form '>=8.0'"),
            );
        }
    }
}
