//! Pitfall rules: the wiki's pitfalls, caught where they are written.
//!
//! Each rule is one file in this folder with a doc block (a before/after example) and its
//! tests at the bottom, and one line in [`RULES`]. A rule reads the parsed file and its
//! facts from a [`RuleContext`] and pushes [`RuleDiagnostic`]s: plain data with byte
//! ranges, a one-line message, the wiki anchor it cites and fixes as text edits.
//! [`check`] runs every rule, applies the configured levels and drops what a
//! `// kernaut: allow(rule-id)` comment on or above the line silences.
//!
//! ```
//! use kernaut_ide::rules::{check, RuleContext};
//! use kernaut_ide::{config::RulesConfig, gpu::Arch, syntax::SourceFile, Knowledge};
//! use kernaut_ide::wiki::WikiConfig;
//!
//! let knowledge = Knowledge::load(&WikiConfig::builtin()).unwrap();
//! let file = SourceFile::parse(
//!     "__global__ void k(float* o) {\n  __shared__ float t[32][32];\n  o[0] = t[threadIdx.x][0];\n}\n",
//! );
//! let config = RulesConfig::default();
//! let ctx = RuleContext::new(&file, Arch::parse("sm_90").unwrap(), &knowledge, &config);
//! let diags = check(&ctx);
//! assert_eq!(diags[0].rule, "bank-conflict");
//! assert_eq!(diags[0].wiki, "pitfall-bank-conflict#P1");
//! ```

use kernaut_gpu::Arch;
use kernaut_syntax::FxHashMap as HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use kernaut_syntax::{
    CallSite, Enclosing, EnclosingKind, FileFacts, SharedAccess, SourceFile, TextRange,
};

use crate::config::{RuleLevel, RulesConfig, Severity, TargetSet};
use crate::Knowledge;
use async_ops::AsyncFunction;

pub(crate) mod host;
mod ids;
mod target_guards;
pub use ids::{closest_rule_id, find_rule, is_allow_id, is_rule_id, rule_ids, UNKNOWN_RULE};

mod allow;
pub(crate) use allow::{allowed_lines, allows, unknown_allow_ids};

mod edit;
pub use crate::diagnostic::{Fix, RuleDiagnostic, TextEdit};
pub use edit::apply_edits;
pub(crate) use edit::{indent_at, line_start, statement_end};

mod conditions;
pub(crate) use conditions::{thread_dependent_branch, warp_uniform};

mod words;
pub(crate) use words::{find_word, is_identifier};

pub(crate) mod async_ops;
mod bank_conflict;
mod barrier_in_divergent_branch;
mod barriers;
mod bf16_explicit_packing;
mod commit_in_divergent_branch;
mod dynamic_over_48k;
mod fp16_accumulator;
mod implicit_warp_synchronous;
mod l1_access_mode;
mod legacy_sync_free_intrinsic;
mod missing_sync_after_wait;
mod over_capacity;
mod over_unroll;
mod requires_newer_sm;
mod runtime_stage_count;
mod single_thread_tma_branch;
pub(crate) mod strided_global_access;
mod type_aliases;
mod unaligned_carve;
mod wait_all_in_pipelined_loop;

mod race_findings;
mod race_global_neighbour;
mod race_same_address_write;
mod race_shared_missing_barrier;

#[cfg(test)]
mod testing;

/// Every rule, in the order they run.
pub const RULES: &[Rule] = &[
    bank_conflict::RULE,
    wait_all_in_pipelined_loop::RULE,
    missing_sync_after_wait::RULE,
    commit_in_divergent_branch::RULE,
    dynamic_over_48k::RULE,
    over_capacity::RULE,
    requires_newer_sm::RULE,
    legacy_sync_free_intrinsic::RULE,
    barrier_in_divergent_branch::RULE,
    over_unroll::RULE,
    runtime_stage_count::RULE,
    single_thread_tma_branch::RULE,
    fp16_accumulator::RULE,
    l1_access_mode::RULE,
    bf16_explicit_packing::RULE,
    unaligned_carve::RULE,
    strided_global_access::RULE,
    implicit_warp_synchronous::RULE,
    race_same_address_write::RULE,
    race_shared_missing_barrier::RULE,
    race_global_neighbour::RULE,
];

/// One rule: its id, the wiki anchors it cites, and the function that runs it.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// The text of the rule's file, whose leading `//!` block documents it
    /// ([`Rule::doc`]).
    pub source: &'static str,
    /// The id users name in `.kernaut.toml` and `allow(...)` comments.
    pub id: &'static str,
    /// The severity its diagnostics have unless the rule or the configuration says
    /// otherwise.
    pub severity: Severity,
    /// Every `id#anchor` its diagnostics may cite.
    pub wiki: &'static [&'static str],
    /// Runs the rule.
    pub run: fn(&RuleContext, &mut Vec<RuleDiagnostic>),
}

impl Rule {
    /// The rule's documentation: the leading `//!` block of its file, without the `//!`
    /// markers (Markdown, with a before/after example in a ```` ```cuda ```` block).
    ///
    /// Rustdoc links are for contributors, not users: a parenthesised one
    /// (`([`crate::model::bank`])`) is dropped, and a bare one (`[`Level`]`) becomes
    /// plain code (`` `Level` ``).
    pub fn doc(&self) -> String {
        let mut out = String::new();
        for line in self.source.lines() {
            let Some(rest) = line.strip_prefix("//!") else {
                break;
            };
            out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            out.push('\n');
        }
        without_rustdoc_links(&out)
    }

    /// One line on what the rule finds: the first paragraph of [`Rule::doc`] without the
    /// leading `` `id`: ``.
    pub fn summary(&self) -> String {
        let doc = self.doc();
        let first: Vec<&str> = doc
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .map(str::trim)
            .collect();
        let line = first.join(" ");
        let prefix = format!("`{}`: ", self.id);
        line.strip_prefix(&prefix).unwrap_or(&line).to_string()
    }
}

/// Documentation text without rustdoc's intra-doc links (see [`Rule::doc`]).
fn without_rustdoc_links(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(start) = rest.find("[`") {
        let Some(len) = rest[start..].find("`]") else {
            break;
        };
        let end = start + len + 2;
        let name = &rest[start + 2..end - 2];
        let parenthesised = rest[..start].ends_with('(') && rest[end..].starts_with(')');
        if parenthesised {
            out.push_str(rest[..start - 1].trim_end_matches(' '));
            rest = &rest[end + 1..];
        } else {
            out.push_str(&rest[..start]);
            out.push('`');
            out.push_str(name);
            out.push('`');
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out
}

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
    pub(crate) model: crate::model::RuleModel<'a>,
}

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
    pub(crate) fn shared_accesses_from(&self, range: TextRange) -> &[SharedAccess] {
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
    pub(crate) fn async_functions(&self) -> Arc<[AsyncFunction]> {
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
    pub(crate) fn calls_mentioning(&self, names: &[&str]) -> Vec<Arc<[CallSite]>> {
        let bodies = self.bodies_mentioning(names);
        self.prefetch_calls(&bodies);
        bodies
            .into_iter()
            .map(|b| self.calls_in_body(b.start))
            .collect()
    }

    /// Computes the calls of the `bodies` not asked about yet, all at once (in parallel on
    /// a large file), for the [`RuleContext::calls_in_body`] calls that follow.
    pub(crate) fn prefetch_calls(&self, bodies: &[TextRange]) {
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

/// Files of at least this many bytes have their rules run on several threads (on a
/// small file, starting a thread costs more than it saves).
const PARALLEL_RULES_BYTES: usize = 64 * 1024;

/// The guarded value, also after a rule panicked while holding the lock (the caches
/// hold only complete entries).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs every rule over the context's file: configured levels applied, `allow` comments
/// honoured, sorted by position.
pub fn check(ctx: &RuleContext) -> Vec<RuleDiagnostic> {
    let active: Vec<(&Rule, Option<RuleLevel>)> = RULES
        .iter()
        .map(|rule| (rule, ctx.config.level(rule.id)))
        .filter(|(_, level)| *level != Some(RuleLevel::Off))
        .collect();
    let run = |(rule, level): &(&Rule, Option<RuleLevel>)| {
        kernaut_syntax::cancel::checkpoint();
        let mut found = Vec::new();
        (rule.run)(ctx, &mut found);
        if let Some(RuleLevel::Level(severity)) = level {
            for d in &mut found {
                d.severity = *severity;
            }
        }
        found
    };
    // On a large file the rules share the cores: each thread takes the next rule not
    // yet taken. The results are put back in the order of `RULES`, so the output does
    // not depend on which thread ran what.
    let threads = if ctx.text().len() >= PARALLEL_RULES_BYTES {
        kernaut_syntax::threads().min(active.len())
    } else {
        1
    };
    let mut out: Vec<RuleDiagnostic> = if threads > 1 {
        // The walk of each function (its calls, its statements' parts of `enclosing`)
        // serves most rules; done first, on all cores, each function is walked once
        // instead of by whichever rule asks first while the others wait or repeat it.
        ctx.prefetch_calls(&ctx.bodies_mentioning(&[]));
        let next = AtomicUsize::new(0);
        let token = kernaut_syntax::cancel::current();
        let work_loop = || {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(rule) = active.get(i) else {
                    return done;
                };
                done.push((i, run(rule)));
            }
        };
        let work = || kernaut_syntax::cancel::with_token(token.clone(), work_loop);
        let mut per_rule: Vec<(usize, Vec<RuleDiagnostic>)> = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads)
                .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
                .collect();
            let mut all = work();
            for h in helpers {
                all.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            }
            all
        });
        per_rule.sort_by_key(|(i, _)| *i);
        per_rule.into_iter().flat_map(|(_, d)| d).collect()
    } else {
        active.iter().flat_map(run).collect()
    };
    // Every `allow` comment says `kernaut:`; most files have none, and finding comments
    // walks the whole tree.
    let comments = if ctx.text().contains("kernaut:") {
        ctx.file.allow_comments()
    } else {
        Vec::new()
    };
    let allowed = allowed_lines(ctx.file, &comments);
    if !allowed.is_empty() {
        let lines = LineIndex::new(ctx.text());
        out.retain(|d| {
            let line = lines.line(d.range.start) as usize;
            !allowed
                .iter()
                .any(|(l, ids)| *l == line && ids.iter().any(|id| allows(id, d.rule)))
        });
    }
    if ctx.config.level(UNKNOWN_RULE) != Some(RuleLevel::Off) {
        let severity = match ctx.config.level(UNKNOWN_RULE) {
            Some(RuleLevel::Level(s)) => s,
            _ => Severity::Hint,
        };
        out.extend(unknown_allow_ids(ctx.text(), &comments, severity));
    }
    out.sort_by(|a, b| {
        (a.range.start, a.range.end, a.rule).cmp(&(b.range.start, b.range.end, b.rule))
    });
    out
}

pub use crate::line_index::LineIndex;

// Helpers the rules share.

// Text helpers several rules share.

#[cfg(test)]
mod tests {
    use kernaut_gpu::Arch;
    use kernaut_syntax::SourceFile;

    use super::testing::knowledge;
    use super::{find_word, RuleContext};
    use crate::config::RulesConfig;

    #[test]
    fn every_rule_has_a_doc_block_and_a_summary() {
        for r in super::RULES {
            let doc = r.doc();
            assert!(doc.starts_with(&format!("`{}`: ", r.id)), "{}: {doc}", r.id);
            assert!(doc.contains("```cuda"), "{}: no example", r.id);
            let summary = r.summary();
            assert!(!summary.is_empty() && !summary.contains('\n'), "{}", r.id);
            assert!(!summary.starts_with(&format!("`{}`", r.id)), "{}", r.id);
            // Issue 28: `check --explain` showed `[`crate::model::bank`]`.
            assert!(
                !doc.contains("[`") && !doc.contains("crate::"),
                "{}: {doc}",
                r.id
            );
        }
        assert_eq!(
            super::without_rustdoc_links(
                "the bank model ([`crate::model::bank`]): read as [`Level`], then [`Level::Silent`]."
            ),
            "the bank model: read as `Level`, then `Level::Silent`."
        );
    }

    #[test]
    fn closest_rule_ids() {
        use super::{closest_rule_id, is_allow_id, is_rule_id};
        assert_eq!(closest_rule_id("bank-conflit"), Some("bank-conflict"));
        assert_eq!(
            closest_rule_id("l1-acess-mode"),
            Some("async-copy/l1-access-mode")
        );
        assert_eq!(
            closest_rule_id("warp/legacy-sync-fre"),
            Some("warp/legacy-sync-free-intrinsic")
        );
        assert_eq!(closest_rule_id("asyn-copy"), Some("async-copy"));
        assert_eq!(closest_rule_id("zzz"), None);
        assert!(is_rule_id("resources/spills") && !is_rule_id("async-copy"));
        for id in [
            "all",
            "async-copy",
            "l1-access-mode",
            "bank-conflict",
            "spills",
        ] {
            assert!(is_allow_id(id), "{id}");
        }
        assert!(!is_allow_id("bank-conflit"));
    }

    #[test]
    fn find_word_finds_whole_words_only() {
        let s = "tx_2 = tx2 + ntx; tx += tx;";
        assert_eq!(find_word(s, "tx", 0), Some(18));
        assert_eq!(find_word(s, "tx", 19), Some(24));
        assert_eq!(find_word(s, "tx", 25), None);
        assert_eq!(find_word(s, "tx2", 0), Some(7));
        assert_eq!(find_word("aaa aa", "aa", 0), Some(4));
        assert_eq!(find_word("é tx·tx", "tx", 0), Some(3));
        assert_eq!(find_word("é tx", "tx", 1), None, "not a character boundary");
        assert_eq!(find_word("tx", "txt", 0), None);
        assert_eq!(find_word("a  b", "", 0), Some(2));
        assert_eq!(find_word("a b", "", 0), None);
        assert_eq!(find_word("é", "", 1), None);
    }

    const NESTED: &str = r#"
template <int N>
__global__ void k(float* out, const float* in, int n) {
    __shared__ float t[32];
    int tx = threadIdx.x;
    t[tx] = in[tx];
    if (tx < 16) {
        out[tx] = t[tx];
        for (int i = 0; i < n; ++i) { out[i] += t[i % 32]; }
        out[0] = 1.0f;
    } else if (tx == 20) {
        out[1] = tx > 3 ? t[tx] : t[0];
    } else {
        out[2] = t[1];
    }
    do { out[3] += 1.0f; } while (out[3] < 4.0f);
    switch (tx) { case 0: out[4] = t[2]; break; default: break; }
    struct Local { __device__ float get(const float* p) { if (p) { return p[0]; } return 0.0f; } };
    while (n > 0) { --n; out[5] = t[n % 32]; }
    SCOPE(exit)
    {
        out[7] = t[6];
    };
    for (int j = 0; j < 4; ++j) out[j] = t[j] /* why? */ ? 1.0f : 2.0f;
    if (tx) out[8] = t[7]; else out[9] = t[8];
    auto f = [&](int i) { return t[i] > 0 ? t[i] : 0.0f; };
    out[10] = f(tx) /* c */ ? 1.0f : 0.0f;
    out[6] = N > 2 ? (tx ? t[3] : t[4]) : t[5];
}
__device__ float helper(float x) { return x > 0.0f ? x : -x; }
"#;

    /// The word-by-word test of many names finds the same bodies as searching each body.
    #[test]
    fn bodies_mentioning_many_names() {
        let file = SourceFile::parse(NESTED);
        let config = RulesConfig::default();
        let arch = Arch::parse("sm_90").expect("sm_90");
        let ctx = RuleContext::new(&file, arch, knowledge(), &config);
        let lists: [&[&str]; 3] = [
            &["zz", "yy", "xx", "ww", "vv", "uu", "tt", "ss", "elper"],
            &["zz", "yy", "xx", "ww", "vv", "uu", "tt", "ss", "Loc"],
            &["zz", "yy", "xx", "ww", "vv", "uu", "tt", "ss", "rr"],
        ];
        for names in lists {
            let naive: Vec<_> = ctx
                .facts
                .kernels
                .iter()
                .chain(&ctx.facts.device_functions)
                .filter_map(|f| f.body_range.clone())
                .filter(|b| names.iter().any(|n| NESTED[b.clone()].contains(n)))
                .collect();
            assert_eq!(ctx.bodies_mentioning(names), naive, "{names:?}");
        }
    }

    /// A kernel whose column read of a shared tile conflicts on the banks.
    const COLUMN_READ: &str = "__global__ void column(float* out) {
    __shared__ float tile[32][32];
    tile[threadIdx.x][threadIdx.y] = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x][0];
}
";

    /// A context given its owner's slot fills it and reads the accesses from there (one
    /// copy), and reports what a context computing its own reports.
    #[test]
    fn rules_borrow_the_owners_shared_accesses() {
        let file = SourceFile::parse(COLUMN_READ);
        let config = RulesConfig::default();
        let arch = Arch::parse("sm_90").expect("sm_90");
        let alone = super::check(&RuleContext::new(&file, arch, knowledge(), &config));
        let slot = std::sync::OnceLock::new();
        let ctx = RuleContext::new(&file, arch, knowledge(), &config).with_shared_accesses(&slot);
        let borrowed = super::check(&ctx);
        let kept = slot.get().expect("the rules filled the owner's slot");
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(std::ptr::eq(ctx.shared_accesses(), kept.as_slice()));
        assert!(alone.iter().any(|d| d.rule == "bank-conflict"), "{alone:?}");
        assert_eq!(borrowed, alone);
    }
}
