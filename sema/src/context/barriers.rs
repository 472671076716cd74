//! Barriers by scope, and the branches that split the threads a barrier waits for: the
//! facts `sync/barrier-in-divergent-branch` reads, kept apart so that other rules (races,
//! barrier intervals) read the same ones.
//!
//! A barrier's scope is the set of threads that must all reach it: the block
//! (`__syncthreads()`, `__syncthreads_and/or/count`, `this_thread_block().sync()`, a
//! `thread_block`'s `sync()`, `cooperative_groups::sync(block)`, `bar.sync 0` in `asm`),
//! a tile of a warp (`thread_block_tile<N>::sync()`, a `tiled_partition` group), the warp
//! (`__syncwarp()` with every lane in its mask, `bar.warp.sync` with a full mask), the
//! cluster or the grid (`cluster.sync()`, `grid.sync()`, `this_grid().sync()`). Barriers
//! whose set the code chooses at run time (`bar.sync id, count`, `__syncwarp(mask)` with a
//! partial or unknown mask, a `coalesced_group`, whose members are the threads that
//! arrive, a barrier in an arm of a block-uniform `?:` whose condition the file does not
//! decide or decides for the other arm) have no scope here.

use kernaut_syntax::{CallSite, EnclosingKind, SymbolKind, TextRange};

use super::async_ops::base_name;
use super::RuleContext;
use crate::model::{launch_config, BlockSource};

/// The threads a barrier waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierScope {
    /// Every thread of a tile of `N` threads (a `thread_block_tile<N>`; `None` where the
    /// size is not written).
    Tile(Option<u32>),
    /// Every lane of the warp.
    Warp,
    /// Every thread of the block.
    Block,
    /// Every thread of the thread-block cluster.
    Cluster,
    /// Every thread of the grid.
    Grid,
}

impl From<crate::groups::GroupScope> for BarrierScope {
    fn from(g: crate::groups::GroupScope) -> BarrierScope {
        use crate::groups::GroupScope;
        match g {
            GroupScope::Tile(n) => BarrierScope::Tile(n),
            GroupScope::Block => BarrierScope::Block,
            GroupScope::Cluster => BarrierScope::Cluster,
            GroupScope::Grid => BarrierScope::Grid,
        }
    }
}

impl BarrierScope {
    /// The threads, as a message names them ("the block").
    pub fn threads(self) -> &'static str {
        match self {
            BarrierScope::Tile(_) => "the tile",
            BarrierScope::Warp => "the warp",
            BarrierScope::Block => "the block",
            BarrierScope::Cluster => "the cluster",
            BarrierScope::Grid => "the grid",
        }
    }

    /// The barrier, as a message names it ("block barrier").
    pub fn barrier(self) -> &'static str {
        match self {
            BarrierScope::Tile(_) => "tile barrier",
            BarrierScope::Warp => "warp barrier",
            BarrierScope::Block => "block barrier",
            BarrierScope::Cluster => "cluster barrier",
            BarrierScope::Grid => "grid-wide barrier",
        }
    }

    /// Whether threads of one warp (and so of one tile of a warp) must all arrive, but
    /// not the warps of the block.
    pub fn within_warp(self) -> bool {
        match self {
            BarrierScope::Warp => true,
            BarrierScope::Tile(n) => n.is_none_or(|n| n <= 32),
            _ => false,
        }
    }
}

/// A barrier call of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Barrier {
    /// The call (for PTX, the instruction).
    pub range: TextRange,
    /// Its scope.
    pub scope: BarrierScope,
}

/// The barriers among `calls`, in their order, each once.
pub fn barriers(ctx: &RuleContext, calls: &[CallSite]) -> Vec<Barrier> {
    let mut out: Vec<Barrier> = Vec::new();
    for call in calls {
        if let Some(scope) = barrier_scope(ctx, call) {
            if !out.iter().any(|b| b.range == call.range) {
                out.push(Barrier {
                    range: call.range.clone(),
                    scope,
                });
            }
        }
    }
    out
}

/// The scope of `call`, where it is a barrier with a scope fixed by the code. A barrier
/// in an arm of a `?:` whose condition is one value for the whole block (`(G > warpSize)
/// ? __syncthreads() : __syncwarp()`) is one only where the condition picks its arm
/// ([`arms_taken`]); where it picks the other, or the file does not decide which, the
/// code chooses the barrier and it has no scope here.
pub fn barrier_scope(ctx: &RuleContext, call: &CallSite) -> Option<BarrierScope> {
    let scope = fixed_scope(ctx, call)?;
    arms_taken(ctx, call.range.start).then_some(scope)
}

/// Whether every `?:` around `offset` in its function whose condition does not depend
/// on the thread takes the arm that holds `offset`, in every instantiation the file
/// launches the kernel with, under the known launch and for every sample of what the
/// file does not fix ([`block_value`]). A thread-dependent `?:` splits the threads
/// instead: [`divergent_branch`] judges it.
fn arms_taken(ctx: &RuleContext, offset: usize) -> bool {
    for e in ctx.enclosing(offset).iter() {
        let (condition_range, thread) = match &e.kind {
            EnclosingKind::Conditional {
                condition_range,
                thread_dependent,
                ..
            } => (condition_range, *thread_dependent),
            EnclosingKind::Function { .. } => break,
            _ => continue,
        };
        if thread {
            continue;
        }
        let Some(arm) = ctx.file.conditional_arm(&e.range, offset) else {
            continue;
        };
        if block_value(ctx, condition_range) != Some(arm) {
            return false;
        }
    }
    true
}

/// The truth value of the condition at `range`, where it is one for every thread of the
/// block and the same in every instantiation the file launches the kernel with, under
/// the known launch (or the default shape), every sample of what the file does not fix
/// and the first iterations of the loops around it: `G > warpSize` with `G` bound to 8
/// by the launch is `false`; with a kernel parameter for `G`, or no launch of a template
/// kernel, it has none.
fn block_value(ctx: &RuleContext, range: &TextRange) -> Option<bool> {
    use kernaut_gpu::expr::{Loops, Uniforms, Valuation, SAMPLES};
    let block = certain_block(ctx, range.start);
    let dims = block.map_or([None; 3], |b| b.map(|d| Some(i64::from(d))));
    let mut seen = None;
    for bound in launched_bindings(ctx, range.start) {
        let condition = ctx.file.uniformity_condition(range, &bound, block)?;
        for uniforms in [Uniforms::Dimensions, Uniforms::Arbitrary] {
            for sample in 0..SAMPLES {
                for iteration in 0..4 {
                    let valuation = Valuation {
                        sample,
                        uniforms,
                        loops: Loops::Iteration(iteration),
                        ..Valuation::warp0(dims)
                    };
                    let v = condition.value(&|e| valuation.lane(e, 0))? != 0;
                    if *seen.get_or_insert(v) != v {
                        return None;
                    }
                }
            }
        }
    }
    seen
}

/// [`barrier_scope`] for a barrier whatever the `?:`s around it choose.
fn fixed_scope(ctx: &RuleContext, call: &CallSite) -> Option<BarrierScope> {
    if call.kind == SymbolKind::Ptx {
        return ptx_barrier(&call.callee, &call.args);
    }
    match base_name(&call.callee) {
        "__syncthreads" | "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or" => {
            Some(BarrierScope::Block)
        }
        "__syncwarp" => full_mask(ctx, call).then_some(BarrierScope::Warp),
        "sync" | "synchronize" => crate::groups::sync_scope(ctx.file, call).map(BarrierScope::from),
        _ => None,
    }
}

/// Whether `__syncwarp(mask)` names every lane: no mask, or one that folds to all 32.
fn full_mask(ctx: &RuleContext, call: &CallSite) -> bool {
    let Some(r) = call.arg_ranges.first() else {
        return true;
    };
    let mask = ctx.text().get(r.clone()).unwrap_or("").trim();
    ctx.facts
        .fold_text(mask, call.range.start)
        .is_some_and(|m| m & 0xffff_ffff == 0xffff_ffff)
}

/// The scope of a PTX barrier instruction: `bar.sync 0` / `barrier.sync 0` without a
/// thread count waits for the block, `bar.warp.sync` with a full mask for the warp.
fn ptx_barrier(mnemonic: &str, operands: &[String]) -> Option<BarrierScope> {
    let m = mnemonic.trim();
    if m.starts_with("bar.warp.sync") {
        let full = operands
            .first()
            .map(|o| o.trim().to_ascii_lowercase())
            .is_some_and(|o| o == "-1" || o == "0xffffffff");
        return full.then_some(BarrierScope::Warp);
    }
    let block = ["bar.sync", "barrier.sync", "bar.red", "barrier.red"]
        .iter()
        .any(|p| m == *p || m.starts_with(&format!("{p}.")));
    // `bar.sync id, count` waits for `count` threads chosen by the code.
    let counted = if m.starts_with("bar.red") || m.starts_with("barrier.red") {
        operands.len() > 3
    } else {
        operands.len() > 1
    };
    (block && !counted && !operands.is_empty()).then_some(BarrierScope::Block)
}

/// The block the kernel around `offset` runs with, where every launch in sight gives the
/// same one.
pub fn certain_block(ctx: &RuleContext, offset: usize) -> Option<[u32; 3]> {
    let f = ctx.facts.function_at(offset)?;
    let kernel = ctx.facts.kernel(&f.name)?;
    let config = launch_config(&ctx.scope(), Some(kernel));
    (config.uncertain.is_none() && matches!(config.source, BlockSource::Launch { .. }))
        .then_some(config.block)
}

/// The blocks the launches in sight give the kernel around `offset` (those that fold),
/// empty where none does.
pub fn launched_blocks(ctx: &RuleContext, offset: usize) -> Vec<[u32; 3]> {
    launch_blocks(ctx, offset).map_or_else(Vec::new, |(blocks, _)| blocks)
}

/// The blocks of the kernel around `offset` where every launch in sight gives its own.
fn every_launched_block(ctx: &RuleContext, offset: usize) -> Option<Vec<[u32; 3]>> {
    launch_blocks(ctx, offset)
        .filter(|(_, every)| *every)
        .map(|(blocks, _)| blocks)
}

/// The blocks the folding launches of the kernel around `offset` give, and whether every
/// launch in sight gives one; `None` where none does.
fn launch_blocks(ctx: &RuleContext, offset: usize) -> Option<(Vec<[u32; 3]>, bool)> {
    let kernel = ctx
        .facts
        .function_at(offset)
        .and_then(|f| ctx.facts.kernel(&f.name))?;
    let config = launch_config(&ctx.scope(), Some(kernel));
    matches!(config.source, BlockSource::Launch { .. }).then(|| {
        let blocks = std::iter::once(config.block)
            .chain(config.others.iter().copied())
            .collect();
        (blocks, config.every_block_known)
    })
}

/// The template arguments of every instantiation the file launches the kernel around
/// `at` with; one empty binding (the kernel's own text) where there is none.
fn launched_bindings(ctx: &RuleContext, at: usize) -> Vec<Vec<(String, i64)>> {
    let found = ctx
        .facts
        .function_at(at)
        .filter(|f| f.is_kernel)
        .map(|f| crate::instances::launched_instantiations(ctx.facts, &f.name))
        .unwrap_or_default();
    let mut out: Vec<Vec<(String, i64)>> = if found.is_empty() {
        vec![Vec::new()]
    } else {
        found.into_iter().map(|i| i.bound).collect()
    };
    // An instantiation that the `if`s around `at` rule out never runs the code there.
    let guards = guard_bindings(ctx, at);
    if !guards.is_empty() {
        out.retain(|bound| {
            guards
                .iter()
                .all(|(name, value)| bound.iter().all(|(n, v)| n != name || v == value))
        });
        // None of those seen runs it: it runs in one the file makes out of sight.
        if out.is_empty() {
            out.push(Vec::new());
        }
        for bound in &mut out {
            for (name, value) in &guards {
                if !bound.iter().any(|(n, _)| n == name) {
                    bound.push((name.clone(), *value));
                }
            }
        }
    }
    out
}

/// The template parameters of the function around `at` that the `if`s around it fix:
/// code in the branch of `if (M == 1)` (or of `&&`-joined equalities) runs only in an
/// instantiation with `M = 1`.
fn guard_bindings(ctx: &RuleContext, at: usize) -> Vec<(String, i64)> {
    use kernaut_syntax::{GuardCondition, IndexExpr};
    let Some(f) = ctx.facts.function_at(at) else {
        return Vec::new();
    };
    if f.template_params.is_empty() {
        return Vec::new();
    }
    let is_param = |n: &str| f.template_params.iter().any(|p| p.name == n);
    let mut out = Vec::new();
    for e in ctx.enclosing(at).iter() {
        let EnclosingKind::If {
            condition_range,
            in_else: false,
            ..
        } = &e.kind
        else {
            continue;
        };
        if condition_range.contains(&at) {
            continue;
        }
        let Some(condition) = ctx.file.uniformity_condition(condition_range, &[], None) else {
            continue;
        };
        let parts = match &condition {
            GuardCondition::And(all) => all.iter().collect(),
            c => vec![c],
        };
        for part in parts {
            let GuardCondition::Compare(c) = part else {
                continue;
            };
            if c.op != "==" {
                continue;
            }
            let name_value = match (&c.left, &c.right) {
                (IndexExpr::Uniform(n), r) | (r, IndexExpr::Uniform(n)) => {
                    r.constant().map(|v| (n.clone(), v))
                }
                _ => None,
            };
            if let Some((n, v)) = name_value.filter(|(n, _)| is_param(n)) {
                if !out.iter().any(|(m, _): &(String, i64)| *m == n) {
                    out.push((n, v));
                }
            }
        }
    }
    out
}

/// Whether the condition at `range`, lowered, reads the thread index only through
/// `threadIdx.y`/`threadIdx.z` (`ty == 3` with `const int ty = threadIdx.y`): the same
/// for the lanes of a warp when `blockDim.x` is a multiple of 32. `None` where the
/// condition does not lower.
pub fn reads_only_rows(ctx: &RuleContext, range: &TextRange) -> Option<bool> {
    use kernaut_syntax::{Axis, IndexExpr};
    let condition = ctx.file.uniformity_condition(range, &[], None)?;
    let lane = |e: &IndexExpr| matches!(e, IndexExpr::ThreadIdx(Axis::X) | IndexExpr::Lane);
    let row = |e: &IndexExpr| matches!(e, IndexExpr::ThreadIdx(Axis::Y | Axis::Z));
    // A part the model cannot value (it reads the thread index some way) could read a lane.
    if condition.mentions(&|e| matches!(e, IndexExpr::Unknown(_))) {
        return None;
    }
    Some(!condition.mentions(&lane) && condition.mentions(&row))
}

/// Whether the `if` condition at `range` has one value in every thread of a block of
/// shape `block`, for every sample of what the file does not fix and the first iterations of the loops around it: each comparison of
/// the condition (joined by `&&`, `||`, `!`), lowered with each instantiation the file
/// launches the kernel with, has one value, evaluated with the one warp valuation. (Each
/// on its own: where `a || b` is judged whole, a sample that makes `a` true everywhere
/// would hide a `b` that splits the block.) What reads no thread index but has no value
/// (a load at a block-uniform address, a `__syncthreads_count` result) is one value for
/// the whole block, tried at small and at matrix-sized values. `false` where a side has
/// no value.
fn uniform_under_launch(ctx: &RuleContext, range: &TextRange, block: [u32; 3]) -> bool {
    use kernaut_gpu::expr::{Loops, Uniforms, Valuation, SAMPLES};
    // A parameter every launch passes the block's own extent for (`k<<<1, n>>>(…, n)`)
    // is that `blockDim`: `t < n` holds in every thread whatever `n` is.
    let sized = block_sized_params(ctx, range.start);
    let resized = |e: &kernaut_syntax::IndexExpr| {
        e.substitute(&|name| {
            sized
                .iter()
                .find(|(p, _)| p == name)
                .map(|(_, axis)| kernaut_syntax::IndexExpr::BlockDim(*axis))
        })
    };
    let threads = block.iter().map(|&d| u64::from(d)).product::<u64>();
    if threads == 0 || threads > 1024 {
        return false;
    }
    // The template arguments of every instantiation the file launches (none: the
    // kernel's own text).
    let instantiations = launched_bindings(ctx, range.start);
    let dims = block.map(|d| Some(i64::from(d)));
    let warps = threads.div_ceil(32) as i64;
    // A sample where a side has no value in any thread (`bytes / sizeof(T)` with both at
    // 0) says nothing; one where some threads have a value and others none is not
    // uniform; at least one sample must say something.
    let mut evaluated = false;
    for bound in &instantiations {
        let Some(condition) = ctx.file.uniformity_condition(range, bound, Some(block)) else {
            return false;
        };
        // Each comparison and value on its own (a `switch`'s value is its one leaf).
        let comparisons = condition.leaves();
        for uniforms in [Uniforms::Dimensions, Uniforms::Arbitrary] {
            for sample in 0..SAMPLES {
                for iteration in 0..4 {
                    let mut block_value = None;
                    let mut valued: Option<bool> = None;
                    for warp in 0..warps {
                        let valuation = Valuation {
                            block: dims,
                            warp,
                            sample,
                            uniforms,
                            loops: Loops::Iteration(iteration),
                        };
                        for lane in 0..32usize {
                            if warp as u64 * 32 + lane as u64 >= threads {
                                break;
                            }
                            let mut holds = Vec::with_capacity(comparisons.len());
                            for c in &comparisons {
                                let value = if sized.is_empty() {
                                    c.value(&|e| valuation.lane(e, lane))
                                } else {
                                    c.value(&|e| valuation.lane(&resized(e), lane))
                                };
                                if *valued.get_or_insert(value.is_some()) != value.is_some() {
                                    return false;
                                }
                                holds.extend(value);
                            }
                            if valued == Some(false) {
                                continue;
                            }
                            evaluated = true;
                            if *block_value.get_or_insert_with(|| holds.clone()) != holds {
                                return false;
                            }
                        }
                    }
                }
            }
        }
    }
    evaluated
}

/// The parameters of the kernel around `at` that every launch of it in sight passes the
/// launch's own block extent along one axis for (`prefix<<<1, n, …>>>(in, out, n)`: `n`
/// is `blockDim.x`), with that axis. Empty where the kernel has no launch.
fn block_sized_params(ctx: &RuleContext, at: usize) -> Vec<(String, kernaut_gpu::expr::Axis)> {
    use kernaut_gpu::expr::Axis;
    let Some(kernel) = ctx.facts.function_at(at).filter(|f| f.is_kernel) else {
        return Vec::new();
    };
    let launches = ctx.scope().launches(&kernel.name);
    if launches.is_empty() {
        return Vec::new();
    }
    // The value as written without whitespace and without a cast around it
    // (`static_cast<unsigned int>(numBins)`, `(unsigned)n`).
    let squash = |t: &str| {
        let t: String = t.split_whitespace().collect();
        let inner = t
            .strip_prefix("static_cast<")
            .and_then(|r| r.split_once(">("))
            .and_then(|(_, r)| r.strip_suffix(')'))
            .map(str::to_string);
        let inner = inner.or_else(|| {
            let (cast, rest) = t.strip_prefix('(')?.split_once(')')?;
            (!cast.is_empty() && kernaut_syntax::lex::is_identifier(rest)).then(|| rest.to_string())
        });
        inner.unwrap_or(t)
    };
    let mut out = Vec::new();
    for (i, param) in kernel.params.iter().enumerate() {
        if param.name.is_empty() {
            continue;
        }
        for (k, axis) in [Axis::X, Axis::Y, Axis::Z].into_iter().enumerate() {
            let every = launches.iter().all(|(_, l)| {
                let part = match (l.block.parts.as_slice(), k) {
                    ([], 0) => Some(l.block.text.as_str()),
                    (parts, k) => parts.get(k).map(String::as_str),
                };
                let arg = l.args.get(i).map(|a| squash(a));
                match (part, arg) {
                    (Some(p), Some(a)) => {
                        let p = squash(p);
                        !p.is_empty() && p == a && !p.chars().all(|c| c.is_ascii_digit())
                    }
                    _ => false,
                }
            });
            if every {
                out.push((param.name.clone(), axis));
                break;
            }
        }
    }
    out
}

/// What [`uniformity_in_groups`] finds of a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uniformity {
    /// One truth value in every group, for every value tried of what the file does not fix.
    Uniform,
    /// Some group holds both truth values whatever the file leaves open: the values of
    /// the condition that the code fixes split a group.
    Divergent,
    /// Not known: a comparison that does not lower, a value with none, or a split that
    /// depends on a value the file does not fix (`tid < n`).
    Unknown,
}

/// Whether the condition at `range` (an `if`'s, `switch`'s or `?:`'s) has one truth
/// value in each group of `n` consecutive threads (`n` = 32: the lanes of a warp; a
/// smaller power of two: a tile), evaluated on the lowered guard
/// ([`kernaut_syntax::SourceFile::uniformity_condition`]) with the one warp valuation for
/// every warp of the launch's `block`, or of each of [`SAMPLE_BLOCKS`] where no launch is
/// known, for each instantiation the file launches the kernel with, every sample of the
/// values the file does not fix and the first iterations of the loops around it.
///
/// Uniform when each comparison and value of the condition (joined by `&&`, `||`, `!`)
/// has one value in each group, in every sample (each on its own, as
/// [`uniform_under_launch`] judges them). Divergent when the whole condition splits a
/// group in every sample of some block shape (with no launch, a block shape whose rows
/// of less than 32 threads share a warp counts too: the callers say what they assume
/// there), at the loops' first iteration. Unknown otherwise, and where a lane has no
/// value while another has one.
pub fn uniformity_in_groups(
    ctx: &RuleContext,
    range: &TextRange,
    n: u32,
    block: Option<[u32; 3]>,
) -> Uniformity {
    use kernaut_gpu::expr::{Loops, Uniforms, Valuation, SAMPLES};
    if n == 0 || n > 32 || !n.is_power_of_two() {
        return Uniformity::Unknown;
    }
    let n = n as usize;
    let shapes: Vec<[u32; 3]> = match block {
        Some(b) => vec![b],
        None => SAMPLE_BLOCKS.to_vec(),
    };
    // The samples of what the file does not fix: launch built-ins and other uniforms at
    // small and at matrix-sized values, and the first block with every other uniform (a
    // kernel parameter) at values that are no multiple of a tile and fall inside the
    // block's thread range (a bound `n` the block's threads straddle).
    let mut samples: Vec<(Uniforms, usize)> = [Uniforms::Dimensions, Uniforms::Arbitrary]
        .into_iter()
        .flat_map(|u| (0..SAMPLES).map(move |s| (u, s)))
        .collect();
    samples.extend(STRADDLING_SAMPLES.map(|other| {
        (
            Uniforms::Launch {
                block_idx: [0; 3],
                grid: Some([2, 1, 1]),
                named: &[],
                other,
            },
            0,
        )
    }));
    let mut uniform = true;
    let mut evaluated = false;
    let mut divergent = false;
    for bound in &launched_bindings(ctx, range.start) {
        for shape in &shapes {
            let threads = shape.iter().map(|&d| u64::from(d)).product::<u64>();
            if threads == 0 || threads > 1024 {
                return Uniformity::Unknown;
            }
            let Some(condition) = ctx.file.uniformity_condition(range, bound, Some(*shape)) else {
                return Uniformity::Unknown;
            };
            let dims = shape.map(|d| Some(i64::from(d)));
            for iteration in 0..4 {
                // Whether every sample that says something splits a group.
                let mut splits_always: Option<bool> = None;
                for (uniforms, sample) in samples.iter().copied() {
                    let valuation = Valuation {
                        block: dims,
                        warp: 0,
                        sample,
                        uniforms,
                        loops: Loops::Iteration(iteration),
                    };
                    let Ok(split) = split_groups(&condition, valuation, threads, n) else {
                        return Uniformity::Unknown;
                    };
                    // A sample where no lane has a value (a division by a sample of 0)
                    // says nothing.
                    let Some((whole_split, leaf_split)) = split else {
                        continue;
                    };
                    evaluated = true;
                    uniform &= !leaf_split;
                    *splits_always.get_or_insert(true) &= whole_split;
                }
                divergent |= iteration == 0 && splits_always == Some(true);
                if divergent && !uniform {
                    return Uniformity::Divergent;
                }
            }
        }
    }
    if uniform && evaluated {
        Uniformity::Uniform
    } else if divergent {
        Uniformity::Divergent
    } else {
        Uniformity::Unknown
    }
}

/// Under `valuation` (its warp aside), for the `threads` threads of the block in groups of
/// `n`: whether the whole `condition` splits a group, and whether one of its leaves
/// does. `Ok(None)` where no thread has a value, `Err` where some have one and others
/// none.
fn split_groups(
    condition: &kernaut_syntax::GuardCondition,
    valuation: kernaut_gpu::expr::Valuation,
    threads: u64,
    n: usize,
) -> Result<Option<(bool, bool)>, ()> {
    let leaves = condition.leaves();
    let mut valued: Option<bool> = None;
    let (mut whole_split, mut leaf_split) = (false, false);
    for warp in 0..threads.div_ceil(32) as i64 {
        let valuation = kernaut_gpu::expr::Valuation { warp, ..valuation };
        let mut seen: Option<(bool, Vec<i64>)> = None;
        for lane in 0..32usize {
            if warp as u64 * 32 + lane as u64 >= threads {
                break;
            }
            if lane % n == 0 {
                seen = None;
            }
            let value = |e: &kernaut_syntax::IndexExpr| valuation.lane(e, lane);
            let whole = condition.value(&value).map(|v| v != 0);
            let each: Option<Vec<i64>> = leaves.iter().map(|c| c.value(&value)).collect();
            let here = whole.zip(each);
            if *valued.get_or_insert(here.is_some()) != here.is_some() {
                return Err(());
            }
            let Some((whole, each)) = here else {
                continue;
            };
            let (w, l) = seen.get_or_insert_with(|| (whole, each.clone()));
            whole_split |= *w != whole;
            leaf_split |= *l != each;
        }
        if whole_split && leaf_split {
            break;
        }
    }
    Ok((valued == Some(true)).then_some((whole_split, leaf_split)))
}

/// Values tried for a uniform the file does not fix (a kernel parameter) where it is
/// compared with a thread index: inside the block's thread range and no multiple of a
/// tile.
const STRADDLING_SAMPLES: [i64; 3] = [17, 100, 1000];

/// The block shapes tried where no launch fixes the block: one and two dimensions, 32 to
/// 1,024 threads, warps that hold one row and warps that hold several.
const SAMPLE_BLOCKS: [[u32; 3]; 6] = [
    [32, 1, 1],
    [96, 1, 1],
    [256, 1, 1],
    [1024, 1, 1],
    [32, 4, 1],
    [16, 16, 1],
];

/// The condition of the `if` statement at `statement` (its range, without the
/// parentheses' contents' surroundings), where `statement` is an `if`.
pub fn if_condition(ctx: &RuleContext, statement: &TextRange) -> Option<TextRange> {
    let inside = statement.end.checked_sub(1)?;
    ctx.enclosing(inside).iter().find_map(|e| match &e.kind {
        EnclosingKind::If {
            condition_range, ..
        } if e.range == *statement => Some(condition_range.clone()),
        _ => None,
    })
}

/// Whether a thread for which the condition at `cond` (an `if` at the top level of the
/// loop at `looped`'s body) is false finds it false in every later iteration: each name
/// the condition reads is left alone by the loop, except one side of an ordering
/// comparison that the loop moves only away from holding (`off < n` with `off += TILE`,
/// `i += blockDim.x * gridDim.x` or `++i`; `x > lo` with `--x`). A name the loop's body
/// declares again (`int off = …;`) counts as moved.
pub fn stays_false_in_loop(
    ctx: &RuleContext,
    cond: &TextRange,
    looped: &TextRange,
    others: &[TextRange],
) -> bool {
    let written = ctx.file.names_written_in(looped);
    let declared = |n: &str| others.iter().any(|r| ctx.file.declares(r, n));
    let moved = |n: &str| written.contains(n) || declared(n);
    let names: Vec<String> = ctx
        .file
        .names_in(cond)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    if !names.iter().any(|n| moved(n)) {
        return true;
    }
    let Some((left, op, right)) = ctx.file.ordering_comparison(cond) else {
        return false;
    };
    let text = ctx.text();
    let plain = |r: &TextRange| {
        let t = text[r.clone()].trim();
        (kernaut_syntax::lex::is_identifier(t) && moved(t)).then_some(t)
    };
    let unmoved = |r: &TextRange| ctx.file.names_in(r).iter().all(|(n, _)| !moved(n));
    // The side that moves, and whether moving it up takes the comparison away from
    // holding (`x < e`: up; `e < x`: down).
    let (mut x, up) = match (plain(&left), plain(&right)) {
        (Some(x), None) if unmoved(&right) => (x, matches!(op.as_str(), "<" | "<=")),
        (None, Some(x)) if unmoved(&left) => (x, matches!(op.as_str(), ">" | ">=")),
        _ => return false,
    };
    if declared(x) {
        // A local of the body that adds what does not move to one name the loop moves
        // (`int idx = t + threadIdx.x;` in `for (t = 0; t < n; t += blockDim.x)`) moves
        // as that name does.
        let init = others
            .iter()
            .flat_map(|r| ctx.file.variables_in(r))
            .find(|v| v.name == x)
            .and_then(|v| v.init);
        let Some(init) = init else {
            return false;
        };
        let terms: Vec<&str> = text[init].split('+').map(str::trim).collect();
        let moving: Vec<&str> = terms
            .iter()
            .copied()
            .filter(|t| kernaut_syntax::lex::is_identifier(t) && moved(t) && !declared(t))
            .collect();
        let [m] = moving.as_slice() else {
            return false;
        };
        let rest_unmoved = terms.iter().filter(|t| *t != m).all(|t| {
            t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .filter(|w| !w.is_empty())
                .all(|w| !moved(w.split('.').next().unwrap_or(w)))
                && !t.contains(['-', '*', '/', '%', '(', '['])
        });
        if terms.len() < 2 || !rest_unmoved {
            return false;
        }
        x = m;
    }
    ctx.file.writes_of(looped, x).iter().all(|w| {
        let positive = || {
            w.value
                .as_ref()
                .is_some_and(|v| positive_step(ctx, &text[v.clone()], v.start))
        };
        match w.op.as_str() {
            "++" => up,
            "--" => !up,
            "+=" => up && positive(),
            "-=" => !up && positive(),
            _ => false,
        }
    })
}

/// Whether the step `value` (read at `at`) is a positive constant or a product or sum of
/// launch sizes (`blockDim.x`, `gridDim.x`) and positive constants.
fn positive_step(ctx: &RuleContext, value: &str, at: usize) -> bool {
    let mut t = value.to_string();
    for dim in ["blockDim", "gridDim"] {
        for axis in ["x", "y", "z"] {
            t = t.replace(&format!("{dim}.{axis}"), "1");
        }
    }
    !t.contains(['-', '/', '%', '?', '>', '<', '&', '|', '^', '~'])
        && ctx.facts.fold_text(&t, at).is_some_and(|v| v > 0)
}

/// Whether every thread for which the condition at `narrow` holds also makes the
/// condition at `wide` hold (`t == 0` implies `t < 32`), in every block shape: the launch's
/// `block`, or, where none is known, blocks of 32 to 1,024 threads in one and two
/// dimensions; both conditions lowered with each instantiation the file launches the
/// kernel with and evaluated in every thread for every sample of what the file does not
/// fix. `false` where a side has no value.
pub fn implies(
    ctx: &RuleContext,
    narrow: &TextRange,
    wide: &TextRange,
    block: Option<[u32; 3]>,
) -> bool {
    implication(ctx, narrow, wide, block, [false, false])
}

/// [`implies`] in the blocks that split on `wide` only: a block where `wide` holds in every
/// thread or in none is left out (`x < W` implies `blockIdx.x == 0 || blockIdx.x ==
/// gridDim.x - 1 && x < W` in the last block, the only one where some threads take the
/// branch and others skip it; in a middle block none takes it).
pub fn implies_where_split(
    ctx: &RuleContext,
    narrow: &TextRange,
    wide: &TextRange,
    block: Option<[u32; 3]>,
) -> bool {
    implication_in(ctx, narrow, wide, block, [false, false], true)
}

/// Whether every thread for which the condition at `narrow` fails makes the condition at
/// `wide` hold (`!(threadIdx.y == 0)` implies `threadIdx.y == 1` in a block two rows
/// high): [`implies`] with `narrow` negated.
pub fn implied_by_failing(
    ctx: &RuleContext,
    narrow: &TextRange,
    wide: &TextRange,
    block: Option<[u32; 3]>,
) -> bool {
    implication(ctx, narrow, wide, block, [true, false])
}

/// Whether no thread for which the condition at `guard` holds makes the condition at
/// `other` hold, at any of the first iterations of the loops around them (`t == 0`
/// excludes `t >= active` in a loop whose `active` stays at least 1): [`implies`] with
/// `other` negated.
pub fn excludes(
    ctx: &RuleContext,
    guard: &TextRange,
    other: &TextRange,
    block: Option<[u32; 3]>,
) -> bool {
    implication(ctx, guard, other, block, [false, true])
}

/// [`implies`] with the narrow and the wide condition each negated where `negate` says.
fn implication(
    ctx: &RuleContext,
    narrow: &TextRange,
    wide: &TextRange,
    block: Option<[u32; 3]>,
    negate: [bool; 2],
) -> bool {
    implication_in(ctx, narrow, wide, block, negate, false)
}

/// [`implication`], with `split_only` leaving out each valuation of a block in which the
/// wide condition has one value in every thread.
fn implication_in(
    ctx: &RuleContext,
    narrow: &TextRange,
    wide: &TextRange,
    block: Option<[u32; 3]>,
    negate: [bool; 2],
    split_only: bool,
) -> bool {
    use kernaut_gpu::expr::{Loops, Uniforms, Valuation, SAMPLES};
    let blocks: Vec<[u32; 3]> = match block {
        Some(b) => vec![b],
        None => SAMPLE_BLOCKS.to_vec(),
    };
    let instantiations = launched_bindings(ctx, narrow.start);
    let mut evaluated = false;
    for bound in &instantiations {
        let (Some(n), Some(w)) = (
            ctx.file.uniformity_condition(narrow, bound, block),
            ctx.file.uniformity_condition(wide, bound, block),
        ) else {
            return false;
        };
        // In a block the wide condition splits, its parts the same in every thread have
        // the values that leave the rest deciding. A condition without such parts is
        // read as it is, in every block.
        let core = w.split_core();
        let split_only = split_only && core != w;
        let w = if split_only { core } else { w };
        for b in &blocks {
            let threads = b.iter().map(|&d| u64::from(d)).product::<u64>();
            if threads == 0 || threads > 1024 {
                return false;
            }
            let dims = b.map(|d| Some(i64::from(d)));
            for uniforms in [Uniforms::Dimensions, Uniforms::Arbitrary] {
                for sample in 0..SAMPLES {
                    for iteration in 0..4 {
                        let mut valued: Option<bool> = None;
                        let mut seen: Vec<(Option<bool>, Option<bool>)> = Vec::new();
                        for warp in 0..threads.div_ceil(32) as i64 {
                            let valuation = Valuation {
                                block: dims,
                                warp,
                                sample,
                                uniforms,
                                loops: Loops::Iteration(iteration),
                            };
                            for lane in 0..32usize {
                                if warp as u64 * 32 + lane as u64 >= threads {
                                    break;
                                }
                                let value = |e: &kernaut_syntax::IndexExpr| valuation.lane(e, lane);
                                seen.push((
                                    n.value(&|e| value(e)).map(|v| (v != 0) != negate[0]),
                                    w.value(&|e| value(e)).map(|v| (v != 0) != negate[1]),
                                ));
                            }
                        }
                        if split_only
                            && seen.first().is_some_and(|(_, first)| {
                                first.is_some() && seen.iter().all(|(_, w)| w == first)
                            })
                        {
                            continue;
                        }
                        for &(nv, wv) in &seen {
                            // Both valued in every thread, or in none (a division by
                            // a sample of 0): this sample says nothing then.
                            let both = nv.is_some() && wv.is_some();
                            if *valued.get_or_insert(both) != both {
                                return false;
                            }
                            if nv == Some(true) && wv == Some(false) {
                                return false;
                            }
                            evaluated |= both;
                        }
                    }
                }
            }
        }
    }
    evaluated
}

/// The innermost branch around `offset` in its function that can split the threads of
/// `scope`: an `if`, `switch` or `?:` whose condition depends on the thread (for the
/// grid and the cluster, also on `blockIdx`) and is not made the same for every thread
/// by the known launch `block`; for the warp and tile scopes, one whose lowered value
/// splits the lanes of a warp or tile ([`uniformity_in_groups`]: divergent; uniform and
/// unknown stay silent). Its range and condition.
pub fn divergent_branch(
    ctx: &RuleContext,
    offset: usize,
    scope: BarrierScope,
    block: Option<[u32; 3]>,
) -> Option<(TextRange, String)> {
    // The conditions of the `if`s passed so far whose then-arm holds `offset`.
    let mut held: Vec<TextRange> = Vec::new();
    for e in ctx.enclosing(offset).iter() {
        let condition_at = match &e.kind {
            EnclosingKind::If {
                condition_range, ..
            }
            | EnclosingKind::Conditional {
                condition_range, ..
            }
            | EnclosingKind::Switch {
                condition_range, ..
            } => Some(condition_range.clone()),
            _ => None,
        };
        if let (EnclosingKind::If { in_else: false, .. }, Some(r)) = (&e.kind, &condition_at) {
            if !r.contains(&offset) {
                held.push(r.clone());
            }
        }
        let (condition, thread) = match &e.kind {
            // A barrier in the condition itself (`if (__syncthreads_or(p))`) runs before
            // the branch, in every thread that reaches the `if`.
            EnclosingKind::If {
                condition_range, ..
            } if condition_range.contains(&offset) => continue,
            EnclosingKind::If {
                condition,
                thread_dependent,
                ..
            }
            | EnclosingKind::Switch {
                condition,
                thread_dependent,
                ..
            }
            | EnclosingKind::Conditional {
                condition,
                thread_dependent,
                ..
            } => (condition, *thread_dependent),
            EnclosingKind::Function { .. } => return None,
            _ => continue,
        };
        let splits = match scope {
            BarrierScope::Grid | BarrierScope::Cluster => {
                thread
                    || condition_at
                        .as_ref()
                        .is_some_and(|r| names_block_index(ctx, r))
            }
            // Within a warp, the lowered condition decides: one that splits the lanes of
            // a tile (the warp, for a tile of unknown size: tiles hold whole parts of
            // a warp) whatever the file leaves open. Unknown stays silent.
            s if s.within_warp() => {
                let n = match s {
                    BarrierScope::Tile(Some(n)) => n,
                    _ => 32,
                };
                if !thread {
                    continue;
                }
                let Some(r) = condition_at.as_ref() else {
                    continue;
                };
                match uniformity_in_groups(ctx, r, n, block) {
                    Uniformity::Divergent => return Some((e.range.clone(), condition.to_string())),
                    Uniformity::Uniform | Uniformity::Unknown => continue,
                }
            }
            _ => thread,
        };
        if !splits {
            continue;
        }
        // The known launch makes the condition the same for every thread of the block.
        let under_launch = |b: [u32; 3]| {
            condition_at
                .as_ref()
                .is_some_and(|r| uniform_under_launch(ctx, r, b))
        };
        // With no launch in sight, a condition the same for every thread of each block
        // shape tried (one and two dimensions, 32 to 1,024 threads) does not split the
        // block whatever the launch: `(i - threadIdx.x) > n` with `i = threadIdx.x + …`.
        // (For a block barrier only: across the grid, `blockIdx` splits.)
        // Launches that give different blocks, each known: those blocks.
        let uniform = match block {
            Some(b) => under_launch(b),
            None => {
                scope == BarrierScope::Block
                    && match every_launched_block(ctx, offset) {
                        Some(blocks) => blocks.iter().all(|b| under_launch(*b)),
                        None => SAMPLE_BLOCKS.iter().all(|b| under_launch(*b)),
                    }
            }
        };
        // Every launch's grid covers only threads the condition treats alike (`i < n`
        // with `n / 128` blocks of 128 threads).
        let uniform = uniform
            || (scope == BarrierScope::Block
                && condition_at
                    .as_ref()
                    .is_some_and(|r| one_value_in_launched_grids(ctx, r)));
        if uniform {
            continue;
        }
        // In the `else` of a split condition, under an arm whose own condition rules the
        // split one out (`else if (split)` after `if (dead && first)`, `split` and `dead`
        // two values of one shared state): every thread there fails the outer condition
        // anyway, and the arm's condition alone decides who reaches the barrier.
        if let (EnclosingKind::If { in_else: true, .. }, Some(outer)) = (&e.kind, &condition_at) {
            if held.iter().any(|inner| excludes(ctx, inner, outer, block)) {
                continue;
            }
        }
        return Some((e.range.clone(), condition.to_string()));
    }
    None
}

/// Host values tried for what a launch leaves to its caller (`n` in `k<<<n / 128,
/// 128>>>(…, n)`): each name takes the sample plus a multiple of 37 by its order, so that
/// two names rarely share a value.
const HOST_SAMPLES: [i64; 3] = [1000, 4096, 12_345];

/// Whether the condition at `range` has one value in every thread of every block that
/// each launch of the kernel in this file starts (one value per launch and sample): the
/// grid's extent and the kernel's scalar arguments evaluated together from the host code
/// for each of [`HOST_SAMPLES`], the condition then in the first two, the middle and the
/// last two blocks. Only a one-dimensional grid written as one expression, a known block,
/// and a condition that reads nothing but the thread and block indices, `gridDim` and
/// the kernel's parameters; `false` otherwise.
fn one_value_in_launched_grids(ctx: &RuleContext, range: &TextRange) -> bool {
    use kernaut_gpu::expr::{Loops, Uniforms, Valuation};
    use kernaut_syntax::IndexExpr;
    let Some(kernel) = ctx.facts.function_at(range.start).filter(|f| f.is_kernel) else {
        return false;
    };
    let short = kernaut_syntax::short_name(&kernel.name);
    let launches: Vec<_> = ctx
        .facts
        .launches
        .iter()
        .filter(|l| kernaut_syntax::short_name(&l.kernel) == short)
        .collect();
    if launches.is_empty() || !kernel.template_params.is_empty() {
        return false;
    }
    let params: Vec<&str> = kernel.params.iter().map(|p| p.name.as_str()).collect();
    let Some(condition) = ctx.file.uniformity_condition(range, &[], None) else {
        return false;
    };
    // Nothing but launch built-ins and the kernel's parameters.
    let foreign = condition.mentions(&|e| match e {
        IndexExpr::Uniform(n) => {
            !(n.starts_with("blockIdx.")
                || n.starts_with("gridDim.")
                || n.starts_with("blockDim.")
                || params.contains(&n.as_str()))
        }
        IndexExpr::LoopVar { .. } => true,
        _ => false,
    });
    // A condition that reads neither `blockIdx` nor `gridDim` is the same in every
    // block: the block's own question, answered before.
    let global = condition.mentions(&|e| {
        matches!(e, IndexExpr::Uniform(n) if n.starts_with("blockIdx.") || n.starts_with("gridDim."))
    });
    if foreign || !global {
        return false;
    }
    let mut evaluated = false;
    for l in launches {
        let (Some(written), Some([bx, by, bz])) = (l.written.as_ref(), l.block.value) else {
            return false;
        };
        let threads = bx * by * bz;
        if written.args.len() != params.len() || !(1..=1024).contains(&threads) {
            return false;
        }
        // A grid the file folds needs no lowering; only the arguments of parameters the
        // condition reads are lowered.
        let grid = match l.grid.value {
            Some([x, 1, 1]) => IndexExpr::Int(x),
            Some(_) => return false,
            None => match ctx.file.lower_at(&written.grid) {
                Some(g) => g,
                None => return false,
            },
        };
        let args: Vec<Option<IndexExpr>> = params
            .iter()
            .zip(&written.args)
            .map(|(p, a)| {
                condition
                    .mentions(&|e| matches!(e, IndexExpr::Uniform(n) if n == p))
                    .then(|| ctx.file.lower_at(a))
                    .flatten()
            })
            .collect();
        // The host names the grid and the arguments read, each with its own values.
        let mut host: Vec<String> = Vec::new();
        for e in std::iter::once(&grid).chain(args.iter().flatten()) {
            for n in e.uniforms() {
                if !host.contains(&n) {
                    host.push(n);
                }
            }
        }
        for base in HOST_SAMPLES {
            let named: Vec<(String, i64)> = host
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), base + 37 * i as i64))
                .collect();
            let on_host = Valuation {
                uniforms: Uniforms::Named(&named),
                ..Valuation::warp0([Some(1), Some(1), Some(1)])
            };
            let Some(gx) = on_host.lane(&grid, 0).filter(|g| (1..=1 << 20).contains(g)) else {
                return false;
            };
            let values: Vec<(String, i64)> = params
                .iter()
                .zip(&args)
                .filter_map(|(p, a)| Some((p.to_string(), on_host.lane(a.as_ref()?, 0)?)))
                .collect();
            // Every parameter the condition reads has its value.
            let unvalued = condition.mentions(&|e| {
                matches!(e, IndexExpr::Uniform(n)
                    if params.contains(&n.as_str()) && !values.iter().any(|(v, _)| v == n))
            });
            if unvalued {
                return false;
            }
            let mut blocks = vec![0, 1, gx / 2, gx - 2, gx - 1];
            blocks.retain(|b| (0..gx).contains(b));
            blocks.dedup();
            let mut value = None;
            for b in blocks {
                for warp in 0..(threads + 31) / 32 {
                    let v = Valuation {
                        block: [Some(bx), Some(by), Some(bz)],
                        warp,
                        sample: 0,
                        uniforms: Uniforms::Launch {
                            block_idx: [b, 0, 0],
                            grid: Some([gx, 1, 1]),
                            named: &values,
                            other: 0,
                        },
                        loops: Loops::Iteration(0),
                    };
                    for lane in 0..32usize {
                        if warp * 32 + lane as i64 >= threads {
                            break;
                        }
                        let Some(here) = condition.value(&|e| v.lane(e, lane)) else {
                            return false;
                        };
                        if *value.get_or_insert(here != 0) != (here != 0) {
                            return false;
                        }
                    }
                }
            }
            evaluated |= value.is_some();
        }
    }
    evaluated
}

/// Whether the condition at `range` reads `blockIdx`: written in it (also under a
/// subscript or a call), or through a local it names.
fn names_block_index(ctx: &RuleContext, range: &TextRange) -> bool {
    ctx.file
        .names_in(range)
        .iter()
        .any(|(n, _)| n == "blockIdx")
        || ctx.file.guard_condition(range).is_some_and(|c| {
            c.mentions(
                &|e| matches!(e, kernaut_gpu::expr::Expr::Uniform(u) if u.starts_with("blockIdx")),
            )
        })
}

/// How many times a thread arrives at barriers of one scope while it runs a statement: a
/// sum of terms, each a number of arrivals times the trip counts of the loops around
/// them that the code does not fix (keyed by their headers, whitespace squashed, sorted).
/// `for (s = 0; s < stages; s++) { …; __syncthreads(); }` gives `{["int s = 0; s <
/// stages; s++"]: 1}`; an empty map, no arrival.
pub type Arrivals = std::collections::BTreeMap<Vec<String>, u64>;

/// What [`arrivals`] finds of a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrivalCount {
    /// Every thread that runs the statement arrives this often.
    Known(Arrivals),
    /// Threads that run it arrive a different number of times: an `if` inside whose
    /// branches arrive differently, as far as the code shows.
    Varies,
    /// Not known: a loop whose trip count is neither constant nor the same expression of
    /// values no thread changes, a jump out of a statement past a barrier, a `switch`.
    Unknown,
}

/// [`arrivals`] of the statements `stmts` run in order (a block's, or the statements of
/// a function after an `if` whose branch returns).
pub fn arrivals_of_statements(
    ctx: &RuleContext,
    flow: &kernaut_syntax::ControlFlow,
    stmts: &[TextRange],
    scope: BarrierScope,
    all: &[Barrier],
) -> ArrivalCount {
    sum_arrivals(
        stmts
            .iter()
            .map(|s| arrivals_in(ctx, flow, s, scope, all, 0)),
    )
}

/// The arrivals of statements run one after another: their sum, `Varies` where one
/// varies, `Unknown` where one is not known.
/// The arrivals of statements run one after the other.
pub fn sum_arrivals(counts: impl Iterator<Item = ArrivalCount>) -> ArrivalCount {
    let mut sum = Arrivals::new();
    let mut unknown = false;
    for c in counts {
        match c {
            ArrivalCount::Known(a) => {
                for (k, v) in a {
                    *sum.entry(k).or_default() += v;
                }
            }
            ArrivalCount::Varies => return ArrivalCount::Varies,
            ArrivalCount::Unknown => unknown = true,
        }
    }
    if unknown {
        ArrivalCount::Unknown
    } else {
        ArrivalCount::Known(sum)
    }
}

/// How often a thread that runs the statement `stmt` of `flow` arrives at the barriers of
/// `scope` among `all` (the function's barriers): for warp-specialised code, where each
/// side of an `if` holds its own barriers (`if (warp < P) { for (k…) { …; sync } } else {
/// for (k…) { sync; … } }`), the two sides pair up when they arrive equally often.
///
/// A block sums its statements; an `if` counts when both branches (the missing `else`
/// arrives never) count the same; a loop multiplies its body by its trip count, known
/// when its `for` header bounds the variable by constants, or, when it reads only values
/// no thread changes (kernel parameters, launch built-ins, constants: not thread
/// dependent, no name in it written in the function but the loop variable in the
/// header), as the header itself: two loops with the same such header run as often.
pub fn arrivals(
    ctx: &RuleContext,
    flow: &kernaut_syntax::ControlFlow,
    stmt: &TextRange,
    scope: BarrierScope,
    all: &[Barrier],
) -> ArrivalCount {
    arrivals_in(ctx, flow, stmt, scope, all, 0)
}

fn arrivals_in(
    ctx: &RuleContext,
    flow: &kernaut_syntax::ControlFlow,
    stmt: &TextRange,
    scope: BarrierScope,
    all: &[Barrier],
    depth: usize,
) -> ArrivalCount {
    use kernaut_syntax::StatementShape;
    use ArrivalCount::{Known, Unknown, Varies};
    // A device function called here that reaches a barrier itself arrives a number of
    // times the statement does not show.
    if calls_a_synchronising_helper(ctx, stmt) {
        return Unknown;
    }
    let inside = all
        .iter()
        .filter(|b| b.scope == scope && stmt.contains(&b.range.start))
        .count();
    if inside == 0 {
        return Known(Arrivals::new());
    }
    if depth > 32 {
        return Unknown;
    }
    // A jump that leaves the statement takes some threads past barriers in it.
    let leaves = flow.jumps.iter().any(|j| {
        stmt.contains(&j.range.start)
            && j.target
                .as_ref()
                .is_none_or(|t| !(stmt.start <= t.start && t.end <= stmt.end))
    });
    if leaves {
        return Unknown;
    }
    let Some(shape) = flow.shape(stmt) else {
        return Unknown;
    };
    let count = |r: &TextRange| arrivals_in(ctx, flow, r, scope, all, depth + 1);
    match shape {
        StatementShape::Block(children) => sum_arrivals(children.iter().map(count)),
        StatementShape::If(then, other) => {
            let a = count(&then);
            let b = match &other {
                Some(o) => count(o),
                None => Known(Arrivals::new()),
            };
            match (a, b) {
                (Known(a), Known(b)) if a == b => Known(a),
                (Known(_), Known(_)) | (Varies, _) | (_, Varies) => Varies,
                _ => Unknown,
            }
        }
        StatementShape::Loop(body) => {
            // `break` or `continue` of this loop skip barriers of some iterations.
            if flow
                .jumps
                .iter()
                .any(|j| body.contains(&j.range.start) && j.target.as_ref() == Some(stmt))
            {
                return Unknown;
            }
            let per = match count(&body) {
                Known(a) => a,
                other => return other,
            };
            match trip_count(ctx, stmt, &body, scope) {
                Some(Trips::Constant(n)) => {
                    Known(per.into_iter().map(|(k, v)| (k, v * n)).collect())
                }
                Some(Trips::Header(h)) => Known(
                    per.into_iter()
                        .map(|(mut k, v)| {
                            k.push(h.clone());
                            k.sort();
                            (k, v)
                        })
                        .collect(),
                ),
                None => Unknown,
            }
        }
        StatementShape::Switch | StatementShape::Jump(_) => Unknown,
        StatementShape::Other => {
            // A `?:`, a lambda or a preprocessor conditional may run a barrier or not.
            let text = &ctx.text()[stmt.clone()];
            let lambda = ["[=", "[&", "[]", "[this"].iter().any(|l| text.contains(l));
            if text.contains('?') || text.contains('#') || lambda {
                return Unknown;
            }
            Known(Arrivals::from([(Vec::new(), inside as u64)]))
        }
    }
}

/// Whether a call inside `stmt` is to a device function of the file that reaches a
/// barrier of any scope (through its own calls, as the race model follows them:
/// [`crate::races::reaches_barrier`]).
pub fn calls_a_synchronising_helper(ctx: &RuleContext, stmt: &TextRange) -> bool {
    let facts = ctx.facts;
    let Some(f) = facts
        .device_functions
        .iter()
        .chain(facts.kernels.iter())
        .find(|f| {
            f.body_range
                .as_ref()
                .is_some_and(|b| b.contains(&stmt.start))
        })
    else {
        return false;
    };
    let Some(body) = &f.body_range else {
        return false;
    };
    ctx.calls_in_body(body.start)
        .iter()
        .filter(|c| stmt.contains(&c.range.start) && fixed_scope(ctx, c).is_none())
        .any(|c| crate::races::reaches_barrier(ctx.file, c))
}

/// The trip count of a loop ([`arrivals`]).
enum Trips {
    Constant(u64),
    Header(String),
}

/// The trip count of the `for` loop at `stmt` (body `body`), the same for every thread of
/// `scope` that runs it: constant, or its header when that reads only values no thread
/// changes. `None` for other loops.
fn trip_count(
    ctx: &RuleContext,
    stmt: &TextRange,
    body: &TextRange,
    scope: BarrierScope,
) -> Option<Trips> {
    let chain = ctx.enclosing(body.start);
    let e = chain.iter().find(|e| e.range == *stmt)?;
    let EnclosingKind::For {
        header,
        var: Some(var),
        start,
        end,
        step,
        thread_dependent: false,
    } = &e.kind
    else {
        return None;
    };
    let head = stmt.start..body.start;
    if matches!(scope, BarrierScope::Grid | BarrierScope::Cluster)
        && ctx.text()[head.clone()].contains("blockIdx")
    {
        return None;
    }
    // No name of the header is written in the function, but the loop variable in it.
    let function = ctx.facts.function_at(stmt.start)?.range.clone();
    for (name, at) in ctx.file.names_in(&head) {
        let Some(v) = ctx.file.variable_at(at.start) else {
            continue;
        };
        let own = *name == **var;
        let written = ctx.file.uses_of(&v).iter().any(|u| {
            function.contains(&u.range.start)
                && (u.address_of || u.write.is_some())
                && !(own && head.contains(&u.range.start))
        });
        if written {
            return None;
        }
    }
    if let (Some(s), Some(e), Some(d)) = (
        start.as_deref().and_then(|s| s.parse::<i64>().ok()),
        end,
        step,
    ) {
        if *d > 0 {
            let n = if *e > s { (*e - s + *d - 1) / *d } else { 0 };
            return Some(Trips::Constant(n as u64));
        }
    }
    Some(Trips::Header(
        header.split_whitespace().collect::<Vec<_>>().join(" "),
    ))
}
