//! `coalescing/strided-global-access`: a warp's global load or store whose lanes touch
//! many more 32-byte sectors than its data needs.
//!
//! The index of a pointer parameter (`A[row * K + i]`) is lowered over the thread index
//! like a shared-memory index, evaluated for the 32 lanes of warp 0, and the lanes' byte
//! addresses go through the sector model (`kernaut_gpu::sectors`): one request touches
//! every distinct 32-byte sector the active lanes' bytes fall in, and the ideal is the
//! sectors those bytes would need packed contiguously (`pitfall-coalescing#P1`). A warning
//! from 4x the ideal, a hint from 2x (and for a kernel named as a naive or reference
//! baseline, which is slow on purpose, or for a short per-thread chunk of at most 8
//! elements whose next loop iterations read the rest of each sector, mostly from L1). Uniform and broadcast addresses need one sector and
//! never fire. Under a guard the model evaluates for each lane (`if (lane < 16)`,
//! `if (threadIdx.x < 8)`) only the lanes that pass issue
//! the request, and the message says how many; 8 lanes or fewer get a hint at most.
//! Neither do gathers (`A[idx[i]]`), strided accesses whose siblings fill the
//! gaps (`p[3 * i]`, `p[3 * i + 1]`, `p[3 * i + 2]`: L1 serves the rest), accesses under a
//! condition that leaves part of the warp idle in a way the model cannot evaluate, and
//! indices whose cost depends on a value the file does not
//! show other than a matrix dimension (a kernel parameter multiplying the thread index is
//! taken to be 64 or more, and the finding is then a hint that says so: the parameter may
//! be 1 in every call). A parameter every launch passes one constant is that constant:
//! written at the launch, or a parameter of the host function around the launch that
//! every call of it in the project passes as one constant (`axpy_gpu(n, a, x, 1, y, 1)`
//! launching `axpy_kernel<<<…>>>(n, a, x, incx, y, incy)`; `model::fixed_kernel_args`).
//!
//! There is no automatic fix: map `threadIdx.x` to the contiguous dimension, or stage the
//! tile through shared memory (`skill-coalescing#S3`).
//!
//! ```cuda
//! // Before: lanes walk rows, K * 4 bytes apart: 32 sectors per request instead of 4.
//! int row = blockIdx.x * blockDim.x + threadIdx.x;
//! for (int i = 0; i < K; ++i) acc += A[row * K + i] * B[i * N + col];
//! // After: lanes walk columns.
//! int col = blockIdx.x * blockDim.x + threadIdx.x;
//! for (int i = 0; i < K; ++i) acc += A[row * K + i] * B[i * N + col];
//! ```

use kernaut_gpu::banks::{AccessWidth, WARP_LANES};
use kernaut_gpu::expr::{is_builtin_uniform, Loops, Valuation, SAMPLES};
use kernaut_gpu::sectors::{sectors, SectorReport};
use kernaut_syntax::{AccessKind, Axis, IndexExpr, SharedAccess};

use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;
use crate::model::{launch_shape, ActiveLanes};

pub(crate) const RULE: Rule = Rule {
    id: "coalescing/strided-global-access",
    severity: Severity::Warning,
    wiki: &["pitfall-coalescing#P1"],
    run,
    source: include_str!("strided_global_access.rs"),
};

/// The longest per-thread chunk, in elements, whose gaps the loads of sibling statements
/// (`in[4 * t]`, `in[4 * t + 1]`, …) or a short loop's next iterations are taken to fill
/// silently: on an H100, chunks of up to 8 elements ran at the coalesced layout's speed
/// (`wiki/probes/coalescing`).
const MAX_CHUNK: i64 = 8;
/// A chunk of elements narrower than 4 bytes is short up to this many bytes (16 `char`s
/// measured 1.3x the coalesced time, 32 `char`s 2.3x).
const MAX_CHUNK_BYTES: i64 = 16;
/// The longest walk of a thread's own chunk by a load loop that is always a hint: L1
/// keeps the warp's sectors between the iterations, so L2 and DRAM traffic stays what the
/// data needs, and on an H100 walks of up to 16 elements measured at most 1.9x the
/// coalesced time (`wiki/probes/coalescing`).
const MAX_LOAD_WALK: i64 = 16;
/// A longer load walk costs in proportion to the sectors each request spreads over L1: at
/// 8 times the sectors the data needs or more, walks of 32 elements and more measured
/// 2.3x to 9.7x the coalesced time; at 4 times (`double`s 32 bytes or more apart) at most
/// 1.9x, even over 64 elements. Up to this ratio a long walk is a hint.
const LOAD_WALK_SECTORS: u32 = 4;
/// The longest walk of a thread's own chunk by a store loop that is only a hint, in
/// elements and bytes: L1 does not keep stores, and only walks of up to 4 elements and
/// 16 bytes measured under 2x the coalesced time on an H100 (8 `char`s: 2.7x, 4
/// `double`s: 4.2x, 8 `float`s: 8x; `wiki/probes/coalescing`).
const MAX_STORE_WALK: (i64, i64) = (4, 16);
/// How many iterations of a long walk are simulated to see that it fills its chunk.
const WALK_SIMULATED: i64 = 64;

/// Whether a walk of `elements` elements of `w` bytes per thread, whose requests touch
/// `report`'s sectors, costs little enough for a hint, by the measured thresholds above.
fn short_walk(kind: AccessKind, elements: i64, w: i64, report: &SectorReport) -> bool {
    match kind {
        AccessKind::Load => {
            elements <= MAX_LOAD_WALK || report.sectors <= LOAD_WALK_SECTORS * report.ideal
        }
        _ => elements <= MAX_STORE_WALK.0 && elements * w <= MAX_STORE_WALK.1,
    }
}

/// At most this many active lanes make a request small enough for a hint.
const FEW_LANES: u32 = 8;
/// The small value a runtime stride's hint also costs (RGBA pixels, `float4`-sized
/// records): the figure at 64 or more is where the cost stops growing.
const SMALL_DIMENSION: i64 = 4;

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let text = ctx.text();
    if !text.contains("threadIdx") || !text.contains('[') {
        return;
    }
    let all = ctx.file.global_accesses();
    let headers = std::cell::OnceCell::new();
    // A device function the file's kernels call runs with their blocks and the calls'
    // arguments: an access through a pointer a call binds to a kernel's global pointer
    // is diagnosed in each such context (the worst one stands), not on its own.
    let path = ctx.model.host.map_or("", |(_, p)| p);
    let contexts = crate::callers::contexts_in_file(&ctx.scope());
    let bound: Vec<(&crate::callers::CallContext, Vec<SharedAccess>)> = contexts
        .iter()
        .map(|c| (c, c.bound_accesses(&[], &all).1))
        .filter(|(_, b)| !b.is_empty())
        .collect();
    // The block of each function, worked out once.
    let mut shapes: rustc_hash::FxHashMap<Option<&str>, [Option<i64>; 3]> =
        rustc_hash::FxHashMap::default();
    for a in &all {
        if bound
            .iter()
            .any(|(_, b)| b.iter().any(|x| x.range == a.range))
        {
            continue;
        }
        let function = a.function.as_deref();
        let shape = *shapes
            .entry(function)
            .or_insert_with(|| block_shape(ctx, function));
        if let Some(d) = diagnose(ctx, a, &all, &headers, shape, None) {
            out.push(d);
        }
    }
    let mut found: Vec<(u32, RuleDiagnostic)> = Vec::new();
    for (c, accesses) in &bound {
        let shape = block_shape(ctx, Some(&c.kernel));
        let line = ctx.scope().line_of(path, c.call_range.start);
        for a in accesses {
            let Some((d, sectors)) =
                diagnose_with(ctx, a, accesses, &headers, shape, Some((c, line)))
            else {
                continue;
            };
            match found.iter_mut().find(|(_, f)| f.range == d.range) {
                Some((worst, f)) if sectors > *worst => {
                    *worst = sectors;
                    *f = d;
                }
                Some(_) => {}
                None => found.push((sectors, d)),
            }
        }
    }
    out.extend(found.into_iter().map(|(_, d)| d));
}

fn diagnose(
    ctx: &RuleContext,
    a: &SharedAccess,
    all: &[SharedAccess],
    headers: &std::cell::OnceCell<Vec<String>>,
    shape: [Option<i64>; 3],
    context: Option<(&crate::callers::CallContext, u32)>,
) -> Option<RuleDiagnostic> {
    diagnose_with(ctx, a, all, headers, shape, context).map(|(d, _)| d)
}

/// The finding for global access `a` under block `shape`, and its sectors per request;
/// `context` is the call context and the line of its call, for an access of a device
/// function bound to the kernel that calls it.
fn diagnose_with(
    ctx: &RuleContext,
    a: &SharedAccess,
    all: &[SharedAccess],
    headers: &std::cell::OnceCell<Vec<String>>,
    shape: [Option<i64>; 3],
    context: Option<(&crate::callers::CallContext, u32)>,
) -> Option<(RuleDiagnostic, u32)> {
    if a.kind == AccessKind::AddressOf
        || !a.byte_offset.depends_on_thread()
        || a.byte_offset.unknown_reason().is_some()
    {
        return None;
    }
    // A load of what the thread just stored or loaded, with no store between: served
    // from a register, no request at all.
    if context.is_none()
        && a.kind == AccessKind::Load
        && crate::model::forwarded_global(&ctx.scope(), all, a)
    {
        return None;
    }
    // The kernel's parameters that every launch passes as one constant (`incy` = 1,
    // directly or through the host function around the launch) are that constant.
    let kernel = match context {
        Some((c, _)) => Some(c.kernel.as_str()),
        None => a.function.as_deref(),
    };
    let (fixed, bound) = with_fixed_args(ctx, a, kernel);
    let a = bound.as_ref().unwrap_or(a);
    let width = AccessWidth::from_bytes(u32::try_from(a.width?).ok()?)?;
    // An offset that reads `blockDim.x` of a kernel no launch fixes the block of
    // (`per = 2048 / blockDim.x`, launched in a loop over block sizes) is measured in
    // the block the bank model assumes, `launch_config`'s, and said so, as a hint: one
    // assumption for both rules on the line.
    let mut shape = shape;
    let mut assumed_block: Option<(i64, String)> = None;
    if shape[0].is_none() && crate::model::depends_on_block_x(&a.byte_offset, shape) {
        let kernel = match context {
            Some((c, _)) => Some(c.kernel.clone()),
            None => a.function.clone(),
        };
        let f = kernel.as_deref().and_then(|k| ctx.facts.kernel(k));
        let launch = crate::model::launch_config(&ctx.scope(), f);
        shape = launch.block.map(|d| Some(i64::from(d)));
        assumed_block = Some((shape[0]?, kernel.unwrap_or_default()));
    }
    // The full warp first, so that the guards around most accesses need not be read: a
    // part of a warp touches a subset of the full warp's sectors, and to be reported it
    // must touch at least four more than its bytes need, which a coalesced full warp
    // (at most twice its ideal) leaves little room for.
    let full = cost(&a.byte_offset, width, shape, u32::MAX)?;
    if !strided(&full) {
        return None;
    }
    // Under a guard such as `if (lane < 16)` only those lanes issue the request; a guard
    // that leaves part of the warp idle in a way the model cannot evaluate stays silent.
    // In a kernel, the parameters every launch passes as one constant take it in the
    // guards too (`if (r < rows)` with `rows` = 6 leaves six lanes).
    // A store of the same bytes in both arms of an `if` is one store after it, which
    // every lane reaching the `if` issues: reported once, with those lanes.
    let lanes_at = match crate::model::store_in_both_arms(&ctx.scope(), all, a) {
        Some((_, true)) => return None,
        Some((at, false)) => at,
        None => a.range.start,
    };
    let lanes = match context {
        // The function's own guards with its parameters at their values in this call.
        Some((c, _)) => {
            let bind = |e: &IndexExpr| c.bind(e);
            crate::callers::combine(
                &c.lanes,
                crate::model::active_lanes_bound(ctx.file, lanes_at, shape, &[], Some(&bind)),
            )
        }
        None => {
            let args = kernel
                .and_then(|k| ctx.facts.kernel(k))
                .map(|k| ctx.fixed_kernel_args(k))
                .unwrap_or_default();
            crate::model::active_lanes_in(ctx.file, lanes_at, shape, &args)
        }
    };
    // A guard whose bound is a runtime value (`if (tid < active)`) or whose truth is
    // loaded data (`if (cnt)` with `cnt = pool[t]`) may let the whole warp in or only
    // part of it: the full warp's figure, as a hint that states the assumption.
    let (mask, found, assumed_all) = match &lanes {
        ActiveLanes::All => (u32::MAX, full, None),
        ActiveLanes::Known { mask, .. } => {
            (*mask, cost(&a.byte_offset, width, shape, *mask)?, None)
        }
        ActiveLanes::Partial { .. } | ActiveLanes::DataDependent { .. } => {
            match lanes.assumed_all() {
                Some((condition, why)) => (u32::MAX, full, Some((condition.to_string(), why))),
                None => return None,
            }
        }
    };
    if !strided(&found) {
        return None;
    }
    // Without a known block, an index over `.y` or `.z` must be strided for narrower
    // blocks too, where one warp spans several rows.
    // The figure is the full warp's along `threadIdx.x`; the narrowest block whose figure
    // is lower is named with it, and a warning needs that one to be 4× too.
    let mut narrower: Option<(i64, SectorReport)> = None;
    if shape == [None; 3] && mentions_rows(&a.byte_offset) {
        for bx in [16, 8, 4] {
            let c = cost(
                &a.byte_offset,
                width,
                [Some(bx), Some(32 / bx), Some(1)],
                mask,
            )
            .filter(strided)?;
            let ratio = |r: &SectorReport| f64::from(r.sectors) / f64::from(r.ideal);
            if ratio(&c.report) < ratio(&found.report)
                && narrower
                    .as_ref()
                    .is_none_or(|(_, n)| ratio(&c.report) < ratio(n))
            {
                narrower = Some((bx, c.report));
            }
        }
    }
    if siblings_fill_gaps(a, all, width, shape)
        || (context.is_none() && shared_through_a_caller(ctx, a))
        || passed_by_reference(ctx, a, headers)
    {
        return None;
    }
    let Cost { report, stride } = found;
    let baseline = a
        .function
        .as_deref()
        .into_iter()
        .chain(context.map(|(c, _)| c.kernel.as_str()))
        .any(|f| {
            let f = f.to_ascii_lowercase();
            ["naive", "baseline", "reference", "uncoalesced"]
                .iter()
                .any(|w| f.contains(w))
        });
    // A loop that walks each thread's own chunk (`in[t * 16 + k]` for `k < 16`): its
    // next iterations use the rest of each sector the first one touches.
    // Or the thread's loads of the array together walk it: an element peeled out of the
    // loop, a walk written statement by statement.
    let w = i64::from(width.bytes());
    let walk = walked_chunk(&a.byte_offset, width, shape, stride).or_else(|| {
        let chunk = stride? / w;
        crate::model::walk_with_siblings(&ctx.scope(), all, a, w, chunk)
    });
    let loop_fills = walk.is_some_and(|n| short_walk(a.kind, n, i64::from(width.bytes()), &report));
    // A scattered request of a few lanes moves little data: at most a hint.
    let few_lanes = lanes.count().is_some_and(|n| n <= FEW_LANES);
    // A stride that rests on a runtime value the file does not fix (`A[row * K + i]` with
    // `K` a parameter) is measured at the value assumed: a hint that says so, since `K`
    // may be 1 in every call.
    let dims = dimension_names(&a.byte_offset);
    // A guard around the access that no large value of those names passes (`if (step <
    // 0)` around `in[start + tid * step]`): the value assumed cannot hold there.
    if !dims.is_empty() && large_values_excluded(ctx, a.range.start, &dims) {
        return None;
    }
    // A device function no kernel of the file is seen to call: its pointer may as well
    // point at shared memory, and its block and arguments are not known.
    let uncalled = match context {
        Some(_) => None,
        None => ctx
            .facts
            .function_at(a.range.start)
            .filter(|f| !f.is_kernel && f.params.iter().any(|p| p.name == a.root))
            .map(|f| f.name.clone()),
    };
    // The kernel is launched, but no launch's block folds (`block.x / PER`, a runtime
    // size): how many threads share a warp is not known, and a block of fewer than 32
    // threads issues smaller requests.
    let unfolded_launch = match (shape[0], kernel) {
        (None, Some(k)) if assumed_block.is_none() => {
            let launches = ctx.scope().launches(k);
            (!launches.is_empty() && launches.iter().all(|(_, l)| l.block.value.is_none()))
                .then(|| k.to_string())
        }
        _ => None,
    };
    let severity = if report.sectors >= 4 * report.ideal
        && narrower
            .as_ref()
            .is_none_or(|(_, n)| n.sectors >= 4 * n.ideal)
        && unfolded_launch.is_none()
        && assumed_block.is_none()
        && assumed_all.is_none()
        && uncalled.is_none()
        && !baseline
        && !loop_fills
        && !few_lanes
        && dims.is_empty()
    {
        Severity::Warning
    } else {
        Severity::Hint
    };
    let what = match a.kind {
        AccessKind::Store => "store to",
        AccessKind::LoadStore => "update of",
        _ => "load from",
    };
    // A load loop's walk is served from L1 after its first touch of each sector: the
    // extra sectors are L1's, not L2's or DRAM's.
    let traffic = if walk.is_some() && a.kind == AccessKind::Load {
        "L1"
    } else {
        "memory"
    };
    let mut message = format!(
        "uncoalesced {what} `{}`: each warp request touches {} sectors of 32 bytes where its {} bytes need {} ({:.1}x the {traffic} traffic)",
        a.array,
        report.sectors,
        report.bytes,
        report.ideal,
        f64::from(report.sectors) / f64::from(report.ideal)
    );
    if let ActiveLanes::Known {
        mask, condition, ..
    } = &lanes
    {
        // A block of fewer than 32 threads fills only part of its warp (`<<<1, 16>>>`):
        // the lanes it has.
        let warp = match shape {
            [Some(x), Some(y), Some(z)] => (x * y * z.max(1)).clamp(1, 32),
            _ => 32,
        };
        let present = if warp >= 32 {
            u32::MAX
        } else {
            (1u32 << warp) - 1
        };
        message.push_str(&format!(
            " (only {} of the {warp} lanes issue it, under `{condition}`)",
            (mask & present).count_ones()
        ));
    }
    if let Some(s) = stride.filter(|_| dims.is_empty()) {
        message.push_str(&format!(", because neighbouring lanes are {s} bytes apart"));
    }
    if !dims.is_empty() {
        message.push_str(&format!(
            " (taking {} to be 64 or more)",
            dims.iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some((c, line)) = context {
        message.push_str(&format!(" (in {})", c.phrase(line)));
    }
    if !fixed.is_empty() {
        message.push_str(&format!(
            " (with {}, as every launch passes)",
            fixed
                .iter()
                .map(|(n, v)| format!("`{n}` = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some((bx, n)) = &narrower {
        message.push_str(&format!(
            " (assuming `threadIdx.x` runs over the warp: no launch of `{}` gives its block; with a {bx}×{}×1 block, whose warps span rows, it is {} sectors, {:.1}x)",
            kernel.unwrap_or("this function"),
            32 / bx,
            n.sectors,
            f64::from(n.sectors) / f64::from(n.ideal)
        ));
    }
    if let Some((x, kernel)) = &assumed_block {
        message.push_str(&format!(
            " (assuming `blockDim.x` = {x}: no launch of `{kernel}` fixes its block, and the figure depends on it)"
        ));
    }
    if let Some((condition, why)) = &assumed_all {
        message.push_str(&format!(
            " (a hint only: assuming every lane of the warp passes `{condition}`, {why})"
        ));
    }
    message.push_str(
        "; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory",
    );
    if few_lanes && severity == Severity::Hint && !loop_fills && !baseline {
        message.push_str(&format!(
            " (a hint only: {FEW_LANES} lanes or fewer move little data)"
        ));
    }
    if loop_fills && a.kind != AccessKind::Load {
        message.push_str(
            " (a hint only: the loop's next iterations write the rest of each sector, so L2 merges the partial writes and DRAM traffic stays what the data needs; walks of up to 4 elements and 16 bytes per thread measured under 2x the coalesced time on an H100, pitfall-coalescing#P3)",
        );
    } else if loop_fills {
        message.push_str(
            " (a hint only: the loop's next iterations read the rest of each sector from L1, which keeps it, so L2 and DRAM traffic stays what the data needs; walks of up to 16 elements per thread, or spread over at most 4 times the sectors they need, measured under 2x the coalesced time on an H100, pitfall-coalescing#P3)",
        );
    } else if walk.is_some() && a.kind == AccessKind::Load {
        // A long walk: a warning unless something below makes it a hint.
        message.push_str(
            " (L1 keeps each sector for the loop's next iterations, so L2 and DRAM traffic stays near what the data needs, but L1 serves every request sector by sector: walks of 32 or more elements per thread at 8 times the sectors they need or more measured 2.3x to 9.7x the coalesced time on an H100, pitfall-coalescing#P3)",
        );
    } else if walk.is_some() {
        message.push_str(
            " (the loop's next iterations write the rest of each sector, but L1 does not keep stores: every partial sector write reaches L2; walks of more than 4 elements or 16 bytes per thread measured 2.7x to 47x the coalesced time on an H100, pitfall-coalescing#P3)",
        );
    }
    if loop_fills {
    } else if let Some(f) = &uncalled {
        let short = kernaut_syntax::short_name(f);
        let called = ctx
            .calls_mentioning(&[short])
            .iter()
            .flat_map(|calls| calls.iter())
            .any(|c| kernaut_syntax::short_name(&c.callee_text) == short);
        message.push_str(&if called {
            format!(
                " (a hint only: the calls of `{f}` in this file do not show what `{}` points at; global memory is assumed)",
                a.root
            )
        } else {
            format!(
                " (a hint only: no kernel of this file is seen to call `{f}`, so what `{}` points at, the block and the arguments are assumed)",
                a.root
            )
        });
    } else if baseline {
        message.push_str(" (a hint only: the kernel is named as a deliberate baseline)");
    } else if let Some(k) = &unfolded_launch {
        message.push_str(&format!(
            " (a hint only: no launch of `{k}` fixes its block; a block of 32 threads or more is assumed)"
        ));
    } else if !dims.is_empty() && report.sectors >= 4 * report.ideal && !few_lanes {
        // The cost grows with the value: what a small one gives (an image's channel
        // count, a short vector), so the scale is in view.
        let small = match &dims[..] {
            [d] => {
                let at = a
                    .byte_offset
                    .substitute(&|n| (n == d).then_some(IndexExpr::Int(SMALL_DIMENSION)));
                // The guards read the small value too (`if (p < n && q < n)` leaves the
                // lanes whose indices stay below it); where they leave an unknown part
                // of the warp, no figure.
                let mut bound: Vec<(String, i64)> = kernel
                    .and_then(|k| ctx.facts.kernel(k))
                    .map(|k| ctx.fixed_kernel_args(k).to_vec())
                    .unwrap_or_default();
                bound.push((d.clone(), SMALL_DIMENSION));
                let small_mask = match (
                    &context,
                    crate::model::active_lanes_in(ctx.file, lanes_at, shape, &bound),
                ) {
                    (Some(_), _) => Some(mask),
                    (None, ActiveLanes::All) => Some(mask),
                    (None, ActiveLanes::Known { mask: m, .. }) => Some(m & mask),
                    _ => None,
                };
                small_mask
                    .and_then(|m| cost(&at, width, shape, m))
                    .map(|c| {
                        format!(
                            "; at `{d}` = {SMALL_DIMENSION} it is {} sectors, {:.1}x",
                            c.report.sectors,
                            f64::from(c.report.sectors) / f64::from(c.report.ideal)
                        )
                    })
            }
            _ => None,
        };
        message.push_str(&format!(
            " (a hint only: the cost rests on {}, which the code does not fix{})",
            dims.iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", "),
            small.unwrap_or_default()
        ));
    }
    Some((
        RuleDiagnostic {
            rule: RULE.id,
            severity,
            range: a.range.clone(),
            message,
            wiki: RULE.wiki[0].to_string(),
            fixes: Vec::new(),
        },
        report.sectors,
    ))
}

/// The parameters of `kernel` that every launch fixes and `a`'s offset reads, with
/// their values, and `a` with them replaced (`None` where none is read).
fn with_fixed_args(
    ctx: &RuleContext,
    a: &SharedAccess,
    kernel: Option<&str>,
) -> (Vec<(String, i64)>, Option<SharedAccess>) {
    let Some(k) = kernel.and_then(|k| ctx.facts.kernel(k)) else {
        return (Vec::new(), None);
    };
    // Only parameters the offset reads are worth the look-up.
    if !k.params.iter().any(|p| {
        a.byte_offset
            .mentions(&|e| matches!(e, IndexExpr::Uniform(n) if *n == p.name))
    }) {
        return (Vec::new(), None);
    }
    let fixed = ctx.fixed_kernel_args(k);
    let mut used = Vec::new();
    let offset = a.byte_offset.substitute(&|n| {
        let (name, v) = fixed.iter().find(|(p, _)| p == n)?;
        Some(IndexExpr::Const {
            name: name.clone(),
            value: *v,
        })
    });
    for (n, v) in fixed.iter() {
        if a.byte_offset
            .mentions(&|e| matches!(e, IndexExpr::Uniform(u) if u == n))
        {
            used.push((n.clone(), *v));
        }
    }
    if used.is_empty() {
        return (used, None);
    }
    (
        used,
        Some(crate::callers::rebuilt(a, a.root.clone(), offset)),
    )
}

/// Whether the access is through a pointer parameter of a device function that one of
/// its callers in the file hands a `__shared__` array (`f(tile)`, `f(&tile[i])`,
/// `f(tile + off)`): then the pointer may well be shared memory, not global, and the
/// sector model does not apply.
fn shared_through_a_caller(ctx: &RuleContext, a: &SharedAccess) -> bool {
    let Some(function) = a.function.as_deref() else {
        return false;
    };
    let facts = ctx.facts;
    let Some(f) = facts
        .function_at(a.range.start)
        .filter(|f| f.name == function)
    else {
        return false;
    };
    if f.is_kernel {
        return false;
    }
    let Some(k) = f.params.iter().position(|p| p.name == a.root) else {
        return false;
    };
    let short = function.rsplit("::").next().unwrap_or(function);
    ctx.calls_mentioning(&[short]).iter().any(|calls| {
        calls.iter().any(|c| {
            let callee = c.callee_text.as_str();
            (callee == short || callee.ends_with(&format!("::{short}")))
                && c.args.get(k).is_some_and(|arg| {
                    let name: String = arg
                        .trim_start_matches(['&', '(', ' '])
                        .chars()
                        .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
                        .collect();
                    !name.is_empty() && facts.shared_named(&name, c.range.start).is_some()
                })
        })
    })
}

/// Whether the subscript is an argument that a function of the file takes by reference
/// (`load<uint4>(dst, h[i * 8])` with `const V& v`): the callee decides how many bytes
/// it reads or writes there (a `reinterpret_cast` to a vector type, say), so the element's
/// width says nothing about the request. A function of the project's headers, whose
/// parameters the file does not show, may take it by reference too, and so may a
/// function the file cannot see at all when it is called as a statement of its own.
fn passed_by_reference(
    ctx: &RuleContext,
    a: &SharedAccess,
    headers: &std::cell::OnceCell<Vec<String>>,
) -> bool {
    let facts = ctx.facts;
    let Some(body) = facts
        .function_at(a.range.start)
        .and_then(|f| f.body_range.clone())
    else {
        return false;
    };
    let calls = ctx.calls_in_body(body.start);
    let text = ctx.text();
    calls.iter().any(|c| {
        let Some(k) = c.arg_ranges.iter().position(|r| {
            text.get(r.clone()).map(str::trim) == text.get(a.range.clone()).map(str::trim)
                && r.contains(&a.range.start)
        }) else {
            return false;
        };
        let short = c.callee_text.rsplit("::").next().unwrap_or(&c.callee_text);
        let mut callees = facts
            .device_functions
            .iter()
            .filter(|f| f.name.rsplit("::").next() == Some(short))
            .peekable();
        if callees.peek().is_none() {
            // A function whose declaration neither the file nor its headers show, called
            // as a statement of its own: it acts through its arguments, so it may well
            // take this one by reference and write it (`AssignAs<uint2>(out[i], v);`).
            // A library function the wiki knows takes it by value, and so does device
            // `printf` (C varargs bind no reference).
            return headers
                .get_or_init(|| ctx.header_definitions())
                .iter()
                .any(|h| h == short)
                || (short != "printf"
                    && ctx.knowledge.symbol(short).is_none()
                    && ctx.file.is_call_statement(&c.range));
        }
        callees.all(|f| {
            f.params
                .get(k)
                .is_some_and(|p| p.ty.contains('&') && !p.ty.contains('*'))
        })
    })
}

/// Whether a request is worth reporting: at least twice the ideal sectors and four more.
fn strided(c: &Cost) -> bool {
    c.report.sectors >= 2 * c.report.ideal && c.report.sectors >= c.report.ideal + 4
}

struct Cost {
    report: SectorReport,
    /// The byte distance between neighbouring lanes, when it is the same for every pair.
    stride: Option<i64>,
}

/// The block shape of kernel `function` when every launch of it in the file agrees.
fn block_shape(ctx: &RuleContext, function: Option<&str>) -> [Option<i64>; 3] {
    launch_shape(&ctx.scope(), function)
}

/// The cost of `offset` for warp 0 under `shape`: the same under every sample of the
/// values the file does not fix and in the first two iterations of a loop (the smaller of
/// the two), or `None`.
fn cost(
    offset: &IndexExpr,
    width: AccessWidth,
    shape: [Option<i64>; 3],
    mask: u32,
) -> Option<Cost> {
    let mut result: Option<Cost> = None;
    for sample in 0..SAMPLES {
        let mut best: Option<Cost> = None;
        for iteration in 0..2 {
            let c = warp_cost(offset, width, shape, sample, iteration, mask)?;
            if best
                .as_ref()
                .is_none_or(|b| c.report.sectors < b.report.sectors)
            {
                best = Some(c);
            }
        }
        let best = best?;
        match &result {
            None => result = Some(best),
            Some(r) if r.report != best.report => return None,
            _ => {}
        }
    }
    result
}

/// The sector model's answer for one global access of warp 0 under `shape` and the
/// active-lane `mask`, exactly as this rule computes it: the report and the byte distance
/// between neighbouring lanes when it is constant. The kernel report calls this, so a
/// finding and the report's figure for the same access agree.
pub(crate) fn warp_sectors(
    offset: &IndexExpr,
    width: AccessWidth,
    shape: [Option<i64>; 3],
    mask: u32,
) -> Option<(SectorReport, Option<i64>)> {
    cost(offset, width, shape, mask).map(|c| (c.report, c.stride))
}

/// Whether other accesses of the same array in the same function, of the same width,
/// touch the sectors `a` leaves unused (`p[3 * i]`, `p[3 * i + 1]`, `p[3 * i + 2]`, or the
/// two halves of an interleaved pair): together they are coalesced, and L1 serves the
/// sectors the first one brought in.
fn siblings_fill_gaps(
    a: &SharedAccess,
    all: &[SharedAccess],
    width: AccessWidth,
    shape: [Option<i64>; 3],
) -> bool {
    let Some(mine) = lane_offsets(&a.byte_offset, shape, 0, 0) else {
        return false;
    };
    let mut lanes: Vec<i64> = mine.to_vec();
    let mut joined = false;
    let spacing = (mine[1] - mine[0]).abs();
    let sector = |v: i64| v.div_euclid(32);
    let w = i64::from(width.bytes());
    // A copy shifted into the gaps between `a`'s lanes (a constant offset, shorter than
    // the distance between lanes).
    let shifted = |theirs: &[i64; WARP_LANES]| {
        let d = theirs[0] - mine[0];
        d != 0 && d.abs() < spacing && theirs.iter().zip(&mine).all(|(t, m)| t - m == d)
    };
    // A load's own next iterations of a short loop (`up[first + i]` for `i < 3`) fill
    // gaps together with a sibling (the peeled `up[first + 3]` after the loop): L1
    // serves the repeats. (What the loop fills alone is `loop_fills_gaps`'s hint.) A
    // chunk longer than `MAX_CHUNK` elements per thread spreads the warp over more lines
    // than L1 keeps for it between the loop's iterations.
    let short_chunk = spacing / w <= MAX_CHUNK || spacing <= MAX_CHUNK_BYTES;
    if a.kind == AccessKind::Load && short_chunk {
        for theirs in iterations(&a.byte_offset, shape) {
            if shifted(&theirs) {
                lanes.extend(theirs);
            }
        }
    }
    let mut own = lanes.clone();
    own.sort_unstable();
    // A sibling joins where it reads bytes `a`'s iterations do not.
    let adds = |theirs: &[i64; WARP_LANES]| theirs.iter().any(|t| own.binary_search(t).is_err());
    for o in all {
        if o.range == a.range
            || o.array != a.array
            || o.function != a.function
            || o.width != a.width
            || o.kind == AccessKind::AddressOf
        {
            continue;
        }
        // A copy of `a` shifted into its gaps, in any iteration of a short loop around
        // it, or a load whose bytes all lie in the sectors the load `a` touches
        // (`rec[base + 4 * q + (q + k) % 4]` for each `k`: the lanes rotate through the
        // same chunks): what the two leave unused of each other's sectors.
        let Some(theirs) = lane_offsets(&o.byte_offset, shape, 0, 0) else {
            continue;
        };
        // Loads only: L1 serves the sibling loads' repeats, while each store request
        // writes its own partial sectors to L2 (measured on an H100: permuted stores took
        // 3.65x the L2 write sectors of coalesced ones, permuted loads no extra DRAM or
        // L2 traffic).
        let loads = a.kind == AccessKind::Load && o.kind == AccessKind::Load;
        let within = loads
            && theirs != mine
            && theirs.iter().all(|t| {
                (sector(*t)..=sector(t + w - 1)).all(|s| {
                    mine.iter()
                        .any(|m| (sector(*m)..=sector(m + w - 1)).contains(&s))
                })
            });
        if shifted(&theirs) || within {
            lanes.extend(theirs);
            joined |= adds(&theirs);
        }
        if loads && short_chunk {
            for theirs in iterations(&o.byte_offset, shape) {
                if shifted(&theirs) {
                    lanes.extend(theirs);
                    joined |= adds(&theirs);
                }
            }
        }
    }
    joined && fills(&lanes, width)
}

/// Whether the bytes at `lanes` (offsets of `width`-byte accesses) touch fewer than
/// twice the sectors they need.
fn fills(lanes: &[i64], width: AccessWidth) -> bool {
    let w = i64::from(width.bytes());
    let Some(low) = lanes.iter().min().copied() else {
        return false;
    };
    let shift = if low < 0 {
        ((-low) / 4096 + 1) * 4096
    } else {
        0
    };
    let mut sectors_touched: Vec<i64> = Vec::new();
    let mut bytes: Vec<(i64, i64)> = Vec::new();
    for v in lanes {
        let start = v + shift;
        sectors_touched.extend(start / 32..=(start + w - 1) / 32);
        bytes.push((start, start + w));
    }
    sectors_touched.sort_unstable();
    sectors_touched.dedup();
    bytes.sort_unstable();
    let mut total = 0;
    let mut end = i64::MIN;
    for (s, e) in bytes {
        let from = s.max(end);
        if e > from {
            total += e - from;
        }
        end = end.max(e);
    }
    let ideal = (total + 31) / 32;
    (sectors_touched.len() as i64) < 2 * ideal
}

/// The lanes of `offset` in the later iterations of each short loop in it (a unit step
/// and a known trip count of at most [`MAX_CHUNK`]), the other loops held at their
/// start.
fn iterations(offset: &IndexExpr, shape: [Option<i64>; 3]) -> Vec<[i64; WARP_LANES]> {
    let mut out = Vec::new();
    for (name, start, end, step) in loop_vars(offset) {
        let trip = end.zip(start.eval(&|_| None)).map(|(e, s)| e - s);
        let Some(trip) = trip.filter(|t| step.abs() == 1 && (2..=MAX_CHUNK).contains(t)) else {
            continue;
        };
        let moving = frozen_except(offset, name);
        out.extend((1..trip).filter_map(|i| lane_offsets(&moving, shape, 0, i)));
    }
    out
}

/// The chunk, in elements per thread, whose bytes between the lanes the next iterations
/// of the enclosing loop touch (`in[t * 4 + k]` for `k < 4`: 4): each thread walks its
/// own chunk, and the sectors one iteration leaves unused are what the next ones use.
fn walked_chunk(
    offset: &IndexExpr,
    width: AccessWidth,
    shape: [Option<i64>; 3],
    stride: Option<i64>,
) -> Option<i64> {
    let w = i64::from(width.bytes());
    // Each loop variable of the index with a unit step is tried alone, the others held
    // at their start: in `C[(row + i) * N + col + j]` the inner `j` walks the chunk.
    // With evenly spaced lanes the chunk is the gap between two lanes; otherwise (a 2-D
    // tile of lanes) it is the loop's trip count.
    loop_vars(offset)
        .into_iter()
        .find_map(|(name, start, end, step)| {
            let trip = end.zip(start.eval(&|_| None)).map(|(e, s)| e - s);
            let needed = stride.map(|d| d / w).or(trip)?;
            (step.abs() == 1
                && needed >= 2
                && chunk_filled(&frozen_except(offset, name), start, end, w, needed, shape))
            .then_some(needed)
        })
}

/// Whether `needed` iterations of the one loop variable left moving in `offset` (which
/// runs from `start` to `end`) touch few more sectors than the bytes they access.
fn chunk_filled(
    offset: &IndexExpr,
    start: &IndexExpr,
    end: Option<i64>,
    w: i64,
    needed: i64,
    shape: [Option<i64>; 3],
) -> bool {
    // The loop must run at least `needed` iterations when its bounds are known.
    if let (Some(e), Some(s)) = (end, start.eval(&|_| None)) {
        if e - s < needed {
            return false;
        }
    }
    let mut lanes = Vec::new();
    for iteration in 0..needed.min(WALK_SIMULATED) {
        let Some(l) = lane_offsets(offset, shape, 0, iteration) else {
            return false;
        };
        lanes.extend(l);
    }
    let Some(low) = lanes.iter().min().copied() else {
        return false;
    };
    let shift = if low < 0 {
        ((-low) / 4096 + 1) * 4096
    } else {
        0
    };
    let mut sectors_touched: Vec<i64> = lanes
        .iter()
        .flat_map(|v| (v + shift) / 32..=(v + shift + w - 1) / 32)
        .collect();
    sectors_touched.sort_unstable();
    sectors_touched.dedup();
    lanes.sort_unstable();
    lanes.dedup();
    let bytes = lanes.len() as i64 * w;
    (sectors_touched.len() as i64) < 2 * ((bytes + 31) / 32)
}

/// The loop variables in `e` with a constant step: name, start, end and step, each once.
fn loop_vars(e: &IndexExpr) -> Vec<(&str, &IndexExpr, Option<i64>, i64)> {
    fn walk<'e>(e: &'e IndexExpr, out: &mut Vec<(&'e str, &'e IndexExpr, Option<i64>, i64)>) {
        match e {
            IndexExpr::LoopVar {
                name,
                start,
                end,
                step: Some(step),
                ..
            } if !out.iter().any(|(n, ..)| n == name) => {
                out.push((name, start, *end, *step));
            }
            IndexExpr::Binary(a, _, b) => {
                walk(a, out);
                walk(b, out);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(e, &mut out);
    out
}

/// `e` with every loop variable other than `name` held at its start (step 0).
fn frozen_except(e: &IndexExpr, name: &str) -> IndexExpr {
    match e {
        IndexExpr::LoopVar {
            name: n,
            start,
            end,
            step,
            stride,
            scale,
        } => IndexExpr::LoopVar {
            name: n.clone(),
            start: start.clone(),
            end: *end,
            step: if n == name { *step } else { Some(0) },
            stride: if n == name { stride.clone() } else { None },
            scale: if n == name { scale.clone() } else { None },
        },
        IndexExpr::Binary(a, op, b) => IndexExpr::Binary(
            Box::new(frozen_except(a, name)),
            *op,
            Box::new(frozen_except(b, name)),
        ),
        other => other.clone(),
    }
}

/// The byte offsets of the 32 lanes of warp 0, by the one warp valuation: uniforms
/// as matrix dimensions and launch indices, an unknown `blockDim.x` one of the samples,
/// loops at `iteration`.
fn lane_offsets(
    offset: &IndexExpr,
    shape: [Option<i64>; 3],
    sample: usize,
    iteration: i64,
) -> Option<[i64; WARP_LANES]> {
    Valuation {
        sample,
        loops: Loops::Iteration(iteration),
        ..Valuation::warp0(shape)
    }
    .lanes(offset)
}

fn warp_cost(
    offset: &IndexExpr,
    width: AccessWidth,
    shape: [Option<i64>; 3],
    sample: usize,
    iteration: i64,
    mask: u32,
) -> Option<Cost> {
    let signed = lane_offsets(offset, shape, sample, iteration)?;
    let mut addresses = [None; WARP_LANES];
    // Addresses relative to the lowest lane keep a negative offset modelable; the base
    // of an allocation is aligned, so shift by a multiple of the largest alignment.
    let low = *signed.iter().min()?;
    let shift = if low < 0 {
        ((-low) / 4096 + 1) * 4096
    } else {
        0
    };
    for (lane, (slot, v)) in addresses.iter_mut().zip(signed).enumerate() {
        if mask & (1 << lane) != 0 {
            *slot = Some(u64::try_from(v + shift).ok()?);
        }
    }
    let report = sectors(&addresses, width)?;
    let d = signed[1] - signed[0];
    let stride = signed
        .windows(2)
        .all(|w| w[1] - w[0] == d)
        .then_some(d.abs());
    Some(Cost { report, stride })
}

/// The uniforms other than the built-ins (kernel parameters) that multiply a
/// thread-dependent term of `e`.
fn dimension_names(e: &IndexExpr) -> Vec<String> {
    let mut out = Vec::new();
    collect_dims(e, &mut out);
    out.sort();
    out.dedup();
    out
}

fn collect_dims(e: &IndexExpr, out: &mut Vec<String>) {
    match e {
        IndexExpr::Binary(a, op, b) => {
            if *op == kernaut_syntax::BinOp::Mul {
                for (x, y) in [(a, b), (b, a)] {
                    if y.depends_on_thread() {
                        uniforms(x, out);
                    }
                }
            }
            // `t / rows`, `t % rows`: which lanes share a row rests on the divisor too.
            if matches!(op, kernaut_syntax::BinOp::Div | kernaut_syntax::BinOp::Rem)
                && a.depends_on_thread()
            {
                uniforms(b, out);
            }
            collect_dims(a, out);
            collect_dims(b, out);
        }
        IndexExpr::LoopVar { start, .. } => collect_dims(start, out),
        _ => {}
    }
}

fn uniforms(e: &IndexExpr, out: &mut Vec<String>) {
    match e {
        IndexExpr::Uniform(n) if !is_builtin_uniform(n) => out.push(n.clone()),
        IndexExpr::Binary(a, _, b) => {
            uniforms(a, out);
            uniforms(b, out);
        }
        _ => {}
    }
}

/// Whether `e` depends on `threadIdx.y` or `threadIdx.z`.
fn mentions_rows(e: &IndexExpr) -> bool {
    e.mentions(&|e| matches!(e, IndexExpr::ThreadIdx(Axis::Y | Axis::Z)))
}

/// Whether an `if` around `at` whose condition reads only `names` and constants is on the
/// side that no large value of them (64 and 4,096 tried) takes.
fn large_values_excluded(ctx: &RuleContext, at: usize, names: &[String]) -> bool {
    use kernaut_syntax::{EnclosingKind, IndexExpr};
    ctx.file.enclosing(at).iter().any(|e| {
        let EnclosingKind::If {
            condition_range,
            in_else,
            ..
        } = &e.kind
        else {
            return false;
        };
        if condition_range.contains(&at) {
            return false;
        }
        let Some(condition) = ctx.file.uniformity_condition(condition_range, &[], None) else {
            return false;
        };
        [64, 4096].iter().all(|sample| {
            let value = condition.value(&|e| {
                e.substitute(&|n| {
                    names
                        .iter()
                        .any(|m| m == n)
                        .then_some(IndexExpr::Int(*sample))
                })
                .constant()
            });
            value.is_some_and(|v| (v != 0) == *in_else)
        })
    })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_messages, check_no_fix};

    const RULE: &str = "coalescing/strided-global-access";

    #[test]
    fn lanes_walking_rows() {
        check(
            RULE,
            r#"
__global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y;
    float acc = 0.0f;
    for (int i = 0; i < K; ++i)
        acc += A[row * K + i] * B[i * N + col];
            // ^^^^^^^^^^^^^^ hint: uncoalesced load from `A`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the L1 traffic) (taking `K` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (L1 keeps each sector for the loop's next iterations, so L2 and DRAM traffic stays near what the data needs, but L1 serves every request sector by sector: walks of 32 or more elements per thread at 8 times the sectors they need or more measured 2.3x to 9.7x the coalesced time on an H100, pitfall-coalescing#P3) (a hint only: the cost rests on `K`, which the code does not fix; at `K` = 4 it is 16 sectors, 4.0x)
    C[row * N + col] = acc;
 // ^^^^^^^^^^^^^^^^ hint: uncoalesced store to `C`: each warp request touches 32 sectors
}
"#,
        );
    }

    /// With no launch in sight, an index over `threadIdx.y` costs less in a block
    /// narrower than a warp (a generated kernel's 16×16: each pair of `ty` lanes shares a
    /// sector): the figure along a full warp of `threadIdx.x` comes with the assumption and
    /// the narrowest block's figure; a warning only because that one is 4× too.
    #[test]
    fn rows_of_an_unknown_block_name_the_narrower_figure() {
        check_messages(
            RULE,
            r#"
extern "C" __global__ void __launch_bounds__(256) store_tile(float* __restrict__ C, float v) {
    C[blockIdx.x * 1048576 + threadIdx.x * 65536 + threadIdx.y * 4] = v;
}
"#,
            expect![[r#"
                warning: uncoalesced store to `C`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 262144 bytes apart (assuming `threadIdx.x` runs over the warp: no launch of `store_tile` gives its block; with a 16×2×1 block, whose warps span rows, it is 16 sectors, 4.0x); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    /// A store of the same element in both arms of an `if` is one store after it (nvcc
    /// 13.5 `-O3`: unpredicated `STG`s): all 32 lanes issue it, reported once.
    #[test]
    fn one_store_in_both_arms_is_issued_by_every_lane() {
        check(
            RULE,
            r#"
__global__ void tile_out(const int* in, int* out, const int* carry) {
    __shared__ int part[32];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = in[blockIdx.x * 32 + threadIdx.x];
    __syncthreads();
    int base = carry[blockIdx.x];
    for (int i = 0; i < 128; i++) {
        if (threadIdx.x > 0)
            out[g * 128 + i] = base + part[threadIdx.x - 1];
         // ^^^^^^^^^^^^^^^^ warning: uncoalesced store to `out`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 512 bytes apart
        else
            out[g * 128 + i] = base;
    }
}
void run(const int* in, int* out, const int* carry, int blocks) { tile_out<<<blocks, 32>>>(in, out, carry); }
"#,
        );
    }

    /// Chevrons with blanks in them (`k << <1, 1 >> > (…)`, as Visual Studio's formatter
    /// writes them) are a launch to nvcc: one thread issues no warp-wide request.
    #[test]
    fn a_launch_with_spaced_chevrons_gives_the_block() {
        check(
            RULE,
            r#"
__global__ void column_sweep(double* t, const double* k, int nlay) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    for (int l = 0; l < nlay; l++)
        t[id * nlay + l] = 2.0 * k[id * nlay + l];
}
void run(double* t, const double* k, int nlay) {
    column_sweep << <1, 1 >> > (t, k, nlay);
}
"#,
        );
    }

    #[test]
    fn a_local_assigned_again_before_the_use_is_not_its_initialiser() {
        // After `id /= w` neighbouring lanes share `id`: the initialiser is not the value
        // at the load, so the model has none and the rule says nothing. An assignment
        // after the use (outside any loop around it) does not reach it.
        check(
            RULE,
            r#"
__global__ void jitter(float* img, const float* rnd, int n, int w) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n) return;
    int x = id % w;
    id /= w;
    img[id * w + x] *= rnd[8 * id];
}
__global__ void late(float* out, const float* in, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    out[id] = in[8 * id];
           // ^^^^^^^^^^ warning: uncoalesced load from `in`
    id += n;
    out[id] = 0.0f;
}
void run(float* img, const float* r, int n, int w) {
    jitter<<<(n + 255) / 256, 256>>>(img, r, n, w);
    late<<<(n + 255) / 256, 256>>>(img, r, n);
}
"#,
        );
    }

    #[test]
    fn every_other_element_and_short_chunks_are_hints_long_chunks_warn() {
        // A load loop walking each thread's own chunk reads the rest of every sector from
        // L1: up to 16 elements it is a hint, longer ones warn with the L1 figure. A store
        // loop's partial sector writes all reach L2: a hint only up to 4 elements and 16
        // bytes (the thresholds measured in `wiki/probes/coalescing`).
        check(
            RULE,
            r#"
__global__ void k(const float* in, float* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = in[2 * t];
          // ^^^^^^^^^ hint: uncoalesced load from `in`: each warp request touches 8 sectors of 32 bytes where its 128 bytes need 4 (2.0x the memory traffic), because neighbouring lanes are 8 bytes apart
    for (int j = 0; j < 16; ++j)
        out[t * 16 + j] = 0.0f;
     // ^^^^^^^^^^^^^^^ warning: uncoalesced store to `out`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 64 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (the loop's next iterations write the rest of each sector, but L1 does not keep stores
    for (int j = 0; j < 4; ++j)
        out[t * 4 + j] = in[t * 4 + j];
     // ^^^^^^^^^^^^^^ hint: uncoalesced store to `out`: each warp request touches 16 sectors of 32 bytes where its 128 bytes need 4 (4.0x the memory traffic), because neighbouring lanes are 16 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the loop's next iterations write the rest of each sector
                      // ^^^^^^^^^^^^^ hint: uncoalesced load from `in`: each warp request touches 16 sectors of 32 bytes where its 128 bytes need 4 (4.0x the L1 traffic)
    float s = 0.0f;
    for (int j = 0; j < 16; ++j)
        s += in[t * 16 + j];
          // ^^^^^^^^^^^^^^ hint: uncoalesced load from `in`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the L1 traffic), because neighbouring lanes are 64 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the loop's next iterations read the rest of each sector from L1
    for (int j = 0; j < 32; ++j)
        s += in[t * 32 + j];
          // ^^^^^^^^^^^^^^ warning: uncoalesced load from `in`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the L1 traffic), because neighbouring lanes are 128 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (L1 keeps each sector for the loop's next iterations
    out[t] = s;
}
__global__ void bytes(const char* text, unsigned* out, char* dst) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = 0, b = 0;
    for (int k = 0; k < 16; ++k)
        a += text[t * 16 + k];
          // ^^^^^^^^^^^^^^^^ hint: uncoalesced load from `text`: each warp request touches 16 sectors of 32 bytes where its 32 bytes need 1 (16.0x the L1 traffic), because neighbouring lanes are 16 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the loop's next iterations read the rest of each sector from L1
    for (int k = 0; k < 64; ++k)
        b += text[t * 64 + k];
          // ^^^^^^^^^^^^^^^^ warning: uncoalesced load from `text`: each warp request touches 32 sectors of 32 bytes where its 32 bytes need 1 (32.0x the L1 traffic)
    out[t] = a + b;
    for (int k = 0; k < 4; ++k)
        dst[t * 4 + k] = 0;
    for (int k = 0; k < 8; ++k)
        dst[t * 8 + k] = 0;
     // ^^^^^^^^^^^^^^ warning: uncoalesced store to `dst`: each warp request touches 8 sectors of 32 bytes where its 32 bytes need 1 (8.0x the memory traffic), because neighbouring lanes are 8 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (the loop's next iterations write the rest of each sector, but L1 does not keep stores
}
__global__ void wide(const double* d, double* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    double s = 0.0;
    for (int k = 0; k < 64; ++k)
        s += d[t * 64 + k];
          // ^^^^^^^^^^^^^ hint: uncoalesced load from `d`: each warp request touches 32 sectors of 32 bytes where its 256 bytes need 8 (4.0x the L1 traffic), because neighbouring lanes are 512 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the loop's next iterations read the rest of each sector from L1, which keeps it, so L2 and DRAM traffic stays what the data needs; walks of up to 16 elements per thread, or spread over at most 4 times the sectors they need, measured under 2x the coalesced time on an H100, pitfall-coalescing#P3)
    out[t] = s;
}
"#,
        );
    }

    /// A 2-D register tile's epilogue: the inner loop walks each thread's row of 8
    /// elements while the outer one moves to the next row. The inner loop fills the
    /// sectors, as in the 1-D chunk above, but a store's partial sector writes each reach
    /// L2; a chunk the inner loop leaves half empty (8 elements apart, 4 written) is
    /// reported as plain strided (both hints here, as the row stride rests on the
    /// runtime `N`).
    #[test]
    fn the_inner_loop_of_a_register_tile_fills_the_chunk() {
        check(
            RULE,
            r#"
__global__ void epilogue(float* C, const float* acc, int N) {
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j)
            C[(blockIdx.y * 128 + ty * 8 + i) * N + blockIdx.x * 128 + tx * 8 + j] = acc[i * 8 + j];
         // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: uncoalesced store to `C`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic) (taking `N` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (the loop's next iterations write the rest of each sector, but L1 does not keep stores: every partial sector write reaches L2; walks of more than 4 elements or 16 bytes per thread measured 2.7x to 47x the coalesced time on an H100, pitfall-coalescing#P3) (a hint only: the cost rests on `N`, which the code does not fix; at `N` = 4 it is 20 sectors, 6.7x)
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 4; ++j)
            C[(blockIdx.y * 128 + ty * 8 + i) * N + blockIdx.x * 128 + tx * 8 + j] = acc[i * 8 + j];
         // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: uncoalesced store to `C`
}
"#,
        );
    }

    #[test]
    fn naive_baselines_get_a_hint() {
        check(
            RULE,
            r#"
__global__ void sgemm_naive(const float* A, float* C, int K) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    C[x] = A[x * K];
        // ^^^^^^^^ hint: uncoalesced load from `A`
}
"#,
        );
    }

    #[test]
    fn coalesced_uniform_broadcast_gather_and_partial_warps_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(const float* A, const float* B, float* C, const int* idx, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = 0; i < K; ++i)
        acc += A[row * K + i] * B[i * N + col];
    C[row * N + col] = acc;
    C[blockIdx.x] = A[0];
    C[col] = B[idx[col]];
    if (threadIdx.x == 0) C[threadIdx.x * N] = acc;
    float2 v = reinterpret_cast<const float2*>(A)[col];
    C[col] = v.x;
    // Interleaved pairs and xyz triples: together the accesses use every byte.
    float re = B[2 * col], im = B[2 * col + 1];
    C[3 * col] = re; C[3 * col + 1] = im; C[3 * col + 2] = 0.0f;
}
"#,
        );
    }

    #[test]
    fn lane_limiting_guards_count_only_the_active_lanes() {
        // Under `lane < MMA_K` (16) half the warp reads a column: 16 sectors for 64
        // bytes, not the 32 sectors of a full warp. Under `threadIdx.x < 8` the scatter
        // is 8 sectors for 32 bytes, small enough for a hint only; `tid % 32 < 16`
        // limits the lanes the same way.
        check_messages(
            RULE,
            r#"
#define MMA_K 16
__global__ void k(const float* B, float* out, int N) {
    int lane = threadIdx.x % 32;
    int tid = threadIdx.x;
    if (lane < MMA_K) {
        out[lane] = B[lane * N];
    }
    if (threadIdx.x < 8) out[tid] = B[tid * N + 1];
    if (tid % 32 < 16) out[tid] = B[tid * N + 2];
}
"#,
            expect![[r#"
                hint: uncoalesced load from `B`: each warp request touches 16 sectors of 32 bytes where its 64 bytes need 2 (8.0x the memory traffic) (only 16 of the 32 lanes issue it, under `lane < MMA_K`) (taking `N` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the cost rests on `N`, which the code does not fix; at `N` = 4 it is 8 sectors, 4.0x) (pitfall-coalescing#P1)
                hint: uncoalesced load from `B`: each warp request touches 8 sectors of 32 bytes where its 32 bytes need 1 (8.0x the memory traffic) (only 8 of the 32 lanes issue it, under `threadIdx.x < 8`) (taking `N` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: 8 lanes or fewer move little data) (pitfall-coalescing#P1)
                hint: uncoalesced load from `B`: each warp request touches 16 sectors of 32 bytes where its 64 bytes need 2 (8.0x the memory traffic) (only 16 of the 32 lanes issue it, under `tid % 32 < 16`) (taking `N` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the cost rests on `N`, which the code does not fix; at `N` = 4 it is 8 sectors, 4.0x) (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn early_exits_and_launch_constant_bounds_leave_only_their_lanes() {
        // One thread per channel past `if (ch >= channels) return;`, every launch passing
        // `channels` = 12: only the first block's lanes 0..11 read, 256 bytes apart (12
        // sectors for 48 bytes). With 48 channels the first warp is full again. A guard
        // that leaves warp 0 empty is read in the first warp it lets in.
        check_messages(
            RULE,
            r#"
__global__ void filter(const float* in, float* out, int channels, int samples) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= channels)
        return;
    float acc = 0.0f;
    for (int t = 0; t < samples; ++t) {
        acc = 0.5f * acc + in[ch * samples + t];
    }
    out[ch] = acc;
}
__global__ void wide(const float* in, float* out, int channels, int samples) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= channels) return;
    out[ch] = in[ch * samples];
}
// Only the last row of the block reads: no lane of warp 0, twelve of warp 3.
__global__ void last_row(const float* in, float* out) {
    if (threadIdx.y == blockDim.y - 1 && threadIdx.x < 12)
        out[threadIdx.x] = in[threadIdx.x * 64];
}
void run(const float* in, float* out) {
    filter<<<1, 64>>>(in, out, 12, 64);
    wide<<<1, 64>>>(in, out, 48, 64);
    last_row<<<1, dim3(32, 4)>>>(in, out);
}
"#,
            expect![[r#"
                warning: uncoalesced load from `in`: each warp request touches 12 sectors of 32 bytes where its 48 bytes need 2 (6.0x the L1 traffic) (only 12 of the 32 lanes issue it, under `!(ch >= channels)`), because neighbouring lanes are 256 bytes apart (with `samples` = 64, as every launch passes); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (L1 keeps each sector for the loop's next iterations, so L2 and DRAM traffic stays near what the data needs, but L1 serves every request sector by sector: walks of 32 or more elements per thread at 8 times the sectors they need or more measured 2.3x to 9.7x the coalesced time on an H100, pitfall-coalescing#P3) (pitfall-coalescing#P1)
                warning: uncoalesced load from `in`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 256 bytes apart (with `samples` = 64, as every launch passes); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
                warning: uncoalesced load from `in`: each warp request touches 12 sectors of 32 bytes where its 48 bytes need 2 (6.0x the memory traffic) (only 12 of the 32 lanes issue it, under `threadIdx.y == blockDim.y - 1 && threadIdx.x < 12`), because neighbouring lanes are 256 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn a_guard_with_a_runtime_bound_gives_a_hint_that_assumes_the_whole_warp() {
        // `t < active` lets every lane in or only some, depending on `active`: the full
        // warp's figure, as a hint that says what it assumes. A guard that evidently
        // leaves part of the warp idle (`lane == src`) stays silent.
        check_messages(
            RULE,
            r#"
__global__ void gather(const float* in, float* out, int active, int src) {
    int t = threadIdx.x;
    if (t < active) {
        out[blockIdx.x * 32 + t] = in[t * 64 + blockIdx.x];
    }
    if ((t & 31) == src) out[t] = in[t * 64 + 1];
}
void run(const float* in, float* out, int a, int s) { gather<<<64, 32>>>(in, out, a, s); }
"#,
            expect![[r#"
                hint: uncoalesced load from `in`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 256 bytes apart (a hint only: assuming every lane of the warp passes `t < active`, whose bound is a runtime value); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn a_divisor_the_code_does_not_fix_is_named_with_the_assumption() {
        // Which lanes share a row rests on `rows` as much as on `n`: both are assumed.
        check_messages(
            RULE,
            r#"
__global__ void scatter(const float* in, float* out, int rows, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[(t % rows) * n + t / rows] = in[t];
}
"#,
            expect![[r#"
                hint: uncoalesced store to `out`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic) (taking `n`, `rows` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the cost rests on `n`, `rows`, which the code does not fix) (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn a_launch_whose_block_does_not_fold_gives_a_hint() {
        // `block.x / PER` is not folded: the launch may well give fewer than 32 threads.
        check_messages(
            RULE,
            r#"
__global__ void swap(const int* in, int* out) {
    int base = threadIdx.x * 16;
    out[base] = in[base + 1];
}
void run(const int* in, int* out, dim3 block) { swap<<<1, block.x / 4>>>(in, out); }
"#,
            expect![[r#"
                hint: uncoalesced store to `out`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 64 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: no launch of `swap` fixes its block; a block of 32 threads or more is assumed) (pitfall-coalescing#P1)
                hint: uncoalesced load from `in`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 64 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: no launch of `swap` fixes its block; a block of 32 threads or more is assumed) (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn a_load_of_what_the_thread_just_stored_is_no_request() {
        // `cols[idx]` read back right after the store is a register (no `LDG` in SASS);
        // after a store through another pointer that may alias it, it is loaded again.
        check_messages(
            RULE,
            r#"
__global__ void fill(int* rows, int* cols, int* copy, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    int idx = k * 12;
    cols[idx] = n;
    copy[idx] = cols[idx];
    rows[idx] = cols[idx];
}
void run(int* r, int* c, int* p, int n) { fill<<<64, 128>>>(r, c, p, n); }
"#,
            expect![[r#"
                warning: uncoalesced store to `cols`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 48 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
                warning: uncoalesced store to `copy`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 48 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
                warning: uncoalesced store to `rows`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 48 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
                warning: uncoalesced load from `cols`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 48 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn a_value_loaded_where_every_path_passes_is_kept_for_later_reads() {
        // Each row element starts two inner loops: the second loop's start reads again
        // what the first one's start loaded, with nothing stored to global memory between
        // (one `LDG` in SASS), and so does the read under `if`. Only the first load of each
        // element is a request.
        check(
            RULE,
            r#"
__global__ void count(const unsigned* perm, unsigned* out, unsigned n, unsigned m) {
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    unsigned of = tid * m;
    unsigned bit[33];
    for (unsigned i = 0; i <= m; ++i) bit[i] = 0;
    unsigned ans = 0;
    for (unsigned i = 0; i < m; ++i) {
        for (unsigned k = perm[of + i] + 1; k; k -= k & -k) ans += bit[k];
                       // ^^^^^^^^^^^^ warning: uncoalesced load from `perm`
        for (unsigned k = perm[of + i] + 1; k <= m; k += k & -k) ++bit[k];
        if (ans > m) ans -= perm[of + i];
    }
    out[tid] = ans;
}
void run(const unsigned* p, unsigned* o, unsigned n) { count<<<(n + 255) / 256, 256>>>(p, o, n, 32); }
"#,
        );
    }

    #[test]
    fn an_equality_with_a_grid_index_leaves_one_lane() {
        // `t == total - 1` with `t` the grid-wide index: one lane of one warp stores,
        // one sector, whatever `total` is; the strided loop every thread runs is reported.
        check_messages(
            RULE,
            r#"
__global__ void pad_and_sum(unsigned char* buf, int chunk, int total, int pad, unsigned* out) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    int base = t * chunk;
    if (t >= total) return;
    if (t == total - 1 && pad > 0) {
        for (int i = 0; i < pad; i++) buf[base + chunk - pad + i] = 0;
    }
    unsigned h = 0;
    for (int i = 0; i < chunk; i++) h += buf[base + i];
    out[t] = h;
}
void run(unsigned char* b, unsigned* o) { pad_and_sum<<<16, 256>>>(b, 256, 4096, 7, o); }
"#,
            expect![[r#"
                warning: uncoalesced load from `buf`: each warp request touches 32 sectors of 32 bytes where its 32 bytes need 1 (32.0x the L1 traffic), because neighbouring lanes are 256 bytes apart (with `chunk` = 256, as every launch passes); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (L1 keeps each sector for the loop's next iterations, so L2 and DRAM traffic stays near what the data needs, but L1 serves every request sector by sector: walks of 32 or more elements per thread at 8 times the sectors they need or more measured 2.3x to 9.7x the coalesced time on an H100, pitfall-coalescing#P3) (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn a_file_scope_dim3_the_file_never_assigns_is_the_block() {
        // `block_cfg(16, 16)`: a warp holds 16 rows of two columns each. `flex` is set
        // again in `run`: its block is not known.
        check_messages(
            RULE,
            r#"
dim3 block_cfg(16, 16);
dim3 flex(16, 16);
__global__ void rows(float* out, const float* A) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < 64; k++) acc += A[i * 64 + k];
    out[i] = acc;
}
__global__ void rows2(float* out, const float* A) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = A[i * 64];
}
void run(float* out, const float* A) {
    rows<<<4, block_cfg>>>(out, A);
    flex = dim3(32, 8);
    rows2<<<4, flex>>>(out, A);
}
"#,
            expect![[r#"
                warning: uncoalesced load from `A`: each warp request touches 16 sectors of 32 bytes where its 64 bytes need 2 (8.0x the L1 traffic); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (L1 keeps each sector for the loop's next iterations, so L2 and DRAM traffic stays near what the data needs, but L1 serves every request sector by sector: walks of 32 or more elements per thread at 8 times the sectors they need or more measured 2.3x to 9.7x the coalesced time on an H100, pitfall-coalescing#P3) (pitfall-coalescing#P1)
                warning: uncoalesced load from `A`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 256 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    /// The figure at a small value of the runtime size applies it in the guards too: in
    /// a 6×6×6 block under `if (i < n && j < n && k < n)`, at `n` = 4 only the 16 lanes
    /// with `i` and `j` below 4 load (16 sectors for 128 bytes, 4.0x), not the 32 of
    /// warp 0.
    #[test]
    fn the_small_value_figure_keeps_the_guards() {
        check_messages(
            RULE,
            r#"
__global__ void gather3(const double* a, double* out, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int j = threadIdx.y + blockIdx.y * blockDim.y;
    int k = threadIdx.z + blockIdx.z * blockDim.z;
    if (i < n && j < n && k < n)
        out[(j * n + i) * n + k] = a[(i * n + j) * n + k];
}
void launch(const double* a, double* o, int n) {
    gather3<<<dim3((n + 5) / 6, (n + 5) / 6, (n + 5) / 6), dim3(6, 6, 6)>>>(a, o, n);
}
"#,
            expect![[r#"
                hint: uncoalesced store to `out`: each warp request touches 32 sectors of 32 bytes where its 256 bytes need 8 (4.0x the memory traffic) (taking `n` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the cost rests on `n`, which the code does not fix; at `n` = 4 it is 16 sectors, 4.0x) (pitfall-coalescing#P1)
                hint: uncoalesced load from `a`: each warp request touches 32 sectors of 32 bytes where its 256 bytes need 8 (4.0x the memory traffic) (taking `n` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the cost rests on `n`, which the code does not fix; at `n` = 4 it is 16 sectors, 4.0x) (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn a_stride_assumed_large_where_the_guard_says_otherwise_is_silent() {
        // Under `if (step < 0)` no `step` of 64 or more runs the loop: no figure. Under
        // `if (step > 1)` the assumption can hold: the hint stays.
        check_messages(
            RULE,
            r#"
__global__ void slice(double* out, const double* in, long start, long stop, long step) {
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (step < 0) {
        for (long i = start + tid * step; i > stop; i += step) out[i] = 2.0 * in[i];
    }
    if (step > 1) out[tid * step] = 1.0;
}
void run(double* o, const double* in, long a, long b, long s) { slice<<<64, 256>>>(o, in, a, b, s); }
"#,
            expect![[r#"
                hint: uncoalesced store to `out`: each warp request touches 32 sectors of 32 bytes where its 256 bytes need 8 (4.0x the memory traffic) (taking `step` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the cost rests on `step`, which the code does not fix; at `step` = 4 it is 32 sectors, 4.0x) (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn a_block_smaller_than_the_warp_counts_its_own_lanes() {
        // 16 threads: 15 of the warp's 16 lanes take the branch.
        check_messages(
            RULE,
            r#"
__global__ void part(const char* data, unsigned* acc) {
    if (threadIdx.x < 15) acc[threadIdx.x] = data[threadIdx.x * 64];
}
void run(const char* d, unsigned* a) { part<<<1, 16>>>(d, a); }
"#,
            expect![[r#"
                warning: uncoalesced load from `data`: each warp request touches 15 sectors of 32 bytes where its 15 bytes need 1 (15.0x the memory traffic) (only 15 of the 16 lanes issue it, under `threadIdx.x < 15`); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn the_else_of_both_orderings_against_a_loaded_uniform_leaves_one_lane() {
        // `cut` is loaded from one address for the whole block: the `else` of `i < cut`
        // and `i > cut` is `i == cut`, one thread; its byte loop is one lane's requests.
        // The vector copies the other threads run are coalesced.
        check(
            RULE,
            r#"
__global__ void splice(const char* a, char* out, const int* cuts, int nchunks) {
    int row = blockIdx.x;
    int cutb = cuts[row];
    int cut = cutb / 16;
    int len = nchunks * 16;
    for (int i = threadIdx.x; i < nchunks; i += blockDim.x) {
        if (i < cut) {
            reinterpret_cast<int4*>(out)[row * nchunks + i] = reinterpret_cast<const int4*>(a)[row * nchunks + i];
        } else if (i > cut) {
            reinterpret_cast<int4*>(out)[row * nchunks + i] = reinterpret_cast<const int4*>(a)[row * nchunks + i];
        } else {
            for (int j = i * 16; j < cutb; ++j) out[row * len + j] = a[row * len + j];
        }
    }
}
void run(const char* a, char* o, const int* c, int rows, int n) { splice<<<rows, 256>>>(a, o, c, n); }
"#,
        );
    }

    #[test]
    fn a_guard_on_loaded_data_gives_a_hint_that_assumes_the_whole_warp() {
        // Which lanes pass `flag` (loaded at each lane's own index) is data: the full
        // warp's figure, as a hint that says what it assumes.
        check_messages(
            RULE,
            r#"
__global__ void pick(const int* keep, const float* in, float* out) {
    int t = threadIdx.x;
    int flag = keep[blockIdx.x * 32 + t];
    if (flag) out[blockIdx.x * 32 + t] = in[t * 64 + blockIdx.x];
}
void run(const int* k, const float* in, float* out) { pick<<<64, 32>>>(k, in, out); }
"#,
            expect![[r#"
                hint: uncoalesced load from `in`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 256 bytes apart (a hint only: assuming every lane of the warp passes `flag`, which depends on data loaded at run time); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn statements_that_rotate_through_the_same_sectors_fill_each_other() {
        // Four lanes share a 16-word record; each statement reads one word of each
        // lane's 4-word chunk, rotated by the lane, so one statement touches 8 sectors
        // for 128 bytes but the four read every byte of them: silent. A lone rotated
        // read of another array stays a warning, and so do the same rotated stores: each
        // store request writes its own partial sectors.
        check_messages(
            RULE,
            r#"
__global__ void rec4(const unsigned* rec, const unsigned* lone, unsigned* out) {
    int item = (blockIdx.x * blockDim.x + threadIdx.x) / 4;
    int base = item * 16;
    unsigned q = threadIdx.x % 4;
    unsigned a0 = rec[base + 4 * q + (q + 0) % 4];
    unsigned a1 = rec[base + 4 * q + (q + 1) % 4];
    unsigned a2 = rec[base + 4 * q + (q + 2) % 4];
    unsigned a3 = rec[base + 4 * q + (q + 3) % 4];
    unsigned b = lone[base * 4 + 16 * q];
    out[base + 4 * q + (q + 0) % 4] = a0 ^ b;
    out[base + 4 * q + (q + 1) % 4] = a1;
    out[base + 4 * q + (q + 2) % 4] = a2;
    out[base + 4 * q + (q + 3) % 4] = a3;
}
void run(const unsigned* r, const unsigned* l, unsigned* o, int n) { rec4<<<n / 128, 128>>>(r, l, o); }
"#,
            expect![[r#"
                warning: uncoalesced load from `lone`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 64 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
                warning: uncoalesced store to `out`: each warp request touches 16 sectors of 32 bytes where its 128 bytes need 4 (4.0x the memory traffic); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
                warning: uncoalesced store to `out`: each warp request touches 16 sectors of 32 bytes where its 128 bytes need 4 (4.0x the memory traffic); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
                warning: uncoalesced store to `out`: each warp request touches 16 sectors of 32 bytes where its 128 bytes need 4 (4.0x the memory traffic); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
                warning: uncoalesced store to `out`: each warp request touches 16 sectors of 32 bytes where its 128 bytes need 4 (4.0x the memory traffic); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    /// A helper's ragged tail, as a kernel calls it: `put4(dst, j, n, v)` with `j` eight
    /// floats a thread stores one `float4` where it fits and, in the `else`, the
    /// elements before `n` one by one. The `else` holds only a thread whose `j` lies
    /// within three of `n`: one lane of a warp at most, whose stores are one sector
    /// each. The helper's own `if (i < n)` over a strided store keeps its warning.
    #[test]
    fn a_helpers_ragged_tail_is_one_lane_in_the_callers_context() {
        check(
            RULE,
            r#"
__device__ __forceinline__ void put4(float* dst, int i, int n, float4 v) {
    if (i + 3 < n) {
        *reinterpret_cast<float4*>(dst + i) = v;
    } else {
        if (i + 0 < n) dst[i + 0] = v.x;
        if (i + 1 < n) dst[i + 1] = v.y;
        if (i + 2 < n) dst[i + 2] = v.z;
    }
}
__device__ void put(float* dst, int i, int n, float v) {
    if (i < n) dst[i * 8] = v;
            // ^^^^^^^^^^ warning: uncoalesced store to `dst`
}
__global__ void scale8(const float* __restrict__ src, float* dst, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    for (int v = 0; v < 2; ++v) {
        int j = i + 4 * v;
        float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
        if (j + 3 < n) x = *reinterpret_cast<const float4*>(src + j);
        put4(dst, j, n, x);
    }
    put(dst, blockIdx.x * blockDim.x + threadIdx.x, n, 1.f);
}
void run(const float* a, float* b, int n) { scale8<<<(n / 8 + 255) / 256, 256>>>(a, b, n); }
"#,
        );
    }

    /// A kernel argument passed as a local of the launching function that holds a
    /// constant and is never written again (`int W = 2;`) is that constant, as a `const`
    /// one is: the figure is the one at 2 words a thread, not at an assumed 64.
    #[test]
    fn a_local_holding_a_constant_fixes_the_argument() {
        check(
            RULE,
            r#"
__global__ void walk(const unsigned* in, unsigned* out, long n, int W) {
    long i = blockIdx.x * blockDim.x + threadIdx.x;
    for (long k = i * W; k < i * W + W; k++)
        out[k] = __popc(in[k]);
     // ^^^^^^ hint: uncoalesced store to `out`: each warp request touches 8 sectors of 32 bytes where its 128 bytes need 4 (2.0x the memory traffic), because neighbouring lanes are 8 bytes apart (with `W` = 2, as every launch passes)
                     // ^^^^^ hint: uncoalesced load from `in`: each warp request touches 8 sectors of 32 bytes where its 128 bytes need 4 (2.0x the L1 traffic), because neighbouring lanes are 8 bytes apart (with `W` = 2, as every launch passes)
}
void run(const unsigned* in, unsigned* out, long n) {
    int W = 2; // W = 4 on wider words; &W is never taken
    walk<<<(n + 255) / 256, 256>>>(in, out, n, W);
}
"#,
        );
    }

    /// The last `else` of a chain over two cut points the block loads (`i < a || i > b`,
    /// then `i > a && i < b`) runs for `i == a` and `i == b` only: at most two lanes, a
    /// request of two sectors at most, nothing to report. Where the last `else` keeps
    /// the range between the cuts, which lanes run it is not known, and the loop's
    /// full-warp figure stands as before.
    #[test]
    fn the_last_else_of_a_chain_over_two_cut_points() {
        let chain = r#"
__global__ void cross(const char* a, char* out, const int* cuts, int n)
{
    int cutA = cuts[2 * blockIdx.x] / 16;
    int cutB = cuts[2 * blockIdx.x + 1] / 16;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        if (i < cutA || i > cutB) {
            out[blockIdx.x * n + i] = a[i];
        } else if (i > cutA && i < cutB) {
            out[blockIdx.x * n + i] = 0;
        } else {
            for (int j = i * 16; j < i * 16 + 16; j++)
                out[blockIdx.x * n * 16 + j] = !a[j];
        }
    }
}
void run(const char* a, char* o, const int* c) { cross<<<64, 256>>>(a, o, c, 256); }
"#;
        check(RULE, chain);
        let range = chain.replace(
            "} else if (i > cutA && i < cutB) {\n            out[blockIdx.x * n + i] = 0;\n        }",
            "}",
        );
        assert_ne!(range, chain);
        assert_eq!(
            crate::rules::testing::messages(RULE, &range).len(),
            2,
            "{range}"
        );
    }

    #[test]
    fn lane_limiting_guards_near_misses_stay_silent() {
        // The active lanes read contiguous floats; a bound every lane of warp 0 passes
        // whatever `n` is (64 or more) leaves the full warp, contiguous too; and the
        // `else` of `lane < 16` is the other 16 lanes, contiguous as well.
        check(
            RULE,
            r#"
__global__ void k(const float* B, float* out, int n) {
    int lane = threadIdx.x % 32;
    if (lane < 16) out[lane] = B[lane];
    if (threadIdx.x < n) out[threadIdx.x] = B[threadIdx.x + 1];
    if (lane < 16) { out[0] = 1.0f; } else { out[lane] = B[lane + 2]; }
}
"#,
        );
    }

    #[test]
    fn a_launch_shape_decides() {
        // With 16 x 16 blocks a warp is two half-rows of `in`: coalesced.
        check(
            RULE,
            r#"
__global__ void tr(const float* in, float* out, int n) {
    out[threadIdx.x * n + threadIdx.y] = in[threadIdx.y * n + threadIdx.x];
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: uncoalesced store to `out`: each warp request touches 16 sectors
}
void launch(const float* i, float* o, int n) { tr<<<1, dim3(16, 16)>>>(i, o, n); }
"#,
        );
    }

    /// A device function's pointer parameter that a caller fills with a `__shared__`
    /// array is not taken for global memory; the same helper called with global memory
    /// only is.
    #[test]
    fn a_pointer_a_caller_points_at_shared_memory() {
        check(
            RULE,
            r#"
__device__ void put(int2* s, int i, int2 v) { s[threadIdx.x * 15 + i] = v; }
__device__ void store(float* g, float v) { g[threadIdx.x * 32] = v; }
                                        // ^^^^^^^^^^^^^^^^^^^ warning: uncoalesced store to `g`
__global__ void k(float* out) {
    __shared__ int2 tile[32 * 16];
    put(tile, 0, make_int2(1, 2));
    put(&tile[0], 1, make_int2(1, 2));
    store(out, 1.0f);
}
"#,
        );
    }

    /// A subscript handed to a helper that takes it by reference is read or written at
    /// the helper's width, which the element's type does not give.
    #[test]
    fn an_element_passed_by_reference() {
        check(
            RULE,
            r#"
template <class T, class U, class V>
__device__ void as(U& u, const V& v) { u = reinterpret_cast<const T&>(v); }
__device__ float twice(float v) { return 2.0f * v; }
__global__ void k(const __half* h, uint4* out, float* f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    uint4 loc;
    as<uint4>(loc, h[i * 8]);
    out[i] = loc;
    f[i] = twice(f[i * 32]);
              // ^^^^^^^^^ warning: uncoalesced load from `f`
}
"#,
        );
    }

    #[test]
    fn no_automatic_fix() {
        check_no_fix(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int K) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = in[t * K];
}
"#,
        );
    }

    /// A device function's global accesses are modelled as the kernels of the file call
    /// it, through further device functions too: the pointer the kernel passes (moved
    /// on by the arguments), the thread index its arguments carry, the kernel's block.
    #[test]
    fn device_functions_under_the_kernels_that_call_them() {
        check_messages(
            RULE,
            r#"
__device__ void put(float* p, int i, float v) { p[i] = v; }
__device__ void put_row(float* p, int r, float v) { put(p, r * 1024, v); }
__device__ float get(const float* p, int i) { return p[i]; }
__global__ void k(float* out, const float* in) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = get(in, t);
    put(out, t, v);
    put_row(out + blockIdx.x, threadIdx.x, v);
}
int main() { k<<<64, 256>>>(nullptr, nullptr); }
"#,
            expect![[r#"
                warning: uncoalesced store to `p`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 4096 bytes apart (in `put` as `k` reaches it through `put_row` at line 8); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    /// An element handed to a function whose declaration the file does not show, called
    /// as a statement of its own, may be written through a reference at any width
    /// (`AssignAs<uint2>(conics[i * 4], v)` from a header elsewhere): not a load to cost.
    /// The same function's value used in an expression takes the element by value.
    #[test]
    fn an_element_handed_to_an_unseen_function_called_as_a_statement() {
        check(
            RULE,
            r#"
__global__ void k(float* out, const float* in, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    AssignAs<uint2>(out[i * 64], v);
    printf("%f", in[i * 32]);
              // ^^^^^^^^^^ warning: uncoalesced load from `in`
    float w = scaled(in[i * 64]);
                  // ^^^^^^^^^^ warning: uncoalesced load from `in`
    out[i] = w;
}
int main() { k<<<64, 256>>>(nullptr, nullptr, 1.0f); }
"#,
        );
    }

    /// A device function's pointer that no call binds to a kernel's pointer (a local
    /// pointer, or no call at all) keeps what it points at an assumption: a hint that
    /// says which.
    #[test]
    fn unbound_pointers_of_device_functions_are_hints() {
        check_messages(
            RULE,
            r#"
__device__ void put(float* p, float v) { p[threadIdx.x * 64] = v; }
__device__ void lone(float* p, float v) { p[threadIdx.x * 64] = v; }
__global__ void k(float* out, int n) {
    float* mine = out + n;
    put(mine, 1.0f);
}
int main() { k<<<64, 256>>>(nullptr, 0); }
"#,
            expect![[r#"
                hint: uncoalesced store to `p`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 256 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the calls of `put` in this file do not show what `p` points at; global memory is assumed) (pitfall-coalescing#P1)
                hint: uncoalesced store to `p`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 256 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: no kernel of this file is seen to call `lone`, so what `p` points at, the block and the arguments are assumed) (pitfall-coalescing#P1)
            "#]],
        );
    }

    /// An access inside a capitalised macro the file does not define (its header is
    /// found only through the build's `-I`) may be a vector load through the element's
    /// address: its width is not known, and the rule stays silent. A lower-case callee
    /// is a function that reads the element by value.
    #[test]
    fn an_access_inside_an_unknown_macro_stays_silent() {
        check_messages(
            RULE,
            r#"
#include "utils_not_here.cuh"
__global__ void sum4(float* x, float* y, int n) {
  int i = (blockDim.x * blockIdx.x + threadIdx.x) * 4;
  if (i < n) {
    float4 t = FLOAT4(x[i]);
    y[i] = t.x + t.y + t.z + t.w + sqrtf(x[i]);
  }
}
void run(float* x, float* y, int n) { sum4<<<(n / 4 + 255) / 256, 256>>>(x, y, n); }
"#,
            expect![[r#"
                warning: uncoalesced store to `y`: each warp request touches 16 sectors of 32 bytes where its 128 bytes need 4 (4.0x the memory traffic), because neighbouring lanes are 16 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
                warning: uncoalesced load from `x`: each warp request touches 16 sectors of 32 bytes where its 128 bytes need 4 (4.0x the memory traffic), because neighbouring lanes are 16 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    /// A vector macro whose body wraps the address in parentheses of its own
    /// (`reinterpret_cast<float4*>((&VALUE))[0]`) loads 16 bytes per lane: the warp's
    /// 512 contiguous bytes are coalesced.
    #[test]
    fn a_vector_macro_with_a_parenthesised_address_is_one_wide_load() {
        check(
            RULE,
            r#"
#define FLOAT4(VALUE) (reinterpret_cast<float4*>((&VALUE))[0])
__global__ void sum4(float* a, float* out) {
    int i = (blockIdx.x * 256 + threadIdx.x) * 4;
    float4 r = FLOAT4(a[i]);
    out[blockIdx.x * 256 + threadIdx.x] = r.x + r.y + r.z + r.w;
}
void run(float* a, float* o) { sum4<<<4, 256>>>(a, o); }
"#,
        );
    }

    /// With no launch fixing the block, sectors that rest on `blockDim.x` are measured
    /// in the block the bank model assumes (256) and the hint says so.
    #[test]
    fn sectors_resting_on_an_unfixed_block_are_a_hint() {
        check_messages(
            RULE,
            r#"
__global__ void gather(const float* in, float* out) {
  int per = 4096 / blockDim.x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = in[threadIdx.x * per];
}
void run(const float* in, float* out, int n) {
  for (int t = 32; t <= 512; t *= 2) gather<<<n / t, t>>>(in, out);
}
"#,
            expect![[r#"
                hint: uncoalesced load from `in`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 64 bytes apart (assuming `blockDim.x` = 256: no launch of `gather` fixes its block, and the figure depends on it); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            "#]],
        );
    }

    /// The strides of a BLAS-style kernel are runtime parameters; every call of the host
    /// function that launches it passes 1 for them.
    const AXPY: &str = r#"
__global__ void axpy_kernel(int N, float A, float *X, int INCX, float *Y, int INCY)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) Y[i*INCY] += A*X[i*INCX];
}

void axpy_gpu(int N, float A, float *X, int INCX, float *Y, int INCY)
{
    axpy_kernel<<<(N + 255) / 256, 256>>>(N, A, X, INCX, Y, INCY);
}

void step(float *x, float *y, int n)
{
    axpy_gpu(n, 0.5f, x, 1, y, 1);
    axpy_gpu(n, -1.f, y, 1, x, 1);
}
"#;

    #[test]
    fn strides_every_caller_of_the_launching_host_function_fixes() {
        // Every call passes 1: the accesses are coalesced.
        check(RULE, AXPY);
        // One call passes a runtime stride: the hint that assumes it stays.
        let unknown = AXPY.replace(
            "axpy_gpu(n, -1.f, y, 1, x, 1);",
            "axpy_gpu(n, -1.f, y, n, x, 1);",
        );
        check_messages(
            RULE,
            &unknown,
            expect![[r#"
                hint: uncoalesced load from `X`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic) (taking `INCX` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the cost rests on `INCX`, which the code does not fix; at `INCX` = 4 it is 16 sectors, 4.0x) (pitfall-coalescing#P1)
            "#]],
        );
        // Calls that agree on another constant: the figure is measured at it, and said.
        let two = AXPY
            .replace(", 1, y, 1);", ", 2, y, 2);")
            .replace(", 1, x, 1);", ", 2, x, 2);");
        check_messages(
            RULE,
            &two,
            expect![[r#"
            hint: uncoalesced update of `Y`: each warp request touches 8 sectors of 32 bytes where its 128 bytes need 4 (2.0x the memory traffic), because neighbouring lanes are 8 bytes apart (with `INCY` = 2, as every launch passes); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
            hint: uncoalesced load from `X`: each warp request touches 8 sectors of 32 bytes where its 128 bytes need 4 (2.0x the memory traffic), because neighbouring lanes are 8 bytes apart (with `INCX` = 2, as every launch passes); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (pitfall-coalescing#P1)
        "#]],
        );
        // A comment before a call (its last word no type before a declaration) and a
        // mention of the function in a comment (no call, no address taken) change
        // nothing.
        let commented = AXPY
            .replace(
                "    axpy_gpu(n, -1.f,",
                "    // the second step runs backwards, stride 1\n    axpy_gpu(n, -1.f,",
            )
            .replace(
                "void step(",
                "// (*f)(axpy_gpu) would hand its address out; axpy_gpu(n, a, x, n, y, n) too\nvoid step(",
            );
        check(RULE, &commented);
        // Two parameters of one name (nvcc rejects the kernel): neither has a value.
        let twice = AXPY
            .replace(
                "int INCX, float *Y, int INCY)\n{\n    int i",
                "int INCY, float *Y, int INCY)\n{\n    int i",
            )
            .replace("X[i*INCX]", "X[i*INCY]");
        assert_eq!(
            crate::rules::testing::messages(RULE, &twice).len(),
            2,
            "{twice}"
        );
        // Its address handed out: calls through it are not seen.
        let escaped =
            format!("{AXPY}\nvoid (*saxpy)(int, float, float *, int, float *, int) = axpy_gpu;\n");
        assert_eq!(
            crate::rules::testing::messages(RULE, &escaped).len(),
            2,
            "{escaped}"
        );
        // A host function that changes the stride before the launch: not what callers pass.
        let written = AXPY.replace(
            "{\n    axpy_kernel",
            "{\n    INCY = INCY < 0 ? -INCY : INCY;\n    axpy_kernel",
        );
        check_messages(
            RULE,
            &written,
            expect![[r#"
                hint: uncoalesced update of `Y`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic) (taking `INCY` to be 64 or more); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the cost rests on `INCY`, which the code does not fix; at `INCY` = 4 it is 16 sectors, 4.0x) (pitfall-coalescing#P1)
            "#]],
        );
    }

    #[test]
    fn strides_passed_on_through_callers_of_callers() {
        // `step` passes its own `inc` on; every call of `step`, directly from `main`
        // and through `twice`, passes 1: coalesced.
        let deep = AXPY
            .replace(
                "void step(float *x, float *y, int n)",
                "void step(float *x, float *y, int n, int inc)",
            )
            .replace("x, 1, y, 1);", "x, inc, y, inc);")
            .replace("y, 1, x, 1);", "y, inc, x, inc);")
            + r#"
void twice(float *x, float *y, int n, int inc) { step(x, y, n, inc); step(y, x, n, inc); }
int main() {
    float *x, *y;
    step(x, y, 1024, 1);
    twice(x, y, 1024, 1);
}
"#;
        check(RULE, &deep);
        // One call three functions above the launch passes a runtime stride: the
        // hint that assumes the stride stays.
        let runtime = deep.replace("twice(x, y, 1024, 1);", "twice(x, y, 1024, n_from_args());");
        assert_eq!(
            crate::rules::testing::messages(RULE, &runtime).len(),
            2,
            "{runtime}"
        );
        // A chain deeper than three host functions is not followed.
        let deeper = deep
            .replace("twice(x, y, 1024, 1);", "four(x, y, 1024, 1);")
            .replace("int main()", "void three(float *x, float *y, int n, int inc) { twice(x, y, n, inc); }\nvoid four(float *x, float *y, int n, int inc) { three(x, y, n, inc); }\nint main()");
        assert_eq!(
            crate::rules::testing::messages(RULE, &deeper).len(),
            2,
            "{deeper}"
        );
        // A function that calls itself with its own parameter: that call adds nothing
        // known, so nothing is fixed.
        let recursive = deep.replace(
            "{ step(x, y, n, inc); step(y, x, n, inc); }",
            "{ step(x, y, n, inc); if (n > 1) twice(y, x, n / 2, inc); }",
        );
        assert_eq!(
            crate::rules::testing::messages(RULE, &recursive).len(),
            2,
            "{recursive}"
        );
    }

    #[test]
    fn a_short_loop_and_its_peeled_element_share_the_sectors() {
        // Each thread owns four consecutive doubles: the unrolled loop reads three, the
        // statement after it the fourth. Together they use every byte of the sectors
        // the first read brings into L1: no strided cost to report. Alone (no peeled
        // element), three of four elements per sector is still reported.
        check(
            RULE,
            r#"
__global__ void smooth(const double* __restrict__ w, double* out) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    double acc = 0.0;
#pragma unroll
    for (int i = 0; i < 3; ++i) acc += w[base + i];
    acc += 0.5 * w[base + 3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
void run(const double* w, double* o) { smooth<<<64, 128>>>(w, o); }
"#,
        );
        check(
            RULE,
            r#"
__global__ void smooth(const double* __restrict__ w, double* out) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    double acc = 0.0;
#pragma unroll
    for (int i = 0; i < 3; ++i) acc += w[base + i];
                                    // ^^^^^^^^^^^ warning: uncoalesced load from `w`
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
void run(const double* w, double* o) { smooth<<<64, 128>>>(w, o); }
"#,
        );
        // Two loads in one loop that walk the two halves of a row of 14 floats per
        // thread: together they read the whole row, 14 elements, a walk L1 serves
        // (measured under 2x the coalesced time up to 16 elements, pitfall-coalescing#P3):
        // hints that say L1 traffic. An element peeled out of a walk's loop
        // (`m = x[r * 10]; for (j = 1; …)`) walks with it too.
        check(
            RULE,
            r#"
__global__ void state(const float* s, float* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float q[7], dq[7];
    for (int j = 0; j < 7; j++) {
        q[j] = s[t * 14 + j];
            // ^^^^^^^^^^^^^ hint: uncoalesced load from `s`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the L1 traffic)
        dq[j] = s[t * 14 + 7 + j];
             // ^^^^^^^^^^^^^^^^^ hint: uncoalesced load from `s`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the L1 traffic)
    }
    out[t] = q[0] + dq[6];
}
void run(const float* s, float* o) { state<<<64, 128>>>(s, o); }
"#,
        );
        check(
            RULE,
            r#"
__global__ void row_max(const float* x, float* out, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float m = x[r * 10];
           // ^^^^^^^^^ hint: uncoalesced load from `x`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the L1 traffic)
    for (int j = 1; j < 10; ++j)
        m = fmaxf(m, x[r * 10 + j]);
                  // ^^^^^^^^^^^^^ hint: uncoalesced load from `x`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the L1 traffic)
    out[r] = m;
}
void run(const float* x, float* o, int rows) { row_max<<<(rows + 255) / 256, 256>>>(x, o, rows); }
"#,
        );
    }

    #[test]
    fn equalities_that_single_out_one_thread_stay_silent() {
        // `x` repeats in the second half of a 16×16 warp and `z` tells its two rows
        // apart: together the equalities let at most one lane of the warp through.
        check(
            RULE,
            r#"
__global__ void inject(float* f, int nz, int sx, int sz, float amp) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int z = (blockIdx.y * blockDim.y + threadIdx.y) % nz;
    if (x == sx && z == sz) f[x * 4096 + z] += amp;
}
void run(float* f, int sx, int sz) { inject<<<dim3(8, 8), dim3(16, 16)>>>(f, 1000, sx, sz, 1.f); }
"#,
        );
    }

    /// `(float4 &)p[i]` reads or writes 16 bytes at `p[i]`'s address: a lane stride of
    /// four floats is then contiguous (one `LDG.E.128` per lane), not a 4-way stride.
    #[test]
    fn a_reference_cast_is_one_vector_access() {
        check(
            RULE,
            r#"
__global__ void scale(float* src, float* dst, float s) {
  int lane = threadIdx.x % 32;
  int row = blockIdx.x * 4 + threadIdx.x / 32;
  float4 v = (float4 &)src[lane * 4 + row * 128];
  v.x *= s;
  (float4 &)dst[lane * 4 + row * 128] = v;
  dst[lane * 4 + row * 128 + 4096] = v.y;
//^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: uncoalesced store to `dst`
}
void run(float* a, float* b, int rows) { scale<<<rows / 4, 128>>>(a, b, 2.0f); }
"#,
        );
    }

    /// A debug dump under `b == dbg && threadIdx.x == 0 && threadIdx.y == 0` runs in one
    /// lane: `b == dbg` is one value for the whole warp (it picks the block, not lanes),
    /// and the thread tests leave lane 0. The loop every thread runs is strided.
    #[test]
    fn a_block_test_beside_a_lane_test_leaves_the_lanes_of_the_lane_test() {
        check(
            RULE,
            r#"
__global__ void tile_sum(const float* blocks, float* out, int dbg) {
    int b = blockIdx.y * gridDim.x + blockIdx.x;
    int base = (b << 10) + (((threadIdx.y << 2) + threadIdx.x) << 6);
    float s = 0.f;
    for (int i = 0; i < 64; ++i) s += blocks[base + i];
                                   // ^^^^^^^^^^^^^^^^ warning: uncoalesced load from `blocks`
    out[b * 16 + threadIdx.y * 4 + threadIdx.x] = s;
    if (b == dbg && threadIdx.x == 0 && threadIdx.y == 0) {
        for (int i = 0; i < 64; ++i) out[i] = blocks[base + i];
    }
}
void run(const float* a, float* o) { tile_sum<<<dim3(64, 64), dim3(4, 4)>>>(a, o, 3); }
"#,
        );
    }

    /// The scalar tail of a `float4` loop (`i = 4 * threadIdx.x`, the `else` of `i + 3 <
    /// n` inside `i < n`) is entered by at most one lane: no warp-wide figure.
    #[test]
    fn the_scalar_tail_of_a_vector_loop_is_one_lane() {
        check(
            RULE,
            r#"
__global__ void scale_rows(const float* in, const float* g, float* out, int n) {
    for (int i = threadIdx.x * 4; i < n; i += blockDim.x * 4) {
        if (i + 3 < n) {
            float4 v = *reinterpret_cast<const float4*>(in + i);
            *reinterpret_cast<float4*>(out + i) = v;
        } else {
            for (int j = i; j < n; ++j) out[j] = in[j] * g[j];
        }
    }
}
void launch(const float* a, const float* g, float* o, int rows) { scale_rows<<<rows, 256>>>(a, g, o, 4096); }
"#,
        );
    }

    /// An `if constexpr` on a value template parameter: nvcc compiles a branch only in
    /// the instantiations that take it. Launched only with `Mode = 1`, the `else`
    /// branch exists in no binary (nothing reported); launched with `Mode = 1` and `Mode
    /// = 2`, both exist.
    #[test]
    fn an_if_constexpr_branch_no_launched_instantiation_takes_is_not_compiled() {
        let kernel = r#"
template <int Mode>
__global__ void gather(const unsigned char* src, float* out, int ld) {
    float v;
    if constexpr (Mode == 1) {
        v = src[blockIdx.x * ld + threadIdx.x];
    } else {
        v = src[threadIdx.x * ld + blockIdx.x];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
"#;
        check(
            RULE,
            &format!("{kernel}void run(const unsigned char* s, float* o) {{ gather<1><<<64, 128>>>(s, o, 1024); }}\n"),
        );
        check(
            RULE,
            &format!(
                "{}{}",
                kernel.replace(
                    "        v = src[threadIdx.x * ld + blockIdx.x];\n",
                    "        v = src[threadIdx.x * ld + blockIdx.x];\n         // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: uncoalesced load from `src`\n"
                ),
                "void run(const unsigned char* s, float* o) { gather<1><<<64, 128>>>(s, o, 1024); gather<2><<<64, 128>>>(s, o, 1024); }\n"
            ),
        );
    }

    #[test]
    fn branches_a_constant_condition_never_takes_are_not_compiled() {
        // `ROW % 4 == 0` holds: nvcc compiles no code for the `else`; so does a
        // `__constant__` row length the host never sets. One the host sets with
        // `cudaMemcpyToSymbol` is a value the code does not fix: a hint.
        check(
            RULE,
            r#"
#define ROW 64
__global__ void rows(short* m, int* out) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    if (ROW % 4 == 0) {
        acc = m[r];
    } else {
        for (int c = 0; c < ROW; ++c) acc += m[r * ROW + c];
    }
    out[r] = acc;
}
void run(short* m, int* o) { rows<<<4, 64>>>(m, o); }
"#,
        );
        check(
            RULE,
            r#"
__constant__ int row_len = 64;
__global__ void rows(short* m, int* out) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    out[r] = m[r * row_len];
          // ^^^^^^^^^^^^^^ hint: uncoalesced load from `m`: each warp request touches 32 sectors of 32 bytes where its 64 bytes need 2 (16.0x the memory traffic) (taking `row_len` to be 64 or more)
}
void run(short* m, int* o, int n) {
    cudaMemcpyToSymbol(row_len, &n, sizeof(int));
    rows<<<4, 64>>>(m, o);
}
"#,
        );
        check(
            RULE,
            r#"
__constant__ int row_len = 64;
__global__ void rows(short* m, int* out) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (row_len % 4 != 0) out[r] = m[r * row_len + 1];
    out[r] = m[r * row_len];
          // ^^^^^^^^^^^^^^ warning: uncoalesced load from `m`: each warp request touches 32 sectors of 32 bytes where its 64 bytes need 2 (16.0x the memory traffic), because neighbouring lanes are 128 bytes apart
}
void run(short* m, int* o) { rows<<<4, 64>>>(m, o); }
"#,
        );
    }
}
