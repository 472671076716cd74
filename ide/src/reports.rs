//! Occupancy and shared-memory bank reports for the code under the cursor.
//!
//! Both run `kernaut-gpu`'s models on what the file determines, and record every
//! assumption they had to make so that hovers can say it: where the block size came
//! from, where the register count came from (the real count needs ptxas), which loop
//! variables were held at their start value.

use kernaut_syntax::short_name;

use kernaut_gpu::banks::BankReport;
use kernaut_gpu::occupancy::{occupancy, Occupancy, OccupancyInput};
use kernaut_gpu::Arch;
use kernaut_syntax::{BinOp, FileFacts, Function, IndexExpr, SharedAccess, SourceFile, TextRange};

use crate::analysis::{Analysis, FileId};
use crate::model::Scope;

/// Where a block size came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockSource {
    /// A launch `k<<<grid, block>>>` in `file` whose block the file determines.
    Launch {
        /// The file holding the launch (the snapshot's [`crate::Analysis::path`] names
        /// it); `None` for a file checked outside a host.
        file: Option<FileId>,
        /// The range of the launch.
        range: TextRange,
        /// 1-based line of the launch.
        line: u32,
    },
    /// The kernel's `__launch_bounds__` maximum (no launch with a known block was seen).
    LaunchBounds,
    /// [`crate::AnalysisConfig::default_block`] (no launch was seen).
    Default,
}

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

/// The bank model run on one shared-memory access, for warp 0.
#[derive(Clone, Debug, PartialEq)]
pub struct BankAnalysis {
    /// The access.
    pub access: SharedAccess,
    /// The block size the lanes were laid out in.
    pub block: [u32; 3],
    /// Where the block size came from.
    pub block_source: BlockSource,
    /// Why the block is not certain (no launch gives it, the launches differ), when
    /// it is not.
    pub block_uncertain: Option<String>,
    /// The other blocks the kernel may run with, and the conflict degree under each
    /// (`None`: not modelled there).
    pub other_blocks: Vec<([u32; 3], Option<u32>)>,
    /// Whether the access is inside a branch only part of the warp takes
    /// (`if (lane < 10)`).
    pub partial_warp: bool,
    /// The adjacent accesses ptxas merges this one with into one wide access.
    pub merged: Option<crate::model::Merged>,
    /// The byte offset as evaluated, in the text form of `kernaut-gpu` expressions.
    pub lowered: Option<String>,
    /// Loop variables held at their start value: (name, start).
    pub held_loops: Vec<(String, String)>,
    /// Values the warp shares that the file does not fix; the model tried several and
    /// they did not change the result.
    pub uniforms: Vec<String>,
    /// The asynchronous copy whose destination the access is (`__pipeline_memcpy_async`),
    /// when its size decided the width: the model then runs the copy's shared write.
    pub copy: Option<String>,
    /// The template arguments of the kernel's launched instantiation the offset was
    /// evaluated with, when they differ from the defaults.
    pub instantiation: Option<Instantiation>,
    /// The template defaults assumed (`OFFSET = 0`) when the file never launches the
    /// kernel.
    pub assumed_defaults: Option<String>,
    /// The bytes per lane modelled: the element (or cast) size, or the copy's size.
    pub width: Option<u64>,
    /// The byte address each lane of warp 0 touches (`None`: inactive or unknown).
    pub addresses: Vec<Option<i64>>,
    /// The model's report, or why the access cannot be modelled.
    pub result: Result<BankReport, String>,
}

/// The block size used for `kernel` ([`crate::model::launch_config`]), its launch's
/// dynamic shared memory and notes.
pub(crate) fn block_for(
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
pub(crate) fn registers_comment(text: &str, start: usize) -> Option<u32> {
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

pub(crate) fn occupancy_for(
    analysis: &Analysis,
    path: &str,
    kernel: &str,
) -> Option<OccupancyReport> {
    let file = analysis.file(path)?;
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

/// The template arguments the first launch of a kernel in the file binds, where they
/// differ from the defaults the kernel's own text folds to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instantiation {
    /// The bound parameters and their values, in parameter order; empty for the
    /// defaults.
    pub bound: Vec<(String, i64)>,
    /// How many different instantiations of the kernel the file launches.
    pub of: usize,
}

impl Instantiation {
    /// `` `OFFSET = 4, BK = 16` ``, or `the template defaults`.
    pub fn describe(&self) -> String {
        if self.bound.is_empty() {
            return "the template defaults".to_string();
        }
        let b = self
            .bound
            .iter()
            .map(|(n, v)| format!("{n} = {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!("`{b}`")
    }

    /// Where a finding or a hover names the instantiation: `the instantiation the file
    /// launches: `OFFSET = 4`` or `the worst of the 2 instantiations the file launches:
    /// the template defaults`.
    pub fn phrase(&self) -> String {
        if self.of > 1 {
            format!(
                "the worst of the {} instantiations the file launches: {}",
                self.of,
                self.describe()
            )
        } else {
            format!("the instantiation the file launches: {}", self.describe())
        }
    }
}

/// The instantiations of `kernel` that the file's launches make, in launch order, each
/// once: the template arguments folded at each launch, kept where they differ from the
/// defaults. Empty when the kernel has no template parameters, or every launch uses the
/// defaults.
pub fn launched_instantiations(facts: &FileFacts, kernel: &str) -> Vec<Instantiation> {
    let Some(f) = facts.kernel(kernel) else {
        return Vec::new();
    };
    if f.template_params.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Vec<(String, i64)>> = Vec::new();
    for launch in facts.launches.iter().filter(|l| l.kernel == kernel) {
        let args = launch
            .template_args
            .as_deref()
            .map(kernaut_syntax::split_template_args)
            .unwrap_or_default();
        let mut bound = Vec::new();
        for (p, a) in f.template_params.iter().zip(&args) {
            if p.is_type {
                continue;
            }
            // Inside a host function template, its parameters as its call binds them.
            let Some(v) = facts.fold_text_with(a, launch.range.start, &launch.caller_bound) else {
                continue;
            };
            if p.default_value != Some(v) {
                bound.push((p.name.clone(), v));
            }
        }
        if !out.contains(&bound) {
            out.push(bound);
        }
    }
    if out.iter().all(Vec::is_empty) {
        return Vec::new();
    }
    let of = out.len();
    out.into_iter()
        .map(|bound| Instantiation { bound, of })
        .collect()
}

/// The value template parameters of `a`'s kernel with their defaults (`OFFSET = 0`), when
/// the file never launches the kernel: the analysis then assumed the defaults.
pub fn assumed_defaults(facts: &FileFacts, a: &SharedAccess) -> Option<String> {
    let name = a.function.as_deref()?;
    let f = facts.kernel(name)?;
    if facts.launches.iter().any(|l| l.kernel == name) {
        return None;
    }
    let defaults: Vec<String> = f
        .template_params
        .iter()
        .filter(|p| !p.is_type)
        .filter_map(|p| Some(format!("{} = {}", p.name, p.default_value?)))
        .collect();
    (!defaults.is_empty()).then(|| defaults.join(", "))
}

/// The byte offset of `access` in the instantiation `inst`: its constants folded again
/// with the bound template arguments, and the rows of its array re-laid out where the
/// dimensions depend on them (`s[BK][BM + OFFSET]`).
pub fn instantiated_offset(
    facts: &FileFacts,
    access: &SharedAccess,
    inst: &Instantiation,
) -> IndexExpr {
    let at = access.range.start;
    let refold = |t: &str| facts.fold_text_with(t, at, &inst.bound);
    let mut offset = access.byte_offset.rebind(&refold);
    let Some(decl) = facts
        .shared_named(&access.array, at)
        .filter(|_| access.root == access.array)
    else {
        return offset;
    };
    let dims: Vec<Option<u64>> = decl
        .dims_text
        .iter()
        .map(|t| {
            facts
                .fold_text_with(t, decl.range.start, &inst.bound)
                .and_then(|v| u64::try_from(v).ok())
        })
        .collect();
    if dims == decl.dims || access.indices.len() != dims.len() {
        return offset;
    }
    let indices: Vec<IndexExpr> = access.indices.iter().map(|i| i.rebind(&refold)).collect();
    let linear = |dims: &[Option<u64>]| -> Option<IndexExpr> {
        let mut lin = IndexExpr::Int(0);
        for (k, i) in indices.iter().enumerate() {
            if k > 0 {
                let d = i64::try_from((*dims.get(k)?)?).ok()?;
                lin = IndexExpr::binary(lin, BinOp::Mul, IndexExpr::Int(d));
            }
            lin = IndexExpr::binary(lin, BinOp::Add, i.clone());
        }
        Some(lin)
    };
    let unknown = || {
        IndexExpr::Unknown(format!(
            "the dimensions of `{}` with {} are not known",
            access.array,
            inst.describe()
        ))
    };
    let (Some(new), Some(elem)) = (
        linear(&dims),
        access.element_size.and_then(|e| i64::try_from(e).ok()),
    ) else {
        return unknown();
    };
    if access.cast_type.is_none() {
        // No vector index on top: the new rows' flattening is the whole offset (the
        // rows as the kernel's text folds them may not be known at all: `t[BM][BN]`).
        return IndexExpr::binary(new, BinOp::Mul, IndexExpr::Int(elem));
    }
    let Some(old) = linear(&decl.dims) else {
        return unknown();
    };
    // The offset as lowered holds the old rows' flattening with the vector index of the
    // cast on top: move it to the new rows'.
    offset = IndexExpr::binary(
        offset,
        BinOp::Add,
        IndexExpr::binary(
            IndexExpr::binary(new, BinOp::Sub, old),
            BinOp::Mul,
            IndexExpr::Int(elem),
        ),
    );
    offset
}

/// The byte offset of `access` in `inst` (as lowered for the defaults).
pub fn offset_in(facts: &FileFacts, access: &SharedAccess, inst: &Instantiation) -> IndexExpr {
    if inst.bound.is_empty() {
        access.byte_offset.clone()
    } else {
        instantiated_offset(facts, access, inst)
    }
}

/// [`crate::model::bank`] for an access of the file at `path`.
pub(crate) fn bank_report(
    analysis: &Analysis,
    path: &str,
    access: &SharedAccess,
) -> Option<BankAnalysis> {
    let scope = Scope::of(analysis, path)?;
    let all = analysis.file(path)?.accesses();
    crate::model::bank(&scope, all, access)
}

pub(crate) use crate::model_cache::{BankFailure, BankModel, BankShape, FxHashMap, ReportCache};

/// Copies whose destination is their first argument and whose size is the third.
const ASYNC_COPIES: &[&str] = &["__pipeline_memcpy_async", "memcpy_async"];

/// The asynchronous copy that `access` (an address taken) is the destination of, and
/// its size in bytes when the file fixes it at 4, 8 or 16.
pub(crate) fn async_copy_of(file: &SourceFile, access: &SharedAccess) -> Option<(String, u64)> {
    let calls = file.calls_in(access.range.start);
    let call = calls
        .iter()
        .filter(|c| {
            c.arg_ranges
                .first()
                .is_some_and(|r| r.start <= access.range.start && access.range.end <= r.end)
        })
        .min_by_key(|c| c.range.len())?;
    let last = short_name(&call.callee);
    if !ASYNC_COPIES.contains(&last) {
        return None;
    }
    // `cuda::memcpy_async(group, dst, src, size, pipe)` takes the group first.
    let size_arg = if call.args.len() >= 5 { 3 } else { 2 };
    let size_text = call.args.get(size_arg)?;
    let size_text = size_text
        .strip_prefix("cuda::aligned_size_t<")
        .and_then(|t| t.split('>').next())
        .unwrap_or(size_text);
    let size = file.facts().fold_text(size_text, call.range.start)?;
    let size = u64::try_from(size)
        .ok()
        .filter(|s| matches!(s, 4 | 8 | 16))?;
    Some((call.callee_text.clone(), size))
}

#[cfg(test)]
mod tests {
    use crate::{AnalysisConfig, AnalysisHost};

    const FILE: &str = r#"
#define TILE 32
__global__ void a(float* out, int n) {
    __shared__ float t[TILE][TILE + 1];
    for (int j = 0; j < TILE; j += 8)
        t[threadIdx.y + j][threadIdx.x] = out[n];
    out[threadIdx.x] = t[threadIdx.x][blockIdx.x];
}
__global__ void b(float* out, int n) {
    __shared__ float t[TILE][TILE + 1];
    for (int j = 0; j < TILE; j += 8)
        t[threadIdx.y + j][threadIdx.x] = out[n];
    out[threadIdx.x] = t[threadIdx.x][blockIdx.x];
}
void launch(float* out, int n) {
    a<<<1, dim3(32, 8)>>>(out, n);
    b<<<1, dim3(8, 32)>>>(out, n);
}
"#;

    /// Reports from the cache (a second call, and after an edit elsewhere) are those
    /// a fresh host computes, and the block is part of what the cache tells apart.
    #[test]
    fn cached_reports_match_fresh_ones() {
        let mut host = AnalysisHost::new(AnalysisConfig::default());
        host.set_file("/k.cu", FILE);
        let reports = |host: &AnalysisHost| {
            let a = host.analysis();
            let f = a.file_id("/k.cu").unwrap();
            let banks: Vec<_> = a
                .shared_accesses(f)
                .unwrap()
                .iter()
                .map(|acc| a.bank(f, acc).unwrap())
                .collect();
            let occ: Vec<_> = ["a", "b"]
                .iter()
                .map(|k| a.occupancy(f, k).unwrap())
                .collect();
            (banks, occ)
        };
        let first = reports(&host);
        assert_eq!(first.0.len(), 4);
        assert_eq!(reports(&host), first);
        let fresh = |text: &str| {
            let mut h = AnalysisHost::new(AnalysisConfig::default());
            h.set_file("/k.cu", text);
            reports(&h)
        };
        assert_eq!(fresh(FILE), first);
        // Same index, different blocks: different lanes.
        let (x, y) = (first.0[0].as_ref().unwrap(), first.0[2].as_ref().unwrap());
        assert_eq!(x.lowered, y.lowered);
        assert_ne!(x.addresses, y.addresses);

        let at = FILE.find("void launch").unwrap();
        host.apply_edit("/k.cu", at..at, "// edited\n");
        let edited = format!("{}// edited\n{}", &FILE[..at], &FILE[at..]);
        assert_eq!(reports(&host), fresh(&edited));
    }
}

use crate::analysis::{guarded, Cancellable};

/// The model queries of a snapshot, here with the reports they build.
impl crate::analysis::Analysis {
    /// The occupancy of `kernel` (defined in `file`) at the launch configuration found.
    pub fn occupancy(&self, file: FileId, kernel: &str) -> Cancellable<Option<OccupancyReport>> {
        let (path, _) = self.data(file)?;
        self.query("occupancy", || {
            crate::reports::occupancy_for(&self.for_path(path), path, kernel)
        })
    }

    /// The bank model run on one access of `file` (from [`Analysis::shared_accesses`]).
    pub fn bank(&self, file: FileId, access: &SharedAccess) -> Cancellable<Option<BankAnalysis>> {
        let (path, _) = self.data(file)?;
        self.query("bank", || {
            crate::reports::bank_report(&self.for_path(path), path, access)
        })
    }

    /// The occupancy of `kernel` (defined in `path`), for features inside a query.
    pub(crate) fn occupancy_at(&self, path: &str, kernel: &str) -> Option<OccupancyReport> {
        guarded(|| crate::reports::occupancy_for(self, path, kernel)).flatten()
    }

    /// The bank model of an access of `path`, for features inside a query.
    pub(crate) fn bank_at(&self, path: &str, access: &SharedAccess) -> Option<BankAnalysis> {
        guarded(|| crate::reports::bank_report(self, path, access)).flatten()
    }
}
