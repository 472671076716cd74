//! `sync/barrier-in-divergent-branch`: `__syncthreads()` (or `block.sync()`) reached only
//! by the threads that take a branch on the thread index.
//!
//! A block barrier must be reached by every thread of the block; inside `if (tid < n)`
//! the other threads never arrive, and the block hangs or the barrier silently
//! misbehaves (`pitfall-synchronization#P1`). Named barriers with a thread count
//! (`bar.sync id, count`), `__syncwarp()` and barriers under conditions that do not depend
//! on the thread index stay silent. There is no automatic fix: the work inside the branch
//! must be split around a barrier that all threads reach.
//!
//! The same holds for a thread-dependent early exit before a barrier (see
//! `early_exit.rs`): a `continue` ahead of a barrier later in the loop body, a `break` out
//! of a loop that holds a barrier, or a `return` from a `__device__` function ahead of its
//! barrier (warnings: the threads stay alive and miss the barrier); and `if (i >= n)
//! return;` in a kernel ahead of `__syncthreads()` (a hint: exited threads do not hold up
//! `bar.sync`, but the guide forbids it and their share of the work is skipped). Thread dependence follows local variables computed
//! from `threadIdx` (`int i = blockIdx.x * N + tx;` with `tx = threadIdx.x`); conditions
//! on `blockIdx`, parameters and template parameters alone are uniform and stay silent.
//!
//! ```cuda
//! // Before
//! if (tid < s) { sdata[tid] += sdata[tid + s]; __syncthreads(); }
//! // After
//! if (tid < s) sdata[tid] += sdata[tid + s];
//! __syncthreads();
//! ```

use kernaut_syntax::SymbolKind;

use super::async_ops::base_name;
mod early_exit;
use super::{thread_dependent_branch, Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("barrier_in_divergent_branch.rs"),
    id: "sync/barrier-in-divergent-branch",
    severity: Severity::Warning,
    wiki: &["pitfall-synchronization#P1"],
    run,
};

/// Whether `call` is a barrier of the whole block.
fn is_block_barrier(call: &kernaut_syntax::CallSite) -> bool {
    if call.kind == SymbolKind::Ptx {
        return false;
    }
    match base_name(&call.callee) {
        "__syncthreads" | "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or" => true,
        "sync" => {
            let t = call.callee_text.to_ascii_lowercase();
            call.callee.contains("thread_block")
                || call.callee.contains("grid_group")
                || (call.callee == "sync" && (t.starts_with("block.") || t.starts_with("cta.")))
                || t.contains("this_thread_block()")
        }
        _ => false,
    }
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    if !ctx.text().contains("sync") {
        return;
    }
    let mut seen = kernaut_syntax::FxHashSet::default();
    let bodies = ctx.bodies_mentioning(&["sync"]);
    ctx.prefetch_calls(&bodies);
    for body in bodies {
        let mut barriers = Vec::new();
        for call in ctx.calls_in_body(body.start).iter() {
            if !is_block_barrier(call) || !seen.insert(call.range.clone()) {
                continue;
            }
            barriers.push(call.range.clone());
            let Some((_, condition)) = thread_dependent_branch(ctx, call.range.start) else {
                continue;
            };
            let written: String = ctx.text()[call.range.clone()]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity: RULE.severity,
                range: call.range.clone(),
                message: format!(
                    "`{written}` inside `if ({condition})`: threads that skip the branch never reach the block barrier, so the block can hang or synchronise the wrong threads; move the barrier out of the branch"
                ),
                wiki: RULE.wiki[0].to_string(),
                fixes: Vec::new(),
            });
        }
        early_exit::check(ctx, &body, &barriers, out);
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_messages};

    const RULE: &str = "sync/barrier-in-divergent-branch";

    #[test]
    fn barrier_under_a_thread_condition() {
        check(
            RULE,
            r#"
__global__ void reduce(float* data) {
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    auto block = cooperative_groups::this_thread_block();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (tid < s)`
        }
    }
    if (threadIdx.x == 0) block.sync();
                       // ^^^^^^^^^^^^ warning: `block.sync()` inside `if (threadIdx.x == 0)`
}
"#,
        );
    }

    #[test]
    fn converged_barriers_stay_silent() {
        check(
            RULE,
            r#"
__global__ void reduce(float* data, int n) {
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (n > 128) {
        __syncthreads();
    }
    if (tid < 32) {
        __syncwarp();
        asm volatile("bar.sync 1, 64;");
    }
}
"#,
        );
    }

    #[test]
    fn thread_dependent_early_exit_before_a_barrier() {
        check(
            RULE,
            r#"
template <int N>
__global__ void scale(const float* in, float* out, int n) {
    __shared__ float tile[N];
    int tx = threadIdx.x;
    int bx = blockIdx.x;
    int i = bx * N + tx;
    if (i >= n) return;
             // ^^^^^^^ hint: `return` under `if (i >= n)` ends some threads of the block before `__syncthreads()`
    tile[tx] = in[i];
    __syncthreads();
    out[i] = tile[N - 1 - tx];
}
template <int N>
__global__ void rows(const float* in, float* out, int rows) {
    __shared__ float tile[N];
    for (int r = 0; r < rows; ++r) {
        if (threadIdx.x >= N / 2)
            continue;
         // ^^^^^^^^^ warning: `continue` under `if (threadIdx.x >= N / 2)` skips `__syncthreads()` later in this iteration for some threads of the block
        tile[threadIdx.x] = in[r * N + threadIdx.x];
        __syncthreads();
        out[r * N + threadIdx.x] = tile[N / 2 - 1 - threadIdx.x];
    }
    for (int r = 0; r < rows; ++r) {
        __syncthreads();
        if (in[r * N + threadIdx.x] < 0.0f) break;
                                         // ^^^^^^ warning: `break` under `if (in[r * N + threadIdx.x] < 0.0f)` leaves the loop for some threads of the block, which stay alive and miss `__syncthreads()`
        out[r] += 1.0f;
    }
}
__device__ void stage(float* tile, const float* in, int n) {
    int lane = threadIdx.x & 31;
    if (lane >= n) return;
                // ^^^^^^^ warning: `return` under `if (lane >= n)` leaves this device function for some threads of the block, which skip `__syncthreads()` below but keep running in the caller
    tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
}
"#,
        );
    }

    #[test]
    fn uniform_or_late_exits_stay_silent() {
        check(
            RULE,
            r#"
template <int N>
__global__ void k(const float* in, float* out, int n) {
    __shared__ float tile[N];
    if (blockIdx.x * N >= n) return;
    if (n == 0) return;
    if (N > 1024) return;
    int i = blockIdx.x * N + threadIdx.x;
    for (int r = 0; r < n; ++r) {
        __syncthreads();
        if (threadIdx.x >= 32) continue;
        out[r] += tile[threadIdx.x];
    }
    for (int r = 0; r < n; ++r) {
        switch (threadIdx.x % 4) {
        case 0: out[r] = 0.0f; break;
        default: break;
        }
        __syncthreads();
        if (r == 4) break;
    }
    // A `return` after the last barrier, and in a comment: return;
    tile[threadIdx.x] = in[i];
    __syncthreads();
    if (i >= n) return;
    out[i] = tile[N - 1 - threadIdx.x];
}
"#,
        );
    }

    #[test]
    fn kernel_return_message_states_what_ptx_does() {
        check_messages(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int n) {
    __shared__ float tile[256];
    int tx = threadIdx.x;
    int i = blockIdx.x * 256 + tx;
    if (i >= n) return;
    tile[tx] = in[i];
    __syncthreads();
    out[i] = tile[255 - tx];
}
"#,
            expect![[r#"
                hint: `return` under `if (i >= n)` ends some threads of the block before `__syncthreads()`: the CUDA programming guide allows a block barrier only where every thread of the block reaches it; today the hardware lets the barrier complete without the exited threads (PTX `exit` releases a barrier held up only by exited threads), but their part of the shared-memory work before the barrier is never done; keep every thread to the barrier and guard the work instead (`if (!(i >= n)) { ... }`) (pitfall-synchronization#P1)
            "#]],
        );
    }
}
