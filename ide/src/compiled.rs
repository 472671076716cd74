//! What the compiler said about a file's kernels (registers, spills, shared memory),
//! handed to the host by a front end that ran `nvcc`/`ptxas` (`ide` runs nothing). The
//! occupancy model then uses the real register count, and a kernel that spills gets the
//! `resources/spills` diagnostic.

use kernaut_syntax::TextRange;

use crate::config::{RuleLevel, Severity};
use crate::rules::RuleDiagnostic;

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
}

/// The compiler's report for one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompiledFacts {
    /// Which compiler, for the user (`nvcc 12.8 (V12.8.93)`).
    pub toolkit: String,
    /// Every kernel and instantiation it reported.
    pub kernels: Vec<CompiledKernel>,
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
pub(crate) fn spill_diagnostics(
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
        let short = name.rsplit("::").next().unwrap_or(name);
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
