//! `ktui occupancy`: the occupancy of one kernel configuration, or a curve of it.
//!
//! Exit codes: 0 with a result, 1 when the configuration cannot launch (more threads
//! than a block may have, registers per block over the register file ("too many
//! resources requested for launch"), shared memory over the opt-in maximum, a block
//! over `--launch-bounds`, ...; the
//! reason goes to stderr, and with `--json` a JSON object with `"error"` and
//! `"blocks_per_sm": 0` goes to stdout), 2 for usage errors.
use super::{out, outln};
use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use kernaut_ide::gpu::arch::Arch;
use kernaut_ide::gpu::occupancy::{
    occupancy, occupancy_curve, smallest_best_block_size, BlockLimits, CurveAxis, CurvePoint,
    Limiters, Occupancy, OccupancyError, OccupancyInput,
};
use kernaut_tui::app::model::{parse_bytes, ArchChoice};
use serde_json::{json, Value};

/// Arguments of this subcommand.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Target architecture: sm_90, sm_90a, compute_90, 9.0, 90 or sm90, or a GPU
    /// (H200, h100, A100, 4090).
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// Threads per block (optional with `--curve threads`).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Registers per thread, as ptxas reports them (optional with `--curve regs`).
    #[arg(long)]
    pub regs: Option<u32>,
    /// Static shared memory per block: bytes, or 48K / 48KB / 48KiB (1 K = 1024 bytes).
    #[arg(long, value_name = "BYTES", default_value = "0", value_parser = parse_bytes)]
    pub smem: u32,
    /// Dynamic shared memory per block: bytes, or 48K / 48KB / 48KiB.
    #[arg(long = "dyn-smem", value_name = "BYTES", default_value = "0", value_parser = parse_bytes)]
    pub dyn_smem: u32,
    /// Preferred shared-memory carveout in percent (0-100); -1 or absent: the default,
    /// which is the largest.
    #[arg(long, value_name = "PERCENT", allow_hyphen_values = true)]
    pub carveout: Option<i32>,
    /// The kernel's `__launch_bounds__` maximum threads; a larger block is an error.
    #[arg(long = "launch-bounds", value_name = "THREADS")]
    pub launch_bounds: Option<u32>,
    /// The kernel's cudaFuncAttributeMaxDynamicSharedMemorySize; default: raised as
    /// far as the launch needs.
    #[arg(long = "max-dyn-smem", value_name = "BYTES", value_parser = parse_bytes)]
    pub max_dyn_smem: Option<u32>,
    /// Print occupancy against threads, registers or shared memory as a table.
    #[arg(long, value_enum)]
    pub curve: Option<CurveArg>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The axis of `--curve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CurveArg {
    /// Threads per block.
    Threads,
    /// Registers per thread.
    Regs,
    /// Shared memory per block (static + dynamic).
    Smem,
}

impl CurveArg {
    fn axis(self) -> CurveAxis {
        match self {
            CurveArg::Threads => CurveAxis::Threads,
            CurveArg::Regs => CurveAxis::Registers,
            CurveArg::Smem => CurveAxis::SharedMemory,
        }
    }
}

/// Runs the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let arch = ArchChoice::parse(&args.arch)
        .map_err(anyhow::Error::msg)
        .context("reading --arch")?;
    if arch.product.is_some() {
        eprintln!("ktui: --arch {} is {}", args.arch, arch.describe());
    }
    let arch = arch.arch();
    let threads = match (args.threads, args.curve) {
        (Some(t), _) => t,
        (None, Some(CurveArg::Threads)) => arch.limits().warp_size,
        (None, _) => bail!("--threads is required (except with --curve threads)"),
    };
    let regs = match (args.regs, args.curve) {
        (Some(r), _) => r,
        (None, Some(CurveArg::Regs)) => 0,
        (None, _) => bail!("--regs is required (except with --curve regs)"),
    };
    let carveout = match args.carveout {
        None | Some(-1) => None,
        Some(p) => Some(
            u32::try_from(p).map_err(|_| anyhow!("--carveout must be -1 or 0 to 100, not {p}"))?,
        ),
    };
    let input = OccupancyInput {
        threads_per_block: threads,
        regs_per_thread: regs,
        static_smem: args.smem,
        dynamic_smem: args.dyn_smem,
        carveout,
        launch_bounds_max_threads: args.launch_bounds,
        max_dynamic_smem: args.max_dyn_smem,
    };
    let result = match args.curve {
        None => occupancy(arch, &input).map(|occ| {
            // The smallest block that reaches the best occupancy, offered only when it
            // beats this configuration.
            let best = smallest_best_block_size(arch, &input)
                .ok()
                .flatten()
                .filter(|b| b.occupancy > occ.occupancy);
            if args.json {
                let mut v = occupancy_json(arch, &occ);
                if let Some(b) = best {
                    v["best_block_size"] = json!(b.block_size);
                }
                format!("{v}\n")
            } else {
                occupancy_text(
                    arch,
                    &input,
                    &occ,
                    best.map(|b| (b.block_size, b.occupancy)),
                )
            }
        }),
        Some(curve) => occupancy_curve(arch, &input, curve.axis()).map(|points| {
            if args.json {
                format!("{}\n", curve_json(arch, curve, &points))
            } else {
                curve_text(curve, &points)
            }
        }),
    };
    match result {
        Ok(text) => {
            out!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            if args.json {
                outln!("{}", error_json(arch, &e));
            }
            eprintln!("ktui: no occupancy on {arch}: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn limiter_names(limiters: &Limiters) -> Vec<&'static str> {
    limiters.iter().map(|l| l.name()).collect()
}

fn limits_json(l: &BlockLimits) -> Value {
    json!({
        "warps": l.warps,
        "registers": l.registers,
        "shared_memory": l.shared_memory,
        "blocks": l.blocks,
        "barriers": l.barriers,
    })
}

fn occupancy_json(arch: Arch, occ: &Occupancy) -> Value {
    json!({
        "arch": arch.to_string(),
        "blocks_per_sm": occ.blocks_per_sm,
        "active_warps": occ.active_warps,
        "max_warps": occ.max_warps_per_sm,
        "occupancy": occ.occupancy,
        "limiter": occ.limiters.primary().map(|l| l.name()),
        "limiters": limiter_names(&occ.limiters),
        "limits": limits_json(&occ.limits),
        "regs_per_warp": occ.regs_per_warp,
        "smem_per_block": occ.smem_per_block,
        "smem_per_sm": occ.smem_per_sm,
    })
}

fn error_json(arch: Arch, e: &OccupancyError) -> Value {
    json!({
        "arch": arch.to_string(),
        "error": e.to_string(),
        "blocks_per_sm": 0,
        "active_warps": 0,
        "occupancy": 0.0,
        "limiter": e.limiter().map(|l| l.name()),
    })
}

fn percent(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

fn occupancy_text(
    arch: Arch,
    input: &OccupancyInput,
    occ: &Occupancy,
    best: Option<(u32, f64)>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{arch}: {} threads, {} registers, {} B static + {} B dynamic shared memory",
        input.threads_per_block, input.regs_per_thread, input.static_smem, input.dynamic_smem
    );
    let limiter = limiter_names(&occ.limiters).join(", ");
    let l = &occ.limits;
    let _ = writeln!(s, "blocks per SM:  {}", occ.blocks_per_sm);
    let _ = writeln!(
        s,
        "active warps:   {} of {}",
        occ.active_warps, occ.max_warps_per_sm
    );
    let _ = writeln!(s, "occupancy:      {}", percent(occ.occupancy));
    let _ = writeln!(s, "limiter:        {limiter}");
    // Each resource's own limit, capped at the per-SM block limit: "shared memory 45"
    // would promise blocks the SM can never hold.
    let capped = |v: Option<u32>| match v {
        None => "unlimited".to_string(),
        Some(v) if v > l.blocks => format!("{} (capped from {v})", l.blocks),
        Some(v) => v.to_string(),
    };
    let _ = writeln!(
        s,
        "blocks allowed: warps {}, registers {}, shared memory {}, barriers {}; at most {} per SM",
        capped(Some(l.warps)),
        capped(l.registers),
        capped(l.shared_memory),
        capped(l.barriers),
        l.blocks
    );
    let _ = writeln!(
        s,
        "allocated:      {} registers per warp, {} B shared memory per block of {} B per SM",
        occ.regs_per_warp, occ.smem_per_block, occ.smem_per_sm
    );
    match best {
        Some((size, fraction)) => {
            let _ = writeln!(
                s,
                "best block:     {size} threads ({}), the smallest block that reaches it",
                percent(fraction)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "best block:     this one; no block size gives more with these registers and shared memory"
            );
        }
    }
    s
}

fn curve_json(arch: Arch, curve: CurveArg, points: &[CurvePoint]) -> Value {
    let points: Vec<Value> = points
        .iter()
        .map(|p| {
            json!({
                "x": p.x,
                "blocks_per_sm": p.blocks_per_sm,
                "active_warps": p.active_warps,
                "occupancy": p.occupancy,
                "limiter": p.limiters.primary().map(|l| l.name()),
                "limiters": limiter_names(&p.limiters),
            })
        })
        .collect();
    json!({ "arch": arch.to_string(), "curve": curve.axis().name(), "points": points })
}

fn curve_text(curve: CurveArg, points: &[CurvePoint]) -> String {
    let head = match curve {
        CurveArg::Threads => "threads",
        CurveArg::Regs => "regs",
        CurveArg::Smem => "smem_bytes",
    };
    let mut s = format!(
        "{head:>10}  {:>9}  {:>12}  {:>9}  limiter\n",
        "blocks/SM", "active_warps", "occupancy"
    );
    for p in points {
        let _ = writeln!(
            s,
            "{:>10}  {:>9}  {:>12}  {:>9}  {}",
            p.x,
            p.blocks_per_sm,
            p.active_warps,
            percent(p.occupancy),
            limiter_names(&p.limiters).join(",")
        );
    }
    s
}
