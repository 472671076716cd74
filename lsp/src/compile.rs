//! The bridge to `kernaut-compiler`: what `nvcc`/`ptxas` reported becomes `ide`'s
//! [`CompiledFacts`] (register counts for the occupancy model, the `resources/spills`
//! diagnostic) and protocol diagnostics with source `nvcc`.

use std::path::Path;

use kernaut_compiler::{CompileOutput, CompilerMessage};
use kernaut_ide::compiled::{CompiledFacts, CompiledKernel, SassFacts};
use kernaut_ide::{LineCol, LineIndex, PositionEncoding};
use tower_lsp_server::ls_types as lsp;

/// The facts `ide` keeps from one compile.
pub fn to_compiled(out: &CompileOutput) -> CompiledFacts {
    CompiledFacts {
        // `nvcc 12.8 (V12.8.93)`, without where it was found.
        toolkit: out
            .toolkit
            .split(" at ")
            .next()
            .unwrap_or(&out.toolkit)
            .to_string(),
        kernels: out
            .kernels
            .iter()
            .map(|k| CompiledKernel {
                name: k.name.clone(),
                base_name: k.base_name.clone(),
                arch: k.arch.clone(),
                registers: k.registers,
                spill_store_bytes: k.spill_store_bytes,
                spill_load_bytes: k.spill_load_bytes,
                stack_frame_bytes: k.stack_frame_bytes,
                static_shared_bytes: k.static_shared_bytes,
                constant_bytes: k.constant_bytes,
                sass: out.sass_for(&k.mangled, &k.arch).map(|s| SassFacts {
                    instructions: s.instructions,
                    ldgsts_bypass: s.ldgsts_bypass,
                    ldgsts_l1: s.ldgsts_l1,
                    local_loads: s.ldl,
                    local_stores: s.stl,
                    top_opcodes: s.opcode_counts.iter().take(8).cloned().collect(),
                }),
            })
            .collect(),
    }
}

/// The compiler's messages about `path` as diagnostics (1-based lines, columns in
/// characters, as nvcc prints them); messages without a place go on the first line.
pub fn diagnostics(
    messages: &[CompilerMessage],
    path: &Path,
    lines: &LineIndex,
    enc: PositionEncoding,
) -> Vec<lsp::Diagnostic> {
    messages
        .iter()
        .filter(|m| {
            m.file
                .as_deref()
                .is_none_or(|f| f == path || f.file_name() == path.file_name() && !f.is_absolute())
        })
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
                    kernaut_compiler::Severity::Error => lsp::DiagnosticSeverity::ERROR,
                    kernaut_compiler::Severity::Warning => lsp::DiagnosticSeverity::WARNING,
                    kernaut_compiler::Severity::Note => lsp::DiagnosticSeverity::INFORMATION,
                }),
                code: m.code.clone().map(lsp::NumberOrString::String),
                source: Some(m.tool.clone()),
                message: m.message.clone(),
                ..lsp::Diagnostic::default()
            }
        })
        .collect()
}
