//! The rules run for a file of a host snapshot: the diagnostics query, its cache key and
//! the compiler's findings added to the rules'. Here rather than in `analysis`, so that
//! the snapshot does not depend on the features it serves.

use std::sync::Arc;

use kernaut_syntax::TextRange;

use super::{RuleContext, RuleSettings};
use crate::analysis::{Analysis, Cancellable, DiagnosticsKey, FileConfig, FileData, FileId};
use crate::compiled::CompiledFacts;
use crate::diagnostic::RuleDiagnostic;
use crate::knowledge::Knowledge;
use kernaut_syntax::short_name;

impl Analysis {
    /// The pitfall rules' diagnostics for a file, at the rule levels of its configuration
    /// (none without a wiki: every rule cites it).
    pub fn diagnostics(&self, file: FileId) -> Cancellable<Vec<RuleDiagnostic>> {
        let (path, _) = self.data(file)?;
        if self.knowledge().is_none() {
            return Ok(Vec::new());
        }
        self.query("diagnostics", || {
            self.diagnostics_at(path, true)
                .map(|d| (*d).clone())
                .unwrap_or_default()
        })
    }

    /// [`Analysis::diagnostics`] shared instead of copied: the same `Arc` for as long as
    /// the file's diagnostics stay cached, so a front end can tell at once that nothing
    /// changed (the server publishes only documents whose diagnostics did).
    pub fn diagnostics_shared(&self, file: FileId) -> Cancellable<Arc<Vec<RuleDiagnostic>>> {
        let (path, _) = self.data(file)?;
        if self.knowledge().is_none() {
            return Ok(Arc::default());
        }
        self.query("diagnostics", || {
            self.diagnostics_at(path, true).unwrap_or_default()
        })
    }

    /// The diagnostics of the file at `path`, for features inside a query: computed once
    /// per version of the file and configuration, and shared with
    /// [`Analysis::diagnostics`]. With `compute` false, only what is already computed
    /// (`None` otherwise).
    pub(crate) fn diagnostics_at(
        &self,
        path: &str,
        compute: bool,
    ) -> Option<Arc<Vec<RuleDiagnostic>>> {
        let (path, f) = self.files.get_key_value(path)?;
        if f.failure.is_some() {
            return None;
        }
        let k = self.knowledge.as_ref()?;
        let fc = self.config_for_path(path);
        let compiled = self.compiled.get(path.as_str());
        let key = DiagnosticsKey {
            config: fc.clone(),
            knowledge: Arc::as_ptr(k) as usize,
            compiled: compiled.map_or(0, |c| Arc::as_ptr(c) as usize),
            launches: self.launch_fingerprint(f),
        };
        {
            let cached = f
                .diagnostics
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((k, d)) = cached.as_ref() {
                if *k == key {
                    return Some(d.clone());
                }
            }
        }
        if !compute {
            return None;
        }
        // No lock is held while the rules run (they reach cancellation checkpoints).
        // A file kept without its trees is parsed again for the run.
        let out = Arc::new(self.run_rules(path, &f.with_trees(), k, &fc, compiled.map(|c| &**c)));
        *f.diagnostics
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((key, out.clone()));
        Some(out)
    }

    /// A hash of what the rules' model reads from other files for the file `f`: the
    /// launches, in every file, of the kernels `f` defines (the model reads no other
    /// launch), and the default block. Proportional to those launches, not to the number
    /// of files: the index behind it is built once per revision.
    fn launch_fingerprint(&self, f: &FileData) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        self.config.default_block.hash(&mut h);
        let kernels = f.facts().kernels.iter();
        self.launch_index()
            .fingerprint(kernels.map(|k| short_name(&k.name)))
            .hash(&mut h);
        // The dynamic shared-memory opt-ins, in other files, of the kernels `f` launches
        // over the 48 KB default (`smem/dynamic-over-48k-without-opt-in` reads them).
        for l in &f.facts().launches {
            if l.shared_bytes.is_some_and(|b| b > 48 * 1024) {
                self.dynamic_opt_ins(short_name(&l.kernel)).hash(&mut h);
            }
        }
        h.finish()
    }

    /// The files of the host that raise `cudaFuncAttributeMaxDynamicSharedMemorySize`
    /// for a kernel whose name without namespaces is `short` (directly or through a
    /// macro), with the values, by path.
    pub(crate) fn dynamic_opt_ins(&self, short: &str) -> Vec<(&str, Option<i64>)> {
        let mut out = Vec::new();
        for (p, data) in self.sorted_files("") {
            for a in data.attributes_named(short) {
                if a.attribute.ends_with("MaxDynamicSharedMemorySize") {
                    out.push((p, a.value));
                }
            }
        }
        out
    }

    fn run_rules(
        &self,
        path: &str,
        f: &FileData,
        k: &Knowledge,
        fc: &FileConfig,
        compiled: Option<&CompiledFacts>,
    ) -> Vec<RuleDiagnostic> {
        let settings = RuleSettings {
            arch: fc.arch,
            arch_configured: fc.arch_configured,
            targets: Some(&fc.targets),
            defines: &fc.defines,
            target_defines: &fc.target_defines,
            levels: &fc.rules,
        };
        let ctx = RuleContext::with_settings(&f.source, k, settings)
            .in_host(self, path)
            .with_shared_accesses(f.accesses_slot());
        let mut out = crate::rules::check(&ctx);
        if let Some(compiled) = compiled {
            let kernels: Vec<(String, TextRange, bool)> = f
                .facts()
                .kernels
                .iter()
                .map(|k| {
                    (
                        k.name.clone(),
                        k.name_range.clone(),
                        k.launch_bounds.is_some(),
                    )
                })
                .collect();
            out.extend(crate::compiled::spill_diagnostics(
                compiled,
                &kernels,
                &fc.arch.to_string(),
                fc.rules.level(crate::compiled::SPILLS_RULE),
            ));
            crate::compiled::check_l1_mode_against_sass(
                compiled,
                &f.facts().kernels,
                &fc.arch.to_string(),
                &mut out,
            );
            out.sort_by(|a, b| {
                (a.range.start, a.range.end, a.rule).cmp(&(b.range.start, b.range.end, b.rule))
            });
        }
        out
    }
}

/// The model's view from a rules run: the host it belongs to, or the file alone.
impl<'a> RuleContext<'a> {
    /// The context with the model reading `analysis` (the host snapshot the file at
    /// `path` belongs to).
    pub(crate) fn in_host(mut self, analysis: &'a Analysis, path: &'a str) -> Self {
        self.model.host = Some((analysis, path));
        self
    }

    /// The model's scope for this file.
    pub(crate) fn scope(&self) -> crate::model::Scope<'_> {
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
    /// The names the file's quoted headers define (their kernels, `__device__` functions
    /// and macros, short names), as the host holds the headers: a call to one of them is
    /// the project's own function, not a library symbol of the same name.
    pub(crate) fn header_definitions(&self) -> Vec<String> {
        let Some((analysis, path)) = self.model.host else {
            return Vec::new();
        };
        let dirs = analysis
            .builds
            .get(path)
            .map(|b| b.include_dirs.clone())
            .unwrap_or_default();
        let by_norm: rustc_hash::FxHashMap<String, &str> = analysis
            .files
            .keys()
            .map(|p| (crate::includes::normalize_path(p), p.as_str()))
            .collect();
        let mut text_of = |p: &str| -> Option<std::sync::Arc<str>> {
            let key = by_norm.get(&crate::includes::normalize_path(p))?;
            Some(std::sync::Arc::from(
                analysis.files.get(*key)?.source.text(),
            ))
        };
        let mut out = Vec::new();
        for (header, _) in crate::includes::include_closure_in(path, &dirs, &mut text_of) {
            let Some(key) = by_norm.get(&header) else {
                continue;
            };
            let Some(data) = analysis.file(key) else {
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
