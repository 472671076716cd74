//! kernaut-ide: everything a front end shows, as plain data.
//!
//! The crates below are re-exported so that front ends (`ktui`, `kernaut-lsp`) depend
//! on `ide` alone.
#![deny(missing_docs)]

mod analysis;
pub use analysis::includes;
pub mod barrier_intervals;
pub mod compiled;
pub mod config;
pub mod diagnostic;
pub mod editor;
pub mod hover;

pub mod instances;
pub mod kernel_report;
pub mod kernel_report_md;
pub mod knowledge;
mod line_index;
pub mod lower;
pub mod model;
mod model_cache;
pub mod races;
pub mod reports;
pub mod rules;
mod shared_bytes;
pub mod source_text;

pub use analysis::{
    Analysis, AnalysisConfig, AnalysisHost, Cancellable, Change, FileConfig, FileId, FileSet,
    KernelFacts, ParsedFile, QueryError,
};
pub use hover::{HoverKind, HoverResult};
pub use kernaut_gpu as gpu;
pub use kernaut_index as index;
pub use kernaut_syntax as syntax;
pub use kernaut_wiki as wiki;
pub use knowledge::Knowledge;
pub use line_index::{LineCol, LineIndex, PositionEncoding};
