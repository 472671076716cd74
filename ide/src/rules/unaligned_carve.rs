//! `smem/unaligned-carve`: an `extern __shared__` buffer carved at an offset that is not a
//! multiple of 16 bytes, where the carved pointer needs it.
//!
//! All dynamic shared memory is one buffer, and each sub-array's offset is the author's to
//! align (`pitfall-bank-conflict#P6`). The rule reads the offset of each carve
//! (`T* p = reinterpret_cast<T*>(smem + OFF)`, `(T*)&smem[OFF]`, `(T*)smem + OFF`, or from
//! an earlier carve counted in that carve's type: `int* p = (int*)smem; float4* q =
//! (float4*)(p + 3);` is 12 bytes in; `OFF` may be any constant the file determines) and
//! fires when it is not a multiple of 16 bytes and either
//! - it is not a multiple of the alignment of `T` itself (a `float4*` at byte 200, a
//!   `float*` at byte 130): every access faults, a warning; or
//! - the pointer is later used for 16-byte work: a 16-byte async copy
//!   (`__pipeline_memcpy_async(…, 16)`, `cuda::aligned_size_t<16>`, `cp.async … 16`) or a
//!   cast to a type it is not aligned for (a hint). A 4-byte copy needs no more than the
//!   element's alignment.
//!
//! A `float*` at byte 132 that is only read and written as floats is correctly aligned
//! and stays silent; so does an offset the file does not determine.
//!
//! The fix rounds the offset up to the next multiple of 128 bytes when it is written as
//! an integer literal; the launch's dynamic shared memory size must cover the extra bytes.
//!
//! ```cuda
//! // Before
//! extern __shared__ unsigned char smem[];
//! float4* b = reinterpret_cast<float4*>(smem + 130);
//! // After
//! extern __shared__ unsigned char smem[];
//! float4* b = reinterpret_cast<float4*>(smem + 256);
//! ```

use kernaut_syntax::short_name;
use kernaut_syntax::{type_size, SharedCarve, TextRange};

use super::{Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("unaligned_carve.rs"),
    id: "smem/unaligned-carve",
    severity: Severity::Hint,
    wiki: &["pitfall-bank-conflict#P6"],
    run,
};

/// The alignment the fix rounds to.
const ROUND_TO: i64 = 128;

/// Calls whose pointer arguments are 16-byte async copies at best.
const ASYNC_COPIES: &[&str] = &[
    "memcpy_async",
    "__pipeline_memcpy_async",
    "cp_async",
    "cp_async4",
    "cp_async16",
];

/// A carve's offset, from the syntax facts of its initialiser.
struct Offset {
    /// The bytes from the start of the root buffer.
    bytes: i64,
    /// The range of the offset's integer literal, when it is one.
    literal: Option<TextRange>,
    /// The size of one unit of the literal, in bytes.
    unit: i64,
    /// The root buffer's offset of the base the literal is added to.
    base_bytes: i64,
    /// The type the pointer is cast to (or declared with), and its size.
    pointee: Option<(String, u64)>,
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    for c in &ctx.facts.carves {
        let Some(off) = offset(ctx, c) else {
            continue;
        };
        if off.bytes <= 0 || off.bytes % 16 == 0 {
            continue;
        }
        let Some((ty, size)) = off.pointee.clone() else {
            continue;
        };
        let align = alignment(size);
        let (severity, why) = if off.bytes % align != 0 {
            (
                Severity::Warning,
                format!(
                    "which is not a multiple of the {align}-byte alignment of `{ty}`: accesses through it fault with a misaligned address"
                ),
            )
        } else if let Some(use_) = sixteen_byte_use(ctx, c, off.bytes) {
            (RULE.severity, format!("but {use_} needs 16-byte alignment"))
        } else {
            continue;
        };
        let message = format!(
            "`{}` is carved {} bytes into `{}`, {why}; round the offset up to a multiple of 16 (128 keeps bank arithmetic simple)",
            c.name, off.bytes, c.root
        );
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity,
            range: c.name_range.clone(),
            message,
            wiki: RULE.wiki[0].to_string(),
            fixes: fix(&off, c).into_iter().collect(),
        });
    }
}

/// The fix: the literal rewritten so the offset is the next multiple of [`ROUND_TO`].
fn fix(off: &Offset, c: &SharedCarve) -> Option<Fix> {
    let literal = off.literal.clone()?;
    let target = (off.bytes + ROUND_TO - 1) / ROUND_TO * ROUND_TO;
    let rel = target - off.base_bytes;
    if rel < 0 || rel % off.unit != 0 {
        return None;
    }
    let value = rel / off.unit;
    Some(Fix {
        safe: false,
        title: format!(
            "Round the offset of `{}` up to {target} bytes (the dynamic shared memory size must cover {} more bytes)",
            c.name,
            target - off.bytes
        ),
        edits: vec![TextEdit::replace(literal, value.to_string())],
    })
}

/// The alignment of a type of `size` bytes: the largest power of two dividing it, at most
/// 16.
fn alignment(size: u64) -> i64 {
    let size = i64::try_from(size.max(1)).unwrap_or(16);
    (size & size.wrapping_neg()).min(16)
}

/// The offset of carve `c`, as the syntax facts read it from its initialiser.
fn offset(ctx: &RuleContext, c: &SharedCarve) -> Option<Offset> {
    let declared = c.element_size.map(|s| (c.element_type.clone(), s));
    let pointee = declared.or_else(|| {
        let t = c.cast_type.clone()?;
        let size = type_size(&t)?;
        Some((t, size))
    });
    // The fix rewrites the offset only where it is written as one integer literal.
    let literal = c.offset_range.clone().filter(|r| {
        ctx.text()
            .get(r.clone())
            .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
    });
    Some(Offset {
        bytes: c.offset_bytes?,
        literal,
        unit: i64::try_from(c.offset_unit?).ok()?,
        base_bytes: c.base_offset_bytes?,
        pointee,
    })
}

/// A use of the carved pointer after its declaration that needs 16-byte alignment.
fn sixteen_byte_use(ctx: &RuleContext, c: &SharedCarve, bytes: i64) -> Option<String> {
    let pointer = ctx.file.variable_at(c.name_range.start)?;
    let uses = ctx.file.uses_of(&pointer);
    for call in ctx.file.calls_in(c.range.start) {
        if call.range.start < c.range.end {
            continue;
        }
        let last = short_name(&call.callee).to_string();
        let is_copy = ASYNC_COPIES.contains(&last.as_str()) || call.callee.starts_with("cp.async");
        let through_it = || {
            uses.iter().any(|u| {
                call.arg_ranges
                    .iter()
                    .any(|a| a.start <= u.range.start && u.range.end <= a.end)
            })
        };
        if is_copy && through_it() && copies_16_bytes(ctx, &call, &last) {
            return Some(format!("the async copy `{}` through it", call.callee_text));
        }
    }
    // Casts of the pointer to a wider type it is not aligned for.
    for u in &uses {
        let Some(ty) = u.cast_to.as_deref().and_then(|t| t.strip_suffix('*')) else {
            continue;
        };
        let ty = ty.trim();
        if let Some(size) = type_size(ty) {
            if bytes % alignment(size) != 0 {
                return Some(format!("the cast to `{ty}*`"));
            }
        }
    }
    None
}

/// Whether an async copy moves 16-byte pieces: `cp_async16`, a size argument that is a
/// multiple of 16 (for the per-thread forms), `aligned_size_t<N>` with N of 16 or more, or
/// a PTX `cp.async` of 16 bytes. A 4-byte copy needs only 4-byte alignment.
fn copies_16_bytes(ctx: &RuleContext, call: &kernaut_syntax::CallSite, last: &str) -> bool {
    if last == "cp_async16" {
        return true;
    }
    let sixteen = |v: i64| v >= 16 && v % 16 == 0;
    // `cuda::aligned_size_t<16>(bytes)`: the size argument's type says the alignment.
    let aligned_16 = |a: &TextRange| {
        ctx.file.symbol_at(a.start).is_some_and(|s| {
            short_name(&s.name) == "aligned_size_t"
                && s.template_args
                    .as_deref()
                    .and_then(|n| ctx.facts.fold_text(n, call.range.start))
                    .is_some_and(sixteen)
        })
    };
    if call.arg_ranges.iter().any(aligned_16) {
        return true;
    }
    let per_thread = last == "__pipeline_memcpy_async"
        || call.callee.starts_with("cp.async")
        || (last == "memcpy_async" && call.args.len() == 4 && !call.args[0].contains("block"));
    per_thread
        && call.args.iter().skip(2).any(|a| {
            ctx.facts
                .fold_text(a, call.range.start)
                .is_some_and(sixteen)
        })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages, check_no_fix};

    const RULE: &str = "smem/unaligned-carve";

    #[test]
    fn vector_pointer_at_an_unaligned_byte_offset() {
        let fixture = r#"
__global__ void k(float* out) {
    extern __shared__ unsigned char smem[];
    float* a = reinterpret_cast<float*>(smem);
    float4* b = reinterpret_cast<float4*>(smem + 200);
         // ^ warning: `b` is carved 200 bytes into `smem`, which is not a multiple of the 16-byte alignment of `float4`
    out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x].x;
}
"#;
        check(RULE, fixture);
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                warning: `b` is carved 200 bytes into `smem`, which is not a multiple of the 16-byte alignment of `float4`: accesses through it fault with a misaligned address; round the offset up to a multiple of 16 (128 keeps bank arithmetic simple) (pitfall-bank-conflict#P6)
            "#]],
        );
    }

    #[test]
    fn float_pointer_used_for_async_copies() {
        check(
            RULE,
            r#"
__global__ void k(const float* in) {
    extern __shared__ float buf[];
    float* tile = buf + 33;
        // ^^^^ hint: `tile` is carved 132 bytes into `buf`, but the async copy `__pipeline_memcpy_async` through it needs 16-byte alignment
    __pipeline_memcpy_async(&tile[4 * threadIdx.x], &in[4 * threadIdx.x], 16);
    __pipeline_commit();
}
"#,
        );
    }

    #[test]
    fn four_byte_async_copies_need_no_16_byte_alignment() {
        check(
            RULE,
            r#"
__global__ void k(const float* in) {
    extern __shared__ float buf[];
    float* tile = buf + 33;
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[threadIdx.x], sizeof(float));
    cuda::memcpy_async(&tile[threadIdx.x], &in[threadIdx.x], 4, pipe);
}
"#,
        );
    }

    #[test]
    fn pointer_arithmetic_after_a_cast_counts_in_the_cast_type() {
        // `(float*)smem + 33` is 132 bytes in, aligned for `float`: silent until the pointer
        // feeds a 16-byte copy.
        check(
            RULE,
            r#"
__global__ void k(float* out, const float* in) {
    extern __shared__ unsigned char smem[];
    float* c = (float*)smem + 33;
    float2* b = (float2*)smem + 3;
    float* t = (float*)smem + 65;
        // ^ hint: `t` is carved 260 bytes into `smem`, but the async copy `__pipeline_memcpy_async` through it needs 16-byte alignment
    __pipeline_memcpy_async(t + 4 * threadIdx.x, in + 4 * threadIdx.x, 16);
    out[threadIdx.x] = b[0].x + c[threadIdx.x];
}
"#,
        );
    }

    #[test]
    fn scalar_use_aligned_offsets_and_unknown_offsets_stay_silent() {
        check(
            RULE,
            r#"
#define TILE 32
__global__ void k(float* out, int n) {
    extern __shared__ float smem[];
    float* a = smem;
    float* b = smem + 33;
    float* c = &smem[TILE * TILE];
    float4* d = reinterpret_cast<float4*>(smem + 2 * TILE * TILE);
    float* e = smem + n;
    out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x] + c[0] + d[0].x + e[0];
}
"#,
        );
    }

    #[test]
    fn comments_and_shadowing_pointers_are_not_uses_of_the_carve() {
        // The text scan took the cast in the comment and the inner block's own `tile`
        // (256 bytes in, aligned) for uses of the outer one and gave two wrong hints.
        check(
            RULE,
            r#"
__global__ void k(const float* in, float* out) {
    extern __shared__ float buf[];
    float* tile = buf + 33;
    // reading (float4*)tile here would need 16-byte alignment
    out[threadIdx.x] = tile[threadIdx.x];
    {
        float* tile = buf + 64;
        __pipeline_memcpy_async(&tile[4 * threadIdx.x], &in[4 * threadIdx.x], 16);
    }
}
"#,
        );
    }

    #[test]
    fn fix_rounds_up_to_128() {
        check_fix(
            RULE,
            r#"
__global__ void k(float* out) {
    extern __shared__ unsigned char smem[];
    float* a = reinterpret_cast<float*>(smem);
    float4* b = reinterpret_cast<float4*>(smem + 130);
    out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x].x;
}
"#,
            0,
            expect![[r#"
                // Round the offset of `b` up to 256 bytes (the dynamic shared memory size must cover 126 more bytes)
                __global__ void k(float* out) {
                    extern __shared__ unsigned char smem[];
                    float* a = reinterpret_cast<float*>(smem);
                    float4* b = reinterpret_cast<float4*>(smem + 256);
                    out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x].x;
                }
            "#]],
        );
        check_fix(
            RULE,
            r#"
__global__ void k(const float* in) {
    extern __shared__ float buf[];
    float* tile = &buf[33];
    __pipeline_memcpy_async(&tile[4 * threadIdx.x], &in[4 * threadIdx.x], 16);
}
"#,
            0,
            expect![[r#"
                // Round the offset of `tile` up to 256 bytes (the dynamic shared memory size must cover 124 more bytes)
                __global__ void k(const float* in) {
                    extern __shared__ float buf[];
                    float* tile = &buf[64];
                    __pipeline_memcpy_async(&tile[4 * threadIdx.x], &in[4 * threadIdx.x], 16);
                }
            "#]],
        );
    }

    #[test]
    fn no_fix_for_a_computed_offset() {
        check_no_fix(
            RULE,
            r#"
#define N 50
__global__ void k(float* out) {
    extern __shared__ unsigned char smem[];
    float4* b = reinterpret_cast<float4*>(smem + N * 4);
    out[0] = b[0].x;
}
"#,
        );
    }

    #[test]
    fn offsets_through_defines_and_typed_pointers() {
        check_messages(
            RULE,
            r#"
#define COUNTERS 3
__global__ void k(float* out) {
    extern __shared__ unsigned char smem[];
    int* p = (int*)smem;
    float4* q = (float4*)(p + 3);
    float4* r = reinterpret_cast<float4*>(smem + COUNTERS * sizeof(int));
    out[threadIdx.x] = p[0] + q[threadIdx.x].x + r[threadIdx.x].y;
}
"#,
            expect![[r#"
                warning: `q` is carved 12 bytes into `smem`, which is not a multiple of the 16-byte alignment of `float4`: accesses through it fault with a misaligned address; round the offset up to a multiple of 16 (128 keeps bank arithmetic simple) (pitfall-bank-conflict#P6)
                warning: `r` is carved 12 bytes into `smem`, which is not a multiple of the 16-byte alignment of `float4`: accesses through it fault with a misaligned address; round the offset up to a multiple of 16 (128 keeps bank arithmetic simple) (pitfall-bank-conflict#P6)
            "#]],
        );
    }

    #[test]
    fn aligned_offsets_through_defines_and_typed_pointers_stay_silent() {
        check(
            RULE,
            r#"
#define COUNTERS 4
__global__ void k(float* out) {
    extern __shared__ unsigned char smem[];
    int* p = (int*)smem;
    float4* q = (float4*)(p + 4);
    float* f = (float*)(p + 3);
    float4* r = reinterpret_cast<float4*>(smem + COUNTERS * sizeof(int));
    out[threadIdx.x] = p[0] + q[threadIdx.x].x + f[threadIdx.x] + r[threadIdx.x].y;
}
"#,
        );
    }
}
