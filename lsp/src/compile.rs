//! The compiler's messages about a file (an input of the analysis: see
//! [`kernaut_ide::compiled::CompiledFacts::messages`]) as protocol diagnostics with source
//! `nvcc`, `ptxas` or `host`.

use kernaut_ide::compiled::CompilerNote;
use kernaut_ide::config::Severity;
use kernaut_ide::{LineCol, LineIndex, PositionEncoding};
use tower_lsp_server::ls_types as lsp;

/// `messages` as diagnostics (1-based lines, columns in characters, as nvcc prints
/// them); messages without a place go on the first line.
pub fn diagnostics(
    messages: &[CompilerNote],
    lines: &LineIndex,
    enc: PositionEncoding,
) -> Vec<lsp::Diagnostic> {
    messages
        .iter()
        .map(|m| {
            let line = m.line.unwrap_or(1).saturating_sub(1);
            let start = lines.offset(
                LineCol {
                    line,
                    col: m.column.unwrap_or(1).saturating_sub(1),
                },
                PositionEncoding::Utf32,
            );
            let end = if m.column.is_some() {
                start
            } else {
                lines.line_end(line)
            };
            let range = crate::convert::range(lines, enc, &(start..end));
            lsp::Diagnostic {
                range,
                severity: Some(match m.severity {
                    Severity::Error => lsp::DiagnosticSeverity::ERROR,
                    Severity::Warning => lsp::DiagnosticSeverity::WARNING,
                    Severity::Hint => lsp::DiagnosticSeverity::INFORMATION,
                }),
                code: m.code.clone().map(lsp::NumberOrString::String),
                source: Some(m.tool.clone()),
                message: m.message.clone(),
                ..lsp::Diagnostic::default()
            }
        })
        .collect()
}
