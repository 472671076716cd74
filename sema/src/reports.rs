//! Occupancy and shared-memory bank reports for the code under the cursor.
//!
//! Both run `kernaut-gpu`'s models on what the file determines, and record every
//! assumption they had to make so that hovers can say it: where the block size came
//! from, where the register count came from (the real count needs ptxas), which loop
//! variables were held at their start value.

use kernaut_gpu::occupancy::{occupancy, Occupancy, OccupancyInput};
use kernaut_gpu::Arch;
use kernaut_syntax::{Function, SharedAccess};

use crate::analysis::{Analysis, FileId};
use crate::model::Scope;

pub use crate::model::{BankAnalysis, BlockSource};

/// Where a register count came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegsSource {
    /// The limit `__launch_bounds__(max_threads, min_blocks)` implies: the compiler
    /// keeps to at most this many.
    LaunchBounds {
        /// The first argument.
        max_threads: u32,
        /// The second argument (1 when absent).
        min_blocks: u32,
    },
    /// [`crate::AnalysisConfig::default_regs_per_thread`]: a typical count, assumed.
    Default,
    /// `registers = N` in the `.kernaut.toml` that applies: assumed, as the user set it.
    Project,
    /// A `// kernaut: registers=N` comment above the kernel: assumed, as the user set it.
    Comment,
    /// The count the compiler (ptxas) reported for the kernel.
    Compiler,
}

impl RegsSource {
    /// Where the count came from, as every front end shows it: `ptxas`,
    /// `.kernaut.toml`, `comment`, `__launch_bounds__`, `assumed`.
    pub fn label(&self) -> &'static str {
        match self {
            RegsSource::Compiler => "ptxas",
            RegsSource::Project => ".kernaut.toml",
            RegsSource::Comment => "comment",
            RegsSource::LaunchBounds { .. } => "__launch_bounds__",
            RegsSource::Default => "assumed",
        }
    }
}

/// The occupancy of a kernel at the launch configuration found.
#[derive(Clone, Debug, PartialEq)]
pub struct OccupancyReport {
    /// The kernel.
    pub kernel: String,
    /// The architecture modelled.
    pub arch: Arch,
    /// The block size, x, y, z.
    pub block: [u32; 3],
    /// Where the block size came from.
    pub block_source: BlockSource,
    /// Registers per thread assumed.
    pub regs_per_thread: u32,
    /// Where the register count came from.
    pub regs_source: RegsSource,
    /// Static shared memory the kernel declares, in bytes.
    pub static_smem: u32,
    /// Dynamic shared memory from the launch, in bytes.
    pub dynamic_smem: u32,
    /// The whole input the model ran on (the figures above, the `__launch_bounds__`
    /// maximum, the carveout and the opt-in limit): where a what-if starts
    /// ([`OccupancyReport::what_if`]).
    pub input: OccupancyInput,
    /// The model's answer, or why it rejects the configuration.
    pub result: Result<Occupancy, String>,
    /// Caveats in sentences (unknown sizes, the register estimate).
    pub notes: Vec<String>,
}

impl OccupancyReport {
    /// The model's answer for this kernel with some inputs changed, as an interactive
    /// what-if asks it (`ktui`'s occupancy panel): the report's own input with
    /// `threads`, `regs`, `static_smem` and `dynamic_smem` in place of those found, on
    /// `arch`; the launch bounds, carveout and opt-in limit stay the report's. With
    /// nothing changed it is the report's own answer, the figure the hover and the lens
    /// show. Returns the input it ran on and the answer.
    pub fn what_if(
        &self,
        arch: Arch,
        threads: u32,
        regs: u32,
        static_smem: u32,
        dynamic_smem: u32,
    ) -> (OccupancyInput, Result<Occupancy, String>) {
        let input = OccupancyInput {
            threads_per_block: threads,
            regs_per_thread: regs,
            static_smem,
            dynamic_smem,
            ..self.input.clone()
        };
        if arch == self.arch && input == self.input {
            return (input, self.result.clone());
        }
        let result = occupancy(arch, &input).map_err(|e| e.to_string());
        (input, result)
    }

    /// The binding limiters, by name (`registers`, `shared memory`), or an empty list.
    pub fn limiter_names(&self) -> Vec<&'static str> {
        match &self.result {
            Ok(o) => o.limiters.iter().map(|l| l.name()).collect(),
            Err(_) => Vec::new(),
        }
    }
}

/// The block size used for `kernel` ([`crate::model::launch_config`]), its launch's
/// dynamic shared memory and notes.
pub fn block_for(
    analysis: &Analysis,
    path: &str,
    kernel: Option<&Function>,
) -> ([u32; 3], BlockSource, Option<u32>, Vec<String>) {
    let Some(scope) = Scope::of(analysis, path) else {
        return (
            analysis.config.default_block,
            BlockSource::Default,
            None,
            Vec::new(),
        );
    };
    let c = crate::model::launch_config(&scope, kernel);
    (c.block, c.source, c.dynamic_smem, c.notes)
}

pub use crate::model::launch_bounds_register_limit;

/// The register count a `// kernaut: registers=N` comment sets for the function that
/// starts at byte `start`: on one of the few lines just above it (a template header
/// may stand between them).
pub fn registers_comment(text: &str, start: usize) -> Option<u32> {
    // Only the text just above the function is read (a big file's kernels are many).
    let end = start.min(text.len());
    let mut from = end.saturating_sub(1024);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let before = text.get(from..end)?;
    if !before.contains("kernaut:") {
        return None;
    }
    for line in before.lines().rev().take(4) {
        let t = line.trim();
        if let Some(pos) = t.find("kernaut:") {
            let rest = t[pos + "kernaut:".len()..].trim_start();
            if let Some(v) = rest.strip_prefix("registers") {
                let v = v.trim_start().strip_prefix('=')?.trim_start();
                let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
                return digits.parse().ok().filter(|r| *r > 0);
            }
        }
        if t.ends_with('}') || t.ends_with(';') {
            break;
        }
    }
    None
}

/// The occupancy of `kernel` (defined in `path`) at the launch configuration found.
pub fn occupancy_for(analysis: &Analysis, path: &str, kernel: &str) -> Option<OccupancyReport> {
    let file = analysis.file(path)?;
    // A build for targets older than the tables' rows (sm_35 alone): not modelled.
    if !analysis.config.targets.is_empty() && !crate::config::modelled(&analysis.config.targets) {
        return None;
    }
    let facts = file.facts();
    let k = facts.kernel(kernel)?;
    // A template kernel: its launch bounds and shared sizes in the instantiation chosen.
    let inst = crate::instances::chosen_instantiation(facts, kernel);
    let bound: &[(String, i64)] = inst.as_ref().map_or(&[], |i| &i.bound);
    let bound_k = crate::instances::bind_function(facts, k, bound);
    let k = &bound_k;
    let arch = analysis.config.arch;
    let limits = arch.limits();
    let (block, block_source, dynamic, mut notes) = block_for(analysis, path, Some(k));
    match &inst {
        Some(i) => notes.insert(
            0,
            format!(
                "Template arguments: {}.",
                crate::instances::chosen_phrase(i)
            ),
        ),
        None => {
            let unbound = crate::instances::unbound_params(facts, k);
            if let Some(s) = crate::instances::unbound_sentence(kernel, &unbound) {
                notes.insert(0, s);
            }
        }
    }
    let compiled = analysis.compiled_kernel(path, crate::analysis::short_name(kernel));
    // The count assumed until ptxas reports one: the kernel's comment, the project's
    // `registers`, else the configured typical count. `__launch_bounds__` only caps it.
    let (assumed, assumed_source) = match registers_comment(file.source.text(), k.range.start) {
        Some(r) => (r, RegsSource::Comment),
        None => match analysis.config_for_path(path).registers {
            Some(r) => (r, RegsSource::Project),
            None => (analysis.config.default_regs_per_thread, RegsSource::Default),
        },
    };
    let assumed = assumed.clamp(1, limits.max_regs_per_thread);
    let lb = crate::model::launch_bounds_regs(limits, k);
    let lb_limit = lb.map(|l| l.limit);
    let (regs_per_thread, regs_source) = match lb {
        _ if compiled.is_some() => (
            compiled.as_ref().map_or(0, |(_, v)| v[0].registers),
            RegsSource::Compiler,
        ),
        Some(l) if l.limit < assumed => (
            l.limit,
            RegsSource::LaunchBounds {
                max_threads: l.max_threads,
                min_blocks: l.min_blocks,
            },
        ),
        _ => (assumed, assumed_source),
    };
    // In the instantiation chosen, a template's rows are bound (`t[BM][BN]`).
    let bound_decls: Vec<_> = file
        .shared_in(kernel)
        .map(|d| crate::instances::bind_shared(facts, d, bound))
        .collect();
    let shared = crate::model::static_shared(&bound_decls);
    for name in &shared.unknown {
        notes.push(format!(
            "The size of `__shared__ {name}` is not known from the file; it is left out."
        ));
    }
    let static_smem = shared.bytes_u32();
    let dynamic_smem = dynamic.unwrap_or(0);
    if dynamic.is_none() && file.shared_in(kernel).any(|d| d.is_extern) {
        notes.push(
            "The kernel uses `extern __shared__` memory but no launch gives its size; 0 bytes assumed."
                .into(),
        );
    }
    let threads = block.iter().fold(1u32, |a, b| a.saturating_mul(*b));
    let input = OccupancyInput {
        threads_per_block: threads,
        regs_per_thread,
        static_smem,
        dynamic_smem,
        carveout: None,
        launch_bounds_max_threads: k
            .launch_bounds
            .as_ref()
            .and_then(|lb| lb.max_threads)
            .and_then(|v| u32::try_from(v).ok()),
        max_dynamic_smem: None,
    };
    let result = analysis.cache.occupancy(arch, &input);
    let report_input = input.clone();
    let set_it = "set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count";
    let cap = match (lb_limit, regs_source) {
        (Some(l), RegsSource::Default | RegsSource::Project | RegsSource::Comment) => {
            format!(" (`__launch_bounds__` allows up to {l})")
        }
        _ => String::new(),
    };
    notes.push(match regs_source {
        RegsSource::LaunchBounds { .. } => format!(
            "Registers: {regs_per_thread} per thread, the most `__launch_bounds__` allows, below the {assumed} assumed otherwise; {set_it}."
        ),
        RegsSource::Default => format!(
            "Registers: {regs_per_thread} per thread is an assumption, a typical count{cap}; {set_it}."
        ),
        RegsSource::Project => format!(
            "Registers: {regs_per_thread} per thread, as `registers` in `.kernaut.toml` sets{cap}; ptxas (`-Xptxas -v`) reports the real count."
        ),
        RegsSource::Comment => format!(
            "Registers: {regs_per_thread} per thread, as the `// kernaut: registers=` comment above the kernel sets{cap}; ptxas (`-Xptxas -v`) reports the real count."
        ),
        RegsSource::Compiler => {
            let (facts, v) = compiled.as_ref().map_or(("the compiler", &[][..]), |(f, v)| (f.toolkit.as_str(), &v[..]));
            let arch_note = v.first().map_or(String::new(), |k| format!(" for {}", k.arch));
            let inst = if v.len() > 1 {
                format!(" ({} instantiations; the one with the most registers is shown)", v.len())
            } else {
                String::new()
            };
            format!("Registers: {regs_per_thread} per thread, as ptxas reported{arch_note} ({facts}){inst}.")
        }
    });
    Some(OccupancyReport {
        kernel: kernel.to_string(),
        arch,
        block,
        block_source,
        regs_per_thread,
        regs_source,
        static_smem,
        dynamic_smem,
        input: report_input,
        result,
        notes,
    })
}

pub use crate::instances::{
    assumed_defaults, instantiated_offset, launched_instantiations, offset_in, Instantiation,
};

/// [`crate::model::bank`] for an access of the file at `path`.
pub fn bank_report(analysis: &Analysis, path: &str, access: &SharedAccess) -> Option<BankAnalysis> {
    let scope = Scope::of(analysis, path)?;
    let all = analysis.file(path)?.accesses();
    crate::model::bank(&scope, all, access)
}

pub use crate::model_cache::FxHashMap;

use crate::analysis::{guarded, Cancellable};

/// The occupancy of `kernel` (defined in `file`) at the launch configuration found.
pub fn occupancy_query(
    db: &Analysis,
    file: FileId,
    kernel: &str,
) -> Cancellable<Option<OccupancyReport>> {
    let (path, _) = db.data(file)?;
    db.query("occupancy", || {
        crate::reports::occupancy_for(&db.for_path(path), path, kernel)
    })
}

/// The bank model run on one access of `file` (from [`Analysis::shared_accesses`]).
pub fn bank(
    db: &Analysis,
    file: FileId,
    access: &SharedAccess,
) -> Cancellable<Option<BankAnalysis>> {
    let (path, _) = db.data(file)?;
    db.query("bank", || {
        crate::reports::bank_report(&db.for_path(path), path, access)
    })
}

/// The occupancy of `kernel` (defined in `path`), for features inside a query.
pub fn occupancy_at(db: &Analysis, path: &str, kernel: &str) -> Option<OccupancyReport> {
    guarded(|| crate::reports::occupancy_for(db, path, kernel)).flatten()
}

/// The bank model of an access of `path`, for features inside a query.
pub fn bank_at(db: &Analysis, path: &str, access: &SharedAccess) -> Option<BankAnalysis> {
    guarded(|| crate::reports::bank_report(db, path, access)).flatten()
}
