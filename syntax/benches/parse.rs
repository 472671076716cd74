//! Speed of full analysis of a generated 10,000-line file, and of reanalysis after a
//! one-line edit.

use criterion::{criterion_group, criterion_main, Criterion};
use kernaut_syntax::SourceFile;

/// A 10,000-line file of transpose-like kernels, constants and launches.
fn generated() -> String {
    let mut s =
        String::from("#define TILE 32\n#define ROWS 8\nnamespace cg = cooperative_groups;\n");
    let mut i = 0;
    while s.lines().count() < 10_000 {
        s.push_str(&format!(
            "__global__ void __launch_bounds__(256, 2) k{i}(float* out, const float* in) {{\n\
             \x20   __shared__ float tile[TILE][TILE + 1];\n\
             \x20   const int tx = threadIdx.x;\n\
             \x20   int ty = threadIdx.y;\n\
             \x20   #pragma unroll\n\
             \x20   for (int j = 0; j < TILE; j += ROWS) {{\n\
             \x20       tile[ty + j][tx] = in[(blockIdx.y * TILE + ty + j) * 1024 + tx];\n\
             \x20   }}\n\
             \x20   __syncthreads();\n\
             \x20   asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(0));\n\
             \x20   out[tx] = tile[tx][ty];\n\
             }}\n\
             void launch{i}(float* o, const float* in) {{ k{i}<<<dim3(32, 32), dim3(TILE, ROWS)>>>(o, in); }}\n\n"
        ));
        i += 1;
    }
    s
}

fn bench(c: &mut Criterion) {
    // The benchmarks' thread cap (the library reads no environment).
    if let Some(n) = std::env::var("KERNAUT_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
    {
        kernaut_syntax::cancel::set_max_threads(n);
    }
    let text = generated();
    c.bench_function("parse 10k lines", |b| {
        b.iter(|| SourceFile::parse(&text).has_tree())
    });
    c.bench_function("parse+facts 10k lines", |b| {
        b.iter(|| SourceFile::parse(&text).facts().kernels.len())
    });
    c.bench_function("parse+facts+accesses 10k lines", |b| {
        b.iter(|| {
            let file = SourceFile::parse(&text);
            let n = file.facts().kernels.len();
            let a = file.shared_accesses().len();
            (n, a)
        })
    });
    // As in an editor: the facts and accesses were computed before the edit.
    let base = SourceFile::parse(&text);
    let _ = (base.facts(), base.shared_accesses());
    let at = text.len() / 2;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut flip = false;
    c.bench_function("reparse after one-line edit 10k lines", |b| {
        b.iter_batched(
            || base.clone(),
            |mut file| {
                flip = !flip;
                file.apply_edit(
                    line_start..line_start,
                    if flip { "int z;\n" } else { "// c\n" },
                );
                file
            },
            criterion::BatchSize::LargeInput,
        )
    });
    c.bench_function("reparse+facts after one-line edit 10k lines", |b| {
        b.iter_batched(
            || base.clone(),
            |mut file| {
                file.apply_edit(line_start..line_start, "int z;\n");
                file.facts().kernels.len()
            },
            criterion::BatchSize::LargeInput,
        )
    });
    c.bench_function(
        "reparse+facts+accesses after one-line edit 10k lines",
        |b| {
            b.iter_batched(
                || base.clone(),
                |mut file| {
                    file.apply_edit(line_start..line_start, "int z;\n");
                    (file.facts().kernels.len(), file.shared_accesses().len())
                },
                criterion::BatchSize::LargeInput,
            )
        },
    );
    let file = SourceFile::parse(&text);
    let _ = file.facts();
    let probe = text.find("cp.async.wait_group").unwrap_or(0) + 10;
    c.bench_function("symbol_at (facts cached) 10k lines", |b| {
        b.iter(|| file.symbol_at(probe))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
