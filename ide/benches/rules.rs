//! All rules over generated 10,000-line CUDA files: the budget is 30 ms. One file is
//! dense with pitfalls (every rule fires in every kernel), the other is the same code
//! written correctly.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use kernaut_ide::config::RulesConfig;
use kernaut_ide::gpu::Arch;
use kernaut_ide::rules::{check, RuleContext};
use kernaut_ide::syntax::SourceFile;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::Knowledge;

/// One kernel of about 50 lines that exercises every rule.
fn kernel(i: usize) -> String {
    format!(
        r#"#define TILE_{i} 32
__global__ void kernel_{i}(float* out, const float* in, int n) {{
    __shared__ float tile[TILE_{i}][TILE_{i}];
    __shared__ __half acc_h[256];
    int tx = threadIdx.x, ty = threadIdx.y;
    tile[ty][tx] = in[ty * n + tx];
    __syncthreads();
    __half acc = __float2half(0.0f);
    for (int k = 0; k < 32; ++k) {{
        acc = __hadd(acc, __float2half(tile[k][tx]));
    }}
    if (tx < 16) {{
        __syncthreads();
    }}
    float v = __shfl_down(tile[tx][ty], 1);
    #pragma unroll 32
    for (int k = 0; k < 64; ++k) {{
        v += tile[tx][k % 32] * 2.0f;
        v += tile[k % 32][tx] * 3.0f;
        v += tile[ty][k % 32] * 4.0f;
        v += tile[(k + 1) % 32][tx] * 5.0f;
        v += tile[(k + 2) % 32][tx] * 6.0f;
        v += tile[(k + 3) % 32][tx] * 7.0f;
    }}
    for (int s = 0; s < n; ++s) {{
        __pipeline_memcpy_async(&tile[ty][tx], &in[s * 32 + tx], 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        v += tile[ty][(tx + 1) % 32];
    }}
    acc_h[tx] = acc;
    out[ty * n + tx] = v + __half2float(acc_h[tx]);
}}

void launch_{i}(float* out, const float* in, int n) {{
    dim3 block(32, 8);
    kernel_{i}<<<n, block, 64 * 1024>>>(out, in, n);
}}

"#
    )
}

/// The same constructs written correctly: what most of a real file looks like.
fn clean_kernel(i: usize) -> String {
    format!(
        r#"#define TILE_{i} 32
__global__ void clean_{i}(float* out, const float* in, int n) {{
    __shared__ float tile[TILE_{i}][TILE_{i} + 1];
    __shared__ float buf[2][256];
    int tx = threadIdx.x, ty = threadIdx.y;
    tile[ty][tx] = in[ty * n + tx];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < 32; ++k) {{
        acc += tile[k][tx];
    }}
    if (tx < 16) {{
        acc *= 2.0f;
    }}
    __syncthreads();
    float v = __shfl_down_sync(0xffffffff, tile[tx][ty], 1);
    #pragma unroll 4
    for (int k = 0; k < 64; ++k) {{
        v += tile[tx][k % 32] * 2.0f;
        v += tile[k % 32][tx] * 3.0f;
    }}
    __pipeline_memcpy_async(&buf[0][tx], &in[tx], 4);
    __pipeline_commit();
    for (int s = 0; s < n; ++s) {{
        __pipeline_wait_prior(0);
        __syncthreads();
        __pipeline_memcpy_async(&buf[(s + 1) % 2][tx], &in[(s + 1) * 32 + tx], 4);
        __pipeline_commit();
        v += buf[s % 2][(tx + 1) % 256];
    }}
    out[ty * n + tx] = v + acc;
}}

void launch_clean_{i}(float* out, const float* in, int n) {{
    dim3 block(32, 8);
    clean_{i}<<<n, block, 32 * 1024>>>(out, in, n);
}}

"#
    )
}

fn generated(lines: usize) -> String {
    generated_with(lines, kernel)
}

fn generated_with(lines: usize, make: fn(usize) -> String) -> String {
    let mut text = String::from("#include <cuda_fp16.h>\n");
    let mut i = 0;
    while text.lines().count() < lines {
        text.push_str(&make(i));
        i += 1;
    }
    text
}

fn bench(c: &mut Criterion) {
    let knowledge = Knowledge::load(&WikiConfig::builtin()).expect("the built-in wiki indexes");
    let text = generated(10_000);
    let arch = Arch::parse("sm_90").expect("sm_90");
    let config = RulesConfig::default();
    // Cold: a file just parsed, with its facts (the syntax budget); the rules pay for the
    // syntax queries they share (shared accesses, each function's walk). Warm: the same
    // context again, the rules' own work. After an edit: a file whose queries were all
    // computed, edited on one line, then checked with a new context, as a server does.
    let cold = |text: &str| {
        let file = SourceFile::parse(text);
        let _ = file.facts();
        file
    };
    c.bench_function("rules/10k-lines/cold", |b| {
        b.iter_batched(
            || cold(&text),
            |file| {
                let n = check(&RuleContext::new(&file, arch, &knowledge, &config)).len();
                // Freeing the file is not the rules' work: criterion drops it untimed.
                (file, n)
            },
            BatchSize::LargeInput,
        )
    });
    // The first run on a file whose analysis is done: a server parses a file and computes
    // its facts and shared accesses (hover, inlay hints, code lenses) when it opens, then
    // runs the rules. What the rules pay here is their first run on a new file.
    c.bench_function("rules/10k-lines/first-run-after-analysis", |b| {
        b.iter_batched(
            || {
                let file = cold(&text);
                let _ = file.shared_accesses();
                file
            },
            |file| {
                let n = check(&RuleContext::new(&file, arch, &knowledge, &config)).len();
                // Freeing the file is not the rules' work: criterion drops it untimed.
                (file, n)
            },
            BatchSize::LargeInput,
        )
    });
    let file = cold(&text);
    let ctx = RuleContext::new(&file, arch, &knowledge, &config);
    check(&ctx);
    c.bench_function("rules/10k-lines/warm-context", |b| {
        b.iter(|| check(&ctx).len())
    });
    // A statement added inside a kernel in the middle of the file.
    let mid = text.len() / 2;
    let line = text[mid..]
        .find("    __syncthreads();\n")
        .map_or(mid, |i| mid + i + "    __syncthreads();\n".len());
    c.bench_function("rules/10k-lines/after-one-line-edit", |b| {
        b.iter_batched(
            || {
                let mut edited = file.clone();
                edited.apply_edit(line..line, "    int edited = 0;\n");
                edited
            },
            |edited| {
                let n = check(&RuleContext::new(&edited, arch, &knowledge, &config)).len();
                (edited, n)
            },
            BatchSize::LargeInput,
        )
    });
    let clean = generated_with(10_000, clean_kernel);
    c.bench_function("rules/10k-lines-clean/cold", |b| {
        b.iter_batched(
            || cold(&clean),
            |file| {
                let n = check(&RuleContext::new(&file, arch, &knowledge, &config)).len();
                // Freeing the file is not the rules' work: criterion drops it untimed.
                (file, n)
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
