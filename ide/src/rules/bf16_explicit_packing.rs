//! `half/bf16-explicit-packing`: packed bf16 `__hfma2` written for speed where it cannot
//! pay.
//!
//! Measured on the H200 (`skill-half-precision-math#S2`): packed bf16 (`__nv_bfloat162`)
//! `__hfma2` runs exactly at the packed fp16 rate, 1.62× the scalar rate with 4
//! independent chains per thread and 1.99× with 8, and only in compute-bound code, where
//! each loaded pair feeds many FMAs. The rule fires on a packed bf16 `__hfma2` whose result
//! is stored straight to global memory and whose operand is loaded straight from it
//! (`y[i] = __hfma2(x[i], a2, b2)`, directly or through a local): one FMA per pair moved,
//! so the kernel is bandwidth-bound and the packing buys nothing over scalar code
//! (`pitfall-half-precision-math#P11`). The gain of 16-bit data there is the halved bytes;
//! 16-byte loads (eight values) are what speeds such a kernel up.
//!
//! Packed bf16 math on values kept in registers (an FMA chain, a tile loop), fp16
//! `__half2` code and scalar code stay silent. There is no fix.
//!
//! ```cuda
//! // Flagged: one packed FMA per pair loaded from global memory.
//! y[i] = __hfma2(x[i], a2, b2);
//! // Silent: each loaded pair feeds a chain of FMAs held in registers.
//! __nv_bfloat162 v = x[i];
//! for (int k = 0; k < K; ++k) v = __hfma2(v, m, c);
//! y[i] = v;
//! ```

use kernaut_syntax::short_name;
use kernaut_syntax::CallSite;

use super::{find_word, is_identifier, Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("bf16_explicit_packing.rs"),
    id: "half/bf16-explicit-packing",
    severity: Severity::Hint,
    wiki: &["skill-half-precision-math#S2"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let text = ctx.text();
    if !text.contains("bfloat162") {
        return;
    }
    let bodies = ctx.calls_mentioning(&["__hfma2"]);
    for call in bodies.iter().flat_map(|c| c.iter()) {
        if short_name(&call.callee) != "__hfma2" || call.args.len() != 3 {
            continue;
        }
        let Some(target) = stored_to(text, call) else {
            continue;
        };
        if !global_subscript(ctx, &target, call.range.start) {
            continue;
        }
        let bf16 = |a: &str| operand_is(ctx, a, call.range.start, is_bf162);
        let fp16 = |a: &str| operand_is(ctx, a, call.range.start, is_half2);
        if !call.args.iter().any(|a| bf16(a)) || call.args.iter().any(|a| fp16(a)) {
            continue;
        }
        if !call
            .args
            .iter()
            .any(|a| loaded_from_global(ctx, a, call.range.start))
        {
            continue;
        }
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: RULE.severity,
            range: call.range.clone(),
            message: "packed bf16 `__hfma2` here is one packed FMA per pair loaded from global memory and stored back, so the kernel is bandwidth-bound and the packing buys no speed: on the H200 packed bf16 runs exactly at the packed fp16 rate, 1.62–1.99× scalar, only when each loaded pair feeds many FMAs; speed this up with 16-byte loads (eight bf16 values per access)".to_string(),
            wiki: RULE.wiki[0].to_string(),
            fixes: Vec::new(),
        });
    }
}

fn is_bf162(ty: &str) -> bool {
    words(ty).any(|w| w == "__nv_bfloat162" || w == "nv_bfloat162")
}

fn is_half2(ty: &str) -> bool {
    words(ty).any(|w| w == "__half2" || w == "half2")
}

fn words(ty: &str) -> impl Iterator<Item = &str> {
    ty.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The left side of `target = call;` when the call is the whole right side.
fn stored_to(text: &str, call: &CallSite) -> Option<String> {
    let after = text.get(call.range.end..)?.trim_start();
    if !after.starts_with(';') {
        return None;
    }
    let before = text.get(..call.range.start)?.trim_end();
    let lhs_end = before.strip_suffix('=')?;
    if lhs_end.ends_with(['=', '!', '<', '>', '+', '-', '*', '/']) {
        return None;
    }
    let start = lhs_end.rfind([';', '{', '}', ')']).map_or(0, |i| i + 1);
    let lhs = lhs_end[start..].trim();
    // `y[i]`, possibly after a closing `)` of a loop header already cut off above.
    (lhs.ends_with(']') && !lhs.contains('=')).then(|| lhs.to_string())
}

/// Whether `expr` is `p[i]` (or `*p`) of a pointer parameter of the function: global
/// memory.
fn global_subscript(ctx: &RuleContext, expr: &str, at: usize) -> bool {
    let e = expr.trim();
    let base: String = e
        .trim_start_matches('*')
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let subscripted = e.ends_with(']') || e.starts_with('*');
    subscripted
        && ctx.facts.function_at(at).is_some_and(|f| {
            f.params
                .iter()
                .any(|p| p.name == base && p.ty.contains('*'))
        })
}

/// Whether the operand `arg` is loaded from global memory: a subscript of a pointer
/// parameter, or a local whose only definition is one.
fn loaded_from_global(ctx: &RuleContext, arg: &str, at: usize) -> bool {
    let a = arg.trim();
    if global_subscript(ctx, a, at) {
        return true;
    }
    if !is_identifier(a) {
        return false;
    }
    definition(ctx, a, at).is_some_and(|v| global_subscript(ctx, &v, at))
}

/// Whether the operand's type satisfies `pred`: the type of the pointer a subscript reads,
/// or of the variable named.
fn operand_is(ctx: &RuleContext, arg: &str, at: usize, pred: fn(&str) -> bool) -> bool {
    let base: String = arg
        .trim()
        .trim_start_matches(['*', '&'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if base.is_empty() {
        return false;
    }
    declared_type(ctx, &base, at).is_some_and(|t| pred(&t))
}

/// The declared type of `name` at `at`: a parameter, or the text before the name in its
/// last declaration.
fn declared_type(ctx: &RuleContext, name: &str, at: usize) -> Option<String> {
    let f = ctx.facts.function_at(at)?;
    if let Some(p) = f.params.iter().find(|p| p.name == name) {
        return Some(p.ty.clone());
    }
    let body = f.body_range.clone()?;
    let scope = ctx.text().get(body.start..at)?;
    let mut found = None;
    let mut from = 0;
    while let Some(i) = find_word(scope, name, from) {
        from = i + name.len();
        let line_start = scope[..i].rfind(['\n', ';', '{', '(']).map_or(0, |p| p + 1);
        let head = scope[line_start..i].trim();
        let after = scope[from..].trim_start();
        let declares = !head.is_empty()
            && head
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_:<>*& ".contains(&b))
            && (after.starts_with('=') || after.starts_with(';') || after.starts_with('['));
        if declares {
            found = Some(head.to_string());
        }
    }
    found
}

/// The value of the single definition `name = value;` of a local before `at`.
fn definition(ctx: &RuleContext, name: &str, at: usize) -> Option<String> {
    let f = ctx.facts.function_at(at)?;
    let body = f.body_range.clone()?;
    let scope = ctx.text().get(body.start..body.end)?;
    let mut value = None;
    let mut count = 0;
    let mut from = 0;
    while let Some(i) = find_word(scope, name, from) {
        from = i + name.len();
        let after = scope[from..].trim_start();
        if after.starts_with('=') && !after.starts_with("==") {
            count += 1;
            let start = from + (scope[from..].len() - after.len()) + 1;
            let end = start + scope[start..].find(';')?;
            if body.start + i < at {
                value = Some(scope[start..end].trim().to_string());
            }
        } else if ["+=", "-=", "*=", "/=", "++", "--"]
            .iter()
            .any(|op| after.starts_with(op))
        {
            return None;
        }
    }
    (count == 1).then_some(value).flatten()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_messages, check_no_fix};

    const RULE: &str = "half/bf16-explicit-packing";

    #[test]
    fn one_packed_fma_per_loaded_pair() {
        let fixture = r#"
#include <cuda_bf16.h>
__global__ void axpb(const __nv_bfloat162* __restrict__ x, __nv_bfloat162* __restrict__ y,
                     float a, float b, int n2) {
    const __nv_bfloat162 a2 = __float2bfloat162_rn(a), b2 = __float2bfloat162_rn(b);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += gridDim.x * blockDim.x)
        y[i] = __hfma2(x[i], a2, b2);
            // ^^^^^^^^^^^^^^^^^^^^^ hint: packed bf16 `__hfma2` here is one packed FMA per pair loaded from global memory
}
"#;
        check(RULE, fixture);
        check_no_fix(RULE, fixture);
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                hint: packed bf16 `__hfma2` here is one packed FMA per pair loaded from global memory and stored back, so the kernel is bandwidth-bound and the packing buys no speed: on the H200 packed bf16 runs exactly at the packed fp16 rate, 1.62–1.99× scalar, only when each loaded pair feeds many FMAs; speed this up with 16-byte loads (eight bf16 values per access) (skill-half-precision-math#S2)
            "#]],
        );
    }

    #[test]
    fn through_a_local() {
        check(
            RULE,
            r#"
__global__ void k(const __nv_bfloat162* x, __nv_bfloat162* y, __nv_bfloat162 m, __nv_bfloat162 c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __nv_bfloat162 v = x[i];
    y[i] = __hfma2(v, m, c);
        // ^^^^^^^^^^^^^^^^ hint: packed bf16 `__hfma2` here is one packed FMA
}
"#,
        );
    }

    #[test]
    fn register_chains_fp16_and_local_results_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(const __nv_bfloat162* x, __nv_bfloat162* y, const __half2* hx, __half2* hy,
                  __nv_bfloat162 m, __nv_bfloat162 c, __half2 hm, __half2 hc, int K) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __nv_bfloat162 v = x[i];
    for (int k = 0; k < K; ++k)
        v = __hfma2(v, m, c);
    y[i] = v;
    hy[i] = __hfma2(hx[i], hm, hc);
    __nv_bfloat162 w = __hfma2(x[i], m, c);
    y[i + 1] = __hfma2(w, m, c);
}
"#,
        );
    }
}
