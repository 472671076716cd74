//! What the compiler said about a file's kernels (registers, spills, shared memory),
//! handed to the host by a front end that ran `nvcc`/`ptxas` (`ide` runs nothing). The
//! occupancy model then uses the real register count, and a kernel that spills gets the
//! `resources/spills` diagnostic.

use kernaut_syntax::TextRange;

use crate::config::{RuleLevel, Severity};
use crate::diagnostic::RuleDiagnostic;

/// One kernel (one template instantiation) as the compiler built it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompiledKernel {
    /// The demangled name, with template arguments (`tile<32, 8>`).
    pub name: String,
    /// The name without namespaces, template arguments and parameters (`tile`).
    pub base_name: String,
    /// The architecture it was compiled for (`sm_90`).
    pub arch: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes per thread stored to local memory by spills.
    pub spill_store_bytes: u64,
    /// Bytes per thread loaded back from local memory by spills.
    pub spill_load_bytes: u64,
    /// The stack frame per thread, in bytes.
    pub stack_frame_bytes: u64,
    /// Static shared memory per block, in bytes.
    pub static_shared_bytes: u64,
    /// Constant memory, in bytes.
    pub constant_bytes: u64,
    /// What the SASS shows, when the toolkit's disassembler ran.
    pub sass: Option<SassFacts>,
}

/// Facts read off a kernel's SASS.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SassFacts {
    /// Instructions (no `NOP` padding).
    pub instructions: u32,
    /// `LDGSTS` with `.BYPASS` (async copies that skip L1).
    pub ldgsts_bypass: u32,
    /// `LDGSTS` without `.BYPASS` (async copies through L1).
    pub ldgsts_l1: u32,
    /// Local-memory loads (`LDL`).
    pub local_loads: u32,
    /// Local-memory stores (`STL`).
    pub local_stores: u32,
    /// The most frequent opcodes, most first.
    pub top_opcodes: Vec<(String, u32)>,
}

impl CompiledKernel {
    /// A few Markdown lines for a hover on the kernel: where the register count comes
    /// from, spills, and the SASS facts.
    pub fn markdown(&self, toolkit: &str) -> String {
        let mut md = format!(
            "**Compiled** ({toolkit}, {}): {} registers, {} B stack, {} B static shared",
            self.arch, self.registers, self.stack_frame_bytes, self.static_shared_bytes
        );
        if self.spill_store_bytes + self.spill_load_bytes > 0 {
            md.push_str(&format!(
                ", **spills {} B stored / {} B loaded per thread**",
                self.spill_store_bytes, self.spill_load_bytes
            ));
        }
        md.push('\n');
        if let Some(s) = &self.sass {
            let ops: Vec<String> = s
                .top_opcodes
                .iter()
                .take(6)
                .map(|(o, n)| format!("`{o}` {n}"))
                .collect();
            md.push_str(&format!(
                "\nSASS: {} instructions; {}",
                s.instructions,
                ops.join(", ")
            ));
            if s.ldgsts_bypass + s.ldgsts_l1 > 0 {
                md.push_str(&format!(
                    "; async copies: {} `LDGSTS.BYPASS` (skip L1), {} `LDGSTS` through L1",
                    s.ldgsts_bypass, s.ldgsts_l1
                ));
            }
            if s.local_loads + s.local_stores > 0 {
                md.push_str(&format!(
                    "; local memory: {} `LDL`, {} `STL`",
                    s.local_loads, s.local_stores
                ));
            }
            md.push('\n');
        }
        md
    }
}

/// The compiler's report for one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompiledFacts {
    /// Which compiler, for the user (`nvcc 12.8 (V12.8.93)`).
    pub toolkit: String,
    /// Every kernel and instantiation it reported.
    pub kernels: Vec<CompiledKernel>,
    /// What nvcc, ptxas and the host compiler said about this file (errors, warnings,
    /// notes), for the front ends to show beside the rules' diagnostics.
    pub messages: Vec<CompilerNote>,
}

/// One message of the compiler about the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompilerNote {
    /// 1-based line (`None`: about the whole file).
    pub line: Option<u32>,
    /// 1-based column in characters, when the compiler showed one.
    pub column: Option<u32>,
    /// How bad it is (a note is a [`Severity::Hint`]).
    pub severity: Severity,
    /// The diagnostic number, when printed (`177-D`).
    pub code: Option<String>,
    /// The message.
    pub message: String,
    /// Which tool spoke: `nvcc`, `ptxas` or `host`.
    pub tool: String,
}

impl CompiledFacts {
    /// The instantiations of the kernel whose name without namespaces is `short`,
    /// those for `arch` first.
    pub fn kernel<'a>(&'a self, short: &str, arch: &str) -> Vec<&'a CompiledKernel> {
        let mut v: Vec<&CompiledKernel> = self
            .kernels
            .iter()
            .filter(|k| k.base_name == short)
            .collect();
        v.sort_by_key(|k| (k.arch != arch, std::cmp::Reverse(k.registers)));
        v
    }
}

/// The id of the spills diagnostic.
pub const SPILLS_RULE: &str = "resources/spills";

/// `resources/spills` for each kernel (defined at `name_range`) whose compiled
/// instantiation spills.
pub fn spill_diagnostics(
    facts: &CompiledFacts,
    kernels: &[(String, TextRange, bool)],
    arch: &str,
    level: Option<RuleLevel>,
) -> Vec<RuleDiagnostic> {
    let severity = match level {
        Some(RuleLevel::Off) => return Vec::new(),
        Some(RuleLevel::Level(s)) => s,
        None => Severity::Warning,
    };
    let mut out = Vec::new();
    for (name, range, has_bounds) in kernels {
        let short = kernaut_syntax::short_name(name);
        let spilling: Vec<&CompiledKernel> = facts
            .kernel(short, arch)
            .into_iter()
            .filter(|k| k.spill_store_bytes > 0 || k.spill_load_bytes > 0)
            .collect();
        let Some(worst) = spilling
            .iter()
            .max_by_key(|k| k.spill_store_bytes + k.spill_load_bytes)
        else {
            continue;
        };
        let which = if spilling.len() > 1 || worst.name.contains('<') {
            format!(" (instantiation `{}`)", worst.name)
        } else {
            String::new()
        };
        out.push(RuleDiagnostic {
            rule: SPILLS_RULE,
            severity,
            range: range.clone(),
            message: format!(
                "`{short}`{which} spills registers to local memory on {}: {} bytes stored and {} bytes loaded per thread, with {} registers ({})",
                worst.arch, worst.spill_store_bytes, worst.spill_load_bytes, worst.registers, facts.toolkit
            ),
            wiki: if *has_bounds {
                "pitfall-local-memory-spills#P3".into()
            } else {
                "pitfall-local-memory-spills#P1".into()
            },
            fixes: Vec::new(),
        });
    }
    out
}

/// The rule whose guess the SASS can confirm or clear.
const L1_MODE_RULE: &str = "async-copy/l1-access-mode";

/// `async-copy/l1-access-mode` guesses from the source that async copies go through L1;
/// the SASS of the kernel holding the copy says for sure: every `LDGSTS` is `.BYPASS`
/// (the finding goes), or some are not (the finding says the SASS confirms it).
pub fn check_l1_mode_against_sass(
    facts: &CompiledFacts,
    kernels: &[kernaut_syntax::Function],
    arch: &str,
    out: &mut Vec<RuleDiagnostic>,
) {
    out.retain_mut(|d| {
        if d.rule != L1_MODE_RULE {
            return true;
        }
        let Some(k) = kernels
            .iter()
            .find(|k| k.range.start <= d.range.start && d.range.end <= k.range.end)
        else {
            return true;
        };
        let short = kernaut_syntax::short_name(&k.name);
        let sass: Vec<&SassFacts> = facts
            .kernel(short, arch)
            .into_iter()
            .filter(|c| c.arch == arch)
            .filter_map(|c| c.sass.as_ref())
            .collect();
        if sass.is_empty() {
            return true;
        }
        let l1: u32 = sass.iter().map(|s| s.ldgsts_l1).sum();
        let bypass: u32 = sass.iter().map(|s| s.ldgsts_bypass).sum();
        if l1 == 0 && bypass > 0 {
            return false;
        }
        if l1 > 0 {
            d.message.push_str(&format!(
                " The SASS of `{short}` confirms it: {l1} `LDGSTS` through L1, {bypass} with `.BYPASS`."
            ));
        }
        true
    });
}
