//! `ilp/over-unroll`: `#pragma unroll N` with N above 16 on a loop with a large body.
//!
//! Unrolling multiplies code size and register live ranges; beyond the ILP the latency
//! needs it buys only the loop overhead (`pitfall-ilp#P4`: on the H200 probe a 4-chain FMA
//! loop gained 5% from 16× to 64×, a gain a larger body loses again). The rule fires when
//! the factor is above 16, or a bare `#pragma unroll` fully unrolls a loop of more than 64
//! known iterations, and the body holds at least 8 statements. A factor at or above the
//! loop's bound is a full unroll and is judged like a bare pragma (so `#pragma unroll 32`
//! on a 32-trip loop is as silent as `#pragma unroll`). Statements of an inner loop
//! that is itself unrolled by a pragma count once per copy. A large factor on a small body
//! (a register-tile loop, a short FMA chain) stays silent. The pragmas and their factors,
//! the loops' headers and the body's statements (expressions, declarations, exits, at any
//! depth) are syntax facts (`unroll_pragmas`, `for_bounds`, `simple_statements`).
//!
//! The fix unrolls by 4, the small factor the wiki recommends. The factor changes the
//! schedule, never what the loop computes, so `kernaut-lsp check --fix` applies it.
//!
//! ```cuda
//! // Before
//! #pragma unroll 64
//! for (int k = 0; k < K; ++k) { /* 12 statements */ }
//! // After
//! #pragma unroll 4
//! for (int k = 0; k < K; ++k) { /* 12 statements */ }
//! ```

use kernaut_syntax::{ForBounds, TextRange, UnrollPragma};

use super::{Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("over_unroll.rs"),
    id: "ilp/over-unroll",
    severity: Severity::Hint,
    wiki: &["pitfall-ilp#P4"],
    run,
};

/// The largest unroll factor that is never flagged.
const MAX_FACTOR: i64 = 16;
/// The largest trip count a bare `#pragma unroll` may fully unroll without a hint.
const MAX_FULL_TRIP: i64 = 64;
/// The fewest statements (after counting unrolled inner loops) of a "large" body.
const LARGE_BODY: i64 = 8;
/// The factor the fix writes.
const FIXED_FACTOR: i64 = 4;

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let pragmas = ctx.file.unroll_pragmas();
    // Only larger factors and bare pragmas can be flagged.
    if pragmas
        .iter()
        .all(|p| p.factor.is_some_and(|n| n <= MAX_FACTOR))
    {
        return;
    }
    for p in &pragmas {
        let Some(loop_range) = p.loop_range.clone() else {
            continue;
        };
        let (bound, what) = match p.factor {
            Some(n) if n <= MAX_FACTOR => continue,
            Some(_) => (
                upper_bound(ctx, &loop_range),
                format!("`#pragma unroll {}`", p.factor_text),
            ),
            None => (
                upper_bound(ctx, &loop_range),
                "`#pragma unroll`".to_string(),
            ),
        };
        // A factor at or above the trip count unrolls the whole loop, as a bare pragma
        // does, and is judged like one: `#pragma unroll 32` on a 32-trip loop is silent
        // when `#pragma unroll` is.
        let full = match (p.factor, bound) {
            (None, _) => true,
            (Some(n), Some(b)) => n >= b,
            (Some(_), None) => false,
        };
        let copies = match p.factor {
            Some(n) if !full => n,
            // Most full unrolls are of short loops: the bound from the header rules them
            // out without the syntax queries `trip_count` makes.
            _ if bound.is_none_or(|b| b <= MAX_FULL_TRIP) => continue,
            _ => match trip_count(ctx, &loop_range) {
                Some(n) if n > MAX_FULL_TRIP => n,
                _ => continue,
            },
        };
        let Some(size) = body_size(ctx, &loop_range, &pragmas, 0) else {
            continue;
        };
        if size < LARGE_BODY {
            continue;
        }
        let asks = if !full {
            format!("{what} asks the compiler to unroll a body of {size} statements by {copies}")
        } else {
            format!("{what} asks the compiler to unroll all {copies} iterations of a body of {size} statements")
        };
        let message = format!(
            "{asks} (a request: NVVM may unroll less): beyond the ILP the latency needs, unrolling only removes loop overhead, while the larger code and longer register live ranges risk instruction-cache stalls and spills; unroll by 4 or 8 and get the ILP from independent chains"
        );
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: RULE.severity,
            range: p.range.clone(),
            message,
            wiki: RULE.wiki[0].to_string(),
            fixes: vec![fix(p)],
        });
    }
}

/// The edit that sets the factor to [`FIXED_FACTOR`].
fn fix(p: &UnrollPragma) -> Fix {
    // The unroll factor changes the schedule, never what the loop computes.
    Fix {
        safe: true,
        title: format!("Unroll by {FIXED_FACTOR}"),
        edits: vec![TextEdit::replace(
            p.factor_range.clone(),
            format!(" {FIXED_FACTOR}"),
        )],
    }
}

/// The bound `N` of a `for (…; v < N; …)` or `v <= N` header, folded: an upper bound of
/// the trip count of a loop that starts at 0 or above.
fn upper_bound(ctx: &RuleContext, range: &TextRange) -> Option<i64> {
    ctx.file.for_bounds(range)?.end
}

/// The trip count of the `for` loop at `range`, when its bounds and step are constant.
fn trip_count(ctx: &RuleContext, range: &TextRange) -> Option<i64> {
    let ForBounds {
        start: Some(start),
        end: Some(end),
        step: Some(step),
        ..
    } = ctx.file.for_bounds(range)?
    else {
        return None;
    };
    let start = ctx.facts.fold_text(&start, range.start)?;
    if step <= 0 || end <= start {
        return None;
    }
    Some((end - start + step - 1) / step)
}

/// The statements of the loop at `range` (expressions, declarations, exits, at any
/// depth), each inner loop under an unroll pragma counted once per copy; `None` when an
/// inner factor is unknown.
fn body_size(
    ctx: &RuleContext,
    range: &TextRange,
    pragmas: &[UnrollPragma],
    depth: usize,
) -> Option<i64> {
    let inside = |r: &TextRange, outer: &TextRange| {
        r.start >= outer.start && r.end <= outer.end && r != outer
    };
    // The pragma loops inside this one and not inside another such loop inside it.
    let inner: Vec<(&UnrollPragma, &TextRange)> = pragmas
        .iter()
        .filter_map(|p| Some((p, p.loop_range.as_ref()?)))
        .filter(|(_, l)| inside(l, range))
        .collect();
    let direct: Vec<(&UnrollPragma, &TextRange)> = inner
        .iter()
        .copied()
        .filter(|(_, l)| !inner.iter().any(|(_, m)| inside(l, m)))
        .collect();
    let statements = ctx.file.simple_statements(range);
    let mut size = statements
        .iter()
        .filter(|s| !direct.iter().any(|(_, l)| inside(s, l)))
        .count() as i64;
    for (p, l) in direct {
        let copies = match p.factor {
            Some(n) => n.max(1),
            None => trip_count(ctx, l).unwrap_or(1),
        };
        let inner_size = if depth < 4 {
            body_size(ctx, l, pragmas, depth + 1)?
        } else {
            statements.iter().filter(|s| inside(s, l)).count() as i64
        };
        size = size.saturating_add(copies.saturating_mul(inner_size.max(1)));
    }
    Some(size)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages};

    const RULE: &str = "ilp/over-unroll";

    const LARGE: &str = r#"
__global__ void k(const float* a, float* out, int n) {
    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
    #pragma unroll 32
 // ^^^^^^^^^^^^^^^^^ hint: `#pragma unroll 32` asks the compiler to unroll a body of 8 statements by 32
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float x = a[i];
        float y = x * x;
        s0 = fmaf(x, y, s0);
        s1 = fmaf(y, y, s1);
        s2 = fmaf(x, s1, s2);
        s3 = fmaf(y, s0, s3);
        s0 = s0 * 0.5f;
        s1 = s1 + s2;
    }
    out[threadIdx.x] = s0 + s1 + s2 + s3;
}
"#;

    #[test]
    fn large_factor_on_a_large_body() {
        check(RULE, LARGE);
        check_messages(
            RULE,
            LARGE,
            expect![[r#"
                hint: `#pragma unroll 32` asks the compiler to unroll a body of 8 statements by 32 (a request: NVVM may unroll less): beyond the ILP the latency needs, unrolling only removes loop overhead, while the larger code and longer register live ranges risk instruction-cache stalls and spills; unroll by 4 or 8 and get the ILP from independent chains (pitfall-ilp#P4)
            "#]],
        );
    }

    #[test]
    fn inner_unrolled_loops_count_per_copy() {
        check(
            RULE,
            r#"
#define TM 8
__global__ void k(const float* a, const float* b, float* c, int K) {
    float acc[TM][TM] = {};
    #pragma unroll 32
 // ^^^^^^^^^^^^^^^^^ hint: `#pragma unroll 32` asks the compiler to unroll a body of 66 statements by 32
    for (int k = 0; k < K; ++k) {
        float ra = a[k];
        float rb = b[k];
        #pragma unroll
        for (int i = 0; i < TM; ++i) {
            #pragma unroll
            for (int j = 0; j < TM; ++j) {
                acc[i][j] += ra * rb;
            }
        }
    }
    c[threadIdx.x] = acc[0][0];
}
"#,
        );
    }

    #[test]
    fn full_unroll_of_a_long_constant_loop() {
        check(
            RULE,
            r#"
__global__ void k(const float* a, float* out) {
    float s = 0.f, t = 0.f;
    #pragma unroll
 // ^^^^^^^^^^^^^^ hint: `#pragma unroll` asks the compiler to unroll all 1024 iterations of a body of 8 statements
    for (int i = 0; i < 1024; ++i) {
        float x = a[i];
        float y = x * x;
        s += x;
        t += y;
        s *= 0.5f;
        t *= 0.5f;
        s += t;
        t -= s;
    }
    out[0] = s + t;
}
"#,
        );
    }

    #[test]
    fn small_bodies_small_factors_and_short_loops_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(const float* a, float* out, int n) {
    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
    #pragma unroll 64
    for (int i = 0; i < n; ++i) {
        s0 = fmaf(s0, a[i], 1.f); s1 = fmaf(s1, a[i], 1.f);
        s2 = fmaf(s2, a[i], 1.f); s3 = fmaf(s3, a[i], 1.f);
    }
    #pragma unroll 32
    for (int i = 0; i < 8; ++i) {
        float x = a[i]; float y = x * x; s0 += x; s1 += y;
        s2 *= x; s3 *= y; s0 -= s3; s1 -= s2; s2 += 1.f;
    }
    #pragma unroll 16
    for (int i = 0; i < n; ++i) {
        float x = a[i]; float y = x * x; s0 += x; s1 += y;
        s2 *= x; s3 *= y; s0 -= s3; s1 -= s2; s2 += 1.f;
    }
    #pragma unroll
    for (int i = 0; i < 64; ++i) {
        float x = a[i]; float y = x * x; s0 += x; s1 += y;
        s2 *= x; s3 *= y; s0 -= s3; s1 -= s2; s2 += 1.f;
    }
    #pragma unroll
    for (int i = 0; i < n; ++i) {
        float x = a[i]; float y = x * x; s0 += x; s1 += y;
        s2 *= x; s3 *= y; s0 -= s3; s1 -= s2; s2 += 1.f;
    }
    out[0] = s0 + s1 + s2 + s3;
}
"#,
        );
    }

    #[test]
    fn factor_at_or_above_the_trip_count_is_judged_like_a_bare_pragma() {
        // Each loop is a full unroll of at most 64 iterations: silent, as the same loop
        // under a bare `#pragma unroll` is.
        check(
            RULE,
            r#"
#define STEPS 48
__global__ void k(const float* a, float* out) {
    float p = 0.f, q = 0.f, r = 0.f, u = 0.f;
    #pragma unroll 32
    for (int k = 0; k < 32; ++k) {
        p += a[k]; q += p; r += q; u += r;
        p *= 0.5f; q *= 0.5f; r *= 0.5f; u *= 0.5f;
    }
    #pragma unroll 64
    for (int k = 0; k < STEPS; k += 1) {
        p += a[k]; q += p; r += q; u += r;
        p *= 0.5f; q *= 0.5f; r *= 0.5f; u *= 0.5f;
    }
    out[threadIdx.x] = p + q + r + u;
}
"#,
        );
    }

    #[test]
    fn factor_below_the_trip_count_or_a_full_unroll_of_a_long_loop_still_hints() {
        check(
            RULE,
            r#"
__global__ void k(const float* a, float* out) {
    float p = 0.f, q = 0.f, r = 0.f, u = 0.f;
    #pragma unroll 32
 // ^^^^^^^^^^^^^^^^^ hint: `#pragma unroll 32` asks the compiler to unroll a body of 8 statements by 32
    for (int k = 0; k < 33; ++k) {
        p += a[k]; q += p; r += q; u += r;
        p *= 0.5f; q *= 0.5f; r *= 0.5f; u *= 0.5f;
    }
    #pragma unroll 256
 // ^^^^^^^^^^^^^^^^^^ hint: `#pragma unroll 256` asks the compiler to unroll all 128 iterations of a body of 8 statements
    for (int k = 0; k < 128; ++k) {
        p += a[k]; q += p; r += q; u += r;
        p *= 0.5f; q *= 0.5f; r *= 0.5f; u *= 0.5f;
    }
    out[threadIdx.x] = p + q + r + u;
}
"#,
        );
    }

    #[test]
    fn statements_are_counted_from_the_syntax() {
        // Branches count their statements; a `for` header, comments and strings with `;`
        // count none; a pragma in a comment is none.
        check(
            RULE,
            r#"
__global__ void k(const float* a, float* out, int n) {
    float s = 0.f, t = 0.f;
    // #pragma unroll 64
    #pragma unroll 64
 // ^^^^^^^^^^^^^^^^^ hint: `#pragma unroll 64` asks the compiler to unroll a body of 8 statements by 64
    for (int i = 0; i < n; ++i) {
        float x = a[i]; // one; two; three
        if (x > 0.f) {
            s += x;
            t += x * x;
        } else {
            s -= x;
        }
        for (int j = 0; j < 2; ++j) t *= 0.5f;
        printf("%d;%d;\n", i, n);
        t += 1.f;
        if (s > 1e9f) break;
    }
    #pragma unroll 64
    for (int i = 0; i < n; ++i) {
        float x = a[i]; /* ; ; ; ; ; ; ; */
        if (x > 0.f) s += x; else t += x;
        for (int j = 0; j < 2; ++j) t *= 0.5f;
    }
    out[0] = s + t;
}
"#,
        );
    }

    #[test]
    fn fix_replaces_a_parenthesised_factor() {
        check_fix(
            RULE,
            r#"
__global__ void k(const float* a, float* out, int n) {
    float s = 0.f, t = 0.f;
    #pragma unroll (32)
    for (int i = 0; i < n; ++i) {
        float x = a[i]; float y = x * x; s += x; t += y;
        s *= 0.5f; t *= 0.5f; s += t; t -= s;
    }
    out[0] = s + t;
}
"#,
            0,
            expect![[r#"
                // Unroll by 4
                __global__ void k(const float* a, float* out, int n) {
                    float s = 0.f, t = 0.f;
                    #pragma unroll 4
                    for (int i = 0; i < n; ++i) {
                        float x = a[i]; float y = x * x; s += x; t += y;
                        s *= 0.5f; t *= 0.5f; s += t; t -= s;
                    }
                    out[0] = s + t;
                }
            "#]],
        );
    }

    #[test]
    fn fix_unrolls_by_four() {
        check_fix(
            RULE,
            r#"
__global__ void k(const float* a, float* out, int n) {
    float s = 0.f, t = 0.f;
    #pragma unroll 32
    for (int i = 0; i < n; ++i) {
        float x = a[i];
        float y = x * x;
        s += x;
        t += y;
        s *= 0.5f;
        t *= 0.5f;
        s += t;
        t -= s;
    }
    out[0] = s + t;
}
"#,
            0,
            expect![[r#"
                // Unroll by 4
                __global__ void k(const float* a, float* out, int n) {
                    float s = 0.f, t = 0.f;
                    #pragma unroll 4
                    for (int i = 0; i < n; ++i) {
                        float x = a[i];
                        float y = x * x;
                        s += x;
                        t += y;
                        s *= 0.5f;
                        t *= 0.5f;
                        s += t;
                        t -= s;
                    }
                    out[0] = s + t;
                }
            "#]],
        );
    }
}
