//! kernaut-ide: everything a front end shows, as plain data.
//!
//! The crates below are re-exported so that front ends (`ktui`, `kernaut-lsp`) depend
//! on `ide` alone.
#![deny(missing_docs)]

pub mod knowledge;

pub use kernaut_gpu as gpu;
pub use kernaut_index as index;
pub use kernaut_wiki as wiki;
pub use knowledge::Knowledge;
