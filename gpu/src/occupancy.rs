//! Occupancy: how many blocks of a kernel fit on one SM, and what stops more.
//!
//! The model, written from the runtime's measured behaviour (see
//! `gpu/tests/data/README.md`) and the CUDA Programming Guide:
//!
//! * **Warps.** A block of `T` threads takes `ceil(T / 32)` warp slots; the SM has
//!   [`ArchLimits::max_warps_per_sm`].
//! * **Registers.** Each warp gets `regs × 32` registers rounded up to the allocation
//!   unit (256). The register file is split between the SM's sub-partitions, and a warp
//!   lives in one of them, so the warps that fit are counted per sub-partition first:
//!   33 registers cost like 40. A block whose warps, spread over the sub-partitions,
//!   need more than the per-block register limit cannot launch at all.
//! * **Shared memory.** A block costs its static plus dynamic shared memory plus the
//!   per-block reservation (1 KiB from CC 8.0), rounded up to the allocation granularity
//!   (128 bytes from CC 8.0, 256 before). The shared memory per SM is the carveout
//!   preference (default: the largest) rounded up to the next carveout step, or the
//!   smallest step that holds one block if the preferred one does not.
//! * **Blocks and barriers.** The SM holds at most [`ArchLimits::max_blocks_per_sm`]
//!   blocks, and on CC 9.0 and later at most [`ArchLimits::barriers_per_sm`] blocks
//!   that each use one barrier.
//!
//! Blocks per SM is the smallest of these limits; every limit equal to it is reported
//! as binding. Unlike the CUDA runtime, a block larger than the kernel's
//! `__launch_bounds__` is an error here, since such a launch fails.

use serde::{Deserialize, Serialize};

use crate::arch::{Arch, ArchLimits};

/// One kernel launch configuration, as the occupancy model needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OccupancyInput {
    /// Threads per block (the product of the block's dimensions).
    pub threads_per_block: u32,
    /// Registers per thread, as ptxas reports them.
    pub regs_per_thread: u32,
    /// Static shared memory per block, in bytes.
    pub static_smem: u32,
    /// Dynamic shared memory per block, in bytes (the third launch parameter).
    pub dynamic_smem: u32,
    /// `cudaFuncAttributePreferredSharedMemoryCarveout` as a percentage (0 to 100) of
    /// the largest shared-memory carveout; `None` is the default (-1), which the runtime
    /// treats as the largest.
    pub carveout: Option<u32>,
    /// The first argument of the kernel's `__launch_bounds__`, if it has one.
    pub launch_bounds_max_threads: Option<u32>,
    /// `cudaFuncAttributeMaxDynamicSharedMemorySize` in force, if known. `None` assumes
    /// the program raises it as far as the launch needs.
    pub max_dynamic_smem: Option<u32>,
}

impl OccupancyInput {
    /// A configuration with this block size and register count and no shared memory.
    pub fn new(threads_per_block: u32, regs_per_thread: u32) -> OccupancyInput {
        OccupancyInput {
            threads_per_block,
            regs_per_thread,
            ..OccupancyInput::default()
        }
    }
}

/// A resource that can limit the blocks resident on an SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// Warp slots per SM.
    Warps,
    /// The register file.
    Registers,
    /// Shared memory.
    SharedMemory,
    /// The cap on resident blocks per SM.
    Blocks,
    /// Named barriers per SM.
    Barriers,
}

impl Limiter {
    /// Every limiter, in the order of the occupancy API's bit mask (1, 2, 4, 8, 16).
    pub const ALL: [Limiter; 5] = [
        Limiter::Warps,
        Limiter::Registers,
        Limiter::SharedMemory,
        Limiter::Blocks,
        Limiter::Barriers,
    ];

    /// The name used in text and JSON output: `warps`, `registers`, `shared_memory`,
    /// `blocks` or `barriers`.
    pub fn name(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared_memory",
            Limiter::Blocks => "blocks",
            Limiter::Barriers => "barriers",
        }
    }

    /// The bit of this limiter in the occupancy API's `limitingFactors` mask.
    pub fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// The limiters that bind (whose block limit equals the blocks per SM).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Limiters {
    /// Warp slots bind.
    pub warps: bool,
    /// Registers bind.
    pub registers: bool,
    /// Shared memory binds.
    pub shared_memory: bool,
    /// The block cap binds.
    pub blocks: bool,
    /// Named barriers bind.
    pub barriers: bool,
}

impl Limiters {
    /// Whether this limiter binds.
    pub fn contains(&self, limiter: Limiter) -> bool {
        match limiter {
            Limiter::Warps => self.warps,
            Limiter::Registers => self.registers,
            Limiter::SharedMemory => self.shared_memory,
            Limiter::Blocks => self.blocks,
            Limiter::Barriers => self.barriers,
        }
    }

    /// The binding limiters, in bit order.
    pub fn iter(&self) -> impl Iterator<Item = Limiter> + '_ {
        Limiter::ALL.into_iter().filter(|l| self.contains(*l))
    }

    /// The first binding limiter in bit order, the one a one-word summary names.
    pub fn primary(&self) -> Option<Limiter> {
        self.iter().next()
    }

    /// The occupancy API's bit mask (1 warps, 2 registers, 4 shared memory, 8 blocks,
    /// 16 barriers).
    pub fn mask(&self) -> u32 {
        self.iter().map(Limiter::bit).sum()
    }
}

/// How many blocks per SM each resource alone allows; `None` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockLimits {
    /// Warp slots.
    pub warps: u32,
    /// The register file; `None` when the kernel uses no registers.
    pub registers: Option<u32>,
    /// Shared memory; `None` when a block needs none.
    pub shared_memory: Option<u32>,
    /// The per-SM block cap.
    pub blocks: u32,
    /// Named barriers; `None` on architectures where they do not cap blocks.
    pub barriers: Option<u32>,
}

impl BlockLimits {
    /// The limit of one resource.
    pub fn get(&self, limiter: Limiter) -> Option<u32> {
        match limiter {
            Limiter::Warps => Some(self.warps),
            Limiter::Registers => self.registers,
            Limiter::SharedMemory => self.shared_memory,
            Limiter::Blocks => Some(self.blocks),
            Limiter::Barriers => self.barriers,
        }
    }
}

/// The occupancy of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    /// Resident blocks per SM. A block that cannot launch is an error
    /// ([`OccupancyError::TooManyResources`] and others), never zero blocks here.
    pub blocks_per_sm: u32,
    /// Warps per block.
    pub warps_per_block: u32,
    /// Resident warps per SM.
    pub active_warps: u32,
    /// Warp slots per SM.
    pub max_warps_per_sm: u32,
    /// `active_warps / max_warps_per_sm`, from 0 to 1.
    pub occupancy: f64,
    /// The resources that bind.
    pub limiters: Limiters,
    /// What each resource alone allows.
    pub limits: BlockLimits,
    /// Registers allocated per warp.
    pub regs_per_warp: u32,
    /// Shared memory allocated per block, in bytes, reservation and rounding included.
    pub smem_per_block: u32,
    /// Shared memory per SM under the carveout, in bytes.
    pub smem_per_sm: u32,
}

/// An input the model rejects, naming the limit it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OccupancyError {
    /// A block must have at least one thread.
    #[error("a block needs at least 1 thread")]
    ZeroThreads,
    /// More threads than a block may have.
    #[error("{threads} threads per block is over the limit of {max}")]
    TooManyThreads {
        /// Threads asked for.
        threads: u32,
        /// The architecture's maximum.
        max: u32,
    },
    /// More threads than the kernel's `__launch_bounds__` allow.
    #[error("{threads} threads per block is over the kernel's `__launch_bounds__` of {bound}; the launch would fail")]
    LaunchBoundsExceeded {
        /// Threads asked for.
        threads: u32,
        /// The kernel's bound.
        bound: u32,
    },
    /// More registers per thread than the architecture has.
    #[error("{regs} registers per thread is over the limit of {max}")]
    TooManyRegisters {
        /// Registers asked for.
        regs: u32,
        /// The architecture's maximum.
        max: u32,
    },
    /// The block's registers, as allocated, do not fit in the register file a block may
    /// use: the launch fails with `cudaErrorLaunchOutOfResources`.
    #[error("{}", too_many_resources(.threads, .regs, .allocated, .max))]
    TooManyResources {
        /// Threads per block.
        threads: u32,
        /// Registers per thread.
        regs: u32,
        /// Registers per block as allocated (per warp, in allocation units).
        allocated: u64,
        /// The architecture's registers per block.
        max: u32,
    },
    /// A carveout preference outside 0 to 100 percent.
    #[error("a shared-memory carveout of {percent}% is outside 0 to 100")]
    CarveoutOutOfRange {
        /// The preference given.
        percent: u32,
    },
    /// More static shared memory than a kernel may declare.
    #[error("{bytes} bytes of static shared memory is over the limit of {max}")]
    StaticSharedMemoryTooLarge {
        /// Static bytes asked for.
        bytes: u32,
        /// The architecture's maximum.
        max: u32,
    },
    /// Static plus dynamic shared memory over the opt-in maximum per block.
    #[error("{bytes} bytes of shared memory per block (static + dynamic) is over the opt-in maximum of {max}")]
    SharedMemoryOverOptIn {
        /// Static plus dynamic bytes.
        bytes: u64,
        /// The architecture's opt-in maximum.
        max: u32,
    },
    /// Dynamic shared memory over the kernel's `cudaFuncAttributeMaxDynamicSharedMemorySize`.
    #[error("{bytes} bytes of dynamic shared memory is over the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize of {attribute}")]
    DynamicSharedMemoryOverAttribute {
        /// Dynamic bytes asked for.
        bytes: u32,
        /// The attribute in force.
        attribute: u32,
    },
}

impl OccupancyError {
    /// The resource whose limit the input breaks, if it is one the model tracks.
    pub fn limiter(&self) -> Option<Limiter> {
        match self {
            OccupancyError::ZeroThreads
            | OccupancyError::TooManyThreads { .. }
            | OccupancyError::LaunchBoundsExceeded { .. } => Some(Limiter::Warps),
            OccupancyError::TooManyRegisters { .. } | OccupancyError::TooManyResources { .. } => {
                Some(Limiter::Registers)
            }
            OccupancyError::CarveoutOutOfRange { .. } => None,
            OccupancyError::StaticSharedMemoryTooLarge { .. }
            | OccupancyError::SharedMemoryOverOptIn { .. }
            | OccupancyError::DynamicSharedMemoryOverAttribute { .. } => {
                Some(Limiter::SharedMemory)
            }
        }
    }
}

/// A count with thousands separators: `66,560`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The message of [`OccupancyError::TooManyResources`], in the runtime's words:
/// `too many resources requested for launch: 1024 threads × 65 registers = 66,560
/// registers per block (73,728 as allocated) > 65,536`.
fn too_many_resources(threads: &u32, regs: &u32, allocated: &u64, max: &u32) -> String {
    let plain = u64::from(*threads) * u64::from(*regs);
    let note = if *allocated > plain {
        format!(" ({} as allocated)", group(*allocated))
    } else {
        String::new()
    };
    format!(
        "too many resources requested for launch: {threads} threads × {regs} registers = {} registers per block{note} > {}",
        group(plain),
        group(u64::from(*max))
    )
}

/// Registers per block as allocated: per warp, rounded to the allocation unit, for the
/// block's warps rounded to the sub-partitions.
fn block_registers(l: &ArchLimits, threads: u32, regs: u32) -> u64 {
    let warps = u64::from(threads.div_ceil(l.warp_size));
    let per_warp = round_up(
        u64::from(regs) * u64::from(l.warp_size),
        u64::from(l.reg_alloc_unit),
    );
    per_warp * round_up(warps, u64::from(l.sub_partitions))
}

fn round_up(value: u64, unit: u64) -> u64 {
    value.div_ceil(unit) * unit
}

fn validate(l: &ArchLimits, input: &OccupancyInput) -> Result<(), OccupancyError> {
    let threads = input.threads_per_block;
    if threads == 0 {
        return Err(OccupancyError::ZeroThreads);
    }
    if threads > l.max_threads_per_block {
        return Err(OccupancyError::TooManyThreads {
            threads,
            max: l.max_threads_per_block,
        });
    }
    if let Some(bound) = input.launch_bounds_max_threads {
        if threads > bound {
            return Err(OccupancyError::LaunchBoundsExceeded { threads, bound });
        }
    }
    if input.regs_per_thread > l.max_regs_per_thread {
        return Err(OccupancyError::TooManyRegisters {
            regs: input.regs_per_thread,
            max: l.max_regs_per_thread,
        });
    }
    if let Some(percent) = input.carveout {
        if percent > 100 {
            return Err(OccupancyError::CarveoutOutOfRange { percent });
        }
    }
    if input.static_smem > l.smem_per_block {
        return Err(OccupancyError::StaticSharedMemoryTooLarge {
            bytes: input.static_smem,
            max: l.smem_per_block,
        });
    }
    let total = u64::from(input.static_smem) + u64::from(input.dynamic_smem);
    if total > u64::from(l.smem_per_block_optin) {
        return Err(OccupancyError::SharedMemoryOverOptIn {
            bytes: total,
            max: l.smem_per_block_optin,
        });
    }
    if let Some(attribute) = input.max_dynamic_smem {
        if input.dynamic_smem > attribute {
            return Err(OccupancyError::DynamicSharedMemoryOverAttribute {
                bytes: input.dynamic_smem,
                attribute,
            });
        }
    }
    if input.regs_per_thread > 0 {
        let allocated = block_registers(l, threads, input.regs_per_thread);
        if allocated > u64::from(l.regs_per_block) {
            return Err(OccupancyError::TooManyResources {
                threads,
                regs: input.regs_per_thread,
                allocated,
                max: l.regs_per_block,
            });
        }
    }
    Ok(())
}

/// The shared memory per SM that a carveout preference gives, for blocks of
/// `smem_per_block` bytes.
fn carveout_smem_per_sm(l: &ArchLimits, carveout: Option<u32>, smem_per_block: u64) -> u64 {
    let max = u64::from(l.smem_per_sm);
    let preferred = match carveout {
        None => max,
        Some(percent) => (u64::from(percent) * max).div_ceil(100),
    };
    let step_at_least = |bytes: u64| {
        l.carveout_steps_kib
            .iter()
            .map(|&k| u64::from(k) * 1024)
            .find(|&s| s >= bytes)
            .unwrap_or(max)
    };
    let chosen = step_at_least(preferred);
    if smem_per_block > chosen {
        step_at_least(smem_per_block)
    } else {
        chosen
    }
}

/// The occupancy of a configuration on an architecture.
///
/// ```
/// use kernaut_gpu::{arch::Arch, occupancy::{occupancy, OccupancyInput}};
/// let arch = Arch::parse("sm_90").unwrap();
/// let occ = occupancy(arch, &OccupancyInput::new(256, 64)).unwrap();
/// assert_eq!(occ.blocks_per_sm, 4);
/// assert_eq!(occ.occupancy, 0.5);
/// assert!(occ.limiters.registers);
/// ```
pub fn occupancy(arch: Arch, input: &OccupancyInput) -> Result<Occupancy, OccupancyError> {
    let l = arch.limits();
    validate(l, input)?;
    Ok(compute(l, input))
}

/// The model proper, for an input that [`validate`] accepted.
fn compute(l: &ArchLimits, input: &OccupancyInput) -> Occupancy {
    let warps_per_block = input.threads_per_block.div_ceil(l.warp_size);

    let warps = l.max_warps_per_sm / warps_per_block;

    let (registers, regs_per_warp) = if input.regs_per_thread == 0 {
        (None, 0)
    } else {
        let per_warp = round_up(
            u64::from(input.regs_per_thread) * u64::from(l.warp_size),
            u64::from(l.reg_alloc_unit),
        );
        let sub = u64::from(l.sub_partitions);
        let block_regs = per_warp * round_up(u64::from(warps_per_block), sub);
        let limit = if block_regs > u64::from(l.regs_per_block) {
            0
        } else {
            let warps_per_sub = (u64::from(l.regs_per_sm) / sub) / per_warp;
            (warps_per_sub * sub / u64::from(warps_per_block)) as u32
        };
        (Some(limit), per_warp as u32)
    };

    let block_smem = round_up(
        u64::from(input.static_smem)
            + u64::from(input.dynamic_smem)
            + u64::from(l.reserved_smem_per_block),
        u64::from(l.smem_alloc_granularity),
    );
    let sm_smem = carveout_smem_per_sm(l, input.carveout, block_smem);
    // A block that needs no shared memory is not limited by it.
    let shared_memory = sm_smem.checked_div(block_smem).map(|b| b as u32);

    let limits = BlockLimits {
        warps,
        registers,
        shared_memory,
        blocks: l.max_blocks_per_sm,
        barriers: l.barriers_per_sm,
    };
    let blocks_per_sm = Limiter::ALL
        .into_iter()
        .filter_map(|r| limits.get(r))
        .min()
        .unwrap_or(0);
    let binds = |r: Limiter| limits.get(r) == Some(blocks_per_sm);
    let limiters = Limiters {
        warps: binds(Limiter::Warps),
        registers: binds(Limiter::Registers),
        shared_memory: binds(Limiter::SharedMemory),
        blocks: binds(Limiter::Blocks),
        barriers: binds(Limiter::Barriers),
    };
    let active_warps = blocks_per_sm * warps_per_block;
    Occupancy {
        blocks_per_sm,
        warps_per_block,
        active_warps,
        max_warps_per_sm: l.max_warps_per_sm,
        occupancy: f64::from(active_warps) / f64::from(l.max_warps_per_sm),
        limiters,
        limits,
        regs_per_warp,
        smem_per_block: block_smem as u32,
        smem_per_sm: sm_smem as u32,
    }
}

/// What a curve varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurveAxis {
    /// Threads per block: every multiple of the warp size up to the largest block the
    /// kernel may launch.
    Threads,
    /// Registers per thread: 1 to the architecture's maximum.
    Registers,
    /// Shared memory per block (static plus dynamic) in bytes: from the static size up
    /// to the opt-in maximum, at every multiple of 1 KiB and at both ends.
    SharedMemory,
}

impl CurveAxis {
    /// Every axis.
    pub const ALL: [CurveAxis; 3] = [
        CurveAxis::Threads,
        CurveAxis::Registers,
        CurveAxis::SharedMemory,
    ];

    /// The name used in text and JSON output: `threads`, `regs` or `smem`.
    pub fn name(self) -> &'static str {
        match self {
            CurveAxis::Threads => "threads",
            CurveAxis::Registers => "regs",
            CurveAxis::SharedMemory => "smem",
        }
    }
}

/// One point of an occupancy curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The value on the varied axis.
    pub x: u32,
    /// Resident blocks per SM.
    pub blocks_per_sm: u32,
    /// Resident warps per SM.
    pub active_warps: u32,
    /// Occupancy from 0 to 1.
    pub occupancy: f64,
    /// The binding limiters.
    pub limiters: Limiters,
}

/// The three curves a chart draws for one kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curves {
    /// Occupancy against threads per block.
    pub threads: Vec<CurvePoint>,
    /// Occupancy against registers per thread.
    pub registers: Vec<CurvePoint>,
    /// Occupancy against shared memory per block.
    pub shared_memory: Vec<CurvePoint>,
}

fn point(x: u32, occ: &Occupancy) -> CurvePoint {
    CurvePoint {
        x,
        blocks_per_sm: occ.blocks_per_sm,
        active_warps: occ.active_warps,
        occupancy: occ.occupancy,
        limiters: occ.limiters,
    }
}

/// Occupancy along one axis, the other inputs held as given. The input must itself be
/// valid; points that the kernel could not launch (more threads than its launch bound,
/// more shared memory than the opt-in maximum) are left out, and a curve treats
/// `max_dynamic_smem` as raised as far as each point needs.
pub fn occupancy_curve(
    arch: Arch,
    input: &OccupancyInput,
    axis: CurveAxis,
) -> Result<Vec<CurvePoint>, OccupancyError> {
    let l = arch.limits();
    validate(l, input)?;
    let mut base = input.clone();
    base.max_dynamic_smem = None;
    let mut out = Vec::new();
    match axis {
        CurveAxis::Threads => {
            let top = input
                .launch_bounds_max_threads
                .unwrap_or(u32::MAX)
                .min(l.max_threads_per_block);
            let mut t = l.warp_size;
            while t <= top {
                base.threads_per_block = t;
                out.push(point(t, &compute(l, &base)));
                t += l.warp_size;
            }
        }
        CurveAxis::Registers => {
            out.reserve(l.max_regs_per_thread as usize);
            for r in 1..=l.max_regs_per_thread {
                base.regs_per_thread = r;
                out.push(point(r, &compute(l, &base)));
            }
        }
        CurveAxis::SharedMemory => {
            let lo = input.static_smem;
            let hi = l.smem_per_block_optin;
            let mut x = lo;
            while x <= hi {
                base.dynamic_smem = x - lo;
                out.push(point(x, &compute(l, &base)));
                let next = (x / 1024 + 1) * 1024;
                x = if x < hi && next > hi { hi } else { next };
            }
        }
    }
    Ok(out)
}

/// All three curves.
pub fn occupancy_curves(arch: Arch, input: &OccupancyInput) -> Result<Curves, OccupancyError> {
    Ok(Curves {
        threads: occupancy_curve(arch, input, CurveAxis::Threads)?,
        registers: occupancy_curve(arch, input, CurveAxis::Registers)?,
        shared_memory: occupancy_curve(arch, input, CurveAxis::SharedMemory)?,
    })
}

/// The block size that maximises resident threads per SM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockSizeSuggestion {
    /// Threads per block.
    pub block_size: u32,
    /// Blocks per SM at that size; times the SM count, the smallest grid that fills the
    /// GPU (`minGridSize` of `cudaOccupancyMaxPotentialBlockSize`).
    pub blocks_per_sm: u32,
    /// Occupancy at that size.
    pub occupancy: f64,
}

/// The block size that gives the most resident threads per SM, as
/// `cudaOccupancyMaxPotentialBlockSize` chooses it: every multiple of the warp size
/// (and the largest allowed size itself) is tried from the largest down, and a smaller
/// size wins only with strictly more resident threads. The largest allowed size is the
/// architecture's maximum, lowered to `launch_bounds_max_threads` when given;
/// `threads_per_block` of the input is ignored. Returns `Ok(None)` when no block size
/// can launch.
pub fn max_potential_block_size(
    arch: Arch,
    input: &OccupancyInput,
) -> Result<Option<BlockSizeSuggestion>, OccupancyError> {
    let dynamic = input.dynamic_smem;
    max_potential_block_size_with(arch, input, |_| dynamic)
}

/// As [`max_potential_block_size`], with dynamic shared memory that depends on the
/// block size (as `cudaOccupancyMaxPotentialBlockSizeVariableSMem`). A block size whose
/// shared memory is invalid is skipped.
pub fn max_potential_block_size_with(
    arch: Arch,
    input: &OccupancyInput,
    dynamic_smem: impl Fn(u32) -> u32,
) -> Result<Option<BlockSizeSuggestion>, OccupancyError> {
    let l = arch.limits();
    let limit = input
        .launch_bounds_max_threads
        .unwrap_or(l.max_threads_per_block)
        .min(l.max_threads_per_block);
    let mut probe = input.clone();
    // The smallest block: whether the largest one fits its registers is what the search
    // below finds out.
    probe.threads_per_block = l.warp_size.min(limit).max(1);
    probe.dynamic_smem = 0;
    // Validate what does not depend on the block size, so a bad register count or
    // carveout is reported rather than skipped.
    probe.max_dynamic_smem = None;
    validate(l, &probe)?;

    let mut best: Option<BlockSizeSuggestion> = None;
    let mut best_threads = 0u32;
    let mut aligned = limit.div_ceil(l.warp_size) * l.warp_size;
    while aligned > 0 {
        let size = aligned.min(limit);
        aligned -= l.warp_size;
        let mut cfg = input.clone();
        cfg.threads_per_block = size;
        cfg.dynamic_smem = dynamic_smem(size);
        let Ok(occ) = occupancy(arch, &cfg) else {
            continue;
        };
        let threads = occ.blocks_per_sm * size;
        if threads > best_threads {
            best_threads = threads;
            best = Some(BlockSizeSuggestion {
                block_size: size,
                blocks_per_sm: occ.blocks_per_sm,
                occupancy: occ.occupancy,
            });
            if threads >= l.max_threads_per_sm {
                break;
            }
        }
    }
    Ok(best)
}

/// The smallest block size that reaches the best occupancy
/// [`max_potential_block_size`] finds: a block of 256 threads that already gives 50 %
/// is a better suggestion than 1024 threads for the same 50 % (smaller blocks leave the
/// scheduler more freedom and waste less at the grid's tail). Sizes are multiples of the
/// warp size up to the same limit. Returns `Ok(None)` when no block size can launch.
pub fn smallest_best_block_size(
    arch: Arch,
    input: &OccupancyInput,
) -> Result<Option<BlockSizeSuggestion>, OccupancyError> {
    let Some(best) = max_potential_block_size(arch, input)? else {
        return Ok(None);
    };
    let l = arch.limits();
    let mut size = l.warp_size;
    while size < best.block_size {
        let mut cfg = input.clone();
        cfg.threads_per_block = size;
        if let Ok(occ) = occupancy(arch, &cfg) {
            if occ.occupancy >= best.occupancy {
                return Ok(Some(BlockSizeSuggestion {
                    block_size: size,
                    blocks_per_sm: occ.blocks_per_sm,
                    occupancy: occ.occupancy,
                }));
            }
        }
        size += l.warp_size;
    }
    Ok(Some(best))
}
