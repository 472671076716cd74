//! `ktui coalescing`: the global-memory sectors of one warp-wide load or store.
//!
//! The lanes' addresses come from `--index` (an element index into an array whose base
//! is aligned, evaluated for one warp of `--block`) or from `--offsets` (byte offsets,
//! `-1` for an inactive lane, 32 per warp, so a measured pattern replays exactly; several
//! warps' worth are summed as the profiler's counters are). The model is the one the
//! `coalescing/strided-global-access` rule and the kernel report use
//! (`kernaut_gpu::sectors`): one request per warp instruction, and every distinct 32-byte
//! sector the active lanes' bytes touch.
//!
//! Exit codes: 0 with a result, 1 when no lane is active, 2 for usage errors.
use super::banks::{parse_block, parse_lanes, parse_offsets, warp_indices};
use super::out;
use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use kernaut_ide::gpu::banks::{AccessWidth, WARP_LANES};
use kernaut_ide::gpu::sectors::{sectors, SectorReport, SECTOR_BYTES};
use kernaut_tui::app::model::ArchChoice;
use serde_json::json;

/// Arguments of this subcommand.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Target architecture (the sector model was measured on sm_90).
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// Bytes per element and per access: 1, 2, 4, 8 or 16.
    #[arg(long = "elem-bytes", value_name = "BYTES", default_value_t = 4)]
    pub elem_bytes: u32,
    /// Element index per thread, e.g. 'lane*2' or 'threadIdx.y*1024+threadIdx.x'.
    #[arg(
        long,
        value_name = "EXPR",
        conflicts_with = "offsets",
        required_unless_present = "offsets"
    )]
    pub index: Option<String>,
    /// Byte offset per lane from an aligned base, comma- or semicolon-separated, -1 for
    /// an inactive lane (32 per warp).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub offsets: Option<String>,
    /// Block shape for `--index`: X, XxY or XxYxZ.
    #[arg(long, default_value = "32")]
    pub block: String,
    /// Which warp of the block `--index` is evaluated for.
    #[arg(long, default_value_t = 0)]
    pub warp: u32,
    /// Active lanes, e.g. 0-15 or 0-7,24-31 (default: all).
    #[arg(long, value_name = "LANES")]
    pub active: Option<String>,
    /// Model a store instead of a load.
    #[arg(long)]
    pub store: bool,
    /// A named constant used by `--index`, as NAME=VALUE (repeatable).
    #[arg(long = "define", short = 'D', value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

type Addresses = [Option<u64>; WARP_LANES];

/// Runs the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let arch = ArchChoice::parse(&args.arch)
        .map_err(anyhow::Error::msg)
        .context("reading --arch")?;
    if arch.product.is_some() {
        eprintln!("ktui: --arch {} is {}", args.arch, arch.describe());
    }
    let arch = arch.arch();
    let width = AccessWidth::from_bytes(args.elem_bytes).ok_or_else(|| {
        anyhow!(
            "--elem-bytes must be 1, 2, 4, 8 or 16, not {}",
            args.elem_bytes
        )
    })?;
    let active = match &args.active {
        Some(text) => parse_lanes(text).context("reading --active")?,
        None => u32::MAX,
    };
    let (warps, block) = match (&args.index, &args.offsets) {
        (_, Some(list)) => (parse_offsets(list).context("reading --offsets")?, None),
        (Some(index), None) => {
            let block = parse_block(&args.block).context("reading --block")?;
            (
                vec![addresses_from_index(index, block, args, width)?],
                Some(block),
            )
        }
        (None, None) => bail!("give --index or --offsets"),
    };
    let mut reports = Vec::with_capacity(warps.len());
    for mut addresses in warps {
        for (lane, a) in addresses.iter_mut().enumerate() {
            if active & (1 << lane) == 0 {
                *a = None;
            }
        }
        match sectors(&addresses, width) {
            Some(r) => reports.push((addresses, r)),
            None => {
                eprintln!("ktui: no lane of the warp is active: no request");
                return Ok(ExitCode::from(1));
            }
        }
    }
    let op = if args.store { "store" } else { "load" };
    let out = if args.json {
        format!(
            "{}\n",
            report_json(&arch.to_string(), width, args.store, &reports)
        )
    } else {
        report_text(&arch.to_string(), width, op, block, args.warp, &reports)
    };
    out!("{out}");
    Ok(ExitCode::SUCCESS)
}

fn addresses_from_index(
    text: &str,
    block: [u32; 3],
    args: &Args,
    width: AccessWidth,
) -> anyhow::Result<Addresses> {
    let values = warp_indices(text, block, args.warp, &args.defines)?;
    let mut out = [None; WARP_LANES];
    for (lane, (slot, v)) in out.iter_mut().zip(values).enumerate() {
        let Some(index) = v else { continue };
        let bytes = u64::try_from(index)
            .ok()
            .and_then(|i| i.checked_mul(u64::from(width.bytes())))
            .ok_or_else(|| {
                anyhow!("lane {lane}: element index {index} is negative or too large")
            })?;
        *slot = Some(bytes);
    }
    Ok(out)
}

/// The sectors touched, relative to the base.
fn sector_list(addresses: &Addresses, width: AccessWidth) -> Vec<u64> {
    let w = u64::from(width.bytes());
    let mut v: Vec<u64> = addresses
        .iter()
        .flatten()
        .flat_map(|a| a / SECTOR_BYTES..=(a + w - 1) / SECTOR_BYTES)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn report_json(
    arch: &str,
    width: AccessWidth,
    store: bool,
    reports: &[(Addresses, SectorReport)],
) -> serde_json::Value {
    let sum = |f: fn(&SectorReport) -> u64| reports.iter().map(|(_, r)| f(r)).sum::<u64>();
    let (first_addresses, first) = &reports[0];
    let sectors = sum(|r| u64::from(r.sectors));
    let bytes = sum(|r| r.bytes);
    let mut v = json!({
        "arch": arch,
        "elem_bytes": width.bytes(),
        "op": if store { "st" } else { "ld" },
        "requests": sum(|r| u64::from(r.requests)),
        "sectors": sectors,
        "l2_sectors": sum(|r| u64::from(r.l2_sectors())),
        "ideal_sectors": sum(|r| u64::from(r.ideal)),
        "bytes": bytes,
        "bytes_per_sector": bytes as f64 / sectors.max(1) as f64,
        "active_lanes": first_addresses.iter().flatten().count(),
        "sector_list": sector_list(first_addresses, width),
        "addresses": first_addresses,
    });
    let _ = first;
    if reports.len() > 1 {
        v["warps"] = json!(reports.len());
    }
    v
}

fn report_text(
    arch: &str,
    width: AccessWidth,
    op: &str,
    block: Option<[u32; 3]>,
    warp: u32,
    reports: &[(Addresses, SectorReport)],
) -> String {
    let mut s = String::new();
    for (i, (addresses, r)) in reports.iter().enumerate() {
        let origin = match block {
            Some([x, y, z]) => format!(", block {x}x{y}x{z}, warp {warp}"),
            None if reports.len() > 1 => format!(", warp {i}"),
            None => String::new(),
        };
        let active = addresses.iter().flatten().count();
        let _ = writeln!(
            s,
            "{arch}: {}-byte {op}, {active} active lanes{origin}",
            width.bytes()
        );
        let _ = writeln!(s, "requests:        {}", r.requests);
        let _ = writeln!(
            s,
            "sectors:         {} of 32 bytes (L2 sectors on a cold L1: {})",
            r.sectors,
            r.l2_sectors()
        );
        let _ = writeln!(
            s,
            "ideal:           {} for its {} distinct bytes ({:.1}x)",
            r.ideal,
            r.bytes,
            f64::from(r.sectors) / f64::from(r.ideal.max(1))
        );
        let _ = writeln!(
            s,
            "bytes used:      {:.1} per sector fetched ({:.0}% of the traffic)",
            r.bytes as f64 / f64::from(r.sectors.max(1)),
            r.bytes as f64 * 100.0 / (f64::from(r.sectors.max(1)) * 32.0)
        );
        let list = sector_list(addresses, width);
        let shown: Vec<String> = list.iter().take(16).map(u64::to_string).collect();
        let more = if list.len() > 16 {
            format!(", … ({} more)", list.len() - 16)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "sectors touched: {}{more} (from the base)",
            shown.join(", ")
        );
    }
    if reports.len() > 1 {
        let total = |f: fn(&SectorReport) -> u32| reports.iter().map(|(_, r)| f(r)).sum::<u32>();
        let _ = writeln!(
            s,
            "total over {} warps: {} requests, {} sectors",
            reports.len(),
            total(|r| r.requests),
            total(|r| r.sectors)
        );
    }
    s
}
