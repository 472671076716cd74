//! `async-copy/l1-access-mode`: an async copy of 4 or 8 bytes where 16-byte copies were
//! possible.
//!
//! Only 16-byte, 16-byte-aligned copies can bypass L1 (`cp.async.cg`); 4- and 8-byte
//! copies are `cp.async.ca`, allocate in L1 and take four or two times the instructions
//! (`pitfall-async-copy#P1`). The rule fires only where it can show that 16-byte copies
//! were possible:
//! - a per-thread copy (`__pipeline_memcpy_async(dst, src, 4)`,
//!   `cuda::memcpy_async(dst, src, sizeof(float), pipe)`) of one `__shared__` element,
//!   where the lanes of a warp write consecutive elements, the warp's first address is a
//!   multiple of 16 bytes, and the global index is the same consecutive run from an offset
//!   the file shows to be a multiple of 16 bytes (`blockIdx.x * 256 + threadIdx.x`);
//! - a collective `cuda::memcpy_async(group, dst, src, size, barrier)` of 4- or 8-byte
//!   elements with a plain size that is a multiple of 16 into a `__shared__` array
//!   declared `__align__(16)` or wider, from an aligned offset: it may only assume the
//!   element's alignment and copies in 4- or 8-byte pieces.
//! - inline PTX `cp.async.ca.shared.global [%0], [%1], 4;` (or 8) whose destination is a
//!   `__shared__` element's address (`__cvta_generic_to_shared(&s[i])`) and whose source
//!   points into a pointer parameter, where the copies of the function into that buffer
//!   fill whole 16-byte chunks of both sides, aligned (lane `i` copying element `i`, or one
//!   thread copying 4 consecutive elements in a loop or an unrolled sequence): one
//!   `cp.async.cg … 16` per chunk was possible (SASS: `LDGSTS.E.BYPASS.128` instead of
//!   four `LDGSTS.E`; see `ptx_copies`). Copies through a file's own macro (`CP_ASYNC_CA`)
//!   are not read.
//!
//! An index with a runtime offset the file does not determine (a kernel parameter, a row
//! times a runtime pitch), a strided per-lane pattern, or a copy already 16 bytes wide
//! stays silent: there 16-byte copies may be impossible. The collective form has a fix,
//! wrapping the size in `cuda::aligned_size_t<16>`; the per-thread form needs the copy loop
//! restructured (a quarter of the threads each moving 16 bytes) and has none.
//!
//! ```cuda
//! // Before: one float per thread.
//! __pipeline_memcpy_async(&tile[tid], &g[base + tid], sizeof(float));
//! // After: a float4 per thread, a quarter of the threads.
//! if (tid < T / 4) __pipeline_memcpy_async(&tile[4 * tid], &g[base + 4 * tid], 16);
//! ```

use kernaut_gpu::expr::{Loops, Uniforms, Valuation, SAMPLES};
use kernaut_syntax::short_name;
use kernaut_syntax::{AccessKind, Axis, CallSite, IndexExpr, SharedAccess};

use super::{is_identifier, Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;
use crate::model::launch_shape;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("l1_access_mode.rs"),
    id: "async-copy/l1-access-mode",
    severity: Severity::Hint,
    wiki: &["pitfall-async-copy#P1"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    // Before sm_80 async copies are synchronous and there is no L1 bypass to lose.
    if ctx.arch_configured && !ctx.arch.at_least(8, 0) {
        return;
    }
    let bodies = ctx.calls_mentioning(&["memcpy_async"]);
    let calls: Vec<&CallSite> = bodies
        .iter()
        .flat_map(|c| c.iter())
        .filter(|c| {
            let last = short_name(&c.callee);
            last == "__pipeline_memcpy_async"
                || (last == "memcpy_async" && c.callee.starts_with("cuda::"))
        })
        .collect();
    ptx_copies(ctx, out);
    if calls.is_empty() {
        return;
    }
    for call in calls {
        let last = short_name(&call.callee);
        let d = if last == "__pipeline_memcpy_async" || call.args.len() == 4 {
            per_thread(ctx, call)
        } else if call.args.len() == 5 {
            collective(ctx, call)
        } else {
            None
        };
        out.extend(d);
    }
}

/// A per-thread copy: `(dst, src, size[, …])`.
fn per_thread(ctx: &RuleContext, call: &CallSite) -> Option<RuleDiagnostic> {
    let size = copy_size(ctx, call.args.get(2)?, call.range.start)?;
    if size != 4 && size != 8 {
        return None;
    }
    let dst_range = call.arg_ranges.first()?.clone();
    // An access inside the argument starts at or before its end.
    let access = ctx
        .shared_accesses_from(dst_range.start..dst_range.end + 1)
        .iter()
        .find(|a| {
            a.kind == AccessKind::AddressOf
                && dst_range.start <= a.range.start
                && a.range.end <= dst_range.end
        })?;
    let elem = i64::try_from(access.element_size?).ok()?;
    if elem != size || access.cast_type.is_some() {
        return None;
    }
    // The lanes of a warp write consecutive elements from a 16-byte-aligned start, and
    // read them from a consecutive run that starts 16-byte-aligned.
    let shape = launch_shape(
        &ctx.scope(),
        ctx.facts
            .function_at(call.range.start)
            .map(|f| f.name.as_str()),
    );
    let dst = &access.byte_offset;
    let dst_rows = dst.mentions(&rows_of_block);
    if !warp_valuations(shape, dst_rows)
        .iter()
        .all(|v| aligned_run(v, dst, 1, size))
    {
        return None;
    }
    let src = global_index(ctx, call, 1)?;
    let vals = warp_valuations(shape, dst_rows || src.mentions(&rows_of_block));
    if !vals.iter().all(|v| aligned_run(v, &src, elem, elem))
        || !strides_keep_alignment(&vals, &src, elem)
    {
        return None;
    }
    let aligned = ctx
        .facts
        .shared_named(&access.array, call.range.start)
        .and_then(|d| d.alignment)
        .is_some_and(|a| a >= 16);
    let message = format!(
        "this async copy moves {size} bytes per thread into consecutive, 16-byte-aligned addresses of `{}`, so it is `cp.async.ca` through L1 with {} times the copy instructions; let a quarter of the threads each copy 16 bytes (`cp.async.cg`, L1 bypass){}",
        access.array,
        16 / size,
        if aligned { "" } else { " and declare the tile `__align__(16)`" }
    );
    Some(RuleDiagnostic {
        rule: RULE.id,
        severity: RULE.severity,
        range: call.range.clone(),
        message,
        wiki: RULE.wiki[0].to_string(),
        fixes: Vec::new(),
    })
}

/// One 4- or 8-byte `cp.async.ca.shared.global` in inline PTX.
struct PtxCopy {
    /// The `asm` statement.
    range: std::ops::Range<usize>,
    /// The bytes copied.
    size: i64,
    /// The shared element whose address the destination operand holds.
    dst: SharedAccess,
    /// The pointer parameter the source operand points into.
    src_base: String,
    /// The source's byte offset from `src_base`.
    src_offset: IndexExpr,
}

/// Inline PTX `cp.async.ca.shared.global [%0], [%1], 4;` copies whose destination is a
/// `__shared__` element (`__cvta_generic_to_shared(&s[i])`, directly or through a local)
/// and whose source is a pointer parameter (`&g[i]`, `g + i`): where the copies of one
/// function into one buffer from one parameter fill whole 16-byte chunks of both, with
/// the same distance between destination and source in each chunk (lane `i` copying
/// element `i`, or one thread copying consecutive elements in a loop or an unrolled
/// sequence), one `cp.async.cg` of 16 bytes per chunk was possible. Checked with nvcc
/// 13.5 (`-arch=sm_90`, `cuobjdump -sass`): four 4-byte `.ca` copies of consecutive
/// floats are four `LDGSTS.E [R5]`, `[R5+0x4]`, `[R5+0x8]`, `[R5+0xc]`; one 16-byte `.cg`
/// copy is one `LDGSTS.E.BYPASS.128 [R5]` (a 16-byte `.ca` is `LDGSTS.E.128`).
fn ptx_copies(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let text = ctx.text();
    if !text.contains("cp.async.ca") {
        return;
    }
    let mut copies: Vec<(String, PtxCopy)> = Vec::new();
    for f in ctx.facts.kernels.iter().chain(&ctx.facts.device_functions) {
        let Some(body) = f.body_range.clone() else {
            continue;
        };
        let Some(body_text) = text.get(body.clone()) else {
            continue;
        };
        if !body_text.contains("cp.async.ca") {
            continue;
        }
        for asm in ctx.file.asm_statements(&body) {
            if let Some(c) = ptx_copy(ctx, &asm) {
                copies.push((f.name.clone(), c));
            }
        }
    }
    for (function, c) in &copies {
        let group: Vec<&PtxCopy> = copies
            .iter()
            .filter(|(f, o)| {
                f == function
                    && o.dst.root == c.dst.root
                    && o.src_base == c.src_base
                    && o.size == c.size
            })
            .map(|(_, o)| o)
            .collect();
        if !fills_chunks(launch_shape(&ctx.scope(), Some(function)), &group) {
            continue;
        }
        let per = 16 / c.size;
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: RULE.severity,
            range: c.range.clone(),
            message: format!(
                "this inline PTX `cp.async.ca` copies {} bytes at a time into consecutive, 16-byte-aligned addresses of `{}` from contiguous, 16-byte-aligned addresses of `{}`, so it goes through L1 with {per} times the copy instructions; one 16-byte `cp.async.cg.shared.global [dst], [src], 16;` per {per} elements bypasses L1 (`.cg` exists only for 16 bytes)",
                c.size, c.dst.array, c.src_base
            ),
            wiki: RULE.wiki[0].to_string(),
            fixes: Vec::new(),
        });
    }
}

/// The `cp.async.ca` copy of an `asm` statement, when it is one the rule can model.
fn ptx_copy(ctx: &RuleContext, asm: &kernaut_syntax::AsmStatement) -> Option<PtxCopy> {
    let text = ctx.text();
    let at = asm.range.start;
    let at_op = asm.template.find("cp.async.ca.shared.global")?;
    let instr = asm.template[at_op..].split(';').next()?;
    let operands_text = instr
        .split_whitespace()
        .skip(1)
        .collect::<Vec<_>>()
        .join(" ");
    let args: Vec<&str> = operands_text.split(',').map(str::trim).collect();
    let operand_index = |a: &str| -> Option<usize> {
        a.trim_start_matches('[')
            .trim_end_matches(']')
            .strip_prefix('%')?
            .parse()
            .ok()
    };
    let (dst_i, src_i) = (operand_index(args.first()?)?, operand_index(args.get(1)?)?);
    let operands = &asm.operands;
    let size_text = args.get(2)?.trim();
    let size = match operand_index(size_text) {
        Some(k) => ctx
            .facts
            .fold_text(text.get(operands.get(k)?.clone())?, at)?,
        None => ctx.facts.fold_text(size_text, at)?,
    };
    if size != 4 && size != 8 {
        return None;
    }
    // The destination: `__cvta_generic_to_shared(&s[i])`, or a local initialised so.
    let dst_range = operands.get(dst_i)?.clone();
    let dst_text = text.get(dst_range.clone())?;
    let value_range = if is_identifier(dst_text) {
        ctx.file.initializer_of(dst_text, dst_range.start)?
    } else {
        dst_range
    };
    let converted = ctx.file.calls_in(value_range.start).iter().any(|c| {
        value_range.start <= c.range.start
            && c.range.end <= value_range.end
            && c.callee_text.ends_with("cvta_generic_to_shared")
    });
    if !converted {
        return None;
    }
    let dst = ctx
        .shared_accesses_from(value_range.clone())
        .iter()
        .find(|a| a.kind == AccessKind::AddressOf && a.range.end <= value_range.end)?
        .clone();
    if dst.cast_type.is_some() || dst.element_size != Some(u64::try_from(size).ok()?) {
        return None;
    }
    let (src_base, src_index) = ctx.file.pointer_operand(operands.get(src_i)?)?;
    let f = ctx.facts.function_at(at)?;
    let param = f
        .params
        .iter()
        .find(|p| p.name == src_base && p.ty.matches('*').count() == 1)?;
    let pointee: String = param
        .ty
        .replace('*', " ")
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "__restrict__" | "__restrict"))
        .collect::<Vec<_>>()
        .join(" ");
    let elem = i64::try_from(kernaut_syntax::type_size(&pointee)?).ok()?;
    if elem != size {
        return None;
    }
    Some(PtxCopy {
        range: asm.range.clone(),
        size,
        dst,
        src_base,
        src_offset: IndexExpr::binary(src_index, kernaut_syntax::BinOp::Mul, IndexExpr::Int(elem)),
    })
}

/// Whether the copies of `group`, for the 32 lanes of warp 0 and the first iterations of
/// a loop around them, fill whole 16-byte chunks of the destination from 16-byte-aligned,
/// contiguous source bytes, under every sample of the values the file does not fix.
fn fills_chunks(shape: [Option<i64>; 3], group: &[&PtxCopy]) -> bool {
    let rows = group.iter().any(|c| {
        c.dst.byte_offset.mentions(&rows_of_block) || c.src_offset.mentions(&rows_of_block)
    });
    for v in warp_valuations(shape, rows) {
        let mut pairs: Vec<(i64, i64, i64)> = Vec::new();
        for c in group {
            let looped = c.dst.byte_offset.has_loop_var() || c.src_offset.has_loop_var();
            let iterations = if looped { 16 / c.size } else { 1 };
            for lane in 0..32 {
                for k in 0..iterations {
                    let at = Valuation {
                        loops: Loops::Iteration(k),
                        ..v
                    };
                    let (Some(d), Some(s)) = (
                        at.lane(&c.dst.byte_offset, lane),
                        at.lane(&c.src_offset, lane),
                    ) else {
                        return false;
                    };
                    pairs.push((d, s, c.size));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        // By 16-byte destination chunk: every element present, one source distance
        // that keeps the source chunk aligned.
        let mut i = 0;
        while i < pairs.len() {
            let chunk = pairs[i].0.div_euclid(16);
            let size = pairs[i].2;
            let j = i + pairs[i..].partition_point(|p| p.0.div_euclid(16) == chunk);
            let part = &pairs[i..j];
            let delta = part[0].1 - part[0].0;
            let full = part.len() as i64 == 16 / size
                && part
                    .iter()
                    .enumerate()
                    .all(|(n, p)| p.0 == chunk * 16 + n as i64 * size && p.1 - p.0 == delta);
            if !full || delta.rem_euclid(16) != 0 {
                return false;
            }
            i = j;
        }
    }
    true
}

/// The bytes of a per-thread copy: a constant size, `cuda::aligned_size_t<A>(n)` with `A`
/// below 16 (which still copies in `A`-byte pieces), or a local holding either.
fn copy_size(ctx: &RuleContext, text: &str, at: usize) -> Option<i64> {
    let t = text.trim();
    if let Some(v) = ctx.facts.fold_text(t, at) {
        return Some(v);
    }
    if let Some(rest) = t
        .strip_prefix("cuda::aligned_size_t<")
        .or_else(|| t.strip_prefix("aligned_size_t<"))
    {
        let close = rest.find(">(")?;
        let align = rest[..close].trim();
        let align = ctx.facts.fold_text(align, at).or(match align {
            "alignof(float)" | "alignof(int)" | "alignof(unsigned)" => Some(4),
            "alignof(float2)" | "alignof(double)" | "alignof(int2)" => Some(8),
            _ => None,
        })?;
        if align >= 16 {
            return None;
        }
        let inner = rest[close + 2..].strip_suffix(')')?;
        return ctx.facts.fold_text(inner, at);
    }
    if !is_identifier(t) {
        return None;
    }
    let init = ctx.file.initializer_of(t, at)?;
    copy_size(ctx, ctx.text().get(init)?, at)
}

/// A collective copy `cuda::memcpy_async(group, dst, src, size, barrier)`.
fn collective(ctx: &RuleContext, call: &CallSite) -> Option<RuleDiagnostic> {
    let size_text = call.args.get(3)?;
    if size_text.contains("aligned_size_t") {
        return None;
    }
    let size = ctx.facts.fold_text(size_text, call.range.start)?;
    if size <= 0 || size % 16 != 0 {
        return None;
    }
    let (array, dst_index) = ctx.file.pointer_operand(call.arg_ranges.get(1)?)?;
    let decl = ctx.facts.shared_named(&array, call.range.start)?;
    let elem = decl.element_size?;
    if elem != 4 && elem != 8 || decl.alignment.is_none_or(|a| a < 16) {
        return None;
    }
    let elem = i64::try_from(elem).ok()?;
    if (dst_index.constant()? * elem) % 16 != 0 {
        return None;
    }
    // The source is the same for every lane (the group copies together) and aligned.
    let src = global_index(ctx, call, 2)?;
    let vals = valuations(ctx, call, src.mentions(&rows_of_block));
    if !vals.iter().all(|v| aligned_run(v, &src, elem, 0))
        || !strides_keep_alignment(&vals, &src, elem)
    {
        return None;
    }
    let size_range = call.arg_ranges.get(3)?.clone();
    let message = format!(
        "`cuda::memcpy_async` with a plain size may only assume the {elem}-byte alignment of `{}`, so it copies in {elem}-byte pieces through L1; the size ({size} bytes) and both offsets are multiples of 16, so pass `cuda::aligned_size_t<16>` and get 16-byte copies that bypass L1",
        decl.element_type
    );
    let fix = Fix {
        safe: false,
        title: "Promise 16-byte alignment with cuda::aligned_size_t<16>".to_string(),
        edits: vec![TextEdit::replace(
            size_range.clone(),
            format!("cuda::aligned_size_t<16>({size_text})"),
        )],
    };
    Some(RuleDiagnostic {
        rule: RULE.id,
        severity: RULE.severity,
        range: size_range,
        message,
        wiki: RULE.wiki[0].to_string(),
        fixes: vec![fix],
    })
}

/// Whether `e` reads the row of a thread in its block (`threadIdx.y` or `.z`).
fn rows_of_block(e: &IndexExpr) -> bool {
    matches!(e, IndexExpr::ThreadIdx(Axis::Y | Axis::Z))
}

/// The warps the rule checks a copy in, by the one warp valuation: every uniform (a
/// parameter, `blockIdx`) at small values that are not all multiples of anything, so
/// that an alignment holds only where the code shows it. The block is the launches'
/// when the file's launches of the kernel agree; otherwise `blockDim.x` is a multiple of
/// 32. Where the index reads the thread's row, warps 0, 1 and 7 (rows of 32 threads
/// where no launch gives the block) are checked too, so each warp's row must start
/// aligned (a padded `[32][33]` tile does not).
fn valuations(ctx: &RuleContext, call: &CallSite, rows: bool) -> Vec<Valuation<'static>> {
    let function = ctx
        .facts
        .function_at(call.range.start)
        .map(|f| f.name.as_str());
    warp_valuations(launch_shape(&ctx.scope(), function), rows)
}

/// [`valuations`] for a kernel launched with `shape` (`None` where not known).
fn warp_valuations(shape: [Option<i64>; 3], rows: bool) -> Vec<Valuation<'static>> {
    let block = match shape {
        [Some(_), Some(_), Some(_)] => shape,
        _ if rows => [None, Some(8), Some(1)],
        _ => [None; 3],
    };
    let warps: &[i64] = if rows { &[0, 1, 7] } else { &[0] };
    // The rows at the first sample of the uniforms, the other samples in warp 0.
    let at = |sample, warp| Valuation {
        block,
        warp,
        sample,
        uniforms: Uniforms::Arbitrary,
        loops: Loops::Iteration(0),
    };
    let mut out: Vec<Valuation<'static>> = warps.iter().map(|&w| at(0, w)).collect();
    out.extend((1..SAMPLES).map(|s| at(s, 0)));
    out
}

/// The element index of argument `arg` of `call` into a pointer parameter of its
/// function (`&g[i]`, `g + i`, `g`), lowered by the syntax layer.
fn global_index(ctx: &RuleContext, call: &CallSite, arg: usize) -> Option<IndexExpr> {
    let (base, index) = ctx.file.pointer_operand(call.arg_ranges.get(arg)?)?;
    let f = ctx.facts.function_at(call.range.start)?;
    f.params
        .iter()
        .find(|p| p.name == base && p.ty.contains('*'))?;
    Some(index)
}

/// Whether `e` (in units of `scale` bytes) is, for the lanes of the warp `v` gives, a
/// run from a 16-byte-aligned start with lane `l` at `l * width` bytes (0: every lane
/// the same).
fn aligned_run(v: &Valuation<'_>, e: &IndexExpr, scale: i64, width: i64) -> bool {
    let Some(values) = v.lanes(e) else {
        return false;
    };
    (values[0] * scale) % 16 == 0
        && values
            .iter()
            .enumerate()
            .all(|(l, x)| (x - values[0]) * scale == l as i64 * width)
}

/// Whether each loop the index `src` steps through moves it by a multiple of 16 bytes
/// (of `elem`-byte elements) for every lane of every warp in `vals`: one step of the
/// loop (a constant, or a step the code computes, such as `i += blockDim.x`), the other
/// loops held. A loop whose step the code does not show keeps the copy silent.
fn strides_keep_alignment(vals: &[Valuation<'_>], src: &IndexExpr, elem: i64) -> bool {
    let mut loops = Vec::new();
    loop_names(src, &mut loops);
    loops.iter().all(|name| {
        let Some(next) = advanced(src, name) else {
            return false;
        };
        vals.iter().all(|v| match (v.lanes(src), v.lanes(&next)) {
            (Some(a), Some(b)) => a.iter().zip(b).all(|(a, b)| ((b - a) * elem) % 16 == 0),
            _ => false,
        })
    })
}

/// The names of the loop variables of `e`, each once.
fn loop_names(e: &IndexExpr, out: &mut Vec<String>) {
    match e {
        IndexExpr::LoopVar { name, start, .. } => {
            if !out.contains(name) {
                out.push(name.clone());
            }
            loop_names(start, out);
        }
        IndexExpr::Binary(a, _, b) => {
            loop_names(a, out);
            loop_names(b, out);
        }
        _ => {}
    }
}

/// `e` one iteration of loop `name` later: the variable at its start plus its step.
fn advanced(e: &IndexExpr, name: &str) -> Option<IndexExpr> {
    Some(match e {
        IndexExpr::LoopVar {
            name: n,
            start,
            step,
            stride,
            ..
        } if n == name => {
            let by = match (step, stride) {
                (Some(s), _) => IndexExpr::Int(*s),
                (None, Some(s)) => (**s).clone(),
                (None, None) => return None,
            };
            IndexExpr::binary((**start).clone(), kernaut_syntax::BinOp::Add, by)
        }
        IndexExpr::Binary(a, op, b) => {
            IndexExpr::binary(advanced(a, name)?, *op, advanced(b, name)?)
        }
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages};

    const RULE: &str = "async-copy/l1-access-mode";

    #[test]
    fn four_byte_copies_of_a_consecutive_tile() {
        let fixture = r#"
#include <cuda_pipeline.h>
#define T 256
__global__ void k(const float* g, float* out) {
    __shared__ float tile[T];
    int tid = threadIdx.x;
    int base = blockIdx.x * T;
    __pipeline_memcpy_async(&tile[tid], &g[base + tid], sizeof(float));
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: this async copy moves 4 bytes per thread
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[base + tid] = tile[tid];
}
"#;
        check(RULE, fixture);
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                hint: this async copy moves 4 bytes per thread into consecutive, 16-byte-aligned addresses of `tile`, so it is `cp.async.ca` through L1 with 4 times the copy instructions; let a quarter of the threads each copy 16 bytes (`cp.async.cg`, L1 bypass) and declare the tile `__align__(16)` (pitfall-async-copy#P1)
            "#]],
        );
    }

    #[test]
    fn copy_loop_with_a_stage_buffer() {
        check(
            RULE,
            r#"
#define T 512
__global__ void k(const float* in, int ntiles) {
    __shared__ float buf[2][T];
    for (int t = 0; t < ntiles; ++t) {
        for (int i = threadIdx.x; i < T; i += blockDim.x)
            cuda::memcpy_async(&buf[t % 2][i], &in[t * T + i], sizeof(float), pipe);
         // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: this async copy moves 4 bytes per thread
    }
}
"#,
        );
    }

    #[test]
    fn element_aligned_size_still_copies_four_bytes() {
        check(
            RULE,
            r#"
template <int BLOCK_SIZE>
__global__ void k(float* C, const float* A) {
    __shared__ float As[32][32];
    const auto shape1 = cuda::aligned_size_t<alignof(float)>(sizeof(float));
    const auto shape4 = cuda::aligned_size_t<alignof(float4)>(sizeof(float4));
    int a = blockIdx.x * 1024;
    cuda::memcpy_async(&As[threadIdx.y][threadIdx.x], &A[a + 32 * threadIdx.y + threadIdx.x], shape1, pipe);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: this async copy moves 4 bytes per thread
    cuda::memcpy_async(&As[threadIdx.y][4 * threadIdx.x], &A[a + 32 * threadIdx.y + 4 * threadIdx.x], shape4, pipe);
}
"#,
        );
    }

    #[test]
    fn unknown_alignment_strided_lanes_and_wide_copies_stay_silent() {
        check(
            RULE,
            r#"
#define T 256
__global__ void k(const float* g, const float* h, int offset, int ld) {
    __shared__ float tile[T];
    __shared__ float col[T];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&tile[tid], &g[offset + tid], sizeof(float));
    __pipeline_memcpy_async(&tile[tid], &g[blockIdx.x * T + tid + 1], sizeof(float));
    __pipeline_memcpy_async(&col[tid], &h[tid * ld], sizeof(float));
    __pipeline_memcpy_async(&tile[2 * tid], &g[2 * tid], sizeof(float));
    __pipeline_memcpy_async(&tile[4 * tid], &g[blockIdx.x * T + 4 * tid], 16);
    __shared__ float padded[32][33];
    __pipeline_memcpy_async(&padded[threadIdx.y][threadIdx.x], &g[32 * threadIdx.y + threadIdx.x], 4);
}
"#,
        );
    }

    #[test]
    fn four_byte_ptx_copies_of_contiguous_elements() {
        // nvcc 13.5, sm_90: the loop's four `.ca` copies are four `LDGSTS.E`
        // (`[R5]` … `[R5+0xc]`); one 16-byte `.cg` is one `LDGSTS.E.BYPASS.128`.
        let fixture = r#"
__global__ void perlane(const float* g) {
    __shared__ __align__(16) float s[256];
    int t = threadIdx.x;
    unsigned a = __cvta_generic_to_shared(&s[t]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(a), "l"(&g[blockIdx.x * 256 + t]));
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: this inline PTX `cp.async.ca` copies 4 bytes
    asm volatile("cp.async.wait_all;");
}
__global__ void perthread(const float* g) {
    __shared__ __align__(16) float s[1024];
    int t = threadIdx.x;
    for (int j = 0; j < 4; ++j) {
        unsigned a = __cvta_generic_to_shared(&s[4 * t + j]);
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" :: "r"(a), "l"(g + 4 * t + j), "n"(4));
     // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: this inline PTX `cp.async.ca` copies 4 bytes
    }
}
__global__ void unrolled(const float* g) {
    __shared__ __align__(16) float s[1024];
    int t = threadIdx.x;
    unsigned a0 = __cvta_generic_to_shared(&s[4 * t + 0]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a0), "l"(g + 4 * t + 0));
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: this inline PTX `cp.async.ca` copies 4 bytes
    unsigned a1 = __cvta_generic_to_shared(&s[4 * t + 1]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a1), "l"(g + 4 * t + 1));
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: this inline PTX `cp.async.ca` copies 4 bytes
    unsigned a2 = __cvta_generic_to_shared(&s[4 * t + 2]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a2), "l"(g + 4 * t + 2));
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: this inline PTX `cp.async.ca` copies 4 bytes
    unsigned a3 = __cvta_generic_to_shared(&s[4 * t + 3]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a3), "l"(g + 4 * t + 3));
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: this inline PTX `cp.async.ca` copies 4 bytes
}
"#;
        check(RULE, fixture);
    }

    #[test]
    fn four_byte_ptx_copies_not_contiguous_or_of_unknown_alignment_stay_silent() {
        // Every other element, a source at an offset the file does not fix, half of
        // each 16-byte chunk only, and a 16-byte `.cg` copy: nothing to merge.
        check(
            RULE,
            r#"
__global__ void k(const float* g, int off) {
    __shared__ __align__(16) float s[1024];
    int t = threadIdx.x;
    unsigned a = __cvta_generic_to_shared(&s[2 * t]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a), "l"(&g[2 * t]));
    unsigned b = __cvta_generic_to_shared(&s[512 + t]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(b), "l"(&g[off + t]));
    for (int j = 0; j < 2; ++j)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"((unsigned)__cvta_generic_to_shared(&s[4 * t + j])), "l"(g + 4 * t + j));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned)__cvta_generic_to_shared(&s[4 * t])), "l"(g + 4 * t));
}
"#,
        );
    }

    #[test]
    fn collective_copy_with_a_plain_size() {
        let fixture = r#"
#include <cooperative_groups.h>
#include <cuda/barrier>
__global__ void k(const float* g) {
    __shared__ __align__(16) float tile[1024];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cooperative_groups::this_thread_block();
    cuda::memcpy_async(block, tile, g + blockIdx.x * 1024, sizeof(float) * 1024, bar);
                                                        // ^^^^^^^^^^^^^^^^^^^^ hint: `cuda::memcpy_async` with a plain size may only assume the 4-byte alignment of `float`
    bar.arrive_and_wait();
}
"#;
        check(RULE, fixture);
        check_fix(
            RULE,
            fixture,
            0,
            expect![[r#"
                // Promise 16-byte alignment with cuda::aligned_size_t<16>
                #include <cooperative_groups.h>
                #include <cuda/barrier>
                __global__ void k(const float* g) {
                    __shared__ __align__(16) float tile[1024];
                    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
                    auto block = cooperative_groups::this_thread_block();
                    cuda::memcpy_async(block, tile, g + blockIdx.x * 1024, cuda::aligned_size_t<16>(sizeof(float) * 1024), bar);
                    bar.arrive_and_wait();
                }
            "#]],
        );
    }

    #[test]
    fn collective_copy_into_an_unaligned_tile_stays_silent() {
        check(
            RULE,
            r#"
__global__ void k(const float* g, int n) {
    __shared__ float tile[1024];
    __shared__ __align__(16) float t2[1024];
    auto block = cooperative_groups::this_thread_block();
    cuda::memcpy_async(block, tile, g + blockIdx.x * 1024, sizeof(float) * 1024, bar);
    cuda::memcpy_async(block, t2, g + n, sizeof(float) * 1024, bar);
    cuda::memcpy_async(block, t2, g, sizeof(float) * 1023, bar);
}
"#,
        );
    }
}
