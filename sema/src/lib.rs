//! kernaut-sema: the semantic layer under every feature.
//!
//! What a program means, as plain data: the analysis host and its snapshots
//! ([`AnalysisHost`], [`Analysis`]), the project's targets and configuration, which
//! device functions each kernel reaches, template instances, the warp valuation of index
//! expressions, and the GPU models (occupancy, banks, sectors, races) run on them. The
//! features a user sees (rules, hover, editor features, the kernel report) live in
//! `kernaut-ide` on top of this crate and reach it only through its public items, so
//! cargo enforces that nothing here depends on a feature.
//!
//! ```
//! use kernaut_sema::{AnalysisConfig, AnalysisHost, Change};
//!
//! let mut host = AnalysisHost::new(AnalysisConfig::default());
//! let file = host.file_id("/k.cu");
//! let mut change = Change::new();
//! change.set_file(file, "__global__ void k() { __shared__ float t[32][32]; t[threadIdx.x][0] = 1.0f; }");
//! host.apply_change(change);
//! let analysis = host.analysis();
//! let access = &analysis.shared_accesses(file).unwrap()[0];
//! let bank = analysis.bank(file, access).unwrap().unwrap();
//! assert_eq!(bank.result.unwrap().conflict_degree, 32);
//! ```
#![deny(missing_docs)]

pub mod analysis;
pub mod callers;
pub mod compiled;
pub mod config;
pub mod context;
pub mod diagnostic;
pub mod groups;
pub mod instances;
pub mod knowledge;
pub mod line_index;
pub mod model;
pub mod model_cache;
pub mod races;
pub mod reports;
pub mod shared_bytes;
pub mod signatures;
pub mod source_text;
pub mod terms;

pub use analysis::includes;
pub use analysis::{
    Analysis, AnalysisConfig, AnalysisHost, Cancellable, Change, FileConfig, FileId, FileSet,
    KernelFacts, ParsedFile, QueryError,
};
pub use kernaut_gpu as gpu;
pub use kernaut_index as index;
pub use kernaut_syntax as syntax;
pub use kernaut_wiki as wiki;
pub use knowledge::Knowledge;
pub use line_index::{LineCol, LineIndex, PositionEncoding};

use model::BankAnalysis;
use reports::OccupancyReport;
use syntax::SharedAccess;

/// The semantic layer's query table: the queries of a snapshot that the models answer,
/// each one line into the module that answers it. The features' queries (diagnostics,
/// hover, editor features, the kernel report) are in `kernaut-ide`'s table, over the
/// same snapshot.
impl Analysis {
    /// The kernels of a file, each with its launch sites (from every file), shared
    /// declarations and attributes.
    pub fn kernel_facts(&self, file: FileId) -> Cancellable<Vec<KernelFacts<'_>>> {
        model::kernel_facts(self, file)
    }

    /// The occupancy of `kernel` (defined in `file`) at the launch configuration found.
    pub fn occupancy(&self, file: FileId, kernel: &str) -> Cancellable<Option<OccupancyReport>> {
        reports::occupancy_query(self, file, kernel)
    }

    /// The bank model run on one access of `file` (from [`Analysis::shared_accesses`]).
    pub fn bank(&self, file: FileId, access: &SharedAccess) -> Cancellable<Option<BankAnalysis>> {
        reports::bank(self, file, access)
    }
}
