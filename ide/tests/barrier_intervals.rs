//! The barrier intervals of the kernel at the cursor (issue 26): what opens and closes
//! each, the accesses in it, and which race with another access of the same interval.
//! `check` is the only code that calls the API; update the snapshots with
//! `UPDATE_EXPECT=1 cargo test -p kernaut-ide --test barrier_intervals`.

use std::fmt::Write;
use std::sync::{Arc, OnceLock};

use expect_test::{expect, Expect};
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};
use kernaut_test_utils::Fixture;

fn knowledge() -> Arc<Knowledge> {
    static K: OnceLock<Arc<Knowledge>> = OnceLock::new();
    K.get_or_init(|| Arc::new(Knowledge::load(&WikiConfig::builtin()).expect("the wiki loads")))
        .clone()
}

/// The intervals of the kernel around the fixture's `$0`, one block per interval.
#[track_caller]
fn check(fixture: &str, expect: Expect) {
    let f = Fixture::parse(fixture);
    let file = f.single();
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    host.set_file(&file.path, &file.text);
    let analysis = host.analysis();
    let id = analysis.file_id(&file.path).expect("the file is open");
    let cursor = file.cursor.expect("a $0 cursor");
    let kernel = analysis
        .kernel_at(id, cursor)
        .unwrap()
        .expect("a kernel at the cursor");
    let Some(b) = analysis.barrier_intervals(id, &kernel).unwrap() else {
        expect.assert_eq("(not modelled)\n");
        return;
    };
    let mut out = String::new();
    let _ = writeln!(out, "kernel {} (launched: {})", b.kernel, b.launched);
    for x in &b.barriers {
        let _ = writeln!(
            out,
            "barrier line {}: {} ({})",
            x.line,
            x.text,
            x.scope.as_str()
        );
    }
    for (n, i) in b.intervals.iter().enumerate() {
        let closes: Vec<String> = i.closes.iter().map(|e| b.edge_name(*e)).collect();
        let _ = writeln!(
            out,
            "{}. {} -> {}",
            n + 1,
            b.edge_name(i.opens),
            closes.join(" | ")
        );
        for a in &i.accesses {
            let mark = if a.conflicts.is_empty() { " " } else { "!" };
            let _ = writeln!(out, "  {mark} {} {} {} {}", a.line, a.op, a.space, a.text);
            for c in &a.conflicts {
                let _ = writeln!(out, "      {c}");
            }
        }
        for w in &i.warp_barriers {
            let _ = writeln!(
                out,
                "    warp barrier: {}",
                b.edge_name(kernaut_ide::barrier_intervals::Edge::Barrier(*w))
            );
        }
    }
    expect.assert_eq(&out);
}

/// The prefetch writes the buffer the loop reads: both are in the interval the loop's
/// barrier opens (around the back edge) and the one the barrier before the loop opens.
#[test]
fn a_double_buffer_that_prefetches_into_the_buffer_being_read() {
    check(
        r#"
#define TILE 64
#define STEPS 16
__global__ void dot$0_tiles(float* out, const float* x, const float* w) {
    __shared__ float buf[2][TILE];
    int tid = threadIdx.x;
    float acc = 0.0f;
    buf[0][tid] = x[tid];
    __syncthreads();
    for (int t = 0; t < STEPS; ++t) {
        if (t + 1 < STEPS) buf[t % 2][tid] = x[(t + 1) * TILE + tid];
        for (int k = 0; k < TILE; ++k) acc += buf[t % 2][k] * w[k];
        __syncthreads();
    }
    out[blockIdx.x * TILE + tid] = acc;
}
int main() {
    float *x, *w, *out;
    dot_tiles<<<4, TILE>>>(out, x, w);
}
"#,
        expect![[r#"
            kernel dot_tiles (launched: true)
            barrier line 8: __syncthreads() (block)
            barrier line 12: __syncthreads() (block)
            1. kernel entry -> __syncthreads() (line 8)
                7 writes shared buf[0][tid]
            2. __syncthreads() (line 8) -> __syncthreads() (line 12)
              ! 10 writes shared buf[t % 2][tid]
                  thread 0 writes `buf[0][0]` at line 10 and thread 32 reads it at line 11
              ! 11 reads shared buf[t % 2][k]
                  thread 0 writes `buf[0][0]` at line 10 and thread 32 reads it at line 11
            3. __syncthreads() (line 12) -> __syncthreads() (line 12) | kernel exit
              ! 10 writes shared buf[t % 2][tid]
                  thread 0 writes `buf[0][0]` at line 10 and thread 32 reads it at line 11
              ! 11 reads shared buf[t % 2][k]
                  thread 0 writes `buf[0][0]` at line 10 and thread 32 reads it at line 11
                14 writes global out[blockIdx.x * TILE + tid]
        "#]],
    );
}

/// The fixed loop: the reads and the next prefetch are in different intervals, and no
/// access is marked.
#[test]
fn a_tiled_loop_with_both_barriers() {
    check(
        r#"
#define TILE 64
__global__ void sum$0_tiles(float* out, const float* x, int steps) {
    __shared__ float tile[TILE];
    int tid = threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < 4; ++t) {
        tile[tid] = x[t * TILE + tid];
        __syncthreads();
        acc += tile[(tid + 1) % TILE];
        __syncthreads();
    }
    out[blockIdx.x * TILE + tid] = acc;
}
int main() {
    float *x, *out;
    sum_tiles<<<4, TILE>>>(out, x, 4);
}
"#,
        expect![[r#"
            kernel sum_tiles (launched: true)
            barrier line 8: __syncthreads() (block)
            barrier line 10: __syncthreads() (block)
            1. kernel entry -> __syncthreads() (line 8)
                7 writes shared tile[tid]
            2. __syncthreads() (line 8) -> __syncthreads() (line 10)
                9 reads shared tile[(tid + 1) % TILE]
            3. __syncthreads() (line 10) -> __syncthreads() (line 8) | kernel exit
                7 writes shared tile[tid]
                12 writes global out[blockIdx.x * TILE + tid]
        "#]],
    );
}

/// One interval, and the store that every `y` thread repeats.
#[test]
fn a_two_dimensional_block_writing_one_row() {
    check(
        r#"
__global__ void ro$0ws(float* out, const float* in) {
    out[threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
}
int main() {
    float *o, *i;
    rows<<<1, dim3(32, 8)>>>(o, i);
}
"#,
        expect![[r#"
            kernel rows (launched: true)
            1. kernel entry -> kernel exit
              ! 2 writes global out[threadIdx.x]
                  thread (0,0) writes `out[0]` at line 2; thread (0,1) writes it too
        "#]],
    );
}

/// A warp barrier is listed inside the interval; it closes nothing. Without a launch the
/// race model does not run, and nothing is marked.
#[test]
fn a_warp_barrier_and_no_launch() {
    check(
        r#"
__global__ void warp$0_sum(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncwarp();
    if (threadIdx.x < 16) s[threadIdx.x] += s[threadIdx.x + 16];
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
"#,
        expect![[r#"
            kernel warp_sum (launched: false)
            barrier line 4: __syncwarp() (warp)
            barrier line 6: __syncthreads() (block)
            1. kernel entry -> __syncthreads() (line 6)
                3 writes shared s[threadIdx.x]
                5 updates shared s[threadIdx.x]
                5 reads shared s[threadIdx.x + 16]
                warp barrier: __syncwarp() (line 4)
            2. __syncthreads() (line 6) -> kernel exit
                7 writes global out[blockIdx.x]
                7 reads shared s[0]
        "#]],
    );
}
