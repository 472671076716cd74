//! On a large file the rules run on several threads. What they report must not depend on
//! that: the diagnostics of all rules together are those of each rule run alone, and two
//! runs over the same file agree.

use kernaut_ide::config::{RuleLevel, RulesConfig};
use kernaut_ide::gpu::Arch;
use kernaut_ide::rules::{check, RuleContext, RULES};
use kernaut_ide::syntax::SourceFile;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::Knowledge;

/// One kernel and its launch in which several rules find something.
fn kernel(i: usize) -> String {
    format!(
        r#"#define W_{i} 32
__global__ void k_{i}(float* out, const float* in, int n) {{
    __shared__ float t[W_{i}][W_{i}];
    __shared__ __half h[256];
    int tx = threadIdx.x, ty = threadIdx.y;
    t[ty][tx] = in[ty * n + tx];
    __syncthreads();
    __half acc = __float2half(0.0f);
    for (int k = 0; k < 32; ++k) {{
        acc = __hadd(acc, __float2half(t[k][tx]));
    }}
    if (tx < 16) {{
        __syncthreads();
    }}
    float v = __shfl_down(t[tx][ty], 1);
    #pragma unroll 32
    for (int k = 0; k < 64; ++k) {{
        v += t[tx][k % 32] * 2.0f + t[(k + 1) % 32][tx];
    }}
    for (int s = 0; s < n; ++s) {{
        __pipeline_memcpy_async(&t[ty][tx], &in[s * 32 + tx], 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        v += t[ty][(tx + 1) % 32];
    }}
    h[tx] = acc;
    out[ty * n + tx] = v + __half2float(h[tx]);
}}

void launch_{i}(float* out, const float* in, int n) {{
    k_{i}<<<n, dim3(32, 8), 64 * 1024>>>(out, in, n);
}}

"#
    )
}

#[test]
fn parallel_rules_report_what_each_rule_reports_alone() {
    let mut text = String::from("#include <cuda_fp16.h>\n");
    let mut i = 0;
    // Well past the size from which the rules share the cores.
    while text.len() < 160 * 1024 {
        text.push_str(&kernel(i));
        i += 1;
    }
    let knowledge = Knowledge::load(&WikiConfig::builtin()).expect("the built-in wiki loads");
    let arch = Arch::parse("sm_90").expect("sm_90");
    let file = SourceFile::parse(&text);
    let all_config = RulesConfig::default();
    let all = check(&RuleContext::new(&file, arch, &knowledge, &all_config));
    // A second context over the same file: the same answer, whatever ran where.
    let again = check(&RuleContext::new(&file, arch, &knowledge, &all_config));
    assert_eq!(all, again);

    let mut alone = Vec::new();
    for rule in RULES {
        let mut config = RulesConfig::default();
        for other in RULES.iter().filter(|r| r.id != rule.id) {
            config.levels.insert(other.id.to_string(), RuleLevel::Off);
        }
        // A fresh parse, so no cache filled by the other rules is reused.
        let fresh = SourceFile::parse(&text);
        alone.extend(check(&RuleContext::new(&fresh, arch, &knowledge, &config)));
    }
    alone.sort_by(|a, b| {
        (a.range.start, a.range.end, a.rule).cmp(&(b.range.start, b.range.end, b.rule))
    });
    assert_eq!(all.len(), alone.len());
    assert_eq!(all, alone);

    let mut fired: Vec<&str> = all.iter().map(|d| d.rule).collect();
    fired.sort_unstable();
    fired.dedup();
    assert!(
        fired.len() >= 6,
        "the file should make several rules fire, got {fired:?}"
    );
    assert!(
        all.len() > 5 * i,
        "{} diagnostics for {i} kernels",
        all.len()
    );
}
