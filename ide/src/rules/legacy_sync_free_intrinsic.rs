//! `warp/legacy-sync-free-intrinsic`: `__shfl`, `__shfl_up`, `__shfl_down`, `__shfl_xor`,
//! `__any`, `__all`, `__ballot` (and PTX `shfl`/`vote` without `.sync`) on sm_70 or newer.
//!
//! The mask-free warp intrinsics were deprecated in CUDA 9; with independent thread
//! scheduling (compute capability 7.0 and newer) the lanes of a warp are not guaranteed to
//! be converged, so a call without a participation mask has no defined result
//! (`pitfall-warp-primitives#P1`). What the toolkit does differs, and the messages say it
//! (checked with nvcc 13.5, `-arch=sm_90` and `-arch=sm_75`):
//!
//! * `__shfl`, `__shfl_up`, `__shfl_down`, `__shfl_xor` are not declared for
//!   `__CUDA_ARCH__ >= 700`: nvcc stops with `identifier "__shfl_down" is undefined`.
//! * `__any`, `__all`, `__ballot` are still declared, deprecated: nvcc warns (#1444-D,
//!   "not valid on compute_70 and above") and lowers them to `vote` without `.sync`, which
//!   ptxas then rejects for an sm_70+ target ("not supported on .target sm_70 and higher
//!   from PTX ISA version 6.4").
//! * PTX `shfl`/`vote` without `.sync` in inline assembly: the same ptxas error.
//!
//! All three stop the build for an sm_70+ target, hence errors. Calls inside an `#if` on
//! `__CUDA_ARCH__` or `CUDART_VERSION`, inside a branch of an `NV_IF_TARGET`-style macro
//! whose query names an SM (`NV_IF_ELSE_TARGET(NV_PROVIDES_SM_70, (...), (...))`), and
//! names the file defines itself (a compatibility macro), stay silent.
//!
//! The fix calls the `_sync` form with the full mask; when not every lane reaches the
//! call, the mask must name the lanes that do (`#P2`). It is marked safe (`kernaut-lsp
//! check --fix` applies it) only where no branch on the thread index surrounds the call:
//! there the full mask is what the mask-free form meant.
//!
//! ```cuda
//! // Before
//! v += __shfl_down(v, 16);
//! // After
//! v += __shfl_down_sync(0xffffffff, v, 16);
//! ```

use kernaut_syntax::FxHashSet as HashSet;

use kernaut_syntax::SymbolKind;

use super::{
    arch_guarded_ranges, thread_dependent_branch, Fix, Rule, RuleContext, RuleDiagnostic, TextEdit,
};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("legacy_sync_free_intrinsic.rs"),
    id: "warp/legacy-sync-free-intrinsic",
    severity: Severity::Error,
    wiki: &["pitfall-warp-primitives#P1"],
    run,
};

const LEGACY: &[&str] = &[
    "__shfl",
    "__shfl_up",
    "__shfl_down",
    "__shfl_xor",
    "__any",
    "__all",
    "__ballot",
];

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    if ctx.arch.cc.major() < 7 {
        return;
    }
    let defined: HashSet<&str> = ctx
        .facts
        .device_functions
        .iter()
        .map(|f| f.name.as_str())
        .chain(ctx.facts.macros.iter().map(String::as_str))
        .collect();
    let text = ctx.text();
    if !LEGACY.iter().any(|n| text.contains(n))
        && !text.contains("shfl.")
        && !text.contains("vote.")
    {
        return;
    }
    let mut guarded = arch_guarded_ranges(text);
    guarded.extend(super::target_guards::sm_dispatch_branches(text));
    let mut seen = HashSet::default();
    let names = ["__shfl", "__any", "__all", "__ballot", "shfl.", "vote."];
    let bodies = ctx.bodies_mentioning(&names);
    ctx.prefetch_calls(&bodies);
    for body in bodies {
        for call in ctx.calls_in_body(body.start).iter() {
            if call.kind == SymbolKind::Ptx {
                let m = call.callee.as_str();
                let legacy = (m.starts_with("shfl.") || m.starts_with("vote."))
                    && !m.contains(".sync")
                    && !guarded.iter().any(|g| g.contains(&call.range.start));
                if legacy && seen.insert(call.range.clone()) {
                    out.push(RuleDiagnostic {
                        rule: RULE.id,
                        severity: RULE.severity,
                        range: call.callee_range.clone(),
                        message: format!(
                            "PTX `{m}` without `.sync` is rejected by ptxas for {} (not supported on .target sm_70 and higher, whose lanes are scheduled independently): use `{}.sync` with a member mask",
                            ctx.arch,
                            m.split('.').next().unwrap_or(m)
                        ),
                        wiki: RULE.wiki[0].to_string(),
                        fixes: Vec::new(),
                    });
                }
                continue;
            }
            let name = call.callee_text.as_str();
            if !LEGACY.contains(&name)
                || defined.contains(name)
                || !seen.insert(call.range.clone())
                || guarded.iter().any(|g| g.contains(&call.range.start))
            {
                continue;
            }
            let mut fixes = Vec::new();
            if let Some(first) = call.arg_ranges.first() {
                // The full mask is what the mask-free form meant where the whole warp
                // reaches the call; inside a branch on the thread index it is not (`#P2`).
                let safe = thread_dependent_branch(ctx, call.range.start).is_none();
                fixes.push(Fix {
                    safe,
                    title: format!("Use `{name}_sync` with the full mask"),
                    edits: vec![
                        TextEdit::replace(call.callee_range.clone(), format!("{name}_sync")),
                        TextEdit::insert(first.start, "0xffffffff, "),
                    ],
                });
            }
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity: RULE.severity,
                range: call.callee_range.clone(),
                message: if name.starts_with("__shfl") {
                    format!(
                        "`{name}` has no participation mask and is not declared for compute capability 7.0 and newer: nvcc stops with `identifier \"{name}\" is undefined` on {}; use `{name}_sync` with the mask of the lanes that reach it",
                        ctx.arch
                    )
                } else {
                    format!(
                        "`{name}` has no participation mask and is deprecated: nvcc warns that it is not valid on compute_70 and above, and ptxas rejects the `vote` without `.sync` it becomes on {}; without a mask its result is undefined under independent thread scheduling, so use `{name}_sync` with the mask of the lanes that reach it",
                        ctx.arch
                    )
                },
                wiki: RULE.wiki[0].to_string(),
                fixes,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix};

    const RULE: &str = "warp/legacy-sync-free-intrinsic";

    #[test]
    fn mask_free_shuffles_and_votes() {
        check(
            RULE,
            r#"
__device__ float reduce(float v) {
    v += __shfl_down(v, 16);
      // ^^^^^^^^^^^ error: `__shfl_down` has no participation mask and is not declared for compute capability 7.0 and newer: nvcc stops with `identifier "__shfl_down" is undefined` on sm_90
    if (__any(v > 0.0f)) v = __shfl(v, 0);
     // ^^^^^ error: `__any` has no participation mask and is deprecated: nvcc warns that it is not valid on compute_70 and above, and ptxas rejects
                          // ^^^^^^ error: `__shfl` has no participation mask
    asm("shfl.down.b32 %0, %0, 1, 0x1f;" : "+f"(v));
      // ^^^^^^^^^^^^^ error: PTX `shfl.down.b32` without `.sync` is rejected by ptxas for sm_90
    asm("shfl.sync.down.b32 %0, %0, 1, 0x1f, 0xffffffff;" : "+f"(v));
    return v;
}
"#,
        );
    }

    #[test]
    fn sync_forms_old_targets_guards_and_user_macros_stay_silent() {
        check(
            RULE,
            r#"
#define __shfl_xor(v, m) __shfl_xor_sync(0xffffffff, v, m)
__device__ float reduce(float v) {
    v += __shfl_down_sync(0xffffffff, v, 16);
    v += __shfl_xor(v, 1);
#if CUDART_VERSION < 9000
    v += __shfl_up(v, 1);
#endif
    return v;
}
"#,
        );
        check(
            RULE,
            r#"
//- /main.cu arch:sm_61
__device__ float f(float v) { return __shfl_down(v, 1); }
"#,
        );
    }

    #[test]
    fn fix_adds_the_full_mask() {
        check_fix(
            RULE,
            r#"
__device__ float reduce(float v) {
    return v + __shfl_xor(v, 16);
}
"#,
            0,
            expect![[r#"
                // Use `__shfl_xor_sync` with the full mask
                __device__ float reduce(float v) {
                    return v + __shfl_xor_sync(0xffffffff, v, 16);
                }
            "#]],
        );
    }

    #[test]
    fn per_sm_target_macro_branches_stay_silent_a_device_only_branch_does_not() {
        check(
            RULE,
            r#"
__device__ float reduce(float v) {
    NV_IF_ELSE_TARGET(NV_PROVIDES_SM_70,
        (v += __shfl_down_sync(0xffffffff, v, 16);),
        (v += __shfl_down(v, 16);));
    NV_IF_TARGET(NV_IS_DEVICE, (v += __shfl_xor(v, 1);));
                                  // ^^^^^^^^^^ error: `__shfl_xor` has no participation mask
    return v;
}
"#,
        );
    }
}
