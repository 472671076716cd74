//! `warp/implicit-warp-synchronous`: the classic "last warp unrolled" shared-memory
//! reduction with no `__syncwarp()` between its steps.
//!
//! Two or more consecutive statements of one block, each writing `X[i]` and reading
//! `X[i + k]` (and perhaps `X[i]`) with `k` a power of two up to 32 that decreases from
//! step to step: `s[tid] += s[tid + 32]; s[tid] += s[tid + 16]; …`, also
//! `s[tid] = v = v + s[tid + 16];` and `s[tid] = fmaxf(s[tid], s[tid + 16]);`. Each may
//! sit under an `if` without `else` whose condition does not tell the lanes apart (reads
//! no thread index and no name of the index, such as `if (blockSize >= 64)`). `X` is a
//! `__shared__` array (or a pointer carved from one) inside a branch that only lanes of
//! the first warp take (`if (tid < 32)` with `tid` a linear thread index, as the
//! condition's comparisons give it), or a pointer declared `volatile`. The statements,
//! their subscripts (base, lowered index, read or write) and the conditions are syntax
//! facts (`SourceFile::body_steps`, `subscripts_in`, `variable_named`). Each step reads
//! what another lane of the warp writes in the same or the previous step; that only worked
//! while the lanes ran in lock-step. With independent thread scheduling (compute
//! capability 7.0 and newer) nothing orders them, `volatile` or not: a data race
//! (`pitfall-warp-primitives#P7`). The message names the first target the build names
//! that schedules independently; silent when every target is older than sm_70 (their
//! lanes run in lock-step, also as PTX compiled at run time for a newer GPU), a hint
//! when only a target built under an undecided condition is, and silent when a
//! `__syncwarp()` (any other statement) sits between the steps.
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

use kernaut_syntax::{
    AccessKind, BinOp, EnclosingKind, GuardComparison, IndexExpr, Step, TextRange,
};

use super::target_guards::{Compiled, Tri};
use super::{Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    id: "warp/implicit-warp-synchronous",
    severity: Severity::Warning,
    wiki: &["pitfall-warp-primitives#P7"],
    run,
    source: include_str!("implicit_warp_synchronous.rs"),
};

/// One step of the ladder: a statement that writes `X[i]` and reads `X[i + k]`.
#[derive(Debug)]
struct Ladder {
    /// The statement (inside a wrapping `if`), through its `;`.
    range: TextRange,
    array: String,
    /// The index written, lowered.
    index: IndexExpr,
    /// Its range.
    index_range: TextRange,
    offset: i64,
    /// Whether `X` is declared `volatile`.
    volatile: bool,
    /// Whether it is written `X[i] += X[i + k]`.
    plain: bool,
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    // Only a target that schedules the lanes of a warp independently makes the steps
    // race; a build for older targets alone (sm_35, sm_61) runs them in lock-step.
    if ctx.targets.independent_scheduling().is_none() {
        return;
    }
    // The functions that write shared memory or declare a `volatile` variable (whose
    // every statement is then looked at). Only functions whose text says `volatile` are
    // asked for their variables.
    let volatile = ctx.bodies_mentioning(&["volatile"]);
    let mut bodies: Vec<(TextRange, bool)> = ctx
        .facts
        .kernels
        .iter()
        .chain(&ctx.facts.device_functions)
        .filter_map(|f| {
            let body = f.body_range.clone()?;
            let any = (f.params.iter().any(|p| p.ty.contains("volatile"))
                || volatile.contains(&body))
                && !ctx
                    .file
                    .variables_with_uses(&f.range, &["volatile"], &|v| v.is_volatile)
                    .is_empty();
            (any || shared_ladder_pair_in(ctx, &body)).then_some((body, any))
        })
        .collect();
    bodies.sort_by_key(|(b, _)| (b.start, b.end));
    bodies.dedup_by_key(|(b, _)| b.clone());
    let mut found = Vec::new();
    for (body, any) in bodies {
        if let Some(steps) = ctx.file.body_steps(body.start) {
            block(ctx, &steps.steps, false, any, &mut found);
        }
    }
    out.extend(reached_only(ctx, found));
}

/// The findings of device functions that no kernel of the file reaches, in a file with
/// kernels: nvcc compiles a device function only for the kernels that call it, and a
/// template only where something instantiates it. A template helper is dropped (no
/// other file instantiates it); a plain one keeps a hint that states the assumption
/// (a kernel in another file may call it, with `-rdc`).
fn reached_only(ctx: &RuleContext, found: Vec<RuleDiagnostic>) -> Vec<RuleDiagnostic> {
    if found.is_empty() || !ctx.facts.kernels.iter().any(|k| ctx.emitted(k)) {
        return found;
    }
    let compiled = Compiled::scan_default(ctx);
    found
        .into_iter()
        .filter_map(|mut d| {
            // A helper under an `#if` the build as written does not compile is left to
            // the preprocessor's say (the rules' `preprocessor_conditions`).
            let Some(f) = ctx.facts.function_at(d.range.start).filter(|f| {
                !f.is_kernel
                    && !compiled.reached(f.range.start)
                    && compiled.guards.anywhere(f.range.start).0 == Tri::True
            }) else {
                return Some(d);
            };
            if !f.template_params.is_empty() {
                return None;
            }
            d.severity = Severity::Hint;
            d.message.push_str(&format!(
                " (a hint only: no kernel of this file calls `{}`, and nvcc compiles a device function only for the kernels that reach it; this holds where a kernel in another file does, built with `-rdc`)",
                f.name
            ));
            Some(d)
        })
        .collect()
}

/// Whether a shared-memory write inside `range` is followed closely by a read of the
/// same array `k` elements on (`s[tid] += s[tid + 16]`): what a ladder step over a
/// `__shared__` array holds, found among the file's shared accesses before any
/// statement is looked at.
fn shared_ladder_pair_in(ctx: &RuleContext, range: &TextRange) -> bool {
    let accesses: Vec<_> = ctx
        .shared_accesses_from(range.clone())
        .iter()
        .filter(|a| range.contains(&a.range.start) && a.indices.len() == 1)
        .collect();
    accesses.iter().enumerate().any(|(i, w)| {
        matches!(w.kind, AccessKind::Store | AccessKind::LoadStore)
            && accesses[i + 1..].iter().take(8).any(|r| {
                r.array == w.array
                    && r.kind == AccessKind::Load
                    && offset_from(&r.indices[0], &w.indices[0])
                        .is_some_and(|k| (1..=32).contains(&k))
            })
    })
}

/// Whether a shared-memory access inside `range` writes.
fn shared_write_in(ctx: &RuleContext, range: &TextRange) -> bool {
    ctx.shared_accesses_from(range.clone()).iter().any(|a| {
        range.contains(&a.range.start)
            && matches!(a.kind, AccessKind::Store | AccessKind::LoadStore)
    })
}

/// Finds the ladders among `steps` (one block's statements) and in the blocks inside
/// them; `one_warp` says whether only lanes of one warp run them, `any` whether a
/// statement without a shared-memory write may be a step (through a `volatile` pointer).
fn block(
    ctx: &RuleContext,
    steps: &[Step],
    one_warp: bool,
    any: bool,
    out: &mut Vec<RuleDiagnostic>,
) {
    let mut run: Vec<Ladder> = Vec::new();
    for step in steps {
        if let Some(s) = ladder_step(ctx, step, any) {
            let continues = run
                .last()
                .is_none_or(|p| p.array == s.array && p.index == s.index && s.offset < p.offset);
            if !continues {
                flush(ctx, &mut run, one_warp, out);
            }
            run.push(s);
            continue;
        }
        flush(ctx, &mut run, one_warp, out);
        match step {
            Step::If {
                comparisons,
                then_steps,
                else_steps,
                ..
            } => {
                let first_warp = comparisons.as_deref().is_some_and(first_warp_only);
                block(ctx, then_steps, one_warp || first_warp, any, out);
                block(ctx, else_steps, one_warp, any, out);
            }
            Step::For { body, .. } | Step::Loop { body, .. } | Step::Other { body, .. } => {
                block(ctx, body, one_warp, any, out);
            }
            Step::Stmt { .. } | Step::Exit { .. } => {}
        }
    }
    flush(ctx, &mut run, one_warp, out);
}

fn flush(ctx: &RuleContext, run: &mut Vec<Ladder>, one_warp: bool, out: &mut Vec<RuleDiagnostic>) {
    if run.len() >= 2 && (one_warp || run[0].volatile) {
        out.extend(diagnose(ctx, run));
    }
    run.clear();
}

/// The step as a ladder step: a statement, or an `if` without `else` around one
/// statement whose condition is the same for the lanes that run the step (it reads no
/// thread index and no name of the step's index, as `if (blockSize >= 64)`).
fn ladder_step(ctx: &RuleContext, step: &Step, any: bool) -> Option<Ladder> {
    match step {
        Step::Stmt { range } => statement_step(ctx, range, any),
        Step::If {
            condition_range,
            then_steps,
            else_steps,
            ..
        } if else_steps.is_empty() => {
            let [Step::Stmt { range }] = then_steps.as_slice() else {
                return None;
            };
            let s = statement_step(ctx, range, any)?;
            let thread_dependent = ctx.enclosing(range.start).iter().any(|e| {
                matches!(
                    &e.kind,
                    EnclosingKind::If { condition_range: c, thread_dependent: true, .. }
                        if c == condition_range
                )
            });
            let index_names = ctx.file.names_in(&s.index_range);
            let shares_a_name = ctx
                .file
                .names_in(condition_range)
                .iter()
                .any(|(n, _)| index_names.iter().any(|(m, _)| m == n));
            (!thread_dependent && !shares_a_name).then_some(s)
        }
        _ => None,
    }
}

/// The statement at `range` as a ladder step: it writes one subscript `X[i]` of a
/// `__shared__` array or a `volatile` pointer, and reads `X[i + k]` (`k` a power of two
/// up to 32) and perhaps `X[i]`.
fn statement_step(ctx: &RuleContext, range: &TextRange, any: bool) -> Option<Ladder> {
    if !any && !shared_write_in(ctx, range) {
        return None;
    }
    let subs = ctx.file.subscripts_in(range);
    let mut writes = subs
        .iter()
        .filter(|s| matches!(s.kind, AccessKind::Store | AccessKind::LoadStore));
    let w = writes.next()?;
    if writes.next().is_some() || w.index.unknown_reason().is_some() || w.index.constant().is_some()
    {
        return None;
    }
    let mut read = None;
    for s in subs
        .iter()
        .filter(|s| s.base == w.base && s.range != w.range)
    {
        if s.kind != AccessKind::Load {
            return None;
        }
        match offset_from(&s.index, &w.index)? {
            0 => {}
            k => {
                if read.replace((k, s)).is_some() {
                    return None;
                }
            }
        }
    }
    let (offset, read) = read?;
    if !(1..=32).contains(&offset) || offset.count_ones() != 1 {
        return None;
    }
    let volatile = ctx
        .file
        .variable_named(&w.base, range.start)
        .is_some_and(|v| v.is_volatile);
    let function = ctx.facts.function_at(range.start).map(|f| &f.name);
    let shared = ctx.facts.shared_named(&w.base, range.start).is_some()
        || ctx.facts.carves.iter().any(|c| {
            c.name == w.base && c.range.start < range.start && c.function.as_ref() == function
        });
    if !volatile && !shared {
        return None;
    }
    let plain = w
        .write
        .as_ref()
        .is_some_and(|(op, value)| op == "+=" && value.as_ref() == Some(&read.range));
    Some(Ladder {
        range: range.clone(),
        array: w.base.clone(),
        index: w.index.clone(),
        index_range: w.index_range.clone(),
        offset,
        volatile,
        plain,
    })
}

/// `k` when `read` is `write + k` (or `write` itself, 0).
fn offset_from(read: &IndexExpr, write: &IndexExpr) -> Option<i64> {
    if read == write {
        return Some(0);
    }
    match read {
        IndexExpr::Binary(a, BinOp::Add, b) if **a == *write => b.constant(),
        IndexExpr::Binary(a, BinOp::Add, b) if **b == *write => a.constant(),
        _ => None,
    }
}

/// Whether comparisons that all hold leave only lanes of the first warp: one bounds a
/// linear thread index (`threadIdx.x`, `tid` set from it) below 32 (`tid < 32`,
/// `tid <= 31`, `warpSize > tid`).
fn first_warp_only(comparisons: &[GuardComparison]) -> bool {
    comparisons.iter().any(|c| {
        let (thread, op, bound) = if c.left.depends_on_thread() {
            (&c.left, c.op.as_str(), c.right.constant())
        } else if c.right.depends_on_thread() {
            let flipped = match c.op.as_str() {
                ">" => "<",
                ">=" => "<=",
                other => other,
            };
            (&c.right, flipped, c.left.constant())
        } else {
            return false;
        };
        let linear = thread.mentions(&|e| matches!(e, IndexExpr::ThreadIdx(_)))
            && !thread.mentions(&|e| {
                matches!(
                    e,
                    IndexExpr::Lane
                        | IndexExpr::Unknown(_)
                        | IndexExpr::Binary(
                            _,
                            BinOp::Div | BinOp::Rem | BinOp::Shr | BinOp::And,
                            _
                        )
                )
            });
        linear
            && match (op, bound) {
                ("<", Some(b)) => b <= 32,
                ("<=", Some(b)) => b <= 31,
                _ => false,
            }
    })
}

fn diagnose(ctx: &RuleContext, run: &[Ladder]) -> Option<RuleDiagnostic> {
    let first = &run[0];
    // The steps cross lanes of one warp: the last one reads at most 16 lanes away.
    if run.iter().all(|s| s.offset > 16) {
        return None;
    }
    let text = ctx.text();
    let fixes = if run.iter().all(|s| s.plain) {
        let index_names = ctx.file.names_in(&first.index_range);
        let name = ["partial", "partial_sum", "kernaut_partial"]
            .into_iter()
            .find(|n| *n != first.array && index_names.iter().all(|(m, _)| m != n))?;
        let edits = run
            .iter()
            .map(|s| {
                let (x, k) = (&s.array, s.offset);
                let t = text.get(s.index_range.clone())?;
                Some(TextEdit::replace(
                    s.range.clone(),
                    format!(
                        "{{ auto {name} = {x}[{t}] + {x}[{t} + {k}]; __syncwarp(); {x}[{t}] = {name}; __syncwarp(); }}"
                    ),
                ))
            })
            .collect::<Option<Vec<_>>>()?;
        vec![Fix {
            title: "Split each step into its read and its write, with `__syncwarp()` after each"
                .to_string(),
            // It adds barriers and reorders the steps: a person should read it.
            safe: false,
            edits,
        }]
    } else {
        Vec::new()
    };
    let its = ctx.targets.independent_scheduling()?;
    // Where only a target built under a condition the build does not decide schedules
    // the lanes independently, a hint.
    let severity = if ctx.targets.is_conditional(its) {
        Severity::Hint
    } else {
        RULE.severity
    };
    Some(RuleDiagnostic {
        rule: RULE.id,
        severity,
        range: first.range.clone(),
        message: format!(
            "implicit warp-synchronous reduction: these {} steps on `{}` read what other lanes of the warp write in the same or the previous step, with no `__syncwarp()` between them; on {} (independent thread scheduling) the lanes are not in lock-step, so this is a data race even through `volatile`: put `__syncwarp()` between each read and write, or reduce in registers with `__shfl_down_sync`",
            run.len(),
            first.array,
            its
        ),
        wiki: RULE.wiki[0].to_string(),
        fixes,
    })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages, check_no_fix};

    const RULE: &str = "warp/implicit-warp-synchronous";

    /// Helpers no kernel of the file reaches are not compiled: a template nothing
    /// instantiates says nothing, a plain helper a hint that states the assumption.
    #[test]
    fn helpers_no_kernel_reaches() {
        check(
            RULE,
            r#"
template <unsigned W>
__device__ void tail_t(volatile float* s, int t) {
    if (W >= 64) s[t] += s[t + 32];
    if (W >= 32) s[t] += s[t + 16];
    if (W >= 16) s[t] += s[t + 8];
}
__device__ void tail(volatile float* s, int t) {
    s[t] += s[t + 32];
 // ^^^^^^^^^^^^^^^^^^ hint: implicit warp-synchronous reduction: these 3 steps on `s`
    s[t] += s[t + 16];
    s[t] += s[t + 8];
}
__global__ void sums(const float* in, float* out) {
    float v = in[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
"#,
        );
    }

    /// A kernel template nothing in its source file launches or instantiates (its launch
    /// commented out) has no code: its finding is a hint that says why. One launched is
    /// compiled. (In a header, the includers instantiate it: `ide/tests/templates.rs`.)
    #[test]
    fn kernel_templates_nothing_instantiates_are_hints() {
        check_messages(
            RULE,
            r#"
//- /main.cu
template <unsigned B>
__global__ void draft(const int* in, int* out) {
    extern __shared__ int s[];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * B + t];
    __syncthreads();
    if (t < 32) {
        volatile int* v = s;
        v[t] += v[t + 32];
        v[t] += v[t + 16];
        v[t] += v[t + 8];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
template <unsigned B>
__global__ void kept(const int* in, int* out) {
    extern __shared__ int s[];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * B + t];
    __syncthreads();
    if (t < 32) {
        volatile int* v = s;
        v[t] += v[t + 32];
        v[t] += v[t + 16];
        v[t] += v[t + 8];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
void run(const int* in, int* out) {
    // draft<64><<<8, 64, 256>>>(in, out);
    kept<64><<<8, 64, 256>>>(in, out);
}
"#,
            expect![[r#"
                hint: implicit warp-synchronous reduction: these 3 steps on `v` read what other lanes of the warp write in the same or the previous step, with no `__syncwarp()` between them; on sm_90 (independent thread scheduling) the lanes are not in lock-step, so this is a data race even through `volatile`: put `__syncwarp()` between each read and write, or reduce in registers with `__shfl_down_sync` (a hint only: no code this file compiles launches or instantiates the template `draft`, and nvcc emits code for a kernel template only where it is instantiated) (pitfall-warp-primitives#P7)
                warning: implicit warp-synchronous reduction: these 3 steps on `v` read what other lanes of the warp write in the same or the previous step, with no `__syncwarp()` between them; on sm_90 (independent thread scheduling) the lanes are not in lock-step, so this is a data race even through `volatile`: put `__syncwarp()` between each read and write, or reduce in registers with `__shfl_down_sync` (pitfall-warp-primitives#P7)
            "#]],
        );
    }

    /// A helper called in the arm the build as written compiles (`#else` of a test on a
    /// macro nothing defines) is reached: its steps race.
    #[test]
    fn a_helper_called_in_the_compiled_arm_is_reached() {
        check(
            RULE,
            r#"
__device__ void tail(volatile float* s, int t) {
    s[t] += s[t + 32];
 // ^^^^^^^^^^^^^^^^^^ warning: implicit warp-synchronous reduction: these 3 steps on `s`
    s[t] += s[t + 16];
    s[t] += s[t + 8];
}
__global__ void sums(const float* in, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
#if (MY_RUNTIME_VERSION >= 9000)
    float v = s[t];
#else
    if (t < 32) tail(s, t);
#endif
    if (t == 0) out[blockIdx.x] = s[0];
}
"#,
        );
    }

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
    fn shared_array_under_a_first_warp_branch() {
        // A `__shared__` array without `volatile`, the branch written on the thread index
        // itself, a comment and a blank line between the steps: the statements decide.
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float s[64];
    if (threadIdx.x < warpSize) {
        s[threadIdx.x] = s[threadIdx.x] + s[threadIdx.x + 16];
     // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: implicit warp-synchronous reduction: these 3 steps on `s`
        // halve again

        s[threadIdx.x] = s[threadIdx.x] + s[threadIdx.x + 8];
        s[threadIdx.x] = s[threadIdx.x] + s[threadIdx.x + 4];
    }
    out[threadIdx.x] = s[threadIdx.x];
}
"#,
        );
    }

    #[test]
    fn branches_of_more_than_one_warp_and_lane_conditions_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(float* out, float* g) {
    __shared__ float s[128];
    unsigned tid = threadIdx.x;
    if (tid < 64) {
        s[tid] += s[tid + 16];
        s[tid] += s[tid + 8];
    }
    if (tid < 32) {
    } else {
        s[tid] += s[tid + 16];
        s[tid] += s[tid + 8];
    }
    if (tid % 32 < 16) {
        s[tid] += s[tid + 16];
        s[tid] += s[tid + 8];
    }
    if (tid < 32) {
        // Not shared memory, not volatile.
        g[tid] += g[tid + 16];
        g[tid] += g[tid + 8];
        // The condition tells the lanes apart: the steps do not all run together.
        if (tid < 16) s[tid] += s[tid + 16];
        if (tid < 8) s[tid] += s[tid + 8];
        // Increasing offsets: no ladder.
        s[tid] += s[tid + 8];
        s[tid] += s[tid + 16];
    }
    out[tid] = s[tid];
}
"#,
        );
    }

    #[test]
    fn volatile_in_a_comment_or_on_another_variable_is_no_volatile_pointer() {
        check(
            RULE,
            r#"
__device__ void warp_sum(float* g, int tid) {
    // volatile float* v = g; (not any more)
    volatile int done = 0;
    g[tid] += g[tid + 16];
    g[tid] += g[tid + 8];
    done = 1;
}
"#,
        );
    }

    #[test]
    fn volatile_local_pointer_with_an_offset_index() {
        check(
            RULE,
            r#"
__device__ void warp_sum(float* buf, int base) {
    volatile float* v = buf;
    int i = base + threadIdx.x;
    v[i] += v[i + 16];
 // ^^^^^^^^^^^^^^^^^^ warning: implicit warp-synchronous reduction: these 2 steps on `v`
    v[i] += v[i + 8];
    __syncwarp();
    v[i] += v[i + 4];
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
        // Steps under a block-size guard keep it; a name the index uses is not taken.
        check_fix(
            RULE,
            r#"
template <unsigned blockSize>
__device__ void warpReduce(volatile float* s, int partial) {
    if (blockSize >= 64) s[partial] += s[partial + 32];
    if (blockSize >= 32) s[partial] += s[partial + 16];
}
"#,
            0,
            expect![[r#"
                // Split each step into its read and its write, with `__syncwarp()` after each
                template <unsigned blockSize>
                __device__ void warpReduce(volatile float* s, int partial) {
                    if (blockSize >= 64) { auto partial_sum = s[partial] + s[partial + 32]; __syncwarp(); s[partial] = partial_sum; __syncwarp(); }
                    if (blockSize >= 32) { auto partial_sum = s[partial] + s[partial + 16]; __syncwarp(); s[partial] = partial_sum; __syncwarp(); }
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
