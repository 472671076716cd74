//! Template kernels in the editor features: the code lens, the inlay hints and the
//! outline show the sizes and launch bounds of the instantiation the file launches, the
//! same numbers as the kernel hover (all of them come from `Analysis::occupancy` and
//! `kernaut_ide::instances`).

use expect_test::{expect, Expect};
use kernaut_ide::editor::InlayConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost};

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
