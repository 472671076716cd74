//! The rules run for a file of a host snapshot: the diagnostics query, its cache key and
//! the compiler's findings added to the rules'. Here rather than in `analysis`, so that
//! the snapshot does not depend on the features it serves.

use std::sync::Arc;

use kernaut_syntax::TextRange;

use super::{RuleContext, RuleSettings};
use crate::analysis::{Analysis, Cancellable, FileConfig, FileId};
use crate::analysis::{DiagnosticsKey, FileData};
use crate::compiled::CompiledFacts;
use crate::diagnostic::RuleDiagnostic;
use crate::knowledge::Knowledge;
use kernaut_syntax::short_name;

/// The pitfall rules' diagnostics for a file, at the rule levels of its configuration
/// (none without a wiki: every rule cites it).
pub(crate) fn diagnostics(db: &Analysis, file: FileId) -> Cancellable<Vec<RuleDiagnostic>> {
    let (path, _) = db.data(file)?;
    if db.knowledge().is_none() {
        return Ok(Vec::new());
    }
    db.query("diagnostics", || {
        diagnostics_at(db, path, true)
            .map(|d| (*d).clone())
            .unwrap_or_default()
    })
}

/// [`Analysis::diagnostics`] shared instead of copied: the same `Arc` for as long as the
/// file's diagnostics stay cached, so a front end can tell at once that nothing changed
/// (the server publishes only documents whose diagnostics did).
pub(crate) fn diagnostics_shared(
    db: &Analysis,
    file: FileId,
) -> Cancellable<Arc<Vec<RuleDiagnostic>>> {
    let (path, _) = db.data(file)?;
    if db.knowledge().is_none() {
        return Ok(Arc::default());
    }
    db.query("diagnostics", || {
        diagnostics_at(db, path, true).unwrap_or_default()
    })
}

/// The diagnostics of the file at `path`, for features inside a query: computed once
/// per version of the file and configuration, and shared with
/// [`Analysis::diagnostics`]. With `compute` false, only what is already computed
/// (`None` otherwise).
pub(crate) fn diagnostics_at(
    db: &Analysis,
    path: &str,
    compute: bool,
) -> Option<Arc<Vec<RuleDiagnostic>>> {
    let (path, f) = db.files.get_key_value(path)?;
    if f.failure.is_some() {
        return None;
    }
    let k = db.knowledge.as_ref()?;
    let fc = db.config_for_path(path);
    let compiled = db.compiled.get(path.as_str());
    let key = DiagnosticsKey {
        config: fc.clone(),
        knowledge: Arc::as_ptr(k) as usize,
        compiled: compiled.map_or(0, |c| Arc::as_ptr(c) as usize),
        launches: launch_fingerprint(db, f),
    };
    {
        let cached = f
            .diagnostics
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(run) = cached.as_ref() {
            if run.key == key {
                return Some(run.diagnostics.clone());
            }
        }
    }
    if !compute {
        return None;
    }
    // No lock is held while the rules run (they reach cancellation checkpoints).
    // After an edit (or a change of the launches elsewhere), only the functions it
    // reaches run again ([`super::incremental`]); a file kept without its trees is
    // parsed again for a run over the whole file.
    // (A file kept without its trees has no next incremental run to key.)
    let names = if f.trees_dropped {
        Vec::new()
    } else {
        kernel_names(db, f)
    };
    let compiled = compiled.map(|c| &**c);
    let run = f
        .last_run()
        .filter(|_| !f.trees_dropped)
        .and_then(|prev| {
            super::incremental::run(db, path, f, k, &fc, compiled, &key, &names, &prev)
        })
        .unwrap_or_else(|| {
            let data = f.with_trees();
            let (out, race_steps) = run_rules(db, path, &data, k, &fc, compiled, Vec::new());
            // What the next incremental run needs, for a file kept with its trees.
            let text = f.source.text();
            let kept = !f.trees_dropped;
            crate::analysis::RulesRun {
                key,
                diagnostics: Arc::new(out),
                items: if kept {
                    crate::analysis::items(text).into()
                } else {
                    Arc::default()
                },
                names,
                race_steps,
                clean: kept && f.source.errors().is_empty(),
                text: if kept {
                    Arc::from(text)
                } else {
                    Arc::default()
                },
            }
        });
    let out = run.diagnostics.clone();
    *f.diagnostics
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::new(run));
    Some(out)
}

/// What the model reads from launches, per kernel name the file `f` defines or launches:
/// the launches of that kernel in every file, the constants they fix its parameters to
/// and, for a kernel `f` launches over the 48 KB default, its dynamic shared-memory
/// opt-ins. Under the empty name: the default
/// block every kernel falls back on. (The incremental run's key per kernel.)
fn kernel_names(db: &Analysis, f: &FileData) -> Vec<(String, u64)> {
    use std::hash::{Hash, Hasher};
    let index = db.launch_index();
    let facts = f.facts();
    let mut names: Vec<&str> = facts
        .kernels
        .iter()
        .map(|k| short_name(&k.name))
        .chain(facts.launches.iter().map(|l| short_name(&l.kernel)))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut out: Vec<(String, u64)> = names
        .into_iter()
        .map(|n| {
            let mut h = rustc_hash::FxHasher::default();
            index.fingerprint(std::iter::once(n)).hash(&mut h);
            let over = facts.launches.iter().any(|l| {
                short_name(&l.kernel) == n && l.shared_bytes.is_some_and(|b| b > 48 * 1024)
            });
            if over {
                dynamic_opt_ins(db, n).hash(&mut h);
            }
            // The constants its launches fix its parameters to, through the host
            // functions around them and their calls in any file.
            for k in facts.kernels.iter().filter(|k| short_name(&k.name) == n) {
                db.fixed_kernel_args(k).hash(&mut h);
            }
            (n.to_string(), h.finish())
        })
        .collect();
    let mut h = rustc_hash::FxHasher::default();
    db.config.default_block.hash(&mut h);
    out.push((super::incremental::ALL_KERNELS.to_string(), h.finish()));
    out
}

/// A hash of what the rules' model reads from other files for the file `f`: the
/// launches, in every file, of the kernels `f` defines (the model reads no other
/// launch), and the default block. Proportional to those launches, not to the number
/// of files: the index behind it is built once per revision.
fn launch_fingerprint(db: &Analysis, f: &FileData) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    db.config.default_block.hash(&mut h);
    let kernels = f.facts().kernels.iter();
    db.launch_index()
        .fingerprint(kernels.map(|k| short_name(&k.name)))
        .hash(&mut h);
    // The constants the launches fix the kernels' parameters to: they follow the host
    // functions around the launches to their calls, in any file.
    for k in &f.facts().kernels {
        db.fixed_kernel_args(k).hash(&mut h);
    }
    // The dynamic shared-memory opt-ins, in other files, of the kernels `f` launches
    // over the 48 KB default (`smem/dynamic-over-48k-without-opt-in` reads them).
    for l in &f.facts().launches {
        if l.shared_bytes.is_some_and(|b| b > 48 * 1024) {
            dynamic_opt_ins(db, short_name(&l.kernel)).hash(&mut h);
        }
    }
    h.finish()
}

/// The files of the host that raise `cudaFuncAttributeMaxDynamicSharedMemorySize`
/// for a kernel whose name without namespaces is `short` (directly or through a
/// macro), with the values, by path.
pub(crate) fn dynamic_opt_ins<'a>(db: &'a Analysis, short: &str) -> Vec<(&'a str, Option<i64>)> {
    let mut out = Vec::new();
    for (p, data) in db.sorted_files("") {
        for a in data.attributes_named(short) {
            if a.attribute.ends_with("MaxDynamicSharedMemorySize") {
                out.push((p, a.value));
            }
        }
    }
    out
}

/// Every rule over `f` (with its trees) and the compiler's findings; with the race model's
/// steps per kernel. `race_steps_elsewhere`: the steps of kernels `f`'s text leaves out
/// ([`RuleContext::with_race_steps_elsewhere`]).
pub(super) fn run_rules(
    db: &Analysis,
    path: &str,
    f: &FileData,
    k: &Knowledge,
    fc: &FileConfig,
    compiled: Option<&CompiledFacts>,
    race_steps_elsewhere: Vec<(usize, usize)>,
) -> (Vec<RuleDiagnostic>, Vec<(usize, usize)>) {
    let settings = RuleSettings {
        arch: fc.arch,
        arch_configured: fc.arch_configured,
        targets: Some(&fc.targets),
        defines: &fc.defines,
        target_defines: &fc.target_defines,
        levels: &fc.rules,
    };
    let ctx = RuleContext::with_settings(&f.source, k, settings)
        .in_host(db, path)
        .with_shared_accesses(f.accesses_slot())
        .with_race_steps_elsewhere(race_steps_elsewhere);
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
    (out, ctx.race_steps())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AnalysisConfig, AnalysisHost};

    /// A file's diagnostics stay cached across an edit of a launch of a kernel the file
    /// does not define, and are recomputed when a launch of one of its own kernels
    /// changes in another file (the cache is observed with `diagnostics_at(_, false)`,
    /// which answers only from the cache).
    #[test]
    fn diagnostics_depend_only_on_the_launches_of_the_files_kernels() {
        let knowledge = Knowledge::load(&kernaut_wiki::WikiConfig::builtin()).unwrap();
        let mut host = AnalysisHost::new(AnalysisConfig::default());
        host.set_knowledge(Arc::new(knowledge));
        host.set_file(
            "/kernel.cu",
            "__global__ void k(float* out) {\n    __shared__ float tile[32][16];\n    out[0] = tile[threadIdx.x][threadIdx.y];\n}\n",
        );
        host.set_file(
            "/other.cu",
            "__global__ void other(float* out) {\n    __shared__ float t[32][32];\n    out[0] = t[threadIdx.x][0];\n}\n",
        );
        let main = "void launch(float* out) {\n    k<<<1, dim3(16, 16)>>>(out);\n    other<<<1, 128>>>(out);\n}\n";
        host.set_file("/main.cu", main);
        let conflicts = |d: &[RuleDiagnostic]| -> Vec<String> {
            d.iter()
                .filter(|d| d.rule == "bank-conflict")
                .map(|d| d.message.split(':').next().unwrap_or("").to_string())
                .collect()
        };
        let a = host.analysis();
        let before = diagnostics_at(&a, "/kernel.cu", true).unwrap();
        assert_eq!(conflicts(&before), ["8-way bank conflict"]);
        assert!(diagnostics_at(&a, "/other.cu", true).is_some());
        drop(a);

        // `other`'s launch changes: kernel.cu's run is reused, other.cu's is not.
        let at = main.find("128").unwrap();
        host.apply_edit("/main.cu", at..at + 3, "64");
        let a = host.analysis();
        let kept = diagnostics_at(&a, "/kernel.cu", false);
        assert!(kept.is_some_and(|d| Arc::ptr_eq(&d, &before)));
        assert!(diagnostics_at(&a, "/other.cu", false).is_none());
        drop(a);

        // `k`'s launch changes to 32×8: recomputed, and the finding follows the block.
        let at = main.find("dim3(16, 16)").unwrap();
        host.apply_edit("/main.cu", at..at + "dim3(16, 16)".len(), "dim3(32, 8)");
        let a = host.analysis();
        assert!(diagnostics_at(&a, "/kernel.cu", false).is_none());
        let after = diagnostics_at(&a, "/kernel.cu", true).unwrap();
        assert_eq!(conflicts(&after), ["16-way bank conflict"]);
    }
}
