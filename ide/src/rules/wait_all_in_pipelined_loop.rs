//! `async-copy/wait-all-in-pipelined-loop`: a wait for zero pending groups inside a loop,
//! after the group for a later tile was committed in the same iteration.
//!
//! A pipelined loop has a prologue that commits the first tile(s) before the loop, and in
//! each iteration commits the copy of a later tile. Waiting for zero pending groups after
//! that commit drains the prefetch as well: copy and compute no longer overlap. The wait
//! must leave `stages - 1` groups pending (1 for double buffering). A `wait 0` placed before
//! the next copy is issued is the correct two-stage form and stays silent, as does a loop
//! without a prologue (it loads and consumes one tile per iteration, nothing to overlap).
//!
//! The fix writes `stages - 1` when the prologue's commits can be counted.
//!
//! ```cuda
//! // Before
//! load_tile(0); __pipeline_commit();
//! for (int t = 0; t < n; ++t) {
//!     load_tile(t + 1); __pipeline_commit();
//!     __pipeline_wait_prior(0);
//!     __syncthreads(); compute(t); __syncthreads();
//! }
//! // After
//!     __pipeline_wait_prior(1);
//! ```

use kernaut_syntax::short_name;
use kernaut_syntax::{EnclosingKind, SymbolKind, TextRange};

use super::async_ops::{Op, OpKind};
use super::{Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("wait_all_in_pipelined_loop.rs"),
    id: "async-copy/wait-all-in-pipelined-loop",
    severity: Severity::Warning,
    wiki: &["pitfall-async-copy#P8"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    for (body, ops) in ctx.async_functions().iter() {
        if !ops.iter().any(|o| o.kind == OpKind::Commit) {
            continue;
        }
        for w in ops {
            let OpKind::Wait {
                count: Some(0),
                count_range,
                ..
            } = &w.kind
            else {
                continue;
            };
            let Some(l) = innermost_loop(ctx, w.call.range.start) else {
                continue;
            };
            // A commit earlier in the iteration on the wait's own path: one in the other
            // branch of an `if` (`if (next) { copy; commit; wait(1); } else { wait(0); }`)
            // committed nothing in the iterations that wait, and waiting for everything
            // there is the pipeline's drain.
            // Where the function's control flow does not hold the loop (a body the grammar
            // could not read statement by statement), which branch a commit is in is not
            // known: nothing is said.
            let Some(flow) = ctx
                .file
                .control_flow(w.call.range.start)
                .filter(|f| f.shape(&l).is_some())
            else {
                continue;
            };
            let on_path = |o: &&Op| {
                o.kind == OpKind::Commit
                    && l.contains(&o.call.range.start)
                    && o.call.range.start < w.call.range.start
                    && !flow.in_other_branches(o.call.range.start, w.call.range.start)
            };
            let committed_before = ops.iter().any(|o| on_path(&o));
            if !committed_before {
                continue;
            }
            // The drain arm of a branch whose other arm keeps groups pending (`if (n - i >
            // 2) wait_prior(1); else wait_prior(0);`): the code waits for everything only
            // in the iterations it has singled out, the last ones, whose copies were
            // skipped (`if (i + 2 < n) copy(…)`).
            let drain_arm = ops.iter().any(|o| {
                matches!(o.kind, OpKind::Wait { count, .. } if count != Some(0))
                    && l.contains(&o.call.range.start)
                    && flow.in_other_branches(o.call.range.start, w.call.range.start)
            });
            if drain_arm {
                continue;
            }
            // Work between the commit and the wait (a GEMM on the previous tile, shared
            // reads) is the overlap: waiting for everything after it is how a loop that
            // alternates two buffers (FlashAttention's K and V) consumes the tile it
            // just fetched.
            let last_commit = ops
                .iter()
                .filter(on_path)
                .map(|o| o.call.range.end)
                .max()
                .unwrap_or(w.call.range.start);
            if work_between(ctx, body.start, ops, last_commit..w.call.range.start) {
                continue;
            }
            // Groups still pending when the loop starts: prologue commits after the last
            // `wait 0` before the loop. None means each iteration loads its own tile.
            let drained = ops
                .iter()
                .filter(|o| {
                    matches!(o.kind, OpKind::Wait { count: Some(0), .. })
                        && o.call.range.end <= l.start
                })
                .map(|o| o.call.range.end)
                .max()
                .unwrap_or(0);
            let prologue: Vec<&Op> = ops
                .iter()
                .filter(|o| {
                    o.kind == OpKind::Commit
                        && o.call.range.end <= l.start
                        && o.call.range.start >= drained
                })
                .collect();
            if prologue.is_empty() {
                continue;
            }
            let stages_minus_one = prologue
                .iter()
                .map(|o| commits_of(ctx, o, &l))
                .sum::<Option<i64>>()
                .filter(|n| *n >= 1);
            let written = &ctx.text()[w.call.range.clone()];
            let mut fixes = Vec::new();
            if let Some(n) = stages_minus_one {
                let edit = match count_range {
                    Some(r) => Some(TextEdit::replace(r.clone(), n.to_string())),
                    None if w.call.kind == SymbolKind::Ptx
                        && w.call.callee.starts_with("cp.async.wait_all") =>
                    {
                        Some(TextEdit::replace(
                            w.call.callee_range.clone(),
                            format!("cp.async.wait_group {n}"),
                        ))
                    }
                    None => None,
                };
                if let Some(edit) = edit {
                    fixes.push(Fix {
                        safe: false,
                        title: format!(
                            "Wait for all but the {n} most recent group{} (stages - 1)",
                            if n == 1 { "" } else { "s" }
                        ),
                        edits: vec![edit],
                    });
                }
            }
            let advice = match stages_minus_one {
                Some(n) => format!("leave {n} group{} pending", if n == 1 { "" } else { "s" }),
                None => "leave stages - 1 groups pending (1 for double buffering)".to_string(),
            };
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity: RULE.severity,
                range: w.call.range.clone(),
                message: format!(
                    "`{}` waits for every copy, including the next tile's group committed earlier in this iteration, so the prefetch no longer overlaps the compute; {advice}",
                    one_line(written)
                ),
                wiki: RULE.wiki[0].to_string(),
                fixes,
            });
        }
    }
}

fn one_line(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    s.trim_end_matches(';').to_string()
}

/// Whether `range` holds a call that is not an async-copy operation or a barrier, or a
/// shared-memory access.
fn work_between(ctx: &RuleContext, body_start: usize, ops: &[Op], range: TextRange) -> bool {
    let calls = ctx.calls_in_body(body_start);
    let call = calls.iter().any(|c| {
        range.contains(&c.range.start)
            && !ops.iter().any(|o| o.call.range == c.range)
            && !matches!(
                short_name(&c.callee),
                "producer_acquire" | "producer_release" | "consumer_release" | "__syncwarp"
            )
    });
    call || ctx
        .shared_accesses_from(range.clone())
        .iter()
        .any(|a| range.contains(&a.range.start))
}

/// The innermost loop around `offset` inside its function.
pub(crate) fn innermost_loop(ctx: &RuleContext, offset: usize) -> Option<TextRange> {
    for e in ctx.enclosing(offset).iter() {
        match e.kind {
            EnclosingKind::For { .. }
            | EnclosingKind::While { .. }
            | EnclosingKind::DoWhile { .. } => return Some(e.range.clone()),
            EnclosingKind::Function { .. } => return None,
            _ => {}
        }
    }
    None
}

/// How many groups a prologue commit adds: 1, or the trip count of the constant loops
/// around it (up to the pipelined loop `main`).
fn commits_of(ctx: &RuleContext, commit: &Op, main: &TextRange) -> Option<i64> {
    let mut n = 1i64;
    for e in ctx.enclosing(commit.call.range.start).iter().cloned() {
        if e.range.contains(&main.start) {
            break;
        }
        match e.kind {
            EnclosingKind::For {
                start, end, step, ..
            } => {
                let start = start.and_then(|s| ctx.facts.fold_text(&s, e.range.start))?;
                let (end, step) = (end?, step?);
                if step <= 0 {
                    return None;
                }
                n = n.checked_mul(((end - start).max(0) + step - 1) / step)?;
            }
            EnclosingKind::While { .. } | EnclosingKind::DoWhile { .. } => return None,
            EnclosingKind::If { .. } | EnclosingKind::Switch { .. } => return None,
            EnclosingKind::Function { .. } => break,
            _ => {}
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages, check_no_fix};

    const RULE: &str = "async-copy/wait-all-in-pipelined-loop";

    #[test]
    fn wait_zero_after_prefetch_commit() {
        check(
            RULE,
            r#"
#include <cuda_pipeline.h>
__global__ void k(const float* in, float* out, int n) {
    __shared__ float buf[2][256];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&buf[0][tid], &in[tid], sizeof(float));
    __pipeline_commit();
    float acc = 0.0f;
    for (int t = 0; t < n; ++t) {
        if (t + 1 < n)
            __pipeline_memcpy_async(&buf[(t + 1) % 2][tid], &in[(t + 1) * 256 + tid], sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(0);
     // ^^^^^^^^^^^^^^^^^^^^^^^^ warning: `__pipeline_wait_prior(0)` waits for every copy
        __syncthreads();
        acc += buf[t % 2][(tid + 1) % 256];
        __syncthreads();
    }
    out[tid] = acc;
}
"#,
        );
    }

    #[test]
    fn a_wait_all_on_the_branch_that_commits_nothing_is_the_drain() {
        // In the iterations that take the `else`, nothing was committed: waiting for
        // everything drains the pipeline. A wait after the `if` follows the commit in
        // the iterations that prefetch.
        check(
            RULE,
            r#"
#include <cuda_pipeline.h>
__global__ void k(const float* in, float* out, int tiles) {
    __shared__ float buf[2][256];
    int tid = threadIdx.x;
    float acc = 0.0f;
    __pipeline_memcpy_async(&buf[0][tid], &in[tid], sizeof(float));
    __pipeline_commit();
    for (int t = 0; t < tiles; ++t) {
        if (t + 1 < tiles) {
            __pipeline_memcpy_async(&buf[(t + 1) & 1][tid], &in[(t + 1) * 256 + tid], sizeof(float));
            __pipeline_commit();
            __pipeline_wait_prior(1);
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        acc += buf[t & 1][(tid + 1) & 255];
        __syncthreads();
    }
    out[tid] = acc;
}
__global__ void k2(const float* in, float* out, int tiles) {
    __shared__ float buf[2][256];
    int tid = threadIdx.x;
    float acc = 0.0f;
    __pipeline_memcpy_async(&buf[0][tid], &in[tid], sizeof(float));
    __pipeline_commit();
    for (int t = 0; t < tiles; ++t) {
        if (t + 1 < tiles) {
            __pipeline_memcpy_async(&buf[(t + 1) & 1][tid], &in[(t + 1) * 256 + tid], sizeof(float));
            __pipeline_commit();
        }
        __pipeline_wait_prior(0);
     // ^^^^^^^^^^^^^^^^^^^^^^^^ warning: `__pipeline_wait_prior(0)` waits for every copy
        __syncthreads();
        acc += buf[t & 1][(tid + 1) & 255];
        __syncthreads();
    }
    out[tid] = acc;
}
"#,
        );
    }

    /// A commit every iteration, its copy skipped in the last iterations, and a wait
    /// chosen by the tiles left: the steady state keeps one group pending, the drain arm
    /// waits for all, which is silent; a lone `wait_prior(0)` after the same commit is
    /// reported.
    #[test]
    fn a_wait_all_in_the_drain_arm_of_a_counted_wait_is_silent() {
        check(
            RULE,
            r#"
#include <cuda_pipeline.h>
__global__ void k(const float4* src, float* out, int n) {
    __shared__ float4 buf[3][256];
    int t = threadIdx.x;
    for (int s = 0; s < 2 && s < n; ++s) {
        __pipeline_memcpy_async(&buf[s][t], &src[s * 256 + t], sizeof(float4));
        __pipeline_commit();
    }
    float acc = 0.f;
    for (int i = 0; i < n; ++i) {
        if (i + 2 < n)
            __pipeline_memcpy_async(&buf[(i + 2) % 3][t], &src[(i + 2) * 256 + t], sizeof(float4));
        __pipeline_commit();
        if (n - i > 2) {
            __pipeline_wait_prior(1);
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        acc += buf[i % 3][t].x;
        __syncthreads();
    }
    out[t] = acc;
}
__global__ void k2(const float4* src, float* out, int n) {
    __shared__ float4 buf[3][256];
    int t = threadIdx.x;
    for (int s = 0; s < 2 && s < n; ++s) {
        __pipeline_memcpy_async(&buf[s][t], &src[s * 256 + t], sizeof(float4));
        __pipeline_commit();
    }
    float acc = 0.f;
    for (int i = 0; i < n; ++i) {
        if (i + 2 < n)
            __pipeline_memcpy_async(&buf[(i + 2) % 3][t], &src[(i + 2) * 256 + t], sizeof(float4));
        __pipeline_commit();
        __pipeline_wait_prior(0);
     // ^^^^^^^^^^^^^^^^^^^^^^^^ warning: `__pipeline_wait_prior(0)` waits for every copy
        __syncthreads();
        acc += buf[i % 3][t].x;
        __syncthreads();
    }
    out[t] = acc;
}
"#,
        );
    }

    /// Inside a lambda the function's control flow does not say which branch a commit
    /// is in: the drain arm of an `else if` there is not reported as a lost overlap.
    #[test]
    fn a_pipeline_inside_a_lambda_whose_branches_are_not_known_is_silent() {
        check(
            RULE,
            r#"
#include <cuda_pipeline.h>
__global__ void k(const float* in, float* out, int tiles) {
    __shared__ float buf[2][256];
    int tid = threadIdx.x;
    auto run = [&](int n) {
        float acc = 0.0f;
        __pipeline_memcpy_async(&buf[0][tid], &in[tid], sizeof(float));
        __pipeline_commit();
        for (int t = 0; t < n; ++t) {
            if (t + 1 < n) {
                __pipeline_memcpy_async(&buf[(t + 1) & 1][tid], &in[(t + 1) * 256 + tid], sizeof(float));
                __pipeline_commit();
                __pipeline_wait_prior(1);
            } else if (t + 1 == n) {
                __pipeline_wait_prior(0);
            }
            __syncthreads();
            acc += buf[t & 1][(tid + 1) & 255];
            __syncthreads();
        }
        return acc;
    };
    out[tid] = run(tiles);
}
"#,
        );
    }

    #[test]
    fn wait_before_the_next_copy_and_unpipelined_loops_stay_silent() {
        check(
            RULE,
            r#"
__global__ void two_stage(const float* in, float* out, int n) {
    __shared__ float buf[2][256];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&buf[0][tid], &in[tid], sizeof(float));
    __pipeline_commit();
    float acc = 0.0f;
    for (int t = 0; t < n; ++t) {
        __pipeline_wait_prior(0);
        __syncthreads();
        if (t + 1 < n)
            __pipeline_memcpy_async(&buf[(t + 1) % 2][tid], &in[(t + 1) * 256 + tid], sizeof(float));
        __pipeline_commit();
        acc += buf[t % 2][(tid + 1) % 256];
    }
    out[tid] = acc;
}
__global__ void drained_before_the_loop(const float* in, float* out, int n) {
    __shared__ float buf[256];
    __shared__ float c[256];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&c[tid], &in[tid], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    float acc = c[(tid + 1) % 256];
    for (int t = 0; t < n; ++t) {
        __pipeline_memcpy_async(&buf[tid], &in[t * 256 + tid], sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        acc += buf[(tid + 1) % 256];
        __syncthreads();
    }
    out[tid] = acc;
}
__global__ void alternating_buffers(const float* in, float* out, int n) {
    __shared__ float k_tile[256];
    __shared__ float v_tile[256];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&k_tile[tid], &in[tid], sizeof(float));
    __pipeline_commit();
    float acc = 0.0f;
    for (int t = 0; t < n; ++t) {
        __pipeline_wait_prior(0);
        __syncthreads();
        __pipeline_memcpy_async(&v_tile[tid], &in[t * 512 + 256 + tid], sizeof(float));
        __pipeline_commit();
        acc += score(k_tile, tid);
        __pipeline_wait_prior(0);
        __syncthreads();
        __pipeline_memcpy_async(&k_tile[tid], &in[(t + 1) * 512 + tid], sizeof(float));
        __pipeline_commit();
        acc += v_tile[(tid + 1) % 256];
    }
    out[tid] = acc;
}
__global__ void one_stage(const float* in, float* out, int n) {
    __shared__ float buf[256];
    int tid = threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; ++t) {
        __pipeline_memcpy_async(&buf[tid], &in[t * 256 + tid], sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        acc += buf[(tid + 1) % 256];
        __syncthreads();
    }
    out[tid] = acc;
}
"#,
        );
    }

    const PTX: &str = r#"
__device__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
__global__ void k(const float* in, float* out, int n) {
    __shared__ float buf[3][256];
    for (int s = 0; s < 2; ++s) {
        copy_tile(buf[s], in, s);
        commit();
    }
    for (int t = 0; t < n; ++t) {
        copy_tile(buf[(t + 2) % 3], in, t + 2);
        commit();
        asm volatile("cp.async.wait_all;\n" ::);
        __syncthreads();
        out[t] = buf[t % 3][threadIdx.x];
        __syncthreads();
    }
}
"#;

    #[test]
    fn ptx_and_wrappers_with_a_counted_prologue() {
        check_messages(
            RULE,
            PTX,
            expect![[r#"
                warning: `cp.async.wait_all` waits for every copy, including the next tile's group committed earlier in this iteration, so the prefetch no longer overlaps the compute; leave 2 groups pending (pitfall-async-copy#P8)
            "#]],
        );
        check_fix(
            RULE,
            PTX,
            0,
            expect![[r#"
                // Wait for all but the 2 most recent groups (stages - 1)
                __device__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
                __global__ void k(const float* in, float* out, int n) {
                    __shared__ float buf[3][256];
                    for (int s = 0; s < 2; ++s) {
                        copy_tile(buf[s], in, s);
                        commit();
                    }
                    for (int t = 0; t < n; ++t) {
                        copy_tile(buf[(t + 2) % 3], in, t + 2);
                        commit();
                        asm volatile("cp.async.wait_group 2;\n" ::);
                        __syncthreads();
                        out[t] = buf[t % 3][threadIdx.x];
                        __syncthreads();
                    }
                }
            "#]],
        );
    }

    #[test]
    fn fix_writes_one_for_double_buffering() {
        check_fix(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int n) {
    __shared__ float buf[2][256];
    cp_async(&buf[0][threadIdx.x], in);
    __pipeline_commit();
    for (int t = 0; t < n; ++t) {
        cp_async(&buf[(t + 1) % 2][threadIdx.x], in + t);
        __pipeline_commit();
        cuda::pipeline_consumer_wait_prior<0>(pipe);
        __syncthreads();
        out[t] = buf[t % 2][threadIdx.x];
        __syncthreads();
    }
}
"#,
            0,
            expect![[r#"
                // Wait for all but the 1 most recent group (stages - 1)
                __global__ void k(const float* in, float* out, int n) {
                    __shared__ float buf[2][256];
                    cp_async(&buf[0][threadIdx.x], in);
                    __pipeline_commit();
                    for (int t = 0; t < n; ++t) {
                        cp_async(&buf[(t + 1) % 2][threadIdx.x], in + t);
                        __pipeline_commit();
                        cuda::pipeline_consumer_wait_prior<1>(pipe);
                        __syncthreads();
                        out[t] = buf[t % 2][threadIdx.x];
                        __syncthreads();
                    }
                }
            "#]],
        );
    }

    #[test]
    fn no_fix_when_the_prologue_cannot_be_counted() {
        check_no_fix(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int n, int stages) {
    __shared__ float buf[4][256];
    for (int s = 0; s < stages - 1; ++s) {
        __pipeline_memcpy_async(&buf[s][threadIdx.x], in + s * 256, 4);
        __pipeline_commit();
    }
    for (int t = 0; t < n; ++t) {
        __pipeline_memcpy_async(&buf[(t + 3) % 4][threadIdx.x], in + t * 256, 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        out[t] = buf[t % 4][threadIdx.x];
        __syncthreads();
    }
}
"#,
        );
    }

    /// A CuTe-style main loop: `cute::copy` issues the copies, `cp_async_fence` commits and
    /// `cp_async_wait<N>` waits (the CuTe helper around `cp.async.wait_group N`).
    const CUTE: &str = r#"
template <int PIPE, class Copy, class TA, class SA>
__global__ void gemm(Copy copy_a, TA gA, SA sA, float* out, int k_tiles) {
    CUTE_UNROLL
    for (int k_pipe = 0; k_pipe < PIPE - 1; ++k_pipe) {
        cute::copy(copy_a, gA(_, _, _, k_pipe), sA(_, _, _, k_pipe));
        cute::cp_async_fence();
    }
    int read = 0;
    int write = PIPE - 1;
    for (int k = 0; k < k_tiles; ++k) {
        cute::copy(copy_a, gA(_, _, _, k + PIPE - 1), sA(_, _, _, write));
        cute::cp_async_fence();
        cute::cp_async_wait<WAIT>();
        __syncthreads();
        out[k] = sA(threadIdx.x, 0, 0, read);
        __syncthreads();
        read = (read + 1) % PIPE;
        write = (write + 1) % PIPE;
    }
}
template <int PIPE, class Copy, class TA, class SA>
void run(Copy copy_a, TA gA, SA sA, float* out, int k_tiles) {
    gemm<PIPE><<<1, 128>>>(copy_a, gA, sA, out, k_tiles);
}
void go(float* out, int k_tiles) { run<2>(0, 0, 0, out, k_tiles); }
"#;

    #[test]
    fn cute_cp_async_wait_zero_in_a_main_loop() {
        check_messages(
            RULE,
            &CUTE.replace("WAIT", "0"),
            expect![[r#"
                warning: `cute::cp_async_wait<0>()` waits for every copy, including the next tile's group committed earlier in this iteration, so the prefetch no longer overlaps the compute; leave stages - 1 groups pending (1 for double buffering) (pitfall-async-copy#P8)
            "#]],
        );
        // `PIPE` is a template parameter: the prologue's commits cannot be counted.
        check_no_fix(RULE, &CUTE.replace("WAIT", "0"));
    }

    #[test]
    fn cute_cp_async_wait_of_stages_minus_one_stays_silent() {
        check(RULE, &CUTE.replace("WAIT", "PIPE - 2"));
        check(RULE, &CUTE.replace("WAIT", "1"));
    }
}
