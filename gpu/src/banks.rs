//! The shared-memory bank model: what one warp-wide shared load or store costs.
//!
//! Shared memory has 32 banks of 4 bytes; the 32-bit word at byte address `a` lives in
//! bank `(a / 4) % 32`. The rules, measured with Nsight Compute on an H200 (sm_90; see
//! `gpu/tests/data/README.md`):
//!
//! 1. A lane receives `R` 32-bit registers: 1 for 1-, 2- and 4-byte accesses, 2 for
//!    8-byte, 4 for 16-byte.
//! 2. Loads only ("pair packing"): if every active lane `n` reads the same address as
//!    lane `n ^ 1` whenever that lane is active too, or the same holds for `n ^ 2`, `R`
//!    is halved (down to 1). Stores never pack.
//! 3. The warp is cut into `R` groups of `32 / R` consecutive lanes (whole warp,
//!    half-warps or quarter-warps), resolved independently: groups never share a
//!    wavefront.
//! 4. A group with an active lane costs as many wavefronts as the largest number of
//!    distinct 32-bit words any one bank must deliver to it. Lanes that touch the same
//!    word share it (broadcast), however many they are.
//! 5. Nsight Compute's `bank_conflicts` counter is the wavefronts minus, per group,
//!    `ceil(distinct words / 32)`.
//! 6. The measured throughput is `max(wavefronts, R)` cycles per instruction (after
//!    rule 2), so a partial warp still pays for its register count.
//!
//! For 1-, 2- and 4-byte accesses this is the textbook whole-warp 32-bank model. The
//! same model is applied to every architecture in the table; it was measured on sm_90.

use serde::{Deserialize, Serialize};

/// Lanes in a warp.
pub const WARP_LANES: usize = 32;
/// Shared-memory banks.
pub const BANKS: usize = 32;

/// The width of one lane's access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AccessWidth {
    /// 1 byte (`char`, `LDS.U8`).
    B1,
    /// 2 bytes (`half`, `LDS.U16`).
    B2,
    /// 4 bytes (`float`, `LDS`).
    B4,
    /// 8 bytes (`double`, `float2`, `LDS.64`).
    B8,
    /// 16 bytes (`float4`, `LDS.128`).
    B16,
}

impl AccessWidth {
    /// The width of `bytes`, if it is 1, 2, 4, 8 or 16.
    pub fn from_bytes(bytes: u32) -> Option<AccessWidth> {
        Some(match bytes {
            1 => AccessWidth::B1,
            2 => AccessWidth::B2,
            4 => AccessWidth::B4,
            8 => AccessWidth::B8,
            16 => AccessWidth::B16,
            _ => return None,
        })
    }

    /// The width in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            AccessWidth::B1 => 1,
            AccessWidth::B2 => 2,
            AccessWidth::B4 => 4,
            AccessWidth::B8 => 8,
            AccessWidth::B16 => 16,
        }
    }

    /// 32-bit registers each lane receives or sends.
    pub fn registers(self) -> u32 {
        self.bytes().div_ceil(4)
    }
}

/// Whether the warp reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessKind {
    /// A shared load (`LDS`).
    Load,
    /// A shared store (`STS`).
    Store,
}

/// One warp-wide shared-memory access.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarpAccess {
    /// The byte address (offset from a 128-byte-aligned base) each lane touches;
    /// `None` for an inactive lane.
    pub addresses: [Option<u32>; WARP_LANES],
    /// The access width.
    pub width: AccessWidth,
    /// Load or store.
    pub kind: AccessKind,
}

/// Why an access cannot be modelled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BankError {
    /// A lane's address is not a multiple of the access width; the hardware faults.
    #[error("lane {lane}: address {address} is not aligned to the {width}-byte access width")]
    Misaligned {
        /// The lane.
        lane: u32,
        /// Its byte address.
        address: u32,
        /// The access width in bytes.
        width: u32,
    },
}

/// What one warp-wide access costs, and the bank picture behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BankReport {
    /// Shared-memory wavefronts the request needs (Nsight Compute's
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}`): the cost.
    pub wavefronts: u32,
    /// Nsight Compute's `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}`.
    /// For 8- and 16-byte accesses 0 does not mean 1 wavefront.
    pub bank_conflicts: u32,
    /// Cycles per warp instruction in a throughput loop: `max(wavefronts, registers)`.
    pub cycles: u32,
    /// The worst number of distinct words one bank delivers to one lane group: 1 is
    /// conflict-free, 32 is a 32-way conflict, 0 means no lane is active.
    pub conflict_degree: u32,
    /// 32-bit registers per lane after pair packing (rule 2).
    pub registers: u32,
    /// Whether the load was pair-packed.
    pub pair_packed: bool,
    /// Lanes per independently resolved group: 32, 16 or 8.
    pub lanes_per_group: u32,
    /// Active lanes.
    pub active_lanes: u32,
    /// Distinct 32-bit words the warp touches.
    pub distinct_words: u32,
    /// Per bank, how many distinct 32-bit words the warp touches there: what a bank
    /// map draws.
    pub words_per_bank: [u32; BANKS],
    /// The distinct 32-bit words the warp touches, as word indices (byte address / 4),
    /// bank 0's first, ascending within a bank; [`BankReport::bank_words`] slices it.
    pub words: Vec<u32>,
}

impl BankReport {
    /// The distinct words the warp touches in one bank, ascending.
    pub fn bank_words(&self, bank: usize) -> &[u32] {
        let start: u32 = self.words_per_bank[..bank].iter().sum();
        let start = start as usize;
        &self.words[start..start + self.words_per_bank[bank] as usize]
    }
}

/// Distinct words per bank, without allocating. One warp-wide access puts at most 32
/// distinct words in a bank (a lane's words are consecutive, so in different banks).
struct BankSets {
    words: [[u32; WARP_LANES]; BANKS],
    len: [u8; BANKS],
}

impl BankSets {
    fn new() -> BankSets {
        BankSets {
            words: [[0; WARP_LANES]; BANKS],
            len: [0; BANKS],
        }
    }

    fn clear(&mut self) {
        self.len = [0; BANKS];
    }

    /// Adds a word; returns whether it was new.
    fn insert(&mut self, word: u32) -> bool {
        let b = word as usize % BANKS;
        let n = self.len[b] as usize;
        if self.words[b][..n].contains(&word) {
            return false;
        }
        self.words[b][n] = word;
        self.len[b] += 1;
        true
    }

    fn max_len(&self) -> u32 {
        u32::from(self.len.iter().copied().max().unwrap_or(0))
    }
}

fn pairs_match(addresses: &[Option<u32>; WARP_LANES], partner: usize) -> bool {
    (0..WARP_LANES).all(|n| match (addresses[n], addresses[n ^ partner]) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    })
}

/// Evaluates one warp-wide access.
///
/// ```
/// use kernaut_gpu::banks::{analyze, AccessKind, AccessWidth, WarpAccess};
/// // A column of a float[32][32] tile: every lane hits bank 0.
/// let addresses = std::array::from_fn(|lane| Some(lane as u32 * 128));
/// let r = analyze(&WarpAccess { addresses, width: AccessWidth::B4, kind: AccessKind::Load }).unwrap();
/// assert_eq!((r.wavefronts, r.bank_conflicts, r.conflict_degree), (32, 31, 32));
/// ```
pub fn analyze(access: &WarpAccess) -> Result<BankReport, BankError> {
    let width = access.width.bytes();
    for (lane, addr) in access.addresses.iter().enumerate() {
        if let Some(a) = *addr {
            if a % width != 0 {
                return Err(BankError::Misaligned {
                    lane: lane as u32,
                    address: a,
                    width,
                });
            }
        }
    }
    let words_per_lane = width.div_ceil(4);
    let mut registers = access.width.registers();
    let mut pair_packed = false;
    if access.kind == AccessKind::Load
        && registers > 1
        && (pairs_match(&access.addresses, 1) || pairs_match(&access.addresses, 2))
    {
        registers /= 2;
        pair_packed = true;
    }
    let lanes_per_group = WARP_LANES / registers as usize;

    let mut wavefronts = 0u32;
    let mut conflict_degree = 0u32;
    let mut baseline = 0u32;
    let mut group = BankSets::new();
    let mut warp = BankSets::new();
    for lanes in access.addresses.chunks(lanes_per_group) {
        group.clear();
        let mut distinct = 0u32;
        for a in lanes.iter().flatten() {
            let first = a / 4;
            for word in first..first + words_per_lane {
                if group.insert(word) {
                    distinct += 1;
                    warp.insert(word);
                }
            }
        }
        if distinct == 0 {
            continue;
        }
        let worst = group.max_len();
        wavefronts += worst;
        conflict_degree = conflict_degree.max(worst);
        baseline += distinct.div_ceil(BANKS as u32);
    }
    let words_per_bank: [u32; BANKS] = std::array::from_fn(|b| u32::from(warp.len[b]));
    let distinct_words: u32 = words_per_bank.iter().sum();
    let mut words = Vec::with_capacity(distinct_words as usize);
    for (b, set) in warp.words.iter_mut().enumerate() {
        let set = &mut set[..warp.len[b] as usize];
        set.sort_unstable();
        words.extend_from_slice(set);
    }
    Ok(BankReport {
        wavefronts,
        bank_conflicts: wavefronts - baseline,
        cycles: wavefronts.max(registers),
        conflict_degree,
        registers,
        pair_packed,
        lanes_per_group: lanes_per_group as u32,
        active_lanes: access.addresses.iter().flatten().count() as u32,
        distinct_words,
        words_per_bank,
        words,
    })
}
