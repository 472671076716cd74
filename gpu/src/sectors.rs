//! The global-memory sector model: how many 32-byte sectors one warp-wide global load or
//! store touches, and how many its data would need.
//!
//! Measured with Nsight Compute on an H200 (sm_90) for loads and stores of 1, 2, 4, 8 and
//! 16 bytes per lane over strides, offsets, partial warps, permutations, 2-D tiles and
//! random gathers: every warp instruction is one request, and the sectors of that request
//! (`l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum`) are exactly the distinct
//! 32-byte sectors that the active lanes' bytes touch. Lanes sharing an address or a
//! sector count once; an inactive lane touches nothing. The ideal is the sectors the
//! warp's distinct bytes would need packed contiguously from an aligned address, the
//! figure Nsight Compute's "uncoalesced global access" rule compares with
//! (`skill-coalescing`).

use crate::banks::{AccessWidth, WARP_LANES};

/// Bytes per sector.
pub const SECTOR_BYTES: u64 = 32;

/// The cost of one warp-wide global access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectorReport {
    /// Distinct 32-byte sectors the active lanes touch (one request).
    pub sectors: u32,
    /// Sectors the distinct bytes would need packed contiguously and aligned.
    pub ideal: u32,
    /// Distinct bytes the active lanes access.
    pub bytes: u64,
    /// Requests the warp instruction makes: one, for every width and pattern measured.
    pub requests: u32,
}

impl SectorReport {
    /// The sectors L1 requests from L2 for this access when L1 holds none of them (a
    /// first touch, as measured: `lts__t_sectors_srcunit_tex_op_{read,write}` equalled
    /// the L1 sectors on every row): every sector of the request.
    pub fn l2_sectors(&self) -> u32 {
        self.sectors
    }
}

/// The sectors touched by lanes reading or writing `width` bytes at the byte addresses
/// `addresses` (`None`: inactive lane). `None` when no lane is active.
pub fn sectors(addresses: &[Option<u64>; WARP_LANES], width: AccessWidth) -> Option<SectorReport> {
    let w = u64::from(width.bytes());
    let mut touched: Vec<u64> = Vec::with_capacity(WARP_LANES * 2);
    let mut starts: Vec<u64> = Vec::with_capacity(WARP_LANES);
    for a in addresses.iter().flatten() {
        starts.push(*a);
        let first = a / SECTOR_BYTES;
        let last = (a + w - 1) / SECTOR_BYTES;
        touched.extend(first..=last);
    }
    if starts.is_empty() {
        return None;
    }
    touched.sort_unstable();
    touched.dedup();
    // Distinct bytes: the union of the lanes' byte ranges.
    starts.sort_unstable();
    let mut bytes = 0;
    let mut end = 0;
    for (i, &s) in starts.iter().enumerate() {
        let from = if i == 0 { s } else { s.max(end) };
        let to = s + w;
        if to > from {
            bytes += to - from;
        }
        end = end.max(to);
    }
    Some(SectorReport {
        sectors: touched.len() as u32,
        ideal: bytes.div_ceil(SECTOR_BYTES) as u32,
        bytes,
        requests: 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warp(f: impl Fn(u64) -> Option<u64>) -> [Option<u64>; WARP_LANES] {
        std::array::from_fn(|l| f(l as u64))
    }

    #[test]
    fn figures_measured_on_sm_90() {
        // Rows of the H200 measurement (elements, stride, base offset -> sectors).
        let cases: &[(AccessWidth, u64, u64, u32, u32)] = &[
            (AccessWidth::B4, 1, 0, 4, 4),    // consecutive floats
            (AccessWidth::B4, 1, 96, 4, 4),   // aligned to a sector, not a line
            (AccessWidth::B4, 8, 4, 32, 4),   // 32-byte stride, off by one element
            (AccessWidth::B4, 2, 0, 8, 4),    // every other float
            (AccessWidth::B4, 8, 0, 32, 4),   // one sector per lane
            (AccessWidth::B4, 32, 0, 32, 4),  // 128-byte stride
            (AccessWidth::B4, 0, 4, 1, 1),    // broadcast
            (AccessWidth::B1, 1, 1, 2, 1),    // bytes across a sector boundary
            (AccessWidth::B8, 1, 0, 8, 8),    // doubles
            (AccessWidth::B16, 1, 0, 16, 16), // float4
            (AccessWidth::B16, 2, 0, 32, 16),
            (AccessWidth::B2, 16, 0, 32, 2),
        ];
        for &(width, stride, base, sectors_want, ideal) in cases {
            let w = u64::from(width.bytes());
            let r = sectors(&warp(|l| Some(base + l * stride * w)), width).unwrap();
            assert_eq!(
                (r.sectors, r.ideal),
                (sectors_want, ideal),
                "{width:?} stride {stride} base {base}"
            );
        }
    }

    #[test]
    fn inactive_lanes_touch_nothing() {
        let r = sectors(&warp(|l| (l < 8).then_some(l * 4)), AccessWidth::B4).unwrap();
        assert_eq!((r.sectors, r.ideal), (1, 1));
        assert!(sectors(&[None; WARP_LANES], AccessWidth::B4).is_none());
    }
}
