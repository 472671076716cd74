//! Index build and query latency: the built-in wiki, a generated 5,000-page wiki,
//! symptom queries and symbol look-ups.

use criterion::{criterion_group, criterion_main, Criterion};
use kernaut_index::{SearchOptions, WikiIndex};
use kernaut_wiki::{Wiki, WikiConfig};

const WORDS: &[&str] = &[
    "kernel",
    "slower",
    "shared",
    "memory",
    "bank",
    "conflict",
    "warp",
    "register",
    "spill",
    "occupancy",
    "latency",
    "throughput",
    "async",
    "copy",
    "pipeline",
    "barrier",
    "stall",
    "divergence",
    "atomic",
    "contention",
    "tile",
    "padding",
    "vector",
    "load",
    "store",
    "cache",
    "global",
    "coalesced",
    "stride",
    "unroll",
    "accumulator",
    "overflow",
    "fp16",
    "bf16",
    "tensor",
    "fragment",
    "launch",
    "bounds",
    "cluster",
    "fence",
];

/// A wiki of `n` generated pages: a third pitfall pages with five pitfalls each.
fn generated(n: usize) -> Vec<(String, String)> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut word = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        WORDS[(seed % WORDS.len() as u64) as usize]
    };
    (0..n)
        .map(|i| {
            let mut text = String::new();
            if i % 3 == 0 {
                text.push_str(&format!(
                    "---\nid: pitfall-gen-{i}\ntype: pitfall\ntitle: Generated pitfalls {i}\nrelated_apis: [__syncthreads]\n---\n"
                ));
                for p in 1..=5 {
                    let sentence: Vec<&str> = (0..24).map(|_| word()).collect();
                    text.push_str(&format!(
                        "## P{p}: {} {}\n**Symptom**: {}\n\n**Cause**: {}\n\n**Fix**: {}\n\n**Detection**: {}\n\n",
                        word(),
                        word(),
                        sentence[..8].join(" "),
                        sentence[8..16].join(" "),
                        sentence[16..].join(" "),
                        word()
                    ));
                }
            } else {
                text.push_str(&format!(
                    "---\nid: skill-gen-{i}\ntype: skill\ntitle: Generated skill {i}\n---\n## What\n"
                ));
                for _ in 0..120 {
                    text.push_str(word());
                    text.push(' ');
                }
                text.push_str("\n\n### S1. Sub-skill\n");
                for _ in 0..60 {
                    text.push_str(word());
                    text.push(' ');
                }
                text.push('\n');
            }
            (format!("gen/{i}.md"), text)
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let builtin = Wiki::load(&WikiConfig::builtin());
    c.bench_function("index build: built-in wiki", |b| {
        b.iter(|| WikiIndex::build(&builtin).expect("index"))
    });
    let files = generated(5_000);
    let big = Wiki::from_files(files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let mut g = c.benchmark_group("big");
    g.sample_size(10);
    g.bench_function("index build: 5,000 generated pages", |b| {
        b.iter(|| WikiIndex::build(&big).expect("index"))
    });
    g.finish();

    let index = WikiIndex::build(&builtin).expect("index");
    let opts = SearchOptions::default();
    c.bench_function("query: symptom, built-in wiki", |b| {
        b.iter(|| index.search("my async-copy version is slower than the plain loop", &opts))
    });
    c.bench_function("query: half-typed, built-in wiki", |b| {
        b.iter(|| index.search("bank confl", &opts))
    });
    c.bench_function("symbol look-up: cp.async.cg.shared.global", |b| {
        b.iter(|| index.symbols().lookup("cp.async.cg.shared.global"))
    });
    c.bench_function(
        "symbol look-up: cuda::pipeline_consumer_wait_prior<1>",
        |b| {
            b.iter(|| {
                index
                    .symbols()
                    .lookup("cuda::pipeline_consumer_wait_prior<1>")
            })
        },
    );
    let big_index = WikiIndex::build(&big).expect("index");
    c.bench_function("query: symptom, 5,000-page wiki", |b| {
        b.iter(|| big_index.search("kernel slower shared memory bank conflict", &opts))
    });
}

criterion_group!(index_benches, benches);
criterion_main!(index_benches);
