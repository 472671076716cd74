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
//! arrive) have no scope here.

use kernaut_syntax::{CallSite, EnclosingKind, SymbolKind, TextRange};

use super::async_ops::base_name;
use super::{warp_uniform, RuleContext};
use crate::model::{launch_config, BlockSource};

/// The threads a barrier waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarrierScope {
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

impl BarrierScope {
    /// The threads, as a message names them ("the block").
    pub(crate) fn threads(self) -> &'static str {
        match self {
            BarrierScope::Tile(_) => "the tile",
            BarrierScope::Warp => "the warp",
            BarrierScope::Block => "the block",
            BarrierScope::Cluster => "the cluster",
            BarrierScope::Grid => "the grid",
        }
    }

    /// The barrier, as a message names it ("block barrier").
    pub(crate) fn barrier(self) -> &'static str {
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
    pub(crate) fn within_warp(self) -> bool {
        match self {
            BarrierScope::Warp => true,
            BarrierScope::Tile(n) => n.is_none_or(|n| n <= 32),
            _ => false,
        }
    }
}

/// A barrier call of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Barrier {
    /// The call (for PTX, the instruction).
    pub range: TextRange,
    /// Its scope.
    pub scope: BarrierScope,
}

/// The barriers among `calls`, in their order, each once.
pub(crate) fn barriers(ctx: &RuleContext, calls: &[CallSite]) -> Vec<Barrier> {
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

/// The scope of `call`, where it is a barrier with a scope fixed by the code.
pub(crate) fn barrier_scope(ctx: &RuleContext, call: &CallSite) -> Option<BarrierScope> {
    if call.kind == SymbolKind::Ptx {
        return ptx_barrier(&call.callee, &call.args);
    }
    let text = ctx.text();
    match base_name(&call.callee) {
        "__syncthreads" | "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or" => {
            Some(BarrierScope::Block)
        }
        "__syncwarp" => full_mask(ctx, call).then_some(BarrierScope::Warp),
        "sync" | "synchronize" => {
            // A member call names its group through the receiver's type or the receiver
            // as written; `cooperative_groups::sync(g)` through its argument.
            let receiver = match call.callee_text.rsplit_once('.') {
                Some((r, _)) => r.to_string(),
                None => call
                    .arg_ranges
                    .first()
                    .and_then(|r| text.get(r.clone()))
                    .unwrap_or("")
                    .to_string(),
            };
            group_scope(&call.callee, &receiver, ctx, call.range.start)
        }
        _ => None,
    }
}

/// The scope of a cooperative group, from its resolved type (`callee`, as in
/// `cooperative_groups::thread_block_tile<32>::sync`) or its name as written.
fn group_scope(callee: &str, receiver: &str, ctx: &RuleContext, at: usize) -> Option<BarrierScope> {
    let ty = callee.to_ascii_lowercase();
    let r = receiver.trim().to_ascii_lowercase();
    if ty.contains("coalesced_group") || r.contains("coalesced_threads") {
        return None;
    }
    if let Some(i) = ty.find("thread_block_tile<") {
        let n = ty[i + "thread_block_tile<".len()..]
            .split(['>', ','])
            .next()
            .and_then(|n| ctx.facts.fold_text(n.trim(), at))
            .and_then(|n| u32::try_from(n).ok());
        return Some(BarrierScope::Tile(n));
    }
    if let Some(i) = r.find("tiled_partition<") {
        let n = r[i + "tiled_partition<".len()..]
            .split(['>', ','])
            .next()
            .and_then(|n| ctx.facts.fold_text(n.trim(), at))
            .and_then(|n| u32::try_from(n).ok());
        return Some(BarrierScope::Tile(n));
    }
    if ty.contains("thread_block_tile") || r.contains("tiled_partition") {
        let name = receiver
            .trim()
            .rsplit(['.', ':', '>', ' ', '('])
            .next()
            .unwrap_or("");
        return Some(BarrierScope::Tile(tile_size_of(ctx, name, at)));
    }
    if ty.contains("grid_group") || r.contains("this_grid()") {
        return Some(BarrierScope::Grid);
    }
    if ty.contains("cluster_group") || r.contains("this_cluster()") {
        return Some(BarrierScope::Cluster);
    }
    if ty.contains("thread_block") || r.contains("this_thread_block()") {
        return Some(BarrierScope::Block);
    }
    // A receiver of no known type: by the usual names only.
    let word = r.rsplit(['.', ':', '>', ' ', '(']).next().unwrap_or("");
    let name = receiver
        .trim()
        .rsplit(['.', ':', '>', ' ', '('])
        .next()
        .unwrap_or("");
    if let Some(n) = tile_size_of(ctx, name, at) {
        return Some(BarrierScope::Tile(Some(n)));
    }
    match word {
        "block" | "cta" | "tb" | "thread_block" => Some(BarrierScope::Block),
        "grid" => Some(BarrierScope::Grid),
        "cluster" => Some(BarrierScope::Cluster),
        "tile" | "warp" | "tile32" | "warp_tile" => Some(BarrierScope::Tile(None)),
        _ => None,
    }
}

/// The size of the tile the variable `name` holds, from its initialiser before `at` in
/// the function around it: `auto t = cg::tiled_partition<16>(block);` or
/// `cg::thread_group t = cg::tiled_partition(block, 16);`.
fn tile_size_of(ctx: &RuleContext, name: &str, at: usize) -> Option<u32> {
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let f = ctx.facts.function_at(at)?;
    let body = ctx.text().get(f.range.start..at)?;
    let mut size = None;
    let mut from = 0;
    while let Some(i) = super::find_word(body, name, from) {
        from = i + name.len();
        let rest = body[from..].trim_start();
        if !rest.starts_with(['=', '(', '{']) || rest.starts_with("==") {
            continue;
        }
        let statement = &rest[..rest.find(';').unwrap_or(rest.len())];
        let Some(p) = statement.find("tiled_partition") else {
            continue;
        };
        let after = statement[p + "tiled_partition".len()..].trim_start();
        let written = if let Some(t) = after.strip_prefix('<') {
            t.split('>').next()
        } else if let Some(args) = after.strip_prefix('(') {
            args.rsplit_once(')')
                .map(|(a, _)| a)
                .and_then(|a| a.split(',').nth(1))
        } else {
            None
        };
        size = written
            .and_then(|w| ctx.facts.fold_text(w.trim(), at))
            .and_then(|n| u32::try_from(n).ok());
    }
    size
}

/// Whether a thread-dependent condition is the same for all threads of each tile of
/// `n` consecutive threads: it is warp-uniform, or compares the thread index with `<` or
/// `>=` against multiples of `n` only (`idx < 16` for tiles of 16).
fn tile_uniform(condition: &str, n: u32) -> bool {
    if warp_uniform(condition) {
        return true;
    }
    let c = condition.to_ascii_lowercase();
    if n == 0 || c.contains("lane") || c.contains('%') || c.contains('&') {
        return false;
    }
    let b = c.as_bytes();
    let mut saw = false;
    let mut i = 0;
    while i < b.len() {
        let op_len = match (b[i], b.get(i + 1)) {
            (b'<', Some(b'<')) | (b'>', Some(b'>')) => {
                i += 2;
                continue;
            }
            (b'<' | b'>' | b'=' | b'!', Some(b'=')) => 2,
            (b'<' | b'>', _) => 1,
            _ => {
                i += 1;
                continue;
            }
        };
        let op = &c[i..i + op_len];
        let digits: String = c[i + op_len..]
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let ok = digits
            .parse::<i64>()
            .is_ok_and(|v| matches!(op, "<" | ">=") && v % i64::from(n) == 0);
        if !ok {
            return false;
        }
        saw = true;
        i += op_len;
    }
    saw
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
pub(crate) fn certain_block(ctx: &RuleContext, offset: usize) -> Option<[u32; 3]> {
    let f = ctx.facts.function_at(offset)?;
    let kernel = ctx.facts.kernel(&f.name)?;
    let config = launch_config(&ctx.scope(), Some(kernel));
    (config.uncertain.is_none() && matches!(config.source, BlockSource::Launch { .. }))
        .then_some(config.block)
}

/// Whether `condition` has the same value in every thread of `block` (only `threadIdx`
/// and `blockDim` vary), where it folds for each of them: a guard the launch makes always
/// true or always false.
fn same_for_every_thread(ctx: &RuleContext, condition: &str, at: usize, block: [u32; 3]) -> bool {
    let [bx, by, bz] = block;
    let threads = u64::from(bx) * u64::from(by) * u64::from(bz);
    if threads == 0 || threads > 1024 || !condition.contains("threadIdx") {
        return false;
    }
    let mut with_dims = condition.to_string();
    for (axis, v) in ["x", "y", "z"].iter().zip(block) {
        with_dims = with_dims.replace(&format!("blockDim.{axis}"), &v.to_string());
    }
    let mut first = None;
    for z in 0..bz {
        for y in 0..by {
            for x in 0..bx {
                let mut c = with_dims.clone();
                for (axis, v) in ["x", "y", "z"].iter().zip([x, y, z]) {
                    c = c.replace(&format!("threadIdx.{axis}"), &format!("({v})"));
                }
                let Some(v) = ctx.facts.fold_text(&c, at) else {
                    return false;
                };
                let v = v != 0;
                if *first.get_or_insert(v) != v {
                    return false;
                }
            }
        }
    }
    true
}

/// The innermost branch around `offset` in its function that can split the threads of
/// `scope`: an `if`, `switch` or `?:` whose condition depends on the thread (for the
/// grid and the cluster, also on `blockIdx`), is not the same for the lanes of a warp
/// (warp and tile scopes), and is not made the same for every thread by the known launch
/// `block`. Its range and condition.
pub(crate) fn divergent_branch(
    ctx: &RuleContext,
    offset: usize,
    scope: BarrierScope,
    block: Option<[u32; 3]>,
) -> Option<(TextRange, String)> {
    for e in ctx.enclosing(offset).iter() {
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
            }
            | EnclosingKind::Conditional {
                condition,
                thread_dependent,
            } => (condition, *thread_dependent),
            EnclosingKind::Function { .. } => return None,
            _ => continue,
        };
        let splits = match scope {
            BarrierScope::Grid | BarrierScope::Cluster => {
                thread || super::find_word(condition, "blockIdx", 0).is_some()
            }
            BarrierScope::Tile(Some(n)) if n < 32 => thread && !tile_uniform(condition, n),
            s if s.within_warp() => thread && !warp_uniform(condition),
            _ => thread,
        };
        if !splits {
            continue;
        }
        if block.is_some_and(|b| same_for_every_thread(ctx, condition, e.range.start, b)) {
            continue;
        }
        return Some((e.range.clone(), condition.clone()));
    }
    None
}
