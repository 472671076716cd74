//! `race/shared-missing-barrier`: two threads touch one shared-memory address in the same
//! barrier interval, at least one of them writing.
//!
//! The kernel is run for every thread of the block its launch gives, counting the
//! barriers each thread passes: two accesses at different places of the code that reach
//! the same bytes from different threads with no `__syncthreads()` between them (or, for
//! two threads of one warp, no `__syncwarp()`) race. This finds a tile read before the
//! other threads wrote it (read after write), a tile overwritten by the next loop
//! iteration while other threads still read it (write after read across the loop's back
//! edge: the missing second barrier of a tiled loop), a tree reduction that lost the
//! barrier inside its loop, and the "last warp" unrolled with no `__syncwarp()` between
//! its steps. The message names both threads and both lines (`pitfall-data-race#P2`); a
//! warning when the launch fixes everything the collision needs, a hint that states the
//! assumption otherwise; nothing for a kernel no launch gives a block.
//!
//! The fix inserts the barrier where every thread passes it: before the statement of the
//! second access, or at the end of the loop body for a pair that meets across iterations;
//! `__syncwarp()` when both threads are in one warp. Inside a branch on the thread index a
//! block barrier would itself be a bug, so no fix is offered there.
//!
//! ```cuda
//! // Before
//! for (int t = 0; t < n; t += 32) {
//!     tile[ty][tx] = A[row * n + t + tx];
//!     __syncthreads();
//!     for (int k = 0; k < 32; ++k) acc += tile[ty][k] * B[(t + k) * n + col];
//! }
//! // After
//! for (int t = 0; t < n; t += 32) {
//!     tile[ty][tx] = A[row * n + t + tx];
//!     __syncthreads();
//!     for (int k = 0; k < 32; ++k) acc += tile[ty][k] * B[(t + k) * n + col];
//!     __syncthreads();
//! }
//! ```

use super::race_findings::{barrier_fix, both_write, context, says, severity};
use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;
use crate::races::RaceKind;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("race_shared_missing_barrier.rs"),
    id: "race/shared-missing-barrier",
    severity: Severity::Warning,
    wiki: &["pitfall-data-race#P2"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let text = ctx.text();
    for race in ctx.races().iter() {
        if race.kind != RaceKind::SharedMissingBarrier {
            continue;
        }
        let hazard = if both_write(race) {
            "write after write"
        } else if race.first.op == crate::races::Op::Read {
            "write after read"
        } else {
            "read after write"
        };
        let when = if race.loop_carried {
            " in the next iteration"
        } else {
            ""
        };
        let cure = if race.same_warp {
            format!(
                "both are in warp {}; put `__syncwarp()` between them",
                linear(race) / 32
            )
        } else {
            "put `__syncthreads()` between them".to_string()
        };
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: severity(race, RULE.severity),
            range: race.second.range.clone(),
            message: format!(
                "{} and {} {} it at line {}{when} with no barrier between ({hazard}){}: {cure}",
                says(race, &race.first),
                race.thread_name(&race.second),
                race.second.op.verb(),
                race.second.line,
                context(race),
            ),
            wiki: RULE.wiki[0].to_string(),
            fixes: barrier_fix(text, race).into_iter().collect(),
        });
    }
}

/// The linear index of the first thread in its block.
fn linear(race: &crate::races::Race) -> i64 {
    let [bx, by, _] = race.block_dims;
    let t = race.first.thread;
    t[0] + t[1] * bx + t[2] * bx * by
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages, check_no_fix};

    const RULE: &str = "race/shared-missing-barrier";

    const REDUCE: &str = r#"
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
int main() {
    float *o, *i;
    reduce<<<128, 256>>>(o, i);
}
"#;

    #[test]
    fn reduction_without_its_loop_barrier() {
        check_messages(
            RULE,
            REDUCE,
            expect![[r#"
                warning: thread 32 updates `s[32]` at line 7 and thread 0 reads it at line 7 in the next iteration with no barrier between (read after write) (block of 256 from the launch at line 13): put `__syncthreads()` between them (pitfall-data-race#P2)
            "#]],
        );
    }

    #[test]
    fn reduction_fix() {
        check_fix(
            RULE,
            REDUCE,
            0,
            expect![[r#"
                // Insert `__syncthreads();` at the end of the loop body
                __global__ void reduce(float* out, const float* in) {
                    __shared__ float s[256];
                    unsigned tid = threadIdx.x;
                    s[tid] = in[blockIdx.x * 256 + tid];
                    __syncthreads();
                    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
                        if (tid < k) s[tid] += s[tid + k];
                        __syncthreads();
                    }
                    if (tid == 0) out[blockIdx.x] = s[0];
                }
                int main() {
                    float *o, *i;
                    reduce<<<128, 256>>>(o, i);
                }
            "#]],
        );
    }

    const TILED: &str = r#"
#define T 16
__global__ void matmul(float* C, const float* A, const float* B, int n) {
    __shared__ float a[T][T];
    __shared__ float b[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int t = 0; t < n; t += T) {
        a[ty][tx] = A[row * n + t + tx];
        b[ty][tx] = B[(t + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += a[ty][k] * b[k][tx];
    }
    C[row * n + col] = acc;
}
int main() {
    float *c, *a, *b;
    matmul<<<dim3(8, 8), dim3(T, T)>>>(c, a, b, 128);
}
"#;

    #[test]
    fn tiled_loop_without_its_second_barrier() {
        check_messages(
            RULE,
            TILED,
            expect![[r#"
            warning: thread (1,0) reads `a[0][0]` at line 12 and thread (0,0) writes it at line 9 in the next iteration with no barrier between (write after read) (block of 16×16 from the launch at line 18): both are in warp 0; put `__syncwarp()` between them (pitfall-data-race#P2)
            warning: thread (0,2) reads `b[0][0]` at line 12 and thread (0,0) writes it at line 10 in the next iteration with no barrier between (write after read) (block of 16×16 from the launch at line 18): put `__syncthreads()` between them (pitfall-data-race#P2)
        "#]],
        );
        check_fix(
            RULE,
            TILED,
            0,
            expect![[r#"
            // Insert `__syncwarp();` at the end of the loop body
            #define T 16
            __global__ void matmul(float* C, const float* A, const float* B, int n) {
                __shared__ float a[T][T];
                __shared__ float b[T][T];
                int tx = threadIdx.x, ty = threadIdx.y;
                int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
                float acc = 0.0f;
                for (int t = 0; t < n; t += T) {
                    a[ty][tx] = A[row * n + t + tx];
                    b[ty][tx] = B[(t + ty) * n + col];
                    __syncthreads();
                    for (int k = 0; k < T; ++k) acc += a[ty][k] * b[k][tx];
                    __syncwarp();
                }
                C[row * n + col] = acc;
            }
            int main() {
                float *c, *a, *b;
                matmul<<<dim3(8, 8), dim3(T, T)>>>(c, a, b, 128);
            }
        "#]],
        );
    }

    /// A macro whose expansion starts with `__syncthreads()` stands between the store
    /// and the read: the store is ordered before the read, and what the expansion itself
    /// does is not modelled, so nothing is said (not "thread 1 writes `s[1]` at line 5");
    /// without the barrier the store races with the read.
    #[test]
    fn a_barrier_inside_a_macro_orders_the_accesses_around_it() {
        check(
            RULE,
            r#"
#define TAIL(s) \
    __syncthreads(); \
    if (threadIdx.x < 2) s[threadIdx.x] += s[threadIdx.x + 2];
__global__ void block_sum(const float* x, float* out) {
    __shared__ float s[32];
    s[threadIdx.x] = x[blockIdx.x * 32 + threadIdx.x];
    TAIL(s);
    if (threadIdx.x == 0) out[blockIdx.x] = s[0] + s[1];
}
void run(const float* x, float* out) { block_sum<<<32, 32>>>(x, out); }
"#,
        );
        check(
            RULE,
            r#"
#define TAIL(s) \
    if (threadIdx.x < 2) s[threadIdx.x] += s[threadIdx.x + 2];
__global__ void block_sum(const float* x, float* out) {
    __shared__ float s[32];
    s[threadIdx.x] = x[blockIdx.x * 32 + threadIdx.x];
    TAIL(s);
    if (threadIdx.x == 0) out[blockIdx.x] = s[0] + s[1];
                                                // ^^^^ warning: thread 1 writes `s[1]` at line 5 and thread 0 reads it at line 7
}
void run(const float* x, float* out) { block_sum<<<32, 32>>>(x, out); }
"#,
        );
    }

    /// `syncthreads()` with no definition in the file is an old toolkit's alias of the
    /// block barrier (current nvcc rejects the name): no race is reported across it.
    #[test]
    fn an_undefined_syncthreads_is_no_gap_to_report() {
        check(
            RULE,
            r#"
__global__ void block_sum(const float* x, float* out) {
    __shared__ float part[256];
    part[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
    syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.f;
        for (int k = 0; k < 256; ++k) s += part[k];
        out[blockIdx.x] = s;
    }
}
void run(const float* x, float* out) { block_sum<<<8, 256>>>(x, out); }
"#,
        );
    }

    #[test]
    fn clean_twins_stay_silent() {
        check(
            RULE,
            r#"
#define T 16
__global__ void matmul(float* C, const float* A, const float* B, int n) {
    __shared__ float a[T][T];
    __shared__ float b[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int t = 0; t < n; t += T) {
        a[ty][tx] = A[row * n + t + tx];
        b[ty][tx] = B[(t + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += a[ty][k] * b[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
int main() {
    float *o, *i, *c, *a, *b;
    matmul<<<dim3(8, 8), dim3(T, T)>>>(c, a, b, 128);
    reduce<<<128, 256>>>(o, i);
}
"#,
        );
    }

    #[test]
    fn no_block_barrier_inside_a_branch_on_the_thread() {
        // Threads 0 and 64 are in different warps: inside `if (t < 128)` (a local that
        // carries the thread index) no barrier serves them, so there is no fix; the same
        // pair under a branch on the block gets `__syncthreads()`.
        let kernel = |condition: &str| {
            format!(
                r#"
__global__ void k(float* out) {{
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    if ({condition}) {{
        s[t] = out[t];
        out[t] = s[(t + 64) % 256];
    }}
}}
int main() {{
    float* o;
    k<<<2, 256>>>(o);
}}
"#
            )
        };
        check_no_fix(RULE, &kernel("t < 128"));
        check_fix(
            RULE,
            &kernel("blockIdx.x < 1"),
            0,
            expect![[r#"
                // Insert `__syncthreads();` before the second access
                __global__ void k(float* out) {
                    __shared__ float s[256];
                    unsigned t = threadIdx.x;
                    if (blockIdx.x < 1) {
                        s[t] = out[t];
                        __syncthreads();
                        out[t] = s[(t + 64) % 256];
                    }
                }
                int main() {
                    float* o;
                    k<<<2, 256>>>(o);
                }
            "#]],
        );
    }

    #[test]
    fn a_helper_orders_threads_only_when_it_calls_a_barrier() {
        // `warp_sum` shuffles (`__shfl_down_sync` is no barrier): the write of `s[0]` by
        // thread 0 and its read by thread 32 stay unordered. `block_sync` calls
        // `__syncthreads()` and orders them.
        let kernel = |helper: &str| {
            format!(
                r#"
__device__ float warp_sum(float v) {{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}}
__device__ void block_sync() {{ __syncthreads(); }}
__global__ void k(float* out) {{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = out[t];
    {helper};
    out[t] = s[(t + 32) % 64];
}}
int main() {{
    float* o;
    k<<<1, 64>>>(o);
}}
"#
            )
        };
        check_messages(
            RULE,
            &kernel("out[t] = warp_sum(out[t])"),
            expect![[r#"
                warning: thread 0 writes `s[0]` at line 9 and thread 32 reads it at line 11 with no barrier between (read after write) (block of 64 from the launch at line 15): put `__syncthreads()` between them (pitfall-data-race#P2)
            "#]],
        );
        check(RULE, &kernel("block_sync()"));
    }

    #[test]
    fn last_warp_without_syncwarp() {
        check_messages(
            RULE,
            r#"
__global__ void tail(float* out) {
    __shared__ float s[64];
    unsigned tid = threadIdx.x;
    s[tid] = out[tid];
    s[tid + 32] = out[tid + 32];
    __syncthreads();
    if (tid < 32) {
        s[tid] += s[tid + 32];
        s[tid] += s[tid + 16];
    }
    if (tid == 0) out[0] = s[0];
}
int main() {
    float* o;
    tail<<<1, 32>>>(o);
}
"#,
            expect![[r#"
                warning: thread 16 updates `s[16]` at line 8 and thread 0 reads it at line 9 with no barrier between (read after write) (block of 32 from the launch at line 15): both are in warp 0; put `__syncwarp()` between them (pitfall-data-race#P2)
            "#]],
        );
    }

    /// A tree fold whose last step only thread 0 writes, read back by every thread with no
    /// barrier: the threads of warp 0 skip the fold's branch as the other warps do, so
    /// the pair is found both ways round, and a thread of another warp reads the slot
    /// too: `__syncwarp()` would not order it.
    #[test]
    fn a_read_back_by_every_warp_needs_the_block_barrier() {
        check_messages(
            RULE,
            r#"
__global__ void fold(const float* in, float* out) {
    __shared__ float part[256];
    unsigned t = threadIdx.x;
    part[t] = in[t];
    for (unsigned w = 128; w >= 1; w /= 2) {
        __syncthreads();
        if (t < w) part[t] += part[t + w];
    }
    out[t] = in[t] - part[0];
}
void run(const float* in, float* out) { fold<<<1, 256>>>(in, out); }
"#,
            expect![[r#"
                warning: thread 0 updates `part[0]` at line 7 and thread 32 reads it at line 9 with no barrier between (read after write) (block of 256 from the launch at line 11): put `__syncthreads()` between them (pitfall-data-race#P2)
            "#]],
        );
    }

    /// An argument the launch does not fold is sampled: a hint that names it. Without a
    /// launch there is no block shape, and no finding.
    #[test]
    fn unknown_shape_or_argument() {
        check_messages(
            RULE,
            r#"
__global__ void shift(float* out, int n) {
    __shared__ float s[256];
    if (threadIdx.x < n) s[threadIdx.x] = out[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 1) % 256];
}
int main(int argc, char** argv) {
    float* o;
    shift<<<1, 256>>>(o, argc);
}
"#,
            expect![[r#"
                hint: thread 32 writes `s[32]` at line 3 and thread 31 reads it at line 4 with no barrier between (read after write) (assuming `n` = 4096, which the launch does not fix): put `__syncthreads()` between them (pitfall-data-race#P2)
            "#]],
        );
        check(
            RULE,
            r#"
__global__ void shift(float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = out[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 1) % 256];
}
"#,
        );
    }

    const WHILE_REDUCE: &str = r#"
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    unsigned k = blockDim.x / 2;
    while (k > 0) {
        if (tid < k) s[tid] += s[tid + k];
        k >>= 1;
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
int main() {
    float *o, *i;
    reduce<<<128, 256>>>(o, i);
}
"#;

    /// `while` and `do` loops that count like a `for` (the variable declared just before,
    /// updated by the body's last statement) run as one: the reduction that lost its
    /// loop barrier is found, its twin with the barrier stays silent.
    #[test]
    fn while_and_do_loops_count_like_for() {
        check_messages(
            RULE,
            WHILE_REDUCE,
            expect![[r#"
                warning: thread 32 updates `s[32]` at line 8 and thread 0 reads it at line 8 in the next iteration with no barrier between (read after write) (block of 256 from the launch at line 15): put `__syncthreads()` between them (pitfall-data-race#P2)
            "#]],
        );
        check_fix(
            RULE,
            WHILE_REDUCE,
            0,
            expect![[r#"
                // Insert `__syncthreads();` at the end of the loop body
                __global__ void reduce(float* out, const float* in) {
                    __shared__ float s[256];
                    unsigned tid = threadIdx.x;
                    s[tid] = in[blockIdx.x * 256 + tid];
                    __syncthreads();
                    unsigned k = blockDim.x / 2;
                    while (k > 0) {
                        if (tid < k) s[tid] += s[tid + k];
                        __syncthreads();
                        k >>= 1;
                    }
                    if (tid == 0) out[blockIdx.x] = s[0];
                }
                int main() {
                    float *o, *i;
                    reduce<<<128, 256>>>(o, i);
                }
            "#]],
        );
        check_messages(
            RULE,
            r#"
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    unsigned k = 128;
    do {
        if (tid < k) s[tid] += s[tid + k];
        k /= 2;
    } while (k > 0);
    if (tid == 0) out[blockIdx.x] = s[0];
}
int main() {
    float *o, *i;
    reduce<<<128, 256>>>(o, i);
}
"#,
            expect![[r#"
                warning: thread 32 updates `s[32]` at line 8 and thread 0 reads it at line 8 in the next iteration with no barrier between (read after write) (block of 256 from the launch at line 15): put `__syncthreads()` between them (pitfall-data-race#P2)
            "#]],
        );
        check(
            RULE,
            r#"
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    unsigned k = blockDim.x / 2;
    while (k > 0) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
        k >>= 1;
    }
    unsigned j = 128;
    do {
        if (tid < j) s[tid] += s[tid + j];
        __syncthreads();
        j /= 2;
    } while (j > 0);
    if (tid == 0) out[blockIdx.x] = s[0];
}
int main() {
    float *o, *i;
    reduce<<<128, 256>>>(o, i);
}
"#,
        );
    }
}
