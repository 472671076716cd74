//! The analysis host and its snapshots.
//!
//! [`AnalysisHost`] holds the mutable state: the path table ([`FileId`]s), the files, the
//! configuration (with a `.kernaut.toml` per directory), the wiki, the one cache of model
//! results and the revision counter. It changes only through [`AnalysisHost::apply_change`],
//! which takes a [`Change`] (edits of several files and configuration updates, in order)
//! and bumps the revision. [`AnalysisHost::analysis`] hands out an [`Analysis`], an
//! immutable `Send + Sync` snapshot that is cheap to clone and answers every question a
//! front end asks. Its queries return [`Cancellable`]: a query on a snapshot older than
//! the host's revision stops at its next checkpoint with [`QueryError::Cancelled`], and a
//! bug (a panic deep in a model) comes back as [`QueryError::Failed`] with its message,
//! never as an empty answer.
//!
//! ```
//! use kernaut_sema::{AnalysisConfig, AnalysisHost, Change};
//!
//! let mut host = AnalysisHost::new(AnalysisConfig::default());
//! let file = host.file_id("/k.cu");
//! let mut change = Change::new();
//! change.set_file(file, "__global__ void k() { __shared__ float t[32][33]; t[threadIdx.x][0] = 1.0f; }");
//! host.apply_change(change);
//! let analysis = host.analysis();
//! let access = &analysis.shared_accesses(file).unwrap()[0];
//! let bank = analysis.bank(file, access).unwrap().unwrap();
//! assert_eq!(bank.result.unwrap().conflict_degree, 1);
//! ```

mod change;
mod file_data;
mod host;
pub mod includes;
mod items;
mod launches;
mod snapshot;

use std::panic::{catch_unwind, AssertUnwindSafe};

use kernaut_gpu::Arch;
use kernaut_syntax::SourceFile;
use kernaut_wiki::WikiConfig;

use crate::config::RulesConfig;

pub use change::{Change, FileId, FileSet, ParsedFile};
pub use file_data::{DiagnosticsKey, FileData};
pub use host::AnalysisHost;
pub use items::{item_names, items, items_reusing, names, Item, ItemKind, Macros, Names, RulesRun};
pub use kernaut_syntax::short_name;
pub use launches::{calls_named, fixed_args, FixedArgs};
pub use snapshot::{Analysis, FileConfig, KernelFacts};

/// What the analysis assumes where the code does not say.
#[derive(Clone, Debug)]
pub struct AnalysisConfig {
    /// The target architecture: minimum-architecture checks and every model use it.
    pub arch: Arch,
    /// Whether the user chose `arch` in the front end (a flag, an editor setting). Such a
    /// choice wins over `.kernaut.toml` and the build; without one, each file's targets
    /// come from its `.kernaut.toml`, then its build ([`crate::config::FileBuild`]),
    /// else `sm_90` is assumed ([`crate::config::TargetSet::assumed`]).
    pub arch_configured: bool,
    /// With `arch_configured`: every target the user named (`--arch sm_80,sm_90a`);
    /// empty means `arch` alone.
    pub targets: Vec<kernaut_gpu::Target>,
    /// With `arch_configured`: where the choice was made, as users see it (`--arch`,
    /// `kernaut.arch`).
    pub arch_origin: String,
    /// The block size (x, y, z) used when no launch of a kernel is seen.
    pub default_block: [u32; 3],
    /// Registers per thread when a kernel has no `__launch_bounds__` to derive a limit
    /// from. Real counts need ptxas; this is an assumption, and hovers say so.
    pub default_regs_per_thread: u32,
    /// The wiki to load: the built-in pages and extra folders.
    pub wiki: WikiConfig,
    /// Rule levels (a `.kernaut.toml` above a file is laid over them).
    pub rules: RulesConfig,
    /// How many threads one large file's parse and analysis may use (0: leave the
    /// process's setting, by default one per core, at most 8). A server with a worker pool of its own sets this so that the two do not
    /// oversubscribe the cores.
    pub threads: usize,
}

impl Default for AnalysisConfig {
    /// `sm_90` (not chosen by the user), blocks of 256 threads, 32 registers per thread,
    /// the built-in wiki.
    fn default() -> AnalysisConfig {
        AnalysisConfig {
            arch: Arch::parse("sm_90").unwrap_or(Arch {
                cc: kernaut_gpu::ComputeCapability::ALL[0],
                arch_specific: false,
            }),
            arch_configured: false,
            targets: Vec::new(),
            arch_origin: String::new(),
            default_block: [256, 1, 1],
            default_regs_per_thread: 32,
            wiki: WikiConfig::builtin(),
            rules: RulesConfig::default(),
            threads: 0,
        }
    }
}

impl AnalysisConfig {
    /// Takes the targets the user chose in the front end (`--arch`, an editor setting):
    /// they win over `.kernaut.toml` and the build, and the models use their
    /// [`crate::config::TargetSet::primary`]. Returns false (and changes nothing) when
    /// `targets` is empty.
    pub fn choose_targets(&mut self, targets: Vec<kernaut_gpu::Target>, origin: &str) -> bool {
        let Some(set) = crate::config::TargetSet::named(targets, origin) else {
            return false;
        };
        self.arch = set.primary();
        self.arch_configured = true;
        self.targets = set.targets;
        self.arch_origin = set.origin;
        true
    }
}

/// Why a query gave no answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// A change arrived after the snapshot was taken: ask again on a fresh one.
    #[error("cancelled: the file or configuration changed")]
    Cancelled,
    /// The host has no such file.
    #[error("no such file")]
    UnknownFile,
    /// A bug: the analysis panicked. The process goes on; report it.
    #[error("internal error in {query}: {message}")]
    Failed {
        /// Which query failed.
        query: &'static str,
        /// The panic's message.
        message: String,
    },
}

/// The answer of a query, or why there is none.
pub type Cancellable<T> = Result<T, QueryError>;

/// Parses `text`; a panic in the parser gives an empty file and the panic's message.
fn parse_guarded(text: &str) -> (SourceFile, Option<String>) {
    match catch_unwind(AssertUnwindSafe(|| SourceFile::parse(text))) {
        Ok(s) => (s, None),
        Err(e) => (SourceFile::parse(""), Some(panic_message(&*e))),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs `f`, turning a panic into `None` (inside queries, for the parts of an answer that
/// may fail alone; cancellation still unwinds to the query's guard).
pub fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(e) if e.is::<kernaut_syntax::cancel::Cancelled>() => std::panic::resume_unwind(e),
        Err(_) => None,
    }
}
