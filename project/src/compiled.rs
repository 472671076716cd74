//! The one conversion of a compile's output into what `ide` keeps: register counts,
//! spills, SASS facts, and the compiler's messages about the file.

use std::path::Path;

use kernaut_compiler::CompileOutput;
use kernaut_ide::compiled::{CompiledFacts, CompiledKernel, CompilerNote, SassFacts};
use kernaut_ide::config::Severity;

/// The facts `ide` keeps from one compile of the file at `path`.
pub fn to_compiled(out: &CompileOutput, path: &Path) -> CompiledFacts {
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
        messages: out
            .messages
            .iter()
            // About this file (by its path, or by its name when printed relative), or
            // about no file (ptxas on its temporary PTX, `nvcc fatal`).
            .filter(|m| {
                m.file.as_deref().is_none_or(|f| {
                    f == path || f.file_name() == path.file_name() && !f.is_absolute()
                })
            })
            .map(|m| CompilerNote {
                line: m.line,
                column: m.column,
                severity: match m.severity {
                    kernaut_compiler::Severity::Error => Severity::Error,
                    kernaut_compiler::Severity::Warning => Severity::Warning,
                    kernaut_compiler::Severity::Note => Severity::Hint,
                },
                code: m.code.clone(),
                message: m.message.clone(),
                tool: m.tool.clone(),
            })
            .collect(),
    }
}
