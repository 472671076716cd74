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
//!   `__CUDA_ARCH__ >= 700`: nvcc stops with `identifier "__shfl_down" is undefined`
//!   (in a template, only where something instantiates it).
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

use super::target_guards::{Compiled, Tri};
use super::{thread_dependent_branch, Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
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
    let targets = &ctx.targets.targets;
    if !targets.iter().any(|t| t.major >= 7) {
        return;
    }
    // The project's own names (a compatibility header's `#define __shfl_xor
    // my_shfl_xor`, a device function called `__any`) are not the intrinsics.
    let defined = ctx.own_names();
    let text = ctx.text();
    if !LEGACY.iter().any(|n| text.contains(n))
        && !text.contains("shfl.")
        && !text.contains("vote.")
    {
        return;
    }
    // Which code each target compiles (the `#if`s, `if constexpr` and `<nv/target>`
    // branches, per target); read only when a call is found.
    let compiled = std::cell::OnceCell::new();
    // The first sm_70+ target that surely compiles the call at `offset`. An undeclared
    // `__shfl*` stops the front end in any function it parses; a deprecated vote or PTX
    // fails only where code is emitted, in a kernel or a function a kernel reaches.
    let failing = |offset: usize, emitted_only: bool| -> Option<&kernaut_gpu::Target> {
        let c: &Compiled = compiled.get_or_init(|| Compiled::scan(ctx));
        let surely = |i: usize, t: &kernaut_gpu::Target| {
            let state = if emitted_only {
                c.at(ctx, i, offset)
            } else {
                c.guards.at(i, offset).0
            };
            t.major >= 7 && state == Tri::True
        };
        // A target the build names for certain before one it builds only under a
        // condition it does not decide.
        let mut found = targets.iter().enumerate().filter(|(i, t)| surely(*i, t));
        let first = found.next();
        std::iter::once(first)
            .flatten()
            .chain(found)
            .find(|(_, t)| !ctx.targets.is_conditional(t))
            .or(first)
            .map(|(_, t)| t)
    };
    // Where the only failing target is built under an undecided condition, a hint.
    let severity_for = |t: &kernaut_gpu::Target| {
        if ctx.targets.assumed || ctx.targets.is_conditional(t) {
            Severity::Hint
        } else {
            RULE.severity
        }
    };
    let mut seen = HashSet::default();
    let names = ["__shfl", "__any", "__all", "__ballot", "shfl.", "vote."];
    let bodies = ctx.bodies_mentioning(&names);
    ctx.prefetch_calls(&bodies);
    for body in bodies {
        for call in ctx.calls_in_body(body.start).iter() {
            if call.kind == SymbolKind::Ptx {
                let m = call.callee.as_str();
                let legacy =
                    (m.starts_with("shfl.") || m.starts_with("vote.")) && !m.contains(".sync");
                let target = if legacy {
                    failing(call.range.start, true)
                } else {
                    None
                };
                if let (Some(target), true) = (target, seen.insert(call.range.clone())) {
                    out.push(RuleDiagnostic {
                        rule: RULE.id,
                        severity: severity_for(target),
                        range: call.callee_range.clone(),
                        message: format!(
                            "PTX `{m}` without `.sync` is rejected by ptxas for {target}{} (not supported on .target sm_70 and higher, whose lanes are scheduled independently): use `{}.sync` with a member mask",
                            origin(ctx),
                            m.split('.').next().unwrap_or(m)
                        ),
                        wiki: RULE.wiki[0].to_string(),
                        fixes: Vec::new(),
                    });
                }
                continue;
            }
            let name = call.callee_text.as_str();
            if !LEGACY.contains(&name) || defined.contains(name) || seen.contains(&call.range) {
                continue;
            }
            // In a template nvcc reports an undeclared `__shfl*` only when it
            // instantiates the template (nvcc 13.5 `-arch=sm_80`: `identifier "__shfl" is
            // undefined ... detected during instantiation`, and nothing for a template
            // nothing instantiates, even with arguments that do not depend on it).
            let deferred = name.starts_with("__shfl")
                && ctx
                    .facts
                    .function_at(call.range.start)
                    .is_some_and(|f| !f.template_params.is_empty());
            let Some(target) = failing(call.range.start, !name.starts_with("__shfl") || deferred)
            else {
                continue;
            };
            seen.insert(call.range.clone());
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
                severity: severity_for(target),
                range: call.callee_range.clone(),
                message: if name.starts_with("__shfl") {
                    format!(
                        "`{name}` has no participation mask and is not declared for compute capability 7.0 and newer: nvcc stops with `identifier \"{name}\" is undefined` on {target}{}; use `{name}_sync` with the mask of the lanes that reach it",
                        origin(ctx)
                    )
                } else {
                    format!(
                        "`{name}` has no participation mask and is deprecated: nvcc warns that it is not valid on compute_70 and above, and ptxas rejects the `vote` without `.sync` it becomes on {target}{}; without a mask its result is undefined under independent thread scheduling, so use `{name}_sync` with the mask of the lanes that reach it",
                        origin(ctx)
                    )
                },
                wiki: RULE.wiki[0].to_string(),
                fixes,
            });
        }
    }
}

/// ` (assumed)`, ` (from CMakeLists.txt:4)`, or nothing for a target named alone.
fn origin(ctx: &RuleContext) -> String {
    let set = &*ctx.targets;
    if set.assumed {
        " (assumed: no setting or build file names the targets)".to_string()
    } else if set.origin.is_empty() {
        String::new()
    } else {
        format!(" (from {})", set.origin)
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
__global__ void k(float* p) { p[0] = reduce(p[0]); }
"#,
        );
    }

    /// In a template nvcc reports the undeclared `__shfl` only where it instantiates
    /// the template: a helper template a kernel calls fails, one nothing instantiates
    /// (nor a kernel template nothing launches) does not.
    #[test]
    fn shuffles_in_templates_fail_where_instantiated() {
        check(
            RULE,
            r#"
template <class T>
__device__ T rotate(T v, int src) { return __shfl(v, src); }
                                        // ^^^^^^ error: `__shfl` has no participation mask
template <int N>
__device__ int spare(int v) { return __shfl(v, 3); }
template <class T>
__global__ void never(T* p) { p[threadIdx.x] = __shfl(p[threadIdx.x], 0); }
__global__ void used(float* p) { p[threadIdx.x] = rotate(p[threadIdx.x], 0); }
"#,
        );
    }

    /// Code the preprocessor drops for every target (`#if 0`, the `#else` of a macro
    /// the toolkit defines), and votes in a helper no kernel calls, are not compiled.
    #[test]
    fn code_no_target_compiles_stays_silent() {
        check(
            RULE,
            r#"
__device__ float r(float v) {
#if 0
    return v + __shfl_xor(v, 16, 32);
#else
    return v + __shfl_xor_sync(0xffffffff, v, 16);
#endif
}
__device__ bool unused(float v) { return __any(v > 0.0f); }
__global__ void k(float* p) { p[threadIdx.x] = r(p[threadIdx.x]); }
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
