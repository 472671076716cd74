//! Per-architecture limits, from Maxwell (sm_50) to Blackwell (sm_120).
//!
//! The numbers come from the CUDA C++ Programming Guide ("Technical Specifications per
//! Compute Capability" and the per-architecture shared-memory sections). Where the
//! occupancy API uses its own constant instead of the Guide's figure (the block cap on
//! CC 12.0, the shared-memory carveout steps, the allocation granularities), the table
//! holds the value that makes the model agree with the runtime; the ground truth in
//! `gpu/tests/data/` pins those for CC 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0 and 12.0.
//! The rows for 5.x, 6.x, 7.2 and 8.7 follow the Guide's table and the same allocation
//! rules as their neighbours; no measurement checks them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A compute capability this crate knows the limits of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ComputeCapability {
    /// CC 5.0 (Maxwell, GM107).
    Sm50,
    /// CC 5.2 (Maxwell, GM20x).
    Sm52,
    /// CC 5.3 (Maxwell, Jetson TX1).
    Sm53,
    /// CC 6.0 (Pascal, GP100).
    Sm60,
    /// CC 6.1 (Pascal, GP10x).
    Sm61,
    /// CC 6.2 (Pascal, Jetson TX2).
    Sm62,
    /// CC 7.0 (Volta, V100).
    Sm70,
    /// CC 7.2 (Volta, Jetson Xavier).
    Sm72,
    /// CC 7.5 (Turing).
    Sm75,
    /// CC 8.0 (Ampere, A100).
    Sm80,
    /// CC 8.6 (Ampere, GA10x).
    Sm86,
    /// CC 8.7 (Ampere, Jetson Orin).
    Sm87,
    /// CC 8.9 (Ada Lovelace).
    Sm89,
    /// CC 9.0 (Hopper, H100/H200).
    Sm90,
    /// CC 10.0 (Blackwell, B200).
    Sm100,
    /// CC 12.0 (Blackwell, RTX 50 series).
    Sm120,
}

impl ComputeCapability {
    /// Every known compute capability, oldest first.
    pub const ALL: [ComputeCapability; 16] = [
        Self::Sm50,
        Self::Sm52,
        Self::Sm53,
        Self::Sm60,
        Self::Sm61,
        Self::Sm62,
        Self::Sm70,
        Self::Sm72,
        Self::Sm75,
        Self::Sm80,
        Self::Sm86,
        Self::Sm87,
        Self::Sm89,
        Self::Sm90,
        Self::Sm100,
        Self::Sm120,
    ];

    /// The capability with this major and minor number, if the table has it.
    pub fn from_major_minor(major: u32, minor: u32) -> Option<ComputeCapability> {
        Self::ALL
            .into_iter()
            .find(|cc| cc.major() == major && cc.minor() == minor)
    }

    /// The major version (9 for CC 9.0).
    pub fn major(self) -> u32 {
        self.limits().major
    }

    /// The minor version (0 for CC 9.0).
    pub fn minor(self) -> u32 {
        self.limits().minor
    }

    /// The limits of this capability.
    pub fn limits(self) -> &'static ArchLimits {
        &ARCH_TABLE[self as usize]
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major(), self.minor())
    }
}

/// A target architecture as a user names it: a compute capability, and whether the
/// architecture-specific feature set (`sm_90a`, `sm_100a`) was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Arch {
    /// The compute capability.
    pub cc: ComputeCapability,
    /// Whether the name carried the `a` suffix (`sm_90a`), which unlocks instructions
    /// such as `wgmma` and `setmaxnreg` that the plain target does not have.
    pub arch_specific: bool,
}

/// Why an architecture name was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchError {
    /// The text is not an architecture name in any accepted spelling, nor a GPU, or it
    /// names no compute capability.
    #[error(transparent)]
    Target(crate::target::TargetError),
    /// The name is a real target, but the tables hold no limits for its capability.
    #[error("kernaut has no occupancy limits for `{text}` (known: {known})")]
    NoLimits {
        /// The text as written.
        text: String,
        /// The known capabilities, comma-separated.
        known: String,
    },
}

impl Arch {
    /// The architecture of a compute capability, without the `a` suffix.
    pub fn new(cc: ComputeCapability) -> Arch {
        Arch {
            cc,
            arch_specific: false,
        }
    }

    /// Parses an architecture as users write it: `sm_90`, `sm_90a`, `compute_90`,
    /// `compute_90a`, `9.0`, `90`, `sm90`, in any letter case, or a GPU product name
    /// (`H200`, `A100`, `RTX 4090`; see [`crate::target::PRODUCTS`]).
    ///
    /// ```
    /// use kernaut_gpu::arch::{Arch, ComputeCapability};
    /// let a = Arch::parse("sm_90a").unwrap();
    /// assert_eq!(a.cc, ComputeCapability::Sm90);
    /// assert!(a.arch_specific);
    /// assert_eq!(Arch::parse("8.6").unwrap().to_string(), "sm_86");
    /// assert_eq!(Arch::parse("A100").unwrap().to_string(), "sm_80");
    /// ```
    pub fn parse(text: &str) -> Result<Arch, ArchError> {
        let target = crate::target::Target::parse(text).map_err(ArchError::Target)?;
        target.arch().ok_or_else(|| ArchError::NoLimits {
            text: text.trim().to_string(),
            known: known_names(),
        })
    }

    /// The limits of this architecture.
    pub fn limits(&self) -> &'static ArchLimits {
        self.cc.limits()
    }

    /// Whether the compute capability is at least `major.minor` (`cp.async` needs 8.0,
    /// TMA 9.0). Features of the `a` targets also need [`Arch::arch_specific`].
    ///
    /// ```
    /// use kernaut_gpu::arch::Arch;
    /// let a = Arch::parse("sm_86").unwrap();
    /// assert!(a.at_least(8, 0) && !a.at_least(9, 0));
    /// ```
    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.cc.major(), self.cc.minor()) >= (major, minor)
    }
}

impl std::str::FromStr for Arch {
    type Err = ArchError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Arch::parse(s)
    }
}

impl fmt::Display for Arch {
    /// Writes the canonical name, `sm_90` or `sm_90a`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = if self.arch_specific { "a" } else { "" };
        write!(f, "sm_{}{}{}", self.cc.major(), self.cc.minor(), suffix)
    }
}

fn known_names() -> String {
    ComputeCapability::ALL
        .map(|cc| format!("sm_{}{}", cc.major(), cc.minor()))
        .join(", ")
}

/// What one streaming multiprocessor of an architecture offers, and how it allocates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArchLimits {
    /// Major compute-capability version.
    pub major: u32,
    /// Minor compute-capability version.
    pub minor: u32,
    /// Threads in a warp.
    pub warp_size: u32,
    /// Most threads in one block.
    pub max_threads_per_block: u32,
    /// Most resident threads per SM.
    pub max_threads_per_sm: u32,
    /// Most resident warps per SM.
    pub max_warps_per_sm: u32,
    /// Most resident blocks per SM, as the occupancy API caps them.
    pub max_blocks_per_sm: u32,
    /// 32-bit registers per SM.
    pub regs_per_sm: u32,
    /// Most 32-bit registers one block may use.
    pub regs_per_block: u32,
    /// Most registers one thread may use.
    pub max_regs_per_thread: u32,
    /// Registers are allocated per warp in units of this many.
    pub reg_alloc_unit: u32,
    /// SM sub-partitions (warp schedulers); the register file is split evenly between
    /// them and a warp's registers live in one of them.
    pub sub_partitions: u32,
    /// Largest shared-memory carveout per SM, in bytes.
    pub smem_per_sm: u32,
    /// Shared memory a block may use without opting in, in bytes (also the most static
    /// shared memory a kernel may declare).
    pub smem_per_block: u32,
    /// Shared memory a block may use after raising
    /// `cudaFuncAttributeMaxDynamicSharedMemorySize`, in bytes (static plus dynamic).
    pub smem_per_block_optin: u32,
    /// Shared memory the system reserves for every resident block, in bytes.
    pub reserved_smem_per_block: u32,
    /// Shared memory per block is allocated in units of this many bytes.
    pub smem_alloc_granularity: u32,
    /// The shared-memory sizes per SM, in KiB, that a carveout preference can select,
    /// ascending. One entry means the split is fixed.
    pub carveout_steps_kib: &'static [u32],
    /// Named barriers per SM, when they cap resident blocks (each block uses one).
    pub barriers_per_sm: Option<u32>,
    /// Shared-memory banks.
    pub banks: u32,
    /// Width of a bank in bytes.
    pub bank_width: u32,
}

const KIB: u32 = 1024;

const fn base(major: u32, minor: u32) -> ArchLimits {
    ArchLimits {
        major,
        minor,
        warp_size: 32,
        max_threads_per_block: 1024,
        max_threads_per_sm: 2048,
        max_warps_per_sm: 64,
        max_blocks_per_sm: 32,
        regs_per_sm: 65536,
        regs_per_block: 65536,
        max_regs_per_thread: 255,
        reg_alloc_unit: 256,
        sub_partitions: 4,
        smem_per_sm: 64 * KIB,
        smem_per_block: 48 * KIB,
        smem_per_block_optin: 48 * KIB,
        reserved_smem_per_block: 0,
        smem_alloc_granularity: 256,
        carveout_steps_kib: &[64],
        barriers_per_sm: None,
        banks: 32,
        bank_width: 4,
    }
}

const fn with_threads(mut a: ArchLimits, threads: u32, blocks: u32) -> ArchLimits {
    a.max_threads_per_sm = threads;
    a.max_warps_per_sm = threads / 32;
    a.max_blocks_per_sm = blocks;
    a
}

const fn with_smem(
    mut a: ArchLimits,
    per_sm_kib: u32,
    optin_kib: u32,
    steps: &'static [u32],
) -> ArchLimits {
    a.smem_per_sm = per_sm_kib * KIB;
    a.smem_per_block_optin = optin_kib * KIB;
    a.carveout_steps_kib = steps;
    a
}

/// From CC 8.0 on, 1 KiB per block is reserved and allocation is in 128-byte units.
const fn ampere_alloc(mut a: ArchLimits) -> ArchLimits {
    a.reserved_smem_per_block = KIB;
    a.smem_alloc_granularity = 128;
    a
}

const STEPS_VOLTA: &[u32] = &[0, 8, 16, 32, 64, 96];
const STEPS_TURING: &[u32] = &[32, 64];
const STEPS_A100: &[u32] = &[0, 8, 16, 32, 64, 100, 132, 164];
const STEPS_GA10X: &[u32] = &[0, 8, 16, 32, 64, 100];
const STEPS_HOPPER: &[u32] = &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228];

/// The table, in the order of [`ComputeCapability::ALL`].
static ARCH_TABLE: [ArchLimits; 16] = [
    // 5.0: 64 KiB shared memory per SM, fixed.
    base(5, 0),
    // 5.2: 96 KiB shared memory per SM, fixed.
    with_smem(base(5, 2), 96, 48, &[96]),
    // 5.3: 64 KiB per SM and only 32 K registers per block.
    {
        let mut a = base(5, 3);
        a.regs_per_block = 32768;
        a
    },
    // 6.0: GP100 has two processing blocks per SM (NVIDIA's Pascal whitepaper), so
    // registers are split in two, not four.
    {
        let mut a = base(6, 0);
        a.sub_partitions = 2;
        a
    },
    // 6.1: 96 KiB shared memory per SM, fixed.
    with_smem(base(6, 1), 96, 48, &[96]),
    // 6.2: 64 KiB per SM and only 32 K registers per block.
    {
        let mut a = base(6, 2);
        a.regs_per_block = 32768;
        a
    },
    // 7.0 and 7.2: unified L1/shared memory, up to 96 KiB shared.
    with_smem(base(7, 0), 96, 96, STEPS_VOLTA),
    with_smem(base(7, 2), 96, 96, STEPS_VOLTA),
    // 7.5: 32 warps and 16 blocks per SM, 64 KiB shared.
    with_smem(with_threads(base(7, 5), 1024, 16), 64, 64, STEPS_TURING),
    // 8.0: 164 KiB shared per SM, 163 KiB per block.
    ampere_alloc(with_smem(base(8, 0), 164, 163, STEPS_A100)),
    // 8.6: 48 warps and 16 blocks per SM, 100 KiB shared.
    ampere_alloc(with_smem(
        with_threads(base(8, 6), 1536, 16),
        100,
        99,
        STEPS_GA10X,
    )),
    // 8.7: 48 warps and 16 blocks per SM, 164 KiB shared like 8.0.
    ampere_alloc(with_smem(
        with_threads(base(8, 7), 1536, 16),
        164,
        163,
        STEPS_A100,
    )),
    // 8.9: 48 warps and 24 blocks per SM, 100 KiB shared.
    ampere_alloc(with_smem(
        with_threads(base(8, 9), 1536, 24),
        100,
        99,
        STEPS_GA10X,
    )),
    // 9.0: 228 KiB shared per SM, 227 KiB per block; 64 named barriers cap blocks.
    {
        let mut a = ampere_alloc(with_smem(base(9, 0), 228, 227, STEPS_HOPPER));
        a.barriers_per_sm = Some(64);
        a
    },
    // 10.0: as 9.0.
    {
        let mut a = ampere_alloc(with_smem(base(10, 0), 228, 227, STEPS_HOPPER));
        a.barriers_per_sm = Some(64);
        a
    },
    // 12.0: 48 warps per SM, 24 blocks (the occupancy API's figure), 100 KiB shared,
    // 24 named barriers.
    {
        let mut a = ampere_alloc(with_smem(
            with_threads(base(12, 0), 1536, 24),
            100,
            99,
            STEPS_GA10X,
        ));
        a.barriers_per_sm = Some(24);
        a
    },
];
