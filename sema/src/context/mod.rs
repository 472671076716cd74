//! The semantic context of one file: what the rules (and the report, hover and barrier
//! intervals built on their facts) read about a parsed file beyond its text.
//!
//! A [`RuleContext`] holds the file, its facts, targets, macros and wiki, where the model
//! reads launches (the host snapshot or the file alone), and the queries several readers
//! share, computed once per context: shared accesses, each function's calls, the
//! functions that issue async copies and barriers, and the races of the file's kernels.
//! The facts computed over it live in its children: preprocessor conditions and
//! reachability per target (`target_guards`), barriers by scope (`barriers`), branch
//! conditions (`conditions`), async-copy operations (`async_ops`), type aliases.

pub mod async_ops;
pub mod barriers;
pub mod conditions;
pub mod loop_trips;
pub mod target_guards;
pub mod type_aliases;
mod words;

use kernaut_gpu::Arch;
use kernaut_syntax::FxHashMap as HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use kernaut_syntax::{
    short_name, CallSite, Enclosing, FileFacts, SharedAccess, SourceFile, TextRange,
};

use crate::analysis::Analysis;
use crate::config::{RulesConfig, TargetSet};
use crate::races::{kernel_races, Race};
use crate::Knowledge;
use async_ops::AsyncFunction;

pub use conditions::thread_dependent_branch;
pub use words::{find_word, is_identifier};

/// What the rules read. The syntax queries several rules share (shared accesses, the
/// calls of a function) are computed once per context.
#[derive(Debug)]
pub struct RuleContext<'a> {
    /// The parsed file.
    pub file: &'a SourceFile,
    /// Its facts.
    pub facts: &'a FileFacts,
    /// The target architecture.
    pub arch: Arch,
    /// The wiki and its symbol table.
    pub knowledge: &'a Knowledge,
    /// Per-rule levels.
    pub config: &'a RulesConfig,
    /// Whether a setting or the build named the targets rather than leaving the assumed
    /// `sm_90`; rules that compare the code with the target stay silent or give hints on
    /// an assumed target.
    pub arch_configured: bool,
    /// Every target the file is compiled for, and where they came from.
    pub targets: std::borrow::Cow<'a, TargetSet>,
    /// Macros the build defines for the file, as (name, body).
    pub defines: &'a [(String, String)],
    /// Macros the build defines for one target only.
    pub target_defines: &'a [(kernaut_gpu::Target, Vec<(String, String)>)],
    queries: Queries<'a>,
    /// Where the model reads launches, its default block and cache ([`crate::model`]).
    pub model: crate::model::RuleModel<'a>,
}

/// A kernel's parameters fixed to one constant by every launch, with their values.
pub type FixedArgs = Arc<[(String, i64)]>;

/// Lazily computed syntax queries shared by the rules of one run.
#[derive(Debug, Default)]
struct Queries<'a> {
    accesses: OnceLock<Vec<SharedAccess>>,
    /// The owner's slot for the file's shared accesses (the host keeps one per revision),
    /// used instead of `accesses` when given: see [`RuleContext::with_shared_accesses`].
    host_accesses: Option<&'a OnceLock<Vec<SharedAccess>>>,
    /// Whether `accesses` is in order of `range.start`, so that range look-ups can bisect.
    accesses_sorted: OnceLock<bool>,
    calls: Mutex<HashMap<usize, Arc<[CallSite]>>>,
    async_functions: OnceLock<Arc<[AsyncFunction]>>,
    /// The races of the file's kernels ([`race_findings`]), computed once for the three
    /// race rules.
    races: OnceLock<Arc<[crate::races::Race]>>,
    /// The race model's steps per kernel (its budget is per file): see
    /// [`RuleContext::race_steps`].
    race_steps: Mutex<Vec<(usize, usize)>>,
    /// See [`RuleContext::with_race_steps_elsewhere`].
    race_steps_elsewhere: Vec<(usize, usize)>,
    /// [`RuleContext::fixed_kernel_args`] by kernel name.
    fixed_args: Mutex<HashMap<String, FixedArgs>>,
}

/// The settings one run of the rules uses, built whole.
#[derive(Clone, Copy, Debug)]
pub struct RuleSettings<'a> {
    /// The target architecture.
    pub arch: Arch,
    /// Whether a setting or the build named the targets.
    pub arch_configured: bool,
    /// Every target of the file (`None`: `arch` alone, named by the user).
    pub targets: Option<&'a TargetSet>,
    /// Macros the build defines for the file.
    pub defines: &'a [(String, String)],
    /// Macros the build defines for one target only.
    pub target_defines: &'a [(kernaut_gpu::Target, Vec<(String, String)>)],
    /// Per-rule levels.
    pub levels: &'a RulesConfig,
}

/// The target set of a context built with one architecture the user chose.
fn user_target(arch: Arch) -> TargetSet {
    TargetSet::named(vec![kernaut_gpu::Target::of_arch(arch)], "")
        .unwrap_or_else(TargetSet::assumed)
}

impl<'a> RuleContext<'a> {
    /// The context for one file with its settings.
    pub fn with_settings(
        file: &'a SourceFile,
        knowledge: &'a Knowledge,
        settings: RuleSettings<'a>,
    ) -> RuleContext<'a> {
        RuleContext {
            file,
            facts: file.facts(),
            arch: settings.arch,
            knowledge,
            config: settings.levels,
            arch_configured: settings.arch_configured,
            targets: match settings.targets {
                Some(t) => std::borrow::Cow::Borrowed(t),
                None => std::borrow::Cow::Owned(user_target(settings.arch)),
            },
            defines: settings.defines,
            target_defines: settings.target_defines,
            queries: Queries::default(),
            model: crate::model::RuleModel::default(),
        }
    }

    /// The context for one file, with a target the user chose.
    pub fn new(
        file: &'a SourceFile,
        arch: Arch,
        knowledge: &'a Knowledge,
        config: &'a RulesConfig,
    ) -> RuleContext<'a> {
        RuleContext {
            file,
            facts: file.facts(),
            arch,
            knowledge,
            config,
            arch_configured: true,
            targets: std::borrow::Cow::Owned(user_target(arch)),
            defines: &[],
            target_defines: &[],
            queries: Queries::default(),
            model: crate::model::RuleModel::default(),
        }
    }

    /// The context reading and filling `slot`, its owner's copy of the shared accesses of
    /// this context's file, instead of computing its own: one copy per file, whoever asks
    /// first. `slot` must hold (or get) the accesses of `self.file`.
    pub fn with_shared_accesses(mut self, slot: &'a OnceLock<Vec<SharedAccess>>) -> Self {
        self.queries.host_accesses = Some(slot);
        self
    }

    /// Every shared-memory access of the file ([`SourceFile::shared_accesses`]), computed
    /// once (or borrowed: see [`RuleContext::with_shared_accesses`]).
    pub fn shared_accesses(&self) -> &[SharedAccess] {
        self.queries
            .host_accesses
            .unwrap_or(&self.queries.accesses)
            .get_or_init(|| self.file.shared_accesses())
    }

    /// The part of [`RuleContext::shared_accesses`] that holds every access starting
    /// inside `range`, in the same order: a bisected slice when the accesses are in
    /// document order, all of them otherwise. Callers still test each access.
    pub fn shared_accesses_from(&self, range: TextRange) -> &[SharedAccess] {
        let all = self.shared_accesses();
        let sorted = *self
            .queries
            .accesses_sorted
            .get_or_init(|| all.is_sorted_by_key(|a| a.range.start));
        if !sorted {
            return all;
        }
        let lo = all.partition_point(|a| a.range.start < range.start);
        let hi = lo + all[lo..].partition_point(|a| a.range.start < range.end);
        &all[lo..hi]
    }

    /// The scalar parameters of `kernel` every launch in sight passes one constant
    /// ([`crate::model::fixed_kernel_args`]), computed once per kernel and run: without a
    /// host it scans the file's text for the calls of the launching host functions.
    pub fn fixed_kernel_args(&self, kernel: &kernaut_syntax::Function) -> FixedArgs {
        if let Some(f) = lock(&self.queries.fixed_args).get(&kernel.name) {
            return f.clone();
        }
        let fixed: FixedArgs = crate::model::fixed_kernel_args(&self.scope(), kernel).into();
        lock(&self.queries.fixed_args).insert(kernel.name.clone(), fixed.clone());
        fixed
    }

    /// The calls of the function whose body starts at `body_start`
    /// ([`SourceFile::calls_in`]), computed once per function.
    pub fn calls_in_body(&self, body_start: usize) -> Arc<[CallSite]> {
        if let Some(c) = lock(&self.queries.calls).get(&body_start) {
            return c.clone();
        }
        let calls: Arc<[CallSite]> = self.file.calls_in(body_start).into();
        lock(&self.queries.calls).insert(body_start, calls.clone());
        calls
    }

    /// The statements and function around `offset` ([`SourceFile::enclosing`]). The
    /// syntax crate keeps each chain per chunk, so asking again costs a look-up.
    pub fn enclosing(&self, offset: usize) -> Arc<[Enclosing]> {
        self.file.enclosing(offset).into()
    }

    /// The kernels and device functions that may issue async copies, commits, waits or
    /// barriers, with their classified calls ([`async_ops::all_functions`]), computed once.
    pub fn async_functions(&self) -> Arc<[AsyncFunction]> {
        self.queries
            .async_functions
            .get_or_init(|| async_ops::all_functions(self).into())
            .clone()
    }

    /// The bodies of the kernels and device functions whose text mentions one of
    /// `names` (every function when `names` is empty), in document order, without
    /// duplicates.
    pub fn bodies_mentioning(&self, names: &[&str]) -> Vec<TextRange> {
        let text = self.text();
        // Many names made of identifier characters (`arch/requires-newer-sm` asks with
        // every symbol the target lacks): each occurrence lies inside one word of the body,
        // so test each distinct word once instead of searching each body for each name.
        let by_word = names.len() > 8
            && names.iter().all(|n| {
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            });
        let mut words: HashMap<&str, bool> = HashMap::default();
        let mut mentions = |t: &'a str| {
            if !by_word {
                return names.iter().any(|n| t.contains(n));
            }
            t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .any(|w| {
                    *words.entry(w).or_insert_with(|| {
                        names.iter().any(|n| n.len() <= w.len() && w.contains(n))
                    })
                })
        };
        let mut bodies: Vec<TextRange> = self
            .facts
            .kernels
            .iter()
            .chain(&self.facts.device_functions)
            .filter_map(|f| f.body_range.clone())
            .filter(|b| names.is_empty() || text.get(b.clone()).is_some_and(&mut mentions))
            .collect();
        bodies.sort_by_key(|b| (b.start, b.end));
        bodies.dedup();
        bodies
    }

    /// The calls of the functions whose text mentions one of `names`
    /// ([`RuleContext::bodies_mentioning`]), one slice per function in document order.
    pub fn calls_mentioning(&self, names: &[&str]) -> Vec<Arc<[CallSite]>> {
        let bodies = self.bodies_mentioning(names);
        self.prefetch_calls(&bodies);
        bodies
            .into_iter()
            .map(|b| self.calls_in_body(b.start))
            .collect()
    }

    /// Computes the calls of the `bodies` not asked about yet, all at once (in parallel on
    /// a large file), for the [`RuleContext::calls_in_body`] calls that follow.
    pub fn prefetch_calls(&self, bodies: &[TextRange]) {
        let missing: Vec<usize> = {
            let cache = lock(&self.queries.calls);
            let mut starts: Vec<usize> = bodies
                .iter()
                .map(|b| b.start)
                .filter(|s| !cache.contains_key(s))
                .collect();
            starts.dedup();
            starts
        };
        if missing.len() > 1 {
            let found = self.file.calls_in_each(&missing);
            let mut cache = lock(&self.queries.calls);
            for (start, calls) in missing.into_iter().zip(found) {
                cache.insert(start, calls.into());
            }
        }
    }

    /// The file's text.
    pub fn text(&self) -> &'a str {
        self.file.text()
    }
}

/// The guarded value, also after a rule panicked while holding the lock (the caches
/// hold only complete entries).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The model's view from a rules run: the host it belongs to, or the file alone.
impl<'a> RuleContext<'a> {
    /// The context with the model reading `analysis` (the host snapshot the file at
    /// `path` belongs to).
    pub fn in_host(mut self, analysis: &'a Analysis, path: &'a str) -> Self {
        self.model.host = Some((analysis, path));
        self
    }

    /// The model's scope for this file.
    pub fn scope(&self) -> crate::model::Scope<'_> {
        match self.model.host {
            Some((a, path)) => crate::model::Scope {
                path,
                file: self.file,
                host: Some(a),
                default_block: a.config.default_block,
                cache: &a.cache,
                lines: None,
            },
            None => crate::model::Scope {
                path: "",
                file: self.file,
                host: None,
                default_block: crate::AnalysisConfig::default().default_block,
                cache: &self.model.cache,
                lines: Some(&self.model.lines),
            },
        }
    }
}

impl RuleContext<'_> {
    /// Whether nvcc emits code for kernel `k`: always for a plain kernel; for a template,
    /// only where something instantiates it: a launch in any file of the host, or its name
    /// used in the file outside its own definition (an explicit instantiation, `&k<4>`
    /// handed to `cudaLaunchKernelEx` or `cudaFuncSetAttribute`). In a source file, a
    /// launch or use inside a function template that nothing in the file instantiates
    /// (`template <class T> void run() { k<T><<<…>>>(…); }` with no `run<float>()`)
    /// instantiates nothing: only the file itself can instantiate what it defines.
    pub fn emitted(&self, k: &kernaut_syntax::Function) -> bool {
        if k.template_params.is_empty() {
            return true;
        }
        let name = short_name(&k.name);
        if self.is_source_file() {
            return self.instantiating_use(name, &k.range, Some(&k.name_range), 3);
        }
        let base = |l: &str| short_name(l.split('<').next().unwrap_or(l).trim()) == name;
        let launched = match self.model.host {
            Some((a, _)) => !a.launch_index().sites(name).is_empty(),
            None => self.facts.launches.iter().any(|l| base(&l.kernel)),
        };
        launched
            || self
                .file
                .names_in(&(0..self.text().len()))
                .iter()
                .any(|(n, r)| {
                    short_name(n) == name && !k.range.contains(&r.start) && *r != k.name_range
                })
    }

    /// Whether code is emitted for the device function template `f` of a file with no
    /// kernels (a header, or a `.cu` file other files include): the file uses it outside
    /// a template ([`Self::instantiating_use`]), or another file of the host names it, a
    /// template of this file that uses it, or a macro of this file whose definition
    /// mentions one of those and is compiled for some target (`#define TALLY(p)
    /// tally<32>(p)` under `#if __CUDA_ARCH__ < 200` names it for no target of sm_90).
    /// `true` where the file has kernels, `f` is no template, or no host is in view.
    pub fn device_template_emitted(
        &self,
        f: &kernaut_syntax::Function,
        guards: &dyn Fn(usize) -> bool,
    ) -> bool {
        if f.is_kernel || f.template_params.is_empty() || !self.facts.kernels.is_empty() {
            return true;
        }
        let Some((host, path)) = self.model.host else {
            return true;
        };
        let name = short_name(&f.name);
        if self.instantiating_use(name, &f.range, Some(&f.name_range), 3) {
            return true;
        }
        // The names through which another file may reach `f`.
        let mut names: Vec<String> = vec![name.to_string()];
        for _ in 0..3 {
            let mut grew = false;
            for g in &self.facts.device_functions {
                let g_name = short_name(&g.name);
                if g.template_params.is_empty() || names.iter().any(|n| n == g_name) {
                    continue;
                }
                let uses = names.iter().any(|n| {
                    self.file
                        .identifier_uses(n)
                        .iter()
                        .any(|r| g.range.contains(&r.start) && *r != g.name_range)
                });
                if uses {
                    names.push(g_name.to_string());
                    grew = true;
                }
            }
            for (at, m) in kernaut_syntax::macro_definitions_at(self.text()) {
                if names.contains(&m.name) || !guards(at) {
                    continue;
                }
                let mentions = names
                    .iter()
                    .any(|n| kernaut_syntax::lex::find_word(&m.body, n, 0).is_some());
                if mentions {
                    names.push(m.name.clone());
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let set: rustc_hash::FxHashSet<&str> = names.iter().map(String::as_str).collect();
        host.named_elsewhere(path, &set)
    }

    /// Whether the file uses the template `name` (defined at `own`) where the use is
    /// compiled: outside any function template, or inside one that such a use reaches in
    /// turn (`depth` levels; past them a use counts).
    fn instantiating_use(
        &self,
        name: &str,
        own: &TextRange,
        own_name: Option<&TextRange>,
        depth: usize,
    ) -> bool {
        let launches = self
            .facts
            .launches
            .iter()
            .filter(|l| short_name(&l.kernel) == name)
            .map(|l| l.range.clone());
        launches
            .chain(self.file.identifier_uses(name))
            .filter(|r| !own.contains(&r.start) && Some(r) != own_name)
            .any(|r| match self.file.enclosing_template_function(r.start) {
                None => true,
                Some(_) if depth == 0 => true,
                Some((f, range)) => {
                    f != name && self.instantiating_use(&f, &range, None, depth - 1)
                }
            })
    }

    /// Whether the file is a source file nvcc compiles on its own (`.cu`, `.cpp`, …), not
    /// a header whose templates the files that include it instantiate. A context without
    /// a host (a lone text) is taken for a source file.
    pub fn is_source_file(&self) -> bool {
        let path = self.model.host.map(|(_, p)| p).unwrap_or("");
        !std::path::Path::new(path)
            .extension()
            .is_some_and(|e| !matches!(e.to_str(), Some("cu" | "cpp" | "cc" | "cxx" | "c")))
    }
}

impl RuleContext<'_> {
    /// The names the project defines where this file can see them: the file's own
    /// kernels, device functions and macros, the macros its headers give it (its
    /// prelude) and the headers' functions ([`Self::header_definitions`]). A call to one
    /// of them is the project's, whatever library symbol or intrinsic shares the name
    /// (`#define __shfl_xor my_shfl_xor` in a compatibility header).
    pub fn own_names(&self) -> kernaut_syntax::FxHashSet<String> {
        let facts = self.facts;
        let mut out: kernaut_syntax::FxHashSet<String> = facts
            .kernels
            .iter()
            .chain(&facts.device_functions)
            .map(|f| short_name(&f.name).to_string())
            .chain(facts.macros.iter().cloned())
            .collect();
        if let Some(prelude) = self.file.prelude() {
            out.extend(prelude.macros.iter().map(|m| m.name.clone()));
        }
        out.extend(self.header_definitions());
        out
    }

    /// The names the file's quoted headers define (their kernels, `__device__` functions
    /// and macros, short names), as the host holds the headers: a call to one of them is
    /// the project's own function, not a library symbol of the same name.
    pub fn header_definitions(&self) -> Vec<String> {
        let Some((analysis, path)) = self.model.host else {
            return Vec::new();
        };
        let mut out = Vec::new();
        // The one include walk, which the call contexts read too.
        for header in crate::callers::header_paths(analysis, path) {
            let Some(data) = analysis.file(&header) else {
                continue;
            };
            let facts = data.facts();
            out.extend(
                facts
                    .kernels
                    .iter()
                    .chain(&facts.device_functions)
                    .map(|f| short_name(&f.name).to_string()),
            );
            out.extend(facts.macros.iter().cloned());
        }
        out
    }
}

impl RuleContext<'_> {
    /// The races of every kernel of the file under the launches the host shows.
    pub fn races(&self) -> Arc<[Race]> {
        self.queries
            .races
            .get_or_init(|| {
                let facts = self.facts;
                let kernels: Vec<_> = facts
                    .kernels
                    .iter()
                    .filter(|k| k.is_kernel && k.body_range.is_some())
                    .collect();
                if kernels.is_empty() {
                    return Arc::from(Vec::new());
                }
                let scope = self.scope();
                let global = self.file.global_accesses();
                let budget = std::cell::Cell::new(crate::races::FILE_STEPS);
                let mut out = Vec::new();
                // The steps of kernels left out of this text (an incremental run's blanked
                // functions) are spent where they stand, as a run over the whole file would.
                let mut elsewhere = self.queries.race_steps_elsewhere.iter().peekable();
                let mut spent = Vec::new();
                for k in kernels {
                    let Some(body) = k.body_range.clone() else {
                        continue;
                    };
                    while let Some((_, steps)) = elsewhere.next_if(|(at, _)| *at < body.start) {
                        budget.set(budget.get().saturating_sub(*steps));
                    }
                    if budget.get() == 0 {
                        break;
                    }
                    let launch = crate::model::launch_config(&scope, Some(k));
                    let calls = self.calls_in_body(body.start);
                    let shared = self.shared_accesses_from(body.clone());
                    let before = budget.get();
                    out.extend(kernel_races(
                        &scope, k, &launch, shared, &global, &calls, &budget,
                    ));
                    spent.push((body.start, before - budget.get()));
                }
                *lock(&self.queries.race_steps) = spent;
                if self.targets.independent_scheduling().is_none() {
                    out.retain(|r| !crate::races::ordered_in_lockstep(self.file, r));
                }
                out.into()
            })
            .clone()
    }

    /// The race model's steps in this run, per kernel it ran (where its body starts), in
    /// document order; empty before [`RuleContext::races`] ran.
    pub fn race_steps(&self) -> Vec<(usize, usize)> {
        lock(&self.queries.race_steps).clone()
    }

    /// The context spending, before each kernel, the race model's steps of the kernels
    /// `steps` places there (where their bodies start, in document order) that this
    /// context's text leaves out.
    pub fn with_race_steps_elsewhere(mut self, steps: Vec<(usize, usize)>) -> Self {
        self.queries.race_steps_elsewhere = steps;
        self
    }
}
