//! What an editor shows besides hovers and diagnostics, as plain data with byte ranges:
//! code lenses (occupancy above each kernel), inlay hints (a `__shared__` array's bytes, a
//! modelled access's conflict), code actions (the rules' fixes, "allow this rule here",
//! "show the wiki page"), completion and signature help for CUDA intrinsics and library
//! calls, the outline of a file, and the wiki's pages and search for editor commands.
//!
//! Every figure comes from the same model layer hover and the rules use
//! ([`Analysis::occupancy`], [`Analysis::bank`]), so a lens, a hint and a hover never
//! disagree.

use kernaut_index::{Hit, SearchOptions};
use kernaut_syntax::{SharedAccess, TextRange};

use crate::analysis::{Analysis, Cancellable, FileId};
use crate::diagnostic::{RuleDiagnostic, TextEdit};
use crate::hover::HoverKind;
use crate::reports::{BlockSource, OccupancyReport, RegsSource};

/// The occupancy lens above one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelLens {
    /// The kernel's name, where the lens sits.
    pub range: TextRange,
    /// The kernel.
    pub kernel: String,
    /// One line: `occupancy 50% · 4 blocks/SM · limited by registers`.
    pub title: String,
    /// The report the title summarises.
    pub report: Option<OccupancyReport>,
}

/// What an inlay hint says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InlayKind {
    /// The bytes of a `__shared__` declaration.
    SharedBytes,
    /// The conflict degree of a shared-memory access.
    BankConflict,
}

/// A short label shown inside the code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlayHintData {
    /// The byte offset the label follows.
    pub offset: usize,
    /// The label (`: 4.1 KiB`, `4-way conflict`).
    pub label: String,
    /// What it is.
    pub kind: InlayKind,
    /// A longer explanation for a tooltip.
    pub tooltip: String,
}

/// Which inlay hints to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InlayConfig {
    /// Bytes after each `__shared__` declaration.
    pub shared_bytes: bool,
    /// The conflict degree at each modelled access with a conflict.
    pub bank_conflicts: bool,
}

impl Default for InlayConfig {
    fn default() -> InlayConfig {
        InlayConfig {
            shared_bytes: true,
            bank_conflicts: true,
        }
    }
}

/// What a code action does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// A rule's fix.
    QuickFix,
    /// Inserts a `// kernaut: allow(rule)` comment.
    Allow,
    /// Opens a wiki page (no edit).
    ShowPage,
}

/// A code action: edits to the file, or a page to open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionData {
    /// The title for the menu.
    pub title: String,
    /// What it does.
    pub kind: ActionKind,
    /// The edits (empty for [`ActionKind::ShowPage`]).
    pub edits: Vec<TextEdit>,
    /// Whether it is clearly the right fix (the only fix of its diagnostic).
    pub preferred: bool,
    /// The diagnostic it answers, if any.
    pub diagnostic: Option<RuleDiagnostic>,
    /// The wiki target (`id#anchor`) for [`ActionKind::ShowPage`].
    pub page: Option<String>,
}

/// A completion item for an intrinsic or library call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionData {
    /// The name inserted.
    pub label: String,
    /// The first signature.
    pub detail: Option<String>,
    /// A one-line summary and the page it comes from, in Markdown.
    pub documentation: String,
    /// The range the name replaces (the word typed so far).
    pub replace: TextRange,
    /// The wiki page.
    pub page: String,
}

/// Signature help inside a call's argument list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureHelpData {
    /// The callee as written.
    pub callee: String,
    /// Every overload's signature.
    pub signatures: Vec<String>,
    /// The zero-based argument the cursor is in.
    pub active_parameter: u32,
    /// A one-line summary in Markdown.
    pub documentation: String,
}

/// What an outline entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutlineKind {
    /// A `__global__` function.
    Kernel,
    /// A `__device__` function.
    DeviceFunction,
    /// A `__shared__` array.
    SharedArray,
}

/// One entry of a file's outline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutlineItem {
    /// The name.
    pub name: String,
    /// What it is.
    pub kind: OutlineKind,
    /// The whole definition.
    pub range: TextRange,
    /// The name.
    pub selection: TextRange,
    /// A detail (`__global__`, `float[32][33] · 4224 B`).
    pub detail: String,
    /// Entries inside it (shared arrays inside a kernel).
    pub children: Vec<OutlineItem>,
}

/// A wiki page or section as Markdown, for an editor to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageText {
    /// The page id.
    pub id: String,
    /// The anchor, when one section was asked for.
    pub anchor: Option<String>,
    /// The page's (or section's) title.
    pub title: String,
    /// The Markdown: a title, the key facts, the body and the sources.
    pub markdown: String,
}

/// `4224 B` below 1 KiB, else `4.1 KiB`.
pub fn format_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        let kib = bytes as f64 / 1024.0;
        if (kib - kib.round()).abs() < 0.05 {
            format!("{} KiB", kib.round())
        } else {
            format!("{kib:.1} KiB")
        }
    }
}

/// The lens title of a report.
fn lens_title(r: &OccupancyReport) -> String {
    match &r.result {
        Ok(o) => {
            let limiters = r.limiter_names();
            let mut title = format!(
                "occupancy {:.0}% · {} block{}/SM",
                o.occupancy * 100.0,
                o.blocks_per_sm,
                if o.blocks_per_sm == 1 { "" } else { "s" }
            );
            if !limiters.is_empty() && o.occupancy < 0.999 {
                title.push_str(&format!(" · limited by {}", limiters.join(" and ")));
            }
            let block = match r.block {
                [x, 1, 1] => format!("{x}"),
                [x, y, 1] => format!("{x}×{y}"),
                [x, y, z] => format!("{x}×{y}×{z}"),
            };
            let from = match &r.block_source {
                BlockSource::Launch { line, .. } => format!("from the launch at line {line}"),
                BlockSource::LaunchBounds => "from __launch_bounds__".to_string(),
                BlockSource::Default => "assumed".to_string(),
            };
            let regs = match r.regs_source {
                RegsSource::LaunchBounds { .. } => "≤",
                RegsSource::Default | RegsSource::Project | RegsSource::Comment => "~",
                RegsSource::Compiler => "",
            };
            title.push_str(&format!(
                " ({block} threads {from}, {regs}{} regs, {} on {})",
                r.regs_per_thread,
                format_bytes(u64::from(r.static_smem) + u64::from(r.dynamic_smem)),
                r.arch
            ));
            title
        }
        Err(e) => format!("occupancy: {e}"),
    }
}

/// The offset after a declarator's `[..]` groups that follow `offset` (spaces between
/// them allowed).
fn after_dimensions(text: &str, mut offset: usize) -> usize {
    let bytes = text.as_bytes();
    loop {
        let mut i = offset;
        while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
            i += 1;
        }
        if bytes.get(i) != Some(&b'[') {
            return offset;
        }
        let mut depth = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'[' => depth += 1,
                b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b';' | b'{' | b'}' => return offset,
                _ => {}
            }
            i += 1;
        }
        if i >= bytes.len() {
            return offset;
        }
        offset = i + 1;
    }
}

/// The word of identifier characters ending at `offset`, as (start, word).
fn word_before(text: &str, offset: usize) -> (usize, &str) {
    let bytes = text.as_bytes();
    let mut start = offset.min(text.len());
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
        start -= 1;
    }
    (start, &text[start..offset.min(text.len())])
}

/// The callee and argument index of the innermost unclosed call before `offset` on the
/// same statement, scanning back at most 2,000 bytes.
fn enclosing_call(text: &str, offset: usize) -> Option<(String, u32)> {
    let offset = offset.min(text.len());
    let floor = offset.saturating_sub(2000);
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut commas = 0u32;
    let mut i = offset;
    while i > floor {
        i -= 1;
        match bytes[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' if depth > 0 => depth -= 1,
            b'(' => {
                let mut end = i;
                // `name <...> (` and `name (`.
                while end > 0 && bytes[end - 1] == b' ' {
                    end -= 1;
                }
                let mut e = end;
                if e > 0 && bytes[e - 1] == b'>' {
                    let mut d = 0;
                    while e > 0 {
                        e -= 1;
                        match bytes[e] {
                            b'>' => d += 1,
                            b'<' => {
                                d -= 1;
                                if d == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                    end = e;
                }
                let mut start = end;
                while start > 0
                    && (bytes[start - 1].is_ascii_alphanumeric()
                        || bytes[start - 1] == b'_'
                        || bytes[start - 1] == b':'
                        || bytes[start - 1] == b'.')
                {
                    start -= 1;
                }
                let callee = text[start..end].trim_start_matches(['.', ':']);
                return (!callee.is_empty()).then(|| (callee.to_string(), commas));
            }
            b'[' | b'{' | b';' => return None,
            b',' if depth == 0 => commas += 1,
            _ => {}
        }
    }
    None
}

/// The occupancy lens of every kernel of a file.
pub(crate) fn code_lenses(db: &Analysis, file: FileId) -> Cancellable<Vec<KernelLens>> {
    let kernels: Vec<(String, TextRange)> = db
        .kernel_facts(file)?
        .iter()
        .map(|k| (k.function.name.clone(), k.function.name_range.clone()))
        .collect();
    let mut out = Vec::with_capacity(kernels.len());
    for (kernel, range) in kernels {
        let report = db.occupancy(file, &kernel)?;
        let title = match &report {
            Some(r) => lens_title(r),
            None => "occupancy: not modelled".to_string(),
        };
        out.push(KernelLens {
            range,
            kernel,
            title,
            report,
        });
    }
    Ok(out)
}

/// Inlay hints inside `range` (the whole file with `None`).
pub(crate) fn inlay_hints(
    db: &Analysis,
    file: FileId,
    range: Option<TextRange>,
    config: InlayConfig,
) -> Cancellable<Vec<InlayHintData>> {
    let inside = |r: &TextRange| {
        range
            .as_ref()
            .is_none_or(|w| r.start < w.end && r.end >= w.start)
    };
    let text = db.text(file)?;
    let mut out = Vec::new();
    if config.shared_bytes {
        let facts = db.file_facts(file)?;
        for d in &facts.shared {
            if !inside(&d.range) || d.is_extern {
                continue;
            }
            let (Some(bytes), inst) = crate::instances::shared_bytes(facts, d) else {
                continue;
            };
            let with = inst.map_or(String::new(), |i| {
                format!(" with {}", crate::instances::chosen_phrase(&i))
            });
            out.push(InlayHintData {
                offset: after_dimensions(text, d.name_range.end),
                label: format!(": {}", format_bytes(bytes)),
                kind: InlayKind::SharedBytes,
                tooltip: format!(
                    "`{}` takes {bytes} bytes of shared memory per block{with}",
                    d.name
                ),
            });
        }
    }
    if config.bank_conflicts {
        let accesses: Vec<SharedAccess> = db
            .shared_accesses(file)?
            .iter()
            .filter(|a| inside(&a.range))
            .cloned()
            .collect();
        for a in &accesses {
            let Some(bank) = db.bank(file, a)? else {
                continue;
            };
            // The conflicts the `bank-conflict` rule reports (the model says which).
            let Some(report) = bank.definite_conflict() else {
                continue;
            };
            out.push(InlayHintData {
                offset: a.range.end,
                label: format!("{}-way conflict", report.conflict_degree),
                kind: InlayKind::BankConflict,
                tooltip: format!(
                    "{} wavefronts for one warp-wide access (1 without conflicts); see pitfall-bank-conflict",
                    report.wavefronts
                ),
            });
        }
    }
    for h in &mut out {
        h.offset = h.offset.min(text.len());
        while !text.is_char_boundary(h.offset) {
            h.offset -= 1;
        }
    }
    out.sort_by_key(|h| h.offset);
    Ok(out)
}

/// The code actions for a range: the fixes of the diagnostics it touches, "allow this
/// rule here" for each, and "show the wiki page" for the diagnostics and the symbol
/// under the cursor.
pub(crate) fn code_actions(
    db: &Analysis,
    file: FileId,
    range: TextRange,
) -> Cancellable<Vec<ActionData>> {
    let text = db.text(file)?;
    let diagnostics = crate::rules::host::diagnostics(db, file)?;
    let mut out = Vec::new();
    let touches = |r: &TextRange| r.start <= range.end && range.start <= r.end;
    for d in diagnostics.iter().filter(|d| touches(&d.range)) {
        let preferred = d.fixes.len() == 1;
        for fix in &d.fixes {
            out.push(ActionData {
                title: fix.title.clone(),
                kind: ActionKind::QuickFix,
                edits: fix.edits.clone(),
                preferred,
                diagnostic: Some(d.clone()),
                page: None,
            });
        }
    }
    // A misspelled `allow(...)` id is fixed, not allowed, and cites no page.
    for d in diagnostics
        .iter()
        .filter(|d| touches(&d.range) && d.rule != crate::rules::UNKNOWN_RULE)
    {
        let line_start = crate::rules::line_start(text, d.range.start);
        let indent = crate::rules::indent_at(text, d.range.start);
        out.push(ActionData {
            title: format!("Allow `{}` here", d.rule),
            kind: ActionKind::Allow,
            edits: vec![TextEdit::insert(
                line_start,
                format!("{indent}// kernaut: allow({})\n", d.rule),
            )],
            preferred: false,
            diagnostic: Some(d.clone()),
            page: None,
        });
        out.push(ActionData {
            title: format!("Show wiki: {}", d.wiki),
            kind: ActionKind::ShowPage,
            edits: Vec::new(),
            preferred: false,
            diagnostic: Some(d.clone()),
            page: Some(d.wiki.clone()),
        });
    }
    if let Some(page) = page_at(db, file, range.start)? {
        if !out.iter().any(|a| a.page.as_deref() == Some(page.as_str())) {
            out.push(ActionData {
                title: format!("Show wiki: {page}"),
                kind: ActionKind::ShowPage,
                edits: Vec::new(),
                preferred: false,
                diagnostic: None,
                page: Some(page),
            });
        }
    }
    Ok(out)
}

/// The wiki page of the symbol at an offset (an intrinsic's API page; for a kernel,
/// a shared declaration or access, the skill page of its model).
pub(crate) fn page_at(db: &Analysis, file: FileId, offset: usize) -> Cancellable<Option<String>> {
    let Some(h) = crate::hover::hover_query(db, file, offset)? else {
        return Ok(None);
    };
    if let Some(p) = h.wiki.as_ref().and_then(|w| w.page.clone()) {
        return Ok(Some(p));
    }
    Ok(match h.kind {
        HoverKind::Kernel => Some("skill-occupancy".to_string()),
        HoverKind::SharedDeclaration | HoverKind::SharedAccess => {
            Some("skill-bank-conflict".to_string())
        }
        _ => None,
    }
    .filter(|p| db.knowledge().is_some_and(|k| k.resolve(p).is_some())))
}

/// Completions of CUDA intrinsics and library calls for the word before `offset`
/// (two characters at least, or a word starting with `__`). The user's own names are
/// left to the C++ language server.
pub(crate) fn completions(
    db: &Analysis,
    file: FileId,
    offset: usize,
) -> Cancellable<Vec<CompletionData>> {
    let text = db.text(file)?;
    let Some(k) = db.knowledge() else {
        return Ok(Vec::new());
    };
    let offset = offset.min(text.len());
    if !text.is_char_boundary(offset) {
        return Ok(Vec::new());
    }
    let (start, word) = word_before(text, offset);
    if word.len() < 2 && !word.starts_with("__") {
        return Ok(Vec::new());
    }
    let mut out: Vec<CompletionData> = Vec::new();
    for page in k.wiki.pages() {
        let Some(api) = &page.api else { continue };
        for sym in &api.symbols {
            let short = kernaut_syntax::short_name(sym);
            if !short.starts_with(word) || short.contains(' ') || short.contains('.') {
                continue;
            }
            if out.iter().any(|c| c.label == short) {
                continue;
            }
            let detail = api
                .signatures
                .iter()
                .find(|s| s.contains(short))
                .or(api.signatures.first())
                .cloned();
            let summary = kernaut_wiki::first_paragraph(&page.body);
            let mut documentation = String::new();
            if !summary.is_empty() {
                documentation.push_str(&summary);
                documentation.push_str("\n\n");
            }
            if let Some(r) = page.requires_sm_for(sym) {
                documentation.push_str(&format!("Requires sm_{r}. "));
            }
            documentation.push_str(&format!("Wiki: `{}`", page.id));
            out.push(CompletionData {
                label: short.to_string(),
                detail,
                documentation,
                replace: start..offset,
                page: page.id.clone(),
            });
        }
        if out.len() >= 200 {
            break;
        }
    }
    out.sort_by(|a, b| (a.label.len(), &a.label).cmp(&(b.label.len(), &b.label)));
    Ok(out)
}

/// Signature help for the call whose argument list holds `offset`, when the callee
/// is an intrinsic or library call the wiki knows.
pub(crate) fn signature_help(
    db: &Analysis,
    file: FileId,
    offset: usize,
) -> Cancellable<Option<SignatureHelpData>> {
    let text = db.text(file)?;
    let Some(k) = db.knowledge() else {
        return Ok(None);
    };
    let Some((callee, active)) = enclosing_call(text, offset) else {
        return Ok(None);
    };
    let Some(m) = k.symbol(&callee) else {
        return Ok(None);
    };
    let Some(page) = m.api.as_deref().and_then(|id| k.wiki.page(id)) else {
        return Ok(None);
    };
    let Some(api) = &page.api else {
        return Ok(None);
    };
    let short = kernaut_syntax::short_name(&m.symbol).to_string();
    let mut signatures: Vec<String> = api
        .signatures
        .iter()
        .filter(|s| {
            s.split('(').next().is_some_and(|head| {
                head.trim_end()
                    .rsplit([' ', '*', '&', ':'])
                    .next()
                    .is_some_and(|n| n == short)
            })
        })
        .cloned()
        .collect();
    if signatures.is_empty() {
        return Ok(None);
    }
    signatures.truncate(12);
    let summary = kernaut_wiki::first_paragraph(&page.body);
    Ok(Some(SignatureHelpData {
        callee,
        signatures,
        active_parameter: active,
        documentation: format!("{summary}\n\nWiki: `{}`", page.id),
    }))
}

/// The outline of a file: kernels and device functions, with their shared arrays.
pub(crate) fn outline(db: &Analysis, file: FileId) -> Cancellable<Vec<OutlineItem>> {
    let facts = db.file_facts(file)?;
    let shared_item = |d: &kernaut_syntax::SharedDecl| OutlineItem {
        name: d.name.clone(),
        kind: OutlineKind::SharedArray,
        range: d.range.clone(),
        selection: d.name_range.clone(),
        detail: {
            let dims: String = d.dims_text.iter().map(|t| format!("[{t}]")).collect();
            match crate::instances::shared_bytes(facts, d).0 {
                _ if d.is_extern => format!("extern __shared__ {}{dims}", d.element_type),
                Some(b) => {
                    format!("__shared__ {}{dims} · {}", d.element_type, format_bytes(b))
                }
                None => format!("__shared__ {}{dims}", d.element_type),
            }
        },
        children: Vec::new(),
    };
    let mut out: Vec<OutlineItem> = Vec::new();
    for (f, kind) in facts
        .kernels
        .iter()
        .map(|f| (f, OutlineKind::Kernel))
        .chain(
            facts
                .device_functions
                .iter()
                .map(|f| (f, OutlineKind::DeviceFunction)),
        )
    {
        let children = facts
            .shared
            .iter()
            .filter(|d| d.function.as_deref() == Some(f.name.as_str()))
            .filter(|d| d.range.start >= f.range.start && d.range.end <= f.range.end)
            .map(shared_item)
            .collect();
        let params: Vec<String> = f.params.iter().map(|p| p.ty.clone()).collect();
        out.push(OutlineItem {
            name: f.name.clone(),
            kind,
            range: f.range.clone(),
            selection: f.name_range.clone(),
            detail: format!(
                "{} ({})",
                if kind == OutlineKind::Kernel {
                    "__global__"
                } else {
                    "__device__"
                },
                params.join(", ")
            ),
            children,
        });
    }
    // Shared arrays at file scope.
    for d in facts.shared.iter().filter(|d| d.function.is_none()) {
        out.push(shared_item(d));
    }
    out.sort_by_key(|i| i.range.start);
    Ok(out)
}

/// Ranked wiki hits for a query (pitfalls by symptom first, as `ktui search`).
pub(crate) fn search_wiki(db: &Analysis, query: &str, limit: usize) -> Vec<Hit> {
    let Some(k) = db.knowledge() else {
        return Vec::new();
    };
    if limit == 0 {
        return Vec::new();
    }
    let opts = SearchOptions {
        limit,
        ..SearchOptions::default()
    };
    k.search(query, &opts)
}

/// A page (`id`) or one section (`id#anchor`) as Markdown.
pub(crate) fn wiki_page(db: &Analysis, target: &str) -> Option<PageText> {
    let k = db.knowledge()?;
    let (page, anchor) = k.resolve(target.trim())?;
    let fm = &page.frontmatter;
    let mut md = String::new();
    match anchor.and_then(|a| page.section(a).map(|s| (a, s))) {
        Some((a, section)) => {
            md.push_str(&format!("# {}\n\n", section.title));
            md.push_str(&format!("*From {} (`{}#{a}`)*\n\n", page.title, page.id));
            md.push_str(&section.content);
            md.push('\n');
            return Some(PageText {
                id: page.id.clone(),
                anchor: Some(section.anchor.clone()),
                title: section.title.clone(),
                markdown: md,
            });
        }
        None => {
            md.push_str(&format!("# {}\n\n", page.title));
            let mut facts = vec![format!("`{}`", page.id), page.kind.as_str().to_string()];
            if let Some(r) = &fm.requires_sm {
                facts.push(format!("requires sm_{r}"));
            }
            if let Some(e) = &fm.evidence_level {
                facts.push(format!("evidence: {e}"));
            }
            if let Some(m) = &fm.measured_on {
                facts.push(format!("measured on {m}"));
            }
            md.push_str(&format!("*{}*\n\n", facts.join(" · ")));
            if let Some(api) = &page.api {
                if !api.signatures.is_empty() {
                    md.push_str("```cuda\n");
                    for s in &api.signatures {
                        md.push_str(s);
                        md.push('\n');
                    }
                    md.push_str("```\n\n");
                }
            }
            md.push_str(&page.body);
            if !fm.source_refs.is_empty() {
                md.push_str("\n\n## Sources\n\n");
                for s in &fm.source_refs {
                    let mut line = format!("- {}", s.source_id);
                    if !s.path.is_empty() {
                        line.push_str(&format!(": {}", s.path));
                    }
                    if !s.anchor.is_empty() {
                        line.push_str(&format!(" #{}", s.anchor));
                    }
                    md.push_str(&line);
                    md.push('\n');
                }
            }
        }
    }
    Some(PageText {
        id: page.id.clone(),
        anchor: None,
        title: page.title.clone(),
        markdown: md,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enclosing_call_counts_top_level_commas() {
        let t = "x = __hfma2(a, f(b, c), ";
        assert_eq!(enclosing_call(t, t.len()), Some(("__hfma2".into(), 2)));
        let t = "cuda::memcpy_async<4>(dst, ";
        assert_eq!(
            enclosing_call(t, t.len()),
            Some(("cuda::memcpy_async".into(), 1))
        );
        let t = "pipe.producer_acquire(";
        assert_eq!(
            enclosing_call(t, t.len()),
            Some(("pipe.producer_acquire".into(), 0))
        );
        let t = "f(a); g";
        assert_eq!(enclosing_call(t, t.len()), None);
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(4096), "4 KiB");
        assert_eq!(format_bytes(4224), "4.1 KiB");
    }
}
