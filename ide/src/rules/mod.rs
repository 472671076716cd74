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

use std::sync::atomic::{AtomicUsize, Ordering};

use kernaut_syntax::SourceFile;

use crate::config::{RuleLevel, Severity};

pub(crate) mod host;
mod ids;
mod incremental;
pub use ids::{
    closest_rule_id, config_problems, find_rule, is_allow_id, is_rule_id, rule_ids, UNKNOWN_RULE,
};

mod allow;
pub(crate) use allow::{allowed_lines, allows, unknown_allow_ids};

mod edit;
pub use crate::diagnostic::{Fix, RuleDiagnostic, TextEdit};
pub use edit::apply_edits;
pub(crate) use edit::{indent_at, line_start, statement_end};

pub(crate) use kernaut_sema::context::{
    async_ops, barriers, is_identifier, target_guards, thread_dependent_branch, type_aliases,
};
pub use kernaut_sema::context::{RuleContext, RuleSettings};

mod bank_conflict;
mod barrier_in_divergent_branch;
mod bf16_explicit_packing;
mod commit_in_divergent_branch;
mod dynamic_over_48k;
mod fp16_accumulator;
mod implicit_warp_synchronous;
mod invalid_launch;
mod l1_access_mode;
mod legacy_sync_free_intrinsic;
mod missing_sync_after_wait;
mod over_capacity;
mod over_unroll;
mod requires_newer_sm;
mod runtime_stage_count;
mod single_thread_tma_branch;
pub(crate) mod strided_global_access;
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
    invalid_launch::RULE,
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

/// Files of at least this many bytes have their rules run on several threads (on a
/// small file, starting a thread costs more than it saves).
const PARALLEL_RULES_BYTES: usize = 64 * 1024;

/// Findings inside a kernel template that nothing instantiates, or a device template of a
/// file with no kernels that no other file uses ([`RuleContext::device_template_emitted`]),
/// become hints that say so:
/// nvcc emits code for a template only where it is instantiated (a launch anywhere in the
/// project, an explicit instantiation, `&k<4>` handed to the runtime; see
/// [`RuleContext::emitted`]). A header's templates are instantiated by whichever file
/// includes it: there, only where the project's files are in view and none of them
/// launches the template.
fn not_instantiated_as_hints(ctx: &RuleContext, found: &mut [RuleDiagnostic]) {
    if !found.iter().any(|d| d.severity != Severity::Hint) {
        return;
    }
    let source = ctx.is_source_file();
    if !source && ctx.model.host.is_none() {
        return;
    }
    let mut verdicts: Vec<(usize, bool)> = Vec::new();
    let guards: std::sync::OnceLock<target_guards::TargetGuards> = std::sync::OnceLock::new();
    // A `#define` line some target compiles.
    let compiled = |at: usize| {
        guards
            .get_or_init(|| target_guards::TargetGuards::scan_default(ctx))
            .anywhere(at)
            .0
            != target_guards::Tri::False
    };
    for d in found.iter_mut().filter(|d| d.severity != Severity::Hint) {
        let Some(f) = ctx
            .facts
            .function_at(d.range.start)
            .filter(|f| !f.template_params.is_empty())
        else {
            continue;
        };
        let emitted = match verdicts.iter().find(|(start, _)| *start == f.range.start) {
            Some(&(_, e)) => e,
            None => {
                // A device function template of a file with no kernels: compiled where
                // another file instantiates it.
                let e = if f.is_kernel {
                    ctx.emitted(f)
                } else {
                    ctx.device_template_emitted(f, &compiled)
                };
                verdicts.push((f.range.start, e));
                e
            }
        };
        if emitted {
            continue;
        }
        d.severity = Severity::Hint;
        let name = kernaut_syntax::short_name(&f.name);
        let why = if !f.is_kernel {
            format!("no file of the project uses the template `{name}` where it is compiled, and nvcc emits code for a template only where it is instantiated")
        } else {
            let whose = if source {
                "no code this file compiles"
            } else {
                "no file of the project"
            };
            format!("{whose} launches or instantiates the template `{name}`, and nvcc emits code for a kernel template only where it is instantiated")
        };
        d.message.push_str(&format!(" (a hint only: {why})"));
    }
}

/// The 1-based line of the first merge-conflict marker of `text`: a line that starts with
/// `<<<<<<< ` or `>>>>>>> `, or is `=======`, with one of the other two kinds present.
fn conflict_marker_line(text: &str) -> Option<usize> {
    if !text.contains("\n=======") {
        return None;
    }
    let mut first = None;
    let mut kinds = [false; 3];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end();
        let kind = if line.starts_with("<<<<<<< ") || line == "<<<<<<<" {
            0
        } else if line == "=======" {
            1
        } else if line.starts_with(">>>>>>> ") || line == ">>>>>>>" {
            2
        } else {
            continue;
        };
        kinds[kind] = true;
        first.get_or_insert(n + 1);
    }
    (kinds[1] && (kinds[0] || kinds[2]))
        .then_some(first)
        .flatten()
}

/// The figures of the bank and sector models hold for the memory of compute capability
/// 2.0 and newer (32 banks serving the whole warp) and 3.0 and newer (global loads in
/// 32-byte sectors, not cached in L1's 128-byte lines as on 2.x): where every target the
/// build names is older, a finding of those rules is a hint that says which model it
/// counts with.
fn older_hardware_as_hints(ctx: &RuleContext, rule: &str, found: &mut [RuleDiagnostic]) {
    let (newer, model) = match rule {
        "bank-conflict" => (
            2,
            "the degree is counted for 32 banks serving the whole warp, as on compute capability 2.0 and newer; compute capability 1.x has 16 banks and serves each half-warp on its own",
        ),
        "coalescing/strided-global-access" => (
            3,
            "the sectors are counted as compute capability 3.0 and newer fetch global memory, 32 bytes at a time; compute capability 1.x coalesces by half-warp and 2.x caches global loads in L1 in 128-byte lines",
        ),
        _ => return,
    };
    let targets = &ctx.targets.targets;
    if ctx.targets.assumed || targets.is_empty() || targets.iter().any(|t| t.major >= newer) {
        return;
    }
    let names: Vec<String> = targets.iter().map(ToString::to_string).collect();
    for d in found.iter_mut() {
        let only = if d.severity == Severity::Hint {
            ""
        } else {
            "a hint only: "
        };
        d.severity = Severity::Hint;
        d.message.push_str(&format!(
            " ({only}{model}, and the build targets only {})",
            names.join(", ")
        ));
    }
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
        // A file the build does not compile: what a finding says holds for no binary,
        // which every finding says, a hint for another reason too. A file that holds
        // merge-conflict markers compiles nowhere until they are resolved.
        let conflict = conflict_marker_line(ctx.text()).map(|line| {
            format!("it holds merge-conflict markers (line {line}), which no compiler accepts until they are resolved")
        });
        if let Some(why) = ctx.targets.not_built.as_ref().or(conflict.as_ref()) {
            for d in &mut found {
                let only = if d.severity == Severity::Hint {
                    ""
                } else {
                    "a hint only: "
                };
                d.severity = Severity::Hint;
                d.message.push_str(&format!(
                    " ({only}the build does not compile this file: {why})"
                ));
            }
        }
        not_instantiated_as_hints(ctx, &mut found);
        older_hardware_as_hints(ctx, rule.id, &mut found);
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
    preprocessor_conditions(ctx, &mut out);
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

/// Findings in code that the preprocessor compiles for no target of the build are
/// dropped, and those under a condition neither the file nor its build decides are
/// hints that state it: a warning or error must hold for what the build compiles. A
/// macro nothing defines is taken as not defined where that compiles the line (`#if
/// !defined CUDA_DISABLER`), since the build as written does so; a line compiled only
/// where a `-D` defines it (`#if LANES == 4`), or under a toolkit-version test, is a
/// hint. Where the targets are assumed, code the assumed target does not compile is a
/// hint too.
fn preprocessor_conditions(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    if !out.iter().any(|d| d.severity > Severity::Hint)
        || !(ctx.text().contains("#if") || ctx.text().contains("constexpr"))
    {
        return;
    }
    let mut guards = target_guards::TargetGuards::of(ctx);
    guards.decide_by_launches(ctx);
    let default = std::cell::OnceCell::new();
    out.retain_mut(|d| {
        if d.severity == Severity::Hint {
            return true;
        }
        // nvcc compiles an `if constexpr` branch only in the instantiations that take
        // it: none of the launched ones does.
        if guards.discarded_by_launches(d.range.start) {
            return false;
        }
        let (state, guard) = guards.anywhere(d.range.start);
        let guard = guard.unwrap_or_default().trim();
        // Undecided only through a macro nothing defines: the build as written (no
        // `-D` for it) compiles the line.
        let as_written = || {
            default
                .get_or_init(|| target_guards::TargetGuards::scan_default(ctx))
                .anywhere(d.range.start)
                .0
                == target_guards::Tri::True
        };
        match state {
            target_guards::Tri::True => true,
            target_guards::Tri::Unknown if as_written() => true,
            target_guards::Tri::False if !ctx.targets.assumed => false,
            target_guards::Tri::False => {
                d.severity = Severity::Hint;
                d.message.push_str(&format!(
                    " (a hint only: this line is compiled only where `{guard}` holds, which the assumed {} does not)",
                    ctx.targets.targets.first().map(|t| t.to_string()).unwrap_or_default()
                ));
                true
            }
            target_guards::Tri::Unknown => {
                d.severity = Severity::Hint;
                d.message.push_str(&format!(
                    " (a hint only: this line is compiled only where `{guard}` holds, which neither the file nor its build decides)"
                ));
                true
            }
        }
    });
}

pub use crate::line_index::LineIndex;

// Helpers the rules share.

// Text helpers several rules share.

#[cfg(test)]
mod tests {
    use kernaut_gpu::Arch;
    use kernaut_syntax::SourceFile;

    use super::testing::knowledge;
    use kernaut_syntax::lex::find_word;

    use super::RuleContext;
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

    /// A file with merge-conflict markers compiles nowhere: each finding is a hint that
    /// names the first marker's line.
    #[test]
    fn merge_conflict_markers_make_findings_hints() {
        super::testing::check_messages(
            "bank-conflict",
            r#"
__global__ void k(float* out) {
    __shared__ float t[32][32];
<<<<<<< HEAD
    t[threadIdx.x][0] = out[threadIdx.x];
=======
    t[threadIdx.x][1] = out[threadIdx.x];
>>>>>>> feature
    __syncthreads();
    out[threadIdx.x] = t[0][threadIdx.x];
}
void run(float* o) { k<<<1, 32>>>(o); }
"#,
            expect_test::expect![[r#"
                hint: 32-way bank conflict: this store to `t` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank; the lanes' stride comes from `threadIdx.x` in the row index (a hint only: the build does not compile this file: it holds merge-conflict markers (line 3), which no compiler accepts until they are resolved) (pitfall-bank-conflict#P1)
            "#]],
        );
        assert_eq!(super::conflict_marker_line("a\n=======\nb\n"), None);
        assert_eq!(
            super::conflict_marker_line("a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> x\n"),
            Some(2)
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
