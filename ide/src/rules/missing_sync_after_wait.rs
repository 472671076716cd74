//! `async-copy/missing-sync-after-wait`: threads read a shared buffer that other threads
//! copied asynchronously, after a wait but with no block barrier between.
//!
//! `__pipeline_wait_prior`, `cp.async.wait_group`, `cp.async.wait_all` and the
//! `thread_scope_thread` pipeline waits make the calling thread's own copies visible to
//! that thread only. When a subset of the threads copies (the copy sits in a branch on the
//! thread index), or a thread reads an element another thread copied (the read index
//! differs from the copy's), the read needs a `__syncthreads()` after the wait. Waits
//! that synchronise the block (`cooperative_groups::wait`, block-scoped pipelines) and
//! reads that a barrier (or `__syncwarp()`) already precedes stay silent.
//!
//! The fix inserts `__syncthreads();` after the wait, unless the wait itself sits in a
//! thread-dependent branch (a barrier there would deadlock).
//!
//! ```cuda
//! // Before
//! if (tid < T / 4) __pipeline_memcpy_async(&tile[4 * tid], &g[4 * tid], 16);
//! __pipeline_commit();
//! __pipeline_wait_prior(0);
//! float v = tile[tid];
//! // After
//! __pipeline_wait_prior(0);
//! __syncthreads();
//! float v = tile[tid];
//! ```

use kernaut_gpu::expr::{Uniforms, Valuation, SAMPLES};
use kernaut_syntax::{AccessKind, CallSite, SharedAccess, SymbolKind, TextRange};

use super::async_ops::{base_name, Op, OpKind};
use super::{
    indent_at, statement_end, thread_dependent_branch, Fix, LineIndex, Rule, RuleContext,
    RuleDiagnostic, TextEdit,
};
use crate::config::Severity;
use crate::model::launch_shape;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("missing_sync_after_wait.rs"),
    id: "async-copy/missing-sync-after-wait",
    severity: Severity::Warning,
    wiki: &[
        "pitfall-async-copy#P4",
        "skill-optimize-shared-memory-tiling#correctness-requirements",
    ],
    run,
};

/// The shared array a copy writes to, and the index it writes, from its first argument.
fn destination(arg: &str) -> Option<(String, String)> {
    let mut s = arg.trim();
    loop {
        let before = s;
        s = s.trim_start_matches('&').trim();
        if let Some(rest) = s.strip_prefix('(') {
            // A cast `(T*)x` or parentheses.
            if let Some(close) = rest.find(')') {
                let inner = &rest[..close];
                if inner.contains('*')
                    || inner
                        .trim()
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
                {
                    s = rest[close + 1..].trim();
                }
            }
        }
        if before == s {
            break;
        }
    }
    let name: String = s
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        return None;
    }
    let rest = s[name.len()..].trim();
    let index = rest
        .strip_prefix('[')
        .map(|r| r.trim_end_matches(')').trim_end_matches(']').to_string())
        .or_else(|| rest.strip_prefix('+').map(|r| r.trim().to_string()))
        .unwrap_or_default();
    Some((name, squash(&index)))
}

/// The shared array and index a PTX `cp.async` writes: its destination operand `[%N]` is
/// bound to an `"r"(…)` input of the `asm` statement, either `__cvta_generic_to_shared(&a[i])`
/// itself or a local variable initialised with it.
fn ptx_destination(
    ctx: &RuleContext,
    body: &TextRange,
    call: &CallSite,
) -> Option<(String, String)> {
    let text = ctx.text();
    let rest = text.get(call.range.end..body.end)?;
    let end = rest.find(");")?;
    let operands = &rest[..end];
    let first = operands.find("\"r\"(")?;
    let expr = &operands[first + 4..];
    let expr = &expr[..expr.find("),").or_else(|| expr.find(')'))?];
    let source = if expr.contains('&') {
        expr.to_string()
    } else {
        // A local: `unsigned dst = (unsigned)__cvta_generic_to_shared(&a[i]);`.
        let name: String = expr
            .trim()
            .trim_start_matches(|c: char| !c.is_alphanumeric() && c != '_')
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            return None;
        }
        let before = text.get(body.start..call.range.start)?;
        let at = before.rfind(&format!("{name} ="))?;
        let init = &before[at..];
        init[..init.find(';')?].to_string()
    };
    let amp = source.find('&')?;
    destination(&source[amp..])
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// An index written without spaces, in an order that does not depend on how the sums and
/// products in it were written: `c + d * i` and `c + i * d` are the same index. Terms of a
/// sum (with their signs) and factors of a product are sorted, at every depth of
/// parentheses.
fn canonical(index: &str) -> String {
    /// Splits `s` at the top-level operators `ops`, each part keeping the operator before
    /// it (the first part gets `first`).
    fn split<'s>(s: &'s str, ops: &[u8], first: u8) -> Vec<(u8, &'s str)> {
        let (mut depth, mut start, mut op) = (0i32, 0usize, first);
        let mut parts = Vec::new();
        let b = s.as_bytes();
        for (i, &c) in b.iter().enumerate() {
            match c {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                // A sign right after an operator or at the start is unary, not a split.
                _ if depth == 0
                    && ops.contains(&c)
                    && i > start
                    && !matches!(
                        b[i - 1],
                        b'*' | b'/' | b'%' | b'+' | b'-' | b'(' | b'<' | b'>'
                    ) =>
                {
                    parts.push((op, &s[start..i]));
                    op = c;
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push((op, &s[start..]));
        parts
    }
    fn factor(f: &str) -> String {
        match f.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            Some(inner) if balanced(inner) => format!("({})", canonical(inner)),
            _ => f.to_string(),
        }
    }
    fn balanced(s: &str) -> bool {
        let mut depth = 0i32;
        for c in s.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return false;
            }
        }
        depth == 0
    }
    let s = squash(index);
    let mut terms: Vec<String> = split(&s, b"+-", b'+')
        .into_iter()
        .map(|(sign, term)| {
            let (sign, term) = match term.strip_prefix('-') {
                Some(t) => (if sign == b'-' { b'+' } else { b'-' }, t),
                None => (sign, term),
            };
            // Only a pure product is reordered; `/` and `%` keep their order.
            let factors = split(term, b"*", b'*');
            let mut fs: Vec<String> = if term.contains(['/', '%']) {
                vec![factor(term)]
            } else {
                factors.into_iter().map(|(_, f)| factor(f)).collect()
            };
            fs.sort();
            format!("{}{}", sign as char, fs.join("*"))
        })
        .collect();
    terms.sort();
    terms.concat()
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let accesses = ctx.shared_accesses();
    if accesses.is_empty() {
        return;
    }
    let text = ctx.text();
    let block_pipeline = text.contains("thread_scope_block");
    let lines = LineIndex::new(text);
    for (body, ops) in ctx.async_functions().iter() {
        if !ops.iter().any(|o| o.kind == OpKind::Copy) {
            continue;
        }
        let copies: Vec<(&Op, String, String, bool)> = ops
            .iter()
            .filter(|o| o.kind == OpKind::Copy)
            .filter_map(|o| {
                let (array, index) = if o.call.kind == SymbolKind::Ptx {
                    ptx_destination(ctx, body, &o.call)?
                } else {
                    destination(o.call.args.first()?)?
                };
                let root = ctx
                    .facts
                    .carves
                    .iter()
                    .find(|c| c.name == array)
                    .map_or(array.clone(), |c| c.root.clone());
                ctx.facts.shared_named(&root, o.call.range.start)?;
                let subset = thread_dependent_branch(ctx, o.call.range.start).is_some();
                Some((o, array, index, subset))
            })
            .collect();
        if copies.is_empty() {
            continue;
        }
        for w in ops {
            let OpKind::Wait { syncs_block, .. } = &w.kind else {
                continue;
            };
            let name = base_name(&w.call.callee);
            if *syncs_block || (block_pipeline && name.contains("consumer_wait")) {
                continue;
            }
            let start = w.call.range.end;
            let next_barrier = ops
                .iter()
                .filter(|o| {
                    matches!(o.kind, OpKind::Barrier | OpKind::WarpBarrier) || is_wait_after(o, w)
                })
                .map(|o| o.call.range.start)
                .find(|&s| s >= start)
                .unwrap_or(body.end);
            let read = ctx
                .shared_accesses_from(start..next_barrier)
                .iter()
                .find(|a| {
                    a.range.start >= start
                        && a.range.start < next_barrier
                        && matches!(a.kind, AccessKind::Load | AccessKind::LoadStore)
                        && reads_others_copy(ctx, &copies, w, a)
                });
            let Some(read) = read else {
                continue;
            };
            let written: String = text[w.call.range.clone()]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let written = written.trim_end_matches(';');
            let mut fixes = Vec::new();
            if thread_dependent_branch(ctx, w.call.range.start).is_none() {
                let at = statement_end(text, w.call.range.end, w.call.kind == SymbolKind::Ptx);
                let indent = indent_at(text, w.call.range.start);
                fixes.push(Fix {
                    safe: false,
                    title: "Insert `__syncthreads()` after the wait".into(),
                    edits: vec![TextEdit::insert(at, format!("\n{indent}__syncthreads();"))],
                });
            }
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity: RULE.severity,
                range: w.call.range.clone(),
                message: format!(
                    "`{written}` makes only this thread's own copies visible, yet line {} reads `{}` that other threads copied with no `__syncthreads()` between: a race",
                    lines.line(read.range.start) as usize + 1,
                    read.array
                ),
                wiki: RULE.wiki[0].to_string(),
                fixes,
            });
        }
    }
}

/// Whether read `a` after wait `w` may read bytes another thread copied: some copy
/// before the wait writes its array, and no such copy is this thread's own for the read
/// (the same index, or every lane's read inside its own copy's bytes). A copy made by a
/// subset of the threads is the reader's own only when the read sits under the same
/// condition.
fn reads_others_copy(
    ctx: &RuleContext,
    copies: &[(&Op, String, String, bool)],
    w: &Op,
    a: &SharedAccess,
) -> bool {
    let index = squash(&a.index_texts.join("]["));
    let mut relevant = copies.iter().filter(|(c, array, ..)| {
        c.call.range.end <= w.call.range.start && (a.array == *array || a.root == *array)
    });
    let Some(first) = relevant.next() else {
        return false;
    };
    let same_index = |copied: &str| !index.is_empty() && canonical(&index) == canonical(copied);
    let own = |(c, _, copied, subset): &(&Op, String, String, bool)| {
        // The same index, one that names the thread: the slot only this thread copies
        // into, whichever guards the copy and the read sit under (a thread that skipped
        // its copy reads its own stale slot, which no other thread writes).
        (same_index(copied) && names_the_thread(ctx, a))
            || ((!*subset || same_guard(ctx, c, a))
                && (same_index(copied)
                    || reads_own_copy(ctx, c, a)
                    || inside_own_copy(ctx, c, copied, &index, a)))
    };
    !(own(first) || relevant.any(own))
}

/// Whether the access's index names the thread: through its lowering, or, where that is
/// unknown (a template parameter in it), through the locals its text names.
fn names_the_thread(ctx: &RuleContext, a: &SharedAccess) -> bool {
    if a.byte_offset.depends_on_thread() {
        return true;
    }
    let Some(steps) = ctx.file.body_steps(a.range.start) else {
        return false;
    };
    let locals: rustc_hash::FxHashMap<&str, Option<&str>> = steps
        .locals
        .iter()
        .map(|(n, i)| (n.as_str(), i.as_deref()))
        .collect();
    a.index_texts
        .iter()
        .any(|t| crate::races::names_thread(t, &locals, 0))
}

/// Whether the read index `index` is the copy's own index `copied` plus a constant that
/// keeps the read inside the copy's bytes: `smem + 4 * tid` copied with 16 bytes, read as
/// `smem[4 * tid + 3]` (a destination written as pointer arithmetic has no access of its
/// own to compare lane addresses with).
fn inside_own_copy(ctx: &RuleContext, c: &Op, copied: &str, index: &str, a: &SharedAccess) -> bool {
    if copied.is_empty() {
        return false;
    }
    let Some(rest) = index.strip_prefix(copied) else {
        return false;
    };
    let Some(k) = rest
        .strip_prefix('+')
        .and_then(|k| k.parse::<i64>().ok())
        .filter(|k| *k >= 0)
    else {
        return false;
    };
    let (Some(elem), Some(width)) = (a.element_size, a.width) else {
        return false;
    };
    let Some(size) = copy_size(ctx, c) else {
        return false;
    };
    let (Ok(elem), Ok(width)) = (i64::try_from(elem), i64::try_from(width)) else {
        return false;
    };
    k * elem + width <= size
}

/// The bytes copy `c` moves: its third argument folded, or the `N` of
/// `cuda::aligned_size_t<N>(…)`.
fn copy_size(ctx: &RuleContext, c: &Op) -> Option<i64> {
    let arg = squash(c.call.args.get(2)?);
    if let Some(v) = ctx.facts.fold_text(&arg, c.call.range.start) {
        return Some(v);
    }
    let inner = arg.split("aligned_size_t<").nth(1)?;
    ctx.facts
        .fold_text(&inner[..inner.find('>')?], c.call.range.start)
}

/// Whether read `a` sits under the thread-dependent condition that guards copy `c`: in
/// the same branch, or in one with the same condition.
fn same_guard(ctx: &RuleContext, c: &Op, a: &SharedAccess) -> bool {
    let (Some((copy_range, copy_cond)), Some((read_range, read_cond))) = (
        thread_dependent_branch(ctx, c.call.range.start),
        thread_dependent_branch(ctx, a.range.start),
    ) else {
        return false;
    };
    copy_range == read_range || squash(&copy_cond) == squash(&read_cond)
}

/// Whether every lane of warp 0 reads bytes that its own copy wrote: the read's byte
/// offset falls inside `[copy offset, copy offset + size)` for each lane (indices lowered
/// by the syntax crate, the copy's size folded; `threadIdx.x` taken to run over the
/// lanes). `false` when either side cannot be evaluated.
fn reads_own_copy(ctx: &RuleContext, copy: &Op, read: &SharedAccess) -> bool {
    let Some(dst) = copy.call.arg_ranges.first() else {
        return false;
    };
    let Some(target) = ctx
        .shared_accesses_from(dst.clone())
        .iter()
        .find(|a| a.kind == AccessKind::AddressOf && dst.contains(&a.range.start))
    else {
        return false;
    };
    let width = read.width.unwrap_or(0) as i64;
    let size = copy
        .call
        .args
        .get(2)
        .and_then(|s| ctx.facts.fold_text(s, copy.call.range.start))
        .unwrap_or(width);
    // Warp 0 by the one warp valuation, under each sample of what the file does not fix.
    let shape = launch_shape(&ctx.scope(), read.function.as_deref());
    (0..SAMPLES).all(|sample| {
        let v = Valuation {
            sample,
            uniforms: Uniforms::Arbitrary,
            ..Valuation::warp0(shape)
        };
        (0..32).all(|lane| {
            match (
                v.lane(&target.byte_offset, lane),
                v.lane(&read.byte_offset, lane),
            ) {
                (Some(c), Some(r)) => r >= c && r + width <= c + size.max(width),
                _ => false,
            }
        })
    })
}

/// Whether `o` is a later wait than `w` (its own diagnostic covers the reads after it).
fn is_wait_after(o: &Op, w: &Op) -> bool {
    matches!(o.kind, OpKind::Wait { .. }) && o.call.range.start > w.call.range.start
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages, check_no_fix};

    const RULE: &str = "async-copy/missing-sync-after-wait";

    const SUBSET: &str = r#"
__global__ void k(const float* g, float* out) {
    __shared__ __align__(16) float tile[256];
    int tid = threadIdx.x;
    if (tid < 64)
        __pipeline_memcpy_async(&tile[4 * tid], &g[4 * tid], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[tid] = tile[tid];
}
"#;

    #[test]
    fn subset_copies_then_reads() {
        check(
            RULE,
            r#"
__global__ void k(const float* g, float* out) {
    __shared__ __align__(16) float tile[256];
    int tid = threadIdx.x;
    if (tid < 64)
        __pipeline_memcpy_async(&tile[4 * tid], &g[4 * tid], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
 // ^^^^^^^^^^^^^^^^^^^^^^^^ warning: `__pipeline_wait_prior(0)` makes only this thread's own copies visible
    out[tid] = tile[tid];
}
"#,
        );
        check_messages(
            RULE,
            SUBSET,
            expect![[r#"
                warning: `__pipeline_wait_prior(0)` makes only this thread's own copies visible, yet line 8 reads `tile` that other threads copied with no `__syncthreads()` between: a race (pitfall-async-copy#P4)
            "#]],
        );
    }

    #[test]
    fn barrier_after_the_wait_or_own_element_stays_silent() {
        check(
            RULE,
            r#"
__global__ void synced(const float* g, float* out) {
    __shared__ float tile[256];
    int tid = threadIdx.x;
    if (tid < 64)
        __pipeline_memcpy_async(&tile[4 * tid], &g[4 * tid], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[tid] = tile[tid];
}
__global__ void own(const float* g, float* out) {
    __shared__ float tile[256];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&tile[tid], &g[tid], 4);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[tid] = tile[tid] * 2.0f;
}
__global__ void own_vector(const float* g, float* out) {
    __shared__ __align__(16) float tile[1024];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&tile[4 * tid], &g[4 * tid], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[tid] = tile[4 * tid + 3];
}
"#,
        );
    }

    #[test]
    fn own_element_pipelines_stay_silent() {
        // Each thread reads back exactly what one of its own copies wrote: under the same
        // guard, or from the second of its two copies.
        check(
            RULE,
            r#"
__global__ void guarded(const float* g, float* out) {
    __shared__ __align__(16) float tile[256];
    int tid = threadIdx.x;
    if (tid < 64)
        __pipeline_memcpy_async(&tile[4 * tid], &g[4 * tid], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    if (tid < 64)
        out[tid] = tile[4 * tid + 2];
}
__global__ void two_copies(const float* g, float* out) {
    __shared__ float tile[512];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&tile[tid], &g[tid], 4);
    __pipeline_memcpy_async(&tile[tid + 256], &g[tid + 256], 4);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[tid] = tile[256 + tid];
}
template <int THREADS>
__global__ void commuted(const int4* g, int4* out, int n) {
    extern __shared__ int4 sh[];
    constexpr int delta = THREADS;
    int wr = threadIdx.x;
    for (int i = 0; i < n; i++)
        __pipeline_memcpy_async(&sh[wr + delta * i], &g[wr + delta * i], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    for (int i = 0; i < n; i++)
        out[i] = sh[wr + i * delta];
}
template <int THREADS>
__global__ void guarded_differently(const int4* g, int4* out, int n, int m) {
    extern __shared__ int4 sh[];
    int wr = threadIdx.x;
    int row = threadIdx.x / 4;
    if (threadIdx.x < THREADS) {
        for (int i = 0; i < n; i++)
            __pipeline_memcpy_async(&sh[wr + THREADS * i], &g[wr + THREADS * i], 16);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        for (int i = 0; i < n; i++)
            if (8 * i + row < m) out[i] = sh[wr + i * THREADS];
    }
}
"#,
        );
    }

    #[test]
    fn canonical_indices() {
        assert_eq!(super::canonical("c + d * i"), super::canonical("c+i*d"));
        assert_eq!(
            super::canonical("(a + b) * 2 - k"),
            super::canonical("-k + 2*(b+a)")
        );
        assert_ne!(super::canonical("a - b"), super::canonical("b - a"));
        assert_ne!(super::canonical("a / b"), super::canonical("b / a"));
        assert_ne!(super::canonical("i % 4 * 8"), super::canonical("8 * 4 % i"));
    }

    #[test]
    fn own_bytes_of_a_pointer_destination_stay_silent() {
        // The destination is pointer arithmetic; the read stays inside the 16 bytes this
        // thread copied. Reading past them (`+ 4`) is another thread's element.
        check(
            RULE,
            r#"
#include <cuda/pipeline>
__global__ void own(const float* g, float* out) {
    __shared__ __align__(16) float tile[1024];
    int tid = threadIdx.x;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(tile + 4 * tid, g + 4 * tid, cuda::aligned_size_t<16>(16), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    out[tid] = tile[4 * tid + 3];
    pipe.consumer_release();
}
__global__ void other(const float* g, float* out) {
    __shared__ __align__(16) float tile[1024];
    int tid = threadIdx.x;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(tile + 4 * tid, g + 4 * tid, cuda::aligned_size_t<16>(16), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
 // ^^^^^^^^^^^^^^^^^^^^ warning: `pipe.consumer_wait()` makes only this thread's own copies visible
    out[tid] = tile[4 * tid + 4];
    pipe.consumer_release();
}
"#,
        );
    }

    #[test]
    fn a_neighbours_element_still_needs_the_barrier() {
        check(
            RULE,
            r#"
__global__ void guarded(const float* g, float* out) {
    __shared__ __align__(16) float tile[256];
    int tid = threadIdx.x;
    if (tid < 64)
        __pipeline_memcpy_async(&tile[4 * tid], &g[4 * tid], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
 // ^^^^^^^^^^^^^^^^^^^^^^^^ warning: `__pipeline_wait_prior(0)` makes only this thread's own copies visible
    if (tid < 64)
        out[tid] = tile[4 * tid + 4];
}
__global__ void two_copies(const float* g, float* out) {
    __shared__ float tile[512];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&tile[tid], &g[tid], 4);
    __pipeline_memcpy_async(&tile[tid + 256], &g[tid + 256], 4);
    __pipeline_commit();
    __pipeline_wait_prior(0);
 // ^^^^^^^^^^^^^^^^^^^^^^^^ warning: `__pipeline_wait_prior(0)` makes only this thread's own copies visible
    out[tid] = tile[257 + tid];
}
"#,
        );
    }

    #[test]
    fn fix_inserts_the_barrier() {
        check_fix(
            RULE,
            SUBSET,
            0,
            expect![[r#"
                // Insert `__syncthreads()` after the wait
                __global__ void k(const float* g, float* out) {
                    __shared__ __align__(16) float tile[256];
                    int tid = threadIdx.x;
                    if (tid < 64)
                        __pipeline_memcpy_async(&tile[4 * tid], &g[4 * tid], 16);
                    __pipeline_commit();
                    __pipeline_wait_prior(0);
                    __syncthreads();
                    out[tid] = tile[tid];
                }
            "#]],
        );
    }

    #[test]
    fn fix_after_a_ptx_wait() {
        check_fix(
            RULE,
            r#"
__global__ void k(const float* g, float* out) {
    __shared__ float tile[256];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&tile[tid], &g[tid], 4);
    __pipeline_commit();
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    out[tid] = tile[255 - tid];
}
"#,
            0,
            expect![[r#"
                // Insert `__syncthreads()` after the wait
                __global__ void k(const float* g, float* out) {
                    __shared__ float tile[256];
                    int tid = threadIdx.x;
                    __pipeline_memcpy_async(&tile[tid], &g[tid], 4);
                    __pipeline_commit();
                    asm volatile("cp.async.wait_all;\n" ::: "memory");
                    __syncthreads();
                    out[tid] = tile[255 - tid];
                }
            "#]],
        );
    }

    #[test]
    fn ptx_copies_through_an_address_variable() {
        check(
            RULE,
            r#"
__global__ void k(const float* g, float* out) {
    __shared__ __align__(16) float tile[256];
    int tid = threadIdx.x;
    if (tid < 64) {
        unsigned dst = (unsigned)__cvta_generic_to_shared(&tile[4 * tid]);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(g + 4 * tid));
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
               // ^^^^^^^^^^^^^^^^^^^^^^ warning: `cp.async.wait_group 0` makes only
    out[tid] = tile[tid];
}
"#,
        );
    }

    #[test]
    fn no_fix_inside_a_divergent_branch() {
        check_no_fix(
            RULE,
            r#"
__global__ void k(const float* g, float* out) {
    __shared__ float tile[256];
    int tid = threadIdx.x;
    if (tid < 100) {
        __pipeline_memcpy_async(&tile[tid], &g[tid], 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        out[tid] = tile[tid + 1];
    }
}
"#,
        );
    }
}
