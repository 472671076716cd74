//! `sync/barrier-in-divergent-branch`: a barrier reached only by the threads that take a
//! branch on the thread index, for every barrier scope.
//!
//! A barrier must be reached by every thread of its scope; inside `if (tid < n)` the
//! other threads never arrive, and the block hangs or the barrier silently misbehaves
//! (`pitfall-synchronization#P1`). The scopes (`rules/barriers.rs`): the block
//! (`__syncthreads()`, `__syncthreads_and/or/count`, `this_thread_block().sync()`,
//! `cooperative_groups::sync(block)`, `bar.sync 0` in `asm`), a tile or the warp
//! (`tile.sync()` of a `thread_block_tile`, `__syncwarp()` with a full mask: only a
//! condition that splits the lanes of a warp matters), the cluster and the grid
//! (`grid.sync()`: a condition on `blockIdx` splits it too). The message names the scope.
//! Named barriers with a thread count (`bar.sync id, count`), `__syncwarp(mask)` with a
//! partial or unknown mask, coalesced groups and barriers under conditions that do not
//! depend on the thread stay silent, and so do:
//! - an `if` whose branches each hold the same number of barriers of the scope, passed by
//!   every thread of the branch (each side arrives as often);
//! - a guard that the known launch makes the same for every thread (`if (threadIdx.x <
//!   256)` in a kernel every launch of which has 256 threads).
//!
//! There is no automatic fix: the work inside the branch must be split around a barrier
//! that all threads reach.
//!
//! The same holds for a thread-dependent early exit before a block barrier (see
//! `early_exit.rs`), read off the function's control flow (`ControlFlow` of the syntax
//! crate): a `continue` ahead of a barrier later in its own loop's iteration, a `break`
//! out of a loop that holds a barrier, or a `return` from a `__device__` function ahead of
//! a barrier the other threads still reach (warnings: the threads stay alive and miss the
//! barrier); and `if (i >= n) return;` in a kernel ahead of `__syncthreads()` (a hint:
//! exited threads do not hold up `bar.sync`, but the guide forbids it and their share of
//! the work is skipped). A barrier in the other branch of an `if`, or after an
//! unconditional `return`, is not reached and stays silent. Thread dependence follows
//! local variables computed from `threadIdx` (`int i = blockIdx.x * N + tx;` with `tx =
//! threadIdx.x`); conditions on `blockIdx`, parameters and template parameters alone are
//! uniform for a block barrier.
//!
//! ```cuda
//! // Before
//! if (tid < s) { sdata[tid] += sdata[tid + s]; __syncthreads(); }
//! // After
//! if (tid < s) sdata[tid] += sdata[tid + s];
//! __syncthreads();
//! ```

use kernaut_syntax::ControlFlow;

mod early_exit;
use super::barriers::{barriers, certain_block, divergent_branch, Barrier};
use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("barrier_in_divergent_branch.rs"),
    id: "sync/barrier-in-divergent-branch",
    severity: Severity::Warning,
    wiki: &["pitfall-synchronization#P1"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    if !ctx.text().contains("sync") {
        return;
    }
    let bodies = ctx.bodies_mentioning(&["sync"]);
    ctx.prefetch_calls(&bodies);
    let errors = std::cell::OnceCell::new();
    for body in bodies {
        let found = barriers(ctx, &ctx.calls_in_body(body.start));
        if found.is_empty() {
            continue;
        }
        let Some(flow) = ctx.file.control_flow(body.start) else {
            continue;
        };
        let block = certain_block(ctx, body.start);
        for b in &found {
            let Some((branch, condition)) = divergent_branch(ctx, b.range.start, b.scope, block)
            else {
                continue;
            };
            if balanced(&flow, &branch, b, &found)
                || !parsed_cleanly(ctx, &(branch.start..b.range.end), &errors)
            {
                continue;
            }
            let written: String = ctx.text()[b.range.clone()]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let (threads, barrier) = (b.scope.threads(), b.scope.barrier());
            // Within a warp, a condition that reads the thread index only through locals
            // may well be the same for every lane (`warp_id = threadIdx.x / 32` and what is
            // computed from it): the lanes differ only where the condition names the lane.
            let names_lane = ["threadIdx", "lane", "thread_rank", "laneid"]
                .iter()
                .any(|w| condition.contains(w));
            let (severity, assumption) = if b.scope.within_warp() && !names_lane {
                (
                    Severity::Hint,
                    format!(
                        " (assuming `{condition}` differs between the lanes of a warp: it reads the thread index through locals, and one derived from `threadIdx.x / 32` is the same for the whole warp)"
                    ),
                )
            } else {
                (RULE.severity, String::new())
            };
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity,
                range: b.range.clone(),
                message: format!(
                    "`{written}` inside `if ({condition})`: threads of {threads} that skip the branch never reach the {barrier}, so {threads} can hang or synchronise the wrong threads; move the barrier out of the branch{assumption}"
                ),
                wiki: RULE.wiki[0].to_string(),
                fixes: Vec::new(),
            });
        }
        early_exit::check(ctx, &flow, &found, block, &errors, out);
    }
}

/// Whether the file parses without an error in `range`: where the parser lost its way
/// (`#if` inside an expression, an unknown macro), which statement holds the barrier is
/// not known, and the rule stays silent. The errors are listed once per run, when a
/// finding first asks.
fn parsed_cleanly(
    ctx: &RuleContext,
    range: &kernaut_syntax::TextRange,
    errors: &std::cell::OnceCell<Vec<kernaut_syntax::TextRange>>,
) -> bool {
    let errors = errors.get_or_init(|| ctx.file.errors().into_iter().map(|e| e.range).collect());
    !errors
        .iter()
        .any(|e| e.start < range.end && range.start <= e.end)
}

/// Whether the `if` at `branch` holds barriers of `b`'s scope in both branches, the same
/// number in each and every one passed by every thread that takes its branch: the threads
/// of either side then arrive at a barrier of the scope as many times, and the barrier
/// (one hardware barrier per scope, counted by arrivals) completes.
fn balanced(
    flow: &ControlFlow,
    branch: &kernaut_syntax::TextRange,
    b: &Barrier,
    all: &[Barrier],
) -> bool {
    let Some((then, Some(other))) = flow.branches(branch) else {
        return false;
    };
    let side = |r: &kernaut_syntax::TextRange| {
        let inside: Vec<&Barrier> = all
            .iter()
            .filter(|x| x.scope == b.scope && r.contains(&x.range.start))
            .collect();
        let direct = inside.iter().all(|x| flow.always_passes(r, x.range.start));
        (inside.len(), direct)
    };
    let (n, direct_then) = side(&then);
    let (m, direct_other) = side(&other);
    n > 0 && n == m && direct_then && direct_other
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

    /// `__syncthreads_or/and/count` run in the condition, in every thread, and give every
    /// thread of the block the same result: neither the barrier in the condition nor a
    /// `break` under it splits the block. A barrier under a condition that reads the
    /// thread outside such a call still does.
    #[test]
    fn block_uniform_barrier_results() {
        check(
            RULE,
            r#"
__global__ void k(float* out, int n) {
    __shared__ float s[256];
    bool done = threadIdx.x >= n;
    if (__syncthreads_or(done)) {
        s[threadIdx.x] = 0.0f;
    }
    for (int r = 0; r < 64; ++r) {
        s[threadIdx.x] += 1.0f;
        if (__syncthreads_count(out[threadIdx.x] > 0.0f) >= 256) break;
        __syncthreads();
    }
    out[threadIdx.x] = s[threadIdx.x];
}
"#,
        );
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    if (__syncthreads_and(out[0] > 0.0f) && threadIdx.x < 16) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside
    }
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

    #[test]
    fn exits_on_paths_that_never_reach_the_barrier_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int mode, int n) {
    __shared__ float tile[256];
    if (mode == 0) {
        if (threadIdx.x >= n) return;
        out[threadIdx.x] = in[threadIdx.x];
    } else {
        tile[threadIdx.x] = in[threadIdx.x];
        __syncthreads();
        out[threadIdx.x] = tile[255 - threadIdx.x];
    }
}
__device__ void copy_or_stage(float* tile, const float* in, int mode, int n) {
    if (mode == 1) {
        if (threadIdx.x >= n) return;
        tile[threadIdx.x] = in[threadIdx.x];
        return;
    }
    __syncthreads();
}
__device__ void stage(float* tile, const float* in, int mode, int n) {
    if (mode == 1) {
        if (threadIdx.x >= n) return;
                           // ^^^^^^^ warning: `return` under `if (threadIdx.x >= n)` leaves this device function
        tile[threadIdx.x] = in[threadIdx.x];
    }
    __syncthreads();
}
"#,
        );
    }

    #[test]
    fn a_device_function_its_kernels_call_last() {
        check(
            RULE,
            r#"
__device__ void sort_tile(float* s, int len) {
    if (threadIdx.x >= len) return;
                         // ^^^^^^^ hint: `return` under `if (threadIdx.x >= len)` leaves this device function for some threads of the block before `__syncthreads()`, and its caller `sort`
    s[threadIdx.x] *= 2.0f;
    __syncthreads();
    s[threadIdx.x] += s[len - 1 - threadIdx.x];
}
__device__ void stage(float* s, int len) {
    if (threadIdx.x >= len) return;
                         // ^^^^^^^ warning: `return` under `if (threadIdx.x >= len)` leaves this device function
    s[threadIdx.x] *= 2.0f;
    __syncthreads();
}
__global__ void sort(float* out, int len) {
    __shared__ float s[256];
    s[threadIdx.x] = out[threadIdx.x];
    sort_tile(s, len);
}
__global__ void twice(float* out, int len) {
    __shared__ float s[256];
    stage(s, len);
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
"#,
        );
    }

    #[test]
    fn a_branch_the_parser_lost_stays_silent() {
        // Where the parser recovers from an error (here a `(` never closed; in
        // ThunderKittens' `rv.cuh`, `#if` blocks inside a call's arguments), which
        // statement holds the barrier is not known.
        check(
            RULE,
            r#"
__device__ void show(float* v) {
    unsigned lane = threadIdx.x % 32;
    if (lane < 16) {
        v[0] = (1.0f;
        __syncwarp();
    }
}
"#,
        );
    }

    #[test]
    fn if_and_else_that_both_hold_the_barrier() {
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float s[64];
    if (threadIdx.x < 32) {
        s[threadIdx.x] = 1.0f;
        __syncthreads();
        out[threadIdx.x] = s[63 - threadIdx.x];
    } else {
        __syncthreads();
        out[threadIdx.x] = 0.0f;
    }
    if (threadIdx.x < 16) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 16)`
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 16)`
    } else {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 16)`
    }
}
"#,
        );
    }

    #[test]
    fn continue_and_break_belong_to_their_own_loop() {
        check(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int n) {
    __shared__ float tile[256];
    for (int r = 0; r < n; ++r) {
        for (int j = 0; j < 8; ++j) {
            if (threadIdx.x + j >= n) continue;
            out[j] += in[j];
        }
        switch (threadIdx.x & 3) {
        case 0: out[r] = 1.0f; break;
        default: break;
        }
        tile[threadIdx.x] = in[r];
        __syncthreads();
        out[r] += tile[255 - threadIdx.x];
        __syncthreads();
    }
    for (int r = 0; r < n; ++r) {
        for (int j = 0; j < 8; ++j) {
            if (threadIdx.x == j) break;
                               // ^^^^^^ warning: `break` under `if (threadIdx.x == j)` leaves the loop
            __syncthreads();
        }
    }
}
"#,
        );
    }

    #[test]
    fn barriers_of_every_scope() {
        check_messages(
            RULE,
            r#"
namespace cg = cooperative_groups;
__global__ void k(float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    auto tile = cg::tiled_partition<32>(block);
    auto quarter = cg::tiled_partition<8>(block);
    unsigned lane = threadIdx.x % 32;
    if (lane < 16) tile.sync();
    if (lane < 16) __syncwarp();
    if (lane < 16) __syncwarp(0xffff);
    if (threadIdx.x / 32 == 1) __syncwarp();
    if (threadIdx.x < 64) tile.sync();
    if (threadIdx.x == 0) quarter.sync();
    if (threadIdx.x < 128) cg::this_thread_block().sync();
    if (threadIdx.x < 128) cg::sync(block);
    if (blockIdx.x == 0) grid.sync();
    if (blockIdx.x == 0) block.sync();
    if (threadIdx.x < 128) asm volatile("bar.sync 0;");
    if (threadIdx.x < 128) asm volatile("bar.sync 1, 128;");
    if (threadIdx.x < 128) {
        cg::coalesced_group active = cg::coalesced_threads();
        active.sync();
    }
    cg::thread_group sixteen = cg::tiled_partition(block, 16);
    if (threadIdx.x < 16) cg::sync(sixteen);
    if (threadIdx.x < 8) cg::sync(sixteen);
}
"#,
            expect![[r#"
                warning: `tile.sync()` inside `if (lane < 16)`: threads of the tile that skip the branch never reach the tile barrier, so the tile can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `__syncwarp()` inside `if (lane < 16)`: threads of the warp that skip the branch never reach the warp barrier, so the warp can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `quarter.sync()` inside `if (threadIdx.x == 0)`: threads of the tile that skip the branch never reach the tile barrier, so the tile can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `cg::this_thread_block().sync()` inside `if (threadIdx.x < 128)`: threads of the block that skip the branch never reach the block barrier, so the block can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `cg::sync(block)` inside `if (threadIdx.x < 128)`: threads of the block that skip the branch never reach the block barrier, so the block can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `grid.sync()` inside `if (blockIdx.x == 0)`: threads of the grid that skip the branch never reach the grid-wide barrier, so the grid can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `bar.sync 0;` inside `if (threadIdx.x < 128)`: threads of the block that skip the branch never reach the block barrier, so the block can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `cg::sync(sixteen)` inside `if (threadIdx.x < 8)`: threads of the tile that skip the branch never reach the tile barrier, so the tile can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
            "#]],
        );
    }

    /// `expert` is computed from the warp index: the same for every lane of a warp, as
    /// far as the file shows. Only a hint, which says what it assumes.
    #[test]
    fn a_warp_barrier_under_a_local_derived_from_the_thread_is_a_hint() {
        check(
            RULE,
            r#"
__global__ void k(int n) {
    const int warp_id = threadIdx.x / 32;
    const int expert = blockIdx.x * 4 + warp_id;
    if (expert < n) {
        __syncwarp();
     // ^^^^^^^^^^^^ hint: `__syncwarp()` inside `if (expert < n)`
    }
}
"#,
        );
    }

    #[test]
    fn a_guard_the_launch_makes_always_true() {
        check(
            RULE,
            r#"
__global__ void full(float* out) {
    __shared__ float s[256];
    if (threadIdx.x < 256) {
        s[threadIdx.x] = out[threadIdx.x];
        __syncthreads();
    }
    out[threadIdx.x] = s[255 - threadIdx.x];
}
__global__ void half(float* out) {
    __shared__ float s[256];
    if (threadIdx.x < 128) {
        s[threadIdx.x] = out[threadIdx.x];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 128)`
    }
}
void launch(float* out) {
    full<<<64, 256>>>(out);
    half<<<64, 256>>>(out);
}
"#,
        );
    }
}
