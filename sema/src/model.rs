//! The one model layer: every front end and every rule asks these functions, so that a
//! hover, a finding, a lens, an inlay hint, `ktui explain` and `kernaut-lsp check` tell
//! the same story about the same line.
//!
//! - [`launch_config`]: the block a kernel runs with, from the launches that reach it in
//!   every file of the host (or the file alone where the caller has no host), its
//!   `__launch_bounds__` maximum, or the configured default; with the other blocks
//!   that are plausible when the file does not fix one.
//! - [`static_shared`]: a kernel's static shared bytes, summed one way: the known sizes
//!   added (saturating), the declarations of unknown size named.
//! - [`launch_bounds_regs`]: the register limit `__launch_bounds__` implies.
//! - [`bank`]: the bank analysis of one access: degree, wavefronts and bytes under the
//!   block assumed, the degrees under the other plausible blocks, and adjacent scalar
//!   accesses that ptxas merges into one wide instruction ([`Merged`]).
//! - [`active_lanes`]: the lanes of warp 0 that the thread-dependent `if`s around an
//!   access let through, for the coalescing rule and the bank model's partial-warp note.

use kernaut_gpu::banks::{self, BankReport};
use kernaut_gpu::expr::{Loops, Valuation, SAMPLES};
use kernaut_gpu::ArchLimits;
use kernaut_syntax::{
    short_name, AccessKind, Axis, BinOp, EnclosingKind, FileFacts, Function, IndexExpr, LaunchSite,
    SharedAccess, SharedDecl, SourceFile, TextRange,
};

use std::sync::OnceLock;

pub use crate::shared_bytes::{static_shared, StaticShared};

use crate::analysis::Analysis;
use crate::instances::{assumed_defaults, launched_instantiations, offset_in, Instantiation};
use crate::line_index::{LineIndex, PositionEncoding};
use crate::model_cache::{BankFailure, BankModel, BankShape, ElementBytes, FxHashMap, ReportCache};

/// What the model reads: the file, where to look for launches, the default block and
/// the cache of model answers.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    /// The path of the file (as the host knows it).
    pub path: &'a str,
    /// The file.
    pub file: &'a SourceFile,
    /// The host's snapshot: launches in every file of it. `None`: the file's own only.
    pub host: Option<&'a Analysis>,
    /// The block assumed when no launch or `__launch_bounds__` gives one.
    pub default_block: [u32; 3],
    /// The models' answers by their inputs.
    pub cache: &'a ReportCache,
    /// Where a scope without a host keeps the file's line index (the host keeps its
    /// own per file).
    pub lines: Option<&'a OnceLock<LineIndex>>,
}

impl<'a> Scope<'a> {
    /// The scope of `path` in a host snapshot.
    pub fn of(analysis: &'a Analysis, path: &'a str) -> Option<Scope<'a>> {
        let file = analysis.file(path)?;
        Some(Scope {
            path,
            file: &file.source,
            host: Some(analysis),
            default_block: analysis.config.default_block,
            cache: &analysis.cache,
            lines: None,
        })
    }

    fn facts(&self) -> &'a FileFacts {
        self.file.facts()
    }

    /// The launches of `kernel` (by its name without namespaces where it has none):
    /// those of this file first, then the other files of the host by path.
    pub fn launches(&self, kernel: &'a str) -> Vec<(&'a str, &'a LaunchSite)> {
        match self.host {
            Some(a) => a.launches_of_ref(self.path, kernel).collect(),
            None => {
                let short = short_name(kernel);
                // Each launch of `kernel` is one of a kernel of its short name.
                self.facts()
                    .launches_by_short_name(short)
                    .into_iter()
                    .filter(|l| launches_kernel(l, kernel, short))
                    .map(|l| (self.path, l))
                    .collect()
            }
        }
    }

    /// The 1-based line of `offset` in the file at `path`.
    pub fn line_of(&self, path: &str, offset: usize) -> u32 {
        if let Some(f) = self.host.and_then(|a| a.file(path)) {
            return f.line_of(offset);
        }
        let text = self.file.text();
        if let Some(lines) = self.lines {
            let lines = lines.get_or_init(|| LineIndex::new(text));
            return lines
                .line_col(offset, PositionEncoding::Utf8)
                .line
                .saturating_add(1);
        }
        let upto = text.get(..offset.min(text.len())).unwrap_or(text);
        u32::try_from(memchr::memchr_iter(b'\n', upto.as_bytes()).count() + 1).unwrap_or(u32::MAX)
    }
}

/// Whether launch `l` launches `kernel` (whose name without namespaces is `short`): by
/// its name as written, or by its short name where `kernel` has no namespace. The
/// suffix test first: most launches of a file are of other kernels.
fn launches_kernel(l: &LaunchSite, kernel: &str, short: &str) -> bool {
    l.kernel.ends_with(short)
        && (l.kernel == kernel || (short == kernel && short_name(&l.kernel) == short))
}

/// What the rules' model reads beyond the file: the host (launches in every file of it,
/// its default block and cache), or, for a file checked alone, its own launches, the
/// default block of [`crate::AnalysisConfig::default`] and a cache of its own.
#[derive(Default)]
pub struct RuleModel<'a> {
    /// The snapshot and the path of the file checked, for a file of a host.
    pub host: Option<(&'a Analysis, &'a str)>,
    /// The cache of model results of a file checked alone.
    pub cache: ReportCache,
    /// The line index of a file checked alone, built on first use.
    pub lines: OnceLock<LineIndex>,
}

impl std::fmt::Debug for RuleModel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleModel")
            .field("path", &self.host.map(|(_, p)| p))
            .finish_non_exhaustive()
    }
}

/// The launch configuration of a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchConfig {
    /// The block the models use.
    pub block: [u32; 3],
    /// Where it came from.
    pub source: BlockSource,
    /// The dynamic shared memory of the launch that gave the block, when known.
    pub dynamic_smem: Option<u32>,
    /// Caveats in sentences.
    pub notes: Vec<String>,
    /// Other blocks the kernel may run with: the other launches' blocks, or, where no
    /// launch fixes the block, the shapes tried in its place (`plausible_blocks`).
    pub others: Vec<[u32; 3]>,
    /// Why the block is not certain, when it is not: a phrase.
    pub uncertain: Option<String>,
    /// Whether every launch in sight gives its block (`block` and `others` are then all
    /// the blocks the kernel runs with).
    pub every_block_known: bool,
}

/// The scalar parameters of `kernel` every launch in sight passes the same constant
/// (directly, or through a parameter of the host function around the launch that every
/// call of it passes as one constant): [`Analysis::fixed_kernel_args`] in a host, the
/// file's own launches and calls without one.
pub fn fixed_kernel_args(scope: &Scope<'_>, kernel: &Function) -> Vec<(String, i64)> {
    if let Some(host) = scope.host {
        return host.fixed_kernel_args(kernel).to_vec();
    }
    let facts = scope.file.facts();
    let short = kernaut_syntax::short_name(&kernel.name);
    let sites: Vec<(&str, &kernaut_syntax::LaunchSite)> = facts
        .launches
        .iter()
        .filter(|l| l.kernel == kernel.name || kernaut_syntax::short_name(&l.kernel) == short)
        .map(|l| (scope.path, l))
        .collect();
    let facts_of = |p: &str| (p == scope.path).then_some(facts);
    let calls_of = |name: &str| {
        let names: rustc_hash::FxHashSet<&str> = std::iter::once(name).collect();
        crate::analysis::calls_named(scope.file, &names)
            .into_iter()
            .map(|(_, c)| (scope.path.to_string(), c))
            .collect()
    };
    crate::analysis::fixed_args(kernel, &sites, &facts_of, &calls_of)
}

/// The launch configuration of `kernel`: its first launch (in this file, then the other
/// files of the host by path) with a known block, else its `__launch_bounds__` maximum,
/// else the configured default.
pub fn launch_config(scope: &Scope<'_>, kernel: Option<&Function>) -> LaunchConfig {
    let mut config = LaunchConfig {
        block: scope.default_block,
        source: BlockSource::Default,
        dynamic_smem: None,
        notes: Vec::new(),
        others: Vec::new(),
        uncertain: Some("no launch of the kernel was found".into()),
        every_block_known: false,
    };
    let Some(kernel) = kernel.filter(|k| k.is_kernel) else {
        config.uncertain = Some("the function is not a kernel".into());
        return config;
    };
    let launches = scope.launches(&kernel.name);
    let known: Vec<(&str, &LaunchSite, [u32; 3])> = launches
        .iter()
        .filter_map(|(p, l)| {
            let v = l.block.value?;
            Some((*p, *l, v.map(|d| u32::try_from(d).unwrap_or(0))))
        })
        .collect();
    let unknown_launch = launches.iter().find(|(_, l)| l.block.value.is_none());
    if let Some(&(file, l, dims)) = known.first() {
        let dynamic = match (&l.shared_bytes_text, l.shared_bytes) {
            (_, Some(v)) => Some(u32::try_from(v).unwrap_or(u32::MAX)),
            (Some(t), None) if !t.is_empty() => {
                config.notes.push(format!(
                    "The dynamic shared memory `{t}` is not known from the file; 0 bytes assumed."
                ));
                None
            }
            _ => None,
        };
        config.block = dims;
        config.source = BlockSource::Launch {
            file: scope.host.and_then(|a| a.file_id(file)),
            range: l.range.clone(),
            line: scope.line_of(file, l.range.start),
        };
        config.dynamic_smem = dynamic;
        config.uncertain = None;
        for &(_, _, b) in &known[1..] {
            if b != dims && !config.others.contains(&b) {
                config.others.push(b);
            }
        }
        if !config.others.is_empty() {
            config.uncertain = Some("the launches of the kernel use different blocks".into());
        }
        if let Some((_, l)) = unknown_launch {
            config.uncertain = Some(format!(
                "the block `{}` of another launch is not known from the file",
                l.block.text
            ));
        }
        config.every_block_known = unknown_launch.is_none();
        return config;
    }
    if let Some((_, l)) = unknown_launch {
        config.notes.push(format!(
            "The block `{}` of the launch is not known from the file.",
            l.block.text
        ));
        config.uncertain = Some(format!(
            "the block `{}` of the launch is not known from the file",
            l.block.text
        ));
    }
    if let Some(max) = kernel
        .launch_bounds
        .as_ref()
        .and_then(|lb| lb.max_threads)
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| *v > 0)
    {
        config.block = [max, 1, 1];
        config.source = BlockSource::LaunchBounds;
        if unknown_launch.is_none() {
            config.uncertain = Some(
                "no launch of the kernel was found; `__launch_bounds__` gives only the most threads"
                    .into(),
            );
        }
    }
    config
}

/// The block shape of kernel `function` when every launch of it agrees (the shape the
/// warp models evaluate in): the block [`launch_config`] takes from the launches, where
/// it is certain (every launch's block known, and all the same), else unknown. Read
/// from the same launches ([`Scope::launches`]) without the configuration's notes, as
/// the rules ask for it per access.
pub fn launch_shape(scope: &Scope<'_>, function: Option<&str>) -> [Option<i64>; 3] {
    let Some(kernel) = function
        .and_then(|f| scope.facts().kernel(f))
        .filter(|k| k.is_kernel)
    else {
        return [None; 3];
    };
    let mut shape: Option<[i64; 3]> = None;
    // Whether launch `l` leaves the shape certain (as [`Scope::launches`] picks them,
    // without collecting them).
    let mut agrees = |l: &LaunchSite| match (shape, l.block.value) {
        (_, None) => false,
        (None, Some(v)) => {
            shape = Some(v);
            true
        }
        (Some(s), Some(v)) => s == v,
    };
    let certain = match scope.host {
        Some(a) => a
            .launches_of_ref(scope.path, &kernel.name)
            .all(|(_, l)| agrees(l)),
        None => {
            let short = short_name(&kernel.name);
            scope
                .facts()
                .launches
                .iter()
                .filter(|l| launches_kernel(l, &kernel.name, short))
                .all(agrees)
        }
    };
    match shape {
        Some(v) if certain => v.map(Some),
        _ => [None; 3],
    }
}

impl LaunchConfig {
    /// The block when the launches fix it and agree on it, else unknown.
    pub fn shape(&self) -> [Option<i64>; 3] {
        match (&self.source, &self.uncertain) {
            (BlockSource::Launch { .. }, None) => self.block.map(|d| Some(i64::from(d))),
            _ => [None; 3],
        }
    }
}

/// Blocks tried in place of one the file does not fix, for an access whose offset is
/// `offset` in a function that uses `threadIdx.y`/`.z` (`two_d`): rows of 16, 8 and 4
/// threads (a warp then spans several rows), and `blockDim.x` of 32 to 256 where the
/// offset reads it.
fn plausible_blocks(offset: &IndexExpr, two_d: bool) -> Vec<[u32; 3]> {
    let mut out = Vec::new();
    if two_d || offset.mentions(&|e| matches!(e, IndexExpr::ThreadIdx(Axis::Y | Axis::Z))) {
        out.extend([[16, 2, 1], [8, 4, 1], [4, 8, 1]]);
    }
    if offset.mentions(&|e| matches!(e, IndexExpr::BlockDim(_))) {
        out.extend([[32, 1, 1], [64, 1, 1], [128, 1, 1], [256, 1, 1]]);
    }
    out
}

/// The static shared memory of `kernel` as it runs: for a template kernel the file
/// launches, in the instantiation with the most shared memory
/// ([`crate::instances::chosen_instantiation`]), its rows bound (`t[BM][BN]`); else its
/// declarations as written. Occupancy, the kernel and declaration hovers, code lenses,
/// `smem/over-capacity` and the padding budget all read this.
pub fn kernel_static_shared(facts: &FileFacts, kernel: &str) -> StaticShared {
    let inst = facts
        .kernel(kernel)
        .filter(|k| !k.template_params.is_empty())
        .and_then(|_| crate::instances::chosen_instantiation(facts, kernel));
    let decls = facts
        .shared
        .iter()
        .filter(|d| d.function.as_deref() == Some(kernel));
    match inst {
        Some(i) => {
            let bound: Vec<SharedDecl> = decls
                .map(|d| crate::instances::bind_shared(facts, d, &i.bound))
                .collect();
            static_shared(&bound)
        }
        None => static_shared(decls),
    }
}

/// [`static_shared`] of every function of a file at once (a file of many kernels asks
/// for each); template kernels through [`kernel_static_shared`].
pub struct StaticSharedTable<'a>(FxHashMap<&'a str, StaticShared>);

impl<'a> StaticSharedTable<'a> {
    /// The table of the static shared declarations of `facts`.
    pub fn new(facts: &'a FileFacts) -> StaticSharedTable<'a> {
        let mut by_function: FxHashMap<&str, Vec<&SharedDecl>> = FxHashMap::default();
        for d in &facts.shared {
            if let Some(f) = d.function.as_deref() {
                by_function.entry(f).or_default().push(d);
            }
        }
        let mut table: FxHashMap<&str, StaticShared> = by_function
            .into_iter()
            .map(|(f, decls)| (f, static_shared(decls)))
            .collect();
        for k in facts
            .kernels
            .iter()
            .filter(|k| !k.template_params.is_empty())
        {
            table.insert(k.name.as_str(), kernel_static_shared(facts, &k.name));
        }
        StaticSharedTable(table)
    }

    /// The static shared memory of the function named `name` (zero for one that
    /// declares none).
    pub fn get(&self, name: &str) -> StaticShared {
        self.0.get(name).cloned().unwrap_or_default()
    }
}

/// The register limit `__launch_bounds__(max_threads, min_blocks)` implies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBoundsRegs {
    /// The most registers per thread the compiler may use.
    pub limit: u32,
    /// The first argument.
    pub max_threads: u32,
    /// The second argument (1 when absent).
    pub min_blocks: u32,
}

/// The register limit a kernel's `__launch_bounds__` implies, when it has one with a
/// known maximum.
pub fn launch_bounds_regs(limits: &ArchLimits, kernel: &Function) -> Option<LaunchBoundsRegs> {
    let lb = kernel.launch_bounds.as_ref()?;
    let max_threads = u32::try_from(lb.max_threads?).ok().filter(|v| *v > 0)?;
    let min_blocks = lb
        .min_blocks
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| *v > 0)
        .unwrap_or(1);
    Some(LaunchBoundsRegs {
        limit: launch_bounds_register_limit(limits, max_threads, min_blocks),
        max_threads,
        min_blocks,
    })
}

/// The register limit `__launch_bounds__(max_threads, min_blocks)` implies: the
/// register file divided among `min_blocks` blocks of `max_threads` (rounded up to
/// whole warps), capped at the per-thread maximum and rounded down to the allocation
/// granularity.
pub fn launch_bounds_register_limit(limits: &ArchLimits, max_threads: u32, min_blocks: u32) -> u32 {
    let warp = limits.warp_size.max(1);
    let threads = u64::from(max_threads.max(1)).div_ceil(u64::from(warp)) * u64::from(warp);
    let per_thread = u64::from(limits.regs_per_sm) / (threads * u64::from(min_blocks.max(1)));
    let capped = per_thread.min(u64::from(limits.max_regs_per_thread)) as u32;
    let granule = (limits.reg_alloc_unit / warp).max(1);
    capped / granule * granule
}

/// Adjacent scalar accesses of one thread that ptxas merges into one wide shared-memory
/// instruction, modelled as that instruction.
///
/// Checked with nvcc 13.5 for sm_90 (`nvcc -arch=sm_90 -cubin`, `cuobjdump -sass`) on a
/// `__shared__ float s[1024]` with `t = threadIdx.x`:
///
/// - `s[2 * t]`, `s[2 * t + 1]` (loads): the PTX has two `ld.shared.f32` at `[%r6]` and
///   `[%r6+4]`; the SASS one `LDS.64 R10, [R7]`.
/// - `s[4 * t + 0]` … `s[4 * t + 3]`: four `ld.shared.f32`; one `LDS.128 R12, [R7]`.
/// - stores `s[2 * t] = …; s[2 * t + 1] = …`: one `STS.64 [R0], R4`.
/// - `__shared__ float s[32][64]`, `s[threadIdx.y][2 * t]` and `[2 * t + 1]`: one
///   `LDS.64 R6, [R6]`.
/// - `extern __shared__ float s[]`, `s[2 * t]` and `s[2 * t + 1]`: one `LDS.64 R6, [R4]`.
/// - not merged: `s[2 * t + 1]`, `s[2 * t + 2]` (the pair starts at 4 mod 8):
///   `LDS R9, [R7+0x4]` and `LDS R10, [R7+0x8]`; through `float* p = s + off` with an
///   unknown `off` (`s` extern), `p[2 * t]`, `p[2 * t + 1]`: `LDS R6, [R4]` and
///   `LDS R7, [R4+0x4]`; through `p = s + 1`: `LDS R6, [R4+0x4]` and `LDS R7, [R4+0x8]`.
/// - through `float* p = s + 2` (8-byte aligned), `p[2 * t]` and `p[2 * t + 1]`: one
///   `LDS.64 R6, [R4+0x8]`.
/// - through `float* p = s + off` with `off` a kernel parameter: `LDS R4, [R0]` and
///   `LDS R5, [R0+0x4]` (two loads, as above); with `int off = blockIdx.x * 64`, which
///   keeps the pair 8-byte aligned: one `LDS.64 R4, [R0]`. The offset is a symbol every
///   lane shares (`kernaut_syntax` lowers the carve's offset), and the alignment proof
///   below (a gcd over the expression) gives 4 for the first and 256 for the second.
///
/// Other element sizes (same setup, `-O3`):
///
/// - `double`, `s[2 * t]` and `s[2 * t + 1]`: loads `LDS.128 R8, [R10]`, stores
///   `STS.128 [R11], R4`; four doubles `s[4 * t + 0..3]` are two `LDS.128` (`[R0]` and
///   `[R0+0x10]`): there is no wider instruction, so only pairs merge. Not merged:
///   `s[2 * t + 1]`, `s[2 * t + 2]` (`LDS.64 R6, [R0+0x8]`, `LDS.64 R8, [R0+0x10]`).
/// - `short` and `__half` stores: a pair `s[2 * t]`, `s[2 * t + 1]` is one
///   `STS [R4], R6`; four are one `STS.64 [R0], R8`. Not merged: `s[2 * t + 1]`,
///   `s[2 * t + 2]` (`STS.U16 [R5+0x2]`, `STS.U16 [R5+0x4]`).
/// - `short` and `__half` loads are not merged reliably: `__shared__ __half s[2048]`
///   (PTX `.align 2`) read as `__hadd(s[2 * t], s[2 * t + 1])` stays two loads
///   (`LDS.U16 R6, [R4]`, `LDS.U16 R7, [R4+0x2]`, the same for `short` summed and for four
///   halves), while the same read of an `__align__(16)` or `extern` array is one
///   `LDS R4, [R4]`, and so are two shorts stored on to global memory as a pair. They
///   are modelled as two loads: both halves of an aligned pair lie in one 4-byte word, so
///   the conflict degree is the same either way.
/// - `char`: neither loads nor stores merge (four `LDS.U8` / `STS.U8`).
///
/// A loop that walks consecutive elements of one thread, `for (int e = 0; e < 4; ++e)
/// acc += s[row * 128 + 4 * lane + e];`, is unrolled and merged the same way: nvcc 13.5
/// for sm_90 (`-O3 -cubin`, `cuobjdump -sass`, `__shared__ float s[4096]`) gives one
/// `LDS.128 R4, [R4]` with `#pragma unroll` or with no pragma at all (trip counts of 4, 8,
/// 16 and 32 were all unrolled in full: two, four and eight `LDS.128`), and the stores of
/// `s[row * 128 + 4 * lane + e] = in[…]` one `STS.128 [R0], R8`. The merge follows the
/// element size and the alignment of the first element as for written-out parts:
/// `s[threadIdx.y][4 * lane + e]` with rows of 132 floats is one `LDS.128`, with rows of
/// 130 floats (8-byte aligned) two `LDS.64`; `e` from 2 to 5 (8 mod 16) two `LDS.64`;
/// `double`, `e < 2`: one `LDS.128`; `__half` stores, `e < 4`: one `STS.64`.
///
/// With no pragma, how far nvcc unrolls depends on the trip count and the body
/// ([`SourceFile::loop_body_cost`]: operators, assignments, element accesses and casts
/// 1, calls 20). nvcc 13.5 `-arch=sm_90 -cubin`, `cuobjdump -sass`, on
/// `__shared__ float t[64][T]` read as `for (c = 0; c < T; c++) { float x =
/// t[threadIdx.x][c]; acc = acc * a + x * b; … }` with m such statements (cost 2 + 4m):
/// m = 1 unrolled in full up to T = 64 (16 `LDS.128`), T = 128 in part; m = 4 in full up
/// to 32, m = 8 up to 16, m = 16 up to 8, m = 32 not even at 8; the copy
/// `out[c * plane + p] = t[threadIdx.x][c]` (cost 6) in full at T = 100 (25 `LDS.128`)
/// and in part at 128; `acc += (float)t[threadIdx.x][c]` (cost 4) in full at 128; a body
/// with `sinf` and `cosf` (cost 47) in full at 8 and not at all at 32. So: in full where
/// trips × cost ≤ 600 (the largest seen; the smallest not unrolled in full is 768). A
/// loop unrolled only in part is not modelled as merged (its factor, and so the width,
/// varies: `LDS.64` or `LDS.128`).
///
/// `__half` loads merge in such a loop although written-out pairs do not: a `__half` row
/// read as `t[threadIdx.x][c]` (copied out or summed as `(float)`) is one `LDS.64` per four
/// elements for T = 8 and 64 (16 `LDS.64` for the 64-half row of CUDA-PointPillars'
/// `pillarscatter`); only an `__align__(16)` array copied out gave `LDS.128`, and summed
/// it stays `LDS.64`, so four halves per access are modelled. `__nv_bfloat16` rows merge
/// when copied (`LDS.64`) but not when summed as `(float)` (8 and 64 `LDS.U16`): not
/// modelled as merged. Not merged:
/// `#pragma unroll 1` (one `LDS` per iteration), a trip count known only at run time
/// (pairs at best, in a remainder loop), and a loop that also stores to the same array
/// (four `LDS` and four `STS`: the compiler cannot reorder them), updates of a dynamic
/// buffer aside (below). `#pragma unroll 2`
/// over four elements gives `LDS.64`: the merge is at most the unroll factor.
///
/// Updates (`+=`) of consecutive elements merge only in a dynamic (`extern __shared__`)
/// buffer: nvcc 13.5 `-arch=sm_90 -O3 -cubin` gives one `LDS.128` and one `STS.128` for
/// four `sf[t * 4 + k] += …` on an `extern __shared__ float sf[]` (and on a pointer cast
/// from an `extern` byte buffer), but four `LDS` and four `STS` on a static
/// `__shared__ float st[1024]`, with or without a pointer taken from it, while plain
/// stores to that static array still merge. In a dynamic buffer the other accesses of
/// the buffer between the parts do not stop the merge when none can overlap a part the
/// merged access moves past ([`reorder_is_safe`]): the pairwise reduction
/// `sd[t * 4 + k] += sd[(t + h) * 4 + k]` of doubles is two `LDS.128` of the partner and
/// two `LDS.128` and `STS.128` of the target per step, while `sa[t * 4 + k] +=
/// sa[t * 4 + h + k]` (the partner may be the next target) stays scalar. The same written
/// as a loop over `k` (`sq[t * 4 + k] += sq[(t + s) * 4 + k]`, four floats) is two
/// `LDS.128` and one `STS.128`: an update in such a loop merges where the loop's other
/// loads of the buffer start a whole number of wide accesses away from it. Loads and
/// stores through kernel pointer parameters between the parts do not stop it either
/// (kernel parameters point to global memory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    /// The bytes of the wide access (4, 8 or 16).
    pub width: u64,
    /// The accesses merged, in document order (this one among them).
    pub parts: Vec<TextRange>,
    /// For an access in an unrolled loop: the loop variable and how many of its
    /// iterations one wide access covers.
    pub iterations: Option<(String, u64)>,
}

impl Merged {
    /// The first of several written parts, where the access at `range` is a later one:
    /// a wide access is reported once, at its first part.
    pub fn first_part_before(&self, range: &TextRange) -> Option<&TextRange> {
        self.parts
            .first()
            .filter(|first| self.parts.len() > 1 && *first != range)
    }
}

/// How many adjacent accesses of `elem` bytes ptxas merges into one, widest first, as
/// checked in SASS (see [`Merged`]): four or two 4-byte elements, two 8-byte ones, and
/// four or two 2-byte stores.
fn merge_counts(elem: u64, kind: AccessKind) -> &'static [u64] {
    match (elem, kind) {
        (4, _) => &[4, 2],
        (8, _) => &[2],
        (2, AccessKind::Store) => &[4, 2],
        _ => &[],
    }
}

/// [`merge_counts`] for the accesses of an unrolled loop over consecutive elements:
/// `__half` loads merge there too, four into one `LDS.64` (see [`Merged`]).
fn loop_merge_counts(elem: u64, kind: AccessKind, half: bool) -> &'static [u64] {
    match (elem, kind) {
        (2, AccessKind::Load) if half => &[4],
        _ => merge_counts(elem, kind),
    }
}

/// Whether `a` reads a `__shared__` array declared with `half`/`__half` elements (not
/// `__nv_bfloat16`, whose loads nvcc keeps apart when it converts them: see [`Merged`]).
fn is_half_array(scope: &Scope<'_>, a: &SharedAccess) -> bool {
    a.root == a.array
        && scope
            .facts()
            .shared_named(&a.array, a.range.start)
            .is_some_and(|d| matches!(d.element_type.trim(), "half" | "__half" | "::__half"))
}

/// How far apart (in bytes of text) the parts of a merged access may be.
const WINDOW: usize = 4096;
/// How far apart they may be in long unrolled code (generated kernels read a thread's
/// 16-byte slice one word per statement, each word a few hundred statements after the
/// last): searched only for an access whose scalar model conflicts.
const LONG_WINDOW: usize = 65536;

/// The accesses `a` is merged with, and the byte offset of the wide access.
fn merged_access(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    a: &SharedAccess,
    reach: usize,
) -> Option<(Merged, IndexExpr)> {
    merged_access_with(scope, all, a, reach, true)
}

/// [`merged_access`]; with `declared_only` `false`, parts whose offset only a remainder
/// makes a multiple of the wide access merge whatever the buffer's declared alignment
/// (what nvcc does where it proves the alignment from the layout).
fn merged_access_with(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    a: &SharedAccess,
    reach: usize,
    declared_only: bool,
) -> Option<(Merged, IndexExpr)> {
    let elem = a.element_size?;
    // An update (`s[i] += v`) merges only in a dynamic (`extern __shared__`) buffer: see
    // [`Merged`].
    let dynamic = is_dynamic_buffer(scope, a);
    if loop_merge_counts(elem, a.kind, true).is_empty()
        || a.width != Some(elem)
        || a.cast_type.is_some()
        || !(matches!(a.kind, AccessKind::Load | AccessKind::Store)
            || (a.kind == AccessKind::LoadStore && dynamic))
    {
        return None;
    }
    if a.kind != AccessKind::LoadStore || dynamic {
        if let Some(m) = loop_merged(scope, all, a, elem) {
            return Some(m);
        }
    }
    if merge_counts(elem, a.kind).is_empty() {
        return None;
    }
    let split = scope.cache.split(&a.byte_offset, split_constant);
    let (core, c) = (&split.0, split.1);
    if core.unknown_reason().is_some() {
        return None;
    }
    let function = a.function.as_deref();
    // The accesses of the same buffer in the same function, with the same core offset, in
    // one straight-line stretch with `a`. The byte offset is from the start of the
    // `__shared__` buffer (a pointer carved from it at a constant offset included), which
    // ptxas places: it merges where that offset is a multiple of the wide access.
    // The accesses are in document order: only those within a few KB are looked at.
    // Within `reach` of `a`, and inside its function (the parts are in one).
    let (from, to) = match scope.facts().function_at(a.range.start) {
        Some(f) => (
            f.range.start.max(a.range.start.saturating_sub(reach)),
            f.range.end.min(a.range.start + reach),
        ),
        None => (a.range.start.saturating_sub(reach), a.range.start + reach),
    };
    let lo = all.partition_point(|o| o.range.start < from);
    let hi = all.partition_point(|o| o.range.start <= to);
    let window = all.get(lo..hi.max(lo)).unwrap_or_default();
    let near: Vec<(&SharedAccess, i64)> = window
        .iter()
        // Only the accesses a merge could take (checked again below), before their
        // offsets are split, which allocates.
        .filter(|o| {
            o.root == a.root
                && o.function.as_deref() == function
                && o.kind == a.kind
                && o.width == a.width
                && o.cast_type.is_none()
        })
        // A part of a wide access (16 bytes at most) is less than 16 bytes from this
        // one: the others are not split.
        .filter(|o| constant_part(&o.byte_offset).abs_diff(c) < 16)
        .filter_map(|o| {
            let theirs = scope.cache.split(&o.byte_offset, split_constant);
            Some((o, theirs.1)).filter(|_| theirs.0 == *core)
        })
        .collect();
    // nvcc 13.5 `-arch=sm_90 -O3`: four floats at `(q * 4) % 64 + k` of a row are one
    // `STS.128` in a buffer declared `__align__(16)` and four `STS` in a plain `float`
    // array, while `(q % 16) * 4 + k` merges in both: where only a remainder makes the
    // offset a multiple of the wide access, the declared alignment must too.
    let declared_alignment = || {
        scope
            .facts()
            .shared_named(&a.root, a.range.start)
            .and_then(|d| d.alignment)
            .unwrap_or(0)
    };
    for &k in merge_counts(elem, a.kind) {
        let wide = i64::try_from(k * elem).ok()?;
        if divisor(core) % wide != 0 {
            continue;
        }
        if declared_only
            && divisor_outside_remainders(core) % wide != 0
            && declared_alignment() < k * elem
        {
            continue;
        }
        let base = c - c.rem_euclid(wide);
        let mut parts: Vec<&SharedAccess> = Vec::new();
        for j in 0..k {
            let want = base + i64::try_from(j * elem).ok()?;
            let found = near.iter().find(|(o, off)| {
                *off == want
                    && o.kind == a.kind
                    && o.width == a.width
                    && o.cast_type.is_none()
                    && (o.range == a.range || scope.file.straight_line(&a.range, &o.range))
            });
            match found {
                Some((o, _)) => parts.push(o),
                None => break,
            }
        }
        if parts.len() as u64 != k {
            continue;
        }
        // Nothing else touches the array between the parts (in a dynamic buffer: nothing
        // the merged access would have to move past and could overlap).
        let blocked = if dynamic {
            !reorder_is_safe(scope, all, window, &parts)
        } else {
            let (from, to) = (
                parts.iter().map(|p| p.range.start).min()?,
                parts.iter().map(|p| p.range.end).max()?,
            );
            // Loads between loads do not keep ptxas from moving the loads together (a
            // thread's 16-byte slice read in statements spread over a block of unrolled
            // code is one `LDS.128`).
            window.iter().any(|o| {
                o.root == a.root
                    && o.range.start >= from
                    && o.range.end <= to
                    && !parts.iter().any(|p| p.range == o.range)
                    && !(a.kind == AccessKind::Load && o.kind == AccessKind::Load)
                    && !forwarded(scope, all, o)
            })
        };
        if blocked {
            continue;
        }
        let mut ranges: Vec<TextRange> = parts.iter().map(|p| p.range.clone()).collect();
        ranges.sort_by_key(|r| r.start);
        let offset = IndexExpr::binary(core.clone(), BinOp::Add, IndexExpr::Int(base));
        if let Some((m, var, first)) = pairs_across_iterations(scope, all, a, &offset, k * elem) {
            return Some((
                Merged {
                    width: k * elem * m,
                    parts: ranges,
                    iterations: Some((var, m)),
                },
                first,
            ));
        }
        return Some((
            Merged {
                width: k * elem,
                parts: ranges,
                iterations: None,
            },
            offset,
        ));
    }
    None
}

/// Whether `a` is carved from a dynamic (`extern __shared__`) buffer.
fn is_dynamic_buffer(scope: &Scope<'_>, a: &SharedAccess) -> bool {
    scope
        .facts()
        .shared_named(&a.root, a.range.start)
        .is_some_and(|d| d.is_extern)
}

/// Where the store `a` and a store of the same bytes in the other arm of an `if` around
/// it are one store: nvcc sinks the two into one after the branch, which every lane that
/// reaches the `if` issues (`if (t > 0) out[i] = x + p; else out[i] = x;`: one `STG` of
/// all 32 lanes, nvcc 13.5 `-arch=sm_90 -O3`). A place just before the `if`, where the
/// store's lanes are the ones that reach it, and whether `a` is the one in the `else` arm (the pair is
/// reported once, at the first).
pub fn store_in_both_arms(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    a: &SharedAccess,
) -> Option<(usize, bool)> {
    if a.kind != AccessKind::Store || a.byte_offset.unknown_reason().is_some() {
        return None;
    }
    let chain = scope.file.enclosing(a.range.start);
    // The innermost `if` around `a` (an arm's own loops and `if`s would keep the two
    // stores apart).
    let e = chain.first()?;
    let EnclosingKind::If { in_else, .. } = &e.kind else {
        return None;
    };
    let twin = all.iter().any(|o| {
        o.range != a.range
            && o.kind == AccessKind::Store
            && o.root == a.root
            && o.array == a.array
            && o.width == a.width
            && e.range.contains(&o.range.start)
            && o.byte_offset == a.byte_offset
            && scope.file.enclosing(o.range.start).first().is_some_and(|f| {
                f.range == e.range
                    && matches!(&f.kind, EnclosingKind::If { in_else: theirs, .. } if theirs != in_else)
            })
    });
    // Just before the `if`: the lanes that reach it.
    twin.then_some((e.range.start.saturating_sub(1), *in_else))
}

/// Whether the load `a` never reaches shared memory because the compiler forwards the
/// value: the same thread stored to or loaded from the same bytes in an earlier
/// statement of the same straight-line stretch ([`SourceFile::straight_line`]: no branch
/// and no barrier between), or in a plain statement or an `if` condition (`if (s[i] > 0)
/// x = s[i];`) that runs on every path to the load
/// (the load inside a later `if` of the same block, in no loop the first is not in:
/// [`SourceFile::runs_before_on_every_path`]), and nothing between may write them and no
/// barrier lies between. nvcc 13.5 `-O3 -arch=sm_90` keeps the value in a register: a
/// helper that fills `w[3]`, `w[0] = … - w[3]`, `w[2] = … w[0] …`, `w[1] = …` on a
/// per-thread four-float slot of shared memory is one `STS.128` and no load; a `double`
/// row element read as `e = table[t][0] / scale[0];` and read again inside a later `if
/// (err < 1.0)` of the same block is one `LDS.64`. A `volatile` array is read every time.
pub fn forwarded(scope: &Scope<'_>, all: &[SharedAccess], a: &SharedAccess) -> bool {
    forwarded_in(scope, all, a, false)
}

/// [`forwarded`] for a global-memory load among the file's global accesses `all`: a
/// store through any other pointer between the two may alias the bytes, so none may sit
/// between (nvcc 13.5 keeps `cols[idx]` in a register for `cols[idx] = v; copy[idx] =
/// cols[idx];`: no second `LDG`).
pub fn forwarded_global(scope: &Scope<'_>, all: &[SharedAccess], a: &SharedAccess) -> bool {
    forwarded_in(scope, all, a, true)
}

fn forwarded_in(scope: &Scope<'_>, all: &[SharedAccess], a: &SharedAccess, aliasing: bool) -> bool {
    if a.kind != AccessKind::Load || a.width.is_none() || a.byte_offset.unknown_reason().is_some() {
        return false;
    }
    // The earlier accesses of the same bytes, nearest first, compared as written (cheap:
    // this runs for every access a merge looks at). A farther one may serve where a
    // nearer one sits in a branch (`if (s[i] > 0) x = s[i]; y = s[i];`).
    // Only the accesses of `a`'s function can be of the same bytes.
    let start = scope
        .file
        .facts()
        .function_at(a.range.start)
        .map_or(0, |f| f.range.start);
    let lo =
        all.partition_point(|o| o.range.start + WINDOW < a.range.start || o.range.start < start);
    let hi = all.partition_point(|o| o.range.start < a.range.start);
    let window = all.get(lo..hi.max(lo)).unwrap_or_default();
    window
        .iter()
        .rev()
        .filter(|e| {
            matches!(
                e.kind,
                AccessKind::Load | AccessKind::Store | AccessKind::LoadStore
            ) && same_bytes(e, a)
        })
        .take(3)
        .any(|source| serves(scope, all, source, a, aliasing))
        || window
            .iter()
            .rev()
            .filter(|e| {
                matches!(e.kind, AccessKind::Store | AccessKind::LoadStore)
                    && e.root == a.root
                    && e.width == a.width
                    && e.cast_type == a.cast_type
                    && e.function == a.function
                    && e.byte_offset.has_loop_var()
                    && !same_bytes(e, a)
            })
            .take(3)
            .any(|source| {
                unrolled_loop_then(scope, source, a) && serves(scope, all, source, a, aliasing)
            })
        || (!aliasing && dominating_store(scope, all, a) && thread_private(scope, all, a))
}

/// Words whose call or qualifier orders shared memory between threads: a barrier, a
/// fence, an atomic, inline PTX, `volatile`, an asynchronous copy.
const ORDERING: [&str; 8] = [
    "sync",
    "barrier",
    "fence",
    "atomic",
    "asm",
    "volatile",
    "memcpy_async",
    "cp_async",
];

/// Whether a store of the same bytes as `a` runs before `a` on every path, with no
/// barrier between: it comes
/// earlier in the text, and every `if`, loop, `switch` and `?:` around it is around `a`
/// too.
fn dominating_store(scope: &Scope<'_>, all: &[SharedAccess], a: &SharedAccess) -> bool {
    // The stores of the same bytes before `a` in its function (the accesses are in
    // document order).
    let Some(f) = scope.facts().function_at(a.range.start) else {
        return false;
    };
    let lo = all.partition_point(|o| o.range.start < f.range.start);
    let hi = all.partition_point(|o| o.range.start < a.range.start);
    let text = scope.file.text();
    let statement = |r: &TextRange| scope.file.statement_at(r).unwrap_or_else(|| r.clone());
    let before = all.get(lo..hi.max(lo)).unwrap_or_default();
    let writes = |o: &SharedAccess| matches!(o.kind, AccessKind::Store | AccessKind::LoadStore);
    let mine: std::cell::OnceCell<Option<ElementBytes>> = std::cell::OnceCell::new();
    let (a_core, a_const) = split_constant(&a.byte_offset);
    // A store of the same bytes as written, or a loop of stores whose iterations cover
    // them (`for (i = 0; i < 16; i++) my[i] = table[i];` before `my[5]`): the same part
    // of the thread at the loop's first iteration, near `a`'s, before its iterations are
    // listed.
    let covering = |o: &SharedAccess| {
        o.root == a.root
            && o.function == a.function
            && o.cast_type == a.cast_type
            && (same_bytes(o, a)
                || (o.byte_offset.has_loop_var()
                    && !a.byte_offset.has_loop_var()
                    && {
                        let first = scope.cache.first_split(&o.byte_offset, |e| {
                            split_constant(&at_first_iteration(e))
                        });
                        (a_const - first.1).abs() < 1024 && same_value(&first.0, &a_core)
                    }
                    && mine
                        .get_or_init(|| element_bytes(scope, a))
                        .as_ref()
                        .is_some_and(|m| element_bytes(scope, o).is_some_and(|t| covers(&t, m)))))
    };
    if !before.iter().any(|o| writes(o) && covering(o)) {
        return false;
    }
    let mine_statement = statement(&a.range);
    before.iter().rev().any(|o| {
        writes(o)
            && covering(o)
            // A store of the load's own statement runs after it (`b[p] = 0.5f * b[p]`).
            && statement(&o.range).end <= mine_statement.start
            && text
                .get(o.range.end..a.range.start)
                .is_some_and(|between| !ORDERING.iter().any(|w| between.contains(w)))
            && scope
                .file
                .enclosing(o.range.start)
                .iter()
                .filter(|e| !matches!(e.kind, EnclosingKind::Function { .. }))
                .all(|e| {
                    e.range.contains(&a.range.start)
                        // The covering loop itself, which runs its iterations on every path.
                        || matches!(&e.kind, EnclosingKind::For { var: Some(v), .. }
                            if loop_bounds(&o.byte_offset, v).is_some_and(|(s, t)| t > s))
                })
    })
}

/// The bytes a thread's access touches over the iterations of the loops its offset
/// reads, as one offset the same in every iteration (the thread's own part,
/// `threadIdx.x * 64`) and the byte ranges past it (`my[i]` for `i < 16` of `uint32_t`: 0..64); `None`
/// where a loop's bounds are not constants or its iterations are too many to list.
fn element_bytes(scope: &Scope<'_>, a: &SharedAccess) -> Option<ElementBytes> {
    let width = a.width?;
    (*scope
        .cache
        .element_bytes(&a.byte_offset, width, || list_element_bytes(a)))
    .clone()
}

/// [`element_bytes`], worked out.
fn list_element_bytes(a: &SharedAccess) -> Option<ElementBytes> {
    let width = i64::try_from(a.width?).ok()?;
    if a.byte_offset.unknown_reason().is_some() {
        return None;
    }
    let mut ends = vec![a.byte_offset.clone()];
    for name in loop_var_names(&a.byte_offset) {
        let (lo, hi) = loop_bounds(&a.byte_offset, &name)?;
        if hi <= lo || (hi - lo).saturating_mul(ends.len() as i64) > FORWARDED_ELEMENTS {
            return None;
        }
        ends = ends
            .iter()
            .flat_map(|e| (lo..hi).map(|v| with_loop_var(e, &name, v)))
            .collect();
    }
    let mut core: Option<IndexExpr> = None;
    let mut bytes = Vec::with_capacity(ends.len());
    for e in &ends {
        let (c, k) = split_constant(e);
        if c.has_loop_var() {
            return None;
        }
        match &core {
            Some(known) if !same_value(known, &c) => return None,
            Some(_) => {}
            None => core = Some(c),
        }
        bytes.push((k, k + width));
    }
    Some((core?, bytes))
}

/// The elements of its own chunk that one thread reads through `a` and the other loads
/// of the same array in its function whose offsets differ from `a`'s by constants only
/// (over the iterations of loops with constant bounds): the first element peeled out of
/// a walk (`m = x[r * 10]; for (j = 1; j < 10; ++j) m = fmaxf(m, x[r * 10 + j]);`), or a
/// walk written out statement by statement. How many `width`-byte elements from the
/// lowest one on they read without a gap, where that reaches `chunk` elements (the gap
/// between two lanes): L1 keeps the sectors between those reads, as for one loop.
pub fn walk_with_siblings(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    a: &SharedAccess,
    width: i64,
    chunk: i64,
) -> Option<i64> {
    if a.kind != AccessKind::Load || chunk < 2 || width <= 0 {
        return None;
    }
    let mine = element_bytes(scope, a)?;
    let f = scope.facts().function_at(a.range.start)?;
    let lo = all.partition_point(|o| o.range.start < f.range.start);
    let hi = all.partition_point(|o| o.range.start < f.range.end);
    let mut starts: Vec<i64> = mine.1.iter().map(|&(s, _)| s).collect();
    for o in all.get(lo..hi.max(lo)).unwrap_or_default() {
        if o.range == a.range
            || o.kind != AccessKind::Load
            || o.root != a.root
            || o.width != a.width
            || o.cast_type != a.cast_type
        {
            continue;
        }
        if let Some(t) = element_bytes(scope, o).filter(|t| same_value(&t.0, &mine.0)) {
            starts.extend(t.1.iter().map(|&(s, _)| s));
        }
    }
    starts.sort_unstable();
    starts.dedup();
    let first = *starts.first()?;
    let run = (0..)
        .take_while(|k: &i64| starts.binary_search(&(first + k * width)).is_ok())
        .count() as i64;
    (run >= chunk).then_some(chunk)
}

/// Whether the bytes `outer` touches hold every byte `inner` touches (both from
/// [`element_bytes`]).
fn covers(outer: &ElementBytes, inner: &ElementBytes) -> bool {
    let mut held: Vec<(i64, i64)> = outer.1.clone();
    held.sort_unstable();
    same_value(&outer.0, &inner.0)
        && inner.1.iter().all(|&(from, to)| {
            // Walk the sorted ranges from `from`, each starting at or before the part
            // still to cover.
            let mut at = from;
            for &(s, e) in &held {
                if s <= at && e > at {
                    at = e;
                }
                if at >= to {
                    return true;
                }
            }
            at >= to
        })
}

/// Whether `a`'s `__shared__` array is, in `a`'s function, each thread's own scratch:
/// the function holds no barrier, fence, atomic, `asm` or `volatile`, and every access of
/// the array there is one per-thread element offset (the same for all of them, naming
/// the thread, with no loop variable) plus a constant that stays inside the thread's own
/// elements, the lanes of warp 0 apart. No other thread can then see the values without
/// a race, and nvcc keeps them in registers: after `acc[threadIdx.x][threadIdx.y] = 1`
/// the updates and reads of that element in later loops issue no `LDS` (nvcc 13.5 `-O3
/// -arch=sm_90`).
pub fn thread_private(scope: &Scope<'_>, all: &[SharedAccess], a: &SharedAccess) -> bool {
    let Some(f) = scope.facts().function_at(a.range.start) else {
        return false;
    };
    // After the function's last barrier before `a` (one that fills a table other
    // threads then read orders nothing of the scratch), with none after `a` and none in
    // a loop around `a`.
    let text = scope.file.text();
    if text
        .get(f.range.clone())
        .is_some_and(|body| body.contains("volatile"))
    {
        return false;
    }
    let before = text.get(f.range.start..a.range.start).unwrap_or_default();
    let cut = ORDERING
        .iter()
        .filter_map(|w| before.rfind(w).map(|i| f.range.start + i + w.len()))
        .max()
        .unwrap_or(f.range.start);
    let after = text.get(a.range.start..f.range.end).unwrap_or_default();
    let looped = scope.file.enclosing(a.range.start).iter().any(|e| {
        matches!(
            e.kind,
            EnclosingKind::For { .. } | EnclosingKind::While { .. } | EnclosingKind::DoWhile { .. }
        ) && e.range.start < cut
    });
    if looped || ORDERING.iter().any(|w| after.contains(w)) {
        return false;
    }
    let mut core: Option<IndexExpr> = None;
    let (mut low, mut reach) = (i64::MAX, 0i64);
    for o in all
        .iter()
        .filter(|o| o.root == a.root && o.range.start >= cut && o.range.start < f.range.end)
    {
        // A pointer carved from the array (`uint32_t* my = &pool[16 + t * 16];`) reads
        // and writes nothing itself: its accesses are the array's.
        if o.kind == AccessKind::AddressOf {
            let statement = scope
                .file
                .statement_at(&o.range)
                .unwrap_or_else(|| o.range.clone());
            let written = text.get(statement).unwrap_or_default();
            if written.contains("= &") && !written.contains('(') {
                continue;
            }
            return false;
        }
        let Some(w) = o.width else {
            return false;
        };
        // A loop walks the thread's elements (`my[i]` for `i < 16`): its first and last
        // iterations bound them.
        let mut ends = vec![o.byte_offset.clone()];
        for name in loop_var_names(&o.byte_offset) {
            let Some((lo, hi)) = loop_bounds(&o.byte_offset, &name) else {
                return false;
            };
            // Registers hold only what a fixed index names: a loop that nvcc does not
            // unroll in full indexes the array at run time, which keeps it in memory
            // (nvcc 13.5: a row rewritten at `tile[r * 32 + d]` inside a rolled `for (d
            // …)` is read back with `LDS`).
            let unrolled = scope.file.enclosing(o.range.start).iter().any(|e| {
                matches!(&e.kind, EnclosingKind::For { var: Some(v), .. } if **v == *name)
                    && unroll_factor(scope, &e.range, hi - lo) == Some(hi - lo)
            });
            if !unrolled {
                return false;
            }
            ends = ends
                .iter()
                .flat_map(|e| [with_loop_var(e, &name, lo), with_loop_var(e, &name, hi - 1)])
                .collect();
        }
        for e in &ends {
            let (c, k) = split_constant(e);
            if c.unknown_reason().is_some() || c.has_loop_var() || k < 0 {
                return false;
            }
            // A load of one element every thread reads (a table filled before the last
            // barrier) shares no thread's scratch.
            if !c.depends_on_thread() {
                if o.kind == AccessKind::Load {
                    continue;
                }
                return false;
            }
            match &core {
                Some(known) if *known != c => return false,
                Some(_) => {}
                None => core = Some(c),
            }
            low = low.min(k);
            reach = reach.max(k + i64::try_from(w).unwrap_or(i64::MAX));
        }
    }
    let reach = reach - low;
    let Some(core) = core else {
        return false;
    };
    (0..kernaut_gpu::expr::SAMPLES).all(|sample| {
        let v = Valuation {
            sample,
            ..Valuation::warp0([None; 3])
        };
        let Some(mut lanes) = v.lanes(&core) else {
            return false;
        };
        lanes.sort_unstable();
        lanes.windows(2).all(|p| p[1] - p[0] >= reach)
    })
}

/// Whether two byte offsets are the same value for every lane of warp 0, under each
/// sample of the values they read (`(t * 8 + 0) * 4` and `t * 8 * 4`).
fn same_value(x: &IndexExpr, y: &IndexExpr) -> bool {
    if x == y {
        return true;
    }
    if x.unknown_reason().is_some() || y.unknown_reason().is_some() {
        return false;
    }
    // Two lanes of the first sample first: most pairs asked about differ there already,
    // and a lane costs a thirty-second of the warp.
    let first = Valuation::warp0([None; 3]);
    for lane in [1, 30] {
        match (first.lane(x, lane), first.lane(y, lane)) {
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
    (0..kernaut_gpu::expr::SAMPLES).all(|sample| {
        let v = Valuation {
            sample,
            ..Valuation::warp0([None; 3])
        };
        matches!((v.lanes(x), v.lanes(y)), (Some(a), Some(b)) if a == b)
    })
}

/// Whether the store `source`, in a loop that nvcc unrolls in full with nothing around
/// it inside the loop, writes the bytes of the load `a` in one of its iterations, and the
/// loop and `a`'s statement run one after the other (no branch and no barrier between):
/// that iteration's value is still in a register. nvcc 13.5 `-arch=sm_90 -O3`: after
/// `for (k = 0; k < 8; ++k) sc[t * 8 + k] = …;`, `o[t] = sc[t * 8];` issues no `LDS`.
fn unrolled_loop_then(scope: &Scope<'_>, source: &SharedAccess, a: &SharedAccess) -> bool {
    let Some(lp) = scope.file.enclosing(source.range.start).into_iter().next() else {
        return false;
    };
    let EnclosingKind::For { var: Some(v), .. } = &lp.kind else {
        return false;
    };
    if lp.range.contains(&a.range.start) {
        return false;
    }
    let Some((start, end)) = loop_bounds(&source.byte_offset, v) else {
        return false;
    };
    let trips = end - start;
    let statement = scope
        .file
        .statement_at(&a.range)
        .unwrap_or_else(|| a.range.clone());
    (1..=FORWARDED_ELEMENTS).contains(&trips)
        && unroll_factor(scope, &lp.range, trips) == Some(trips)
        && (start..end)
            .any(|i| same_value(&with_loop_var(&source.byte_offset, v, i), &a.byte_offset))
        && scope.file.statements_in_line(&lp.range, &statement)
}

/// Whether two accesses of one function touch the same bytes as written: the same array,
/// byte offset, width and cast.
fn same_bytes(x: &SharedAccess, y: &SharedAccess) -> bool {
    // The cheap fields first: the offsets' trees are compared last.
    x.root == y.root
        && x.width == y.width
        && x.cast_type == y.cast_type
        && x.function == y.function
        && x.byte_offset == y.byte_offset
}

/// The most elements a thread's registers were seen to carry from one unrolled loop to
/// the next ([`unrolled_loops_in_line`]).
const FORWARDED_ELEMENTS: i64 = 64;

/// Whether `source` and the load `a` of the same bytes sit in two loops over the same
/// range that nvcc unrolls in full, one after the other in one straight-line stretch (no
/// branch and no barrier between): each iteration's value is still in a register when the
/// second loop reads it. nvcc 13.5 `-arch=sm_90 -O3`: a row of 32 floats stored by
/// `tile[r * 32 + c] = v` in one unrolled loop and read back as `__expf(tile[r * 32 + c] -
/// m)` in the next is 8 `STS.128` and no `LDS`.
///
/// With `all` (the file's accesses; for a load `a`), the second loop may sit inside
/// further loops that come after the first, where none of them writes the array or holds
/// a barrier: the row stays in registers for each of their iterations (nvcc 13.5: a row
/// of 32 floats rewritten by one unrolled loop and read by an unrolled loop inside `for
/// (d = 0; d < 16; ++d)` issues no `LDS` of the row).
fn unrolled_loops_in_line(
    scope: &Scope<'_>,
    source: &SharedAccess,
    a: &SharedAccess,
    all: Option<&[SharedAccess]>,
) -> bool {
    let innermost_for = |at: usize| {
        scope
            .file
            .enclosing(at)
            .into_iter()
            .find(|e| matches!(&e.kind, EnclosingKind::For { var: Some(_), .. }))
    };
    let (Some(first), Some(second)) = (
        innermost_for(source.range.start),
        innermost_for(a.range.start),
    ) else {
        return false;
    };
    // The loop around `a` (its own, or one around that) that follows the first in line.
    let follows = |r: &TextRange| {
        first.range.end <= r.start && scope.file.statements_in_line(&first.range, r)
    };
    let outer = match all {
        Some(all) if !follows(&second.range) => {
            let Some(outer) = scope
                .file
                .enclosing(second.range.start)
                .into_iter()
                .filter(|e| {
                    matches!(
                        e.kind,
                        EnclosingKind::For { .. } | EnclosingKind::While { .. }
                    )
                })
                .find(|e| follows(&e.range))
            else {
                return false;
            };
            let text = scope
                .file
                .text()
                .get(outer.range.clone())
                .unwrap_or_default();
            let quiet = !["sync", "barrier", "asm", "atomic"]
                .iter()
                .any(|w| text.contains(w))
                && !all.iter().any(|o| {
                    outer.range.contains(&o.range.start)
                        && o.root == a.root
                        && !matches!(o.kind, AccessKind::Load)
                });
            if !quiet {
                return false;
            }
            Some(outer.range)
        }
        _ => None,
    };
    let (
        EnclosingKind::For {
            var: Some(v1),
            end: Some(e1),
            ..
        },
        EnclosingKind::For {
            var: Some(v2),
            end: Some(e2),
            ..
        },
    ) = (&first.kind, &second.kind)
    else {
        return false;
    };
    if first.range == second.range || first.range.end > second.range.start || v1 != v2 || e1 != e2 {
        return false;
    }
    let after = outer.unwrap_or_else(|| second.range.clone());
    let Some((start, end)) = loop_bounds(&a.byte_offset, v2) else {
        return false;
    };
    let trips = end - start;
    (1..=FORWARDED_ELEMENTS).contains(&trips)
        && unroll_factor(scope, &first.range, trips) == Some(trips)
        && unroll_factor(scope, &second.range, trips) == Some(trips)
        // The store in every iteration (no branch inside its loop), the loops one
        // after the other.
        && scope
            .file
            .enclosing(source.range.start)
            .first()
            .is_some_and(|e| e.range == first.range)
        && scope.file.statements_in_line(&first.range, &after)
}

/// Whether the earlier access `source` of the same bytes as the load `a` leaves the
/// value in a register for it ([`forwarded_in`]).
fn serves(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    source: &SharedAccess,
    a: &SharedAccess,
    aliasing: bool,
) -> bool {
    // A `for` header's declaration is no statement of a block: the access stands for it.
    let statement = |r: &TextRange| scope.file.statement_at(r).unwrap_or_else(|| r.clone());
    let (mine, theirs) = (statement(&a.range), statement(&source.range));
    // Two loads of the same bytes in one statement (`t[i][k] * t[i][k]`) are one load
    // after common-subexpression elimination (nvcc 13.5 `-O3`: one `LDS`), where nothing
    // between them in the statement writes the array, synchronises or is volatile.
    if mine == theirs && source.kind == AccessKind::Load && source.range.end <= a.range.start {
        let gap = scope
            .file
            .text()
            .get(source.range.end..a.range.start)
            .unwrap_or_default();
        let from = all.partition_point(|o| o.range.start < source.range.end);
        let to = all.partition_point(|o| o.range.start < a.range.start);
        let quiet = all
            .get(from..to.max(from))
            .unwrap_or_default()
            .iter()
            .all(|o| {
                o.kind == AccessKind::Load
                    || (!aliasing && o.root != a.root && o.kind != AccessKind::AddressOf)
            });
        return quiet
            && !["sync", "barrier", "atomic", "asm", "="]
                .iter()
                .any(|w| gap.contains(w))
            && !scope
                .file
                .variable_at(a.range.start)
                .is_some_and(|v| v.is_volatile);
    }
    if theirs.end > mine.start {
        return false;
    }
    // A source in one arm of `?:` (`t = few ? s[i] : 0;`) runs for some threads only.
    if scope.file.enclosing(source.range.start).iter().any(|e| {
        matches!(e.kind, EnclosingKind::Conditional { .. }) && !e.range.contains(&a.range.start)
    }) {
        return false;
    }
    // Nothing between may write the bytes (the source's own statement included, after
    // it: `w[0] = …; w[0] += 1;` is a write).
    // A store written before the source in its statement runs after it (`copy[i] =
    // cols[i];` stores `copy[i]` after loading `cols[i]`).
    let to = all.partition_point(|o| o.range.start < mine.start);
    let from = all.partition_point(|o| o.range.start < theirs.start);
    let between = all.get(from..to.max(from)).unwrap_or_default();
    // A store of the same bytes by the same thread between (`if (s[p] > c) s[p] = c;`)
    // leaves a value the compiler holds too: the load reads the register it chose.
    let writes_between = between
        .iter()
        .filter(|o| o.range != source.range)
        .filter(|o| aliasing || o.root == a.root)
        .filter(|o| {
            !(same_bytes(o, a) && matches!(o.kind, AccessKind::Store | AccessKind::LoadStore))
        })
        .any(|o| {
            o.kind == AccessKind::AddressOf
                || (matches!(o.kind, AccessKind::Store | AccessKind::LoadStore)
                    && (o.root != a.root || !apart(scope, o, a)))
        });
    // The tree walks last: most candidates fail above, or have a barrier between (which
    // `straight_line` would find by the same words).
    let gap = scope
        .file
        .text()
        .get(source.range.end..a.range.start)
        .unwrap_or_default();
    !writes_between
        && !gap.contains("sync")
        && !gap.contains("barrier")
        && (scope.file.straight_line(&source.range, &a.range)
            || scope
                .file
                .runs_before_on_every_path(&source.range, &a.range)
            || unrolled_loops_in_line(scope, source, a, Some(all))
            || unrolled_loop_then(scope, source, a))
        && !scope
            .file
            .variable_at(a.range.start)
            .is_some_and(|v| v.is_volatile)
}

/// Whether the store `a` never reaches shared memory because the same thread stores to
/// the same bytes again later in the same straight-line stretch ([`SourceFile::
/// straight_line`]: no branch and no barrier between), reading them in between only as
/// the same bytes (which the compiler forwards from the register) or provably apart:
/// nvcc deletes the first store. nvcc 13.5 `-O3 -arch=sm_90`: `buf[i] = in[g]; run +=
/// buf[i]; buf[i] = run;` leaves one `STS`, at the second store. A `volatile` array is
/// written every time.
pub fn overwritten(scope: &Scope<'_>, all: &[SharedAccess], a: &SharedAccess) -> bool {
    if private_rewritten(scope, all, a) {
        return true;
    }
    if a.kind != AccessKind::Store || a.width.is_none() || a.byte_offset.unknown_reason().is_some()
    {
        return false;
    }
    let from = all.partition_point(|o| o.range.start <= a.range.start);
    let to = all.partition_point(|o| o.range.start <= a.range.end + WINDOW);
    let window = all.get(from..to.max(from)).unwrap_or_default();
    let same = |e: &SharedAccess| same_bytes(e, a);
    let Some(at) = window
        .iter()
        .position(|e| same(e) && matches!(e.kind, AccessKind::Store | AccessKind::LoadStore))
    else {
        return false;
    };
    let later = &window[at];
    // `buf[i] = f(buf[i])` reads before it writes: the read is the one between.
    let between = window[..at]
        .iter()
        .chain((later.kind == AccessKind::LoadStore).then_some(later));
    let statement = |r: &TextRange| scope.file.statement_at(r).unwrap_or_else(|| r.clone());
    if statement(&a.range) == statement(&later.range) {
        return false;
    }
    let clear = between.filter(|o| o.root == a.root).all(|o| match o.kind {
        AccessKind::AddressOf => false,
        AccessKind::Load | AccessKind::LoadStore => same(o) || apart(scope, o, a),
        _ => apart(scope, o, a),
    });
    let gap = scope
        .file
        .text()
        .get(a.range.end..later.range.start)
        .unwrap_or_default();
    clear
        && !gap.contains("sync")
        && !gap.contains("barrier")
        && !gap.contains("asm")
        && (scope.file.straight_line(&a.range, &later.range)
            || unrolled_loops_in_line(scope, a, later, None))
        && !scope
            .file
            .variable_at(a.range.start)
            .is_some_and(|v| v.is_volatile)
}

/// Whether the store (or update) `a` of a thread's own scratch ([`thread_private`]: no
/// barrier, fence, atomic, `asm` or `volatile` after it in its function) is written
/// again later in the function by the same thread, over all its bytes: the compiler
/// keeps the scratch in registers and writes it once, at the last store (an update's read
/// comes from a register where a store of its bytes runs before it on every path). nvcc
/// 13.5 `-O3 -arch=sm_90`: a 16-word slot filled by a loop, mixed in place and
/// updated element by element, then rewritten by `for (i = 0; i < 16; i++) my[i] ^=
/// pad[…];` leaves four `STS.128` at that loop and no `LDS` of the slot; a cell set to
/// `1.f` before a loop that updates it under a `continue` leaves one `STS`, at the update.
fn private_rewritten(scope: &Scope<'_>, all: &[SharedAccess], a: &SharedAccess) -> bool {
    if !matches!(a.kind, AccessKind::Store | AccessKind::LoadStore)
        || a.width.is_none()
        || a.byte_offset.unknown_reason().is_some()
    {
        return false;
    }
    let Some(f) = scope.facts().function_at(a.range.start) else {
        return false;
    };
    let statement = |r: &TextRange| scope.file.statement_at(r).unwrap_or_else(|| r.clone());
    let end = statement(&a.range).end;
    let from = all.partition_point(|o| o.range.start < end);
    let to = all.partition_point(|o| o.range.start < f.range.end);
    let later = all.get(from..to.max(from)).unwrap_or_default();
    let writes = |o: &SharedAccess| {
        matches!(o.kind, AccessKind::Store | AccessKind::LoadStore)
            && o.root == a.root
            && o.function == a.function
            && o.cast_type == a.cast_type
    };
    if !later.iter().any(writes) {
        return false;
    }
    let Some(mine) = element_bytes(scope, a) else {
        return false;
    };
    let text = scope.file.text();
    // The later store runs on every path from `a` on: no early exit between, and every
    // `if`, loop, `switch` and `?:` around it is around `a` too, but for a loop whose
    // iterations cover the bytes (a store under a branch leaves `a`'s value on the other
    // path: `buf[p] = 0.5f * buf[p]; if (buf[p] > 0.2f) buf[p] = 0.2f;` keeps the first
    // store's `STS`, nvcc 13.5).
    let every_path = |o: &SharedAccess| {
        text.get(end..o.range.start).is_some_and(|gap| {
            !["return", "break", "continue", "goto", "exit", "trap"]
                .iter()
                .any(|w| kernaut_syntax::lex::find_word(gap, w, 0).is_some())
        }) && scope
            .file
            .enclosing(o.range.start)
            .iter()
            .filter(|e| !matches!(e.kind, EnclosingKind::Function { .. }))
            .all(|e| {
                e.range.contains(&a.range.start)
                    || matches!(&e.kind, EnclosingKind::For { var: Some(v), .. }
                        if loop_bounds(&o.byte_offset, v).is_some_and(|(s, t)| t > s))
            })
    };
    later.iter().any(|o| {
        writes(o)
            && (same_bytes(o, a) || element_bytes(scope, o).is_some_and(|t| covers(&t, &mine)))
            && every_path(o)
    }) && (a.kind == AccessKind::Store || dominating_store(scope, all, a))
        && thread_private(scope, all, a)
        && !scope
            .file
            .variable_at(a.range.start)
            .is_some_and(|v| v.is_volatile)
}

/// Whether the merged access of `parts` may move past the other accesses of their buffer
/// in the statements from the first part's to the last's (see [`Merged`]): the merged load
/// is made at the first part, the merged store at the last, so a part that reads moves up
/// past the writes before it and a part that writes moves down past every access after
/// it. Within one statement the assignment's target is written after its right-hand side
/// is read. Each such pair must be provably apart ([`apart`]).
fn reorder_is_safe(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    window: &[SharedAccess],
    parts: &[&SharedAccess],
) -> bool {
    let statement = |r: &TextRange| scope.file.statement_at(r).unwrap_or_else(|| r.clone());
    let Some(first) = parts.first() else {
        return false;
    };
    let from = parts.iter().map(|p| statement(&p.range).start).min();
    let to = parts.iter().map(|p| statement(&p.range).end).max();
    let (Some(from), Some(to)) = (from, to) else {
        return false;
    };
    let writes = |k: AccessKind| matches!(k, AccessKind::Store | AccessKind::LoadStore);
    let reads = |k: AccessKind| matches!(k, AccessKind::Load | AccessKind::LoadStore);
    window
        .iter()
        .filter(|o| {
            o.root == first.root
                && o.range.start >= from
                && o.range.end <= to
                && !parts.iter().any(|p| p.range == o.range)
        })
        .all(|o| {
            if o.kind == AccessKind::AddressOf {
                return false;
            }
            let so = statement(&o.range).start;
            parts.iter().all(|p| {
                let sp = statement(&p.range).start;
                let before = match so.cmp(&sp) {
                    std::cmp::Ordering::Less => true,
                    std::cmp::Ordering::Greater => false,
                    // Two targets of one statement: keep them apart.
                    std::cmp::Ordering::Equal if writes(o.kind) && writes(p.kind) => {
                        return apart(scope, o, p);
                    }
                    // The right-hand side is read before the target is written.
                    std::cmp::Ordering::Equal => !writes(o.kind),
                };
                let crosses = if before {
                    reads(p.kind) && writes(o.kind)
                } else {
                    writes(p.kind)
                };
                !crosses || apart(scope, o, p)
            }) || forwarded(scope, all, o)
        })
}

/// Whether two accesses of one thread never overlap, for every value of their variable
/// parts: their byte offsets differ by a constant that, modulo what divides both variable
/// parts, leaves room for both widths (`s[t * 4 + 1]` and `s[(t + h) * 4]` of doubles are
/// 8 bytes apart modulo 32).
fn apart(scope: &Scope<'_>, o: &SharedAccess, p: &SharedAccess) -> bool {
    let (Some(wo), Some(wp)) = (o.width, p.width) else {
        return false;
    };
    let (Ok(wo), Ok(wp)) = (i64::try_from(wo), i64::try_from(wp)) else {
        return false;
    };
    let theirs = scope.cache.split(&o.byte_offset, split_constant);
    let ours = scope.cache.split(&p.byte_offset, split_constant);
    let ((co, ko), (cp, kp)) = ((&theirs.0, theirs.1), (&ours.0, ours.1));
    if co.unknown_reason().is_some() || cp.unknown_reason().is_some() {
        return false;
    }
    if co == cp {
        return ko.checked_add(wo).is_some_and(|e| e <= kp)
            || kp.checked_add(wp).is_some_and(|e| e <= ko);
    }
    let mut d = (divisor(co).unsigned_abs(), divisor(cp).unsigned_abs());
    while d.1 != 0 {
        d = (d.1, d.0 % d.1);
    }
    let Ok(d) = i64::try_from(d.0) else {
        return false;
    };
    let Some(r) = ko
        .checked_sub(kp)
        .filter(|_| d > 1)
        .map(|x| x.rem_euclid(d))
    else {
        return false;
    };
    r >= wp && r + wo <= d
}

/// Written-out parts merged into `wide` bytes at `offset`, inside an unrolled loop whose
/// variable steps the offset by exactly `wide` bytes (`s[tid * 16 + i * 2]` and `[… + 1]`
/// in `for (i = 0; i < 2; i++)`): nvcc merges the iterations too, up to 16 bytes. nvcc
/// 13.5 `-arch=sm_90 -cubin`, `cuobjdump -sass`: the float pair stored in `for (i < 2)`
/// (no pragma) inside `for (n < 2)` is two `STS.128`, the float pair read in
/// `for (i < 4)` two `LDS.128` (mirage's `single_batch_decoding`: 8 `STS.128`, 32
/// `LDS.128`). How many iterations one access covers, the loop variable and the offset
/// at the loop's first iteration.
fn pairs_across_iterations(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    a: &SharedAccess,
    offset: &IndexExpr,
    wide: u64,
) -> Option<(u64, String, IndexExpr)> {
    // 2-byte elements are packed into at most 8 bytes: two `__half` stores a step over
    // 16 steps are eight `STS.64` (nvcc 13.5 `-arch=sm_90 -O3`), as four written-out
    // ones are one.
    let widest = if a.element_size == Some(2) { 8 } else { 16 };
    if wide >= widest {
        return None;
    }
    let chain = scope.file.enclosing(a.range.start);
    let (lp, name) = chain.iter().find_map(|e| match &e.kind {
        EnclosingKind::For { var: Some(v), .. } => Some((e, v.clone())),
        EnclosingKind::Function { .. } => None,
        _ => None,
    })?;
    let (_, bytes) = loop_term(offset, Some(&name))?;
    if bytes != i64::try_from(wide).ok()? {
        return None;
    }
    let (start, end) = loop_bounds(offset, &name)?;
    let trips = end.checked_sub(start)?;
    let pragma = scope.file.unroll_pragma_of(lp.range.start);
    let unrolled = match pragma {
        Some(p) => p.factor.map_or(trips, |f| f.min(trips)),
        None => {
            let cost = i64::from(scope.file.loop_body_cost(&lp.range)?);
            if trips.checked_mul(cost)? > UNROLLED_WITHOUT_PRAGMA {
                return None;
            }
            trips
        }
    };
    // Nothing else in the loop stores to the array (for a store: touches it).
    let clash = all.iter().any(|o| {
        o.root == a.root
            && lp.range.contains(&o.range.start)
            && o.kind != a.kind
            && (a.kind == AccessKind::Store || o.kind == AccessKind::Store)
    });
    if clash {
        return None;
    }
    let first = with_loop_var(offset, &name, start);
    let (core, c) = split_constant(&first);
    if core.unknown_reason().is_some() {
        return None;
    }
    let m = widest / wide;
    let total = i64::try_from(wide * m).ok()?;
    let n = i64::try_from(m).ok()?;
    (m >= 2
        && unrolled % n == 0
        && trips % n == 0
        && divisor(&core) % total == 0
        && c.rem_euclid(total) == 0)
        .then_some((m, name.to_string(), first))
}

/// The largest trip count × body cost ([`SourceFile::loop_body_cost`]) nvcc was seen to
/// unroll in full without a pragma (see [`Merged`]).
const UNROLLED_WITHOUT_PRAGMA: i64 = 600;

/// The wide access an unrolled loop over consecutive elements of one thread makes of
/// `a` (see [`Merged`]): the offset is `a`'s at the loop's first iteration.
fn loop_merged(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    a: &SharedAccess,
    elem: u64,
) -> Option<(Merged, IndexExpr)> {
    // The innermost loop around the access whose variable steps its elements, with the
    // variables of the loops around it held (`s[k][4 * tx + n]` unrolled over `n` inside
    // an unrolled `k` loop); else the one loop variable of the index.
    let innermost = scope
        .file
        .enclosing(a.range.start)
        .iter()
        .find_map(|e| match &e.kind {
            EnclosingKind::For { var: Some(v), .. } => Some(v.clone()),
            _ => None,
        });
    let (name, bytes) = innermost
        .as_deref()
        .and_then(|v| loop_term(&a.byte_offset, Some(v)))
        .or_else(|| loop_term(&a.byte_offset, None))?;
    if bytes != i64::try_from(elem).ok()? {
        return None;
    }
    let (start, end) = loop_bounds(&a.byte_offset, &name)?;
    let trips = end.checked_sub(start)?;
    if trips < 2 {
        return None;
    }
    // The loop, and how far nvcc unrolls it.
    let chain = scope.file.enclosing(a.range.start);
    let lp = chain
        .iter()
        .find(|e| matches!(&e.kind, EnclosingKind::For { var: Some(v), .. } if **v == *name))?;
    let unrolled = unroll_factor(scope, &lp.range, trips)?;
    // An access that some iterations skip (under an `if` inside the loop whose condition
    // changes with the iteration, or after a `continue` or `break`) stays scalar: nvcc
    // 13.5 keeps four `LDS` for `if (l >= N) continue; if (g < n) y[g] = s[t * 4 + i];`
    // over `i < 4`.
    let inside = &chain[..chain.iter().position(|e| std::ptr::eq(e, lp))?];
    let per_iteration = inside.iter().any(|e| match &e.kind {
        EnclosingKind::If {
            condition_range, ..
        } => scope
            .file
            .lane_guard_comparisons(condition_range, &[])
            .is_none_or(|comps| {
                comps
                    .iter()
                    .any(|c| c.left.has_loop_var() || c.right.has_loop_var())
            }),
        EnclosingKind::Conditional { .. } => true,
        _ => false,
    });
    let skips = scope
        .file
        .text()
        .get(lp.range.start..a.range.start)
        .is_some_and(|t| {
            ["continue", "break"]
                .iter()
                .any(|w| kernaut_syntax::lex::find_word(t, w, 0).is_some())
        });
    if per_iteration || skips {
        return None;
    }
    // A store to the array in the loop (for a store, any other access) keeps the
    // accesses apart.
    // A load served from a register and a store the thread overwrites make no
    // instruction: they keep nothing apart.
    let others: Vec<&SharedAccess> = all
        .iter()
        .filter(|o| o.root == a.root && o.range != a.range && lp.range.contains(&o.range.start))
        .filter(|o| match o.kind {
            AccessKind::Load => !forwarded(scope, all, o),
            AccessKind::Store => !overwritten(scope, all, o),
            _ => true,
        })
        .collect();
    // An update in the loop merges only in a dynamic buffer, with the loop's loads lined
    // up with it (below).
    let updates =
        a.kind == AccessKind::LoadStore || others.iter().any(|o| o.kind == AccessKind::LoadStore);
    let clash = others.iter().any(|o| {
        a.kind == AccessKind::Store
            || !matches!(o.kind, AccessKind::Load | AccessKind::LoadStore)
            || (a.kind == AccessKind::LoadStore && o.kind != AccessKind::Load)
    }) || (updates && !is_dynamic_buffer(scope, a));
    if clash {
        return None;
    }
    let first = with_loop_var(&a.byte_offset, &name, start);
    // An update (a dynamic buffer's `sd[t * 4 + k] += sd[(t + s) * 4 + k]`): its merged
    // load moves the later iterations' reads of the loop's other loads before the earlier
    // iterations' writes. That is safe where each of them walks the same elements per
    // iteration from a start a whole number of wide accesses away: the groups the two
    // touch are then the same or apart (nvcc 13.5 `-arch=sm_90 -O3`: two `LDS.128` and
    // one `STS.128` for the pairwise step of four floats in an `extern` buffer).
    let groups_line_up = |wide: i64| {
        others.iter().all(|o| {
            loop_term(&o.byte_offset, Some(&name)) == Some((name.clone(), bytes)) && {
                let theirs = with_loop_var(&o.byte_offset, &name, start);
                let (core, c) =
                    split_constant(&IndexExpr::binary(theirs, BinOp::Sub, first.clone()));
                core.unknown_reason().is_none()
                    && divisor(&core) % wide == 0
                    && c.rem_euclid(wide) == 0
            }
        })
    };
    let (core, c) = split_constant(&first);
    if core.unknown_reason().is_some() {
        return None;
    }
    let half = elem == 2 && a.kind == AccessKind::Load && is_half_array(scope, a);
    for &k in loop_merge_counts(elem, a.kind, half) {
        let n = i64::try_from(k).ok()?;
        let wide = i64::try_from(k * elem).ok()?;
        if unrolled % n != 0 || trips % n != 0 {
            continue;
        }
        if divisor(&core) % wide != 0 || c.rem_euclid(wide) != 0 {
            continue;
        }
        if updates && !groups_line_up(wide) {
            continue;
        }
        return Some((
            Merged {
                width: k * elem,
                parts: vec![a.range.clone()],
                iterations: Some((name, k)),
            },
            first,
        ));
    }
    None
}

/// How many iterations of the loop at `loop_range` (of `trips` iterations) nvcc unrolls:
/// the factor of its `#pragma unroll` (all of them with none given), else all of them where
/// trips × body cost stays within what nvcc was seen to unroll in full (see [`Merged`]).
fn unroll_factor(scope: &Scope<'_>, loop_range: &TextRange, trips: i64) -> Option<i64> {
    let pragma = scope.file.unroll_pragma_of(loop_range.start);
    match pragma {
        Some(p) => Some(p.factor.map_or(trips, |f| f.min(trips))),
        None => {
            let cost = i64::from(scope.file.loop_body_cost(loop_range)?);
            (trips.checked_mul(cost)? <= UNROLLED_WITHOUT_PRAGMA).then_some(trips)
        }
    }
}

/// Why the scalar degree of a shared access is only an upper bound: the compiler may
/// fuse it with others into an 8- or 16-byte access, whose degree is lower.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeDoubt {
    /// It walks consecutive elements in a loop nvcc unrolls only in part: its trip count
    /// is known only at run time, or too large to unroll in full
    /// ([`may_merge_in_runtime_loop`]).
    PartialUnroll,
    /// A step of an unrolled loop reads what an earlier step of the same thread stored
    /// ([`carried_through_memory`]).
    CarriedThroughMemory,
    /// A statement and an unrolled loop next to it cover consecutive elements of the
    /// thread's part together ([`merges_across_statements`]).
    AcrossStatements,
    /// Consecutive elements whose offset only a remainder makes a multiple of the wide
    /// access, in a buffer not declared so aligned: nvcc fuses them where it proves the
    /// alignment from the layout, and not otherwise ([`merged_access`]).
    Alignment,
}

/// Whether `a` and the accesses of the same kind next to it, one of the two in a loop
/// nvcc unrolls in full, touch consecutive elements of the thread's part that fill an
/// aligned 8- or 16-byte slot together: a head statement, an unrolled loop over the
/// middle elements and a tail statement (`buf[t * 8 + 0] = v[0]; for (k = 1; k < 7; ++k)
/// buf[t * 8 + k] = v[k]; buf[t * 8 + 7] = v[7];` is two `STS.128`, nvcc 13.5
/// `-arch=sm_90 -O3`). The merge model fuses within a statement stretch or a loop, not
/// across the two: the scalar figure is an upper bound.
pub fn merges_across_statements(scope: &Scope<'_>, all: &[SharedAccess], a: &SharedAccess) -> bool {
    let Some(elem) = a.element_size.filter(|e| matches!(e, 4 | 8)) else {
        return false;
    };
    if !matches!(a.kind, AccessKind::Load | AccessKind::Store) || a.width != Some(elem) {
        return false;
    }
    let statement = |r: &TextRange| scope.file.statement_at(r).unwrap_or_else(|| r.clone());
    // The statement that holds `x` in its block: the outermost loop around it whose
    // variable its offset walks and that nvcc unrolls in full, else its own statement;
    // `None` where such a loop is not unrolled in full.
    let holder = |x: &SharedAccess| -> Option<(TextRange, bool)> {
        let names = loop_var_names(&x.byte_offset);
        if names.is_empty() {
            return Some((statement(&x.range), false));
        }
        let mut outer: Option<TextRange> = None;
        for e in scope.file.enclosing(x.range.start) {
            if let EnclosingKind::For { var: Some(v), .. } = &e.kind {
                if names.iter().any(|n| **n == **v) {
                    let (lo, hi) = loop_bounds(&x.byte_offset, v)?;
                    if unroll_factor(scope, &e.range, hi - lo) != Some(hi - lo) {
                        return None;
                    }
                    outer = Some(e.range.clone());
                }
            }
        }
        outer.map(|r| (r, true))
    };
    let Some(f) = scope.facts().function_at(a.range.start) else {
        return false;
    };
    let lo = all.partition_point(|o| {
        o.range.start < f.range.start.max(a.range.start.saturating_sub(WINDOW))
    });
    let hi = all.partition_point(|o| o.range.start <= f.range.end.min(a.range.start + WINDOW));
    let elem = elem as i64;
    let first = |x: &SharedAccess| {
        scope
            .cache
            .first_split(&x.byte_offset, |e| split_constant(&at_first_iteration(e)))
    };
    let mine_first = first(a);
    // The cheap questions first: the same array and kind, and bytes that fill a slot
    // with `a`'s; the loops around each (their unrolling) only for those.
    let candidates: Vec<&SharedAccess> = all
        .get(lo..hi.max(lo))
        .unwrap_or_default()
        .iter()
        .filter(|o| {
            o.range != a.range
                && o.root == a.root
                && o.kind == a.kind
                && o.width == a.width
                && o.cast_type == a.cast_type
                && o.function == a.function
                && (o.byte_offset.has_loop_var() || a.byte_offset.has_loop_var())
                && constant_part(&o.byte_offset).abs_diff(constant_part(&a.byte_offset)) < 64
        })
        // The same part of the thread at the loops' first iterations, before the
        // iterations are listed.
        .filter(|o| {
            let theirs = first(o);
            (mine_first.1 - theirs.1).abs() < 64 && same_value(&mine_first.0, &theirs.0)
        })
        .collect();
    if candidates.is_empty() {
        return false;
    }
    let Some(bytes) = element_bytes(scope, a) else {
        return false;
    };
    if divisor(&bytes.0) % 16 != 0 {
        return false;
    }
    let candidates: Vec<&SharedAccess> = candidates
        .into_iter()
        .filter(|o| {
            let Some(other) = element_bytes(scope, o) else {
                return false;
            };
            if !same_value(&bytes.0, &other.0) {
                return false;
            }
            // An aligned 8- or 16-byte slot that holds an element of each, and whose
            // every element one of the two touches.
            let touched = |k: i64| bytes.1.iter().chain(&other.1).any(|&(s, _)| s == k);
            bytes.1.iter().any(|&(s, _)| {
                [8, 16].iter().any(|&w| {
                    let base = s - s.rem_euclid(w);
                    (base..base + w).step_by(elem as usize).all(touched)
                        && other.1.iter().any(|&(t, _)| (base..base + w).contains(&t))
                })
            })
        })
        .collect();
    if candidates.is_empty() {
        return false;
    }
    let Some((mine, looped)) = holder(a) else {
        return false;
    };
    candidates.into_iter().any(|o| {
        let Some((theirs, their_loop)) = holder(o) else {
            return false;
        };
        if !(looped || their_loop) || theirs == mine {
            return false;
        }
        if theirs.start < mine.start {
            scope.file.statements_in_line(&theirs, &mine)
        } else {
            scope.file.statements_in_line(&mine, &theirs)
        }
    })
}

/// Whether `a`, in a loop of known trip count that nvcc unrolls, touches elements that
/// another access of the same array in the loop touches at another iteration, one of the
/// two writing them: each step reads what an earlier step of the same thread stored
/// (a thread's sequential scan over its own words, `buf[idx] += buf[idx - 1]` with `idx =
/// t * 4 + i` over `i`). nvcc keeps such a value in a register and fuses what is left of
/// the unrolled steps into wider accesses, in ways that change with the guards and the
/// kind of buffer: nvcc 13.5 `-arch=sm_90 -O3 -cubin` on that scan over `i` from 1 to 3,
/// four floats a thread, gives one `LDS.128` and then `STS`, `STS.64` in an `extern`
/// buffer; `LDS.64`, `LDS`, `LDS` and three `STS` in a static `float buf[1024]`; and with
/// the update under `if (idx < n)`, `LDS.64`, `LDS`, `LDS`, `LDS.64` and three `STS`. The
/// scalar figure is then an upper bound ([`MergeDoubt::CarriedThroughMemory`]).
pub fn carried_through_memory(scope: &Scope<'_>, all: &[SharedAccess], a: &SharedAccess) -> bool {
    let Some(elem) = a.element_size.filter(|e| matches!(e, 4 | 8)) else {
        return false;
    };
    if a.width != Some(elem) || a.cast_type.is_some() {
        return false;
    }
    // Only a loop variable of the offset can carry a step to the next (cheap: most
    // offsets read none).
    if !a
        .byte_offset
        .mentions(&|e| matches!(e, IndexExpr::LoopVar { .. }))
    {
        return false;
    }
    let chain = scope.file.enclosing(a.range.start);
    chain.iter().any(|lp| {
        let EnclosingKind::For {
            var: Some(name), ..
        } = &lp.kind
        else {
            return false;
        };
        // The other accesses of the array in the loop (`all` is in document order), one
        // of the two writing.
        let lo = all.partition_point(|o| o.range.start < lp.range.start);
        let hi = all.partition_point(|o| o.range.start < lp.range.end);
        let others: Vec<&SharedAccess> = all
            .get(lo..hi.max(lo))
            .unwrap_or_default()
            .iter()
            .filter(|o| {
                o.root == a.root
                    && o.range != a.range
                    && o.width == a.width
                    && (a.kind != AccessKind::Load || o.kind != AccessKind::Load)
            })
            .collect();
        if others.is_empty() {
            return false;
        }
        let Some((_, bytes)) = loop_term(&a.byte_offset, Some(name)).filter(|(_, b)| *b != 0)
        else {
            return false;
        };
        let Some((start, end)) = loop_bounds(&a.byte_offset, name) else {
            return false;
        };
        let trips = end - start;
        if trips < 2 {
            return false;
        }
        let (core, c) = split_constant(&with_loop_var(&a.byte_offset, name, start));
        if core.unknown_reason().is_some() {
            return false;
        }
        others.iter().any(|o| {
            loop_term(&o.byte_offset, Some(name)) == Some((name.to_string(), bytes)) && {
                let (theirs, d) = split_constant(&with_loop_var(&o.byte_offset, name, start));
                let steps = (d - c) / bytes;
                theirs == core && d != c && (d - c) % bytes == 0 && steps.abs() < trips
            }
        }) && unroll_factor(scope, &lp.range, trips).is_some_and(|u| u >= 2)
    })
}

/// Whether `a` (a 4- or 8-byte load or store) walks consecutive elements from an 8-byte
/// aligned start with the variable of a loop around it that nvcc unrolls only in part (its
/// trip count known only at run time, or too large to unroll in full) and that no
/// `#pragma unroll 1` keeps rolled: nvcc 13.5 unrolls such a loop in
/// part and fuses the parts (`Sij[tid][j]` over `j < k_size` under `#pragma unroll`: two
/// `LDS.128` in one kernel, fourteen `LDS.64` and one `LDS.128` in another), so the
/// scalar figure is an upper bound. A loop that also stores to the array (`all`: the
/// function's shared accesses) is not fused.
pub fn may_merge_in_runtime_loop(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    a: &SharedAccess,
) -> bool {
    let Some(elem) = a.element_size.filter(|e| matches!(e, 4 | 8)) else {
        return false;
    };
    if !matches!(a.kind, AccessKind::Load | AccessKind::Store) || a.width != Some(elem) {
        return false;
    }
    // The loop whose variable walks the elements one by one: the innermost around the
    // access, or an outer one where the inner ones move another index (`t[c * 4 + r][k]`
    // over `k`, around a loop over `r`). One that nvcc unrolls in full is the exact
    // model's ([`Merged`]); one of known length that it does not is unrolled in part, as
    // one of run-time length (nvcc 13.5: `k < 64` around four rows gives `LDS.128`).
    let Some((lp, name)) = scope
        .file
        .enclosing(a.range.start)
        .into_iter()
        .filter_map(|e| match &e.kind {
            EnclosingKind::For {
                var: Some(name), ..
            } => Some((e.clone(), name.clone())),
            _ => None,
        })
        .find(|(_, name)| {
            loop_term(&a.byte_offset, Some(name)) == Some((name.to_string(), elem as i64))
        })
    else {
        return false;
    };
    let name = &name;
    if let Some((start, end)) = loop_bounds(&a.byte_offset, name) {
        let trips = end - start;
        // A body with calls (`sinf`, `cosf`) is not unrolled at all (one `LDS` in a loop).
        let calls = scope
            .file
            .calls_in(lp.range.start)
            .iter()
            .any(|c| lp.range.contains(&c.range.start));
        // Stores in the loop, through pointers that may alias, keep the steps apart (nvcc
        // 13.5: `Ks[tid][d] = K[…]; Vs[tid][d] = V[…];` over `d < 64` stays scalar `STS`).
        let stores = |accesses: &[SharedAccess]| {
            accesses.iter().any(|o| {
                lp.range.contains(&o.range.start)
                    && matches!(o.kind, AccessKind::Store | AccessKind::LoadStore)
            })
        };
        if trips < 2
            || calls
            || a.kind != AccessKind::Load
            || stores(all)
            || stores(&scope.file.global_accesses())
            || unroll_factor(scope, &lp.range, trips).is_some_and(|u| u == trips)
        {
            return false;
        }
    }
    // A store to the array in the loop (for a store, any other access of it) keeps the
    // accesses apart, as in a loop of known length (`s[i][j] = expf(s[i][j] - m)`:
    // scalar `LDS` and `STS` in SASS).
    let clash = all.iter().any(|o| {
        o.root == a.root
            && o.range != a.range
            && lp.range.contains(&o.range.start)
            && (a.kind == AccessKind::Store
                || matches!(o.kind, AccessKind::Store | AccessKind::LoadStore))
    });
    if clash {
        return false;
    }
    // The walk starts aligned to two elements where the compiler can tell (rows of a
    // constant width, a constant first value of the loop variable): a runtime row stride,
    // or `double`s from an odd element (`j = 1`: scalar `LDS.64` in SASS), stay apart.
    let Some(first) = loop_start(&a.byte_offset, name) else {
        return false;
    };
    let pair = 2 * elem as i64;
    let (core, c) = split_constant(&with_loop_var(&a.byte_offset, name, first));
    if core.unknown_reason().is_some() || divisor(&core) % pair != 0 || c.rem_euclid(pair) != 0 {
        return false;
    }
    scope
        .file
        .unroll_pragma_of(lp.range.start)
        .is_none_or(|p| p.factor != Some(1))
}

/// The one loop variable of `e` and its coefficient, where `e` is linear in it with a
/// constant coefficient (`row * 512 + 16 * lane + 4 * e` gives `("e", 4)`). With `only`,
/// that variable's coefficient, the other loop variables held like any other term
/// (`k * 512 + 4 * n` gives `("n", 4)` for `n`).
fn loop_term(e: &IndexExpr, only: Option<&str>) -> Option<(String, i64)> {
    fn coeff(e: &IndexExpr, name: &mut Option<String>, only: Option<&str>) -> Option<i64> {
        match e {
            IndexExpr::LoopVar { name: n, .. } if only.is_some_and(|o| o != n) => Some(0),
            IndexExpr::LoopVar { name: n, .. } => {
                if name.get_or_insert_with(|| n.clone()) != n {
                    return None;
                }
                Some(1)
            }
            IndexExpr::Binary(a, op @ (BinOp::Add | BinOp::Sub), b) => {
                let (x, y) = (coeff(a, name, only)?, coeff(b, name, only)?);
                match op {
                    BinOp::Add => x.checked_add(y),
                    _ => x.checked_sub(y),
                }
            }
            IndexExpr::Binary(a, BinOp::Mul, b) => match (&**a, &**b) {
                (x, IndexExpr::Int(m) | IndexExpr::Const { value: m, .. })
                | (IndexExpr::Int(m) | IndexExpr::Const { value: m, .. }, x) => {
                    coeff(x, name, only)?.checked_mul(*m)
                }
                _ => {
                    let none = |e: &IndexExpr| match only {
                        Some(o) => !e.mentions(
                            &|x| matches!(x, IndexExpr::LoopVar { name, .. } if name == o),
                        ),
                        None => !e.has_loop_var(),
                    };
                    (none(a) && none(b)).then_some(0)
                }
            },
            other => match only {
                Some(o) => (!other
                    .mentions(&|x| matches!(x, IndexExpr::LoopVar { name, .. } if name == o)))
                .then_some(0),
                None => (!other.has_loop_var()).then_some(0),
            },
        }
    }
    let mut name = None;
    let k = coeff(e, &mut name, only)?;
    Some((name?, k)).filter(|_| k != 0)
}

/// The constant start and exclusive end of loop variable `name` in `e`, stepping by 1.
fn loop_bounds(e: &IndexExpr, name: &str) -> Option<(i64, i64)> {
    match e {
        IndexExpr::LoopVar {
            name: n,
            start,
            end: Some(end),
            step: Some(1),
            ..
        } if n == name => match **start {
            IndexExpr::Int(s) | IndexExpr::Const { value: s, .. } => Some((s, *end)),
            _ => None,
        },
        IndexExpr::Binary(a, _, b) => loop_bounds(a, name).or_else(|| loop_bounds(b, name)),
        _ => None,
    }
}

/// The constant first value of loop variable `name` in `e`.
fn loop_start(e: &IndexExpr, name: &str) -> Option<i64> {
    match e {
        IndexExpr::LoopVar { name: n, start, .. } if n == name => match **start {
            IndexExpr::Int(s) | IndexExpr::Const { value: s, .. } => Some(s),
            _ => None,
        },
        IndexExpr::Binary(a, _, b) => loop_start(a, name).or_else(|| loop_start(b, name)),
        _ => None,
    }
}

/// `e` with each loop variable at its first value (0 where the start is not a constant).
fn at_first_iteration(e: &IndexExpr) -> IndexExpr {
    loop_var_names(e).iter().fold(e.clone(), |e, n| {
        let start = loop_start(&e, n).unwrap_or(0);
        with_loop_var(&e, n, start)
    })
}

/// `e` with loop variable `name` replaced by `value`.
fn with_loop_var(e: &IndexExpr, name: &str, value: i64) -> IndexExpr {
    match e {
        IndexExpr::LoopVar { name: n, .. } if n == name => IndexExpr::Int(value),
        IndexExpr::Binary(a, op, b) => IndexExpr::binary(
            with_loop_var(a, name, value),
            *op,
            with_loop_var(b, name, value),
        ),
        other => other.clone(),
    }
}

/// The names of the loop variables in `e`, each once.
fn loop_var_names(e: &IndexExpr) -> Vec<String> {
    let out: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
    e.mentions(&|x| {
        if let IndexExpr::LoopVar { name, .. } = x {
            if !out.borrow().contains(name) {
                out.borrow_mut().push(name.clone());
            }
        }
        false
    });
    out.into_inner()
}

/// `e` as `core + constant`: the constant terms of sums (and their multiples) moved out.
fn split_constant(e: &IndexExpr) -> (IndexExpr, i64) {
    match e {
        IndexExpr::Int(v) => (IndexExpr::Int(0), *v),
        IndexExpr::Binary(a, op @ (BinOp::Add | BinOp::Sub), b) => {
            let (ka, ca) = split_constant(a);
            let (kb, cb) = split_constant(b);
            let c = match op {
                BinOp::Add => ca.checked_add(cb),
                _ => ca.checked_sub(cb),
            };
            match c {
                Some(c) => (IndexExpr::binary(ka, *op, kb), c),
                None => (e.clone(), 0),
            }
        }
        IndexExpr::Binary(a, BinOp::Mul, b) => match (&**a, &**b) {
            (x, IndexExpr::Int(m)) | (IndexExpr::Int(m), x) => {
                let (k, c) = split_constant(x);
                match c.checked_mul(*m) {
                    Some(c) => (IndexExpr::binary(k, BinOp::Mul, IndexExpr::Int(*m)), c),
                    None => (e.clone(), 0),
                }
            }
            _ => (e.clone(), 0),
        },
        _ => (e.clone(), 0),
    }
}

/// The constant of [`split_constant`], without building the core.
fn constant_part(e: &IndexExpr) -> i64 {
    match e {
        IndexExpr::Int(v) => *v,
        IndexExpr::Binary(a, op @ (BinOp::Add | BinOp::Sub), b) => {
            let (ca, cb) = (constant_part(a), constant_part(b));
            match op {
                BinOp::Add => ca.checked_add(cb),
                _ => ca.checked_sub(cb),
            }
            .unwrap_or(0)
        }
        IndexExpr::Binary(a, BinOp::Mul, b) => match (&**a, &**b) {
            (x, IndexExpr::Int(m)) | (IndexExpr::Int(m), x) => {
                constant_part(x).checked_mul(*m).unwrap_or(0)
            }
            _ => 0,
        },
        _ => 0,
    }
}

/// Whether `e` takes a remainder (`%`) anywhere.
fn has_remainder(e: &IndexExpr) -> bool {
    match e {
        IndexExpr::Binary(a, op, b) => *op == BinOp::Rem || has_remainder(a) || has_remainder(b),
        IndexExpr::LoopVar { start, .. } => has_remainder(start),
        _ => false,
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(1)
}

/// A number every value of `e` is a multiple of (0: `e` is always 0).
fn divisor(e: &IndexExpr) -> i64 {
    divisor_through(e, true)
}

/// [`divisor`] without what remainders give (`remainders` false): `(q * 4) % 64` is a
/// multiple of 4, but not one nvcc's vectorizer finds without a declared alignment
/// ([`merged_access`]).
fn divisor_outside_remainders(e: &IndexExpr) -> i64 {
    divisor_through(e, false)
}

fn divisor_through(e: &IndexExpr, remainders: bool) -> i64 {
    let divisor = |e: &IndexExpr| divisor_through(e, remainders);
    match e {
        IndexExpr::Int(v) | IndexExpr::Const { value: v, .. } => v.checked_abs().unwrap_or(1),
        // A constant part written as arithmetic (`GROUP / 4` with `#define GROUP 32`).
        IndexExpr::Binary(..) if e.eval(&|_| None).is_some() => {
            e.eval(&|_| None).and_then(i64::checked_abs).unwrap_or(1)
        }
        IndexExpr::Binary(a, BinOp::Add | BinOp::Sub, b) => gcd(divisor(a), divisor(b)),
        IndexExpr::Binary(a, BinOp::Mul, b) => divisor(a).checked_mul(divisor(b)).unwrap_or(1),
        // `a % b` is `a - b * (a / b)`: a multiple of what divides both.
        IndexExpr::Binary(a, BinOp::Rem, b) if remainders => gcd(divisor(a), divisor(b)),
        IndexExpr::Binary(a, BinOp::Shl, b) => match &**b {
            IndexExpr::Int(s) if (0..32).contains(s) => divisor(a).checked_mul(1 << s).unwrap_or(1),
            _ => 1,
        },
        // Its values are the start plus a whole number of steps; a step that is no
        // constant (`k += blockDim.x * 4`) is a multiple of its own divisor.
        IndexExpr::LoopVar {
            start,
            step,
            stride,
            ..
        } => gcd(
            divisor(start),
            step.or_else(|| stride.as_deref().map(divisor)).unwrap_or(1),
        ),
        _ => 1,
    }
}

/// The lanes of warp 0 that reach an access, as the thread-dependent `if`s around it
/// decide ([`active_lanes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActiveLanes {
    /// Every lane: no guard, or guards every lane of warp 0 passes (or none does: the
    /// access belongs to other warps), or guards that are not read as limiting lanes.
    All,
    /// The lanes that pass every guard (bit `i`: lane `i`), and the guard that limits
    /// them (the innermost one that does).
    Known {
        /// Bit `i` set: lane `i` of warp `warp` issues the access.
        mask: u32,
        /// The limiting condition as written.
        condition: String,
        /// The warp of the block the lanes are in: 0, or the first that runs the
        /// access where no lane of warp 0 does (`if (threadIdx.y == 0) return;`).
        warp: i64,
    },
    /// A guard evidently leaves part of the warp idle (`lane == src`, `lane < 10`), but
    /// which lanes is not known.
    Partial {
        /// The condition as written.
        condition: String,
        /// The guard compares a thread index within the block with a value the file does
        /// not fix (`tid < active`, a runtime `active`): how many lanes pass depends on
        /// that value, and with a large enough one every lane of the warp does.
        runtime_bound: bool,
    },
    /// The guard's truth for each lane depends on data loaded at run time (`int cnt =
    /// pool[t]; if (cnt)`): any part of the warp, the whole warp included, may take it.
    DataDependent {
        /// The condition as written.
        condition: String,
    },
}

impl ActiveLanes {
    /// How many lanes issue the access, when known.
    pub fn count(&self) -> Option<u32> {
        match self {
            ActiveLanes::All => Some(32),
            ActiveLanes::Known { mask, .. } => Some(mask.count_ones()),
            ActiveLanes::Partial { .. } | ActiveLanes::DataDependent { .. } => None,
        }
    }

    /// Whether only part of the warp issues the access (known to be part of it: a guard
    /// on loaded data may let every lane in).
    pub fn is_partial(&self) -> bool {
        matches!(
            self,
            ActiveLanes::Known { .. } | ActiveLanes::Partial { .. }
        )
    }

    /// The guard a figure for the whole warp must assume every lane passes, and why
    /// that is not known: a runtime bound (`tid < active`) or loaded data (`if (cnt)`
    /// with `cnt = pool[t]`). `None` where the lanes are known or evidently partial.
    pub fn assumed_all(&self) -> Option<(&str, &'static str)> {
        match self {
            ActiveLanes::Partial {
                condition,
                runtime_bound: true,
            } => Some((condition, "whose bound is a runtime value")),
            ActiveLanes::DataDependent { condition } => {
                Some((condition, "which depends on data loaded at run time"))
            }
            _ => None,
        }
    }
}

/// The lanes of warp 0 that reach `offset` of `file`: each thread-dependent `if` around
/// it (inside its function) whose condition is comparisons joined by `&&`
/// ([`SourceFile::guard_comparisons`]) is evaluated for the 32 lanes (`lane < 16`,
/// `threadIdx.x < 8`, `tid % 32 < MMA_K` with `MMA_K` folded), the `else` branch taking
/// the other lanes; one that cannot be evaluated still counts as limiting when it
/// evidently leaves part of a warp idle ([`partial_warp`]). `block` is the
/// block when known (warp 0 is lanes 0–31 of it; an unknown `blockDim.x` is taken to be
/// a multiple of 32).
pub fn active_lanes(file: &SourceFile, offset: usize, block: [Option<i64>; 3]) -> ActiveLanes {
    active_lanes_in(file, offset, block, &[])
}

/// [`active_lanes`] in one instantiation of a template kernel: the template parameters in
/// `bound` take their values in the guards (`if (tid < R)` with `fold<4>` leaves 4 lanes).
/// A guard that compares a thread index within the block (no `blockIdx`) with a value
/// the file does not fix (`tid < batch * K`, a runtime `batch`) leaves an unknown part
/// of the warp ([`ActiveLanes::Partial`]): it is not a bounds check of a global index,
/// which every warp but the last passes.
pub fn active_lanes_in(
    file: &SourceFile,
    offset: usize,
    block: [Option<i64>; 3],
    bound: &[(String, i64)],
) -> ActiveLanes {
    active_lanes_bound(file, offset, block, bound, None)
}

/// [`active_lanes_in`] in a device function as a kernel calls it: `bind` gives its
/// parameters their values at the call (`lane` a parameter the kernel passes
/// `threadIdx.x % 32`), so a guard on parameters alone can leave part of the warp too.
pub fn active_lanes_bound(
    file: &SourceFile,
    offset: usize,
    block: [Option<i64>; 3],
    bound: &[(String, i64)],
    bind: Option<&dyn Fn(&IndexExpr) -> IndexExpr>,
) -> ActiveLanes {
    active_lanes_at(file, offset, block, bound, bind, Loops::Iteration(0))
}

/// [`active_lanes_bound`] with the loop variables at `loops` (one step of a tree loop,
/// [`Loops::Scaled`]): `if (tid < s)` in a loop that halves `s` leaves fewer lanes each
/// step.
pub fn active_lanes_at(
    file: &SourceFile,
    offset: usize,
    block: [Option<i64>; 3],
    bound: &[(String, i64)],
    bind: Option<&dyn Fn(&IndexExpr) -> IndexExpr>,
    loops: Loops<'_>,
) -> ActiveLanes {
    let guards = access_guards(file, offset, bind.is_some());
    if guards.is_empty() {
        return ActiveLanes::All;
    }
    if let Some(condition) = lane_window(file, offset, block, bound, bind, &guards) {
        return ActiveLanes::Partial {
            condition,
            runtime_bound: false,
        };
    }
    let in_warp = |warp: i64| guard_lanes(file, offset, block, bound, bind, loops, &guards, warp);
    let (mask, limiting) = match in_warp(0) {
        Ok(found) => found,
        Err(lanes) => return lanes,
    };
    // No lane of warp 0 runs the access (`if (threadIdx.y == blockDim.y - 1)`): the
    // first warp of the known block that does. With none (a bound that only the
    // samples of a runtime value keep every lane out of), or where no launch fixes the
    // block, the whole warp, as a later block's or warp's.
    if mask == 0 {
        if let (Some(condition), [Some(x), Some(y), Some(z)]) = (limiting.clone(), block) {
            let threads = x * y * z.max(1);
            for warp in 1..(threads + 31) / 32 {
                match in_warp(warp) {
                    Ok((0, _)) => continue,
                    Ok((u32::MAX, _)) => return ActiveLanes::All,
                    Ok((mask, found)) => {
                        return ActiveLanes::Known {
                            mask,
                            condition: found.unwrap_or(condition),
                            warp,
                        }
                    }
                    Err(lanes) => return lanes,
                }
            }
        }
    }
    match limiting {
        Some(condition) if mask != 0 && mask != u32::MAX => ActiveLanes::Known {
            mask,
            condition,
            warp: 0,
        },
        _ => ActiveLanes::All,
    }
}

/// Whether no thread of the known `block` runs the access at `offset` at the loop step
/// `loops`: every warp's lanes fail the thread-dependent guards around it, as they are
/// evaluated for that step (the last steps of an up-sweep, `index < N` with `index =
/// (t + 1) * 2 * stride`, where `stride` has passed `N / 2`).
pub fn no_thread_runs(
    file: &SourceFile,
    offset: usize,
    block: [Option<i64>; 3],
    bound: &[(String, i64)],
    bind: Option<&dyn Fn(&IndexExpr) -> IndexExpr>,
    loops: Loops<'_>,
) -> bool {
    let [Some(x), Some(y), Some(z)] = block else {
        return false;
    };
    let guards = access_guards(file, offset, bind.is_some());
    if guards.is_empty() {
        return false;
    }
    let threads = x * y * z.max(1);
    (0..(threads + 31) / 32).all(|warp| {
        matches!(
            guard_lanes(file, offset, block, bound, bind, loops, &guards, warp),
            Ok((0, _))
        )
    })
}

/// The guard around `offset` that, with the others and the conditions of the loops
/// around it, lets only part of a warp in whatever the runtime bound they compare with:
/// two bounds on one lane-strided value against the same bound (`k < len` of the loop
/// and `!(k + 3 < len)` of a ragged tail, with `k = 4 * threadIdx.x`) leave a window of 3
/// values, where lanes are 4 apart: one lane at most. Each comparison is evaluated for the 32 lanes at
/// each sample of the unknowns: its sides' difference must step by the same amount from
/// lane to lane, and the window's width must be the same at every sample. With `bind`
/// (a device function as a kernel calls it), the comparisons read the call's arguments
/// (`if (i + 0 < n)` in the tail of `put4(dst, j, n, v)`, `j` eight floats a thread).
fn lane_window(
    file: &SourceFile,
    offset: usize,
    block: [Option<i64>; 3],
    bound: &[(String, i64)],
    bind: Option<&dyn Fn(&IndexExpr) -> IndexExpr>,
    guards: &[(String, TextRange, bool)],
) -> Option<String> {
    let bound_side = |c: kernaut_syntax::GuardComparison| match bind {
        Some(b) => kernaut_syntax::GuardComparison {
            left: b(&c.left),
            right: b(&c.right),
            ..c
        },
        None => c,
    };
    // Each comparison with the guard it comes from (`None` for a loop's condition).
    let mut comps: Vec<(kernaut_syntax::GuardComparison, Option<String>)> = Vec::new();
    for (written, range, in_else) in guards {
        let Some(cs) = file.lane_guard_comparisons(range, bound) else {
            continue;
        };
        let shown = if *in_else {
            format!("!({written})")
        } else {
            written.clone()
        };
        if *in_else {
            // `!(a && b)` is no conjunction: only a single comparison negates.
            let [c] = cs.as_slice() else { continue };
            if !matches!(c.op.as_str(), "<" | "<=" | ">" | ">=") {
                continue;
            }
            let Some(op) = kernaut_syntax::GuardComparison::negated_op(&c.op) else {
                continue;
            };
            comps.push((
                bound_side(kernaut_syntax::GuardComparison {
                    op: op.to_string(),
                    ..c.clone()
                }),
                Some(shown),
            ));
        } else {
            comps.extend(cs.into_iter().map(|c| (bound_side(c), Some(shown.clone()))));
        }
    }
    if comps.is_empty() {
        return None;
    }
    for range in file.loop_conditions_around(offset) {
        if let Some(cs) = file.lane_guard_comparisons(&range, bound) {
            comps.extend(cs.into_iter().map(|c| (bound_side(c), None)));
        }
    }
    // Each ordering comparison as `a * lane + e op 0`, flipped so that `a > 0`: the bound
    // it puts on `a * lane` at every sample, whether that bound is from above, and the
    // guard it comes from.
    struct Bound<'g> {
        step: i64,
        limits: Vec<i64>,
        upper: bool,
        guard: Option<&'g String>,
    }
    let mut bounds: Vec<Bound<'_>> = Vec::new();
    'comp: for (c, guard) in &comps {
        // Only orderings come here (checked below before any use).
        let flip = |op: &str| kernaut_syntax::GuardComparison::swapped_op(op).unwrap_or("<=");
        if !matches!(c.op.as_str(), "<" | "<=" | ">" | ">=") {
            continue;
        }
        let diff = IndexExpr::binary(c.left.clone(), BinOp::Sub, c.right.clone());
        let mut slope = None;
        let mut limits = Vec::with_capacity(SAMPLES);
        for sample in 0..SAMPLES {
            let valuation = Valuation {
                sample,
                loops: Loops::Iteration(0),
                ..Valuation::warp0(block)
            };
            let Some(lanes) = valuation.lanes(&diff) else {
                continue 'comp;
            };
            let a = lanes[1] - lanes[0];
            if a == 0
                || slope.is_some_and(|s| s != a)
                || (0..lanes.len()).any(|i| lanes[i] != lanes[0] + a * i as i64)
            {
                continue 'comp;
            }
            slope = Some(a);
            let (e, op) = if a > 0 {
                (lanes[0], c.op.as_str())
            } else {
                (-lanes[0], flip(&c.op))
            };
            limits.push(match op {
                "<" => -e - 1,
                "<=" | ">=" => -e,
                _ => -e + 1,
            });
        }
        let Some(a) = slope else { continue };
        let op = if a > 0 { c.op.as_str() } else { flip(&c.op) };
        bounds.push(Bound {
            step: a.abs(),
            limits,
            upper: matches!(op, "<" | "<="),
            guard: guard.as_ref(),
        });
    }
    for hi in bounds.iter().filter(|b| b.upper) {
        for lo in bounds.iter().filter(|b| !b.upper && b.step == hi.step) {
            let widths: Vec<i64> = hi
                .limits
                .iter()
                .zip(&lo.limits)
                .map(|(h, l)| h - l + 1)
                .collect();
            // At most `ceil(width / step)` lanes fit in the window: fewer than the warp.
            let lanes = widths
                .first()
                .map_or(i64::MAX, |w| (w + hi.step - 1) / hi.step);
            if widths.iter().all(|w| *w == widths[0]) && lanes < banks::WARP_LANES as i64 {
                return lo.guard.or(hi.guard).cloned();
            }
        }
    }
    None
}

/// The thread-dependent guards around the access at `offset` (every `if` and `?:` arm
/// around it, with `all`), and the conditions of the early exits before it: (condition,
/// its range, whether the access is where it is false).
fn access_guards(file: &SourceFile, offset: usize, all: bool) -> Vec<(String, TextRange, bool)> {
    let mut guards: Vec<(String, TextRange, bool)> = Vec::new();
    for e in file.enclosing(offset) {
        match e.kind {
            EnclosingKind::Function { .. } => break,
            EnclosingKind::If {
                condition,
                condition_range,
                in_else,
                thread_dependent,
            } if thread_dependent || all => {
                guards.push((condition.to_string(), condition_range, in_else))
            }
            // `p ? s[i] : 0`: the lanes that evaluate the arm.
            EnclosingKind::Conditional {
                condition,
                condition_range,
                thread_dependent,
            } if thread_dependent || all => {
                // `Some(true)` is the arm taken when the condition holds.
                if let Some(taken_when_true) = file.conditional_arm(&e.range, offset) {
                    guards.push((condition.to_string(), condition_range, !taken_when_true));
                }
            }
            _ => {}
        }
    }
    // `if (c) return;` (or a branch that `continue`s) before the access: the lanes that
    // reach it passed with `c` false, as in the `else` of an `if` around it.
    guards.extend(exit_guards(file, offset, all));
    guards
}

/// The lanes of warp `warp` that pass `guards` (as [`active_lanes_at`] gathers them), and
/// the first guard that leaves some out; `Err` with the answer where a guard decides it
/// on its own (a runtime bound, a single lane, data).
#[allow(clippy::too_many_arguments)]
fn guard_lanes(
    file: &SourceFile,
    offset: usize,
    block: [Option<i64>; 3],
    bound: &[(String, i64)],
    bind: Option<&dyn Fn(&IndexExpr) -> IndexExpr>,
    loops: Loops<'_>,
    guards: &[(String, TextRange, bool)],
    warp: i64,
) -> Result<(u32, Option<String>), ActiveLanes> {
    let mut mask = u32::MAX;
    let mut limiting: Option<String> = None;
    // Each guard's comparisons, lowered, and whether the lanes are those they hold for.
    let mut lowered: Vec<(Vec<kernaut_syntax::GuardComparison>, bool)> = Vec::new();
    for (written, range, in_else) in guards {
        let (range, in_else) = (range, *in_else);
        // The lanes of an `else`, or past an early exit, are those the condition does
        // not hold for: named so.
        let shown = if in_else {
            format!("!({written})")
        } else {
            written.clone()
        };
        let condition = &shown;
        // An access in the condition itself runs in every lane that reaches the `if`.
        if range.contains(&offset) {
            continue;
        }
        // `if (tx <= 0 || tx >= 31) return;`: the lanes past it are those of
        // `tx > 0 && tx < 31`, the comparisons' negations.
        let clauses = file.lane_guard_clauses(range, bound);
        let in_else = in_else ^ clauses.as_ref().is_some_and(|(_, negated)| *negated);
        let comps = clauses.map(|(comps, _)| {
            let comps: Vec<kernaut_syntax::GuardComparison> = match bind {
                Some(bind) => comps
                    .into_iter()
                    .map(|c| kernaut_syntax::GuardComparison {
                        left: bind(&c.left),
                        right: bind(&c.right),
                        op: c.op,
                    })
                    .collect(),
                None => comps,
            };
            if bound.is_empty() {
                return comps;
            }
            let value = |name: &str| {
                bound
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| IndexExpr::Int(*v))
            };
            let refold = |name: &str| bound.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
            comps
                .into_iter()
                .map(|c| kernaut_syntax::GuardComparison {
                    left: c.left.rebind(&refold).substitute(&value),
                    right: c.right.rebind(&refold).substitute(&value),
                    op: c.op,
                })
                .collect()
        });
        if let Some(comps) = comps.as_deref().filter(|c| block_local_unknown_bound(c)) {
            // An ordering (`tid < active`) lets every lane in for some values; an
            // equality (`lane == src`) never does.
            let orders = comps
                .iter()
                .all(|c| matches!(c.op.as_str(), "<" | "<=" | ">" | ">="));
            return Err(ActiveLanes::Partial {
                condition: condition.clone(),
                runtime_bound: orders,
            });
        }
        // `if (t == total - 1)` with `t` a different value in each lane: at most one
        // lane passes, whatever `total` is (the equality never lets the warp in).
        if !in_else
            && comps
                .as_deref()
                .is_some_and(|cs| one_lane_equality(cs, block))
        {
            return Err(ActiveLanes::Partial {
                condition: condition.clone(),
                runtime_bound: false,
            });
        }
        if let Some(cs) = &comps {
            if guards.len() > 1 && !loads_vary_in_warp(&file.condition_loads(range), block) {
                lowered.push((cs.clone(), !in_else));
            }
        }
        let evaluated = comps
            .as_ref()
            .and_then(|comps| guard_mask(comps, block, loops, in_else, warp));
        match evaluated {
            Some(m) => {
                if m != u32::MAX && mask & m != mask {
                    limiting.get_or_insert_with(|| condition.clone());
                }
                mask &= m;
            }
            // One comparison of a conjunction that limits the lanes by itself
            // (`tid < R && oc_base + tid < oc`) bounds the lanes the whole guard lets
            // in, which are then fewer than the warp but not known.
            None if partial_warp(file, range)
                || (!in_else
                    && comps.as_deref().is_some_and(|cs| {
                        cs.len() > 1
                            && cs.iter().any(|c| {
                                guard_mask(std::slice::from_ref(c), block, loops, false, warp)
                                    .is_some_and(|m| m != u32::MAX)
                            })
                    })) =>
            {
                return Err(ActiveLanes::Partial {
                    condition: condition.clone(),
                    runtime_bound: false,
                })
            }
            // Any other condition on values loaded from memory at lane-dependent
            // addresses (`int cnt = pool[t]; if (cnt)`): which lanes pass is data, not
            // code. A load every lane of the warp makes at one address is one value for
            // the warp.
            None if loads_vary_in_warp(&file.condition_loads(range), block) => {
                return Err(ActiveLanes::DataDependent {
                    condition: condition.clone(),
                })
            }
            None => {}
        }
    }
    // Guards that, together, leave one value or two of a value distinct in every lane
    // (`i >= a && i <= b` and then `i <= a || i >= b`: the last `else` of a chain over
    // two cut points runs for `i == a` and `i == b` only): at most that many lanes, which
    // ones not known.
    if lowered.len() == guards.len() && lowered.len() > 1 {
        if let Some(n) = points_of(&lowered, block) {
            if (n as u32) < mask.count_ones() {
                let shown: Vec<String> = guards
                    .iter()
                    .map(|(w, _, e)| if *e { format!("!({w})") } else { w.clone() })
                    .collect();
                return Err(ActiveLanes::Partial {
                    condition: shown.join(" && "),
                    runtime_bound: false,
                });
            }
        }
    }
    Ok((mask, limiting))
}

/// How many values at most the thread-dependent value `v` may take where every guard of
/// `guards` (a conjunction of comparisons, each with whether the lanes are those it
/// holds for or those it fails for) passes, when every comparison compares one `v`, a
/// value distinct in each lane of warp 0, with a warp-uniform bound and together they
/// pin it to a few points (`v >= a && v <= a`); `None` otherwise.
fn points_of(
    guards: &[(Vec<kernaut_syntax::GuardComparison>, bool)],
    block: [Option<i64>; 3],
) -> Option<usize> {
    let varies = |e: &IndexExpr| {
        e.mentions(&|x| {
            matches!(
                x,
                IndexExpr::ThreadIdx(_) | IndexExpr::Lane | IndexExpr::LoopVar { .. }
            )
        })
    };
    // Each comparison as `v op bound`, with `v` the one thread-dependent side.
    let mut v: Option<IndexExpr> = None;
    let mut oriented = |c: &kernaut_syntax::GuardComparison| -> Option<(String, IndexExpr)> {
        let (value, bound, op) = match (varies(&c.left), varies(&c.right)) {
            (true, false) => (&c.left, &c.right, c.op.clone()),
            (false, true) => (
                &c.right,
                &c.left,
                kernaut_syntax::GuardComparison::swapped_op(&c.op)?.to_string(),
            ),
            _ => return None,
        };
        // What the lowering cannot read may differ by lane.
        if v.as_ref().is_some_and(|w| w != value)
            || bound.mentions(&|x| matches!(x, IndexExpr::Unknown(_)))
        {
            return None;
        }
        v = Some(value.clone());
        Some((op, bound.clone()))
    };
    // Disjunctive normal form: each clause a list of (op, bound) that all hold.
    let mut clauses: Vec<Vec<(String, IndexExpr)>> = vec![Vec::new()];
    for (comps, holds) in guards {
        let mut terms = Vec::new();
        for c in comps {
            terms.push(oriented(c)?);
        }
        if *holds {
            for clause in &mut clauses {
                clause.extend(terms.iter().cloned());
            }
        } else {
            // One comparison fails: a clause per comparison, negated.
            let negated: Vec<(String, IndexExpr)> = terms
                .into_iter()
                .map(|(op, b)| {
                    let op = kernaut_syntax::GuardComparison::negated_op(&op)?;
                    Some((op.to_string(), b))
                })
                .collect::<Option<_>>()?;
            let mut next = Vec::new();
            for clause in &clauses {
                for n in &negated {
                    let mut c = clause.clone();
                    c.push(n.clone());
                    next.push(c);
                }
            }
            clauses = next;
        }
        if clauses.len() > 16 {
            return None;
        }
    }
    let v = v?;
    let v = &v;
    // `v` distinct in every lane of warp 0, so each value is at most one lane.
    let valuation = Valuation::warp0(block);
    let mut seen = rustc_hash::FxHashSet::default();
    for lane in 0..32 {
        if !seen.insert(valuation.lane(v, lane)?) {
            return None;
        }
    }
    let mut total = 0usize;
    for clause in &clauses {
        // Lower and upper bounds over one base: `v >= a` and `v <= a + 1` leave two
        // values. Bounds over different bases are not compared.
        let mut by_base: Vec<(IndexExpr, Option<i64>, Option<i64>)> = Vec::new();
        for (op, b) in clause {
            let (base, k) = split_constant(b);
            let (lo, hi) = match op.as_str() {
                "<" => (None, Some(k - 1)),
                "<=" => (None, Some(k)),
                ">" => (Some(k + 1), None),
                ">=" => (Some(k), None),
                "==" => (Some(k), Some(k)),
                _ => (None, None),
            };
            let at = match by_base.iter().position(|(b, _, _)| *b == base) {
                Some(at) => at,
                None => {
                    by_base.push((base, None, None));
                    by_base.len() - 1
                }
            };
            let entry = &mut by_base[at];
            entry.1 = match (entry.1, lo) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            entry.2 = match (entry.2, hi) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        let count = by_base
            .iter()
            .filter_map(|(_, lo, hi)| {
                Some(usize::try_from(hi.as_ref()? - lo.as_ref()? + 1).unwrap_or(0))
            })
            .min()?;
        total += count;
    }
    Some(total)
}

/// Whether the equalities of `comps` (a conjunction) between a value that depends on the
/// thread and a value that names no thread index and reads nothing the lowering does not
/// know (`total - 1`, a kernel parameter) single out at most one lane of warp 0: the
/// lanes' values of those thread-dependent sides, taken together, differ in every lane
/// under every sample of what the file does not fix (`t == total - 1` with `t =
/// threadIdx.x + blockDim.x * blockIdx.x`; `x == sx && z == sz` with a 16×16 block,
/// where `x` repeats in the second half-warp and `z` tells the two rows apart).
fn one_lane_equality(comps: &[kernaut_syntax::GuardComparison], block: [Option<i64>; 3]) -> bool {
    let thread =
        |e: &IndexExpr| e.mentions(&|x| matches!(x, IndexExpr::ThreadIdx(_) | IndexExpr::Lane));
    let unknown = |e: &IndexExpr| e.mentions(&|x| matches!(x, IndexExpr::Unknown(_)));
    let varying: Vec<&IndexExpr> = comps
        .iter()
        .filter(|c| c.op == "==")
        .filter_map(|c| match (thread(&c.left), thread(&c.right)) {
            (true, false) => Some((&c.left, &c.right)),
            (false, true) => Some((&c.right, &c.left)),
            _ => None,
        })
        .filter(|(_, same)| !unknown(same))
        .map(|(v, _)| v)
        .collect();
    if varying.is_empty() {
        return false;
    }
    (0..SAMPLES).all(|sample| {
        let valuation = Valuation {
            sample,
            loops: Loops::Iteration(0),
            ..Valuation::warp0(block)
        };
        let mut keys: Vec<Vec<i64>> = (0..kernaut_gpu::banks::WARP_LANES)
            .map(|_| Vec::with_capacity(varying.len()))
            .collect();
        for v in &varying {
            let Some(lanes) = valuation.lanes(v) else {
                return false;
            };
            for (key, value) in keys.iter_mut().zip(lanes) {
                key.push(value);
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys.len() == kernaut_gpu::banks::WARP_LANES
    })
}

/// Whether one of `loads` (the element indices of the loads a condition reads) may be
/// at different addresses for different lanes of warp 0: an index that cannot be
/// evaluated, or one whose lanes differ under some sample of what the file does not fix.
fn loads_vary_in_warp(loads: &[IndexExpr], block: [Option<i64>; 3]) -> bool {
    loads.iter().any(|index| {
        (0..SAMPLES).any(|sample| {
            let valuation = Valuation {
                sample,
                loops: Loops::Iteration(0),
                ..Valuation::warp0(block)
            };
            match valuation.lanes(index) {
                Some(lanes) => lanes.iter().any(|l| *l != lanes[0]),
                None => true,
            }
        })
    })
}

/// Whether one of `comps` compares a thread index within the block (`threadIdx`, the
/// lane, with no `blockIdx` on either side) with a value that is not a constant: a kernel
/// parameter or another uniform (`tid < batch * K`). How many lanes of a warp pass it
/// depends on that value.
fn block_local_unknown_bound(comps: &[kernaut_syntax::GuardComparison]) -> bool {
    let thread =
        |e: &IndexExpr| e.mentions(&|x| matches!(x, IndexExpr::ThreadIdx(_) | IndexExpr::Lane));
    let global = |e: &IndexExpr| {
        e.mentions(
            &|x| matches!(x, IndexExpr::Uniform(n) if kernaut_gpu::expr::is_builtin_uniform(n)),
        )
    };
    // A kernel parameter, another uniform, or what the lowering cannot read (a load,
    // a call): not a constant.
    let runtime = |e: &IndexExpr| {
        e.mentions(&|x| match x {
            IndexExpr::Uniform(n) => !kernaut_gpu::expr::is_builtin_uniform(n),
            IndexExpr::Unknown(_) => true,
            _ => false,
        })
    };
    comps.iter().any(|c| {
        let (l, r) = (&c.left, &c.right);
        // `k + lane < K` in a loop over `k` is a tail guard: every iteration but the
        // last has the whole warp.
        !global(l)
            && !global(r)
            && !l.has_loop_var()
            && !r.has_loop_var()
            && ((thread(l) && !thread(r) && runtime(r)) || (thread(r) && !thread(l) && runtime(l)))
    })
}

/// The lanes of warp 0 for which all of `comps` hold, the same under every sample of
/// what the file does not fix (the one warp valuation: uniforms as matrix dimensions and
/// launch indices, an unknown `blockDim.x` a multiple of 32); `None` when a side cannot
/// be evaluated. The loop variables are at `loops`: the loop's first iteration, as the
/// bank and sector models hold it (`if (i + s < 2 * N)` in a down-sweep whose `s` starts at
/// `N / 2` leaves lane 0 of the iteration those models evaluate), or one step of a tree
/// loop.
/// The early exits before `offset` ([`kernaut_syntax::ControlFlow::exits_before`]) whose
/// condition depends on the thread (or on anything, where `any`), each as (condition,
/// its range, `true`: the lanes at `offset` are those it does not hold for).
fn exit_guards(file: &SourceFile, offset: usize, any: bool) -> Vec<(String, TextRange, bool)> {
    // Most accesses have no jump before them in their function: its text says so
    // without the function's control flow.
    let Some(f) = file.facts().function_at(offset) else {
        return Vec::new();
    };
    let before = file
        .text()
        .as_bytes()
        .get(f.range.start..offset)
        .unwrap_or_default();
    static JUMPS: std::sync::OnceLock<[memchr::memmem::Finder<'static>; 3]> =
        std::sync::OnceLock::new();
    let jumps = JUMPS.get_or_init(|| {
        ["return", "continue", "break"].map(|k| memchr::memmem::Finder::new(k.as_bytes()))
    });
    if !jumps.iter().any(|j| j.find(before).is_some()) {
        return Vec::new();
    }
    let Some(flow) = file.control_flow(offset) else {
        return Vec::new();
    };
    if !flow.jumps.iter().any(|j| j.range.start < offset) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for branch in flow.exits_before(offset) {
        let exit = file
            .enclosing(branch.start)
            .into_iter()
            .find_map(|e| match e.kind {
                EnclosingKind::If {
                    condition,
                    condition_range,
                    in_else: false,
                    thread_dependent,
                } if e.range.end >= branch.end => {
                    Some((condition, condition_range, thread_dependent))
                }
                _ => None,
            });
        if let Some((condition, range, thread_dependent)) = exit {
            if thread_dependent || any {
                out.push((condition.to_string(), range, true));
            }
        }
    }
    out
}

/// The lanes of warp `warp` for which every comparison of `comps` holds (with `negate`,
/// those for which one fails: the `else`), where each sample of the unknowns agrees.
fn guard_mask(
    comps: &[kernaut_syntax::GuardComparison],
    block: [Option<i64>; 3],
    loops: Loops<'_>,
    negate: bool,
    warp: i64,
) -> Option<u32> {
    if comps.is_empty() {
        return None;
    }
    // A comparison that reads no thread index (`b == dbg` with `b` the block's number) is
    // one value for the whole warp: it decides whether the warp runs the access, not
    // which of its lanes do. The lanes are those of the others; under an `else`, where
    // its being false lets every lane in, they are not known.
    // (What the lowering cannot read, a load, or a loop variable may differ by lane.)
    let varies = |e: &IndexExpr| {
        e.mentions(&|x| {
            matches!(
                x,
                IndexExpr::ThreadIdx(_)
                    | IndexExpr::Lane
                    | IndexExpr::Unknown(_)
                    | IndexExpr::LoopVar { .. }
            )
        })
    };
    let lane_comps: Vec<kernaut_syntax::GuardComparison> = comps
        .iter()
        .filter(|c| varies(&c.left) || varies(&c.right))
        .cloned()
        .collect();
    if lane_comps.len() < comps.len() {
        if lane_comps.is_empty() {
            return Some(u32::MAX);
        }
        if negate {
            return None;
        }
        return guard_mask(&lane_comps, block, loops, negate, warp);
    }
    let mut masks = [0u32; SAMPLES];
    let mut launch_only = true;
    for (sample, out) in masks.iter_mut().enumerate() {
        let valuation = Valuation {
            sample,
            loops,
            warp,
            ..Valuation::warp0(block)
        };
        let mut mask = 0u32;
        for lane in 0..32 {
            let mut holds = true;
            for c in comps {
                holds &= c.holds(
                    valuation.lane(&c.left, lane)?,
                    valuation.lane(&c.right, lane)?,
                );
            }
            if holds {
                mask |= 1 << lane;
            }
        }
        *out = if negate { !mask } else { mask };
        launch_only &= comps.iter().all(|c| {
            [&c.left, &c.right].iter().all(|e| {
                valuation
                    .assumed(e)
                    .iter()
                    .all(|(n, _)| n.starts_with("blockIdx.") || n.starts_with("blockDim."))
            })
        });
    }
    if masks.iter().all(|m| *m == masks[0]) {
        return Some(masks[0]);
    }
    // A bound on a global index that only the first block meets (`blockIdx.x *
    // blockDim.x + threadIdx.x < rows` with every launch passing `rows` = 6): the lanes
    // of the first block are the only ones that run, whichever other block is sampled
    // lets none in, and nothing but the launch's built-ins is assumed.
    (launch_only && masks[0] != 0 && masks[1..].iter().all(|m| *m == 0)).then_some(masks[0])
}

/// Whether the lanes' addresses relative to lane 0 under `offset` change with
/// `blockDim.x` ([`kernaut_gpu::expr::BLOCK_X_SAMPLES`], `.y` and `.z` from `block`):
/// `threadIdx.x * (2048 / blockDim.x)` does, `blockIdx.x * blockDim.x + threadIdx.x`
/// does not. `false` where a lane cannot be evaluated. The bank and coalescing rules
/// ask it of a kernel no launch fixes the block of, so that a figure resting on the
/// assumed `blockDim.x` is stated as an assumption.
pub fn depends_on_block_x(offset: &IndexExpr, block: [Option<i64>; 3]) -> bool {
    if !offset.mentions(&|x| matches!(x, IndexExpr::BlockDim(kernaut_syntax::Axis::X))) {
        return false;
    }
    let mut seen: Option<Vec<i64>> = None;
    for bx in kernaut_gpu::expr::BLOCK_X_SAMPLES {
        let v = Valuation::warp0([Some(bx), block[1], block[2]]);
        let Some(lanes) = v.lanes(offset) else {
            return false;
        };
        let rel: Vec<i64> = lanes.iter().map(|l| l - lanes[0]).collect();
        match &seen {
            None => seen = Some(rel),
            Some(s) if *s != rel => return true,
            _ => {}
        }
    }
    false
}

/// The bank model run on one access of `scope`'s file, for warp 0, with `all` the file's
/// accesses (the neighbours a merge looks for).
pub fn bank(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    access: &SharedAccess,
) -> Option<BankAnalysis> {
    let function = access
        .function
        .as_deref()
        .and_then(|f| scope.facts().kernel(f));
    bank_with(scope, all, access, &launch_config(scope, function))
}

/// [`bank`] with the launch configuration of the access's kernel already worked out
/// (the rules ask for many accesses of one kernel).
pub fn bank_with(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    access: &SharedAccess,
    launch: &LaunchConfig,
) -> Option<BankAnalysis> {
    bank_with_args(scope, all, access, launch, None)
}

/// [`bank_with`] for a device function's access as one call runs it: `bind` puts the
/// call's arguments for the function's parameters (`upsweep(buf, 256, threadIdx.x)`
/// gives `N` = 256 and `tid` = `threadIdx.x`), in its guards (`if (n < N)` with `n`
/// from `tid`) as the access's offset already has them.
pub fn bank_with_args(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    access: &SharedAccess,
    launch: &LaunchConfig,
    bind: Option<&dyn Fn(&IndexExpr) -> IndexExpr>,
) -> Option<BankAnalysis> {
    let facts = scope.facts();
    let function = access.function.as_deref().and_then(|f| facts.kernel(f));
    let mut width_bytes = access.width;
    let mut kind = match access.kind {
        AccessKind::Store => banks::AccessKind::Store,
        _ => banks::AccessKind::Load,
    };
    let mut copy = None;
    if access.kind == AccessKind::AddressOf {
        if let Some((callee, size)) = async_copy_of(scope.file, access) {
            width_bytes = Some(size);
            kind = banks::AccessKind::Store;
            copy = Some(callee);
        }
    }
    if forwarded(scope, all, access) || overwritten(scope, all, access) {
        return None;
    }
    let shape = |block| BankShape {
        width: width_bytes,
        kind,
        block,
    };
    let near = merged_access(scope, all, access, WINDOW);
    // Further parts are looked for where what was found is narrower than 16 bytes and
    // the scalar access conflicts.
    let narrow = near
        .as_ref()
        .is_none_or(|(m, _)| m.width < 16 && m.iterations.is_none());
    let merged = if narrow
        && scope
            .cache
            .bank(&access.byte_offset, shape(launch.block))
            .result
            .as_ref()
            .is_ok_and(|r| r.conflict_degree >= 2)
    {
        match merged_access(scope, all, access, LONG_WINDOW) {
            Some(far) if near.as_ref().is_none_or(|(m, _)| far.0.width > m.width) => Some(far),
            _ => near,
        }
    } else {
        near
    };
    let shape = |block| BankShape {
        width: merged.as_ref().map_or(width_bytes, |(m, _)| Some(m.width)),
        kind,
        block,
    };
    // Each instantiation the file launches; the worst conflict stands (the first on a
    // tie).
    let degree = |m: &BankModel| m.result.as_ref().map_or(0, |r| r.conflict_degree);
    let offset_of = |inst: Option<&Instantiation>| -> IndexExpr {
        match (&merged, inst) {
            (Some((_, o)), _) => o.clone(),
            (None, Some(inst)) => offset_in(facts, access, inst),
            (None, None) => access.byte_offset.clone(),
        }
    };
    let mut instantiation = None;
    let mut model = None;
    let instances = access
        .function
        .as_deref()
        .map(|k| launched_instantiations(facts, k))
        .unwrap_or_default();
    if merged.is_none() {
        for inst in instances {
            let m = scope
                .cache
                .bank(&offset_of(Some(&inst)), shape(launch.block));
            if model
                .as_deref()
                .is_none_or(|best| degree(&m) > degree(best))
            {
                model = Some(m);
                instantiation = Some(inst);
            }
        }
    }
    let offset = offset_of(instantiation.as_ref());
    let bound = instantiation.as_ref().map_or(&[][..], |i| &i.bound[..]);
    let model = match model {
        Some(m) => m,
        None => scope.cache.bank(&offset, shape(launch.block)),
    };
    // The other blocks the kernel may run with.
    let mut others = launch.others.clone();
    if !matches!(launch.source, BlockSource::Launch { .. }) || launch.uncertain.is_some() {
        let two_d = function
            .and_then(|f| f.body_range.clone())
            .and_then(|r| scope.file.text().get(r))
            .is_some_and(|t| t.contains("threadIdx.y") || t.contains("threadIdx.z"));
        for b in plausible_blocks(&offset, two_d) {
            if b != launch.block && !others.contains(&b) {
                others.push(b);
            }
        }
    }
    let other_blocks = others
        .into_iter()
        .map(|b| {
            let m = scope.cache.bank(&offset, shape(b));
            (b, m.result.as_ref().ok().map(|r| r.conflict_degree))
        })
        .collect();
    // Inside `if (lane == 0)` or `if (lane < 10)` only part of the warp accesses: the
    // full warp of the model overstates a conflict.
    let lanes = active_lanes_in(
        scope.file,
        access.range.start,
        launch.block.map(|v| Some(i64::from(v))),
        bound,
    );
    // In a tree loop each step is modelled with the lanes its guards leave then.
    let sweep = sweep(
        scope,
        all,
        access,
        &offset,
        shape(launch.block),
        launch,
        (bound, bind),
    );
    // Guards whose lanes are known (`if (t >= 8) return;`, `if (tx <= 0 || tx >= 31)
    // return;`): the model of those lanes alone, in the first warp that has any. The
    // lanes must be the same under every other block the kernel may run with (`tid <
    // 256` with `tid = threadIdx.x * blockDim.y + threadIdx.y` and no launch in sight
    // leaves lanes that the block decides).
    let lanes_hold = || {
        launch.others.iter().all(|b| {
            active_lanes_in(
                scope.file,
                access.range.start,
                b.map(|v| Some(i64::from(v))),
                bound,
            ) == lanes
        })
    };
    let guarded = match (&lanes, &sweep, &model.result) {
        (
            ActiveLanes::Known {
                mask,
                condition,
                warp,
            },
            None,
            Ok(r),
        ) if r.conflict_degree >= 2 && lanes_hold() => {
            crate::model_cache::bank_at_step(&offset, shape(launch.block), 0, (*warp, *mask))
                .ok()
                .map(|(addresses, report)| {
                    let lanes = addresses.iter().filter(|a| a.is_some()).count() as u32;
                    ((lanes, *warp, condition.clone()), addresses, report)
                })
        }
        _ => None,
    };
    let partial_warp = sweep.is_none()
        && guarded.is_none()
        && model.result.as_ref().is_ok_and(|r| r.conflict_degree >= 2)
        && lanes.is_partial();
    // Inside `if (cnt)` with `cnt` loaded per lane, which lanes access is data: the
    // full warp of the model is an assumption.
    let data_guard = match lanes {
        ActiveLanes::DataDependent { condition } => Some(condition),
        _ => None,
    };
    // Lanes whose index falls outside the array's declared extent at the loops' first
    // iteration would read past it: a correct program runs the access in the others
    // alone (a block as wide as a runtime head count, capped by `sc[144]`).
    let in_bounds = match (&model.result, &sweep, instantiation.is_none()) {
        (Ok(r), None, true) if r.conflict_degree >= 2 && guarded.is_none() => {
            // Only lanes the model runs (a loop's bound may have left some out already).
            let running = model
                .addresses
                .iter()
                .enumerate()
                .filter(|(_, a)| a.is_some())
                .fold(0u32, |m, (l, _)| {
                    m | 1u32.checked_shl(l as u32).unwrap_or(0)
                });
            lanes_in_bounds(facts, access, launch.block)
                .filter(|(mask, _)| mask & running != running && mask & running != 0)
                .and_then(|(mask, decl)| {
                    let mask = mask & running;
                    let (addresses, report) = crate::model_cache::bank_at_step(
                        &offset,
                        shape(launch.block),
                        0,
                        (0, mask),
                    )
                    .ok()?;
                    Some((mask.count_ones(), decl, addresses, report))
                })
        }
        _ => None,
    };
    let (lowered, held_loops, uniforms) = match &model.lowered {
        Some(l) => (
            Some(l.text.clone()),
            l.held_loops.clone(),
            l.uniforms.clone(),
        ),
        None => (None, Vec::new(), Vec::new()),
    };
    Some(BankAnalysis {
        access: access.clone(),
        block: launch.block,
        block_source: launch.source.clone(),
        block_uncertain: launch.uncertain.clone(),
        other_blocks,
        partial_warp,
        data_guard,
        lowered,
        held_loops,
        uniforms,
        copy,
        assumed_defaults: instantiation
            .is_none()
            .then(|| assumed_defaults(facts, access))
            .flatten(),
        instantiation,
        width: merged.as_ref().map_or(width_bytes, |(m, _)| Some(m.width)),
        merge_uncertain: if merged.is_some() {
            None
        } else if model.result.as_ref().is_ok_and(|r| r.conflict_degree >= 2)
            && has_remainder(&access.byte_offset)
            && merged_access_with(scope, all, access, WINDOW, false).is_some()
        {
            Some(MergeDoubt::Alignment)
        } else if may_merge_in_runtime_loop(scope, all, access) {
            Some(MergeDoubt::PartialUnroll)
        } else if carried_through_memory(scope, all, access) {
            Some(MergeDoubt::CarriedThroughMemory)
        } else if model.result.as_ref().is_ok_and(|r| r.conflict_degree >= 2)
            && merges_across_statements(scope, all, access)
        {
            Some(MergeDoubt::AcrossStatements)
        } else {
            None
        },
        merged: merged.map(|(m, _)| m),
        addresses: match (&sweep, &in_bounds, &guarded) {
            (Some(s), _, _) => s.addresses.clone(),
            (None, Some((_, _, a, _)), _) => a.clone(),
            (None, None, Some((_, a, _))) => a.clone(),
            (None, None, None) => model.addresses.clone(),
        },
        result: match (&model.result, &sweep, &in_bounds, &guarded) {
            (Ok(_), Some(s), _, _) => Ok(s.steps[s.worst].report.clone()),
            (Ok(_), None, Some((_, _, _, r)), _) => Ok(r.clone()),
            (Ok(_), None, None, Some((_, _, r))) => Ok(r.clone()),
            (Ok(r), None, None, None) => Ok(r.clone()),
            (Err(BankFailure::ElementSizeUnknown), _, _, _) => Err(format!(
                "the element size of `{}` is not known",
                access.array
            )),
            (Err(BankFailure::Other(reason)), _, _, _) => Err(reason.clone()),
        },
        sweep,
        in_bounds: in_bounds.map(|(n, decl, _, _)| (n, decl)),
        guarded: guarded.map(|(g, _, _)| g),
    })
}

/// The lanes of warp 0 (under `block`) whose every index of `access` lies inside the
/// declared extent of the static shared array it indexes, at the first iteration of the
/// loops around it, with the declaration as written (`sc[144]`); `None` where every lane
/// does, or the array, its extents or a lane's index are not known.
fn lanes_in_bounds(
    facts: &kernaut_syntax::FileFacts,
    access: &SharedAccess,
    block: [u32; 3],
) -> Option<(u32, String)> {
    if access.root != access.array || access.cast_type.is_some() {
        return None;
    }
    let decl = facts.shared.iter().find(|d| {
        d.name == access.array
            && !d.is_extern
            && (d.function.is_none() || d.function == access.function)
    })?;
    if decl.dims.len() != access.indices.len() || decl.dims.is_empty() {
        return None;
    }
    let valuation = Valuation {
        uniforms: kernaut_gpu::expr::Uniforms::Named(&[]),
        ..Valuation::warp0(block.map(|d| Some(i64::from(d))))
    };
    let mut mask = u32::MAX;
    for (index, dim) in access.indices.iter().zip(&decl.dims) {
        let dim = i64::try_from((*dim)?).ok()?;
        let lanes = valuation.lanes(index)?;
        for (l, v) in lanes.iter().enumerate() {
            if !(0..dim).contains(v) {
                mask &= !(1 << l);
            }
        }
    }
    // No lane inside, or all of them: nothing to say.
    (mask != 0 && mask != u32::MAX).then(|| {
        let dims: String = decl.dims_text.iter().map(|d| format!("[{d}]")).collect();
        (mask, format!("{}{dims}", decl.name))
    })
}

/// One step of a tree loop ([`Sweep`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SweepStep {
    /// The value of each variable of the offset or its guards that doubles or halves,
    /// at this step.
    pub values: Vec<(String, i64)>,
    /// The lanes of warp 0 that run the access at this step (bit `i`: lane `i`).
    pub lanes: u32,
    /// The bank model's report for those lanes.
    pub report: BankReport,
    /// Where nvcc unrolls the loop and this step's value makes the access and its
    /// neighbour in the same statement adjacent (`w[index] += w[index + s]` at `s` = 1),
    /// ptxas merges them into one 8- or 16-byte access, which `report` models: whether
    /// this access counts the merged access's wavefronts (its first part, or the plain
    /// load beside an update; the other part counts none). An update merged with a
    /// plain load is left with its store, which `report` models, counted (`None`).
    pub merged_first: Option<bool>,
}

/// An access in a loop whose variable doubles or halves each iteration (a tree
/// reduction or scan: `for (s = 1; s < n; s <<= 1)`), modelled at every step with the
/// lanes its guards leave then: the stride and the active lanes change from step to
/// step, and the first step's degree says little of the others'.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The loop's variable.
    pub var: String,
    /// Its update as C writes it (`s >>= 1`).
    pub update: String,
    /// Each step warp 0 runs the access in, in order.
    pub steps: Vec<SweepStep>,
    /// The step the finding states: the worst degree (the first on a tie).
    pub worst: usize,
    /// Each lane's byte offset at the worst step.
    pub addresses: Vec<Option<i64>>,
}

impl Sweep {
    /// The wavefronts of every step together, and what they would be without conflicts.
    pub fn total_wavefronts(&self) -> (u32, u32) {
        self.steps
            .iter()
            .filter(|s| s.merged_first != Some(false))
            .fold((0, 0), |(all, ideal), s| {
                (
                    all + s.report.wavefronts,
                    ideal + s.report.wavefronts - s.report.bank_conflicts,
                )
            })
    }

    /// The worst step's values, as `s = 16` (`, offset = 8`).
    pub fn worst_values(&self) -> String {
        self.steps[self.worst]
            .values
            .iter()
            .map(|(n, v)| format!("`{n}` = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The variables that double or halve in `e`, each once, as loop-variable nodes.
fn scaled_vars<'e>(e: &'e IndexExpr, out: &mut Vec<&'e IndexExpr>) {
    match e {
        IndexExpr::LoopVar {
            name, start, scale, ..
        } => {
            if scale.is_some()
                && !out
                    .iter()
                    .any(|o| matches!(o, IndexExpr::LoopVar { name: n, .. } if n == name))
            {
                out.push(e);
            }
            scaled_vars(start, out);
        }
        IndexExpr::Binary(a, _, b) => {
            scaled_vars(a, out);
            scaled_vars(b, out);
        }
        _ => {}
    }
}

/// The comparisons of the thread-dependent guards around `offset` of `file`, with
/// `bound`'s template arguments: the sides a step of a tree loop values.
fn guard_sides(
    file: &SourceFile,
    offset: usize,
    bound: &[(String, i64)],
    bind: Option<&dyn Fn(&IndexExpr) -> IndexExpr>,
) -> Option<Vec<IndexExpr>> {
    let mut sides = Vec::new();
    let mut scaling_loop = false;
    for e in file.enclosing(offset) {
        match &e.kind {
            EnclosingKind::Function { .. } => break,
            EnclosingKind::For { header, .. } => {
                scaling_loop |= ["<<=", ">>=", "*=", "/="]
                    .iter()
                    .any(|op| header.contains(op))
            }
            EnclosingKind::While { .. } => scaling_loop = true,
            // In a call context a parameter may carry the thread index (`tid`): every
            // guard counts, with the call's arguments in it.
            EnclosingKind::If {
                condition_range,
                thread_dependent,
                ..
            }
            | EnclosingKind::Conditional {
                condition_range,
                thread_dependent,
                ..
            } if (*thread_dependent || bind.is_some()) && !condition_range.contains(&offset) => {
                sides.push(condition_range.clone());
            }
            _ => {}
        }
    }
    if !scaling_loop {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    for range in sides {
        for c in file.lane_guard_comparisons(&range, bound)? {
            match bind {
                Some(bind) => {
                    out.push(bind(&c.left));
                    out.push(bind(&c.right));
                }
                None => {
                    out.push(c.left);
                    out.push(c.right);
                }
            }
        }
    }
    Some(out)
}

/// The access of the same buffer in the same straight-line stretch as `access` (both
/// loads, or both stores, of `access`'s width) that `valuation`'s step of an unrolled
/// tree loop places right next to it in every lane in `lanes`, aligned for one access
/// of twice the width (`w[index] += w[index + s]` at `s` = 1): the merged access's byte
/// offset, whether `access` is its first part, and what the other part is. A plain store
/// pairs with an update's store too (`s[i - d] = v; s[i] += w;` at `d` = 1 is one
/// `STS.64`); with `update_store`, `access` (an update) is asked for its store's partner,
/// a plain store.
fn step_pair(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    access: &SharedAccess,
    offset: &IndexExpr,
    valuation: &Valuation<'_>,
    (lanes, update_store): (u32, bool),
) -> Option<(IndexExpr, bool, AccessKind)> {
    let elem = i64::try_from(access.width?).ok()?;
    if !matches!(elem, 4 | 8) || access.cast_type.is_some() || lanes == 0 {
        return None;
    }
    let loads = |k: AccessKind| matches!(k, AccessKind::Load | AccessKind::LoadStore);
    let mine = valuation.lanes(offset)?;
    let active = |l: usize| lanes & (1 << l) != 0;
    all.iter()
        .filter(|o| {
            o.range != access.range
                && o.root == access.root
                && o.function == access.function
                && o.width == access.width
                && o.cast_type.is_none()
                && if update_store {
                    o.kind == AccessKind::Store
                } else {
                    loads(o.kind) && loads(access.kind)
                        || o.kind == AccessKind::Store && access.kind == AccessKind::Store
                        || o.kind == AccessKind::LoadStore && access.kind == AccessKind::Store
                }
                && scope.file.straight_line(&access.range, &o.range)
        })
        .find_map(|o| {
            let theirs = valuation.lanes(&o.byte_offset)?;
            let apart = |d: i64| {
                (0..32)
                    .filter(|&l| active(l))
                    .all(|l| theirs[l] - mine[l] == d)
            };
            let aligned = |v: &[i64; 32]| {
                (0..32)
                    .filter(|&l| active(l))
                    .all(|l| v[l].rem_euclid(2 * elem) == 0)
            };
            if apart(elem) && aligned(&mine) {
                Some((offset.clone(), true, o.kind))
            } else if apart(-elem) && aligned(&theirs) {
                Some((o.byte_offset.clone(), false, o.kind))
            } else {
                None
            }
        })
}

/// A call's arguments put for a device function's parameters ([`bank_with_args`]).
type Bind<'f> = &'f dyn Fn(&IndexExpr) -> IndexExpr;

/// [`Sweep`] of `access` at byte offset `offset` (the instantiation's, or the merged
/// access's) under `launch`: `None` where the offset and its guards read no variable
/// that doubles or halves, the loop's trip is not known (its start or bound a runtime
/// value, a bound that rests on an assumed block, more than [`kernaut_gpu::expr::MAX_TRIP`]
/// steps), two such loops are read, a step leaves lanes of warp 0 that are not known
/// or none of them, or a step cannot be modelled.
fn sweep(
    scope: &Scope<'_>,
    all: &[SharedAccess],
    access: &SharedAccess,
    offset: &IndexExpr,
    shape: BankShape,
    launch: &LaunchConfig,
    (bound, bind): (&[(String, i64)], Option<Bind<'_>>),
) -> Option<Sweep> {
    let guards = guard_sides(scope.file, access.range.start, bound, bind)?;
    let mut vars = Vec::new();
    scaled_vars(offset, &mut vars);
    for g in &guards {
        scaled_vars(g, &mut vars);
    }
    let trip = {
        let mut trips = vars.iter().map(|v| match v {
            IndexExpr::LoopVar {
                scale: Some(scale), ..
            } => scale.trip.as_ref(),
            _ => None,
        });
        let first = trips.next()??;
        if !trips.all(|t| t == Some(first)) {
            return None;
        }
        first.clone()
    };
    let block = launch.block.map(|d| Some(i64::from(d)));
    let on_block = |e: &IndexExpr| e.mentions(&|x| matches!(x, IndexExpr::BlockDim(_)));
    // A trip that rests on the block needs the block: one launch gives it, not an
    // assumption or one of several launches that differ.
    if (!matches!(launch.source, BlockSource::Launch { .. }) || launch.uncertain.is_some())
        && (on_block(&trip.start) || on_block(&trip.bound))
    {
        return None;
    }
    let valuation = Valuation {
        uniforms: kernaut_gpu::expr::Uniforms::Named(&[]),
        ..Valuation::warp0(block)
    };
    let values = trip.values(&valuation)?;
    if values.len() < 2 {
        return None;
    }
    // A loop whose trip the file fixes (no block size, no runtime value) is unrolled
    // whole, and each step's stride is a constant ptxas sees.
    let fixed = |e: &IndexExpr| {
        !e.mentions(&|x| matches!(x, IndexExpr::BlockDim(_) | IndexExpr::Uniform(_)))
    };
    let unrolled = fixed(&trip.start) && fixed(&trip.bound);
    let at_step = |k: i64| Valuation {
        loops: Loops::Scaled(k),
        ..valuation
    };
    let mut steps: Vec<SweepStep> = Vec::with_capacity(values.len());
    let mut worst: Option<(usize, Vec<Option<i64>>)> = None;
    for k in 0..values.len() as i64 {
        let loops = Loops::Scaled(k);
        let lanes = match active_lanes_at(scope.file, access.range.start, block, bound, bind, loops)
        {
            // A step that no thread of the block runs (the guard has left every lane
            // out) costs nothing.
            ActiveLanes::All
                if no_thread_runs(scope.file, access.range.start, block, bound, bind, loops) =>
            {
                (0, 0)
            }
            ActiveLanes::All => (0, u32::MAX),
            ActiveLanes::Known { mask, warp, .. } => (warp, mask),
            _ => return None,
        };
        let pair = unrolled
            .then(|| step_pair(scope, all, access, offset, &at_step(k), (lanes.1, false)))
            .flatten();
        // An update whose read is merged with a plain load's (`t[k] += t[k - s]` at `s`
        // = 1) is left with its store, a scalar `STS` of its own; the merged `LDS.64`
        // is counted at the load. Where its store is merged with a plain store's too,
        // the merged `STS.64` is counted at that store, and the update adds nothing at
        // this step; where only its store is, it is left with its scalar load.
        let update = access.kind == AccessKind::LoadStore;
        let store_pair = (unrolled && update)
            .then(|| step_pair(scope, all, access, offset, &at_step(k), (lanes.1, true)))
            .flatten()
            .is_some();
        let alone = |kind| {
            crate::model_cache::bank_at_step(offset, BankShape { kind, ..shape }, k, lanes).ok()
        };
        let (addresses, report) = match &pair {
            Some((_, _, AccessKind::Load)) if store_pair => alone(banks::AccessKind::Store)?,
            None if store_pair => alone(banks::AccessKind::Load)?,
            Some((_, _, AccessKind::Load)) if update => crate::model_cache::bank_at_step(
                offset,
                BankShape {
                    kind: banks::AccessKind::Store,
                    ..shape
                },
                k,
                lanes,
            )
            .ok()?,
            Some((low, _, _)) => crate::model_cache::bank_at_step(
                low,
                BankShape {
                    width: shape.width.map(|w| 2 * w),
                    ..shape
                },
                k,
                lanes,
            )
            .ok()?,
            None => crate::model_cache::bank_at_step(offset, shape, k, lanes).ok()?,
        };
        let counted = match &pair {
            Some((_, _, AccessKind::Load)) if store_pair => Some(false),
            Some((_, _, AccessKind::Load)) if update => None,
            Some((_, _, AccessKind::LoadStore)) if !update => Some(true),
            Some((_, first, _)) => Some(*first),
            None => None,
        };
        let at = at_step(k);
        let values = vars
            .iter()
            .filter_map(|v| match v {
                IndexExpr::LoopVar { name, .. } => Some((name.clone(), at.lane(v, 0)?)),
                _ => None,
            })
            .collect();
        // The worst step so far is one already pushed.
        let better = worst
            .as_ref()
            .is_none_or(|(w, _)| report.conflict_degree > steps[*w].report.conflict_degree);
        if better {
            worst = Some((steps.len(), addresses));
        }
        steps.push(SweepStep {
            values,
            lanes: lanes.1,
            report,
            merged_first: counted,
        });
    }
    let (worst, addresses) = worst?;
    Some(Sweep {
        update: trip.stepping.text(&trip.var),
        var: trip.var,
        steps,
        worst,
        addresses,
    })
}

/// The bank report of `offset` accessed `width` bytes per lane as `kind` (a load unless
/// a store) under `block`: the same evaluation as [`bank`], for offsets the caller
/// builds (the `bank-conflict` rule's re-laid-out arrays).
pub fn bank_of_offset(
    scope: &Scope<'_>,
    offset: &IndexExpr,
    width: Option<u64>,
    store: bool,
    block: [u32; 3],
) -> Option<BankReport> {
    let shape = BankShape {
        width,
        kind: if store {
            banks::AccessKind::Store
        } else {
            banks::AccessKind::Load
        },
        block,
    };
    scope
        .cache
        .bank(offset, shape)
        .result
        .as_ref()
        .ok()
        .cloned()
}

impl BankAnalysis {
    /// The conflict that holds under every block the kernel may run with: what the
    /// `bank-conflict` rule reports and the inlay hints show. `None` when the access is
    /// conflict-free under the block assumed, cannot be modelled, or is conflict-free
    /// under another plausible block; and for an access in a branch only part of the
    /// warp takes, an address taken, or an offset the same for every thread.
    pub fn definite_conflict(&self) -> Option<&BankReport> {
        let r = self.result.as_ref().ok()?;
        if r.conflict_degree < 2
            || self.partial_warp
            || self.access.kind == AccessKind::AddressOf
            || !self.access.byte_offset.depends_on_thread()
        {
            return None;
        }
        if self
            .other_blocks
            .iter()
            .any(|(_, d)| d.is_none_or(|d| d < 2))
        {
            return None;
        }
        Some(r)
    }

    /// What a hover says about the block assumption and a merge, in Markdown (empty when
    /// there is nothing to say).
    pub fn notes_markdown(&self) -> String {
        let mut md = String::new();
        if let Some(m) = &self.merged {
            let op = if self.access.kind == AccessKind::Store {
                "STS"
            } else {
                "LDS"
            };
            // A 32-bit shared access has no size suffix in SASS.
            let instruction = if m.width == 4 {
                op.to_string()
            } else {
                format!("{op}.{}", m.width * 8)
            };
            match &m.iterations {
                Some((var, n)) if m.parts.len() > 1 => md.push_str(&format!(
                    "Modelled as one {}-byte access: nvcc unrolls the loop over `{var}`, and ptxas merges the {} adjacent {}-byte accesses of this thread in each of {n} consecutive iterations into one `{instruction}`.\n\n",
                    m.width,
                    m.parts.len(),
                    m.width / ((*n).max(1) * m.parts.len() as u64).max(1),
                )),
                Some((var, n)) => md.push_str(&format!(
                    "Modelled as one {}-byte access: nvcc unrolls the loop over `{var}`, and ptxas merges each {n} consecutive {}-byte accesses of this thread into one `{instruction}`.\n\n",
                    m.width,
                    m.width / (*n).max(1),
                )),
                None => md.push_str(&format!(
                    "Modelled as one {}-byte access: ptxas merges the {} adjacent {}-byte accesses of this thread to the array into one `{instruction}`.\n\n",
                    m.width,
                    m.parts.len(),
                    m.width / (m.parts.len().max(1) as u64),
                )),
            }
        }
        if let Some(sweep) = &self.sweep {
            let (all, ideal) = sweep.total_wavefronts();
            md.push_str(&format!(
                "Each of the {} steps of the loop over `{}` (`{}`) modelled with the lanes of warp 0 its guards leave then; the figure above is the worst step's ({}). All steps: {all} wavefronts, {ideal} without conflicts.\n\n| step | values | lanes | degree | wavefronts |\n| --- | --- | --- | --- | --- |\n",
                sweep.steps.len(),
                sweep.var,
                sweep.update,
                sweep.worst_values(),
            ));
            for (i, step) in sweep.steps.iter().enumerate() {
                let values: Vec<String> = step
                    .values
                    .iter()
                    .map(|(n, v)| format!("{n} = {v}"))
                    .collect();
                md.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    i + 1,
                    values.join(", "),
                    step.lanes.count_ones(),
                    if step.report.conflict_degree < 2 {
                        "conflict-free".to_string()
                    } else {
                        format!("{}-way", step.report.conflict_degree)
                    },
                    step.report.wavefronts
                ));
            }
            md.push('\n');
        }
        if let Some((n, warp, condition)) = &self.guarded {
            md.push_str(&format!("Only the {n} lanes of warp {warp} that pass `{condition}` run this access: the figures are theirs.\n\n"));
        }
        if self.partial_warp {
            md.push_str("Only part of the warp takes the branch around this access: the full warp modelled here overstates the conflict, and the `bank-conflict` rule does not report it.\n\n");
        }
        if let Some(condition) = &self.data_guard {
            md.push_str(&format!("Only the lanes for which `{condition}` holds run this access, and which ones depends on data loaded at run time: the full warp modelled here is an assumption, so the `bank-conflict` rule gives at most a hint.\n\n"));
        }
        let (Ok(r), Some(why)) = (&self.result, &self.block_uncertain) else {
            return md;
        };
        // Only where another block changes the answer.
        if self
            .other_blocks
            .iter()
            .all(|(_, d)| *d == Some(r.conflict_degree))
        {
            return md;
        }
        let degree = |d: u32| {
            if d <= 1 {
                "conflict-free".to_string()
            } else {
                format!("{d}-way")
            }
        };
        let others: Vec<String> = self
            .other_blocks
            .iter()
            .map(|(b, d)| {
                format!(
                    "{} at {}×{}×{}",
                    d.map_or("not modelled".to_string(), degree),
                    b[0],
                    b[1],
                    b[2]
                )
            })
            .collect();
        let verdict = if self.definite_conflict().is_some() || r.conflict_degree < 2 {
            ""
        } else {
            " The `bank-conflict` rule reports a conflict only when it holds for every one of these blocks, so it does not report this access."
        };
        md.push_str(&format!(
            "The block is not certain ({why}): {} with the block assumed; {}.{verdict}\n\n",
            degree(r.conflict_degree),
            others.join(", ")
        ));
        md
    }
}

use crate::analysis::{Cancellable, FileId, KernelFacts};

/// The kernels of a file, each with its launch sites (from every file), shared
/// declarations and attributes.
pub fn kernel_facts(db: &Analysis, file: FileId) -> Cancellable<Vec<KernelFacts<'_>>> {
    let (path, _) = db.data(file)?;
    db.query("kernel_facts", || kernel_facts_inner(db, path))
}

fn kernel_facts_inner<'a>(db: &'a Analysis, path: &str) -> Vec<KernelFacts<'a>> {
    let Some(f) = db.file(path) else {
        return Vec::new();
    };
    let facts = f.facts();
    let files = db.sorted_files(path);
    facts
        .kernels
        .iter()
        .map(|k| {
            let short = short_name(&k.name);
            let shared: Vec<&SharedDecl> = f.shared_in(&k.name).collect();
            let static_shared_bytes = crate::model::kernel_static_shared(facts, &k.name).exact();
            let mut launches = Vec::new();
            let mut attributes = Vec::new();
            for &(p, data) in &files {
                let Some(id) = db.file_set.get(p) else {
                    continue;
                };
                launches.extend(data.launches_named(short).map(|l| (id, l)));
                attributes.extend(
                    data.attributes_named(short)
                        .map(|a| (a.attribute.as_str(), a.value)),
                );
            }
            KernelFacts {
                function: k,
                launches,
                shared,
                static_shared_bytes,
                attributes,
            }
        })
        .collect()
}

/// Whether the thread-dependent condition at `range` evidently leaves only part of a
/// warp active: an equality (`lane == 0`, `tid % 2 == 0`) or a bound below the warp size
/// (`lane < 10`, `tid >= HALF` with `HALF` 16), among its comparisons.
pub fn partial_warp(file: &SourceFile, range: &TextRange) -> bool {
    file.condition_comparisons(range)
        .iter()
        .any(|(op, _, right)| match op.as_str() {
            "==" | "!=" => true,
            _ => right.is_some_and(|n| n > 0 && n < 32),
        })
}

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
    /// The guard around the access whose truth for each lane depends on data loaded at
    /// run time (`if (cnt)` with `cnt = pool[t]`), when there is one: the model's full
    /// warp is then an assumption, which a finding states.
    pub data_guard: Option<String>,
    /// The adjacent accesses ptxas merges this one with into one wide access.
    pub merged: Option<crate::model::Merged>,
    /// Why nvcc may fuse the access into an 8- or 16-byte one, whose degree is lower (a
    /// loop whose trip count is known only at run time, or a step that reads what an
    /// earlier step stored), where the model keeps it scalar: see [`MergeDoubt`].
    pub merge_uncertain: Option<crate::model::MergeDoubt>,
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
    /// The model's report, or why the access cannot be modelled; in a tree loop
    /// ([`Sweep`]) the worst step's.
    pub result: Result<BankReport, String>,
    /// Where only some lanes of warp 0 index inside the array's declared extent
    /// (`sc[h * 12 + j]` on `float sc[144]` with `h` from `threadIdx.x`: lanes 0 to 11),
    /// the others cannot run the access in a correct program, and `result` is theirs:
    /// how many lanes, and the declaration as written (`sc[144]`).
    pub in_bounds: Option<(u32, String)>,
    /// Where guards leave known lanes of a warp to run the access (`if (t >= 8)
    /// return;`), `result` is theirs: how many lanes, in which warp of the block (the
    /// first that has any), and the guard that limits them as written.
    pub guarded: Option<(u32, i64, String)>,
    /// Each step of the tree loop the access is in, where its variable doubles or
    /// halves.
    pub sweep: Option<Sweep>,
}

/// Copies whose destination is their first argument and whose size is the third.
const ASYNC_COPIES: &[&str] = &["__pipeline_memcpy_async", "memcpy_async"];

/// The asynchronous copy that `access` (an address taken) is the destination of, and
/// its size in bytes when the file fixes it at 4, 8 or 16.
pub fn async_copy_of(file: &SourceFile, access: &SharedAccess) -> Option<(String, u64)> {
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

    /// The block shape the warp models use is the launch configuration's block where
    /// the launches make it certain, in every file of the host, and unknown elsewhere.
    #[test]
    fn the_launch_shape_is_the_certain_launch_configuration() {
        let mut host = AnalysisHost::new(AnalysisConfig::default());
        host.set_file(
            "/k.cu",
            "__global__ void a() {}\n__global__ void b() {}\n__global__ void c(int n) {}\n__global__ void d() {}\n",
        );
        host.set_file(
            "/main.cu",
            "void run(int n) {\n  a<<<1, dim3(32, 8)>>>();\n  b<<<1, 64>>>();\n  b<<<1, 128>>>();\n  c<<<1, n>>>(n);\n}\n",
        );
        let a = host.analysis();
        let scope = super::Scope::of(&a, "/k.cu").unwrap();
        let facts = scope.file.facts();
        let got: Vec<String> = ["a", "b", "c", "d"]
            .iter()
            .map(|k| {
                let shape = super::launch_shape(&scope, Some(k));
                let config = super::launch_config(&scope, facts.kernel(k)).shape();
                assert_eq!(shape, config, "{k}");
                format!("{k}: {shape:?}")
            })
            .collect();
        assert_eq!(
            got,
            [
                "a: [Some(32), Some(8), Some(1)]",
                "b: [None, None, None]",
                "c: [None, None, None]",
                "d: [None, None, None]"
            ]
        );
    }
}
