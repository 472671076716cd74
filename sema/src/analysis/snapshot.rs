//! The immutable side: [`Analysis`] snapshots and their queries.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::launches::LaunchIndex;

use kernaut_gpu::{Arch, Target};
use kernaut_syntax::cancel::CancelToken;
use kernaut_syntax::{
    FileFacts, Function, LaunchSite, SharedAccess, SharedDecl, SourceFile, SymbolRef, SyntaxError,
};
use rustc_hash::FxHashMap;

use super::file_data::*;
use super::*;
use crate::compiled::{CompiledFacts, CompiledKernel};
use crate::config::{KernautConfig, RulesConfig, TargetSet};
use crate::knowledge::Knowledge;
use crate::line_index::LineIndex;
use crate::model_cache::ReportCache;

/// A kernel and what the file says about how it runs, borrowed from the snapshot that
/// found it (nothing is copied).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelFacts<'a> {
    /// The kernel's definition: name, parameters, template parameters,
    /// `__launch_bounds__`, `__cluster_dims__`.
    pub function: &'a Function,
    /// Its launch sites in every file of the host, as (file, launch): those in the
    /// kernel's file first, then the others by path ([`Analysis::path`] names a file).
    pub launches: Vec<(FileId, &'a LaunchSite)>,
    /// The `__shared__` declarations inside it.
    pub shared: Vec<&'a SharedDecl>,
    /// The static shared memory it declares, in bytes, when every size is known.
    pub static_shared_bytes: Option<u64>,
    /// `cudaFuncSetAttribute` calls naming it, as (attribute, folded value).
    pub attributes: Vec<(&'a str, Option<i64>)>,
}

/// An immutable, cheaply cloned view of the host's files, configuration and wiki, at one
/// revision. Every query returns [`Cancellable`]: `Err(QueryError::Cancelled)` once the
/// host has moved on, `Err(QueryError::Failed)` when the analysis hit a bug.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The host's configuration at this revision.
    pub config: Arc<AnalysisConfig>,
    /// The wiki, when one is loaded.
    pub knowledge: Option<Arc<Knowledge>>,
    /// The files by path.
    pub files: Arc<FxHashMap<String, Arc<FileData>>>,
    /// The path table.
    pub file_set: Arc<FileSet>,
    /// The `.kernaut.toml` of each directory that has one.
    pub dir_configs: Arc<BTreeMap<String, KernautConfig>>,
    /// What compiling each file told (registers, spills, SASS facts).
    pub compiled: Arc<FxHashMap<String, Arc<CompiledFacts>>>,
    /// Each file's build (targets, macros, include folders).
    pub builds: Arc<FxHashMap<String, Arc<crate::config::FileBuild>>>,
    /// The one cache of model results, shared with the host.
    pub cache: Arc<ReportCache>,
    pub(super) revision: Arc<AtomicU64>,
    pub(super) at: u64,
    /// The revision's launch index (see [`LaunchIndex`]), shared with the host.
    pub(super) launches: Arc<OnceLock<LaunchIndex>>,
}

const _: () = {
    fn send_sync<T: Send + Sync>() {}
    let _ = send_sync::<Analysis>;
    let _ = send_sync::<AnalysisHost>;
};

/// The settings that apply to one file: the host's configuration with the nearest
/// `.kernaut.toml` above the file laid over it, and what the build says of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileConfig {
    /// The architecture the models use: [`TargetSet::primary`] of `targets`.
    pub arch: Arch,
    /// Whether a setting or the build named the targets (`!targets.assumed`).
    pub arch_configured: bool,
    /// Every target the file is compiled for, and where they came from: the front end's
    /// setting, else the nearest `.kernaut.toml`, else the build, else assumed.
    pub targets: TargetSet,
    /// Macros the build defines for the file (`.kernaut.toml`'s `defines`, then the
    /// compile command's `-D`s).
    pub defines: Vec<(String, String)>,
    /// Macros the build defines for one target only.
    pub target_defines: Vec<(Target, Vec<(String, String)>)>,
    /// The rule levels.
    pub rules: RulesConfig,
    /// Registers per thread to assume, when the `.kernaut.toml` sets it (otherwise
    /// [`AnalysisConfig::default_regs_per_thread`]).
    pub registers: Option<u32>,
    /// The directory of the `.kernaut.toml` that applies, if any.
    pub config_dir: Option<String>,
}

impl Analysis {
    /// The configuration of this snapshot.
    pub fn config(&self) -> &AnalysisConfig {
        &self.config
    }

    /// The wiki, if one was loaded.
    pub fn knowledge(&self) -> Option<&Knowledge> {
        self.knowledge.as_deref()
    }

    /// Whether a change has arrived since this snapshot was taken.
    pub fn is_cancelled(&self) -> bool {
        self.revision.load(Ordering::Relaxed) != self.at
    }

    /// The id of a path the host knows.
    pub fn file_id(&self, path: &str) -> Option<FileId> {
        self.file_set.get(path)
    }

    /// The path of a file.
    pub fn path(&self, file: FileId) -> Option<&str> {
        self.file_set.path(file)
    }

    /// The files of the snapshot, sorted by path.
    pub fn files(&self) -> Vec<FileId> {
        let mut v: Vec<(&str, FileId)> = self
            .files
            .keys()
            .filter_map(|p| Some((p.as_str(), self.file_set.get(p)?)))
            .collect();
        v.sort_unstable();
        v.into_iter().map(|(_, id)| id).collect()
    }

    /// Runs a query under the snapshot's cancellation token, turning a cancellation and
    /// a panic into their errors.
    pub fn query<T>(&self, name: &'static str, f: impl FnOnce() -> T) -> Cancellable<T> {
        if self.is_cancelled() {
            return Err(QueryError::Cancelled);
        }
        let token = CancelToken::new(self.revision.clone(), self.at)
            .within(kernaut_syntax::cancel::current());
        match catch_unwind(AssertUnwindSafe(|| {
            kernaut_syntax::cancel::with_token(Some(token), f)
        })) {
            Ok(v) => Ok(v),
            Err(e) if e.is::<kernaut_syntax::cancel::Cancelled>() => Err(QueryError::Cancelled),
            Err(e) => Err(QueryError::Failed {
                query: name,
                message: panic_message(&*e),
            }),
        }
    }

    /// The path and data of a file, or why there is none.
    pub fn data(&self, file: FileId) -> Cancellable<(&str, &FileData)> {
        let path = self.file_set.path(file).ok_or(QueryError::UnknownFile)?;
        let (path, data) = self
            .files
            .get_key_value(path)
            .ok_or(QueryError::UnknownFile)?;
        if let Some(message) = &data.failure {
            return Err(QueryError::Failed {
                query: "parse",
                message: message.clone(),
            });
        }
        Ok((path.as_str(), data))
    }

    /// The settings that apply to a file (its directory's `.kernaut.toml` over the host's
    /// configuration).
    pub fn file_config(&self, file: FileId) -> FileConfig {
        let path = self.file_set.path(file).unwrap_or("");
        self.config_for_path(path)
    }

    /// The configuration of the file at `path` (its directory's `.kernaut.toml` over the host's).
    pub fn config_for_path(&self, path: &str) -> FileConfig {
        let build = self.builds.get(path);
        let mut out = FileConfig {
            arch: self.config.arch,
            arch_configured: self.config.arch_configured,
            targets: TargetSet::assumed(),
            defines: Vec::new(),
            target_defines: Vec::new(),
            rules: self.config.rules.clone(),
            registers: None,
            config_dir: None,
        };
        let mut targets = None;
        if self.config.arch_configured {
            let named = if self.config.targets.is_empty() {
                vec![Target::of_arch(self.config.arch)]
            } else {
                self.config.targets.clone()
            };
            let origin = if self.config.arch_origin.is_empty() {
                "the editor's setting"
            } else {
                self.config.arch_origin.as_str()
            };
            targets = TargetSet::named(named, origin);
        }
        // The nearest directory above the file with a configuration.
        let mut dir = path;
        let found = loop {
            let Some(i) = dir.rfind('/') else {
                break self.dir_configs.get("").map(|c| ("", c));
            };
            dir = &dir[..i];
            if let Some(c) = self.dir_configs.get(dir) {
                break Some((dir, c));
            }
        };
        if let Some((dir, c)) = found {
            out.config_dir = Some(dir.to_string());
            // A target the user chose in the front end (a flag, an editor setting) wins
            // over the file's.
            if targets.is_none() {
                let shown = if dir.is_empty() {
                    crate::config::CONFIG_FILE_NAME.to_string()
                } else {
                    format!("{dir}/{}", crate::config::CONFIG_FILE_NAME)
                };
                let origin = match c.arch_line {
                    Some(l) => format!("{shown}:{l}"),
                    None => shown,
                };
                targets = TargetSet::named(c.targets.clone(), origin);
            }
            out.defines.extend(c.defines.iter().cloned());
            for (rule, level) in &c.rules.levels {
                out.rules.levels.insert(rule.clone(), *level);
            }
            out.registers = c.registers;
        }
        if let Some(b) = build {
            if targets.is_none() {
                targets = b.targets.clone();
            }
            out.defines.extend(b.defines.iter().cloned());
            out.target_defines = b.target_defines.clone();
        }
        out.targets = targets.unwrap_or_else(TargetSet::assumed);
        out.arch_configured = !out.targets.assumed;
        out.arch = if self.config.arch_configured && self.config.targets.is_empty() {
            self.config.arch
        } else {
            out.targets.primary()
        };
        out
    }

    /// This snapshot with the configuration of `path`'s directory (itself when nothing
    /// differs).
    pub fn for_path(&self, path: &str) -> std::borrow::Cow<'_, Analysis> {
        if self.dir_configs.is_empty() && self.builds.is_empty() {
            return std::borrow::Cow::Borrowed(self);
        }
        let fc = self.config_for_path(path);
        if fc.arch == self.config.arch && fc.arch_configured == self.config.arch_configured {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut config = (*self.config).clone();
        config.arch = fc.arch;
        config.arch_configured = fc.arch_configured;
        config.targets = fc.targets.targets;
        config.arch_origin = fc.targets.origin;
        let mut a = self.clone();
        a.config = Arc::new(config);
        std::borrow::Cow::Owned(a)
    }

    /// The parsed file (for features such as the rules that walk it).
    pub fn source_file(&self, file: FileId) -> Cancellable<&SourceFile> {
        Ok(&self.data(file)?.1.source)
    }

    /// The text of a file.
    pub fn text(&self, file: FileId) -> Cancellable<&str> {
        Ok(self.data(file)?.1.source.text())
    }

    /// The line index of a file (byte offsets ↔ lines and columns in every encoding).
    pub fn line_index(&self, file: FileId) -> Cancellable<Arc<LineIndex>> {
        let (_, data) = self.data(file)?;
        Ok(data
            .line_index
            .get_or_init(|| Arc::new(LineIndex::new(data.source.text())))
            .clone())
    }

    /// The syntax errors of a file (at most 200).
    pub fn syntax_errors(&self, file: FileId) -> Cancellable<Vec<SyntaxError>> {
        let (_, f) = self.data(file)?;
        self.query("syntax_errors", || f.source.errors())
    }

    /// The symbol at a byte offset, as the user means it.
    pub fn symbol_at(&self, file: FileId, offset: usize) -> Cancellable<Option<SymbolRef>> {
        let (_, f) = self.data(file)?;
        self.query("symbol_at", || f.source.symbol_at(offset))
    }

    /// The launch index of this snapshot's revision, built on first use.
    /// This snapshot with the file at `path` replaced by `data` (an incremental rules
    /// run's shortened copy of it), with a launch index of its own.
    pub fn with_file(&self, path: &str, data: FileData) -> Analysis {
        let mut files = (*self.files).clone();
        files.insert(path.to_string(), Arc::new(data));
        Analysis {
            files: Arc::new(files),
            launches: Arc::default(),
            ..self.clone()
        }
    }

    /// The revision's launch index (every launch by kernel name), built once.
    pub fn launch_index(&self) -> &LaunchIndex {
        self.launches
            .get_or_init(|| LaunchIndex::build(self.files.iter().map(|(p, f)| (p.as_str(), &**f))))
    }

    /// What the compiler reported for a file, if a front end handed it over.
    pub fn compiled(&self, file: FileId) -> Option<&CompiledFacts> {
        let path = self.file_set.path(file)?;
        self.compiled.get(path).map(|c| &**c)
    }

    /// The compiled instantiations of kernel `short` of the file at `path`, those for
    /// the target first.
    pub fn compiled_kernel(
        &self,
        path: &str,
        short: &str,
    ) -> Option<(&CompiledFacts, Vec<&CompiledKernel>)> {
        let facts = self.compiled.get(path)?;
        let v = facts.kernel(short, &self.config.arch.to_string());
        (!v.is_empty()).then_some((&**facts, v))
    }

    /// Every fact syntax found in a file (kernels, shared memory, launches, constants).
    pub fn file_facts(&self, file: FileId) -> Cancellable<&FileFacts> {
        let (_, f) = self.data(file)?;
        self.query("file_facts", || f.facts())
    }

    /// Every shared-memory access of a file, with its index lowered over the thread
    /// index, in document order.
    pub fn shared_accesses(&self, file: FileId) -> Cancellable<&[SharedAccess]> {
        let (_, f) = self.data(file)?;
        self.query("shared_accesses", || f.accesses())
    }

    /// The file at `path`, if the snapshot has it.
    pub fn file(&self, path: &str) -> Option<&FileData> {
        self.files.get(path).map(|f| &**f)
    }

    /// The text of the file at `path`.
    pub fn text_at(&self, path: &str) -> Option<&str> {
        self.file(path).map(|f| f.source.text())
    }

    /// The files with `first` first, then the others by path.
    pub fn sorted_files<'a>(&'a self, first: &str) -> Vec<(&'a str, &'a FileData)> {
        let mut v: Vec<(&str, &FileData)> =
            self.files.iter().map(|(p, f)| (p.as_str(), &**f)).collect();
        v.sort_by(|a, b| (a.0 != first, a.0).cmp(&(b.0 != first, b.0)));
        v
    }

    /// Launch sites of `kernel`, those in `first` first, then by path.
    pub fn launches_of(&self, first: &str, kernel: &str) -> Vec<(String, LaunchSite)> {
        self.launches_of_ref(first, kernel)
            .map(|(p, l)| (p.to_string(), l.clone()))
            .collect()
    }

    /// [`Analysis::launches_of`] without copying: the launches of `kernel` (or of any
    /// namespace's kernel of that name when `kernel` has none), those in `first` first,
    /// then by path, each in document order.
    pub fn launches_of_ref<'a>(
        &'a self,
        first: &'a str,
        kernel: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a LaunchSite)> + 'a {
        let short = short_name(kernel);
        let sites = self.launch_index().sites(short);
        let resolve = move |(p, i): &'a (String, usize)| {
            let (p, data) = self.files.get_key_value(p.as_str())?;
            Some((p.as_str(), data.facts().launches.get(*i)?))
        };
        let in_first = sites.iter().filter(move |(p, _)| p == first);
        let others = sites.iter().filter(move |(p, _)| p != first);
        in_first
            .chain(others)
            .filter_map(resolve)
            .filter(move |(_, l)| l.kernel == kernel || short == kernel)
            .filter(move |(p, _)| self.launch_reaches(first, p, short))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_a_query_is_a_failure_not_an_empty_answer() {
        let mut host = AnalysisHost::new(AnalysisConfig::default());
        let _ = host.set_file("/f.cu", "int x;");
        let a = host.analysis();
        let r: Cancellable<()> = a.query("test", || panic!("boom"));
        assert_eq!(
            r,
            Err(QueryError::Failed {
                query: "test",
                message: "boom".into()
            })
        );
        // Cancellation inside the query is told apart from failure.
        let r: Cancellable<()> = a.query("test", || {
            std::panic::resume_unwind(Box::new(kernaut_syntax::cancel::Cancelled))
        });
        assert_eq!(r, Err(QueryError::Cancelled));
        // `guarded` inside a query passes cancellation on.
        let r: Cancellable<Option<()>> = a.query("test", || {
            guarded(|| std::panic::resume_unwind(Box::new(kernaut_syntax::cancel::Cancelled)))
        });
        assert_eq!(r, Err(QueryError::Cancelled));
    }
}
