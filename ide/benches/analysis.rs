//! Speed budgets of the analysis layer on a generated 10,000-line `.cu` file:
//! full analysis < 50 ms, re-analysis after a one-line edit < 5 ms, `symbol_at` + `hover`
//! < 1 ms. Run with `cargo bench -p kernaut-ide --bench analysis`.

use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use kernaut_ide::syntax::SourceFile;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{Analysis, AnalysisConfig, AnalysisHost, Knowledge};

/// One block of realistic code: a padded transpose, a warp reduction, a block
/// reduction, an `asm` wait and the host launches (45 lines).
fn block(i: usize) -> String {
    format!(
        r#"// Block {i}: a tiled transpose and a reduction.
#define TILE_{i} 32
__global__ void __launch_bounds__(256) transpose_{i}(float* out, const float* in, int n) {{
    __shared__ float tile[TILE_{i}][TILE_{i} + 1];
    int x = blockIdx.x * TILE_{i} + threadIdx.x;
    int y = blockIdx.y * TILE_{i} + threadIdx.y;
    for (int j = 0; j < TILE_{i}; j += 8)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE_{i} + threadIdx.x;
    y = blockIdx.x * TILE_{i} + threadIdx.y;
    for (int j = 0; j < TILE_{i}; j += 8)
        out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}}

__device__ float warp_sum_{i}(float v) {{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}}

__global__ void reduce_{i}(const float* in, float* out, int n) {{
    __shared__ float partial[32];
    float v = 0.f;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x)
        v += in[k];
    v = warp_sum_{i}(v);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {{
        v = warp_sum_{i}(partial[threadIdx.x]);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }}
}}

__device__ void wait_{i}() {{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(0));
}}

void launch_{i}(float* out, const float* in, int n) {{
    transpose_{i}<<<dim3(n / 32, n / 32), dim3(32, 8)>>>(out, in, n);
    reduce_{i}<<<128, 256>>>(in, out, n);
}}

"#
    )
}

/// A file of exactly `lines` lines made of [`block`]s.
fn generate(lines: usize) -> String {
    let mut text = String::new();
    let mut i = 0;
    while text.lines().count() < lines {
        text.push_str(&block(i));
        i += 1;
    }
    text.split_inclusive('\n').take(lines).collect()
}

/// Everything a front end computes for a file: facts, accesses, kernels, a bank report
/// per access and the occupancy of every kernel.
fn analyse(a: &Analysis, path: &str) -> usize {
    let mut n = 0;
    let Some(f) = a.file_id(path) else {
        return 0;
    };
    for acc in a.shared_accesses(f).unwrap_or(&[]) {
        n += a.bank(f, acc).ok().flatten().is_some() as usize;
    }
    for k in a.kernel_facts(f).unwrap_or_default() {
        n += a.occupancy(f, &k.function.name).ok().flatten().is_some() as usize;
    }
    n
}

fn benches(c: &mut Criterion) {
    // The benchmarks' thread cap (the library reads no environment).
    if let Some(n) = std::env::var("KERNAUT_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
    {
        kernaut_ide::syntax::cancel::set_max_threads(n);
    }
    let text = generate(10_000);
    assert_eq!(text.lines().count(), 10_000);
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).expect("the wiki loads"));
    let mut group = c.benchmark_group("analysis");
    group.sample_size(10);

    group.bench_function("full_10k_lines", |b| {
        b.iter(|| {
            let mut host = AnalysisHost::new(AnalysisConfig::default());
            host.set_file("/gen.cu", black_box(&text));
            analyse(&host.analysis(), "/gen.cu")
        })
    });

    // The same work split by stage, to see where the time goes.
    group.bench_function("stage_parse", |b| {
        b.iter(|| SourceFile::parse(black_box(&text)).has_tree())
    });
    group.bench_function("stage_facts", |b| {
        b.iter_batched(
            || SourceFile::parse(&text),
            |f| f.facts().kernels.len(),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("stage_shared_accesses", |b| {
        let f = SourceFile::parse(&text);
        f.facts();
        b.iter(|| f.shared_accesses().len())
    });
    let mut warm = AnalysisHost::new(AnalysisConfig::default());
    warm.set_file("/gen.cu", &text);
    let warm = warm.analysis();
    analyse(&warm, "/gen.cu");
    group.bench_function("stage_reports", |b| b.iter(|| analyse(&warm, "/gen.cu")));

    // A one-line edit in the middle: change a loop bound, then recompute what the editor
    // shows (facts, accesses, kernels with their reports).
    let line_start = text
        .match_indices('\n')
        .nth(5_000)
        .map_or(0, |(i, _)| i + 1);
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    let gen = host.set_file("/gen.cu", &text);
    analyse(&host.analysis(), "/gen.cu");
    let mut flip = false;
    group.bench_function("edit_one_line_and_reanalyse", |b| {
        b.iter(|| {
            flip = !flip;
            let line = if flip { "// edited\n" } else { "// again!\n" };
            let end = host
                .analysis()
                .text(gen)
                .ok()
                .and_then(|t| t[line_start..].find('\n'))
                .map_or(line_start, |e| line_start + e + 1);
            host.apply_edit("/gen.cu", line_start..end, line);
            let a = host.analysis();
            (
                a.file_facts(gen).map(|f| f.kernels.len()),
                a.shared_accesses(gen).map(<[_]>::len),
                a.kernel_facts(gen).map(|k| k.len()),
            )
        })
    });

    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge.clone());
    let gen = host.set_file("/gen.cu", &text);
    let a = host.analysis();
    analyse(&a, "/gen.cu");
    let mid = text.len() / 2;
    let shfl = mid + text[mid..].find("__shfl_xor_sync").unwrap_or(0) + 3;
    let access = mid + text[mid..].find("tile[threadIdx.x]").unwrap_or(0) + 1;
    let kernel = mid
        + text[mid..]
            .find("void __launch_bounds__(256) transpose_")
            .unwrap_or(0)
        + 30;
    group.bench_function("symbol_at_and_hover_intrinsic", |b| {
        b.iter(|| (a.symbol_at(gen, black_box(shfl)), a.hover(gen, shfl)))
    });
    group.bench_function("symbol_at_and_hover_shared_access", |b| {
        b.iter(|| (a.symbol_at(gen, black_box(access)), a.hover(gen, access)))
    });
    group.bench_function("symbol_at_and_hover_kernel", |b| {
        b.iter(|| (a.symbol_at(gen, black_box(kernel)), a.hover(gen, kernel)))
    });
    // The first hover of a new version of the file: the rules run once for it (the
    // findings on the hovered line), and later hovers and `diagnostics` reuse the run.
    let line_start = text[..shfl].rfind('\n').map_or(0, |i| i + 1);
    group.bench_function("first_hover_after_an_edit", |b| {
        let mut host = AnalysisHost::new(AnalysisConfig::default());
        host.set_knowledge(knowledge.clone());
        let gen = host.set_file("/gen.cu", &text);
        let _ = host.analysis().hover(gen, shfl);
        b.iter(|| {
            host.apply_edit("/gen.cu", line_start..line_start, " ");
            host.apply_edit("/gen.cu", line_start..line_start + 1, "");
            let a = host.analysis();
            a.hover(gen, black_box(shfl))
        })
    });
    group.finish();
}

criterion_group!(analysis, benches);
criterion_main!(analysis);
