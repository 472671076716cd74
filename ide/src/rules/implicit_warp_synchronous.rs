//! `warp/implicit-warp-synchronous`: the classic "last warp unrolled" shared-memory
//! reduction with no `__syncwarp()` between its steps.
//!
//! Two or more consecutive steps `s[tid] += s[tid + 32]; s[tid] += s[tid + 16]; …` (also
//! `s[tid] = v = v + s[tid + 16];` and `s[tid] = fmaxf(s[tid], s[tid + 16]);`, each may
//! sit under a condition that does not mention `tid`, such as `if (blockSize >= 64)`) on
//! a `volatile` array or inside `if (tid < 32)`, with nothing between them. Each step reads
//! what another lane of the warp writes in the same or the previous step; that only worked
//! while the lanes ran in lock-step. With independent thread scheduling (compute
//! capability 7.0 and newer) nothing orders them, `volatile` or not: a data race
//! (`pitfall-warp-primitives#P7`). Silent below sm_70 and when a `__syncwarp()` sits
//! between the steps.
//!
//! The fix splits every step into its read and its write with a `__syncwarp()` after
//! each (only for steps written `s[tid] += s[tid + k];`); the message also names the
//! register alternative, a `__shfl_down_sync` ladder.
//!
//! ```cuda
//! // Before
//! if (tid < 32) {
//!     volatile float* s = sdata;
//!     s[tid] += s[tid + 32];
//!     s[tid] += s[tid + 16];
//! }
//! // After
//! if (tid < 32) {
//!     volatile float* s = sdata;
//!     { auto partial = s[tid] + s[tid + 32]; __syncwarp(); s[tid] = partial; __syncwarp(); }
//!     { auto partial = s[tid] + s[tid + 16]; __syncwarp(); s[tid] = partial; __syncwarp(); }
//! }
//! ```

use kernaut_syntax::lex::is_identifier;
use kernaut_syntax::EnclosingKind;

use super::{Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    id: "warp/implicit-warp-synchronous",
    severity: Severity::Warning,
    wiki: &["pitfall-warp-primitives#P7"],
    run,
    source: include_str!("implicit_warp_synchronous.rs"),
};

/// One step of the ladder: `X[T] op RHS` reading `X[T + k]`.
#[derive(Debug)]
struct Step {
    /// The range of the statement, without a leading `if (...)`, through its `;`.
    range: std::ops::Range<usize>,
    array: String,
    index: String,
    offset: i64,
    /// Whether it is written `X[T] += X[T + k]`.
    plain: bool,
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    if ctx.arch.cc.major() < 7 {
        return;
    }
    let text = ctx.text();
    if !text.contains("+ 16]") && !text.contains("+16]") {
        return;
    }
    for body in ctx.bodies_mentioning(&["16]"]) {
        let masked = mask_comments(&text[body.clone()]);
        let mut run: Vec<Step> = Vec::new();
        let mut segment_start = 0;
        let bytes = masked.as_bytes();
        let flush = |run: &mut Vec<Step>, out: &mut Vec<RuleDiagnostic>| {
            if run.len() >= 2 {
                if let Some(d) = diagnose(ctx, &masked, body.start, run) {
                    out.push(d);
                }
            }
            run.clear();
        };
        let mut depth = 0i32;
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' | b'{' | b'}' if depth == 0 => {
                    let seg = &masked[segment_start..i];
                    match classify(seg, segment_start, b == b';') {
                        Segment::Step(mut s) => {
                            s.range.end = i + 1;
                            let same = run.last().is_none_or(|p| {
                                p.array == s.array && p.index == s.index && s.offset < p.offset
                            });
                            if !same {
                                flush(&mut run, out);
                            }
                            run.push(s);
                        }
                        Segment::Neutral => {}
                        Segment::Other => flush(&mut run, out),
                    }
                    segment_start = i + 1;
                }
                _ => {}
            }
        }
        flush(&mut run, out);
    }
}

enum Segment {
    Step(Step),
    /// Empty, or an `if (...)` head or `else` that does not break a ladder.
    Neutral,
    Other,
}

fn classify(seg: &str, at: usize, statement: bool) -> Segment {
    let lead = seg.len() - seg.trim_start().len();
    let mut s = seg.trim();
    let mut start = at + lead;
    if s.is_empty() || s == "else" {
        return Segment::Neutral;
    }
    let mut condition = None;
    if let Some(rest) = s.strip_prefix("if") {
        let rest_trim = rest.trim_start();
        if rest_trim.starts_with('(') {
            let Some(close) = kernaut_syntax::lex::matching_paren(rest_trim, 0) else {
                return Segment::Other;
            };
            condition = Some(rest_trim[1..close].to_string());
            let after = &rest_trim[close + 1..];
            let skipped = s.len() - after.len();
            let after_lead = after.len() - after.trim_start().len();
            start += skipped + after_lead;
            s = after.trim();
            if s.is_empty() {
                return Segment::Neutral;
            }
        }
    }
    if !statement {
        return Segment::Other;
    }
    let Some(step) = parse_step(s, start) else {
        return Segment::Other;
    };
    if condition.is_some_and(|c| mentions_word(&c, &step.index)) {
        return Segment::Other;
    }
    Segment::Step(step)
}

/// `X[T] op RHS` where RHS reads `X[T + k]`.
fn parse_step(s: &str, start: usize) -> Option<Step> {
    let open = s.find('[')?;
    let array = s[..open].trim();
    if !is_identifier(array) {
        return None;
    }
    let close = open + s[open..].find(']')?;
    let index = s[open + 1..close].trim();
    if !is_identifier(index) {
        return None;
    }
    let rest = s[close + 1..].trim_start();
    let (plain, rhs) = if let Some(r) = rest.strip_prefix("+=") {
        (true, r)
    } else if let Some(r) = rest.strip_prefix('=') {
        if r.starts_with('=') {
            return None;
        }
        (false, r)
    } else {
        return None;
    };
    let squashed: String = rhs.chars().filter(|c| !c.is_whitespace()).collect();
    let needle = format!("{array}[{index}+");
    let at = squashed.find(&needle)?;
    let tail = &squashed[at + needle.len()..];
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    let offset: i64 = digits.parse().ok()?;
    if !tail[digits.len()..].starts_with(']')
        || !(1..=32).contains(&offset)
        || offset.count_ones() != 1
    {
        return None;
    }
    let plain = plain && squashed == format!("{array}[{index}+{offset}]");
    Some(Step {
        range: start..start + s.len(),
        array: array.to_string(),
        index: index.to_string(),
        offset,
        plain,
    })
}

fn diagnose(ctx: &RuleContext, masked: &str, base: usize, run: &[Step]) -> Option<RuleDiagnostic> {
    let first = &run[0];
    // The steps cross lanes of one warp: the last one reads at most 16 lanes away.
    if run.iter().all(|s| s.offset > 16) {
        return None;
    }
    let at = base + first.range.start;
    let in_first_warp = ctx.enclosing(at).iter().any(|e| match &e.kind {
        EnclosingKind::If {
            condition,
            thread_dependent: true,
            in_else: false,
            ..
        } => {
            let c: String = condition.chars().filter(|c| !c.is_whitespace()).collect();
            c.contains("<32") || c.contains("<warpSize") || c.contains("<=31")
        }
        _ => false,
    });
    let volatile_param = ctx.facts.function_at(at).is_some_and(|f| {
        f.params
            .iter()
            .any(|p| p.name == first.array && p.ty.contains("volatile"))
    });
    if !in_first_warp && !volatile_param && !declared_volatile(masked, &first.array) {
        return None;
    }
    let range = at..base + first.range.end;
    let fixes = if run.iter().all(|s| s.plain) {
        let name = ["partial", "partial_sum", "kernaut_partial"]
            .into_iter()
            .find(|n| *n != first.array && *n != first.index)?;
        vec![Fix {
            title: "Split each step into its read and its write, with `__syncwarp()` after each"
                .to_string(),
            // It adds barriers and reorders the steps: a person should read it.
            safe: false,
            edits: run
                .iter()
                .map(|s| {
                    let (x, t, k) = (&s.array, &s.index, s.offset);
                    TextEdit::replace(
                        base + s.range.start..base + s.range.end,
                        format!(
                            "{{ auto {name} = {x}[{t}] + {x}[{t} + {k}]; __syncwarp(); {x}[{t}] = {name}; __syncwarp(); }}"
                        ),
                    )
                })
                .collect(),
        }]
    } else {
        Vec::new()
    };
    Some(RuleDiagnostic {
        rule: RULE.id,
        severity: RULE.severity,
        range,
        message: format!(
            "implicit warp-synchronous reduction: these {} steps on `{}` read what other lanes of the warp write in the same or the previous step, with no `__syncwarp()` between them; on {} (independent thread scheduling) the lanes are not in lock-step, so this is a data race even through `volatile`: put `__syncwarp()` between each read and write, or reduce in registers with `__shfl_down_sync`",
            run.len(),
            first.array,
            ctx.arch
        ),
        wiki: RULE.wiki[0].to_string(),
        fixes,
    })
}

/// Whether `array` is declared `volatile` in `body`.
fn declared_volatile(body: &str, array: &str) -> bool {
    body.match_indices("volatile").any(|(i, _)| {
        let decl = &body[i..];
        let end = decl.find([';', ')', '=']).unwrap_or(decl.len());
        mentions_word(&decl[..end], array)
    })
}

fn mentions_word(s: &str, word: &str) -> bool {
    s.match_indices(word).any(|(i, _)| {
        let before = s[..i].chars().next_back();
        let after = s[i + word.len()..].chars().next();
        let id = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !id(before) && !id(after)
    })
}

/// `text` with comments replaced by spaces (same length and offsets).
fn mask_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] != b'\n' {
                    out[i] = b' ';
                }
                i += 1;
            }
            let end = (i + 2).min(b.len());
            out[i..end].fill(b' ');
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces, and only whole comments.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_no_fix};

    const RULE: &str = "warp/implicit-warp-synchronous";

    #[test]
    fn volatile_ladder_under_tid_below_32() {
        check(
            RULE,
            r#"
__global__ void reduce(const float* in, float* out) {
    __shared__ float sdata[64];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[tid];
    __syncthreads();
    if (tid < 32) {
        volatile float* s = sdata;
        s[tid] += s[tid + 32];
     // ^^^^^^^^^^^^^^^^^^^^^^ warning: implicit warp-synchronous reduction: these 6 steps on `s`
        s[tid] += s[tid + 16];
        s[tid] += s[tid + 8]; // lanes race here
        s[tid] += s[tid + 4];
        s[tid] += s[tid + 2];
        s[tid] += s[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#,
        );
    }

    #[test]
    fn cuda_samples_form_with_block_size_guards() {
        check(
            RULE,
            r#"
template <unsigned blockSize>
__device__ void warpReduce(volatile int* sdata, unsigned int tid) {
    int mySum = sdata[tid];
    if (blockSize >= 64) sdata[tid] = mySum = mySum + sdata[tid + 32];
                      // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: implicit warp-synchronous reduction: these 3 steps on `sdata`
    if (blockSize >= 32) sdata[tid] = mySum = mySum + sdata[tid + 16];
    if (blockSize >= 16) { sdata[tid] = mySum = mySum + sdata[tid + 8]; }
}
"#,
        );
    }

    #[test]
    fn syncwarp_between_steps_old_targets_and_other_code_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float s[64];
    unsigned tid = threadIdx.x;
    if (tid < 32) {
        float v = s[tid] + s[tid + 32]; __syncwarp(); s[tid] = v; __syncwarp();
        v = s[tid] + s[tid + 16]; __syncwarp(); s[tid] = v; __syncwarp();
        s[tid] += s[tid + 8];
        __syncwarp();
        s[tid] += s[tid + 4];
        __syncwarp();
    }
    for (int i = 0; i < 2; ++i) { s[tid] += s[tid + 16]; __syncthreads(); s[tid] += s[tid + 8]; }
    out[tid] = s[tid];
}
"#,
        );
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float s[64];
    int tid = threadIdx.x;
    s[tid] += s[tid + 32];
    s[tid] += s[tid + 16];
}
"#,
        );
        check(
            RULE,
            r#"
//- /main.cu arch:sm_61
__device__ void warpReduce(volatile float* s, int tid) {
    s[tid] += s[tid + 32];
    s[tid] += s[tid + 16];
}
"#,
        );
    }

    #[test]
    fn fix_splits_each_step() {
        check_fix(
            RULE,
            r#"
__device__ void warpReduce(volatile float* s, int tid) {
    s[tid] += s[tid + 32];
    s[tid] += s[tid + 16];
}
"#,
            0,
            expect![[r#"
                // Split each step into its read and its write, with `__syncwarp()` after each
                __device__ void warpReduce(volatile float* s, int tid) {
                    { auto partial = s[tid] + s[tid + 32]; __syncwarp(); s[tid] = partial; __syncwarp(); }
                    { auto partial = s[tid] + s[tid + 16]; __syncwarp(); s[tid] = partial; __syncwarp(); }
                }
            "#]],
        );
        check_no_fix(
            RULE,
            r#"
__device__ void warpReduce(volatile float* s, int tid) {
    s[tid] = fmaxf(s[tid], s[tid + 32]);
    s[tid] = fmaxf(s[tid], s[tid + 16]);
}
"#,
        );
    }
}
