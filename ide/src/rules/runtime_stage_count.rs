//! `async-copy/runtime-stage-count`: the wait count of an async-copy pipeline is not a
//! compile-time constant.
//!
//! `cp.async.wait_group N` takes an immediate (`pitfall-async-copy#P3`). The template
//! forms (`cuda::pipeline_consumer_wait_prior<N>`, `cooperative_groups::wait_prior<N>`, a
//! `cp_async_wait<N>` helper) do not compile with a runtime `N` (an error), and
//! `__pipeline_wait_prior(N)` compiles to a `switch` over 0–7 around every wait (a
//! warning).
//!
//! The rule names the variable that makes the count runtime: a parameter of the enclosing
//! function, or a local variable that is neither `constexpr` nor `const` with a constant
//! initialiser. Template parameters, macros, `constexpr` and constant `const` variables,
//! and names the file does not declare (a member of a traits class) stay silent. A local
//! with a constant initialiser only matters for the template forms: for
//! `__pipeline_wait_prior` the optimiser folds it, and it folds a `__device__` function's
//! parameter too once the function is inlined, so the primitive is checked in kernels only.
//!
//! The fix makes the variable `constexpr` when its initialiser is constant and nothing
//! assigns it later.
//!
//! ```cuda
//! // Before: `stages` is an ordinary variable, and the template does not compile.
//! int stages = 3;
//! cuda::pipeline_consumer_wait_prior<stages - 1>(pipe);
//! // After
//! constexpr int stages = 3;
//! cuda::pipeline_consumer_wait_prior<stages - 1>(pipe);
//! ```

use kernaut_syntax::short_name;
use kernaut_syntax::{CallSite, TextRange, Variable};

use super::{Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("runtime_stage_count.rs"),
    id: "async-copy/runtime-stage-count",
    severity: Severity::Warning,
    wiki: &["pitfall-async-copy#P3"],
    run,
};

/// Waits whose count is a template argument.
const TEMPLATE_WAITS: &[&str] = &[
    "pipeline_consumer_wait_prior",
    "wait_prior",
    "cp_async_wait",
];
/// Waits whose count is a function argument.
const ARGUMENT_WAITS: &[&str] = &["__pipeline_wait_prior"];

/// Type words a local integer declaration may start with. `auto` is not one: CuTe's
/// `auto K = size<3>(tensor);` is a compile-time `Int<N>`.
const INT_TYPES: &[&str] = &[
    "int", "unsigned", "long", "short", "size_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
    "uint", "char",
];

/// Why a name in the count is not a constant.
enum Runtime {
    /// A parameter of the enclosing function.
    Param { function: String },
    /// A local variable; `fix` is the edit that makes it `constexpr`, when safe.
    Local {
        constant_init: bool,
        fix: Option<TextEdit>,
    },
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let bodies = ctx.calls_mentioning(&["wait_prior", "cp_async_wait"]);
    for call in bodies.iter().flat_map(|c| c.iter()) {
        if TEMPLATE_WAITS.iter().any(|n| is_wait(call, n)) {
            let Some(arg) = ctx
                .file
                .template_argument_ranges(&call.callee_range)
                .first()
                .cloned()
            else {
                continue;
            };
            check_count(ctx, call, arg, true, out);
        } else if ARGUMENT_WAITS.iter().any(|n| is_wait(call, n)) {
            let Some(arg) = call.arg_ranges.first().cloned() else {
                continue;
            };
            check_count(ctx, call, arg, false, out);
        }
    }
}

/// Whether `call` is the wait `name` and not another function ending in it.
fn is_wait(call: &CallSite, name: &str) -> bool {
    let last = short_name(&call.callee);
    last == name
}

fn check_count(
    ctx: &RuleContext,
    call: &CallSite,
    arg: TextRange,
    template: bool,
    out: &mut Vec<RuleDiagnostic>,
) {
    let text = ctx.text();
    let count = &text[arg.clone()];
    if ctx.facts.fold_text(count, arg.start).is_some() {
        return;
    }
    // A `__device__` function is inlined, and a count that is constant at its call sites
    // folds there; only a kernel's values are surely runtime for the primitive.
    let in_kernel = ctx
        .facts
        .function_at(arg.start)
        .is_some_and(|f| f.is_kernel);
    if !template && !in_kernel {
        return;
    }
    let Some((name, why)) = ctx
        .file
        .names_in(&arg)
        .into_iter()
        .find_map(|(n, r)| runtime(ctx, &n, r.start).map(|w| (n, w)))
    else {
        return;
    };
    let (what, fixes) = match why {
        Runtime::Param { function } => (format!("a runtime parameter of `{function}`"), None),
        Runtime::Local {
            constant_init: true,
            ..
        } if !template => return,
        Runtime::Local { constant_init, fix } => (
            if constant_init {
                "a variable that is not `constexpr`".to_string()
            } else {
                "a variable computed at run time".to_string()
            },
            fix.map(|edit| Fix {
                safe: false,
                title: format!("Make `{name}` constexpr"),
                edits: vec![edit],
            }),
        ),
    };
    let (severity, message) = if template {
        (
            Severity::Error,
            format!(
                "the wait count `{count}` of `{}` is not a compile-time constant (`{name}` is {what}), so it does not compile: `cp.async.wait_group` takes an immediate; make the stage count `constexpr` or a template parameter and dispatch on the host",
                call.callee_text
            ),
        )
    } else {
        (
            RULE.severity,
            format!(
                "the wait count `{count}` of `__pipeline_wait_prior` is not a compile-time constant (`{name}` is {what}): the call becomes a switch over 0–7 around every wait, and counts above 8 wait as for 8; make the stage count `constexpr` or a template parameter"
            ),
        )
    };
    out.push(RuleDiagnostic {
        rule: RULE.id,
        severity,
        range: arg,
        message,
        wiki: RULE.wiki[0].to_string(),
        fixes: fixes.into_iter().collect(),
    });
}

/// Why `name`, used at `at`, is a runtime value; `None` when it is a constant or unknown.
fn runtime(ctx: &RuleContext, name: &str, at: usize) -> Option<Runtime> {
    if ctx.facts.constant_value(name, at).is_some() || ctx.facts.defines_macro(name) {
        return None;
    }
    let function = ctx.facts.function_at(at)?;
    if function.template_params.iter().any(|p| p.name == name) {
        return None;
    }
    let body = function.body_range.clone()?;
    // A call outside the body (broken code, a default argument) has no locals to read.
    if !body.contains(&at) {
        return None;
    }
    let v = ctx.file.variable_at(at)?;
    if v.is_param {
        return Some(Runtime::Param {
            function: function.name.clone(),
        });
    }
    local(ctx, &v)
}

/// Why the integer local `v` is a runtime value; `None` when it is a constant or not an
/// integer.
fn local(ctx: &RuleContext, v: &Variable) -> Option<Runtime> {
    let last = v.ty.split_whitespace().last()?;
    if !INT_TYPES.contains(&last) || v.is_constexpr {
        return None;
    }
    let text = ctx.text();
    let constant_init = v.init.as_ref().is_some_and(|init| {
        ctx.facts
            .fold_text(&text[init.clone()], v.declaration.start)
            .is_some()
    });
    if v.const_range.is_some() && constant_init {
        return None;
    }
    let written = ctx
        .file
        .uses_of(v)
        .iter()
        .any(|u| u.write.is_some() || u.address_of);
    let fix = (constant_init && !written).then(|| match &v.const_range {
        Some(c) => TextEdit::replace(c.clone(), "constexpr"),
        None => TextEdit::insert(v.declaration.start, "constexpr "),
    });
    Some(Runtime::Local { constant_init, fix })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages, check_no_fix};

    const RULE: &str = "async-copy/runtime-stage-count";

    #[test]
    fn template_wait_with_a_runtime_parameter() {
        let fixture = r#"
#include <cuda/pipeline>
__global__ void k(const float* in, float* out, int stages) {
    auto pipe = cuda::make_pipeline();
    cuda::pipeline_consumer_wait_prior<stages - 1>(pipe);
                                    // ^^^^^^^^^^ error: the wait count `stages - 1` of `cuda::pipeline_consumer_wait_prior` is not a compile-time constant
}
"#;
        check(RULE, fixture);
        check_no_fix(RULE, fixture);
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                error: the wait count `stages - 1` of `cuda::pipeline_consumer_wait_prior` is not a compile-time constant (`stages` is a runtime parameter of `k`), so it does not compile: `cp.async.wait_group` takes an immediate; make the stage count `constexpr` or a template parameter and dispatch on the host (pitfall-async-copy#P3)
            "#]],
        );
    }

    #[test]
    fn primitive_wait_with_a_runtime_count() {
        let fixture = r#"
__global__ void k(const float* in, float* out, int n) {
    int stages = n > 4096 ? 4 : 2;
    __pipeline_wait_prior(stages - 1);
                       // ^^^^^^^^^^ warning: the wait count `stages - 1` of `__pipeline_wait_prior` is not a compile-time constant (`stages` is a variable computed at run time)
}
"#;
        check(RULE, fixture);
        check_no_fix(RULE, fixture);
    }

    #[test]
    fn constants_template_parameters_and_unknown_names_stay_silent() {
        check(
            RULE,
            r#"
#define STAGES 3
constexpr int kStages = 4;
template <int S, typename Traits>
__global__ void k(const float* in, float* out, int n) {
    const int stages = 3;
    int local = 2;
    auto pipe = cuda::make_pipeline();
    cuda::pipeline_consumer_wait_prior<S - 1>(pipe);
    cuda::pipeline_consumer_wait_prior<STAGES - 1>(pipe);
    cuda::pipeline_consumer_wait_prior<kStages - 2>(pipe);
    cuda::pipeline_consumer_wait_prior<stages - 1>(pipe);
    cuda::pipeline_consumer_wait_prior<Traits::kStages - 1>(pipe);
    auto K_PIPE_MAX = size<3>(tAsA);
    cp_async_wait<K_PIPE_MAX - 2>();
    cp_async_wait<0>();
    __pipeline_wait_prior(S - 1);
    __pipeline_wait_prior(local - 1);
    __pipeline_wait_prior(0);
}
__device__ void wait_stage(int n) { __pipeline_wait_prior(n); }
"#,
        );
    }

    #[test]
    fn fix_makes_the_local_constexpr() {
        let fixture = r#"
template <int N> __device__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }
__global__ void k(const float* in, float* out) {
    int stages = 3;
    cp_async_wait<stages - 2>();
}
"#;
        check_fix(
            RULE,
            fixture,
            0,
            expect![[r#"
                // Make `stages` constexpr
                template <int N> __device__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }
                __global__ void k(const float* in, float* out) {
                    constexpr int stages = 3;
                    cp_async_wait<stages - 2>();
                }
            "#]],
        );
    }

    #[test]
    fn no_fix_when_the_local_is_reassigned() {
        check_no_fix(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int n) {
    int stages = 2;
    if (n > 4096) stages = 4;
    cuda::pipeline_consumer_wait_prior<stages - 1>(pipe);
}
"#,
        );
    }

    #[test]
    fn declarations_in_comments_and_other_blocks_are_not_the_variable() {
        // The text scan took the commented declaration for a local (with a fix editing
        // the comment) and the sibling block's `stages` for the one the wait reads.
        let fixture = r#"
__global__ void k(const float* in, float* out, int stages) {
    // int stages = 3; (the old fixed count)
    if (in) { int stages = 4; out[0] = stages; }
    auto pipe = cuda::make_pipeline();
    cuda::pipeline_consumer_wait_prior<stages - 1>(pipe);
                                    // ^^^^^^^^^^ error: the wait count `stages - 1` of `cuda::pipeline_consumer_wait_prior` is not a compile-time constant (`stages` is a runtime parameter of `k`)
}
"#;
        check(RULE, fixture);
        check_no_fix(RULE, fixture);
    }

    #[test]
    fn an_assignment_in_a_comment_does_not_block_the_fix() {
        let fixture = r#"
__global__ void k(const float* in, float* out) {
    int stages = 3;
    // stages = 4; would suit sm_90
    cp_async_wait<stages - 2>();
}
"#;
        check_fix(
            RULE,
            fixture,
            0,
            expect![[r#"
                // Make `stages` constexpr
                __global__ void k(const float* in, float* out) {
                    constexpr int stages = 3;
                    // stages = 4; would suit sm_90
                    cp_async_wait<stages - 2>();
                }
            "#]],
        );
    }

    #[test]
    fn regression_wait_inside_a_parameter_list_does_not_panic() {
        check(
            RULE,
            r#"
__device__ unsigned char box(cp_async_wait<n>();unsigned char ul, int n) {
    return ul;
}
"#,
        );
    }
}
