//! `race/global-neighbour`: a global-memory element written by one thread and read (or
//! written) by another at another place of the same kernel, with no grid-wide barrier
//! between.
//!
//! The kernel is run for every thread of the first blocks its launch gives: `A[i] = A[i +
//! 1]` with `i` from the thread index has thread `i` reading the element thread `i + 1`
//! writes. Nothing orders the two threads (a block barrier does not order threads of
//! different blocks; only the end of the kernel or a cooperative `grid.sync()` does), so
//! the reader gets the old or the new value depending on scheduling: results that change
//! with the block size, the GPU or the run (`pitfall-data-race#P3`). The message names
//! both threads and both lines; a warning when the launch fixes everything the collision
//! needs, a hint that states the assumption otherwise; nothing for a kernel no launch
//! gives a block. A kernel that spins on memory other blocks write (`while
//! (atomicAdd(&arrived, 0) < gridDim.x) {}`, a flag handed from block to block and read
//! through `atomic…`, a `volatile` cast or an acquire load, in the kernel or a device
//! function it calls) orders its blocks in a way the model does
//! not follow: there only the threads of one block are compared. A thread that reads back
//! an element it stored itself, where every thread storing there stores the same value,
//! reads no other thread's write. There is no automatic fix: write to a second buffer
//! (ping-pong) or split the kernel at the dependency.
//!
//! ```cuda
//! // Before
//! a[i] = a[i + 1];
//! // After
//! b[i] = a[i + 1];   // then swap a and b on the host
//! ```

use super::race_findings::{context, says, severity};
use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;
use crate::races::RaceKind;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("race_global_neighbour.rs"),
    id: "race/global-neighbour",
    severity: Severity::Warning,
    wiki: &["pitfall-data-race#P3"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    for race in ctx.races().iter() {
        if race.kind != RaceKind::GlobalNeighbour {
            continue;
        }
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: severity(race, RULE.severity),
            range: race.second.range.clone(),
            message: format!(
                "{} and {} {} it at line {}{}: no grid-wide barrier orders them, so the result depends on scheduling; write to a second buffer or split the kernel",
                says(race, &race.first),
                race.thread_name(&race.second),
                race.second.op.verb(),
                race.second.line,
                context(race),
            ),
            wiki: RULE.wiki[0].to_string(),
            fixes: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_messages};

    const RULE: &str = "race/global-neighbour";

    #[test]
    fn shift_in_place() {
        check_messages(
            RULE,
            r#"
__global__ void shift(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) a[i] = a[i + 1];
}
int main() {
    float* a;
    shift<<<4, 128>>>(a, 512);
}
"#,
            expect![[r#"
                warning: thread 31 of block 0 reads `a[32]` at line 3 and thread 32 of block 0 writes it at line 3 (block of 128 from the launch at line 7): no grid-wide barrier orders them, so the result depends on scheduling; write to a second buffer or split the kernel (pitfall-data-race#P3)
            "#]],
        );
    }

    #[test]
    fn ping_pong_stays_silent() {
        check(
            RULE,
            r#"
__global__ void shift(float* b, const float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) b[i] = a[i + 1];
}
int main() {
    float *a, *b;
    shift<<<4, 128>>>(b, a, 512);
}
"#,
        );
    }

    #[test]
    fn unknown_size_is_a_hint() {
        check_messages(
            RULE,
            r#"
__global__ void shift(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) a[i] = a[i + 1];
}
int main(int argc, char** argv) {
    float* a;
    shift<<<4, 128>>>(a, argc);
}
"#,
            expect![[r#"
                hint: thread 31 of block 0 reads `a[32]` at line 3 and thread 32 of block 0 writes it at line 3 (assuming `n` = 4096, which the launch does not fix): no grid-wide barrier orders them, so the result depends on scheduling; write to a second buffer or split the kernel (pitfall-data-race#P3)
            "#]],
        );
    }

    #[test]
    fn a_hand_rolled_grid_wait_orders_the_blocks() {
        // Every block publishes its partial sum and counts itself in; block 0 spins until
        // all have arrived, then reads the partials. The spin orders the blocks, which the
        // model does not follow: nothing is said across blocks.
        check(
            RULE,
            r#"
__device__ unsigned int arrived = 0;
__global__ void combine(const float* in, float* partial, float* out) {
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = in[blockIdx.x];
        __threadfence();
        atomicAdd(&arrived, 1);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        while (atomicAdd(&arrived, 0) < gridDim.x) {
        }
        float t = 0.0f;
        for (int b = 0; b < 8; ++b) t += partial[b];
        out[0] = t;
    }
}
int main() {
    float *a, *p, *o;
    combine<<<8, 256>>>(a, p, o);
}
"#,
        );
    }

    #[test]
    fn a_wait_inside_a_helper_orders_the_blocks_but_not_the_threads_of_one() {
        // The wait is a device function's `do … while` on an atomic read of a flag.
        // Across blocks: silent; inside block 0, thread 31 still reads what thread 32
        // writes.
        check_messages(
            RULE,
            r#"
__device__ void wait_for(int* flag) {
    int f;
    do { f = atomicAdd(flag, 0); } while (f == 0);
}
__global__ void handoff(float* a, int* flag) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0) wait_for(flag + blockIdx.x - 1);
    a[i] = a[i + 1];
    __threadfence();
    flag[blockIdx.x] = 1;
}
int main() {
    float* a;
    int* f;
    handoff<<<4, 128>>>(a, f);
}
"#,
            expect![[r#"
                warning: thread 31 of block 0 reads `a[32]` at line 8 and thread 32 of block 0 writes it at line 8 (block of 128 from the launch at line 15): no grid-wide barrier orders them, so the result depends on scheduling; write to a second buffer or split the kernel (pitfall-data-race#P3)
            "#]],
        );
    }

    #[test]
    fn a_read_of_the_value_a_thread_stored_itself() {
        // Each thread of a column stores the cell's bin (the same in every layer) and
        // reads it back: no race. Reading the bin of the next cell, which another thread
        // stores, still is one.
        check_messages(
            RULE,
            r#"
__global__ void bins(const float* __restrict__ t, int* bin, float* out, float* next, int nx) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int z = threadIdx.z;
    bin[x] = int(t[x] * 0.5f);
    out[x + z * nx] = float(bin[x]);
    next[x + z * nx] = float(bin[x + 1]);
}
void run(const float* t, int* bin, float* out, float* next) {
    bins<<<dim3(4, 1, 1), dim3(32, 1, 8)>>>(t, bin, out, next, 128);
}
"#,
            expect![[r#"
                warning: thread (1,0,0) of block 0 writes `bin[1]` at line 4 and thread (0,0,1) of block 0 reads it at line 6 (block of 32×1×8 from the launch at line 9): no grid-wide barrier orders them, so the result depends on scheduling; write to a second buffer or split the kernel (pitfall-data-race#P3)
            "#]],
        );
    }
}
