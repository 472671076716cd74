//! kernaut-ide: everything a front end shows, as plain data.
//!
//! The features (the pitfall rules, hover, editor features, the kernel report) over the
//! semantic layer of `kernaut-sema`. [`Analysis`] is a snapshot of the semantic layer
//! with the features' query table on top (as rust-analyzer's `ide` wraps its database);
//! every query of the semantic layer is reachable through it too. The crates below are
//! re-exported so that front ends (`ktui`, `kernaut-lsp`) depend on `ide` alone.
#![deny(missing_docs)]

pub mod barrier_intervals;
pub mod editor;
pub mod hover;
pub mod kernel_report;
pub mod kernel_report_md;
pub mod rules;

use kernaut_sema::{analysis, line_index, signatures};
pub use kernaut_sema::{
    callers, compiled, config, diagnostic, includes, instances, knowledge, model, races, reports,
    source_text,
};

pub use hover::{HoverKind, HoverResult};
pub use kernaut_sema::{
    gpu, index, syntax, wiki, AnalysisConfig, Cancellable, Change, FileConfig, FileId, FileSet,
    KernelFacts, Knowledge, LineCol, LineIndex, ParsedFile, PositionEncoding, QueryError,
};

use diagnostic::RuleDiagnostic;
use editor::{
    ActionData, CompletionData, InlayConfig, InlayHintData, KernelLens, OutlineItem, PageText,
    SignatureHelpData,
};
use index::Hit;
use kernel_report::{KernelReport, ReportConfig, ReportLens};
use syntax::TextRange;

/// An immutable snapshot of the analysis: the semantic layer's snapshot
/// ([`kernaut_sema::Analysis`], reached through `Deref`: files, text, facts, models) with
/// the features' queries below. Cheap to clone, `Send + Sync`; queries on a snapshot older
/// than its host's revision are cancelled (see [`Cancellable`]).
#[derive(Clone)]
pub struct Analysis {
    db: kernaut_sema::Analysis,
}

impl std::ops::Deref for Analysis {
    type Target = kernaut_sema::Analysis;

    fn deref(&self) -> &kernaut_sema::Analysis {
        &self.db
    }
}

impl From<kernaut_sema::Analysis> for Analysis {
    fn from(db: kernaut_sema::Analysis) -> Analysis {
        Analysis { db }
    }
}

/// The mutable state behind the snapshots ([`kernaut_sema::AnalysisHost`], reached
/// through `Deref`): files, configuration, knowledge and revision. Its
/// [`AnalysisHost::analysis`] hands out snapshots with the features' queries.
pub struct AnalysisHost {
    host: kernaut_sema::AnalysisHost,
}

impl AnalysisHost {
    /// A host with no files, the given configuration and no wiki.
    pub fn new(config: AnalysisConfig) -> AnalysisHost {
        AnalysisHost {
            host: kernaut_sema::AnalysisHost::new(config),
        }
    }

    /// A snapshot of the current revision.
    pub fn analysis(&self) -> Analysis {
        Analysis {
            db: self.host.analysis(),
        }
    }
}

impl std::ops::Deref for AnalysisHost {
    type Target = kernaut_sema::AnalysisHost;

    fn deref(&self) -> &kernaut_sema::AnalysisHost {
        &self.host
    }
}

impl std::ops::DerefMut for AnalysisHost {
    fn deref_mut(&mut self) -> &mut kernaut_sema::AnalysisHost {
        &mut self.host
    }
}

/// The query table: every query a front end asks of a snapshot, each one line into the
/// feature (a free function over the snapshot) that answers it. The snapshot's own data
/// (files, text, facts, configuration) is read through the accessors in `analysis`.
/// Features call one another through these same queries, so that a hover and the editor
/// get a finding, an occupancy or a bank model from one place.
impl Analysis {
    /// The occupancy lens of every kernel of a file.
    pub fn code_lenses(&self, file: FileId) -> Cancellable<Vec<KernelLens>> {
        editor::code_lenses(self, file)
    }

    /// Inlay hints inside `range` (the whole file with `None`).
    pub fn inlay_hints(
        &self,
        file: FileId,
        range: Option<TextRange>,
        config: InlayConfig,
    ) -> Cancellable<Vec<InlayHintData>> {
        editor::inlay_hints(self, file, range, config)
    }

    /// The code actions for a range: the fixes of the diagnostics it touches, "allow this
    /// rule here" for each, and "show the wiki page" for the diagnostics and the symbol
    /// under the cursor.
    pub fn code_actions(&self, file: FileId, range: TextRange) -> Cancellable<Vec<ActionData>> {
        editor::code_actions(self, file, range)
    }

    /// The wiki page of the symbol at an offset (an intrinsic's API page; for a kernel,
    /// a shared declaration or access, the skill page of its model).
    pub fn page_at(&self, file: FileId, offset: usize) -> Cancellable<Option<String>> {
        editor::page_at(self, file, offset)
    }

    /// Completions of CUDA intrinsics and library calls for the word before `offset`
    /// (two characters at least, or a word starting with `__`). The user's own names are
    /// left to the C++ language server.
    pub fn completions(&self, file: FileId, offset: usize) -> Cancellable<Vec<CompletionData>> {
        editor::completions(self, file, offset)
    }

    /// Signature help for the call whose argument list holds `offset`, when the callee
    /// is an intrinsic or library call the wiki knows.
    pub fn signature_help(
        &self,
        file: FileId,
        offset: usize,
    ) -> Cancellable<Option<SignatureHelpData>> {
        editor::signature_help(self, file, offset)
    }

    /// The outline of a file: kernels and device functions, with their shared arrays.
    pub fn outline(&self, file: FileId) -> Cancellable<Vec<OutlineItem>> {
        editor::outline(self, file)
    }

    /// Ranked wiki hits for a query (pitfalls by symptom first, as `ktui search`).
    pub fn search_wiki(&self, query: &str, limit: usize) -> Vec<Hit> {
        editor::search_wiki(self, query, limit)
    }

    /// A page (`id`) or one section (`id#anchor`) as Markdown.
    pub fn wiki_page(&self, target: &str) -> Option<PageText> {
        editor::wiki_page(self, target)
    }

    /// The pitfall rules' diagnostics for a file, at the rule levels of its configuration
    /// (none without a wiki: every rule cites it).
    pub fn diagnostics(&self, file: FileId) -> Cancellable<Vec<RuleDiagnostic>> {
        rules::host::diagnostics(self, file)
    }

    /// [`Analysis::diagnostics`] shared instead of copied: the same `Arc` for as long as
    /// the file's diagnostics stay cached (a front end compares pointers to publish only
    /// what changed).
    pub fn diagnostics_shared(
        &self,
        file: FileId,
    ) -> Cancellable<std::sync::Arc<Vec<RuleDiagnostic>>> {
        rules::host::diagnostics_shared(self, file)
    }

    /// What a hover at a byte offset shows, or `None` where there is nothing to say.
    pub fn hover(&self, file: FileId, offset: usize) -> Cancellable<Option<HoverResult>> {
        hover::hover_query(self, file, offset)
    }

    /// The barrier intervals of `kernel` (defined in `file`); `None` when the file
    /// defines no such kernel with a body, or the model does not walk it (a barrier in
    /// a condition or a loop header).
    pub fn barrier_intervals(
        &self,
        file: FileId,
        kernel: &str,
    ) -> Cancellable<Option<barrier_intervals::BarrierIntervals>> {
        barrier_intervals::barrier_intervals(self, file, kernel)
    }

    /// The report of `kernel` (defined in `file`); `None` when the file defines no such
    /// kernel.
    pub fn kernel_report(
        &self,
        file: FileId,
        kernel: &str,
        config: ReportConfig,
    ) -> Cancellable<Option<KernelReport>> {
        kernel_report::kernel_report(self, file, kernel, config)
    }

    /// The kernel whose definition contains `offset`, or whose name (or a launch of
    /// which) is at `offset`.
    pub fn kernel_at(&self, file: FileId, offset: usize) -> Cancellable<Option<String>> {
        kernel_report::kernel_at(self, file, offset)
    }

    /// A "report" lens above each kernel of `file`: its title names the costliest finding,
    /// its command (`kernaut.kernelReport`) opens the whole report.
    pub fn report_lenses(&self, file: FileId) -> Cancellable<Vec<ReportLens>> {
        kernel_report::report_lenses(self, file)
    }
}
