//! Edge cases and errors of each model, as data: one `check_*` helper per model renders
//! its answer as text and compares it with an `expect!` snapshot (`UPDATE_EXPECT=1`
//! rewrites them).

use expect_test::{expect, Expect};
use kernaut_gpu::arch::{Arch, ComputeCapability};
use kernaut_gpu::banks::{analyze, AccessKind, AccessWidth, WarpAccess};
use kernaut_gpu::expr::{Expr, WarpContext};
use kernaut_gpu::occupancy::{
    max_potential_block_size, occupancy, occupancy_curve, smallest_best_block_size, CurveAxis,
    OccupancyInput,
};

fn render_occupancy(arch: &str, input: &OccupancyInput) -> String {
    let arch = Arch::parse(arch).unwrap();
    match occupancy(arch, input) {
        Err(e) => format!("error: {e}"),
        Ok(o) => {
            let l = o.limits;
            let opt = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
            format!(
                "{} blocks/SM, {}/{} warps ({:.4}), limited by {}\nlimits: warps {} regs {} smem {} blocks {} barriers {}\nalloc: {} regs/warp, {} B smem/block, {} B smem/SM",
                o.blocks_per_sm,
                o.active_warps,
                o.max_warps_per_sm,
                o.occupancy,
                o.limiters.iter().map(|l| l.name()).collect::<Vec<_>>().join("+"),
                l.warps,
                opt(l.registers),
                opt(l.shared_memory),
                l.blocks,
                opt(l.barriers),
                o.regs_per_warp,
                o.smem_per_block,
                o.smem_per_sm,
            )
        }
    }
}

fn check_occupancy(arch: &str, input: OccupancyInput, expect: Expect) {
    expect.assert_eq(&render_occupancy(arch, &input));
}

fn occ(threads: u32, regs: u32) -> OccupancyInput {
    OccupancyInput::new(threads, regs)
}

#[test]
fn occupancy_of_a_register_bound_kernel() {
    check_occupancy(
        "sm_90",
        occ(256, 64),
        expect![[r#"
            4 blocks/SM, 32/64 warps (0.5000), limited by registers
            limits: warps 8 regs 4 smem 228 blocks 32 barriers 64
            alloc: 2048 regs/warp, 1024 B smem/block, 233472 B smem/SM"#]],
    );
}

#[test]
fn thirty_three_registers_cost_like_forty() {
    check_occupancy(
        "sm_90",
        occ(64, 33),
        expect![[r#"
            24 blocks/SM, 48/64 warps (0.7500), limited by registers
            limits: warps 32 regs 24 smem 228 blocks 32 barriers 64
            alloc: 1280 regs/warp, 1024 B smem/block, 233472 B smem/SM"#]],
    );
}

#[test]
fn reserved_kilobyte_counts_against_shared_memory() {
    check_occupancy(
        "sm_90",
        OccupancyInput {
            dynamic_smem: 8192,
            ..occ(32, 12)
        },
        expect![[r#"
            25 blocks/SM, 25/64 warps (0.3906), limited by shared_memory
            limits: warps 64 regs 128 smem 25 blocks 32 barriers 64
            alloc: 512 regs/warp, 9216 B smem/block, 233472 B smem/SM"#]],
    );
}

#[test]
fn carveout_zero_rounds_up_to_the_step_that_holds_one_block() {
    check_occupancy(
        "sm_90",
        OccupancyInput {
            carveout: Some(0),
            ..occ(64, 32)
        },
        expect![[r#"
            8 blocks/SM, 16/64 warps (0.2500), limited by shared_memory
            limits: warps 32 regs 32 smem 8 blocks 32 barriers 64
            alloc: 1024 regs/warp, 1024 B smem/block, 8192 B smem/SM"#]],
    );
    check_occupancy(
        "sm_90",
        OccupancyInput {
            carveout: Some(50),
            dynamic_smem: 8192,
            ..occ(64, 32)
        },
        expect![[r#"
            14 blocks/SM, 28/64 warps (0.4375), limited by shared_memory
            limits: warps 32 regs 32 smem 14 blocks 32 barriers 64
            alloc: 1024 regs/warp, 9216 B smem/block, 135168 B smem/SM"#]],
    );
}

#[test]
fn all_binding_limiters_are_reported() {
    check_occupancy(
        "sm_90",
        occ(64, 32),
        expect![[r#"
            32 blocks/SM, 64/64 warps (1.0000), limited by warps+registers+blocks
            limits: warps 32 regs 32 smem 228 blocks 32 barriers 64
            alloc: 1024 regs/warp, 1024 B smem/block, 233472 B smem/SM"#]],
    );
}

#[test]
fn registers_that_do_not_fit_one_block_cannot_launch() {
    check_occupancy(
        "sm_90",
        occ(1024, 255),
        expect!["error: too many resources requested for launch: 1024 threads × 255 registers = 261,120 registers per block (262,144 as allocated) > 65,536"],
    );
}

#[test]
fn turing_without_shared_memory_is_unlimited_by_it() {
    check_occupancy(
        "sm_75",
        occ(128, 32),
        expect![[r#"
            8 blocks/SM, 32/32 warps (1.0000), limited by warps
            limits: warps 8 regs 16 smem - blocks 16 barriers -
            alloc: 1024 regs/warp, 0 B smem/block, 65536 B smem/SM"#]],
    );
}

#[test]
fn zero_threads_is_an_error() {
    check_occupancy(
        "sm_90",
        occ(0, 32),
        expect![[r#"error: a block needs at least 1 thread"#]],
    );
}

#[test]
fn more_than_1024_threads_is_an_error() {
    check_occupancy(
        "sm_90",
        occ(1056, 32),
        expect![[r#"error: 1056 threads per block is over the limit of 1024"#]],
    );
}

#[test]
fn too_many_registers_is_an_error() {
    check_occupancy(
        "sm_90",
        occ(128, 256),
        expect![[r#"error: 256 registers per thread is over the limit of 255"#]],
    );
}

#[test]
fn shared_memory_over_the_opt_in_maximum_is_an_error() {
    check_occupancy(
        "sm_90",
        OccupancyInput {
            static_smem: 1024,
            dynamic_smem: 232448,
            ..occ(128, 32)
        },
        expect![[
            r#"error: 233472 bytes of shared memory per block (static + dynamic) is over the opt-in maximum of 232448"#
        ]],
    );
    check_occupancy(
        "sm_86",
        OccupancyInput {
            dynamic_smem: 102400,
            ..occ(128, 32)
        },
        expect![[
            r#"error: 102400 bytes of shared memory per block (static + dynamic) is over the opt-in maximum of 101376"#
        ]],
    );
}

#[test]
fn dynamic_shared_memory_over_the_attribute_is_an_error() {
    check_occupancy(
        "sm_90",
        OccupancyInput {
            dynamic_smem: 65536,
            max_dynamic_smem: Some(49152),
            ..occ(128, 32)
        },
        expect![[
            r#"error: 65536 bytes of dynamic shared memory is over the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize of 49152"#
        ]],
    );
}

#[test]
fn static_shared_memory_over_48_kib_is_an_error() {
    check_occupancy(
        "sm_90",
        OccupancyInput {
            static_smem: 50000,
            ..occ(128, 32)
        },
        expect![[r#"error: 50000 bytes of static shared memory is over the limit of 49152"#]],
    );
}

#[test]
fn block_larger_than_launch_bounds_is_an_error() {
    check_occupancy(
        "sm_90",
        OccupancyInput {
            launch_bounds_max_threads: Some(128),
            ..occ(256, 128)
        },
        expect![[
            r#"error: 256 threads per block is over the kernel's `__launch_bounds__` of 128; the launch would fail"#
        ]],
    );
    check_occupancy(
        "sm_90",
        OccupancyInput {
            launch_bounds_max_threads: Some(128),
            ..occ(128, 128)
        },
        expect![[r#"
            4 blocks/SM, 16/64 warps (0.2500), limited by registers
            limits: warps 16 regs 4 smem 228 blocks 32 barriers 64
            alloc: 4096 regs/warp, 1024 B smem/block, 233472 B smem/SM"#]],
    );
}

#[test]
fn carveout_over_100_percent_is_an_error() {
    check_occupancy(
        "sm_90",
        OccupancyInput {
            carveout: Some(101),
            ..occ(128, 32)
        },
        expect![[r#"error: a shared-memory carveout of 101% is outside 0 to 100"#]],
    );
}

fn check_curve(input: OccupancyInput, axis: CurveAxis, expect: Expect) {
    let arch = Arch::parse("sm_90").unwrap();
    let text = match occupancy_curve(arch, &input, axis) {
        Err(e) => format!("error: {e}"),
        Ok(points) => {
            // Only the points where blocks per SM change, to keep the snapshot short.
            let mut out = format!("{} points\n", points.len());
            let mut last = None;
            for p in &points {
                if last != Some(p.blocks_per_sm) {
                    out += &format!(
                        "{} -> {} blocks ({:.3})\n",
                        p.x, p.blocks_per_sm, p.occupancy
                    );
                    last = Some(p.blocks_per_sm);
                }
            }
            out += &format!("last x {}", points.last().unwrap().x);
            out
        }
    };
    expect.assert_eq(&text);
}

#[test]
fn curve_against_threads() {
    check_curve(
        occ(64, 64),
        CurveAxis::Threads,
        expect![[r#"
            32 points
            32 -> 32 blocks (0.500)
            64 -> 16 blocks (0.500)
            96 -> 10 blocks (0.469)
            128 -> 8 blocks (0.500)
            160 -> 6 blocks (0.469)
            192 -> 5 blocks (0.469)
            224 -> 4 blocks (0.438)
            288 -> 3 blocks (0.422)
            352 -> 2 blocks (0.344)
            544 -> 1 blocks (0.266)
            last x 1024"#]],
    );
}

#[test]
fn curve_against_threads_stops_at_the_launch_bound() {
    check_curve(
        OccupancyInput {
            launch_bounds_max_threads: Some(200),
            ..occ(64, 64)
        },
        CurveAxis::Threads,
        expect![[r#"
            6 points
            32 -> 32 blocks (0.500)
            64 -> 16 blocks (0.500)
            96 -> 10 blocks (0.469)
            128 -> 8 blocks (0.500)
            160 -> 6 blocks (0.469)
            192 -> 5 blocks (0.469)
            last x 192"#]],
    );
}

#[test]
fn curve_against_registers() {
    check_curve(
        occ(256, 32),
        CurveAxis::Registers,
        expect![[r#"
            255 points
            1 -> 8 blocks (1.000)
            33 -> 6 blocks (0.750)
            41 -> 5 blocks (0.625)
            49 -> 4 blocks (0.500)
            65 -> 3 blocks (0.375)
            81 -> 2 blocks (0.250)
            129 -> 1 blocks (0.125)
            last x 255"#]],
    );
}

#[test]
fn curve_against_shared_memory() {
    check_curve(
        OccupancyInput {
            static_smem: 1000,
            ..occ(128, 32)
        },
        CurveAxis::SharedMemory,
        expect![[r#"
            228 points
            1000 -> 16 blocks (1.000)
            14336 -> 15 blocks (0.938)
            15360 -> 14 blocks (0.875)
            16384 -> 13 blocks (0.812)
            17408 -> 12 blocks (0.750)
            19456 -> 11 blocks (0.688)
            20480 -> 10 blocks (0.625)
            22528 -> 9 blocks (0.562)
            25600 -> 8 blocks (0.500)
            28672 -> 7 blocks (0.438)
            32768 -> 6 blocks (0.375)
            38912 -> 5 blocks (0.312)
            46080 -> 4 blocks (0.250)
            58368 -> 3 blocks (0.188)
            77824 -> 2 blocks (0.125)
            116736 -> 1 blocks (0.062)
            last x 232448"#]],
    );
}

#[test]
fn curve_of_an_invalid_input_is_an_error() {
    check_curve(
        occ(0, 32),
        CurveAxis::Registers,
        expect![[r#"error: a block needs at least 1 thread"#]],
    );
}

fn check_block_size(arch: &str, input: OccupancyInput, expect: Expect) {
    let arch = Arch::parse(arch).unwrap();
    let text = match max_potential_block_size(arch, &input) {
        Err(e) => format!("error: {e}"),
        Ok(None) => "no block size can launch".to_string(),
        Ok(Some(s)) => format!(
            "{} threads, {} blocks/SM ({:.4})",
            s.block_size, s.blocks_per_sm, s.occupancy
        ),
    };
    expect.assert_eq(&text);
}

#[test]
fn max_potential_block_size_prefers_the_largest_block_among_ties() {
    check_block_size(
        "sm_90",
        occ(0, 32),
        expect![[r#"1024 threads, 2 blocks/SM (1.0000)"#]],
    );
    check_block_size(
        "sm_90",
        occ(0, 72),
        expect![[r#"896 threads, 1 blocks/SM (0.4375)"#]],
    );
    check_block_size(
        "sm_90",
        occ(0, 255),
        expect![[r#"256 threads, 1 blocks/SM (0.1250)"#]],
    );
    check_block_size(
        "sm_90",
        OccupancyInput {
            launch_bounds_max_threads: Some(100),
            ..occ(0, 32)
        },
        expect!["64 threads, 32 blocks/SM (1.0000)"],
    );
    check_block_size(
        "sm_86",
        OccupancyInput {
            dynamic_smem: 40000,
            ..occ(0, 40)
        },
        expect![[r#"768 threads, 2 blocks/SM (1.0000)"#]],
    );
    check_block_size(
        "sm_90",
        occ(0, 300),
        expect![[r#"error: 300 registers per thread is over the limit of 255"#]],
    );
}

fn check_banks(offsets: &[i64], width: u32, kind: AccessKind, expect: Expect) {
    let mut addresses = [None; 32];
    for (a, &o) in addresses.iter_mut().zip(offsets) {
        *a = u32::try_from(o).ok();
    }
    let access = WarpAccess {
        addresses,
        width: AccessWidth::from_bytes(width).unwrap(),
        kind,
    };
    let text = match analyze(&access) {
        Err(e) => format!("error: {e}"),
        Ok(r) => format!(
            "wavefronts {} conflicts {} cycles {} degree {} | R {} packed {} group {} active {} words {}\nper bank {:?}",
            r.wavefronts,
            r.bank_conflicts,
            r.cycles,
            r.conflict_degree,
            r.registers,
            r.pair_packed,
            r.lanes_per_group,
            r.active_lanes,
            r.distinct_words,
            r.words_per_bank,
        ),
    };
    expect.assert_eq(&text);
}

fn lanes(f: impl Fn(i64) -> i64) -> Vec<i64> {
    (0..32).map(f).collect()
}

#[test]
fn bank_column_of_a_float_tile_is_32_way() {
    check_banks(
        &lanes(|l| l * 128),
        4,
        AccessKind::Load,
        expect![[r#"
            wavefronts 32 conflicts 31 cycles 32 degree 32 | R 1 packed false group 32 active 32 words 32
            per bank [32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"#]],
    );
}

#[test]
fn bank_broadcast_is_not_a_conflict() {
    check_banks(
        &lanes(|l| (l % 2) * 128),
        4,
        AccessKind::Load,
        expect![[r#"
            wavefronts 2 conflicts 1 cycles 2 degree 2 | R 1 packed false group 32 active 32 words 2
            per bank [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"#]],
    );
    check_banks(
        &lanes(|_| 0),
        16,
        AccessKind::Store,
        expect![[r#"
            wavefronts 4 conflicts 0 cycles 4 degree 1 | R 4 packed false group 8 active 32 words 4
            per bank [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"#]],
    );
    check_banks(
        &lanes(|_| 0),
        16,
        AccessKind::Load,
        expect![[r#"
            wavefronts 2 conflicts 0 cycles 2 degree 1 | R 2 packed true group 16 active 32 words 4
            per bank [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"#]],
    );
}

#[test]
fn bank_partial_warp_pays_its_register_count_in_cycles() {
    check_banks(
        &lanes(|l| if l < 8 { l * 16 } else { -1 }),
        16,
        AccessKind::Load,
        expect![[r#"
            wavefronts 1 conflicts 0 cycles 4 degree 1 | R 4 packed false group 8 active 8 words 32
            per bank [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"#]],
    );
}

#[test]
fn bank_no_active_lane_costs_nothing() {
    check_banks(
        &lanes(|_| -1),
        4,
        AccessKind::Load,
        expect![[r#"
            wavefronts 0 conflicts 0 cycles 1 degree 0 | R 1 packed false group 32 active 0 words 0
            per bank [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"#]],
    );
}

#[test]
fn bank_misaligned_address_is_an_error() {
    check_banks(
        &lanes(|l| l * 8 + 4),
        8,
        AccessKind::Load,
        expect![[r#"error: lane 0: address 4 is not aligned to the 8-byte access width"#]],
    );
}

fn check_expr(text: &str, block: [u32; 3], expect: Expect) {
    let ctx = WarpContext {
        block,
        warp: 0,
        constants: vec![("TILE".to_string(), 32), ("PAD".to_string(), 1)],
    };
    let out = match Expr::parse(text) {
        Err(e) => format!("parse error: {e}"),
        Ok(e) => match e.eval_warp(&ctx) {
            Err(err) => format!("{e}\neval error: {err}"),
            Ok(values) => {
                let shown: Vec<String> = values
                    .iter()
                    .map(|v| v.map_or("-".to_string(), |v| v.to_string()))
                    .collect();
                format!("{e}\n{}", shown.join(" "))
            }
        },
    };
    expect.assert_eq(&out);
}

#[test]
fn expr_precedence_follows_c() {
    check_expr(
        "1 + lane * 2 << 1 & 0xff | 3 ^ 1",
        [32, 1, 1],
        expect![[r#"
            1 + lane * 2 << 1 & 255 | 3 ^ 1
            2 6 10 14 18 22 26 30 34 38 42 46 50 54 58 62 66 70 74 78 82 86 90 94 98 102 106 110 114 118 122 126"#]],
    );
    check_expr(
        "(lane + 1) * 2",
        [32, 1, 1],
        expect![[r#"
            (lane + 1) * 2
            2 4 6 8 10 12 14 16 18 20 22 24 26 28 30 32 34 36 38 40 42 44 46 48 50 52 54 56 58 60 62 64"#]],
    );
    check_expr(
        "-lane / 3 % 5 - ~0",
        [32, 1, 1],
        expect![[r#"
            -lane / 3 % 5 - ~0
            1 1 1 0 0 0 -1 -1 -1 -2 -2 -2 -3 -3 -3 1 1 1 0 0 0 -1 -1 -1 -2 -2 -2 -3 -3 -3 1 1"#]],
    );
}

#[test]
fn expr_thread_index_in_a_2d_block() {
    check_expr(
        "threadIdx.y * (TILE + PAD) + threadIdx.x",
        [8, 4, 1],
        expect![[r#"
            threadIdx.y * (TILE + PAD) + threadIdx.x
            0 1 2 3 4 5 6 7 33 34 35 36 37 38 39 40 66 67 68 69 70 71 72 73 99 100 101 102 103 104 105 106"#]],
    );
    check_expr(
        "threadIdx.z * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x - lane",
        [4, 2, 8],
        expect![[r#"
            threadIdx.z * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x - lane
            0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"#]],
    );
}

#[test]
fn expr_lanes_past_a_small_block_are_inactive() {
    check_expr(
        "lane * warpSize",
        [4, 3, 1],
        expect![[r#"
            lane * warpSize
            0 32 64 96 128 160 192 224 256 288 320 352 - - - - - - - - - - - - - - - - - - - -"#]],
    );
}

#[test]
fn expr_parse_errors_say_where_and_what() {
    check_expr(
        "lane *",
        [32, 1, 1],
        expect![[r#"parse error: column 7: expected a number, a name or `(`, found the end"#]],
    );
    check_expr(
        "(lane + 1",
        [32, 1, 1],
        expect![[r#"parse error: column 10: expected `)`, found the end"#]],
    );
    check_expr(
        "threadIdx.w",
        [32, 1, 1],
        expect![[
            r#"parse error: column 10: expected `.x`, `.y` or `.z` after `threadIdx`, found `.w`"#
        ]],
    );
    check_expr(
        "lane $ 2",
        [32, 1, 1],
        expect![[r#"parse error: column 6: expected an operator or the end, found `$`"#]],
    );
    check_expr(
        "",
        [32, 1, 1],
        expect![[r#"parse error: column 1: expected an expression, found the end"#]],
    );
    check_expr(
        "99999999999999999999",
        [32, 1, 1],
        expect![[
            r#"parse error: column 1: expected an integer that fits in 64 bits, found `99999999999999999999`"#
        ]],
    );
    check_expr(
        "lane && 1",
        [32, 1, 1],
        expect![[r#"parse error: column 6: expected an operator or the end, found `&&`"#]],
    );
}

#[test]
fn expr_eval_errors() {
    check_expr(
        "lane / (lane - 3)",
        [32, 1, 1],
        expect![[r#"
        lane / (lane - 3)
        eval error: 3 / 0: division by zero"#]],
    );
    check_expr(
        "N * lane",
        [32, 1, 1],
        expect![[r#"
        N * lane
        eval error: `N` has no value (give it one, e.g. N=32)"#]],
    );
    check_expr(
        "1 << 64",
        [32, 1, 1],
        expect![[r#"
        1 << 64
        eval error: shift by 64 is outside 0 to 63"#]],
    );
    check_expr(
        "lane",
        [0, 1, 1],
        expect![[r#"
        lane
        eval error: block 0x1x1 has no threads"#]],
    );
}

#[test]
fn expr_values_built_directly_print_and_parse_back() {
    use kernaut_gpu::expr::Axis;
    let e = ((Expr::ThreadIdx(Axis::X) + Expr::Int(1)) * Expr::uniform("TILE"))
        ^ (Expr::Lane >> Expr::Int(2));
    expect![[r#"(threadIdx.x + 1) * TILE ^ lane >> 2"#]].assert_eq(&e.to_string());
    assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
    let neg = -(Expr::Lane - Expr::Int(-3));
    expect![[r#"-(lane - (-3))"#]].assert_eq(&neg.to_string());
    assert_eq!(Expr::parse(&neg.to_string()).unwrap(), neg);
}

fn check_arch(text: &str, expect: Expect) {
    let out = match Arch::parse(text) {
        Ok(a) => format!("{a} (cc {}, arch-specific {})", a.cc, a.arch_specific),
        Err(e) => format!("error: {e}"),
    };
    expect.assert_eq(&out);
}

#[test]
fn arch_names_in_every_spelling() {
    check_arch("sm_90", expect![[r#"sm_90 (cc 9.0, arch-specific false)"#]]);
    check_arch(
        "sm_90a",
        expect![[r#"sm_90a (cc 9.0, arch-specific true)"#]],
    );
    check_arch(
        "compute_90",
        expect![[r#"sm_90 (cc 9.0, arch-specific false)"#]],
    );
    check_arch(
        "compute_100a",
        expect![[r#"sm_100a (cc 10.0, arch-specific true)"#]],
    );
    check_arch("9.0", expect![[r#"sm_90 (cc 9.0, arch-specific false)"#]]);
    check_arch("90", expect![[r#"sm_90 (cc 9.0, arch-specific false)"#]]);
    check_arch("sm90", expect![[r#"sm_90 (cc 9.0, arch-specific false)"#]]);
    check_arch("SM_86", expect![[r#"sm_86 (cc 8.6, arch-specific false)"#]]);
    check_arch("120", expect![[r#"sm_120 (cc 12.0, arch-specific false)"#]]);
    check_arch(
        "12.0",
        expect![[r#"sm_120 (cc 12.0, arch-specific false)"#]],
    );
}

#[test]
fn arch_name_errors() {
    check_arch(
        "sm_91",
        expect!["error: `sm_91` names no CUDA architecture (known: sm_50, sm_52, sm_53, sm_60, sm_61, sm_62, sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_100, sm_101, sm_103, sm_110, sm_120, sm_121)"],
    );
    check_arch(
        "sm_103a",
        expect!["error: kernaut has no occupancy limits for `sm_103a` (known: sm_50, sm_52, sm_53, sm_60, sm_61, sm_62, sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_120)"],
    );
    check_arch(
        "hopper",
        expect!["error: `hopper` is not an architecture (sm_90, sm_90a, compute_90, 9.0, 90) or a known GPU (H200, A100, 4090)"],
    );
    check_arch(
        "9",
        expect!["error: `9` is not an architecture (sm_90, sm_90a, compute_90, 9.0, 90) or a known GPU (H200, A100, 4090)"],
    );
}

#[test]
fn arch_table_is_in_capability_order() {
    let names: Vec<String> = ComputeCapability::ALL
        .iter()
        .map(|cc| cc.to_string())
        .collect();
    expect![[r#"5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 10.0 12.0"#]]
        .assert_eq(&names.join(" "));
    for cc in ComputeCapability::ALL {
        let l = cc.limits();
        assert_eq!(
            ComputeCapability::from_major_minor(l.major, l.minor),
            Some(cc)
        );
        assert_eq!(l.max_warps_per_sm * l.warp_size, l.max_threads_per_sm);
        assert!(
            l.carveout_steps_kib.last().map(|k| k * 1024) == Some(l.smem_per_sm),
            "{cc}"
        );
        assert!(
            l.smem_per_block_optin + l.reserved_smem_per_block <= l.smem_per_sm,
            "{cc}"
        );
    }
}

#[test]
fn bank_words_are_grouped_by_bank_and_ascending() {
    // float2 at a stride of 72 bytes: lanes spread over banks with repeats.
    let addresses = std::array::from_fn(|l| Some(l as u32 * 72));
    let r = analyze(&WarpAccess {
        addresses,
        width: AccessWidth::B8,
        kind: AccessKind::Store,
    })
    .unwrap();
    assert_eq!(r.words.len() as u32, r.distinct_words);
    assert_eq!(r.words_per_bank.iter().sum::<u32>(), 64);
    for b in 0..32 {
        let words = r.bank_words(b);
        assert!(
            words.iter().all(|w| *w as usize % 32 == b),
            "bank {b}: {words:?}"
        );
        assert!(words.windows(2).all(|p| p[0] < p[1]), "bank {b}: {words:?}");
    }
    expect![[r#"[0, 288]"#]].assert_eq(&format!("{:?}", r.bank_words(0)));
}

// Issue 28: "best block: 1024 threads (50 %)" when 256 threads already gave 50 %.
#[test]
fn the_smallest_block_reaching_the_best_occupancy_is_suggested() {
    let arch = Arch::parse("sm_90").unwrap();
    let show = |input: OccupancyInput| match smallest_best_block_size(arch, &input) {
        Err(e) => format!("error: {e}"),
        Ok(None) => "no block size can launch".to_string(),
        Ok(Some(s)) => format!("{} threads ({:.4})", s.block_size, s.occupancy),
    };
    // 64 registers: every multiple of 128 threads gives 50 %; 128 is the smallest.
    expect!["32 threads (0.5000)"].assert_eq(&show(occ(256, 64)));
    // 32 registers: full occupancy needs at least 64 threads (32 blocks × 2 warps).
    expect![[r#"64 threads (1.0000)"#]].assert_eq(&show(occ(256, 32)));
}
