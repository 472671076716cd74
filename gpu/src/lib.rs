//! kernaut-gpu: the GPU math behind kernaut's occupancy lenses and bank-conflict hints.
//!
//! Pure Rust, no I/O. Five modules:
//!
//! * [`arch`]: per-architecture limits for CC 5.0 to 12.0, and parsing of the names
//!   users write (`sm_90a`, `compute_90`, `9.0`, `90`).
//! * [`occupancy`]: blocks per SM, occupancy and the binding limiters, exactly as the
//!   CUDA runtime computes them; the curves a chart draws; the block size that
//!   maximises occupancy.
//! * [`banks`]: the shared-memory bank model for one warp-wide access, including the
//!   half- and quarter-warp resolution of 8- and 16-byte accesses and load pair packing.
//! * [`sectors`]: the 32-byte sectors one warp-wide global load or store touches, and
//!   the ideal for its data.
//! * [`expr`]: the one index expression form (over `lane`, `threadIdx`, `blockDim`,
//!   constants, uniforms and loop variables) and the one warp valuation that evaluates
//!   it for the 32 lanes of a warp.
//!
//! The models reproduce measurements from an H200 (and NVIDIA's occupancy answers for
//! seven other architectures) on every row; the data and tests are in `gpu/tests/`.
//!
//! ```
//! use kernaut_gpu::{arch::Arch, banks, expr::{Expr, WarpContext}, occupancy};
//!
//! let arch = Arch::parse("sm_90").unwrap();
//! let occ = occupancy::occupancy(arch, &occupancy::OccupancyInput::new(256, 64)).unwrap();
//! assert_eq!((occ.blocks_per_sm, occ.active_warps), (4, 32));
//!
//! // A float tile[32][33] read down a column: conflict-free.
//! let index = Expr::parse("lane * 33").unwrap();
//! let values = index.eval_warp(&WarpContext::default()).unwrap();
//! let addresses = values.map(|v| v.map(|i| i as u32 * 4));
//! let access = banks::WarpAccess { addresses, width: banks::AccessWidth::B4, kind: banks::AccessKind::Load };
//! assert_eq!(banks::analyze(&access).unwrap().wavefronts, 1);
//! ```
#![deny(missing_docs)]

pub mod arch;
pub mod banks;
pub mod expr;
pub mod occupancy;
pub mod sectors;
pub mod target;

pub use arch::{Arch, ArchError, ArchLimits, ComputeCapability};
pub use banks::{analyze, AccessKind, AccessWidth, BankError, BankReport, WarpAccess};
pub use expr::{Expr, Valuation, WarpContext};
pub use occupancy::{occupancy, Occupancy, OccupancyError, OccupancyInput};
pub use target::{Target, TargetError, Variant};
