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
use kernaut_syntax::{CallSite, TextRange};

use super::{find_word, Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
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
    let text = ctx.text();
    let bodies = ctx.calls_mentioning(&["wait_prior", "cp_async_wait"]);
    for call in bodies.iter().flat_map(|c| c.iter()) {
        if TEMPLATE_WAITS.iter().any(|n| is_wait(call, n)) {
            let Some(arg) = template_argument(text, call) else {
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
    let Some((name, why)) = identifiers(count)
        .into_iter()
        .find_map(|n| runtime(ctx, n, arg.start).map(|w| (n.to_string(), w)))
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

/// The range of the template argument after the callee of `call`.
fn template_argument(text: &str, call: &CallSite) -> Option<TextRange> {
    let rest = text.get(call.callee_range.end..call.range.end)?;
    let lead = rest.len() - rest.trim_start().len();
    if !rest[lead..].starts_with('<') {
        return None;
    }
    let open = lead;
    let mut depth = 0i32;
    for (i, b) in rest.bytes().enumerate().skip(open) {
        match b {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => {
                depth -= 1;
                if depth == 0 {
                    let start = call.callee_range.end + open + 1;
                    let end = call.callee_range.end + i;
                    let s = &text[start..end];
                    let l = s.len() - s.trim_start().len();
                    return Some(start + l..start + l + s.trim().len());
                }
            }
            _ => {}
        }
    }
    None
}

/// The plain identifiers of an expression (not members, not qualified names, not
/// `sizeof` or casts).
fn identifiers(s: &str) -> Vec<&str> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &s[start..i];
            let before = s[..start].trim_end();
            let after = s[i..].trim_start();
            let qualified = before.ends_with("::")
                || before.ends_with('.')
                || before.ends_with("->")
                || after.starts_with("::")
                || after.starts_with('(');
            if !qualified && word != "sizeof" {
                out.push(word);
            }
        } else if b.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
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
    if let Some(local) = local_declaration(ctx, name, body.start..at) {
        return local;
    }
    if function.params.iter().any(|p| p.name == name) {
        return Some(Runtime::Param {
            function: function.name.clone(),
        });
    }
    None
}

/// The last declaration of the integer local `name` in `scope`: `None` when there is none,
/// `Some(None)` when it is a constant.
fn local_declaration(ctx: &RuleContext, name: &str, scope: TextRange) -> Option<Option<Runtime>> {
    let text = ctx.text();
    let s = text.get(scope.clone())?;
    let mut found = None;
    let mut from = 0;
    while let Some(i) = find_word(s, name, from) {
        from = i + name.len();
        let line_start = s[..i].rfind(['\n', ';', '{', '(']).map_or(0, |p| p + 1);
        let head = s[line_start..i].trim();
        let words: Vec<&str> = head.split_whitespace().collect();
        let Some(last) = words.last() else {
            continue;
        };
        if !INT_TYPES.contains(last) {
            continue;
        }
        let after = s[from..].trim_start();
        if !(after.starts_with('=') || after.starts_with('{') || after.starts_with(';')) {
            continue;
        }
        found = Some((
            scope.start + line_start,
            head.to_string(),
            scope.start + from,
        ));
    }
    let (decl_start, head, name_end) = found?;
    let words: Vec<&str> = head.split_whitespace().collect();
    if words.contains(&"constexpr") {
        return Some(None);
    }
    let rest = &text[name_end..];
    let init_end = name_end + rest.find(';').unwrap_or(rest.len());
    let init = text[name_end..init_end]
        .trim()
        .trim_start_matches('=')
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .trim();
    let constant_init = !init.is_empty() && ctx.facts.fold_text(init, decl_start).is_some();
    if words.contains(&"const") && constant_init {
        return Some(None);
    }
    let function_end = ctx
        .facts
        .function_at(decl_start)
        .map_or(text.len(), |f| f.range.end);
    let fix = (constant_init && !reassigned(text.get(init_end..function_end).unwrap_or(""), name))
        .then(|| {
            let head_start =
                decl_start + (text[decl_start..].len() - text[decl_start..].trim_start().len());
            match text[head_start..].find("const ") {
                Some(c) if c < name_end - head_start => {
                    TextEdit::replace(head_start + c..head_start + c + 5, "constexpr")
                }
                _ => TextEdit::insert(head_start, "constexpr "),
            }
        });
    Some(Some(Runtime::Local { constant_init, fix }))
}

/// Whether `s` assigns to `name` (`name = `, `name += `, `++name`, `name++`, `&name`).
fn reassigned(s: &str, name: &str) -> bool {
    let mut from = 0;
    while let Some(i) = find_word(s, name, from) {
        from = i + name.len();
        let after = s[from..].trim_start();
        let before = s[..i].trim_end();
        let assigns = (after.starts_with('=') && !after.starts_with("=="))
            || [
                "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--",
            ]
            .iter()
            .any(|op| after.starts_with(op))
            || before.ends_with("++")
            || before.ends_with("--")
            || (before.ends_with('&') && !before.ends_with("&&"));
        if assigns {
            return true;
        }
    }
    false
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
