//! `race/same-address-write`: one store, `++` or `+=` executed by several threads of a
//! launch at the same address, with nothing ordering them.
//!
//! The kernel is run for every thread of the blocks its launches give: when two different
//! threads execute the same non-atomic store at one address, one value is lost (`=`:
//! which thread's value remains is undefined; `++`/`+=`: an increment disappears).
//! Typical causes: a `__shared__` scalar written by every thread (`flag = threadIdx.x`),
//! an index that ignores a dimension of the block (`out[threadIdx.x]` in a 2-D block,
//! every `y` row writes the same elements) or the grid (`out[threadIdx.x]` in every
//! block), a shared histogram bumped with `++`. The message names the two threads and the
//! line (`pitfall-data-race#P1`). A warning when the launch fixes everything the
//! collision needs; a hint stating the assumption when it needs a kernel argument the
//! launch does not fold; nothing for a kernel no launch gives a block (its shape decides
//! which threads collide). An increment at an index loaded from memory
//! (`hist[in[i] % 256]++`) is a hint: which threads collide depends on the data
//! (`pitfall-data-race#P4`). A store of one constant from every thread (`found = 1;`) is
//! a formal race whose result is the same whichever thread wins; it is not reported.
//!
//! Fixes: an atomic for `++`, `--`, `+=`, `-=`, `|=`, `&=`, `^=`; for `=`, a guard that lets
//! one thread store (`if (threadIdx.y == 0)`) when the two threads differ only in
//! dimensions the index does not use.
//!
//! ```cuda
//! // Before (block 32×8)
//! out[threadIdx.x] = v;
//! __shared__ int hist[256];
//! hist[bin]++;
//! // After
//! if (threadIdx.y == 0) out[threadIdx.x] = v;
//! atomicAdd(&hist[bin], 1);
//! ```

use super::race_findings::{atomic_fix, context, says, severity, single_thread_fix};
use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;
use crate::races::{Op, RaceKind};

pub(crate) const RULE: Rule = Rule {
    source: include_str!("race_same_address_write.rs"),
    id: "race/same-address-write",
    severity: Severity::Warning,
    wiki: &["pitfall-data-race#P1", "pitfall-data-race#P4"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let text = ctx.text();
    for race in ctx.races().iter() {
        let (message, wiki, severity) = match race.kind {
            RaceKind::SameAddressWrite => {
                let (what, cure) = if race.second.op == Op::Write {
                    (
                        "which value remains is undefined",
                        "let one thread store, or index by every thread dimension",
                    )
                } else {
                    ("one update is lost", "use an atomic")
                };
                let grid = if race.first.thread == race.second.thread {
                    " (the index does not use `blockIdx`)"
                } else {
                    ""
                };
                (
                    format!(
                        "{}; {} {} it too{grid}{}: {what}; {cure}",
                        says(race, &race.second),
                        race.thread_name(&race.first),
                        race.first.op.verb(),
                        context(race),
                    ),
                    RULE.wiki[0],
                    severity(race, RULE.severity),
                )
            }
            RaceKind::DataDependentUpdate => (
                format!(
                    "`{}` is updated by every thread at an index loaded from memory: two threads with the same `{}` lose an update; use an atomic",
                    text.get(race.second.range.clone()).unwrap_or(""),
                    race.second.index_text,
                ),
                RULE.wiki[1],
                Severity::Hint,
            ),
            _ => continue,
        };
        let fixes = match race.second.op {
            Op::Write => single_thread_fix(text, race),
            _ => atomic_fix(text, &race.second),
        };
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity,
            range: race.second.range.clone(),
            message,
            wiki: wiki.to_string(),
            fixes: fixes.into_iter().collect(),
        });
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages, check_no_fix};

    const RULE: &str = "race/same-address-write";

    #[test]
    fn row_index_in_a_two_dimensional_block() {
        check_messages(
            RULE,
            r#"
__global__ void rows(float* out, const float* in) {
    out[threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
}
int main() {
    float *o, *i;
    rows<<<1, dim3(32, 8)>>>(o, i);
}
"#,
            expect![[r#"
                warning: thread (0,1) writes `out[0]` at line 2; thread (0,0) writes it too (block of 32×8 from the launch at line 6): which value remains is undefined; let one thread store, or index by every thread dimension (pitfall-data-race#P1)
            "#]],
        );
    }

    /// Threads that store to one element store the same value where the value follows
    /// the element: `out[i] = a[i] + b[i]` (`a`, `b` never written), `sh[lane][0] =
    /// lane`, a tile row copied by the rows of a block that overlap (`buf[threadIdx.x][r]
    /// = in[(… + r) * n + threadIdx.x]`), or where it is one value for every thread (a
    /// member of one element, `items[*at].key`). All are defined (redundant work, not a
    /// race). A value that reads the thread some other way stays a race.
    #[test]
    fn the_same_value_at_the_same_element_is_no_race() {
        check(
            RULE,
            r#"
__global__ void add(const float* a, const float* b, float* out, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    while (i < n) {
        out[i] = a[i] + b[i];
        i += blockDim.x;
    }
}
__global__ void init_col(float* out) {
    __shared__ float sh[32][32];
    int lane = threadIdx.x % 32;
    sh[lane][0] = static_cast<float>(lane);
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = sh[(lane + 1) % 32][0];
}
__global__ void owner(float* out) {
    int lane = threadIdx.x % 32;
    out[lane] = threadIdx.x;
 // ^^^^^^^^^ warning: thread 32 writes `out[0]` at line 17; thread 0 writes it too
}
struct Pos { float x; float y; };
struct Item { float key; Pos best; };
__global__ void pick(const Item* items, const int* at, float* out) {
    __shared__ float chosen, x;
    chosen = items[*at].key;
    x = items[*at].best.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = chosen;
}
__global__ void copy_tile(const float* in, float* out, int n) {
    __shared__ float buf[32][33];
    for (int r = threadIdx.y; r < 32; r += 8)
        buf[threadIdx.x][r] = in[(blockIdx.y * 32 + r) * n + threadIdx.x];
    __syncthreads();
    out[(blockIdx.y * 32 + threadIdx.y) * n + blockIdx.x * 4 + threadIdx.x] = buf[threadIdx.x][threadIdx.y];
}
int main() {
    add<<<32, 32>>>(nullptr, nullptr, nullptr, 4096);
    init_col<<<4, 256>>>(nullptr);
    owner<<<1, 64>>>(nullptr);
    pick<<<4, 32>>>(nullptr, nullptr, nullptr);
    copy_tile<<<dim3(8, 8), dim3(4, 32)>>>(nullptr, nullptr, 256);
}
"#,
        );
    }

    /// A value that reads only an axis the launch's block leaves at one thread is the
    /// same in every thread: `in[row * n]` with `row` built on `threadIdx.y` in a block of
    /// 64 × 1. In a 16 × 4 block `row` takes four values: the witness is a pair of
    /// threads that store two of them, not two of one row.
    #[test]
    fn an_axis_of_one_thread_stores_one_value() {
        check(
            RULE,
            r#"
__global__ void row_first(const float* in, float* out, int n) {
    __shared__ float m;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    m = in[row * n];
    __syncthreads();
    if (threadIdx.x == 0) out[row] = m;
}
__global__ void rows_first(const float* in, float* out, int n) {
    __shared__ int m;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    m = row;
 // ^ warning: thread (0,1) writes `m` at line 11; thread (0,0) writes it too
    __syncthreads();
    if (threadIdx.x == 0) out[row] = m;
}
void run(const float* in, float* out) {
    row_first<<<dim3(1, 8), dim3(64, 1)>>>(in, out, 1024);
    rows_first<<<dim3(1, 8), dim3(16, 4)>>>(in, out, 1024);
}
"#,
        );
    }

    /// Threads that differ only in `z` compute one cell's bin from the cell's input (a
    /// clamped load of an array the kernel never writes, through pure math) and store it:
    /// the same bits whichever lands last, and each thread then reads the value it stored.
    /// Where the stored value reads `z` too, the threads store different bins.
    #[test]
    fn a_value_loaded_at_the_cells_index_is_the_same_in_every_layer() {
        check(
            RULE,
            r#"
__global__ void bins(const float* __restrict__ t, int* bin, float* out, int nx, int nbin) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    int cell = x;
    const float level = (t[cell] * 0.5f - t[0]) / 2.0f;
    bin[cell] = min(nbin - 2, max(0, int(level)));
    out[cell + z * nx] = t[cell] - float(bin[cell]);
}
__global__ void layered(const float* __restrict__ t, int* bin, float* out, int nx, int nbin) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    bin[x] = min(nbin - 2, max(0, int(t[x + z * nx] * 0.5f)));
 // ^^^^^^ warning: thread (0,0,1) of block 0 writes `bin[0]` at line 12; thread (0,0,0) of block 0 writes it too
    out[x + z * nx] = float(bin[x]);
}
void run(const float* t, int* bin, float* out) {
    bins<<<dim3(4, 1, 2), dim3(32, 1, 8)>>>(t, bin, out, 128, 16);
    layered<<<dim3(4, 1, 2), dim3(32, 1, 8)>>>(t, bin, out, 128, 16);
}
"#,
        );
    }

    /// A bounds check written as an early exit over a disjunction (`if (x >= nx || z >=
    /// nz) return;`) decides the path as its conjunction twin does: the layers of one
    /// column add into one cell either way.
    #[test]
    fn an_early_exit_on_a_disjunction_is_a_decided_guard() {
        let kernel = |guard: &str, body: &str| {
            format!(
                r#"
__global__ void acc(const float* __restrict__ v, float* out, int nx, int nz) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int z = threadIdx.z;
    {guard}
    {body}
}}
void run(const float* v, float* out) {{
    acc<<<dim3(4, 1, 1), dim3(32, 1, 8)>>>(v, out, 128, 8);
}}
"#
            )
        };
        check_messages(
            RULE,
            &kernel(
                "if (x >= nx || z >= nz) return;",
                "out[x] = out[x] + v[x + z * nx];",
            ),
            expect![[r#"
                warning: thread (0,0,1) of block 0 writes `out[0]` at line 5; thread (0,0,0) of block 0 writes it too (block of 32×1×8 from the launch at line 8): which value remains is undefined; let one thread store, or index by every thread dimension (pitfall-data-race#P1)
            "#]],
        );
        check_messages(
            RULE,
            &kernel("if (x < nx && z < nz)", "out[x] = out[x] + v[x + z * nx];"),
            expect![[r#"
                warning: thread (0,0,1) of block 0 writes `out[0]` at line 5; thread (0,0,0) of block 0 writes it too (block of 32×1×8 from the launch at line 8): which value remains is undefined; let one thread store, or index by every thread dimension (pitfall-data-race#P1)
            "#]],
        );
    }

    #[test]
    fn shared_scalar_and_histogram() {
        check(
            RULE,
            r#"
__global__ void hist(int* out, const int* in, int n) {
    __shared__ int flag;
    __shared__ int bins[256];
    flag = threadIdx.x;
 // ^^^^ warning: thread 1 writes `flag` at line 4; thread 0 writes it too
    bins[threadIdx.x % 16]++;
 // ^^^^^^^^^^^^^^^^^^^^^^ warning: thread 16 updates `bins[0]` at line 5; thread 0 updates it too
    bins[in[threadIdx.x] & 255] += 1;
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: `bins[in[threadIdx.x] & 255]` is updated by every thread
}
int main() {
    int *o, *i;
    hist<<<4, 256>>>(o, i, 1024);
}
"#,
        );
    }

    /// The clean twins: one thread stores, every dimension indexes, atomics, one constant,
    /// one value loaded at an address that reads no thread index.
    #[test]
    fn a_local_assigned_again_is_valued_by_the_lowering() {
        // `i = i / 2` is the last assignment every thread runs before the store, so the
        // index is `threadIdx.x / 2` (as the bank model reads it): threads 0 and 1 write
        // `s[0]`. `j`, set again under a thread condition, has no value: silent.
        check_messages(
            RULE,
            r#"
__global__ void halve(float* out) {
    __shared__ float s[128];
    int i = threadIdx.x;
    i = i / 2;
    s[i] = threadIdx.x;
    int j = threadIdx.x;
    if (threadIdx.x > 0) j = 0;
    s[64 + j] = threadIdx.x;
    out[threadIdx.x] = 0.0f;
}
int main() {
    float* o;
    halve<<<1, 64>>>(o);
}
"#,
            expect![[r#"
                warning: thread 1 writes `s[0]` at line 5; thread 0 writes it too (block of 64 from the launch at line 13): which value remains is undefined; let one thread store, or index by every thread dimension (pitfall-data-race#P1)
            "#]],
        );
    }

    #[test]
    fn a_tile_rank_repeats_in_every_warp() {
        // `tile.thread_rank()` of a 32-thread tile lowers to the linear index modulo 32:
        // warps 0 and 1 write the same 32 slots; the block's rank is one slot per thread.
        check_messages(
            RULE,
            r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void ranks(float* out) {
    __shared__ float s[64];
    __shared__ float t[64];
    auto block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    s[tile.thread_rank()] = threadIdx.x;
    t[block.thread_rank()] = threadIdx.x;
    out[threadIdx.x] = 0.0f;
}
int main() {
    float* o;
    ranks<<<1, 64>>>(o);
}
"#,
            expect![[r#"
                warning: thread 32 writes `s[0]` at line 8; thread 0 writes it too (block of 64 from the launch at line 14): which value remains is undefined; let one thread store, or index by every thread dimension (pitfall-data-race#P1)
            "#]],
        );
    }

    #[test]
    fn clean_twins_stay_silent() {
        check(
            RULE,
            r#"
__global__ void clean(float* out, int* count, const float* in) {
    __shared__ int flag;
    __shared__ int bins[256];
    if (threadIdx.x == 0 && threadIdx.y == 0) flag = 7;
    out[(blockIdx.x * blockDim.y + threadIdx.y) * 32 + threadIdx.x] = in[threadIdx.x];
    atomicAdd(&bins[threadIdx.x % 16], 1);
    if (threadIdx.y == 0) out[threadIdx.x] = 1.0f;
    count[0] = 1;
}
__global__ void coefficients(const float* coef, float* y) {
    __shared__ float c[2];
    c[0] = coef[2 * blockIdx.y];
    c[1] = coef[2 * blockIdx.y + 1] * 0.5f;
    __syncthreads();
    y[blockIdx.y * 256 + threadIdx.x] = c[0] + c[1];
}
__global__ void per_thread(const float* coef, float* y) {
    __shared__ float c[1];
    c[0] = coef[threadIdx.x];
 // ^^^^ warning: thread 1 writes `c[0]` at line 19; thread 0 writes it too
    __syncthreads();
    y[threadIdx.x] = c[0];
}
int main() {
    float *o, *i; int* c;
    clean<<<4, dim3(32, 8)>>>(o, c, i);
    coefficients<<<dim3(4, 90), 256>>>(i, o);
    per_thread<<<1, 256>>>(i, o);
}
"#,
        );
    }

    /// An argument the launch does not fold is sampled: a hint that names it. Without a
    /// launch there is no block shape, and no finding.
    #[test]
    fn unknown_shape_or_argument() {
        check_messages(
            RULE,
            r#"
__global__ void scalar(int* out, int n) {
    __shared__ int last;
    if (threadIdx.x < n) last = threadIdx.x;
    if (threadIdx.x == 0) out[blockIdx.x] = last;
}
int main(int argc, char** argv) {
    int* o;
    scalar<<<1, 64>>>(o, argc);
}
"#,
            expect![[r#"
                hint: thread 1 writes `last` at line 3; thread 0 writes it too (assuming `n` = 4096, which the launch does not fix): which value remains is undefined; let one thread store, or index by every thread dimension (pitfall-data-race#P1)
            "#]],
        );
        check(
            RULE,
            r#"
__global__ void scalar(int* out) {
    __shared__ int last;
    last = threadIdx.x;
    out[0] = last;
}
"#,
        );
    }

    #[test]
    fn every_block_writes_the_same_elements() {
        check_messages(
            RULE,
            r#"
__global__ void copy(float* out, const float* in) {
    out[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
}
int main() {
    float *o, *i;
    copy<<<64, 128>>>(o, i);
}
"#,
            expect![[r#"
                warning: thread 0 of block 1 writes `out[0]` at line 2; thread 0 of block 0 writes it too (the index does not use `blockIdx`) (block of 128 from the launch at line 6): which value remains is undefined; let one thread store, or index by every thread dimension (pitfall-data-race#P1)
            "#]],
        );
        check_no_fix(
            RULE,
            r#"
__global__ void copy(float* out, const float* in) {
    out[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
}
int main() {
    float *o, *i;
    copy<<<64, 128>>>(o, i);
}
"#,
        );
    }

    #[test]
    fn fixes() {
        check_fix(
            RULE,
            r#"
__global__ void rows(float* out, const float* in) {
    out[threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
}
int main() {
    float *o, *i;
    rows<<<1, dim3(32, 8)>>>(o, i);
}
"#,
            0,
            expect![[r#"
                // Let one thread store: `if (threadIdx.y == 0)`
                __global__ void rows(float* out, const float* in) {
                    if (threadIdx.y == 0) out[threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
                }
                int main() {
                    float *o, *i;
                    rows<<<1, dim3(32, 8)>>>(o, i);
                }
            "#]],
        );
        check_fix(
            RULE,
            r#"
__global__ void hist(int* out, const int* in) {
    __shared__ int bins[16];
    bins[threadIdx.x % 16] += in[threadIdx.x];
}
int main() {
    int *o, *i;
    hist<<<1, 64>>>(o, i);
}
"#,
            0,
            expect![[r#"
                // Make it `atomicAdd(&bins[threadIdx.x % 16], in[threadIdx.x])`
                __global__ void hist(int* out, const int* in) {
                    __shared__ int bins[16];
                    atomicAdd(&bins[threadIdx.x % 16], in[threadIdx.x]);
                }
                int main() {
                    int *o, *i;
                    hist<<<1, 64>>>(o, i);
                }
            "#]],
        );
    }
}
