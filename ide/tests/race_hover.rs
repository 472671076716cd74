//! Hover on an access a race rule flags: the finding comes first and names the two
//! threads and the two lines (issue 26). `check` is the only code that calls the API;
//! update the snapshots with `UPDATE_EXPECT=1 cargo test -p kernaut-ide --test race_hover`.

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

/// Hovers at the fixture's `$0` and compares the Markdown up to the first `---` (the
/// findings).
#[track_caller]
fn check(fixture: &str, expect: Expect) {
    let f = Fixture::parse(fixture);
    let file = f.single();
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    host.set_file(&file.path, &file.text);
    let analysis = host.analysis();
    let id = analysis.file_id(&file.path).expect("the file is open");
    let hover = analysis
        .hover(id, file.cursor.expect("a $0 cursor"))
        .expect("the hover query answers")
        .expect("a hover");
    let findings = hover.markdown.split("\n---\n").next().unwrap_or("");
    expect.assert_eq(&format!("{findings}\n"));
}

#[test]
fn a_two_dimensional_block_writing_one_row() {
    check(
        r#"
__global__ void rows(float* out, const float* in) {
    out[threadIdx.$0x] = in[threadIdx.y * 32 + threadIdx.x];
}
int main() {
    float *o, *i;
    rows<<<1, dim3(32, 8)>>>(o, i);
}
"#,
        expect![[r#"
            **warning** `race/same-address-write`: thread (0,1) writes `out[0]` at line 2; thread (0,0) writes it too (block of 32×8 from the launch at line 6): which value remains is undefined; let one thread store, or index by every thread dimension

            Fix: Let one thread store: `if (threadIdx.y == 0)`

            Wiki: `pitfall-data-race#P1` (Many threads store to one location (`flag = threadIdx.x`, `out[threadIdx.x]` in a 2-D block))

        "#]],
    );
}

#[test]
fn a_reduction_that_lost_its_loop_barrier() {
    check(
        r#"
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + $0k];
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
int main() {
    float *o, *i;
    reduce<<<128, 256>>>(o, i);
}
"#,
        expect![[r#"
            **warning** `race/shared-missing-barrier`: thread 32 updates `s[32]` at line 7 and thread 0 reads it at line 7 in the next iteration with no barrier between (read after write) (block of 256 from the launch at line 13): put `__syncthreads()` between them

            Fix: Insert `__syncthreads();` at the end of the loop body

            Wiki: `pitfall-data-race#P2` (A shared-memory tile read before it is written, or overwritten while others still read it)

        "#]],
    );
}
