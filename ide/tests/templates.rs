//! Template kernels in the editor features: the code lens, the inlay hints and the
//! outline show the sizes and launch bounds of the instantiation the file launches, the
//! same numbers as the kernel hover (all of them come from `Analysis::occupancy` and
//! `kernaut_ide::instances`).

use expect_test::{expect, Expect};
use kernaut_ide::editor::InlayConfig;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};
use std::sync::{Arc, OnceLock};

const LAUNCHED: &str = r#"
template <int BM, int BN>
__global__ void __launch_bounds__(BM * BN / 4) tk(const float* in, float* out) {
    __shared__ float t[BM][BN];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
void run(const float* in, float* out, dim3 block) {
    tk<64, 64><<<1, block>>>(in, out);
}
"#;

/// The lens titles, the shared-bytes hints and the outline's shared items of `text`.
fn check(text: &str, expect: Expect) {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    let f = host.set_file("/t.cu", text);
    let a = host.analysis();
    let mut out = String::new();
    for l in a.code_lenses(f).unwrap() {
        let occ = a.occupancy(f, &l.kernel).unwrap();
        assert_eq!(l.report, occ, "the lens shows the occupancy query's report");
        out.push_str(&format!("lens {}: {}\n", l.kernel, l.title));
    }
    let hints = InlayConfig {
        shared_bytes: true,
        bank_conflicts: false,
    };
    for h in a.inlay_hints(f, None, hints).unwrap() {
        out.push_str(&format!("hint{} {} ({})\n", h.offset, h.label, h.tooltip));
    }
    for item in a.outline(f).unwrap() {
        for c in &item.children {
            out.push_str(&format!("outline {}: {}\n", c.name, c.detail));
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn launched_template_kernel_shows_its_bound_sizes_and_launch_bounds() {
    check(
        LAUNCHED,
        expect![[r#"
        lens tk: occupancy 100% · 2 blocks/SM (1024 threads from __launch_bounds__, ~32 regs, 16 KiB on sm_90)
        hint138 : 16 KiB (`t` takes 16384 bytes of shared memory per block with `BM = 64, BN = 64`, the instantiation the file launches)
        outline t: __shared__ float[BM][BN] · 16 KiB
    "#]],
    );
}

#[test]
fn template_kernel_never_launched_shows_no_size() {
    let text = LAUNCHED.replace("tk<64, 64><<<1, block>>>(in, out);", "");
    check(
        &text,
        expect![[r#"
        lens tk: occupancy 100% · 8 blocks/SM (256 threads assumed, ~32 regs, 0 B on sm_90)
        outline t: __shared__ float[BM][BN]
    "#]],
    );
}

/// The severities and endings of the diagnostics of each file of a host holding `files`.
fn diagnostics(files: &[(&str, &str)]) -> String {
    static K: OnceLock<Arc<Knowledge>> = OnceLock::new();
    let k = K
        .get_or_init(|| Arc::new(Knowledge::load(&WikiConfig::builtin()).expect("the wiki loads")));
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(k.clone());
    let ids: Vec<_> = files
        .iter()
        .map(|(p, t)| (*p, host.set_file(p, t)))
        .collect();
    let a = host.analysis();
    let mut out = String::new();
    for (p, f) in ids {
        for d in a.diagnostics(f).unwrap() {
            let tail = d
                .message
                .rfind(" (a hint only")
                .map_or("", |i| &d.message[i..]);
            out.push_str(&format!("{p} {} {}{tail}\n", d.severity.as_str(), d.rule));
        }
    }
    out
}

const UNLAUNCHED_TAIL: &str = r#"
template <unsigned B>
__global__ void tail_sum(const int* in, int* out) {
    __shared__ int s[B];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * B + t];
    __syncthreads();
    if (t < 32) {
        volatile int* v = s;
        v[t] += v[t + 32];
        v[t] += v[t + 16];
        v[t] += v[t + 8];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
"#;

/// nvcc emits code for a kernel template only where it is instantiated: in a source file
/// that neither launches nor instantiates it, its findings are hints that say so; in a
/// header, the files that include it instantiate it (here `/main.cu`, which launches it).
#[test]
fn findings_in_kernel_templates_nothing_instantiates_are_hints() {
    // (A forward declaration of the template declares it; it instantiates nothing.)
    let unlaunched = format!(
        "template <unsigned B> __global__ void draft_sum(const int* in, int* out);\n{}void run() {{ /* draft_sum<64><<<8, 64>>>(0, 0); */ }}\n",
        UNLAUNCHED_TAIL.replace("tail_sum", "draft_sum")
    );
    let launched = "#include \"tail.cuh\"\nvoid run(const int* in, int* out) { tail_sum<64><<<8, 64>>>(in, out); }\n";
    expect![[r#"
        /draft.cu hint warp/implicit-warp-synchronous (a hint only: no code this file compiles launches or instantiates the template `draft_sum`, and nvcc emits code for a kernel template only where it is instantiated)
        /tail.cuh warning warp/implicit-warp-synchronous
    "#]]
    .assert_eq(&diagnostics(&[
        ("/draft.cu", &unlaunched),
        ("/tail.cuh", UNLAUNCHED_TAIL),
        ("/main.cu", launched),
    ]));
}

/// A kernel template launched only inside a host function template that nothing in the
/// file instantiates has no code either (`entropy<T>` is never called); once `main`
/// calls `entropy<float>`, the launch in it instantiates the kernel.
#[test]
fn a_launch_inside_a_host_template_nothing_instantiates_instantiates_nothing() {
    let source = |main: &str| {
        format!(
            r#"
template <class T>
__global__ void entropy_kernel(const T* data, float* result, int size) {{
    extern __shared__ float w[];
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < size) {{
        w[threadIdx.x] = float(data[idx]);
        __syncthreads();
    }}
    atomicAdd(result, w[127 - threadIdx.x]);
}}
template <class T>
void entropy(const T* d, float* r, int n) {{
    entropy_kernel<<<(n + 127) / 128, 128, 128 * sizeof(float)>>>(d, r, n);
}}
int main() {{ {main} return 0; }}
"#
        )
    };
    expect![[r#"
        /unused.cu hint sync/barrier-in-divergent-branch (a hint only: no code this file compiles launches or instantiates the template `entropy_kernel`, and nvcc emits code for a kernel template only where it is instantiated)
    "#]]
    .assert_eq(&diagnostics(&[("/unused.cu", &source(""))]));
    expect![[r#"
        /used.cu warning sync/barrier-in-divergent-branch
    "#]]
    .assert_eq(&diagnostics(&[(
        "/used.cu",
        &source("entropy<float>(0, 0, 4096);"),
    )]));
}
