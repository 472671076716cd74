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

use kernaut_test_utils::gen::{clean_kernel, generated, generated_with};

fn bench(c: &mut Criterion) {
    // The benchmarks' thread cap (the library reads no environment).
    if let Some(n) = std::env::var("KERNAUT_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
    {
        kernaut_ide::syntax::cancel::set_max_threads(n);
    }
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

/// Diagnostics after an edit, through the host as a server asks for them: the edit applied
/// (incremental parse), then the diagnostics, which run the rules again only on the
/// functions the edit reaches. Each iteration inserts a line and removes it again (two
/// edits, two diagnostics runs).
fn bench_host(c: &mut Criterion) {
    use kernaut_ide::{AnalysisConfig, AnalysisHost};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).expect("wiki"));
    let text = generated(10_000);
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge);
    let id = host.set_file("/bench/g.cu", &text);
    let first = host.analysis().diagnostics(id).expect("diagnostics").len();
    let mid = text[..text.len() / 2].rfind('\n').map_or(0, |p| p + 1);
    let stmt = text[text.len() / 2..]
        .find("    __syncthreads();\n")
        .map_or(mid, |i| text.len() / 2 + i + "    __syncthreads();\n".len());
    for (name, at, line) in [
        // The probe's edit: a comment line in the middle of the file (every line after
        // it moves).
        (
            "diagnostics/10k-lines/comment-line-inserted",
            mid,
            "// probe edit\n",
        ),
        // A statement inside a kernel.
        (
            "diagnostics/10k-lines/statement-in-a-kernel",
            stmt,
            "    int edited = 0;\n",
        ),
    ] {
        c.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    host.apply_edit("/bench/g.cu", at..at, line);
                    let n = host.analysis().diagnostics(id).expect("diagnostics").len();
                    host.apply_edit("/bench/g.cu", at..at + line.len(), "");
                    let m = host.analysis().diagnostics(id).expect("diagnostics").len();
                    spent += t.elapsed() / 2;
                    assert_eq!(m, first, "the text is back: so are its diagnostics");
                    std::hint::black_box(n);
                }
                spent
            })
        });
    }
}

criterion_group!(benches, bench, bench_host);
criterion_main!(benches);
