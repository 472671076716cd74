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
//! The types are also seen through the file's aliases (`typedef __nv_bfloat162 bf2;`), and
//! the pointers through `reinterpret_cast<__nv_bfloat162*>(p)` (or a C cast) of a pointer
//! parameter, directly or through a local pointer defined once.
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
use kernaut_syntax::{CallSite, TextRange};

use super::{is_identifier, Rule, RuleContext, RuleDiagnostic};
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
    let aliases = super::type_aliases::type_aliases(ctx.file);
    let named = |ty: &str, names: &[&str]| {
        words(ty).any(|w| {
            names.contains(&w)
                || aliases
                    .iter()
                    .any(|(a, t)| a == w && names.contains(&t.as_str()))
        })
    };
    let is_bf162 = |ty: &str| named(ty, &["__nv_bfloat162", "nv_bfloat162"]);
    let is_half2 = |ty: &str| named(ty, &["__half2", "half2"]);
    let bodies = ctx.calls_mentioning(&["__hfma2"]);
    for call in bodies.iter().flat_map(|c| c.iter()) {
        if short_name(&call.callee) != "__hfma2" || call.args.len() != 3 {
            continue;
        }
        let Some(target) = stored_to(ctx, call) else {
            continue;
        };
        if !global_subscript(ctx, &target, call.range.start) {
            continue;
        }
        let bf16 = |a: &str| operand_is(ctx, a, call.range.start, &is_bf162);
        let fp16 = |a: &str| operand_is(ctx, a, call.range.start, &is_half2);
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

fn words(ty: &str) -> impl Iterator<Item = &str> {
    ty.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The left side of `target = call;` when the call is the whole right side.
fn stored_to(ctx: &RuleContext, call: &CallSite) -> Option<String> {
    let target = ctx.file.assignment_target(&call.range)?;
    Some(ctx.text().get(target)?.trim().to_string())
}

/// Whether `expr` is `p[i]` (or `*p`) of a pointer parameter of the function (global
/// memory), of a cast of one (`reinterpret_cast<__nv_bfloat162*>(p)[i]`), or of a local
/// pointer defined once as one.
fn global_subscript(ctx: &RuleContext, expr: &str, at: usize) -> bool {
    let e = expr.trim();
    let base = if let Some(rest) = e.strip_prefix('*') {
        rest
    } else if let Some(open) = e.strip_suffix(']').and_then(last_subscript) {
        &e[..open]
    } else {
        return false;
    };
    global_pointer(ctx, base, at, 0)
}

/// Where the last top-level `[` of `e` (a subscript without its closing `]`) is.
fn last_subscript(e: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in e.char_indices().rev() {
        match c {
            ']' | ')' => depth += 1,
            '(' => depth -= 1,
            '[' if depth == 0 => return Some(i),
            '[' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Whether the pointer expression `e` points into global memory: a pointer parameter,
/// a cast of one, one plus an offset, or a local defined once as one of these.
fn global_pointer(ctx: &RuleContext, e: &str, at: usize, depth: usize) -> bool {
    let e = strip_parens(e.trim());
    if depth > 2 || e.is_empty() {
        return false;
    }
    if let Some((_, inner)) = cast_of(e) {
        return global_pointer(ctx, inner, at, depth + 1);
    }
    let base: String = e
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let rest = e[base.len()..].trim_start();
    if base.is_empty() || !(rest.is_empty() || rest.starts_with(['+', '-'])) {
        return false;
    }
    let Some(f) = ctx.facts.function_at(at) else {
        return false;
    };
    if let Some(p) = f.params.iter().find(|p| p.name == base) {
        return p.ty.contains('*');
    }
    definition(ctx, &base, at).is_some_and(|v| global_pointer(ctx, &v, at, depth + 1))
}

/// `e` without the parentheses that wrap all of it.
fn strip_parens(mut e: &str) -> &str {
    while let Some(inner) = e.strip_prefix('(').and_then(|i| i.strip_suffix(')')) {
        // Only when the first `(` closes at the end: not `(a) + (b)`.
        let mut depth = 0i32;
        let whole = inner.chars().all(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            depth >= 0
        });
        if !whole {
            break;
        }
        e = inner.trim();
    }
    e
}

/// A pointer cast at the start of `e`: `reinterpret_cast<T*>(inner)` or `(T*)inner`, as
/// `(T, inner)`.
fn cast_of(e: &str) -> Option<(&str, &str)> {
    let e = e.trim();
    if let Some(rest) = e
        .strip_prefix("reinterpret_cast")
        .or_else(|| e.strip_prefix("static_cast"))
    {
        let rest = rest.trim_start().strip_prefix('<')?;
        let close = rest.find('>')?;
        let ty = rest[..close].trim();
        let inner = rest[close + 1..].trim_start();
        let inner = strip_parens(inner);
        return ty.ends_with('*').then_some((ty, inner));
    }
    let rest = e.strip_prefix('(')?;
    let close = rest.find(')')?;
    let ty = rest[..close].trim();
    let is_type = ty.ends_with('*')
        && ty
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_:* ".contains(&b));
    is_type.then(|| (ty, rest[close + 1..].trim()))
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
fn operand_is(ctx: &RuleContext, arg: &str, at: usize, pred: &dyn Fn(&str) -> bool) -> bool {
    // `reinterpret_cast<T*>(p)[i]`: the cast's type.
    let pointer = arg
        .trim()
        .strip_suffix(']')
        .and_then(|e| Some(&e[..last_subscript(e)?]))
        .unwrap_or(arg);
    if let Some((ty, _)) = cast_of(strip_parens(pointer.trim())) {
        return pred(ty);
    }
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

/// The declared type of `name` at `at`: a parameter's or a local's, found through the
/// scopes around `at`.
fn declared_type(ctx: &RuleContext, name: &str, at: usize) -> Option<String> {
    ctx.file.variable_named(name, at).map(|v| v.ty)
}

/// The value of the single definition of the local `name` visible at `at` (its
/// initialiser or its one plain assignment), when that definition comes before `at` and
/// nothing else writes it.
fn definition(ctx: &RuleContext, name: &str, at: usize) -> Option<String> {
    let v = ctx.file.variable_named(name, at)?;
    if v.is_param {
        return None;
    }
    let mut definitions: Vec<TextRange> = v.init.iter().cloned().collect();
    for u in ctx.file.uses_of(&v) {
        match &u.write {
            Some(w) if w.op == "=" && u.operand == u.range => {
                definitions.push(w.value.clone()?);
            }
            Some(_) => return None,
            None if u.address_of => return None,
            None => {}
        }
    }
    match definitions.as_slice() {
        [value] if value.start < at => Some(ctx.text()[value.clone()].trim().to_string()),
        _ => None,
    }
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
    fn an_assignment_in_a_comment_is_not_a_second_definition() {
        // The text scan counted the commented `v = …` as a second definition of `v` and
        // stayed silent.
        check(
            RULE,
            r#"
__global__ void k(const __nv_bfloat162* x, __nv_bfloat162* y, __nv_bfloat162 m, __nv_bfloat162 c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __nv_bfloat162 v = x[i];
    // v = __hmul2(v, m); was slower
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

    #[test]
    fn through_aliases_and_pointer_casts() {
        check(
            RULE,
            r#"
#include <cuda_bf16.h>
typedef __nv_bfloat162 bf2;
__global__ void axpb(const __nv_bfloat16* x, __nv_bfloat16* y, bf2 a2, bf2 b2, int n2) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += gridDim.x * blockDim.x)
        reinterpret_cast<bf2*>(y)[i] = __hfma2(reinterpret_cast<const bf2*>(x)[i], a2, b2);
                                    // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: packed bf16 `__hfma2` here is one packed FMA per pair loaded from global memory
}
__global__ void scale(const __nv_bfloat16* x, __nv_bfloat16* y, bf2 m, bf2 c, int n2) {
    const bf2* x2 = reinterpret_cast<const bf2*>(x);
    bf2* y2 = (bf2*)(y);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) y2[i] = __hfma2(x2[i], m, c);
                     // ^^^^^^^^^^^^^^^^^^^^ hint: packed bf16 `__hfma2` here is one packed FMA per pair loaded from global memory
}
"#,
        );
    }

    #[test]
    fn casts_to_half2_shared_tiles_and_fp16_aliases_stay_silent() {
        check(
            RULE,
            r#"
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using h2 = __half2;
__global__ void k(const __half* x, __half* y, h2 m, h2 c, __nv_bfloat162 bm, __nv_bfloat162 bc) {
    __shared__ __nv_bfloat16 tile[512];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    reinterpret_cast<h2*>(y)[i] = __hfma2(reinterpret_cast<const h2*>(x)[i], m, c);
    __nv_bfloat162* t2 = reinterpret_cast<__nv_bfloat162*>(tile);
    t2[threadIdx.x] = __hfma2(t2[threadIdx.x], bm, bc);
}
"#,
        );
    }
}
