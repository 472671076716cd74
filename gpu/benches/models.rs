//! Speed budgets of the models (docs/BENCHMARKS.md, section `kernaut-gpu`):
//! one occupancy configuration under 1 µs, all three curves under 100 µs, one bank
//! evaluation under 2 µs.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use kernaut_gpu::arch::Arch;
use kernaut_gpu::banks::{analyze, AccessKind, AccessWidth, WarpAccess};
use kernaut_gpu::expr::{Expr, WarpContext};
use kernaut_gpu::occupancy::{occupancy, occupancy_curves, OccupancyInput};

fn input() -> OccupancyInput {
    OccupancyInput {
        threads_per_block: 256,
        regs_per_thread: 72,
        static_smem: 16384,
        dynamic_smem: 32768,
        ..OccupancyInput::default()
    }
}

fn bench_occupancy(c: &mut Criterion) {
    let arch = Arch::parse("sm_90").unwrap();
    let input = input();
    c.bench_function("occupancy/one_config", |b| {
        b.iter(|| occupancy(black_box(arch), black_box(&input)))
    });
    c.bench_function("occupancy/three_curves", |b| {
        b.iter(|| occupancy_curves(black_box(arch), black_box(&input)))
    });
}

fn bench_banks(c: &mut Criterion) {
    // A 16-byte load with a conflict-heavy layout, the most expensive width to model.
    let f128 = WarpAccess {
        addresses: std::array::from_fn(|l| Some((((l & 7) * 4 + (l >> 3)) * 16) as u32)),
        width: AccessWidth::B16,
        kind: AccessKind::Load,
    };
    c.bench_function("banks/one_access_16B", |b| {
        b.iter(|| analyze(black_box(&f128)))
    });
    let f32_col = WarpAccess {
        addresses: std::array::from_fn(|l| Some((l * 132) as u32)),
        width: AccessWidth::B4,
        kind: AccessKind::Store,
    };
    c.bench_function("banks/one_access_4B", |b| {
        b.iter(|| analyze(black_box(&f32_col)))
    });
    // Parsing and evaluating the index as `ktui banks --index` does, then the model.
    let ctx = WarpContext {
        block: [32, 8, 1],
        ..WarpContext::default()
    };
    c.bench_function("banks/index_text_to_report", |b| {
        b.iter(|| {
            let e = Expr::parse(black_box("threadIdx.x * 33 + threadIdx.y")).unwrap();
            let values = e.eval_warp(&ctx).unwrap();
            let addresses = values.map(|v| v.map(|i| i as u32 * 4));
            analyze(&WarpAccess {
                addresses,
                width: AccessWidth::B4,
                kind: AccessKind::Load,
            })
        })
    });
}

criterion_group!(benches, bench_occupancy, bench_banks);
criterion_main!(benches);
