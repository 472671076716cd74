//! Conversions between `ide`'s plain data (byte offsets, Markdown) and the protocol's
//! types, in one place. Positions go through `ide`'s [`LineIndex`] in the encoding the
//! client and server agreed on at initialisation.

use kernaut_ide::config::Severity;
use kernaut_ide::editor::{
    ActionData, CompletionData, InlayHintData, KernelLens, OutlineItem, OutlineKind,
};
use kernaut_ide::rules::{RuleDiagnostic, TextEdit};
use kernaut_ide::{LineCol, LineIndex, PositionEncoding};
use tower_lsp_server::ls_types as lsp;

/// The encoding the client asked for: UTF-8 when it offers it, else UTF-16 (the
/// protocol's default).
pub fn negotiate_encoding(params: &lsp::InitializeParams) -> PositionEncoding {
    let offered = params
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(kinds) if kinds.contains(&lsp::PositionEncodingKind::UTF8) => PositionEncoding::Utf8,
        _ => PositionEncoding::Utf16,
    }
}

/// The protocol's name of an encoding.
pub fn encoding_kind(enc: PositionEncoding) -> lsp::PositionEncodingKind {
    match enc {
        PositionEncoding::Utf8 => lsp::PositionEncodingKind::UTF8,
        PositionEncoding::Utf16 => lsp::PositionEncodingKind::UTF16,
        PositionEncoding::Utf32 => lsp::PositionEncodingKind::UTF32,
    }
}

/// A byte offset from a protocol position.
pub fn offset(lines: &LineIndex, enc: PositionEncoding, p: lsp::Position) -> usize {
    lines.offset(
        LineCol {
            line: p.line,
            col: p.character,
        },
        enc,
    )
}

/// A byte range from a protocol range.
pub fn text_range(
    lines: &LineIndex,
    enc: PositionEncoding,
    r: lsp::Range,
) -> std::ops::Range<usize> {
    let a = offset(lines, enc, r.start);
    let b = offset(lines, enc, r.end);
    a.min(b)..a.max(b)
}

/// A protocol position from a byte offset.
pub fn position(lines: &LineIndex, enc: PositionEncoding, offset: usize) -> lsp::Position {
    let lc = lines.line_col(offset, enc);
    lsp::Position {
        line: lc.line,
        character: lc.col,
    }
}

/// A protocol range from a byte range.
pub fn range(lines: &LineIndex, enc: PositionEncoding, r: &std::ops::Range<usize>) -> lsp::Range {
    lsp::Range {
        start: position(lines, enc, r.start),
        end: position(lines, enc, r.end.max(r.start)),
    }
}

/// The URI that names a wiki page or section (`kernaut://wiki/pitfall-bank-conflict#P1`);
/// editors open it through `kernaut.showPage`.
pub fn wiki_uri(target: &str) -> Option<lsp::Uri> {
    let (id, anchor) = match target.split_once('#') {
        Some((id, a)) => (id, Some(a)),
        None => (target, None),
    };
    let text = match anchor {
        Some(a) => format!("kernaut://wiki/{id}#{a}"),
        None => format!("kernaut://wiki/{id}"),
    };
    text.parse().ok()
}

fn severity(s: Severity) -> lsp::DiagnosticSeverity {
    match s {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Hint => lsp::DiagnosticSeverity::HINT,
    }
}

/// A rule's finding as a protocol diagnostic: the rule id as `code`, the wiki anchor as
/// `codeDescription`, the rule's fixes' titles as related information.
pub fn diagnostic(
    lines: &LineIndex,
    enc: PositionEncoding,
    uri: &lsp::Uri,
    d: &RuleDiagnostic,
) -> lsp::Diagnostic {
    let r = range(lines, enc, &d.range);
    let related = (!d.fixes.is_empty()).then(|| {
        d.fixes
            .iter()
            .map(|f| lsp::DiagnosticRelatedInformation {
                location: lsp::Location {
                    uri: uri.clone(),
                    range: f.edits.first().map_or(r, |e| range(lines, enc, &e.range)),
                },
                message: format!("fix: {}", f.title),
            })
            .collect()
    });
    lsp::Diagnostic {
        range: r,
        severity: Some(severity(d.severity)),
        code: Some(lsp::NumberOrString::String(d.rule.to_string())),
        code_description: (!d.wiki.is_empty())
            .then(|| wiki_uri(&d.wiki))
            .flatten()
            .map(|href| lsp::CodeDescription { href }),
        source: Some("kernaut".into()),
        message: if d.wiki.is_empty() {
            d.message.clone()
        } else {
            format!("{} (wiki {})", d.message, d.wiki)
        },
        related_information: related,
        tags: None,
        data: None,
    }
}

/// Edits as protocol text edits.
pub fn text_edits(
    lines: &LineIndex,
    enc: PositionEncoding,
    edits: &[TextEdit],
) -> Vec<lsp::TextEdit> {
    edits
        .iter()
        .map(|e| lsp::TextEdit {
            range: range(lines, enc, &e.range),
            new_text: e.new_text.clone(),
        })
        .collect()
}

/// A code action: a workspace edit for fixes and allow comments, a command for pages.
pub fn code_action(
    lines: &LineIndex,
    enc: PositionEncoding,
    uri: &lsp::Uri,
    a: &ActionData,
) -> lsp::CodeActionOrCommand {
    use kernaut_ide::editor::ActionKind;
    let diagnostics = a
        .diagnostic
        .as_ref()
        .map(|d| vec![diagnostic(lines, enc, uri, d)]);
    match a.kind {
        ActionKind::QuickFix | ActionKind::Allow => {
            let mut changes = std::collections::HashMap::new();
            changes.insert(uri.clone(), text_edits(lines, enc, &a.edits));
            lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: a.title.clone(),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics,
                edit: Some(lsp::WorkspaceEdit {
                    changes: Some(changes),
                    ..lsp::WorkspaceEdit::default()
                }),
                command: None,
                is_preferred: a.preferred.then_some(true),
                disabled: None,
                data: None,
            })
        }
        ActionKind::ShowPage => lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: a.title.clone(),
            kind: Some(lsp::CodeActionKind::new("source.kernaut.showPage")),
            diagnostics: None,
            edit: None,
            command: Some(lsp::Command {
                title: a.title.clone(),
                command: "kernaut.showPage".into(),
                arguments: Some(vec![serde_json::Value::String(
                    a.page.clone().unwrap_or_default(),
                )]),
            }),
            is_preferred: None,
            disabled: None,
            data: None,
        }),
    }
}

/// An occupancy lens above a kernel; its command opens the occupancy skill page.
pub fn code_lens(lines: &LineIndex, enc: PositionEncoding, l: &KernelLens) -> lsp::CodeLens {
    lsp::CodeLens {
        range: range(lines, enc, &l.range),
        command: Some(lsp::Command {
            title: l.title.clone(),
            command: "kernaut.showPage".into(),
            arguments: Some(vec![serde_json::Value::String("skill-occupancy".into())]),
        }),
        data: None,
    }
}

/// A "report" lens above a kernel; its command, `kernaut.kernelReport`, returns the
/// report as Markdown (the editor plugins open it).
pub fn report_lens(
    lines: &LineIndex,
    enc: PositionEncoding,
    uri: &lsp::Uri,
    l: &kernaut_ide::kernel_report::ReportLens,
) -> lsp::CodeLens {
    lsp::CodeLens {
        range: range(lines, enc, &l.range),
        command: Some(lsp::Command {
            title: l.title.clone(),
            command: "kernaut.kernelReport".into(),
            arguments: Some(vec![serde_json::json!({"uri": uri, "kernel": l.kernel})]),
        }),
        data: None,
    }
}

/// An inlay hint.
pub fn inlay_hint(lines: &LineIndex, enc: PositionEncoding, h: &InlayHintData) -> lsp::InlayHint {
    lsp::InlayHint {
        position: position(lines, enc, h.offset),
        label: lsp::InlayHintLabel::String(h.label.clone()),
        kind: None,
        text_edits: None,
        tooltip: Some(lsp::InlayHintTooltip::String(h.tooltip.clone())),
        padding_left: Some(h.kind == kernaut_ide::editor::InlayKind::BankConflict),
        padding_right: None,
        data: None,
    }
}

/// A completion item for an intrinsic or library call.
pub fn completion(
    lines: &LineIndex,
    enc: PositionEncoding,
    c: &CompletionData,
) -> lsp::CompletionItem {
    lsp::CompletionItem {
        label: c.label.clone(),
        kind: Some(lsp::CompletionItemKind::FUNCTION),
        detail: c.detail.clone(),
        documentation: Some(lsp::Documentation::MarkupContent(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: c.documentation.clone(),
        })),
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
            range: range(lines, enc, &c.replace),
            new_text: c.label.clone(),
        })),
        ..lsp::CompletionItem::default()
    }
}

/// An outline entry as a document symbol.
#[allow(deprecated)] // `deprecated` is a required field of the protocol type.
pub fn document_symbol(
    lines: &LineIndex,
    enc: PositionEncoding,
    o: &OutlineItem,
) -> lsp::DocumentSymbol {
    lsp::DocumentSymbol {
        name: o.name.clone(),
        detail: Some(o.detail.clone()),
        kind: match o.kind {
            OutlineKind::Kernel | OutlineKind::DeviceFunction => lsp::SymbolKind::FUNCTION,
            OutlineKind::SharedArray => lsp::SymbolKind::ARRAY,
        },
        tags: None,
        deprecated: None,
        range: range(lines, enc, &o.range),
        selection_range: range(lines, enc, &o.selection),
        children: (!o.children.is_empty()).then(|| {
            o.children
                .iter()
                .map(|c| document_symbol(lines, enc, c))
                .collect()
        }),
    }
}
