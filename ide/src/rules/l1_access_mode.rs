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

use kernaut_syntax::short_name;
use kernaut_syntax::{AccessKind, Axis, CallSite, IndexExpr};

use super::{find_word, is_identifier, Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("l1_access_mode.rs"),
    id: "async-copy/l1-access-mode",
    severity: Severity::Hint,
    wiki: &["pitfall-async-copy#P1"],
    run,
};

/// Samples for values that are the same across a warp.
const UNIFORM_SAMPLES: [i64; 3] = [0, 1, 7];

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
    // The lanes of a warp write consecutive elements from a 16-byte-aligned start.
    for sample in UNIFORM_SAMPLES {
        let at = |lane: i64| lane_offset(&access.byte_offset, lane, sample);
        let base = at(0)?;
        if base % 16 != 0 {
            return None;
        }
        for lane in 1..32 {
            if at(lane)? - base != lane * size {
                return None;
            }
        }
    }
    let src = global_index(ctx, call.args.get(1)?, call.range.start)?;
    if src.thread != 1 || (src.multiple * elem) % 16 != 0 {
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
    let f = ctx.facts.function_at(at)?;
    let body = f.body_range.clone()?;
    let scope = ctx.text().get(body.start..at)?;
    let i = scope.rfind(&format!("{t} ="))?;
    let value = statement_value(scope, i + t.len() + 2);
    copy_size(ctx, &value, at)
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
    let dst = call.args.get(1)?;
    let (array, dst_index) = split_pointer(dst)?;
    let decl = ctx.facts.shared_named(&array, call.range.start)?;
    let elem = decl.element_size?;
    if elem != 4 && elem != 8 || decl.alignment.is_none_or(|a| a < 16) {
        return None;
    }
    let elem = i64::try_from(elem).ok()?;
    let dst_offset = match dst_index {
        Some(i) => ctx.facts.fold_text(&i, call.range.start)?,
        None => 0,
    };
    if (dst_offset * elem) % 16 != 0 {
        return None;
    }
    let src = global_index(ctx, call.args.get(2)?, call.range.start)?;
    if src.thread != 0 || (src.multiple * elem) % 16 != 0 {
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

/// The byte offset of `lane` (in warp 0, `threadIdx.x` running over the lanes) with every
/// warp-uniform value set to `sample`.
fn lane_offset(e: &IndexExpr, lane: i64, sample: i64) -> Option<i64> {
    e.eval(&|leaf| leaf_value(leaf, lane, sample))
}

fn leaf_value(e: &IndexExpr, lane: i64, sample: i64) -> Option<i64> {
    match e {
        IndexExpr::ThreadIdx(Axis::X) | IndexExpr::Lane => Some(lane),
        // With `blockDim.x` a multiple of 32 the rows are uniform across a warp, but each
        // warp's row must start aligned too (a padded `[32][33]` tile does not).
        IndexExpr::ThreadIdx(_) => Some(sample),
        IndexExpr::BlockDim(Axis::X) => Some(128),
        IndexExpr::BlockDim(_) => Some(1),
        IndexExpr::Uniform(_) => Some(sample),
        IndexExpr::LoopVar { start, .. } => start.eval(&|l| leaf_value(l, lane, sample)),
        _ => None,
    }
}

/// `&p[i]` → (`p`, `Some(i)`); `p + i` → (`p`, `Some(i)`); `p` → (`p`, `None`).
fn split_pointer(arg: &str) -> Option<(String, Option<String>)> {
    let a = arg.trim();
    if let Some(rest) = a.strip_prefix('&') {
        let rest = rest.trim();
        let open = rest.find('[')?;
        if !rest.ends_with(']') {
            return None;
        }
        let name = rest[..open].trim();
        return is_identifier(name).then(|| {
            (
                name.to_string(),
                Some(rest[open + 1..rest.len() - 1].to_string()),
            )
        });
    }
    if let Some((l, r)) = split_top(a, b'+') {
        return is_identifier(l).then(|| (l.to_string(), Some(r.to_string())));
    }
    is_identifier(a).then(|| (a.to_string(), None))
}

/// A global index as a linear form: `thread` elements per lane plus a remainder known to
/// be a multiple of `multiple` elements (0: exactly zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Linear {
    thread: i64,
    multiple: i64,
}

/// The index of a source pointer argument (`&g[i]`, `g + i`) into a pointer parameter.
fn global_index(ctx: &RuleContext, arg: &str, at: usize) -> Option<Linear> {
    let (base, index) = split_pointer(arg)?;
    let f = ctx.facts.function_at(at)?;
    f.params
        .iter()
        .find(|p| p.name == base && p.ty.contains('*'))?;
    match index {
        Some(i) => linear(ctx, &i, at, 0),
        None => Some(Linear {
            thread: 0,
            multiple: 0,
        }),
    }
}

/// Reads `expr` as a [`Linear`] form; `None` when it is not one (a thread index times a
/// runtime value, a call, a division).
fn linear(ctx: &RuleContext, expr: &str, at: usize, depth: usize) -> Option<Linear> {
    if depth > 6 {
        return None;
    }
    let e = strip_parens(expr.trim());
    if let Some(v) = ctx.facts.fold_text(e, at) {
        return Some(Linear {
            thread: 0,
            multiple: v.abs(),
        });
    }
    if let Some((l, r)) = split_top(e, b'+') {
        let (l, r) = (
            linear(ctx, l, at, depth + 1)?,
            linear(ctx, r, at, depth + 1)?,
        );
        return Some(Linear {
            thread: l.thread + r.thread,
            multiple: gcd(l.multiple, r.multiple),
        });
    }
    if let Some((l, r)) = split_top(e, b'*') {
        let (l, r) = (
            linear(ctx, l, at, depth + 1)?,
            linear(ctx, r, at, depth + 1)?,
        );
        return match (l.thread, r.thread) {
            (0, 0) => Some(Linear {
                thread: 0,
                multiple: l.multiple * r.multiple,
            }),
            (t, 0)
                if ctx
                    .facts
                    .fold_text(strip_parens(split_top(e, b'*')?.1), at)
                    .is_some() =>
            {
                Some(Linear {
                    thread: t * r.multiple,
                    multiple: l.multiple * r.multiple,
                })
            }
            (0, t)
                if ctx
                    .facts
                    .fold_text(strip_parens(split_top(e, b'*')?.0), at)
                    .is_some() =>
            {
                Some(Linear {
                    thread: t * l.multiple,
                    multiple: l.multiple * r.multiple,
                })
            }
            _ => None,
        };
    }
    match e {
        "threadIdx.x" => {
            return Some(Linear {
                thread: 1,
                multiple: 0,
            })
        }
        "blockDim.x" | "blockDim.y" | "blockDim.z" => {
            // Block sizes are multiples of the warp size in practice.
            return Some(Linear {
                thread: 0,
                multiple: 32,
            });
        }
        // The rows of a 2-D block are uniform across a warp when `blockDim.x` is a multiple
        // of 32, as the lane check of the destination assumes.
        "threadIdx.y" | "threadIdx.z" | "blockIdx.x" | "blockIdx.y" | "blockIdx.z"
        | "gridDim.x" | "gridDim.y" | "gridDim.z" => {
            return Some(Linear {
                thread: 0,
                multiple: 1,
            })
        }
        _ => {}
    }
    if !is_identifier(e) {
        return None;
    }
    let f = ctx.facts.function_at(at)?;
    if f.params.iter().any(|p| p.name == e) {
        // A runtime value: its alignment is unknown.
        return Some(Linear {
            thread: 0,
            multiple: 1,
        });
    }
    definition(ctx, e, f.body_range.clone()?.start, at, depth)
}

/// A local as a [`Linear`] form: its single definition `name = value;` before `at`, or,
/// for a loop variable (`for (int i = threadIdx.x; …; i += blockDim.x)`), its start plus
/// any multiple of its step.
fn definition(
    ctx: &RuleContext,
    name: &str,
    body_start: usize,
    at: usize,
    depth: usize,
) -> Option<Linear> {
    let text = ctx.text();
    let end = ctx
        .facts
        .function_at(at)
        .map_or(text.len(), |f| f.range.end);
    let scope = &text[body_start..end];
    let mut value = None;
    let mut step = None;
    let mut count = 0;
    let mut from = 0;
    while let Some(i) = find_word(scope, name, from) {
        from = i + name.len();
        let after = scope[from..].trim_start();
        let before = scope[..i].trim_end();
        let rest_at = from + (scope[from..].len() - after.len());
        if after.starts_with('=') && !after.starts_with("==") {
            count += 1;
            if body_start + i < at {
                value = Some(statement_value(scope, rest_at + 1));
            }
        } else if let Some(rest) = after.strip_prefix("+=") {
            count += 1;
            step = Some(statement_value(rest, 0));
        } else if after.starts_with("++") || before.ends_with("++") {
            count += 1;
            step = Some("1".to_string());
        } else if ["-=", "*=", "/=", "--", "<<=", ">>=", "%=", "&=", "|="]
            .iter()
            .any(|op| after.starts_with(op))
            || before.ends_with("--")
        {
            return None;
        }
    }
    let start = linear(ctx, &value?, at, depth + 1)?;
    match (count, step) {
        (1, None) => Some(start),
        (2, Some(step)) => {
            let step = linear(ctx, &step, at, depth + 1)?;
            (step.thread == 0).then_some(Linear {
                thread: start.thread,
                multiple: gcd(start.multiple, step.multiple),
            })
        }
        _ => None,
    }
}

/// The expression from `from` in `s` to the next `;`, `,` or unmatched `)`.
fn statement_value(s: &str, from: usize) -> String {
    let mut depth = 0i32;
    for (i, b) in s.bytes().enumerate().skip(from) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => {
                depth -= 1;
                if depth < 0 {
                    return s[from..i].trim().to_string();
                }
            }
            b';' | b',' if depth == 0 => return s[from..i].trim().to_string(),
            _ => {}
        }
    }
    s[from..].trim().to_string()
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn strip_parens(s: &str) -> &str {
    let mut s = s.trim();
    while s.starts_with('(') && s.ends_with(')') && closes_at_end(s) {
        s = s[1..s.len() - 1].trim();
    }
    s
}

/// Whether the `(` at the start of `s` closes at its end.
fn closes_at_end(s: &str) -> bool {
    let mut depth = 0i32;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return i == s.len() - 1;
                }
            }
            _ => {}
        }
    }
    false
}

/// `l op r` split at the last top-level `op` (`+` also stops at a binary `-`, which makes
/// the split fail so the expression is not read as a sum).
fn split_top(s: &str, op: u8) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    let mut last = None;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'-' if op == b'+' && depth == 0 && i > 0 => return None,
            b'/' | b'%' | b'<' | b'>' | b'&' | b'|' | b'^' | b'?' if depth == 0 => return None,
            b if b == op && depth == 0 => last = Some(i),
            _ => {}
        }
    }
    let i = last?;
    Some((s[..i].trim(), s[i + 1..].trim()))
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
