//! `async-copy/single-thread-tma-branch`: a bulk (TMA) copy issued inside a branch that
//! selects one thread by its index, such as `if (threadIdx.x == 0)`.
//!
//! Bulk copies (`cp.async.bulk*`, SASS `UBLKCP` / `UTMALDG`) take their operands in
//! uniform registers. In a thread-index branch the compiler cannot prove that one lane
//! is active, so it wraps the copy in a loop that serves each active lane in turn
//! (`pitfall-async-copy#P5`). The rule looks at the innermost `if` around a bulk copy:
//! `cp.async.bulk*` in inline PTX (with a plain mbarrier or not), the `cuda::ptx` and
//! `cuda::device` bulk-copy functions, and, on sm_90 and newer, `cuda::memcpy_async` of
//! an `aligned_size_t` size with a `cuda::barrier` (on the default target only in a
//! file that uses other sm_90 features). It fires when that `if`'s lowered condition
//! compares the thread index for equality (`threadIdx.x == 0`, `lane == 0`, `!tid`,
//! `block.thread_rank() == 0`, `tile.thread_rank() == 0` for a tile of known size) and
//! the thread side differs between the lanes of a warp under the one valuation (the
//! launch's block, else its samples). A copy already inside
//! `cooperative_groups::invoke_one`, under an `elect`-ed lane (a call the lowering does
//! not value), or in a warp-granular branch (`if (warp == 0)`, `threadIdx.x < 32`,
//! `threadIdx.y == 0` with whole-warp rows) stays silent, as does `cuda::memcpy_async`
//! with a pipeline (per-thread LDGSTS). A bulk store from shared to global memory
//! completed by a bulk group (`cp.async.bulk[.tensor.Nd].global.shared::cta.bulk_group`)
//! writes the same bytes however often it runs: ptxas issues it once (one `UBLKCP.G.S` /
//! `UTMASTG`, no loop) where its operands are the same in every lane, so it counts only
//! where an operand is known to differ between the lanes the branch lets through.
//!
//! The fix wraps the statement (the syntax's statement around the call or its `asm`) in
//! `cooperative_groups::invoke_one(coalesced_threads(), …)` and adds
//! `#include <cooperative_groups.h>` when the file lacks it.
//!
//! ```cuda
//! // Before
//! if (threadIdx.x == 0)
//!     cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
//! // After
//! if (threadIdx.x == 0)
//!     cooperative_groups::invoke_one(cooperative_groups::coalesced_threads(), [&] { cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar); });
//! ```

use kernaut_gpu::expr::{Valuation, SAMPLES};
use kernaut_syntax::short_name;
use kernaut_syntax::{CallSite, EnclosingKind, GuardCondition, IndexExpr, SymbolKind, TextRange};

use super::barriers::certain_block;
use super::{Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("single_thread_tma_branch.rs"),
    id: "async-copy/single-thread-tma-branch",
    severity: Severity::Warning,
    wiki: &["pitfall-async-copy#P5"],
    run,
};

/// Functions that always issue a bulk copy (the last segment of the callee).
const BULK_FUNCTIONS: &[&str] = &[
    "cp_async_bulk",
    "cp_async_bulk_tensor",
    "memcpy_async_tx",
    "cp_async_bulk_global_to_shared",
    "cp_async_bulk_tensor_1d_global_to_shared",
    "cp_async_bulk_tensor_2d_global_to_shared",
    "cp_async_bulk_tensor_3d_global_to_shared",
    "cp_async_bulk_tensor_4d_global_to_shared",
    "cp_async_bulk_tensor_5d_global_to_shared",
];

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    // Bulk copies exist from sm_90 on: for a build whose every target is older, the call
    // does not compile (`arch/requires-newer-sm` says so) and has no code to loop over.
    if !ctx.targets.assumed
        && !ctx.targets.targets.is_empty()
        && ctx.targets.targets.iter().all(|t| t.major < 9)
    {
        return;
    }
    let bodies = ctx.calls_mentioning(&["cp.async.bulk", "memcpy_async", "cp_async_bulk"]);
    let all: Vec<&CallSite> = bodies.iter().flat_map(|c| c.iter()).collect();
    let elected: Vec<TextRange> = all
        .iter()
        .filter(|c| {
            let last = short_name(&c.callee);
            last == "invoke_one" || last == "invoke_one_broadcast"
        })
        .map(|c| c.range.clone())
        .collect();
    let calls: Vec<&CallSite> = all
        .iter()
        .copied()
        .filter(|c| is_bulk_copy(ctx, c, &all))
        .collect();
    for call in calls {
        if elected
            .iter()
            .any(|r| r.start <= call.range.start && call.range.end <= r.end)
        {
            continue;
        }
        let Some((condition, lowered)) = single_thread_branch(ctx, call.range.start) else {
            continue;
        };
        // A bulk store is issued once where its operands are the same in every lane.
        if issue(ctx, call) == Issue::OnceWhereUniform && !operands_differ(ctx, call, &lowered) {
            continue;
        }
        let what = if call.kind == SymbolKind::Ptx {
            format!("`{}`", call.callee)
        } else {
            format!("the bulk copy `{}`", call.callee_text)
        };
        let message = format!(
            "{what} is issued under `if ({condition})`: bulk copies take their operands in uniform registers and the compiler cannot prove one lane runs this branch, so it wraps the copy in a loop over the active lanes; elect the lane with `cooperative_groups::invoke_one` (or `elect.sync`)"
        );
        let fixes = fix(ctx, call).into_iter().collect();
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: RULE.severity,
            range: call.callee_range.clone(),
            message,
            wiki: RULE.wiki[0].to_string(),
            fixes,
        });
    }
}

/// Whether `call` issues a bulk (TMA) copy (`all`: the calls of its function).
fn is_bulk_copy(ctx: &RuleContext, call: &CallSite, all: &[&CallSite]) -> bool {
    if call.kind == SymbolKind::Ptx {
        return call.callee.starts_with("cp.async.bulk")
            && !call.callee.starts_with("cp.async.bulk.commit_group")
            && !call.callee.starts_with("cp.async.bulk.wait_group")
            && !call.callee.starts_with("cp.async.bulk.prefetch");
    }
    let last = short_name(&call.callee);
    if BULK_FUNCTIONS.contains(&last) {
        return true;
    }
    // `cuda::memcpy_async(dst, src, cuda::aligned_size_t<N>(bytes), barrier)` takes the
    // bulk-copy path on sm_90.
    last == "memcpy_async"
        && targets_sm90(ctx)
        && call.arg_ranges.len() == 4
        && all.iter().any(|c| {
            short_name(&c.callee) == "aligned_size_t"
                && call.arg_ranges[2].start <= c.range.start
                && c.range.end <= call.arg_ranges[2].end
        })
        && call.arg_ranges.get(3).is_some_and(|a| is_barrier(ctx, a))
}

/// How ptxas issues a bulk copy in a branch where it cannot prove that one lane is active.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Issue {
    /// Once per active lane, in a loop: a copy that signals an mbarrier
    /// (`mbarrier::complete_tx::bytes`, SASS `UBLKCP.S.G` / `UTMALDG` under `ELECT` and
    /// `BRA.U.ANY`) counts its bytes once per issue, so every lane's copy is issued.
    PerLane,
    /// Once, where its operands are the same in every lane: a store from shared to global
    /// memory completed by a bulk group (`cp.async.bulk.global.shared::cta.bulk_group`,
    /// `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group`, `cuda::ptx` with
    /// `space_global` as its destination) writes the same bytes however often it runs, so
    /// ptxas issues one `UBLKCP.G.S` / `UTMASTG` with no loop (checked with nvcc 13,
    /// sm_90). With operands that may differ between lanes it loops like a load.
    OnceWhereUniform,
}

/// How `call` (a bulk copy) is issued ([`Issue`]).
fn issue(ctx: &RuleContext, call: &CallSite) -> Issue {
    let store = if call.kind == SymbolKind::Ptx {
        // `cp.async.bulk[.tensor.Nd].global.shared::cta.bulk_group…`: the destination's
        // state space follows the copy's shape.
        let mut parts = call.callee.split('.').skip(3);
        let mut space = parts.next();
        if space == Some("tensor") {
            parts.next();
            space = parts.next();
        }
        space == Some("global") && call.callee.split('.').any(|p| p == "bulk_group")
    } else {
        let last = short_name(&call.callee);
        (last == "cp_async_bulk" || last == "cp_async_bulk_tensor")
            && call
                .arg_ranges
                .first()
                .and_then(|a| ctx.text().get(a.clone()))
                .is_some_and(|a| a.contains("space_global"))
    };
    if store {
        Issue::OnceWhereUniform
    } else {
        Issue::PerLane
    }
}

/// Whether an operand of the bulk store `call` is known to differ between the lanes that
/// run it, under the branch condition `branch`: lowered for uniformity, with each
/// `threadIdx.x == c` (or a lane expression `== c`) the branch tests taken at `c`, as
/// ptxas propagates it (`dst + threadIdx.x * 16` under `threadIdx.x == 0` is one
/// address). An operand the model cannot value, or a named PTX operand, says nothing.
fn operands_differ(ctx: &RuleContext, call: &CallSite, branch: &GuardCondition) -> bool {
    let operands: Vec<TextRange> = if call.kind == SymbolKind::Ptx {
        let Some(stmt) = ctx
            .file
            .asm_statements(&call.range)
            .into_iter()
            .find(|s| s.range.start <= call.range.start && call.range.end <= s.range.end)
        else {
            return false;
        };
        let mut used = Vec::new();
        for arg in &call.args {
            let mut rest = arg.as_str();
            while let Some(i) = rest.find('%') {
                rest = &rest[i + 1..];
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let Ok(n) = digits.parse::<usize>() else {
                    return false;
                };
                let Some(r) = stmt.operands.get(n) else {
                    return false;
                };
                used.push(r.clone());
            }
        }
        used
    } else {
        call.arg_ranges.iter().skip(2).cloned().collect()
    };
    // The equalities every lane of the branch meets.
    let mut fixed: Vec<(&IndexExpr, &IndexExpr)> = Vec::new();
    let mut top = vec![branch];
    while let Some(c) = top.pop() {
        match c {
            GuardCondition::And(all) => top.extend(all),
            GuardCondition::Compare(cmp) if cmp.op == "==" => {
                if cmp.left.depends_on_thread() && !cmp.right.depends_on_thread() {
                    fixed.push((&cmp.left, &cmp.right));
                } else if cmp.right.depends_on_thread() && !cmp.left.depends_on_thread() {
                    fixed.push((&cmp.right, &cmp.left));
                }
            }
            _ => {}
        }
    }
    let block = certain_block(ctx, call.range.start);
    let mut differs = false;
    for r in operands {
        let Some(lowered) = ctx.file.uniformity_condition(&r, &[], block) else {
            return false;
        };
        for leaf in lowered.leaves() {
            let sides: Vec<&IndexExpr> = match leaf {
                GuardCondition::Compare(cmp) => vec![&cmp.left, &cmp.right],
                GuardCondition::Value(e) => vec![e],
                _ => return false,
            };
            for e in sides {
                let e = fixed
                    .iter()
                    .fold(e.clone(), |e, (from, to)| replace(&e, from, to));
                if e.unknown_reason().is_some() {
                    return false;
                }
                differs |= e.depends_on_thread();
            }
        }
    }
    differs
}

/// `e` with every part equal to `from` replaced by `to`.
fn replace(e: &IndexExpr, from: &IndexExpr, to: &IndexExpr) -> IndexExpr {
    if e == from {
        return to.clone();
    }
    match e {
        IndexExpr::Binary(a, op, b) => {
            IndexExpr::binary(replace(a, from, to), *op, replace(b, from, to))
        }
        other => other.clone(),
    }
}

/// Whether the file is compiled for sm_90 or newer: the configured target, or, on the
/// default target, a file that uses sm_90 features itself.
fn targets_sm90(ctx: &RuleContext) -> bool {
    if ctx.arch_configured {
        return ctx.arch.at_least(9, 0);
    }
    let text = ctx.text();
    [
        "cp.async.bulk",
        "__cluster_dims__",
        "memcpy_async_tx",
        "sm_90",
        "SM90",
        ">= 900",
    ]
    .iter()
    .any(|m| text.contains(m))
}

/// Whether the argument at `arg` names a `cuda::barrier` (`bar`, `&bar`, `bars[i]`): the
/// declared type of the first variable it names mentions `barrier`.
fn is_barrier(ctx: &RuleContext, arg: &TextRange) -> bool {
    ctx.file.names_in(arg).first().is_some_and(|(name, at)| {
        ctx.file
            .variable_named(name, at.start)
            .is_some_and(|v| v.ty.contains("barrier"))
    })
}

/// The condition of the innermost `if` around `offset` when it selects threads by an
/// equality test on the thread index; `None` otherwise. The test is read from the lowered
/// condition (`SourceFile::guard_condition`): a comparison `==` between a side that reads
/// the thread (`threadIdx.x`, `block.thread_rank()`, `tile.thread_rank()`, a local alias
/// of them) and one that does not, or `!tid`, where the thread side differs between the
/// lanes of a warp under the one valuation (a warp index `threadIdx.x / 32 == 0` does
/// not). A side the lowering does not know (`elect_one_sync()`) is no such test.
fn single_thread_branch(ctx: &RuleContext, offset: usize) -> Option<(String, GuardCondition)> {
    for e in ctx.enclosing(offset).iter() {
        match &e.kind {
            EnclosingKind::If {
                condition,
                condition_range,
                in_else,
                ..
            } => {
                if *in_else {
                    return None;
                }
                let lowered = ctx.file.guard_condition(condition_range)?;
                let block =
                    certain_block(ctx, offset).map_or([None; 3], |b| b.map(|d| Some(i64::from(d))));
                return selects_lanes(&lowered, block).then(|| (condition.to_string(), lowered));
            }
            EnclosingKind::Function { .. } => return None,
            _ => {}
        }
    }
    None
}

/// Whether `c` holds an equality test that picks lanes of a warp by their thread index
/// (`block`: the block every launch gives, where known).
fn selects_lanes(c: &GuardCondition, block: [Option<i64>; 3]) -> bool {
    let lane_level = |e: &IndexExpr| {
        e.unknown_reason().is_none() && e.depends_on_thread() && differs_in_a_warp(e, block)
    };
    let known_uniform = |e: &IndexExpr| e.unknown_reason().is_none() && !e.depends_on_thread();
    match c {
        GuardCondition::Compare(cmp) => {
            cmp.op == "=="
                && ((lane_level(&cmp.left) && known_uniform(&cmp.right))
                    || (lane_level(&cmp.right) && known_uniform(&cmp.left)))
        }
        GuardCondition::Not(inner) => match &**inner {
            GuardCondition::Value(e) => lane_level(e),
            other => selects_lanes(other, block),
        },
        GuardCondition::And(all) | GuardCondition::Or(all) => {
            all.iter().any(|c| selects_lanes(c, block))
        }
        GuardCondition::Value(_) => false,
    }
}

/// Whether `e` takes more than one value over the lanes of warp 0 of `block`, for some
/// sample of what the one valuation takes where nothing fixes it (the block's width,
/// uniforms).
fn differs_in_a_warp(e: &IndexExpr, block: [Option<i64>; 3]) -> bool {
    (0..SAMPLES).any(|sample| {
        let v = Valuation {
            sample,
            ..Valuation::warp0(block)
        };
        v.lanes(e).is_some_and(|l| l.iter().any(|x| *x != l[0]))
    })
}

/// The fix: the statement wrapped in `invoke_one`, and the include when it is missing.
fn fix(ctx: &RuleContext, call: &CallSite) -> Option<Fix> {
    let text = ctx.text();
    // The statement the call (or the `asm` statement the PTX instruction is in) makes.
    let TextRange { start, end } = ctx.file.statement_at(&call.range)?;
    let statement = text.get(start..end)?;
    let ns = if text.contains("namespace cg = cooperative_groups") {
        "cg"
    } else {
        "cooperative_groups"
    };
    let mut edits = Vec::new();
    if !text.contains("<cooperative_groups.h>") {
        let at = text.match_indices("#include").last().map_or(0, |(i, _)| {
            text[i..].find('\n').map_or(text.len(), |n| i + n + 1)
        });
        edits.push(TextEdit::insert(at, "#include <cooperative_groups.h>\n"));
    }
    edits.push(TextEdit::replace(
        start..end,
        format!("{ns}::invoke_one({ns}::coalesced_threads(), [&] {{ {statement} }});"),
    ));
    Some(Fix {
        safe: false,
        title: "Elect the issuing lane with cooperative_groups::invoke_one".to_string(),
        edits,
    })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages};

    const RULE: &str = "async-copy/single-thread-tma-branch";

    #[test]
    fn memcpy_async_with_a_barrier_under_thread_zero() {
        let fixture = r#"
#include <cuda/barrier>
__global__ void k(const float* gmem, int bytes) {
    __shared__ alignas(16) float smem[1024];
    #pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
     // ^^^^^^^^^^^^^^^^^^ warning: the bulk copy `cuda::memcpy_async` is issued under `if (threadIdx.x == 0)`
    bar.arrive_and_wait();
}
"#;
        check(RULE, fixture);
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                warning: the bulk copy `cuda::memcpy_async` is issued under `if (threadIdx.x == 0)`: bulk copies take their operands in uniform registers and the compiler cannot prove one lane runs this branch, so it wraps the copy in a loop over the active lanes; elect the lane with `cooperative_groups::invoke_one` (or `elect.sync`) (pitfall-async-copy#P5)
            "#]],
        );
    }

    /// A build for sm_89 alone has no bulk copy to loop over: the call does not compile
    /// there, which `arch/requires-newer-sm` reports.
    #[test]
    fn a_build_older_than_sm_90_has_no_bulk_copy() {
        let kernel = |arch: &str| {
            format!(
                r#"
//- /main.cu arch:{arch}
__global__ void k(const void* src, unsigned dst, unsigned bytes, unsigned bar) {{
    if (threadIdx.x == 0)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}}
"#
            )
        };
        check(RULE, &kernel("sm_89"));
        check_messages(
            RULE,
            &kernel("sm_90"),
            expect![[r#"
                warning: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` is issued under `if (threadIdx.x == 0)`: bulk copies take their operands in uniform registers and the compiler cannot prove one lane runs this branch, so it wraps the copy in a loop over the active lanes; elect the lane with `cooperative_groups::invoke_one` (or `elect.sync`) (pitfall-async-copy#P5)
            "#]],
        );
    }

    #[test]
    fn ptx_bulk_copy_with_a_plain_mbarrier() {
        check(
            RULE,
            r#"
__global__ void k(const void* src, unsigned bytes) {
    __shared__ alignas(128) unsigned char buf[4096];
    __shared__ unsigned long long mbar;
    unsigned dst = (unsigned)__cvta_generic_to_shared(buf);
    unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` is issued under `if (threadIdx.x == 0)`
                     :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
    }
}
"#,
        );
    }

    #[test]
    fn elected_lanes_pipelines_old_targets_and_warp_branches_stay_silent() {
        check(
            RULE,
            r#"
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>
namespace cg = cooperative_groups;
__global__ void k(const float* gmem, int bytes) {
    __shared__ alignas(16) float smem[1024];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto pipe = cuda::make_pipeline();
    if (threadIdx.x < 32)
        cg::invoke_one(cg::coalesced_threads(), [&] {
            cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
        });
    if (threadIdx.x / 32 == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
    if (threadIdx.x == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), pipe);
    if (threadIdx.x == 0)
        cuda::memcpy_async(smem, gmem, bytes, bar);
}
"#,
        );
        check(
            RULE,
            r#"
//- /k.cu arch:sm_80
__global__ void k(const float* gmem, int bytes) {
    __shared__ alignas(16) float smem[1024];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
}
"#,
        );
    }

    #[test]
    fn a_bulk_group_store_is_looped_only_with_operands_that_differ() {
        // Stores from shared to global memory completed by a bulk group: with operands
        // the same in every lane (`threadIdx.x` fixed by the branch's own test counts),
        // ptxas issues one `UBLKCP.G.S` / `UTMASTG`; an address that differs between the
        // lanes a `% 32 == 0` branch lets through is served lane by lane.
        check(
            RULE,
            r#"
__global__ void k(char* dst, const void* src, const void* map, int x, int bytes) {
    __shared__ alignas(128) unsigned char stage[4096];
    __shared__ unsigned long long mbar;
    unsigned sa = (unsigned)__cvta_generic_to_shared(stage);
    unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
    char* out = dst + (long long)blockIdx.x * bytes;
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     :: "l"(out), "r"(sa), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                     :: "l"(map), "r"(sa), "r"(x), "r"(0) : "memory");
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     :: "l"(out + threadIdx.x * 16), "r"(sa), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.commit_group;");
    }
    if (threadIdx.x % 32 == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                   // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: `cp.async.bulk.global.shared::cta.bulk_group` is issued under `if (threadIdx.x % 32 == 0)`
                     :: "l"(out + threadIdx.x * 16), "r"(sa), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` is issued under `if (threadIdx.x % 32 == 0)`
                     :: "r"(sa), "l"(src), "r"(bytes), "r"(bar) : "memory");
    }
}
"#,
        );
    }

    #[test]
    fn fix_wraps_the_copy_in_invoke_one() {
        check_fix(
            RULE,
            r#"
#include <cuda/barrier>
__global__ void k(const float* gmem, int bytes) {
    __shared__ alignas(16) float smem[1024];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
}
"#,
            0,
            expect![[r#"
                // Elect the issuing lane with cooperative_groups::invoke_one
                #include <cuda/barrier>
                #include <cooperative_groups.h>
                __global__ void k(const float* gmem, int bytes) {
                    __shared__ alignas(16) float smem[1024];
                    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
                    if (threadIdx.x == 0)
                        cooperative_groups::invoke_one(cooperative_groups::coalesced_threads(), [&] { cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar); });
                }
            "#]],
        );
    }

    #[test]
    fn fix_wraps_only_the_statement_of_the_copy() {
        // In a block after other statements, a barrier from an array, a comment that
        // holds `asm` and `;` before it: the statement is the syntax's.
        check_fix(
            RULE,
            r#"
#include <cooperative_groups.h>
#include <cuda/barrier>
__global__ void k(const float* gmem, int bytes) {
    __shared__ alignas(16) float smem[1024];
    __shared__ cuda::barrier<cuda::thread_scope_block> bars[2];
    if (threadIdx.x == 0) {
        int stage = 1; /* not asm; */
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bars[stage]);
    }
}
"#,
            0,
            expect![[r#"
                // Elect the issuing lane with cooperative_groups::invoke_one
                #include <cooperative_groups.h>
                #include <cuda/barrier>
                __global__ void k(const float* gmem, int bytes) {
                    __shared__ alignas(16) float smem[1024];
                    __shared__ cuda::barrier<cuda::thread_scope_block> bars[2];
                    if (threadIdx.x == 0) {
                        int stage = 1; /* not asm; */
                        cooperative_groups::invoke_one(cooperative_groups::coalesced_threads(), [&] { cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bars[stage]); });
                    }
                }
            "#]],
        );
    }

    #[test]
    fn fix_wraps_an_asm_statement() {
        check_fix(
            RULE,
            r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(const void* src, unsigned dst, unsigned bar, unsigned bytes) {
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
    }
}
"#,
            0,
            expect![[r#"
                // Elect the issuing lane with cooperative_groups::invoke_one
                #include <cooperative_groups.h>
                namespace cg = cooperative_groups;
                __global__ void k(const void* src, unsigned dst, unsigned bar, unsigned bytes) {
                    if (threadIdx.x == 0) {
                        cg::invoke_one(cg::coalesced_threads(), [&] { asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                                     :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory"); });
                    }
                }
            "#]],
        );
    }

    #[test]
    fn thread_rank_tests_are_read_from_the_lowered_condition() {
        // `thread_rank()` of the block lowers to the linear thread index and a tile's to
        // it modulo the tile size: each `== 0` selects one lane. A tile of a size the
        // file does not fix, a meta group and a warp index stay silent.
        check(
            RULE,
            r#"
#include <cooperative_groups.h>
#include <cuda/barrier>
namespace cg = cooperative_groups;
__global__ void k(const float* gmem, int bytes, int n) {
    __shared__ alignas(16) float smem[1024];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    auto some = cg::tiled_partition(block, n);
    if (block.thread_rank() == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
     // ^^^^^^^^^^^^^^^^^^ warning: the bulk copy `cuda::memcpy_async` is issued under `if (block.thread_rank() == 0)`
    if (cg::this_thread_block().thread_rank() == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
     // ^^^^^^^^^^^^^^^^^^ warning: the bulk copy `cuda::memcpy_async` is issued under `if (cg::this_thread_block().thread_rank() == 0)`
    if (0 == tile.thread_rank())
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
     // ^^^^^^^^^^^^^^^^^^ warning: the bulk copy `cuda::memcpy_async` is issued under `if (0 == tile.thread_rank())`
    if (some.thread_rank() == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
    if (tile.meta_group_rank() == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
    if (block.thread_rank() / 32 == 1)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
    bar.arrive_and_wait();
}
"#,
        );
    }

    #[test]
    fn a_row_test_selects_lanes_only_in_blocks_narrower_than_a_warp() {
        // `threadIdx.y == 0` is one value per warp when rows are whole warps (the
        // assumption without a launch); 16-wide blocks put two rows in a warp.
        let kernel = r#"
#include <cuda/barrier>
__global__ void k(const float* gmem, int bytes) {
    __shared__ alignas(16) float smem[1024];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.y == 0)
        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
    bar.arrive_and_wait();
}
"#;
        check(RULE, kernel);
        check(
            RULE,
            &format!(
                "{}{}",
                kernel.replace(
                    "        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);\n",
                    "        cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);\n     // ^^^^^^^^^^^^^^^^^^ warning: the bulk copy `cuda::memcpy_async` is issued under `if (threadIdx.y == 0)`\n"
                ),
                "void launch(const float* g, int b) { k<<<1, dim3(16, 16)>>>(g, b); }\n"
            ),
        );
    }
}
