//! The models against every row of the measured ground truth in `tests/data/`
//! (see `tests/data/README.md` for where each file comes from).

use kernaut_gpu::arch::Arch;
use kernaut_gpu::banks::{analyze, AccessKind, AccessWidth, WarpAccess, WARP_LANES};
use kernaut_gpu::occupancy::{occupancy, Limiter, Occupancy, OccupancyError, OccupancyInput};

const RUNTIME: &str = include_str!("data/occupancy_sm90_runtime.csv");
const CARVEOUT: &str = include_str!("data/occupancy_sm90_carveout.csv");
const MULTIARCH: &str = include_str!("data/occupancy_multiarch.csv");
const ARCH_PROPS: &str = include_str!("data/arch_props.json");
const BANKS: &str = include_str!("data/bank_conflicts_sm90.csv");

/// The rows of a CSV file without quoted fields, as maps from column name to text.
fn rows(csv: &str) -> Vec<Vec<(&str, &str)>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header line").split(',').collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let fields: Vec<&str> = l.split(',').collect();
            assert_eq!(fields.len(), header.len(), "row `{l}`");
            header.iter().copied().zip(fields).collect()
        })
        .collect()
}

fn field<'a>(row: &[(&str, &'a str)], name: &str) -> &'a str {
    row.iter()
        .find(|(k, _)| *k == name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .1
}

fn num(row: &[(&str, &str)], name: &str) -> i64 {
    field(row, name)
        .parse()
        .unwrap_or_else(|e| panic!("column {name}: {e}"))
}

fn u(row: &[(&str, &str)], name: &str) -> u32 {
    num(row, name) as u32
}

/// A limit column, where -1 stands for "unlimited".
fn limit(row: &[(&str, &str)], name: &str) -> Option<u32> {
    match num(row, name) {
        -1 => None,
        v => Some(v as u32),
    }
}

fn input(row: &[(&str, &str)]) -> OccupancyInput {
    OccupancyInput {
        threads_per_block: u(row, "threads_per_block"),
        regs_per_thread: u(row, "num_regs"),
        static_smem: u(row, "static_smem_bytes"),
        dynamic_smem: u(row, "dynamic_smem_bytes"),
        max_dynamic_smem: Some(u(row, "max_dyn_smem_attr")),
        ..OccupancyInput::default()
    }
}

/// Compares one row with the model. A row where the CUDA API answers 0 because static
/// plus dynamic shared memory is over the opt-in maximum must be that error in the
/// model; every other row must be an occupancy with the same blocks per SM and, where
/// the file has them, the same per-resource limits and limiting-factor mask.
fn check_row(
    arch: Arch,
    input: &OccupancyInput,
    row: &[(&str, &str)],
    with_limits: bool,
) -> Result<(), String> {
    let expected = u(row, "blocks_per_sm");
    let got = occupancy(arch, input);
    let over_optin = u64::from(input.static_smem) + u64::from(input.dynamic_smem)
        > u64::from(arch.limits().smem_per_block_optin);
    match got {
        Err(OccupancyError::SharedMemoryOverOptIn { .. }) if over_optin && expected == 0 => Ok(()),
        // The CUDA API answers 0 blocks for a block whose registers do not fit.
        Err(OccupancyError::TooManyResources { .. }) if expected == 0 => Ok(()),
        Err(e) => Err(format!(
            "{input:?}: error `{e}`, expected {expected} blocks"
        )),
        Ok(occ) => {
            if occ.blocks_per_sm != expected {
                return Err(format!(
                    "{input:?}: {} blocks, expected {expected}",
                    occ.blocks_per_sm
                ));
            }
            if with_limits {
                check_limits(&occ, row).map_err(|e| format!("{input:?}: {e}"))?;
            }
            Ok(())
        }
    }
}

fn check_limits(occ: &Occupancy, row: &[(&str, &str)]) -> Result<(), String> {
    let pairs = [
        (Limiter::Warps, "limit_warps"),
        (Limiter::Registers, "limit_regs"),
        (Limiter::SharedMemory, "limit_smem"),
        (Limiter::Blocks, "limit_blocks"),
        (Limiter::Barriers, "limit_barriers"),
    ];
    for (limiter, column) in pairs {
        let want = limit(row, column);
        let got = occ.limits.get(limiter);
        if got != want {
            return Err(format!("{column}: {got:?}, expected {want:?}"));
        }
    }
    let mask = u(row, "limiting_factors");
    if occ.limiters.mask() != mask {
        return Err(format!(
            "limiting factors {}, expected {mask}",
            occ.limiters.mask()
        ));
    }
    Ok(())
}

fn report(name: &str, total: usize, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{name}: {} of {total} rows differ; first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn occupancy_matches_every_sm90_runtime_row() {
    let arch = Arch::parse("sm_90").unwrap();
    let rows = rows(RUNTIME);
    assert_eq!(rows.len(), 34_560);
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|r| check_row(arch, &input(r), r, true).err())
        .collect();
    report("occupancy_sm90_runtime.csv", rows.len(), &failures);
    // 1,280 rows (640 under each attribute policy) ask for more than 227 KiB of static
    // plus dynamic shared memory; the runtime answers 0 blocks and the model an error.
    let over_optin = rows
        .iter()
        .filter(|r| {
            matches!(
                occupancy(arch, &input(r)),
                Err(OccupancyError::SharedMemoryOverOptIn { .. })
            )
        })
        .count();
    assert_eq!(over_optin, 1280);
}

#[test]
fn occupancy_matches_every_sm90_carveout_row() {
    let arch = Arch::parse("sm_90").unwrap();
    let rows = rows(CARVEOUT);
    assert_eq!(rows.len(), 3_600);
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let mut i = input(r);
            i.carveout = match num(r, "carveout") {
                -1 => None,
                p => Some(p as u32),
            };
            check_row(arch, &i, r, false).err()
        })
        .collect();
    report("occupancy_sm90_carveout.csv", rows.len(), &failures);
}

#[test]
fn occupancy_matches_every_multiarch_row() {
    let rows = rows(MULTIARCH);
    assert_eq!(rows.len(), 23_040);
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let arch = Arch::parse(field(r, "cc")).unwrap();
            check_row(arch, &input(r), r, true)
                .err()
                .map(|e| format!("cc {arch}: {e}"))
        })
        .collect();
    report("occupancy_multiarch.csv", rows.len(), &failures);
}

/// The device limits the header was given for each architecture equal our table.
#[test]
fn arch_table_matches_arch_props_json() {
    let json = ARCH_PROPS;
    let mut checked = 0;
    for entry in json.split("{\"cc\": ").skip(1) {
        let value = |key: &str| -> u32 {
            let at = entry
                .find(&format!("\"{key}\": "))
                .unwrap_or_else(|| panic!("no {key}"))
                + key.len()
                + 4;
            entry[at..]
                .split([',', '}'])
                .next()
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        let cc = entry[1..].split('"').next().unwrap();
        let l = Arch::parse(cc).unwrap().limits();
        let steps_at = entry.find("\"smemCarveoutSteps_KiB\": [").unwrap()
            + "\"smemCarveoutSteps_KiB\": [".len();
        let steps: Vec<u32> = entry[steps_at..]
            .split(']')
            .next()
            .unwrap()
            .split(',')
            .map(|s| s.trim().parse().unwrap())
            .collect();
        let got = [
            l.max_threads_per_block,
            l.max_threads_per_sm,
            l.regs_per_block,
            l.regs_per_sm,
            l.warp_size,
            l.smem_per_block,
            l.smem_per_sm,
            l.smem_per_block_optin,
            l.reserved_smem_per_block,
            l.max_blocks_per_sm,
            l.reg_alloc_unit,
            l.smem_alloc_granularity,
            l.sub_partitions,
        ];
        let want = [
            value("maxThreadsPerBlock"),
            value("maxThreadsPerMultiprocessor"),
            value("regsPerBlock"),
            value("regsPerMultiprocessor"),
            value("warpSize"),
            value("sharedMemPerBlock"),
            value("sharedMemPerMultiprocessor"),
            value("sharedMemPerBlockOptin"),
            value("reservedSharedMemPerBlock"),
            value("maxBlocksPerSM"),
            value("regAllocGranularityPerWarp"),
            value("smemAllocGranularity"),
            value("subPartitions"),
        ];
        assert_eq!(got, want, "cc {cc}");
        assert_eq!(l.carveout_steps_kib, steps.as_slice(), "cc {cc}");
        checked += 1;
    }
    assert_eq!(checked, 8);
}

#[test]
fn bank_model_matches_every_measured_pattern() {
    let rows = rows(BANKS);
    assert_eq!(rows.len(), 266);
    let mut failures = Vec::new();
    for r in &rows {
        let id = field(r, "pattern_id");
        let kind = match field(r, "op") {
            "ld" => AccessKind::Load,
            "st" => AccessKind::Store,
            op => panic!("op {op}"),
        };
        let width = AccessWidth::from_bytes(u(r, "elem_bytes")).unwrap();
        let offsets: Vec<Option<u32>> = field(r, "byte_offsets")
            .split(';')
            .map(|s| match s.parse::<i64>().unwrap() {
                -1 => None,
                v => Some(v as u32),
            })
            .collect();
        let warps = offsets.len() / WARP_LANES;
        assert_eq!(warps as i64, num(r, "instructions"), "{id}");
        let (mut wavefronts, mut conflicts, mut active) = (0, 0, 0);
        let mut cycles = Vec::new();
        for warp in offsets.chunks(WARP_LANES) {
            let addresses: [Option<u32>; WARP_LANES] = warp.try_into().unwrap();
            let rep = analyze(&WarpAccess {
                addresses,
                width,
                kind,
            })
            .unwrap();
            wavefronts += rep.wavefronts;
            conflicts += rep.bank_conflicts;
            active = rep.active_lanes;
            cycles.push(rep.cycles);
        }
        let measured_cycles: f64 = field(r, "clock64_cycles_per_instr").parse().unwrap();
        let got = (wavefronts, conflicts, active);
        let want = (
            u(r, "wavefronts"),
            u(r, "bank_conflicts"),
            u(r, "active_lanes"),
        );
        if got != want {
            failures.push(format!(
                "{id} {kind:?}: (wavefronts, conflicts, active) {got:?}, measured {want:?}"
            ));
        }
        // The throughput loop runs one pattern in 16 warps; rule 6 predicts its cycles.
        if cycles
            .iter()
            .any(|&c| (f64::from(c) - measured_cycles).abs() > 0.06)
        {
            failures.push(format!(
                "{id} {kind:?}: cycles {cycles:?}, measured {measured_cycles}"
            ));
        }
    }
    report("bank_conflicts_sm90.csv", rows.len(), &failures);
}

const COALESCING: &str = include_str!("data/coalescing_sm90.csv");

#[test]
fn sector_model_matches_every_measured_coalescing_row() {
    use kernaut_gpu::sectors::sectors;
    let rows = rows(COALESCING);
    assert_eq!(rows.len(), 588);
    let mut failures = Vec::new();
    for r in &rows {
        let id = field(r, "pattern_id");
        let op = field(r, "op");
        let width = AccessWidth::from_bytes(u(r, "elem_bytes")).unwrap();
        let offsets: Vec<Option<u64>> = field(r, "byte_offsets")
            .split(';')
            .map(|s| match s.parse::<i64>().unwrap() {
                -1 => None,
                v => Some(v as u64),
            })
            .collect();
        let addresses: [Option<u64>; WARP_LANES] = offsets.as_slice().try_into().unwrap();
        assert_eq!(
            addresses.iter().flatten().count() as u32,
            u(r, "active_threads"),
            "{id}"
        );
        let rep = sectors(&addresses, width).unwrap();
        let (requests, sectors_col, insts, l2) = match op {
            "ld" => (
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld",
                "smsp__inst_executed_op_global_ld",
                "lts__t_sectors_srcunit_tex_op_read",
            ),
            "st" => (
                "l1tex__t_requests_pipe_lsu_mem_global_op_st",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st",
                "smsp__inst_executed_op_global_st",
                "lts__t_sectors_srcunit_tex_op_write",
            ),
            op => panic!("op {op}"),
        };
        let got = (rep.requests * u(r, insts), rep.sectors, rep.l2_sectors());
        let want = (u(r, requests), u(r, sectors_col), u(r, l2));
        if got != want {
            failures.push(format!(
                "{id} {op}: (requests, sectors, L2 sectors) {got:?}, measured {want:?}"
            ));
        }
    }
    report("coalescing_sm90.csv", rows.len(), &failures);
}
