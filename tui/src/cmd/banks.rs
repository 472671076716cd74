//! `ktui banks`: the shared-memory bank cost of one warp-wide access.
//!
//! The lanes' addresses come from `--index` (an element index into an array whose base
//! is 128-byte aligned, evaluated for warp 0 of `--block`) or from `--offsets` (byte
//! offsets, `-1` for an inactive lane, 32 per warp, so a measured pattern replays
//! exactly; several warps' worth are summed as the profiler's counters are).
//!
//! Exit codes: 0 with a result, 1 when the model rejects the access (a misaligned
//! offset), 2 for usage errors.
use super::out;
use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use kernaut_ide::gpu::arch::Arch;
use kernaut_ide::gpu::banks::{
    analyze, AccessKind, AccessWidth, BankReport, WarpAccess, BANKS, WARP_LANES,
};
use kernaut_ide::gpu::expr::{EvalError, Expr, WarpContext};
use kernaut_tui::app::model::ArchChoice;
use serde_json::json;

/// Arguments of this subcommand.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Target architecture (the bank model was measured on sm_90).
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// Bytes per element and per access: 1, 2, 4, 8 or 16.
    #[arg(long = "elem-bytes", value_name = "BYTES", default_value_t = 4)]
    pub elem_bytes: u32,
    /// Element index per thread, e.g. 'lane*33' or 'threadIdx.y*32+threadIdx.x'.
    #[arg(
        long,
        value_name = "EXPR",
        conflicts_with = "offsets",
        required_unless_present = "offsets"
    )]
    pub index: Option<String>,
    /// Byte offset per lane, comma- or semicolon-separated, -1 for an inactive lane
    /// (32 per warp).
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
    let kind = if args.store {
        AccessKind::Store
    } else {
        AccessKind::Load
    };
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
        match analyze(&WarpAccess {
            addresses,
            width,
            kind,
        }) {
            Ok(r) => reports.push((addresses, r)),
            Err(e) => {
                eprintln!("ktui: no bank analysis: {e}");
                return Ok(ExitCode::from(1));
            }
        }
    }
    let out = if args.json {
        format!("{}\n", report_json(arch, width, kind, &reports))
    } else {
        report_text(arch, width, kind, block, args.warp, &reports)
    };
    out!("{out}");
    Ok(ExitCode::SUCCESS)
}

type Addresses = [Option<u32>; WARP_LANES];

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
        let bytes = u32::try_from(index)
            .ok()
            .and_then(|i| i.checked_mul(width.bytes()))
            .ok_or_else(|| {
                anyhow!("lane {lane}: element index {index} is not a shared-memory offset")
            })?;
        *slot = Some(bytes);
    }
    Ok(out)
}

/// The element index `--index` gives each lane of warp `warp` of `block`, with the
/// `--define NAME=VALUE` constants (`None` for an inactive lane). Shared by `ktui banks`
/// and `ktui coalescing`.
pub(crate) fn warp_indices(
    text: &str,
    block: [u32; 3],
    warp: u32,
    defines: &[String],
) -> anyhow::Result<[Option<i64>; WARP_LANES]> {
    let expr = Expr::parse(text).with_context(|| format!("reading --index `{text}`"))?;
    let mut constants = Vec::new();
    for d in defines {
        let (name, value) = d
            .split_once('=')
            .ok_or_else(|| anyhow!("--define `{d}` is not NAME=VALUE"))?;
        let value = match Expr::parse(value) {
            Ok(Expr::Int(v)) => v,
            _ => bail!("--define `{d}`: the value is not an integer"),
        };
        constants.push((name.trim().to_string(), value));
    }
    let ctx = WarpContext {
        block,
        warp,
        constants,
    };
    match expr.eval_warp(&ctx) {
        Ok(v) => Ok(v),
        Err(EvalError::UnknownName { name }) => bail!("{}", unknown_name(text, &name)),
        Err(e) => Err(e).with_context(|| format!("evaluating --index `{text}`")),
    }
}

/// Names people give the thread's own index; the model spells it `threadIdx.x` (the
/// index in the block) or `lane` (the index in the warp).
const THREAD_INDEX_NAMES: &[&str] = &[
    "tid",
    "tx",
    "t",
    "idx",
    "thread",
    "thread_id",
    "threadid",
    "lid",
    "lane_id",
    "laneid",
    "local_id",
    "i",
];

/// The message for a name in `--index` without a value. A name that reads as the
/// thread's index gets the expression rewritten with `threadIdx.x`; holding it at a
/// constant (`-D NAME=VALUE`) would give every lane the same address, so that is only
/// offered for names that read as a value the warp shares.
pub(crate) fn unknown_name(text: &str, name: &str) -> String {
    let rewrite = |with: &str| {
        let mut out = String::new();
        let mut rest = text;
        while let Some(p) = rest.find(name) {
            let before = rest[..p].chars().last();
            let after = rest[p + name.len()..].chars().next();
            let ident =
                |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
            out.push_str(&rest[..p]);
            out.push_str(if ident(before) || ident(after) {
                name
            } else {
                with
            });
            rest = &rest[p + name.len()..];
        }
        out.push_str(rest);
        out
    };
    if THREAD_INDEX_NAMES.contains(&name.to_ascii_lowercase().as_str()) {
        format!(
            "`{name}` in --index `{text}` is not known; if it is the thread's index, write it \
             as `threadIdx.x` (or `lane` for the index in the warp): --index '{}'",
            rewrite("threadIdx.x")
        )
    } else {
        format!(
            "`{name}` in --index `{text}` has no value; give the warp's value with -D {name}=VALUE \
             (the lane variables are threadIdx.x/y/z and lane)"
        )
    }
}

pub(crate) fn parse_block(text: &str) -> anyhow::Result<[u32; 3]> {
    let parts: Vec<&str> = text.split(['x', 'X', ',']).collect();
    if parts.is_empty() || parts.len() > 3 {
        bail!("`{text}` is not a block shape like 32, 32x8 or 8x8x4");
    }
    let mut block = [1u32; 3];
    for (slot, p) in block.iter_mut().zip(&parts) {
        *slot = p
            .trim()
            .parse()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| anyhow!("`{text}` is not a block shape like 32, 32x8 or 8x8x4"))?;
    }
    Ok(block)
}

/// Parses `0-15`, `0-7,24-31` or `3` into a mask of lanes.
pub(crate) fn parse_lanes(text: &str) -> anyhow::Result<u32> {
    let mut mask = 0u32;
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let lane = |s: &str| -> anyhow::Result<u32> {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|&l| (l as usize) < WARP_LANES)
                .ok_or_else(|| anyhow!("`{part}` is not a lane or lane range within 0-31"))
        };
        let (lo, hi) = (lane(lo)?, lane(hi)?);
        if lo > hi {
            bail!("`{part}`: the range runs backwards");
        }
        for l in lo..=hi {
            mask |= 1 << l;
        }
    }
    Ok(mask)
}

/// `--offsets`: byte offsets, comma- or semicolon-separated, `-1` for an inactive lane,
/// 32 per warp; each offset converted to the command's address type. Shared by
/// `ktui banks` and `ktui coalescing`.
pub(crate) fn parse_offsets<T: TryFrom<i64> + Copy>(
    text: &str,
) -> anyhow::Result<Vec<[Option<T>; WARP_LANES]>> {
    let mut values = Vec::new();
    for item in text.split([',', ';']).map(str::trim) {
        let v: i64 = item
            .parse()
            .map_err(|_| anyhow!("`{item}` is not a byte offset (or -1)"))?;
        values.push(match v {
            -1 => None,
            v => Some(T::try_from(v).map_err(|_| anyhow!("{v} is not a byte offset (or -1)"))?),
        });
    }
    if values.is_empty() || values.len() % WARP_LANES != 0 {
        bail!("expected 32 offsets per warp, got {}", values.len());
    }
    Ok(values
        .chunks(WARP_LANES)
        .map(|c| c.try_into().expect("chunks of 32"))
        .collect())
}

fn width_name(width: AccessWidth, kind: AccessKind) -> String {
    let op = match kind {
        AccessKind::Load => "load",
        AccessKind::Store => "store",
    };
    format!("{}-byte {op}", width.bytes())
}

fn report_json(
    arch: Arch,
    width: AccessWidth,
    kind: AccessKind,
    reports: &[(Addresses, BankReport)],
) -> serde_json::Value {
    let sum = |f: fn(&BankReport) -> u32| reports.iter().map(|(_, r)| f(r)).sum::<u32>();
    let first = &reports[0].1;
    let mut v = json!({
        "arch": arch.to_string(),
        "elem_bytes": width.bytes(),
        "op": match kind { AccessKind::Load => "ld", AccessKind::Store => "st" },
        "wavefronts": sum(|r| r.wavefronts),
        "bank_conflicts": sum(|r| r.bank_conflicts),
        "conflict_degree": reports.iter().map(|(_, r)| r.conflict_degree).max().unwrap_or(0),
        "cycles": sum(|r| r.cycles),
        "active_lanes": first.active_lanes,
        "pair_packed": first.pair_packed,
        "lanes_per_group": first.lanes_per_group,
        "banks": first.words_per_bank,
        "bank_words": (0..BANKS).map(|b| first.bank_words(b)).collect::<Vec<_>>(),
        "addresses": reports[0].0,
    });
    if reports.len() > 1 {
        v["warps"] = json!(reports.len());
    }
    v
}

fn report_text(
    arch: Arch,
    width: AccessWidth,
    kind: AccessKind,
    block: Option<[u32; 3]>,
    warp: u32,
    reports: &[(Addresses, BankReport)],
) -> String {
    let mut s = String::new();
    for (i, (_, r)) in reports.iter().enumerate() {
        let origin = match block {
            Some([x, y, z]) => format!(", block {x}x{y}x{z}, warp {warp}"),
            None if reports.len() > 1 => format!(", warp {i}"),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "{arch}: {}, {} active lanes{origin}",
            width_name(width, kind),
            r.active_lanes
        );
        let degree = match r.conflict_degree {
            0 => "none (no active lane)".to_string(),
            1 => "1 (conflict-free)".to_string(),
            d => format!("{d}-way"),
        };
        let groups = match r.lanes_per_group {
            32 => "whole warp",
            16 => "per half-warp",
            _ => "per quarter-warp",
        };
        let packed = if r.pair_packed { ", pair-packed" } else { "" };
        let _ = writeln!(s, "wavefronts:      {}", r.wavefronts);
        let _ = writeln!(
            s,
            "bank conflicts:  {} (as Nsight Compute counts them)",
            r.bank_conflicts
        );
        let _ = writeln!(s, "conflict degree: {degree}");
        let _ = writeln!(s, "cycles:          {}", r.cycles);
        let _ = writeln!(s, "resolved:        {groups}{packed}");
        let _ = writeln!(s, "distinct 32-bit words per bank:");
        let counts = r.words_per_bank;
        for half in 0..2 {
            let range = half * BANKS / 2..(half + 1) * BANKS / 2;
            let mut banks = String::from("  bank ");
            let mut words = String::from("  words");
            for b in range {
                let _ = write!(banks, "{b:>3}");
                match counts[b] {
                    0 => words.push_str("  ."),
                    n => {
                        let _ = write!(words, "{n:>3}");
                    }
                }
            }
            let _ = writeln!(s, "{banks}\n{words}");
        }
    }
    if reports.len() > 1 {
        let total = |f: fn(&BankReport) -> u32| reports.iter().map(|(_, r)| f(r)).sum::<u32>();
        let _ = writeln!(
            s,
            "total over {} warps: {} wavefronts, {} bank conflicts",
            reports.len(),
            total(|r| r.wavefronts),
            total(|r| r.bank_conflicts)
        );
    }
    s
}
