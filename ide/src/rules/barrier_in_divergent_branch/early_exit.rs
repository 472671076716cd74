//! Thread-dependent early exits before a block barrier: `return` ahead of a barrier in
//! the same function, `continue` ahead of a barrier later in the loop body, and `break`
//! out of a loop that holds a barrier, each under an `if` on the thread index.
//!
//! A `return` from a kernel ends the thread, and PTX `bar.sync` waits only for threads
//! that have not exited (the `exit` instruction releases a barrier held up only by exiting
//! threads), so it does not hang on today's hardware; it is reported as a hint, for the
//! programming guide's rule, which says the exited threads skip shared-memory work only
//! where a shared store follows the exit (what they stored before leaving is done). A
//! `return` from a `__device__` function, a `continue` and a `break` leave the thread
//! alive past the barrier it skipped: a warning, but for a `break` in a kernel after
//! whose loop the thread meets no block barrier again (it goes on to exit: a hint).

use kernaut_syntax::{AccessKind, ControlFlow, EnclosingKind, JumpKind};

use super::super::barriers::{divergent_branch, Barrier, BarrierScope};
use super::{RuleContext, RuleDiagnostic, RULE};
use crate::config::Severity;

/// Reports the early exits of the function whose control flow is `flow` and whose
/// barriers (in document order) are `barriers`; `block` is the block every launch of the
/// kernel gives, where known.
pub(super) fn check(
    ctx: &RuleContext,
    flow: &ControlFlow,
    barriers: &[Barrier],
    block: Option<[u32; 3]>,
    errors: &std::cell::OnceCell<Vec<kernaut_syntax::TextRange>>,
    out: &mut Vec<RuleDiagnostic>,
) {
    let all = barriers;
    let barriers: Vec<&Barrier> = barriers
        .iter()
        .filter(|b| b.scope == BarrierScope::Block)
        .collect();
    if barriers.is_empty() {
        return;
    }
    let text = ctx.text();
    let function = ctx.facts.function_at(flow.body.start);
    let in_kernel = function.is_some_and(|f| f.is_kernel);
    // A device function whose callers (all kernels) meet no block barrier after the call:
    // its early-returning threads go on to exit, as after a kernel `return`.
    let mut after: Option<CallersAfter> = None;
    let mut callers = || {
        after
            .get_or_insert_with(|| match function {
                Some(f) => callers_after(ctx, &f.name),
                None => CallersAfter::Continue,
            })
            .clone()
    };
    for jump in &flow.jumps {
        let at = jump.range.start;
        // What the jump leaves: the loop of a `continue` or `break` (a `break` out of a
        // `switch` stays in the iteration), or the function.
        let left = match (jump.kind, &jump.target) {
            (JumpKind::Return, _) => flow.body.clone(),
            (_, Some(t)) if !jump.leaves_switch => t.clone(),
            _ => continue,
        };
        // The branch that makes the exit thread-dependent, inside what is left.
        let Some((branch, condition)) = divergent_branch(ctx, at, BarrierScope::Block, block)
        else {
            continue;
        };
        if !left.contains(&branch.start) || branch.start == left.start {
            continue;
        }
        // The barrier the leaving threads miss and the others reach after the branch:
        // for `continue`, later in the same iteration; for `break`, in the loop; for
        // `return`, anywhere after.
        let missed = barriers.iter().find(|b| {
            let b = b.range.start;
            match jump.kind {
                JumpKind::Return => flow.reaches_after(&branch, b, None),
                JumpKind::Continue => {
                    left.contains(&b) && flow.reaches_after(&branch, b, Some(&left))
                }
                // Out of `do { … } while (0)` the thread goes on after it, where the
                // others are going too: it misses the barriers left in the block.
                JumpKind::Break if flow.runs_once(&left) => {
                    left.contains(&b) && flow.reaches_after(&branch, b, Some(&left))
                }
                JumpKind::Break => left.contains(&b) && flow.reaches_after(&branch, b, None),
            }
        });
        let Some(missed) = missed else {
            continue;
        };
        // A branch that returns after arriving at the block barriers as often as the
        // rest of the function does pairs up with it: nothing is missed.
        if matches!(jump.kind, JumpKind::Return | JumpKind::Continue)
            && flow.branches(&branch).is_some_and(|(then, other)| {
                other.is_none()
                    && super::returning_branch_balanced(ctx, flow, &branch, &then, missed, all)
            })
        {
            continue;
        }
        if !super::parsed_cleanly(ctx, &(branch.start..missed.range.end.max(at)), errors) {
            continue;
        }
        let written: String = text[missed.range.clone()].split_whitespace().collect();
        let guard = format!("guard the work instead (`if (!({condition})) {{ ... }}`)");
        // Said only where the exited threads do skip shared-memory work the others do
        // before the barrier: their stores made before the `return` are done.
        // The last barrier the others reach after the branch: the work before any of
        // the barriers they meet is the exited threads' to skip.
        let last = barriers
            .iter()
            .rev()
            .find(|b| flow.reaches_after(&branch, b.range.start, None))
            .map_or(&missed.range, |b| &b.range);
        let skipped = (jump.kind == JumpKind::Return && skips_shared_work(ctx, &jump.range, last))
            .then_some("their part of the shared-memory work before the barrier is never done");
        let (but, and) = match skipped {
            Some(s) => (format!(", but {s}"), format!(", and {s}")),
            None => (String::new(), String::new()),
        };
        let (severity, message) = match jump.kind {
            // The thread exits. PTX `exit` releases a block barrier that only exited
            // threads hold up, so this does not hang today, but it is outside what the
            // programming guide allows, and the work of the exited threads is not done.
            JumpKind::Return if in_kernel => (
                Severity::Hint,
                format!(
                    "`return` under `if ({condition})` ends some threads of the block before `{written}`: the CUDA programming guide allows a block barrier only where every thread of the block reaches it; today the hardware lets the barrier complete without the exited threads (PTX `exit` releases a barrier held up only by exited threads){but}; keep every thread to the barrier and {guard}"
                ),
            ),
            JumpKind::Return => match callers() {
                CallersAfter::Exit(kernels) => (
                    Severity::Hint,
                    format!(
                        "`return` under `if ({condition})` leaves this device function for some threads of the block before `{written}`, and its caller `{kernels}` meets no block barrier after the call, so they go on to exit as after a kernel `return`: today the hardware lets the barrier complete without them (PTX `exit` releases a barrier held up only by exited threads), but the CUDA programming guide allows a block barrier only where every thread of the block reaches it{and}; keep every thread to the barrier and {guard}"
                    ),
                ),
                CallersAfter::Unknown => (
                    Severity::Hint,
                    format!(
                        "`return` under `if ({condition})` leaves this device function for some threads of the block before `{written}` ({}); keep every thread to the barrier and {guard}",
                        unknown_callers_assumption(function.map_or("", |f| f.name.as_str()))
                    ),
                ),
                CallersAfter::Continue => (
                    RULE.severity,
                    format!(
                        "`return` under `if ({condition})` leaves this device function for some threads of the block, which skip `{written}` below but keep running in the caller: a block barrier that not every live thread reaches is undefined behaviour (the block can hang, or this barrier pairs with a later one); keep every thread to the barrier and {guard}"
                    ),
                ),
            },
            JumpKind::Break | JumpKind::Continue if flow.runs_once(&left) => (
                RULE.severity,
                format!(
                    "`{}` under `if ({condition})` leaves the `do {{ … }} while (0)` block for some threads of the block, which go on after it and skip `{written}` that the others reach in the block: a block barrier that not every live thread reaches is undefined behaviour (the block can hang, or the barriers pair up wrongly); keep every thread to the barrier and {guard}",
                    if jump.kind == JumpKind::Break { "break" } else { "continue" }
                ),
            ),
            JumpKind::Continue => (
                RULE.severity,
                format!(
                    "`continue` under `if ({condition})` skips `{written}` later in this iteration for some threads of the block, which stay alive and reach the barrier of the next iteration instead: a block barrier that not every live thread reaches is undefined behaviour (the block can hang, or the barriers pair up wrongly); keep every thread to the barrier and {guard}"
                ),
            ),
            // Out of the loop the leaving threads meet no block barrier again (none after
            // it, no loop around it holding one) and go on to exit, as after a `return`.
            JumpKind::Break
                if in_kernel
                    && !barriers.iter().any(|b| {
                        flow.reaches_after(&left, b.range.start, None)
                            && !guarded_from(ctx, b.range.start, &left, &branch, block)
                    }) =>
            {
                (
                    Severity::Hint,
                    format!(
                        "`break` under `if ({condition})` leaves the loop for some threads of the block before `{written}`; they meet no block barrier after the loop and go on to exit, as after a `return`: today the hardware lets the barrier complete without them (PTX `exit` releases a barrier held up only by exited threads), but the CUDA programming guide allows a block barrier only where every thread of the block reaches it; keep every thread in the loop and {guard}"
                    ),
                )
            }
            JumpKind::Break => (
                RULE.severity,
                format!(
                    "`break` under `if ({condition})` leaves the loop for some threads of the block, which stay alive and miss `{written}` in every later iteration: a block barrier that not every live thread reaches is undefined behaviour (the block can hang, or the barriers pair up wrongly); keep every thread in the loop and {guard}"
                ),
            ),
        };
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity,
            range: jump.range.clone(),
            message,
            wiki: RULE.wiki[0].to_string(),
            fixes: Vec::new(),
        });
    }
}

/// Whether the barrier at `at`, after the loop `left`, lies in an `if` (after the loop)
/// whose condition no thread that takes the exit branch `branch` satisfies: `if
/// (threadIdx.x == 0) { …; __syncthreads(); }` after `if (threadIdx.x >= active) break;`
/// in a loop whose `active` stays at least 1. Those threads never meet it.
fn guarded_from(
    ctx: &RuleContext,
    at: usize,
    left: &kernaut_syntax::TextRange,
    branch: &kernaut_syntax::TextRange,
    block: Option<[u32; 3]>,
) -> bool {
    let Some(exit) = super::if_condition(ctx, branch) else {
        return false;
    };
    ctx.enclosing(at).iter().any(|e| match &e.kind {
        EnclosingKind::If {
            condition_range,
            in_else: false,
            ..
        } if e.range.start >= left.end => {
            super::super::barriers::excludes(ctx, condition_range, &exit, block)
        }
        _ => false,
    })
}

/// Whether the threads that leave at `jump` skip shared-memory work that the others do
/// before a barrier they reach after it (`last`, the last such barrier in the function
/// as written): a store, an update or a taken address (`cp.async`, an atomic) of a
/// `__shared__` array or variable after the exit and before `last`, or, where a loop
/// around the exit brings the others back to a barrier written before it, anywhere in
/// that loop. What a thread stored before it left is done.
fn skips_shared_work(
    ctx: &RuleContext,
    jump: &kernaut_syntax::TextRange,
    last: &kernaut_syntax::TextRange,
) -> bool {
    let region = if last.start >= jump.end {
        jump.end..last.start
    } else {
        let chain = ctx.enclosing(jump.start);
        let around = chain.iter().find(|e| {
            matches!(
                e.kind,
                EnclosingKind::For { .. }
                    | EnclosingKind::While { .. }
                    | EnclosingKind::DoWhile { .. }
            ) && e.range.contains(&last.start)
        });
        match around {
            Some(e) => e.range.clone(),
            None => return false,
        }
    };
    let inside = |r: &kernaut_syntax::TextRange| region.start <= r.start && r.end <= region.end;
    let arrays = ctx
        .shared_accesses()
        .iter()
        .any(|a| a.kind != AccessKind::Load && inside(&a.range));
    // A `__shared__` scalar assigned (`valOffs = sums[b];`) is no subscript.
    arrays
        || ctx.facts.shared.iter().any(|d| {
            ctx.file
                .variable_named(&d.name, region.end)
                .is_some_and(|v| {
                    ctx.file
                        .uses_of(&v)
                        .iter()
                        .any(|u| (u.write.is_some() || u.address_of) && inside(&u.range))
                })
        })
}

/// What the callers of a device function do after the call, as far as the file shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum CallersAfter {
    /// Every call of it in the file is in a kernel whose control flow meets no block
    /// barrier after the call: those kernels, joined with `` `, ` ``.
    Exit(String),
    /// No call of it is in the file (its callers are elsewhere, or call it through an
    /// object or a pointer), or a caller is itself a device function: what happens after
    /// the call is not known.
    Unknown,
    /// A kernel meets a block barrier after calling it.
    Continue,
}

/// What the callers of the device function `name` do after the call ([`CallersAfter`]).
pub(super) fn callers_after(ctx: &RuleContext, name: &str) -> CallersAfter {
    let short = name.rsplit("::").next().unwrap_or(name);
    let calls = ctx.file.find_calls(short);
    if calls.is_empty() {
        return CallersAfter::Unknown;
    }
    let mut kernels: Vec<String> = Vec::new();
    let mut unknown = false;
    for call in &calls {
        let Some(caller) = ctx.facts.function_at(call.range.start) else {
            unknown = true;
            continue;
        };
        if !caller.is_kernel {
            unknown = true;
            continue;
        }
        let Some(flow) = ctx.file.control_flow(call.range.start) else {
            unknown = true;
            continue;
        };
        let barriers = super::super::barriers::barriers(ctx, &ctx.calls_in_body(flow.body.start));
        let met = barriers.iter().any(|b| {
            b.scope == BarrierScope::Block && flow.reaches_after(&call.range, b.range.start, None)
        });
        if met {
            return CallersAfter::Continue;
        }
        if !kernels.contains(&caller.name) {
            kernels.push(caller.name.clone());
        }
    }
    if unknown {
        CallersAfter::Unknown
    } else {
        CallersAfter::Exit(kernels.join("`, `"))
    }
}

/// The assumption a finding on a device function whose callers are not known states.
pub(super) fn unknown_callers_assumption(name: &str) -> String {
    let short = name.rsplit("::").next().unwrap_or(name);
    format!(
        "assuming no caller of `{short}` meets a block barrier after the call: the file shows no kernel calling it directly (its callers are elsewhere, or call it through an object, a pointer or another device function); if one does, the threads that left would arrive at that later barrier while the others wait at this one, and the two would pair up wrongly"
    )
}
