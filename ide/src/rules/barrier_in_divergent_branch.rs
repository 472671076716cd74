//! `sync/barrier-in-divergent-branch`: a barrier reached only by the threads that take a
//! branch on the thread index, for every barrier scope.
//!
//! A barrier must be reached by every thread of its scope; inside `if (tid < n)` the
//! other threads never arrive, and the block hangs or the barrier silently misbehaves
//! (`pitfall-synchronization#P1`). The scopes (`sema::context::barriers`): the block
//! (`__syncthreads()`, `__syncthreads_and/or/count`, `this_thread_block().sync()`,
//! `cooperative_groups::sync(block)`, `bar.sync 0` in `asm`), a tile or the warp
//! (`tile.sync()` of a `thread_block_tile`, `__syncwarp()` with a full mask: only a
//! condition whose lowered value splits the lanes of a warp or tile matters, and one that
//! splits them only for some values of a parameter, `tid < n`, stays silent), the
//! cluster and the grid
//! (`grid.sync()`: a condition on `blockIdx` splits it too). The message names the scope.
//! Named barriers with a thread count (`bar.sync id, count`), `__syncwarp(mask)` with a
//! partial or unknown mask, coalesced groups and barriers under conditions that do not
//! depend on the thread stay silent, and so do:
//! - an `if` whose branches arrive at barriers of the scope equally often
//!   (`sema::context::barriers::arrivals`): warp-specialised code whose producer and
//!   consumer sides each run loops of the same trip count (constant, or the same header
//!   over values no thread changes) around their barriers, and `else if` chains whose
//!   arms each arrive as often; where both sides hold barriers but how often they arrive
//!   is not known, the rule stays silent too. Sides known to arrive a different number of
//!   times get a message that says so;
//! - a guard that the known launch makes the same for every thread (`if (threadIdx.x <
//!   256)` in a kernel every launch of which has 256 threads).
//!
//! Where the threads that skip the branch meet no block barrier after it and do no work
//! the barrier orders (what follows touches no array the branch touches), they go on to
//! exit, as after a `return`: a hint. In a loop, a guard that stays false for a thread
//! once it is (`off < n` with `off` only moved up, by a tile or a grid stride) keeps the
//! skipping threads out of every later iteration, so the loop is the branch.
//!
//! There is no automatic fix: the work inside the branch must be split around a barrier
//! that all threads reach.
//!
//! The same holds for a thread-dependent early exit before a block barrier (see
//! `early_exit.rs`), read off the function's control flow (`ControlFlow` of the syntax
//! crate): a `continue` ahead of a barrier later in its own loop's iteration, a `break`
//! out of a loop that holds a barrier, or a `return` from a `__device__` function ahead of
//! a barrier the other threads still reach (warnings: the threads stay alive and miss the
//! barrier); and `if (i >= n) return;` in a kernel ahead of `__syncthreads()` (a hint:
//! exited threads do not hold up `bar.sync`, but the guide forbids it, and where
//! shared-memory stores follow the exit their share of that work is skipped). A barrier
//! in the other branch of an `if`, or after an unconditional `return`, is not reached
//! and stays silent. Thread dependence follows local variables computed from
//! `threadIdx` (`int i = blockIdx.x * N + tx;` with `tx = threadIdx.x`); conditions on
//! `blockIdx`, parameters and template parameters alone are uniform for a block
//! barrier.
//!
//! ```cuda
//! // Before
//! if (tid < s) { sdata[tid] += sdata[tid + s]; __syncthreads(); }
//! // After
//! if (tid < s) sdata[tid] += sdata[tid + s];
//! __syncthreads();
//! ```

use kernaut_syntax::{ControlFlow, LaterKind};

mod early_exit;
use super::barriers::{
    arrivals, arrivals_of_statements, barriers, calls_a_synchronising_helper, certain_block,
    divergent_branch, if_condition, implies, implies_where_split, launched_blocks, reads_only_rows,
    stays_false_in_loop, ArrivalCount, Barrier, BarrierScope,
};
use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("barrier_in_divergent_branch.rs"),
    id: "sync/barrier-in-divergent-branch",
    severity: Severity::Warning,
    wiki: &["pitfall-synchronization#P1"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    if !ctx.text().contains("sync") {
        return;
    }
    let bodies = ctx.bodies_mentioning(&["sync"]);
    ctx.prefetch_calls(&bodies);
    let errors = std::cell::OnceCell::new();
    for body in bodies {
        let found = barriers(ctx, &ctx.calls_in_body(body.start));
        if found.is_empty() {
            continue;
        }
        let Some(flow) = ctx.file.control_flow(body.start) else {
            continue;
        };
        let block = certain_block(ctx, body.start);
        for b in &found {
            // The innermost branch that splits the threads and whose sides do not arrive
            // at the scope's barriers equally often (a balanced one hands the question to
            // the branch around it).
            let mut at = b.range.start;
            let found_branch = loop {
                let Some((branch, condition)) = divergent_branch(ctx, at, b.scope, block) else {
                    break None;
                };
                if !balanced(ctx, &flow, &branch, b, &found)
                    && !else_if_excludes(ctx, &flow, &branch, b, block)
                {
                    break Some((branch, condition));
                }
                match branch.start.checked_sub(1) {
                    Some(before) if before > flow.body.start => at = before,
                    _ => break None,
                }
            };
            let Some((branch, condition)) = found_branch else {
                continue;
            };
            if !parsed_cleanly(ctx, &(branch.start..b.range.end), &errors) {
                continue;
            }
            let written: String = ctx.text()[b.range.clone()]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let (threads, barrier) = (b.scope.threads(), b.scope.barrier());
            // The threads that skip the branch meet no block barrier after it (nor in an
            // `else`), and the function is a kernel, or a device function its kernels
            // call last: they go on to exit, as after `if (!(cond)) return;`, which the
            // hardware lets the barrier complete without (see `early_exit.rs`).
            let exit = matches!(b.scope, BarrierScope::Block | BarrierScope::Warp)
                .then(|| skippers_exit(ctx, &flow, &branch, &found))
                .flatten();
            // A warp barrier waits only for the lanes of its mask that have not exited
            // (the CUDA programming guide, `__syncwarp`): lanes that skip the branch and
            // exit leave nothing to wait for.
            if b.scope == BarrierScope::Warp
                && exit == Some(None)
                && ctx.text()[b.range.clone()]
                    .trim_start()
                    .starts_with("__syncwarp")
            {
                continue;
            }
            let exit = exit.filter(|_| b.scope == BarrierScope::Block);
            if let Some(assumption) = exit {
                let assumption = assumption.map(|a| format!(" ({a})")).unwrap_or_default();
                out.push(RuleDiagnostic {
                    rule: RULE.id,
                    severity: Severity::Hint,
                    range: b.range.clone(),
                    message: format!(
                        "`{written}` inside `if ({condition})`: the threads of the block that skip the branch meet no block barrier after it and go on to exit, as after `if (!({condition})) return;`{assumption}; today the hardware lets the barrier complete without them (PTX `exit` releases a barrier held up only by exited threads), but the CUDA programming guide allows a block barrier only where every thread of the block reaches it; keep the barrier where every thread reaches it and guard only the work"
                    ),
                    wiki: RULE.wiki[0].to_string(),
                    fixes: Vec::new(),
                });
                continue;
            }
            // (Within a warp, `divergent_branch` gives only a condition whose lowered
            // value splits the lanes: `warp_id = threadIdx.x / 32` and what is computed
            // from it does not.)
            // `threadIdx.y` (or `.z`) is the same for a whole warp when `blockDim.x` is a
            // multiple of 32 (a known launch that says so made the branch uniform above;
            // one of several launches that gives a narrower block splits warps).
            // The lowered condition tells (`ty == 3` with `ty = threadIdx.y`); one that
            // does not lower is read by the names it writes.
            let rows_only = block.is_none()
                && b.scope.within_warp()
                && launched_blocks(ctx, b.range.start)
                    .iter()
                    .all(|l| l[0] % 32 == 0)
                && if_condition(ctx, &branch)
                    .and_then(|r| reads_only_rows(ctx, &r))
                    .unwrap_or_else(|| {
                        let names_lane = ["threadIdx.x", "lane", "thread_rank", "laneid"]
                            .iter()
                            .any(|w| condition.contains(w));
                        !names_lane && condition.contains("threadIdx")
                    });
            let (severity, assumption) = if b.scope.within_warp() && rows_only {
                (
                    Severity::Hint,
                    format!(
                        " (assuming `blockDim.x` is not a multiple of 32: `{condition}` reads the thread index only through `threadIdx.y`/`threadIdx.z`, which is the same for the lanes of a warp when it is, and no launch in sight fixes the block)"
                    ),
                )
            } else {
                (RULE.severity, String::new())
            };
            // Both sides hold barriers of the scope, but arrive at them unequally often
            // (`balanced` found the counts differ).
            let both_sides = flow
                .branches(&branch)
                .and_then(|(then, other)| Some((then, other?)))
                .is_some_and(|(then, other)| {
                    let holds = |r: &kernaut_syntax::TextRange| {
                        found
                            .iter()
                            .any(|x| x.scope == b.scope && r.contains(&x.range.start))
                    };
                    holds(&then) && holds(&other)
                });
            let what = if both_sides {
                format!(
                    "both sides of the branch reach {barrier}s, but their threads arrive at them a different number of times, so the barriers pair up wrongly and {threads} can hang or synchronise the wrong threads; make each side arrive as often, or move the barriers out of the branch"
                )
            } else {
                format!(
                    "threads of {threads} that skip the branch never reach the {barrier}, so {threads} can hang or synchronise the wrong threads; move the barrier out of the branch"
                )
            };
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity,
                range: b.range.clone(),
                message: format!("`{written}` inside `if ({condition})`: {what}{assumption}"),
                wiki: RULE.wiki[0].to_string(),
                fixes: Vec::new(),
            });
        }
        early_exit::check(ctx, &flow, &found, block, &errors, out);
    }
}

/// Whether the threads that skip the `if` at `branch` go on to exit without doing
/// anything more: the `if` is the rest of the function (nothing but a `return` follows
/// it, no loop holds it, or it is the whole body of a loop that changes nothing its
/// condition reads, and that loop is the rest of the function), none of the function's block barriers (`all`) lies in its
/// `else`, and the function is a kernel, or a device function whose every call is in a
/// kernel that meets no block barrier after the call. Threads that skip a barrier and
/// then go on working are not ordered by it: that stays a warning. `Some(None)` when the
/// code shows it, `Some(Some(assumption))` for a device function no kernel in the file
/// calls (its callers are assumed to meet no barrier after the call), `None` otherwise.
fn skippers_exit(
    ctx: &RuleContext,
    flow: &ControlFlow,
    branch: &kernaut_syntax::TextRange,
    all: &[Barrier],
) -> Option<Option<String>> {
    // An `if` in the body of a loop, on a condition that stays false for a thread once it
    // is (no name in it is assigned in the loop, or one side only moves away from holding:
    // `off < n` with `off += TILE`; no memory or call is read), is skipped by the same
    // threads in every later iteration: for them the loop is the branch, and what
    // follows it is what they run next.
    // An `else` that only returns (`else { return; }`): the skipping threads leave at
    // once, whatever follows the `if` (in a `switch` case, a loop).
    use kernaut_syntax::{JumpKind, StatementShape};
    let is_return = |r: &kernaut_syntax::TextRange| {
        matches!(flow.shape(r), Some(StatementShape::Jump(JumpKind::Return)))
    };
    let else_returns = flow
        .branches(branch)
        .and_then(|(_, other)| other)
        .is_some_and(|o| match flow.shape(&o) {
            Some(StatementShape::Block(inside)) => matches!(&inside[..], [only] if is_return(only)),
            _ => is_return(&o),
        });
    if else_returns {
        let f = ctx.facts.function_at(flow.body.start)?;
        if f.is_kernel {
            return Some(None);
        }
    }
    let mut after = branch.clone();
    // (The condition's loads are looked for only where the `if` is in a loop body.)
    if let Some(cond) = if_condition(ctx, branch)
        .filter(|_| flow.loop_with_body(branch).is_some())
        .filter(|c| ctx.file.condition_loads(c).is_empty() && !calls_inside(ctx, c))
    {
        // The body's other statements are run by the skipping threads too: only local
        // declarations and assignments that touch no memory and call nothing.
        let harmless = |r: &kernaut_syntax::TextRange| {
            (ctx.file.is_declaration(r) || ctx.file.is_local_assignment(r))
                && touches_no_memory(ctx, r)
        };
        while let Some((l, others)) = flow.loop_with_body(&after) {
            if !others.iter().all(harmless) || !stays_false_in_loop(ctx, &cond, &l, &others) {
                break;
            }
            after = l;
        }
    }
    let branch_if = branch;
    let branch = &after;
    // After the branch the skipping threads run nothing more of the function (the branch
    // ends it), or only statements guarded by conditions that hold in no skipping thread
    // (`if (t == 0) out[b] = s[0];` after `if (t < 32) { ... }`): they do no work the
    // barrier should have ordered, and go on to exit. Work after the branch that they do
    // run (`atomicAdd(&out[i / 2], in[i])` after `if (even) { out[i] = 0; barrier }`) was
    // meant to wait for the barrier: that stays a warning.
    // Later `if`s whose condition holds in no skipping thread: their barriers are met by
    // the other threads only.
    let mut skipped_later: Vec<kernaut_syntax::TextRange> = Vec::new();
    if !flow.ends_after(branch) {
        let mut later = flow.runs_after(branch)?;
        let condition = if_condition(ctx, branch_if)?;
        let block = certain_block(ctx, branch_if.start);
        // A preprocessor conditional stands for the statements of all its arms (one of
        // them is compiled; each must hold).
        let mut i = 0;
        while i < later.len() {
            match ctx.file.conditional_statements(&later[i].range) {
                Some(inner) if later[i].kind == LaterKind::Other => {
                    later.splice(i..=i, inner.iter().cloned());
                }
                _ => i += 1,
            }
        }
        for s in &later {
            match s.kind {
                LaterKind::Return => break,
                // Work that shares no array with the branch (`out[b] = total;` after a
                // loop over `keys` and `part`) is nothing the barrier orders for them.
                _ if apart_from(ctx, &s.range, branch) => {
                    if s.kind == LaterKind::IfWithoutElse {
                        skipped_later.push(s.range.clone());
                    }
                }
                LaterKind::IfWithoutElse => {
                    let guard = if_condition(ctx, &s.range)?;
                    if !implies_where_split(ctx, &guard, &condition, block) {
                        return None;
                    }
                    skipped_later.push(s.range.clone());
                }
                // A local declared or assigned from what touches no memory is no work
                // a barrier orders (`m = rows - 1 - blockDim.y;`).
                LaterKind::Other
                    if (ctx.file.is_declaration(&s.range)
                        || ctx.file.is_local_assignment(&s.range))
                        && touches_no_memory(ctx, &s.range) => {}
                LaterKind::Other => return None,
            }
        }
    }
    let other = flow.branches(branch_if).and_then(|(_, other)| other);
    let met = all.iter().any(|x| {
        x.scope == BarrierScope::Block
            && !skipped_later.iter().any(|r| r.contains(&x.range.start))
            && (flow.reaches_after(branch, x.range.start, None)
                || other.as_ref().is_some_and(|o| o.contains(&x.range.start)))
    });
    if met {
        return None;
    }
    let f = ctx.facts.function_at(flow.body.start)?;
    if f.is_kernel {
        return Some(None);
    }
    match early_exit::callers_after(ctx, &f.name) {
        early_exit::CallersAfter::Exit(_) => Some(None),
        early_exit::CallersAfter::Unknown => {
            Some(Some(early_exit::unknown_callers_assumption(&f.name)))
        }
        early_exit::CallersAfter::Continue => None,
    }
}

/// Whether the statement at `r` reads and writes no shared or global memory and calls
/// nothing.
fn touches_no_memory(ctx: &RuleContext, r: &kernaut_syntax::TextRange) -> bool {
    ctx.shared_accesses_from(r.clone())
        .iter()
        .all(|a| !r.contains(&a.range.start))
        && ctx
            .file
            .global_accesses()
            .iter()
            .all(|a| !r.contains(&a.range.start))
        && !calls_inside(ctx, r)
}

/// Whether the statement at `later` touches no shared memory, calls nothing, holds no
/// barrier, and reads or writes only global arrays that `branch` (the skipped branch, or
/// the loop around it) does not touch: nothing a barrier in `branch` orders.
fn apart_from(
    ctx: &RuleContext,
    later: &kernaut_syntax::TextRange,
    branch: &kernaut_syntax::TextRange,
) -> bool {
    if calls_inside(ctx, later)
        || ctx
            .shared_accesses_from(later.clone())
            .iter()
            .any(|a| later.contains(&a.range.start))
    {
        return false;
    }
    let global = ctx.file.global_accesses();
    let in_branch: Vec<&str> = global
        .iter()
        .filter(|a| branch.contains(&a.range.start))
        .map(|a| a.root.as_str())
        .collect();
    global
        .iter()
        .filter(|a| later.contains(&a.range.start))
        .all(|a| !in_branch.contains(&a.root.as_str()))
}

/// Whether a call lies inside `r` (a condition, a statement).
fn calls_inside(ctx: &RuleContext, r: &kernaut_syntax::TextRange) -> bool {
    ctx.file
        .calls_in(r.start)
        .iter()
        .any(|c| r.contains(&c.range.start))
}

/// Whether the file parses without an error in `range`: where the parser lost its way
/// (`#if` inside an expression, an unknown macro), which statement holds the barrier is
/// not known, and the rule stays silent. The errors are listed once per run, when a
/// finding first asks.
fn parsed_cleanly(
    ctx: &RuleContext,
    range: &kernaut_syntax::TextRange,
    errors: &std::cell::OnceCell<Vec<kernaut_syntax::TextRange>>,
) -> bool {
    let errors = errors.get_or_init(|| ctx.file.errors().into_iter().map(|e| e.range).collect());
    !errors
        .iter()
        .any(|e| e.start < range.end && range.start <= e.end)
}

/// Whether the threads on either side of the `if` at `branch` arrive at barriers of `b`'s
/// scope equally often ([`arrivals`]): each barrier (one hardware barrier per scope,
/// counted by arrivals) then completes with every thread. Warp-specialised code runs
/// `if (warp < P) { for (k…) { …; sync } } else { for (k…) { sync; … } }`: loops with
/// the same constant trip count, or the same header over values no thread changes, pair
/// up, and so do the arms of an `else if` chain that each arrive as often. Where both
/// sides arrive but how often is not known (a loop over a thread-dependent bound, a jump
/// out past a barrier), the finding would rest on an unknown: it counts as balanced
/// (silent). Counts known to differ, or one side with no barrier, are not balanced.
fn balanced(
    ctx: &RuleContext,
    flow: &ControlFlow,
    branch: &kernaut_syntax::TextRange,
    b: &Barrier,
    all: &[Barrier],
) -> bool {
    let Some((then, other)) = flow.branches(branch) else {
        return false;
    };
    let Some(other) = other else {
        return returning_branch_balanced(ctx, flow, branch, &then, b, all)
            || roles_balanced(ctx, flow, branch, &then, b, all);
    };
    let holds = |r: &kernaut_syntax::TextRange| holds_barrier(ctx, r, b, all);
    match (
        arrivals(ctx, flow, &then, b.scope, all),
        arrivals(ctx, flow, &other, b.scope, all),
    ) {
        (ArrivalCount::Known(x), ArrivalCount::Known(y)) => !x.is_empty() && x == y,
        (ArrivalCount::Varies, _) | (_, ArrivalCount::Varies) => false,
        _ => holds(&then) && holds(&other),
    }
}

/// Whether the barrier `b` sits in the `else if (B)` of the branch at `branch` (`if (A)
/// … else if (B) { …; sync; }`), where `B` splits none of the threads of the barrier's
/// scope (the search for a dividing branch passed over it) and no thread for which `B`
/// holds takes `A` (`wg == 1` after `wg == 0 && tid == 0`): the threads that reach the
/// barrier are those of `B`, whole warps or blocks, which `A` does not divide.
fn else_if_excludes(
    ctx: &RuleContext,
    flow: &ControlFlow,
    branch: &kernaut_syntax::TextRange,
    b: &Barrier,
    block: Option<[u32; 3]>,
) -> bool {
    use super::barriers::excludes;
    let Some((_, Some(other))) = flow.branches(branch) else {
        return false;
    };
    if !other.contains(&b.range.start) {
        return false;
    }
    match (if_condition(ctx, branch), if_condition(ctx, &other)) {
        (Some(a), Some(arm)) => excludes(ctx, &arm, &a, block),
        _ => false,
    }
}

/// The statements of the function body's own block, where `branch` is one of them.
fn body_holding(
    flow: &ControlFlow,
    branch: &kernaut_syntax::TextRange,
) -> Option<Vec<kernaut_syntax::TextRange>> {
    match flow.shape(&flow.body) {
        Some(kernaut_syntax::StatementShape::Block(body)) if body.contains(branch) => Some(body),
        _ => None,
    }
}

/// Whether the statement at `r` holds a barrier of `b`'s scope, or calls a device
/// function that reaches one.
fn holds_barrier(
    ctx: &RuleContext,
    r: &kernaut_syntax::TextRange,
    b: &Barrier,
    all: &[Barrier],
) -> bool {
    all.iter()
        .any(|x| x.scope == b.scope && r.contains(&x.range.start))
        || calls_a_synchronising_helper(ctx, r)
}

/// Whether the threads that take the `if` at `branch` (a statement of the function's
/// body, without `else`) and those that skip it arrive at the scope's barriers equally
/// often over the rest of the function: each later statement is run by both, or is an
/// `if` that each side takes or skips as a whole (`if (threadIdx.y == 1)` after `if
/// (threadIdx.y == 0)` in a block two rows high). Warp-specialised producers and
/// consumers that hand a buffer over through the same number of barriers pair up.
fn roles_balanced(
    ctx: &RuleContext,
    flow: &ControlFlow,
    branch: &kernaut_syntax::TextRange,
    then: &kernaut_syntax::TextRange,
    b: &Barrier,
    all: &[Barrier],
) -> bool {
    use super::barriers::{excludes, implied_by_failing, sum_arrivals};
    let Some(body) = body_holding(flow, branch) else {
        return false;
    };
    let Some(condition) = if_condition(ctx, branch) else {
        return false;
    };
    // Threads that return inside the branch run nothing after it.
    if flow
        .jumps
        .iter()
        .any(|j| j.kind == kernaut_syntax::JumpKind::Return && then.contains(&j.range.start))
    {
        return false;
    }
    let block = certain_block(ctx, branch.start);

    let mut taken = vec![arrivals(ctx, flow, then, b.scope, all)];
    let mut skipped = Vec::new();
    for s in body.iter().filter(|s| s.start >= branch.end) {
        let guarded = flow
            .branches(s)
            .filter(|(_, other)| other.is_none())
            .map(|(inner, _)| inner)
            .zip(if_condition(ctx, s));
        match guarded {
            Some((inner, guard)) if holds_barrier(ctx, &inner, b, all) => {
                let count = arrivals(ctx, flow, &inner, b.scope, all);
                // The threads that took the branch: all of them enter, or none does.
                if implies(ctx, &condition, &guard, block) {
                    taken.push(count.clone());
                } else if !excludes(ctx, &guard, &condition, block) {
                    return false;
                }
                // Those that skipped it.
                if implied_by_failing(ctx, &condition, &guard, block) {
                    skipped.push(count);
                } else if !implies(ctx, &guard, &condition, block) {
                    return false;
                }
            }
            _ => {
                let count = arrivals(ctx, flow, s, b.scope, all);
                taken.push(count.clone());
                skipped.push(count);
            }
        }
    }
    match (
        sum_arrivals(taken.into_iter()),
        sum_arrivals(skipped.into_iter()),
    ) {
        (ArrivalCount::Known(x), ArrivalCount::Known(y)) => !x.is_empty() && x == y,
        _ => false,
    }
}

/// An `if` of the function body's own block, with no `else`, whose branch ends in
/// `return`: its threads and those that skip it (and run the rest of the body) pair up
/// where both arrive at `b`'s scope equally often (`if (role) { …; sync; sync; return; }
/// …; sync; …; sync;`): one hardware barrier counts arrivals, not call sites.
///
/// The same holds for an `if` of a loop body's own block whose branch ends in
/// `continue` (`if (v > 255) { …; sync; continue; } …; sync;`): the rest of the body is
/// its `else` for that iteration.
pub(super) fn returning_branch_balanced(
    ctx: &RuleContext,
    flow: &ControlFlow,
    branch: &kernaut_syntax::TextRange,
    then: &kernaut_syntax::TextRange,
    b: &Barrier,
    all: &[Barrier],
) -> bool {
    use kernaut_syntax::{JumpKind, StatementShape};
    let Some(StatementShape::Block(inside)) = flow.shape(then) else {
        return false;
    };
    let body = match inside.last().and_then(|last| flow.shape(last)) {
        Some(StatementShape::Jump(JumpKind::Return)) => body_holding(flow, branch),
        Some(StatementShape::Jump(JumpKind::Continue)) => flow.loop_body_holding(branch),
        _ => None,
    };
    let Some(body) = body else {
        return false;
    };
    let rest: Vec<kernaut_syntax::TextRange> = body
        .iter()
        .filter(|s| s.start >= branch.end)
        .cloned()
        .collect();
    match (
        arrivals_of_statements(ctx, flow, &inside, b.scope, all),
        arrivals_of_statements(ctx, flow, &rest, b.scope, all),
    ) {
        (ArrivalCount::Known(x), ArrivalCount::Known(y)) => !x.is_empty() && x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_messages};

    const RULE: &str = "sync/barrier-in-divergent-branch";

    #[test]
    fn barrier_under_a_thread_condition() {
        check(
            RULE,
            r#"
__global__ void reduce(float* data) {
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    auto block = cooperative_groups::this_thread_block();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (tid < s)`
        }
    }
    if (threadIdx.x == 0) block.sync();
                       // ^^^^^^^^^^^^ warning: `block.sync()` inside `if (threadIdx.x == 0)`
    __syncthreads();
}
"#,
        );
    }

    /// A loop body's branch that ends in `continue` after one barrier, and the rest of
    /// the body with one barrier of its own: every thread arrives once per iteration,
    /// whichever path it takes (nvcc 13.5: complementary predicated `BAR.SYNC`s). With
    /// two barriers after the branch the counts differ: the branch and the `continue`
    /// are reported.
    #[test]
    fn a_continuing_branch_that_arrives_as_often_as_the_rest_pairs_up() {
        check(
            RULE,
            r#"
__global__ void scan(unsigned char* row, const unsigned char* cost, int width) {
    int d = threadIdx.x;
    for (int x = 1; x < width; ++x) {
        int v = cost[x * blockDim.x + d] + row[(x - 1) * blockDim.x + d];
        if (v > 255) {
            row[x * blockDim.x + d] = 255;
            __syncthreads();
            continue;
        }
        row[x * blockDim.x + d] = (unsigned char)v;
        __syncthreads();
    }
}
__global__ void scan2(unsigned char* row, const unsigned char* cost, int width) {
    int d = threadIdx.x;
    for (int x = 1; x < width; ++x) {
        int v = cost[x * blockDim.x + d] + row[(x - 1) * blockDim.x + d];
        if (v > 255) {
            row[x * blockDim.x + d] = 255;
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (v > 255)`
            continue;
         // ^^^^^^^^^ warning: `continue` under `if (v > 255)` skips `__syncthreads()`
        }
        row[x * blockDim.x + d] = (unsigned char)v;
        __syncthreads();
        row[x * blockDim.x + d] += 1;
        __syncthreads();
    }
}
void launch(unsigned char* row, const unsigned char* cost, int width) {
    scan<<<1, 128>>>(row, cost, width);
    scan2<<<1, 128>>>(row, cost, width);
}
"#,
        );
    }

    #[test]
    fn sides_that_arrive_unequally_often_say_so() {
        check_messages(
            RULE,
            r#"
__global__ void roles(float* d) {
    if (threadIdx.x < 32) {
        for (int s = 0; s < 3; s++) __syncthreads();
    } else {
        __syncthreads();
        __syncthreads();
    }
    d[threadIdx.x] = 0.f;
}
"#,
            expect![[r#"
                warning: `__syncthreads()` inside `if (threadIdx.x < 32)`: both sides of the branch reach block barriers, but their threads arrive at them a different number of times, so the barriers pair up wrongly and the block can hang or synchronise the wrong threads; make each side arrive as often, or move the barriers out of the branch (pitfall-synchronization#P1)
                warning: `__syncthreads()` inside `if (threadIdx.x < 32)`: both sides of the branch reach block barriers, but their threads arrive at them a different number of times, so the barriers pair up wrongly and the block can hang or synchronise the wrong threads; make each side arrive as often, or move the barriers out of the branch (pitfall-synchronization#P1)
                warning: `__syncthreads()` inside `if (threadIdx.x < 32)`: both sides of the branch reach block barriers, but their threads arrive at them a different number of times, so the barriers pair up wrongly and the block can hang or synchronise the wrong threads; make each side arrive as often, or move the barriers out of the branch (pitfall-synchronization#P1)
            "#]],
        );
    }

    #[test]
    fn warp_specialised_branches_that_arrive_equally_often_pair_up() {
        // Each side of the split arrives at the block barrier as often: loops with the
        // same header over a parameter, constant trip counts written differently, an
        // `else if` chain. Counts that differ, or an arm with none, still split the block.
        check(
            RULE,
            r#"
__global__ void produce_consume(const float* src, float* dst, int stages) {
    __shared__ float buf[32];
    if (threadIdx.x < 32) {
        for (int s = 0; s < stages; s++) {
            buf[threadIdx.x] = src[s * 32 + threadIdx.x];
            __syncthreads();
        }
        __syncthreads();
    } else {
        float acc = 0.f;
        for (int s = 0; s < stages; s++) {
            __syncthreads();
            acc += buf[threadIdx.x - 32];
        }
        __syncthreads();
        dst[threadIdx.x - 32] = acc;
    }
}
__global__ void three_roles(float* d) {
    if (threadIdx.x < 32) {
        for (int s = 0; s < 4; s++) __syncthreads();
    } else if (threadIdx.x < 64) {
        for (int s = 0; s < 8; s += 2) __syncthreads();
    } else {
        __syncthreads(); __syncthreads(); __syncthreads(); __syncthreads();
    }
    d[threadIdx.x] = 0.f;
}
__global__ void one_more(float* d, int stages) {
    if (threadIdx.x < 32) {
        for (int s = 0; s < stages; s++) __syncthreads();
                                      // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 32)`
    } else {
        for (int s = 0; s < stages + 1; s++) __syncthreads();
                                          // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 32)`
    }
    d[threadIdx.x] = 0.f;
}
__global__ void chain_without_else(float* d) {
    if (threadIdx.x < 32) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 32)`
    } else if (threadIdx.x < 64) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (threadIdx.x < 64)`: the threads of the block that skip the branch meet no block barrier after it
    }
    d[threadIdx.x] = 0.f;
}
__global__ void balanced_inside_a_split(float* d) {
    if (threadIdx.x < 64) {
        if (threadIdx.x < 16) __syncthreads(); else __syncthreads();
                           // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (threadIdx.x < 64)`: the threads of the block that skip the branch meet no block barrier after it
                                                 // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (threadIdx.x < 64)`: the threads of the block that skip the branch meet no block barrier after it
    }
    d[threadIdx.x] = 0.f;
}
"#,
        );
    }

    #[test]
    fn converged_barriers_stay_silent() {
        check(
            RULE,
            r#"
__global__ void reduce(float* data, int n) {
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (n > 128) {
        __syncthreads();
    }
    if (tid < 32) {
        __syncwarp();
        asm volatile("bar.sync 1, 64;");
    }
}
"#,
        );
    }

    #[test]
    fn thread_dependent_early_exit_before_a_barrier() {
        check(
            RULE,
            r#"
template <int N>
__global__ void scale(const float* in, float* out, int n) {
    __shared__ float tile[N];
    int tx = threadIdx.x;
    int bx = blockIdx.x;
    int i = bx * N + tx;
    if (i >= n) return;
             // ^^^^^^^ hint: `return` under `if (i >= n)` ends some threads of the block before `__syncthreads()`
    tile[tx] = in[i];
    __syncthreads();
    out[i] = tile[N - 1 - tx];
}
template <int N>
__global__ void rows(const float* in, float* out, int rows) {
    __shared__ float tile[N];
    for (int r = 0; r < rows; ++r) {
        if (threadIdx.x >= N / 2)
            continue;
         // ^^^^^^^^^ warning: `continue` under `if (threadIdx.x >= N / 2)` skips `__syncthreads()` later in this iteration for some threads of the block
        tile[threadIdx.x] = in[r * N + threadIdx.x];
        __syncthreads();
        out[r * N + threadIdx.x] = tile[N / 2 - 1 - threadIdx.x];
    }
    for (int r = 0; r < rows; ++r) {
        __syncthreads();
        if (in[r * N + threadIdx.x] < 0.0f) break;
                                         // ^^^^^^ hint: `break` under `if (in[r * N + threadIdx.x] < 0.0f)` leaves the loop for some threads of the block before `__syncthreads()`; they meet no block barrier after the loop and go on to exit
        out[r] += 1.0f;
    }
}
template __global__ void rows<64>(const float*, float*, int);
__device__ void stage(float* tile, const float* in, int n) {
    int lane = threadIdx.x & 31;
    if (lane >= n) return;
                // ^^^^^^^ warning: `return` under `if (lane >= n)` leaves this device function for some threads of the block, which skip `__syncthreads()` below but keep running in the caller
    tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
}
__global__ void staged(float* out, const float* in, int n) {
    __shared__ float tile[64];
    stage(tile, in, n);
    __syncthreads();
    out[threadIdx.x] = tile[63 - threadIdx.x];
}
"#,
        );
    }

    #[test]
    fn a_device_function_no_kernel_in_the_file_calls_is_a_hint_that_states_the_assumption() {
        check_messages(
            RULE,
            r#"
struct Gen {
    int count;
    __device__ void operator()() const {
        __shared__ float tile[128];
        int idx = blockIdx.x * 128 + threadIdx.x;
        if (idx >= count) return;
        tile[threadIdx.x] = idx;
        __syncthreads();
    }
};
__global__ void gen_kernel(const Gen g) { g(); }
"#,
            expect![[r#"
                hint: `return` under `if (idx >= count)` leaves this device function for some threads of the block before `__syncthreads()` (assuming no caller of `operator()` meets a block barrier after the call: the file shows no kernel calling it directly (its callers are elsewhere, or call it through an object, a pointer or another device function); if one does, the threads that left would arrive at that later barrier while the others wait at this one, and the two would pair up wrongly); keep every thread to the barrier and guard the work instead (`if (!(idx >= count)) { ... }`) (pitfall-synchronization#P1)
            "#]],
        );
    }

    #[test]
    fn conditions_each_iteration_makes_the_same_for_the_block_under_the_launched_instantiation() {
        // `i` runs over `threadIdx.x + k * B` with `blockDim.x == B` (the launch binds the
        // template argument and the block alike) and `end` is a multiple of `B`: `i >= B`
        // and `i + B >= end` have one value per iteration for the whole block, and a
        // `__syncthreads_count` result is the block's. Offsets that are not multiples of
        // `B`, a bound that is not one, or a thread-dependent operand of `||` split it.
        check(
            RULE,
            r#"
template <typename T, int B>
__global__ void pick(const T* x, const int* kept, int* out) {
    int n = kept[blockIdx.x];
    float acc = 0.f;
    int end = (n + B - 1) / B * B;
    for (int i = threadIdx.x; i < end; i += B) {
        acc += (i < n) ? static_cast<float>(x[i]) : 0.f;
        int count = __syncthreads_count(acc > 1.0f);
        if (count != 0 || (i + B) >= end) {
            if (threadIdx.x == 0) out[blockIdx.x] = i;
            break;
        }
    }
    for (int i = threadIdx.x; i < end; i += B) {
        int count = __syncthreads_count(x[i] > 0);
        if (count != 0 || threadIdx.x > 5) break;
                                        // ^^^^^^ warning: `break` under `if (count != 0 || threadIdx.x > 5)`
    }
    for (int i = threadIdx.x; i < n; i += B) {
        int count = __syncthreads_count(x[i] > 0);
        if (!(count == 0) || i + B >= n) break;
                                      // ^^^^^^ hint: `break` under `if (!(count == 0) || i + B >= n)`
    }
}
template <int B>
__global__ void scan(const int* src, int* dst, int n) {
    __shared__ int s[B];
    for (int i = threadIdx.x; i < (n + B - 1) / B * B; i += B) {
        if (i >= B) {
            __syncthreads();
        }
        if (i >= B + 1) {
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (i >= B + 1)`
        }
        s[threadIdx.x] = i < n ? src[i] : 0;
        __syncthreads();
        if (i < n) dst[i] = s[B - 1];
    }
}
void run(const float* x, const int* k, int* o, const int* src, int* dst, int n, int batch) {
    const int block = 256;
    pick<float, block><<<batch, block>>>(x, k, o);
    scan<128><<<1, 128>>>(src, dst, n);
}
"#,
        );
    }

    #[test]
    fn values_the_launch_makes_the_same_for_the_block() {
        // A block of one row makes `threadIdx.y` 0, so `deg[row]` is one load for the
        // block; `i - threadIdx.x` cancels in a grid-stride loop stepped by hand, even
        // against a size through `sizeof(T)`. A block of two rows splits the first again.
        check(
            RULE,
            r#"
__global__ void per_row(const int* deg, float* out, int n) {
    __shared__ float acc[1];
    int row = blockIdx.x + threadIdx.y;
    while (row < n) {
        int d = deg[row];
        if (d > 0) {
            if (threadIdx.x == 0) acc[threadIdx.y] = d;
            __syncthreads();
            out[row] = acc[threadIdx.y];
        }
        row += gridDim.x;
    }
}
__global__ void two_rows(const int* deg, float* out, int n) {
    __shared__ float acc[2];
    int row = blockIdx.x * 2 + threadIdx.y;
    int d = deg[row];
    if (d > 0) {
        if (threadIdx.x == 0) acc[threadIdx.y] = d;
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (d > 0)`
        out[row] = acc[threadIdx.y];
    }
    out[n + row] = 0.0f;
}
template <typename T>
__global__ void sweep(T* p, const size_t bytes) {
    size_t n = bytes / sizeof(T);
    T a = 0;
    size_t i = threadIdx.x + blockIdx.x * blockDim.x;
    while (1) {
        if ((i - threadIdx.x) > n) {
            break;
        }
        if (i < n) a += p[i];
        i += (blockDim.x * gridDim.x);
        __syncthreads();
    }
    if (threadIdx.x == 0) p[0] = a;
}
void run(const int* deg, float* out, int n, float* p, size_t bytes) {
    per_row<<<n, dim3(128, 1)>>>(deg, out, n);
    two_rows<<<n, dim3(128, 2)>>>(deg, out, n);
    sweep<float><<<80, 256>>>(p, bytes);
}
"#,
        );
    }

    /// A tile loop whose guard, once false for a thread, stays false (`off < n` with `off`
    /// moved only up, by a constant tile or a grid stride): the skipping threads never
    /// come back to the barriers, and exit (the hint). A guard that can hold again (`off`
    /// moved down, or computed afresh each iteration) brings them back: a warning.
    /// A condition whose parts that read no thread only pick the blocks
    /// (`blockIdx.x == 0 || blockIdx.x == gridDim.x - 1 && x < W`) splits a block only as
    /// its thread part does: the threads that skip are those with `x >= W` of the last
    /// block, and the guarded store after the branch is none of theirs, so they go on to
    /// exit (a hint, as for `if (x < W)`). A store after the branch that they do run
    /// keeps the warning.
    #[test]
    fn block_picking_parts_of_a_condition_leave_its_thread_part() {
        check(
            RULE,
            r#"
#define W 100
__global__ void edges(float* a) {
    __shared__ float s[256];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = (x < W) ? a[x] : 0.f;
    __syncthreads();
    if (blockIdx.x == 0 || blockIdx.x == gridDim.x - 1 && x < W) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (blockIdx.x == 0 || blockIdx.x == gridDim.x - 1 && x < W)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
        s[threadIdx.x] *= 2.f;
    }
    if (x < W) a[x] = s[threadIdx.x];
}
__global__ void edges_all(float* a) {
    __shared__ float s[256];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = (x < W) ? a[x] : 0.f;
    __syncthreads();
    if (blockIdx.x == 0 || blockIdx.x == gridDim.x - 1 && x < W) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (blockIdx.x == 0 || blockIdx.x == gridDim.x - 1 && x < W)`: threads of the block that skip the branch never reach the block barrier
        s[threadIdx.x] *= 2.f;
    }
    a[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x];
}
void run(float* a) {
    edges<<<4, 64>>>(a);
    edges_all<<<4, 64>>>(a);
}
"#,
        );
    }

    #[test]
    fn guards_that_stay_false_in_a_tile_loop() {
        check(
            RULE,
            r#"
#define TILE 512
__global__ void up(const int* keys, int* out, int n, int tiles) {
    __shared__ int part[4];
    int off = blockIdx.x * TILE * tiles + threadIdx.x;
    int total = 0;
    for (int k = 0; k < tiles; ++k) {
        if (off < n) {
            if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = keys[off];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (off < n)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
            if (threadIdx.x == 0) total += part[0] + part[1] + part[2] + part[3];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (off < n)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
        }
        off += TILE;
    }
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
__global__ void strided(const int* keys, int n) {
    __shared__ int part[4];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; ; i += blockDim.x * gridDim.x) {
        if (i < n) {
            part[threadIdx.x & 3] = keys[i];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (i < n)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
        }
    }
}
__global__ void down(const int* keys, int* out, int n, int tiles) {
    __shared__ int part[4];
    int off = blockIdx.x * TILE * tiles + threadIdx.x;
    for (int k = 0; k < tiles; ++k) {
        if (off < n) {
            part[threadIdx.x & 3] = keys[off];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (off < n)`: threads of the block that skip the branch never reach the block barrier
        }
        off -= TILE;
    }
    for (int k = 0; k < tiles; ++k) {
        int at = blockIdx.x * TILE + threadIdx.x - k * TILE;
        if (at < n) {
            part[threadIdx.x & 3] = keys[at];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (at < n)`: threads of the block that skip the branch never reach the block barrier
        }
    }
}
"#,
        );
    }

    #[test]
    fn skipping_threads_that_every_later_guard_keeps_out_exit() {
        // Rows with `ty >= rows - 1` skip the first section. The second section's guard
        // (`m > 0` with `m = rows - 1 - blockDim.y`) holds only where `rows - 1 - ty > 0`
        // does for every row, so the skipping rows never enter it: they meet no block
        // barrier again and exit (the hint). A later guard that some skipping row passes
        // (`rows > 2`) makes them meet its barriers: a warning.
        check(
            RULE,
            r#"
__constant__ int c_rows;
__global__ void sweep(float* g) {
    __shared__ float s[8][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int m = c_rows - 1;
    if (m - ty > 0) {
        s[ty][tx] = g[ty * 32 + tx];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (m - ty > 0)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
        g[ty * 32 + tx] = s[ty][tx];
    }
    m = c_rows - 1 - (int)blockDim.y;
    if (m > 0) {
        s[ty][tx] = g[(m + ty) * 32 + tx];
        __syncthreads();
        g[(m + ty) * 32 + tx] = s[ty][tx];
    }
}
__global__ void sweep_more(float* g) {
    __shared__ float s[8][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int m = c_rows - 1;
    if (m - ty > 0) {
        s[ty][tx] = g[ty * 32 + tx];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (m - ty > 0)`
        g[ty * 32 + tx] = s[ty][tx];
    }
    if (c_rows > 2) {
        s[ty][tx] = g[(m + ty) * 32 + tx];
        __syncthreads();
        g[(m + ty) * 32 + tx] = s[ty][tx];
    }
}
void run(float* g, int rows) {
    sweep<<<1, dim3(32, rows < 8 ? rows : 8)>>>(g);
    sweep_more<<<1, dim3(32, rows < 8 ? rows : 8)>>>(g);
}
"#,
        );
    }

    #[test]
    fn a_template_parameter_an_if_fixes_folds_inside_it() {
        // Under `if (M == 1)` only the instantiation with `M = 1` runs, where
        // `(M == 1) ? 0 : threadIdx.z` is 0: the `break` is the same for the whole
        // block. Outside that `if`, `M = 4` makes the row index per-thread: a warning.
        check(
            RULE,
            r#"
template <int M>
__global__ void search(const int* in, int* out, int nx) {
    __shared__ int tmp[M][64];
    int tx = threadIdx.x;
    int tz = (M == 1) ? 0 : threadIdx.z;
    tmp[tz][tx] = in[tx];
    __syncthreads();
    int base = (blockIdx.x * M + tz) * 4;
    for (int j = 0; j < 4; ++j) {
        int bx = base + j;
        if (M == 1) {
            if (bx >= nx) break;
        }
        if (bx % 8 == 4) break;
                      // ^^^^^^ warning: `break` under `if (bx % 8 == 4)`
        tmp[tz][tx] += in[bx * 64 + tx];
        __syncthreads();
        out[bx * 64 + tx] = tmp[tz][(tx + 1) % 64];
        __syncthreads();
    }
    __syncthreads();
    out[tx] = tmp[0][tx];
}
void run(const int* in, int* out, int nx, int m) {
    if (m == 1) search<1><<<nx, dim3(64, 1, 1)>>>(in, out, nx);
    else search<4><<<nx, dim3(64, 1, 4)>>>(in, out, nx);
}
"#,
        );
    }

    #[test]
    fn a_thread_index_cancels_through_a_local_stepped_in_a_bare_block() {
        // `row = H - 1 - ty`, stepped by `blockDim.y` inside a bare `{ }` (which every
        // thread runs whole): `row + ty` is one value for the block. Stepped under a
        // condition instead, the guard stays per-thread.
        check(
            RULE,
            r#"
__constant__ int c_height;
__global__ void backward(float* data) {
    __shared__ float tile[8][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = c_height - 1 - ty;
    {
        tile[ty][tx] = data[ty * 32 + tx];
        __syncthreads();
        row -= (int)blockDim.y;
    }
    if (row + ty >= 0) {
        tile[ty][tx] += 1.0f;
        __syncthreads();
    }
    data[ty * 32 + tx] = tile[ty][tx];
}
__global__ void backward_some(float* data, int skip) {
    __shared__ float tile[8][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = c_height - 1 - ty;
    if (data[tx] > 0.f) {
        row -= (int)blockDim.y;
    }
    if (row + ty >= 0) {
        tile[ty][tx] += 1.0f;
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (row + ty >= 0)`
    }
    data[ty * 32 + tx] = tile[ty][tx];
}
void run(float* d) {
    backward<<<1, dim3(32, 8)>>>(d);
    backward_some<<<1, dim3(32, 8)>>>(d, 0);
}
"#,
        );
    }

    #[test]
    fn a_block_size_held_in_a_local_reaches_the_launch() {
        // `int threads = 32; dim3 block(threads);`: the warp index is the block index, so
        // the guard is the same for every thread of a block. A local assigned again
        // before the launch is not followed, and the guard stays divergent for the
        // blocks it may then have.
        check(
            RULE,
            r#"
__global__ void carry_in(const unsigned* in, unsigned* out) {
    __shared__ unsigned carry;
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int wid = gid >> 5;
    if (wid > 0) {
        if (threadIdx.x == 0) carry = out[wid - 1];
        __syncthreads();
    }
    out[gid] = in[gid] + carry;
}
__global__ void carry_in2(const unsigned* in, unsigned* out) {
    __shared__ unsigned carry;
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int wid = gid >> 5;
    if (wid > 0) {
        if (threadIdx.x == 0) carry = out[wid - 1];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (wid > 0)`
    }
    out[gid] = in[gid] + carry;
}
void run(const unsigned* in, unsigned* out, int n) {
    int threads = 32;
    dim3 block(threads);
    carry_in<<<(n + threads - 1) / threads, block>>>(in, out);
    int wide = 32;
    wide *= 8;
    carry_in2<<<(n + wide - 1) / wide, wide>>>(in, out);
}
"#,
        );
    }

    #[test]
    fn a_side_that_reaches_its_barriers_in_a_helper_pairs_up() {
        // Each specialised side runs `layers` barriers, one side through a device
        // function: how often it arrives is not shown by the branch, so nothing is said.
        // A side whose helper has no barrier leaves the other side's barriers unpaired.
        check(
            RULE,
            r#"
template <int R>
__device__ void produce(float* s, int layers) {
    for (int l = 0; l < layers; l++) {
        s[threadIdx.x] = l;
        __syncthreads();
    }
}
__device__ void idle(float* s) { s[threadIdx.x] = 0.0f; }
template <int R>
__global__ void spec(float* out, int layers) {
    __shared__ float s[256];
    if (threadIdx.x < 2 * R) {
        produce<R>(s, layers);
    } else {
        for (int l = 0; l < layers; l++) {
            __syncthreads();
        }
    }
    if (threadIdx.x < R) {
        idle(s);
    } else {
        for (int l = 0; l < layers; l++) {
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < R)`
        }
    }
    out[threadIdx.x] = s[threadIdx.x];
}
void run(float* o, int n) { spec<32><<<1, 256>>>(o, n); }
"#,
        );
    }

    #[test]
    fn a_condition_the_same_in_every_block_shape_needs_no_launch() {
        // No launch in sight: `i - threadIdx.x` is the same for every thread of any
        // block, so the `break` leaves the loop for the whole block; `i < n` is not.
        check(
            RULE,
            r#"
__global__ void sweep(float* p, size_t n) {
    float a = 0.f;
    size_t i = threadIdx.x + blockIdx.x * blockDim.x;
    while (1) {
        if ((i - threadIdx.x) > n) break;
        if (i < n) a += p[i];
        i += blockDim.x * gridDim.x;
        __syncthreads();
    }
    for (size_t j = threadIdx.x; ; j += blockDim.x) {
        if (j >= n) break;
                 // ^^^^^^ hint: `break` under `if (j >= n)`
        __syncthreads();
        p[j] += a;
    }
}
"#,
        );
    }

    #[test]
    fn a_guard_the_loop_does_not_change_is_skipped_in_every_iteration() {
        // `if (gid < len)` is the whole body of the loop and the loop assigns neither
        // name: the threads that skip it skip every iteration, meet no barrier, and exit.
        // A guard on the loop's own counter (`gid + r < len`), or on an array, divides
        // the iterations: a warning.
        check(
            RULE,
            r#"
__global__ void rounds(const float* in, float* out, int len, int n) {
    __shared__ float s[64];
    int gid = blockIdx.x * 64 + threadIdx.x;
    for (int r = 0; r < n; ++r) {
        if (gid < len) {
            s[threadIdx.x] = in[r * len + gid];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (gid < len)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
            out[r * len + gid] = s[63 - threadIdx.x];
        }
    }
}
__global__ void nested(const float* in, float* out, int len, int n, int m) {
    __shared__ float s[64];
    int gid = blockIdx.x * 64 + threadIdx.x;
    for (int d = 0; d < m; ++d) {
        int base = d * n * len;
        for (int r = 0; r < n; ++r) {
            if (gid < len) {
                s[threadIdx.x] = in[base + r * len + gid];
                __syncthreads();
             // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (gid < len)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
                out[base + gid] = s[63 - threadIdx.x];
            }
        }
    }
}
__global__ void stores_first(const float* in, float* out, int len, int n) {
    __shared__ float s[64];
    int gid = blockIdx.x * 64 + threadIdx.x;
    for (int r = 0; r < n; ++r) {
        s[threadIdx.x] = 0.0f;
        if (gid < len) {
            s[threadIdx.x] = in[r * len + gid];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (gid < len)`: threads of the block that skip the branch never reach the block barrier
            out[r * len + gid] = s[63 - threadIdx.x];
        }
    }
}
__global__ void shifting(const float* in, float* out, int len, int n) {
    __shared__ float s[64];
    int gid = blockIdx.x * 64 + threadIdx.x;
    for (int r = 0; r < n; ++r) {
        if (gid + r < len) {
            s[threadIdx.x] = in[gid + r];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (gid + r < len)`: threads of the block that skip the branch never reach the block barrier
            out[gid] = s[63 - threadIdx.x];
        }
    }
}
"#,
        );
    }

    #[test]
    fn skipping_threads_that_run_only_barrier_free_code_then_exit_are_a_hint() {
        // After `if (t < 32) { ... }` the skipping threads run only `if (t == 0) ...` and
        // `if (t < 16 && ...)`, whose conditions hold in none of them, then exit: as
        // after a `return`. Work they do run (`if (t < 64)`, a call) stays a warning.
        check(
            RULE,
            r#"
__device__ void store(double* out, double v) { out[blockIdx.x] = v; }
__device__ void wait_all() { __syncthreads(); }
__global__ void tail(const double* v, double* out) {
    __shared__ double s[128];
    int t = threadIdx.x;
    s[t] = v[blockIdx.x * 128 + t];
    __syncthreads();
    if (t < 32) {
        s[t] += s[t + 32]; __syncthreads();
                        // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (t < 32)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
    }
    if (t == 0) store(out, s[0]);
    if (t < 16 && blockIdx.x == 0) out[gridDim.x + t] = s[t];
}
__global__ void per_precision(double* v, double* out) {
    __shared__ double s[64];
    int t = threadIdx.x;
    s[t] = v[t];
    __syncthreads();
#if defined(PRECISION_z)
    if (t < 32) {
        s[t] += s[t + 32]; __syncthreads();
                        // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (t < 32)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
    }
#endif
#if defined(PRECISION_d)
    if (t < 32) {
        volatile double* w = s;
        w[t] += w[t + 32];
    }
#else
    if (t < 16) s[t] += 1.0;
#endif
    if (t == 0) out[blockIdx.x] = s[0];
}
__global__ void skippers_work(const double* v, double* out) {
    __shared__ double s[128];
    int t = threadIdx.x;
    if (t < 32) {
        s[t] = v[t]; __syncthreads();
                  // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (t < 32)`: threads of the block that skip the branch never reach
    }
    if (t < 64) out[t] = s[t % 32];
}
__global__ void skippers_call(const double* v, double* out) {
    __shared__ double s[128];
    int t = threadIdx.x;
    if (t < 32) {
        s[t] = v[t]; __syncthreads();
                  // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (t < 32)`: threads of the block that skip the branch never reach
    }
    wait_all();
}
"#,
        );
    }

    /// A tree reduction whose idle threads `break`: after the loop only thread 0 runs a
    /// block barrier, and no thread that broke out (`threadIdx.x >= active`, `active` at
    /// least 1, also where its start is written in braces) is thread 0, so the leavers
    /// go on to exit. A later barrier a leaver can reach (`threadIdx.x < 32`) keeps the
    /// warning.
    #[test]
    fn a_barrier_after_the_loop_that_no_leaver_can_reach() {
        check(
            RULE,
            r#"
__global__ void sum(const float* in, float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = in[threadIdx.x];
    for (unsigned active{blockDim.x >> 1}; active > 0; active >>= 1) {
        __syncthreads();
        if (threadIdx.x >= active)
            break;
         // ^^^^^^ hint: `break` under `if (threadIdx.x >= active)` leaves the loop for some threads of the block before `__syncthreads()`; they meet no block barrier after the loop and go on to exit
        s[threadIdx.x] += s[threadIdx.x + active];
    }
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s[0];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (threadIdx.x == 0)`
        out[gridDim.x + blockIdx.x] = s[0];
    }
}
__global__ void sum32(const float* in, float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = in[threadIdx.x];
    for (unsigned active = blockDim.x >> 1; active > 0; active >>= 1) {
        __syncthreads();
        if (threadIdx.x >= active)
            break;
         // ^^^^^^ warning: `break` under `if (threadIdx.x >= active)` leaves the loop for some threads of the block, which stay alive
        s[threadIdx.x] += s[threadIdx.x + active];
    }
    if (threadIdx.x < 32) {
        out[blockIdx.x] = s[0];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (threadIdx.x < 32)`
        out[gridDim.x + blockIdx.x] = s[threadIdx.x];
    }
}
"#,
        );
    }

    /// A bounds check in a loop that tiles the data by the block (`idx = t + threadIdx.x`
    /// with `t += blockDim.x`): `idx` only grows, so a thread that fails the check fails
    /// it in every later iteration, meets no barrier again and exits (a hint). With `idx`
    /// built by subtracting the loop's variable the check can hold again: a warning.
    #[test]
    fn a_bounds_check_on_a_local_that_grows_with_the_loop() {
        check(
            RULE,
            r#"
__global__ void tiled(const float* in, float* out, int n) {
    __shared__ float buf[256];
    for (int t = 0; t < n; t += blockDim.x) {
        int idx = t + threadIdx.x;
        if (idx < n) {
            buf[threadIdx.x] = in[idx];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (idx < n)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
            out[idx] = buf[(threadIdx.x + 1) % blockDim.x];
        }
    }
}
__global__ void shrinking(const float* in, float* out, int n) {
    __shared__ float buf[256];
    for (int t = 0; t < n; t += blockDim.x) {
        int idx = n - t - threadIdx.x;
        if (idx < n) {
            buf[threadIdx.x] = in[idx];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (idx < n)`
            out[idx] = buf[(threadIdx.x + 1) % blockDim.x];
        }
    }
}
void launch(const float* in, float* out, int n) {
    tiled<<<1, 256>>>(in, out, n);
    shrinking<<<1, 256>>>(in, out, n);
}
"#,
        );
    }

    /// Warp-specialised roles in the arm of `#if`/`#else` that the file compiles: each
    /// role arrives twice per iteration, so the barriers pair up. The control-flow tree
    /// reads the arms of a preprocessor conditional as the branches of an `if`, so the
    /// `else` role's barriers and the one after the roles are seen (the same code outside
    /// `#if` gives the same answer).
    #[test]
    fn barriers_in_an_arm_of_a_preprocessor_conditional() {
        let kernel = r#"
#define SEQUENTIAL 0
__global__ void split(const float* a, float* c, int k_total) {
    __shared__ float buf[2][256];
    float acc = 0.f;
    const int t = threadIdx.x % 128;
    bool role = threadIdx.x >= 128;
#if SEQUENTIAL
    for (int k = 0; k < k_total; k += 8) {
        buf[0][threadIdx.x] = a[k + threadIdx.x];
        __syncthreads();
        acc += buf[0][(threadIdx.x + 1) % 256];
        __syncthreads();
    }
#else
    for (int k = 0; k < k_total; k += 16) {
        if (role == 0) {
            acc += buf[0][t];
            __syncthreads();
            if (k + 8 < k_total) acc += buf[1][t];
            __syncthreads();
        } else {
            if (k + 8 < k_total) buf[1][t] = a[k + 8 + t];
            __syncthreads();
            acc += buf[0][t];
            __syncthreads();
        }
        __syncthreads();
    }
#endif
    c[blockIdx.x * 256 + threadIdx.x] = acc;
}
void run(const float* a, float* c) { split<<<64, 256>>>(a, c, 4096); }
"#;
        check(RULE, kernel);
        check(
            RULE,
            &kernel
                .replace("#if SEQUENTIAL\n", "#if 0\n")
                .replace("#else\n", "#endif\n")
                .replace("#endif\n    c[", "    c["),
        );
    }

    /// `do { … } while (0)` runs once: a `break` in it goes on after the block, where
    /// every thread of the block meets the next barrier. It misses only barriers left in
    /// the block after it, which the others reach (said as such); the barriers before it
    /// in the block are not met again (no next iteration).
    #[test]
    fn a_break_out_of_a_do_while_zero_block_goes_on_after_it() {
        check(
            RULE,
            r#"
__global__ void rowsum(const float* in, float* out, int chunks) {
    __shared__ float red[8][64];
    float acc = 0.f;
    for (int c = 0; c < chunks; ++c) {
        red[threadIdx.y][threadIdx.x] = in[(c * 8 + threadIdx.y) * 64 + threadIdx.x];
        __syncthreads();
        do {
            if (threadIdx.x < 32) red[threadIdx.y][threadIdx.x] += red[threadIdx.y][threadIdx.x + 32];
            __syncthreads();
            if (threadIdx.x >= 32) break;
            float v = red[threadIdx.y][threadIdx.x];
            for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
            if (threadIdx.x == 0) acc += v;
        } while (0);
        __syncthreads();
    }
    if (threadIdx.x == 0) out[threadIdx.y] = acc;
}
__global__ void mirror(float* out) {
    __shared__ float s[256];
    for (int c = 0; c < 4; ++c) {
        do {
            if (threadIdx.x >= 32) continue;
                                // ^^^^^^^^^ warning: `continue` under `if (threadIdx.x >= 32)` leaves the `do { … } while (0)` block for some threads of the block, which go on after it and skip `__syncthreads()` that the others reach in the block
            s[threadIdx.x] = out[threadIdx.x];
            __syncthreads();
            out[threadIdx.x] = s[31 - threadIdx.x];
        } while (false);
        __syncthreads();
    }
}
void run(const float* in, float* out) {
    rowsum<<<1, dim3(64, 8)>>>(in, out, 16);
    mirror<<<1, 256>>>(out);
}
"#,
        );
    }

    /// Producer warps (`threadIdx.y == 0`) and consumer warps (`threadIdx.y == 1`, the
    /// rest of a block two rows high) each arrive `steps + 1` times over the function:
    /// the producer's barriers pair with the consumer's. Where the consumer's loop runs
    /// once less, the producer's barrier pairs up wrongly.
    #[test]
    fn producer_and_consumer_roles_that_arrive_equally_often_pair_up() {
        check(
            RULE,
            r#"
__global__ void pc(const int* src, int* dst, int steps) {
    __shared__ int buf[2][64];
    int x = threadIdx.x;
    if (threadIdx.y == 0) {
        for (int i = 0; i < steps; ++i) {
            buf[i & 1][x] = src[i * 64 + x];
            __syncthreads();
        }
    }
    __syncthreads();
    if (threadIdx.y == 1) {
        for (int i = 0; i < steps; ++i) {
            dst[i * 64 + x] = buf[i & 1][x] * 2;
            __syncthreads();
         // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (threadIdx.y == 1)`
        }
    }
}
__global__ void short_by_one(const int* src, int* dst, int steps) {
    __shared__ int buf[2][64];
    int x = threadIdx.x;
    if (threadIdx.y == 0) {
        for (int i = 0; i < steps; ++i) {
            buf[i & 1][x] = src[i * 64 + x];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.y == 0)`
        }
    }
    if (threadIdx.y == 1) {
        for (int i = 0; i < steps - 1; ++i) {
            dst[i * 64 + x] = buf[i & 1][x] * 2;
            __syncthreads();
         // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (threadIdx.y == 1)`
        }
    }
}
void run(const int* s, int* d, int steps) {
    pc<<<1, dim3(64, 2)>>>(s, d, steps);
    short_by_one<<<1, dim3(64, 2)>>>(s, d, steps);
}
"#,
        );
    }

    #[test]
    fn uniform_or_late_exits_stay_silent() {
        check(
            RULE,
            r#"
template <int N>
__global__ void k(const float* in, float* out, int n) {
    __shared__ float tile[N];
    if (blockIdx.x * N >= n) return;
    if (n == 0) return;
    if (N > 1024) return;
    int i = blockIdx.x * N + threadIdx.x;
    for (int r = 0; r < n; ++r) {
        __syncthreads();
        if (threadIdx.x >= 32) continue;
        out[r] += tile[threadIdx.x];
    }
    for (int r = 0; r < n; ++r) {
        switch (threadIdx.x % 4) {
        case 0: out[r] = 0.0f; break;
        default: break;
        }
        __syncthreads();
        if (r == 4) break;
    }
    // A `return` after the last barrier, and in a comment: return;
    tile[threadIdx.x] = in[i];
    __syncthreads();
    if (i >= n) return;
    out[i] = tile[N - 1 - threadIdx.x];
}
"#,
        );
    }

    /// `__syncthreads_or/and/count` run in the condition, in every thread, and give every
    /// thread of the block the same result: neither the barrier in the condition nor a
    /// `break` under it splits the block. A barrier under a condition that reads the
    /// thread outside such a call still does.
    #[test]
    fn block_uniform_barrier_results() {
        check(
            RULE,
            r#"
__global__ void k(float* out, int n) {
    __shared__ float s[256];
    bool done = threadIdx.x >= n;
    if (__syncthreads_or(done)) {
        s[threadIdx.x] = 0.0f;
    }
    for (int r = 0; r < 64; ++r) {
        s[threadIdx.x] += 1.0f;
        if (__syncthreads_count(out[threadIdx.x] > 0.0f) >= 256) break;
        __syncthreads();
    }
    out[threadIdx.x] = s[threadIdx.x];
}
"#,
        );
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    if (__syncthreads_and(out[0] > 0.0f) && threadIdx.x < 16) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside
    }
    __syncthreads();
}
"#,
        );
    }

    #[test]
    fn kernel_return_message_states_what_ptx_does() {
        check_messages(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int n) {
    __shared__ float tile[256];
    int tx = threadIdx.x;
    int i = blockIdx.x * 256 + tx;
    if (i >= n) return;
    tile[tx] = in[i];
    __syncthreads();
    out[i] = tile[255 - tx];
}
"#,
            expect![[r#"
                hint: `return` under `if (i >= n)` ends some threads of the block before `__syncthreads()`: the CUDA programming guide allows a block barrier only where every thread of the block reaches it; today the hardware lets the barrier complete without the exited threads (PTX `exit` releases a barrier held up only by exited threads), but their part of the shared-memory work before the barrier is never done; keep every thread to the barrier and guard the work instead (`if (!(i >= n)) { ... }`) (pitfall-synchronization#P1)
            "#]],
        );
    }

    /// Threads that stage their value before they leave have done their shared-memory
    /// work: the hint does not say it is skipped. A `__shared__` scalar assigned after
    /// the exit is skipped work, and so are, in a loop whose barrier comes before the
    /// exit, the stores of the later iterations.
    #[test]
    fn kernel_return_after_the_threads_own_stores() {
        check_messages(
            RULE,
            r#"
__global__ void staged(const float* in, float* out, int n) {
    __shared__ float tile[128];
    int tx = threadIdx.x;
    tile[tx] = in[blockIdx.y * 128 + tx];
    int i = blockIdx.x * 128 + tx;
    if (i >= n) return;
    out[i] = 0.0f;
    __syncthreads();
    out[i] = tile[127 - tx];
}
__global__ void scalar(const unsigned* sums, unsigned* out, unsigned n) {
    unsigned i = blockIdx.x * 128 + threadIdx.x;
    if (i >= n) {
        return;
    }
    __shared__ unsigned offset;
    offset = sums[blockIdx.x];
    __syncthreads();
    out[i] += offset;
}
__global__ void rounds(const float* in, float* out, int n, int r) {
    __shared__ float tile[128];
    int tx = threadIdx.x;
    for (int k = 0; k < r; ++k) {
        tile[tx] = in[k * 128 + tx];
        __syncthreads();
        out[k] += tile[127 - tx];
        if (blockIdx.x * 128 + tx >= n) return;
    }
}
"#,
            expect![[r#"
                hint: `return` under `if (i >= n)` ends some threads of the block before `__syncthreads()`: the CUDA programming guide allows a block barrier only where every thread of the block reaches it; today the hardware lets the barrier complete without the exited threads (PTX `exit` releases a barrier held up only by exited threads); keep every thread to the barrier and guard the work instead (`if (!(i >= n)) { ... }`) (pitfall-synchronization#P1)
                hint: `return` under `if (i >= n)` ends some threads of the block before `__syncthreads()`: the CUDA programming guide allows a block barrier only where every thread of the block reaches it; today the hardware lets the barrier complete without the exited threads (PTX `exit` releases a barrier held up only by exited threads), but their part of the shared-memory work before the barrier is never done; keep every thread to the barrier and guard the work instead (`if (!(i >= n)) { ... }`) (pitfall-synchronization#P1)
                hint: `return` under `if (blockIdx.x * 128 + tx >= n)` ends some threads of the block before `__syncthreads()`: the CUDA programming guide allows a block barrier only where every thread of the block reaches it; today the hardware lets the barrier complete without the exited threads (PTX `exit` releases a barrier held up only by exited threads), but their part of the shared-memory work before the barrier is never done; keep every thread to the barrier and guard the work instead (`if (!(blockIdx.x * 128 + tx >= n)) { ... }`) (pitfall-synchronization#P1)
            "#]],
        );
    }

    #[test]
    fn exits_on_paths_that_never_reach_the_barrier_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int mode, int n) {
    __shared__ float tile[256];
    if (mode == 0) {
        if (threadIdx.x >= n) return;
        out[threadIdx.x] = in[threadIdx.x];
    } else {
        tile[threadIdx.x] = in[threadIdx.x];
        __syncthreads();
        out[threadIdx.x] = tile[255 - threadIdx.x];
    }
}
__device__ void copy_or_stage(float* tile, const float* in, int mode, int n) {
    if (mode == 1) {
        if (threadIdx.x >= n) return;
        tile[threadIdx.x] = in[threadIdx.x];
        return;
    }
    __syncthreads();
}
__device__ void stage(float* tile, const float* in, int mode, int n) {
    if (mode == 1) {
        if (threadIdx.x >= n) return;
                           // ^^^^^^^ warning: `return` under `if (threadIdx.x >= n)` leaves this device function
        tile[threadIdx.x] = in[threadIdx.x];
    }
    __syncthreads();
}
__global__ void run(float* out, const float* in, int mode, int n) {
    __shared__ float tile[256];
    copy_or_stage(tile, in, mode, n);
    stage(tile, in, mode, n);
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x];
}
"#,
        );
    }

    #[test]
    fn a_device_function_its_kernels_call_last() {
        check(
            RULE,
            r#"
__device__ void sort_tile(float* s, int len) {
    if (threadIdx.x >= len) return;
                         // ^^^^^^^ hint: `return` under `if (threadIdx.x >= len)` leaves this device function for some threads of the block before `__syncthreads()`, and its caller `sort`
    s[threadIdx.x] *= 2.0f;
    __syncthreads();
    s[threadIdx.x] += s[len - 1 - threadIdx.x];
}
__device__ void stage(float* s, int len) {
    if (threadIdx.x >= len) return;
                         // ^^^^^^^ warning: `return` under `if (threadIdx.x >= len)` leaves this device function
    s[threadIdx.x] *= 2.0f;
    __syncthreads();
}
__global__ void sort(float* out, int len) {
    __shared__ float s[256];
    s[threadIdx.x] = out[threadIdx.x];
    sort_tile(s, len);
}
__global__ void twice(float* out, int len) {
    __shared__ float s[256];
    stage(s, len);
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
"#,
        );
    }

    #[test]
    fn a_branch_the_parser_lost_stays_silent() {
        // Where the parser recovers from an error (here a `(` never closed; in
        // ThunderKittens' `rv.cuh`, `#if` blocks inside a call's arguments), which
        // statement holds the barrier is not known.
        check(
            RULE,
            r#"
__device__ void show(float* v) {
    unsigned lane = threadIdx.x % 32;
    if (lane < 16) {
        v[0] = (1.0f;
        __syncwarp();
    }
}
"#,
        );
    }

    /// A role branch that returns after arriving at the block barrier as often as the
    /// threads that run the rest of the kernel pairs up with them (one hardware barrier
    /// counts arrivals); one that arrives fewer times does not.
    #[test]
    fn a_returning_role_branch_that_arrives_as_often_pairs_up() {
        check_messages(
            RULE,
            r#"
__global__ void roles(int* pad, int* out, int n) {
  __shared__ int h[64];
  if (threadIdx.x < 64) {
    for (int i = threadIdx.x; i < n; i += 64) pad[i] = 0;
    __syncthreads();
    __syncthreads();
    return;
  }
  int t = threadIdx.x - 64;
  h[t] = t;
  __syncthreads();
  atomicAdd(&h[(t * 7) & 63], 1);
  __syncthreads();
  out[t] = h[t];
}
__global__ void short_role(int* pad, int* out, int n) {
  __shared__ int h[64];
  if (threadIdx.x < 64) {
    pad[threadIdx.x] = 0;
    __syncthreads();
    return;
  }
  int t = threadIdx.x - 64;
  h[t] = t;
  __syncthreads();
  atomicAdd(&h[(t * 7) & 63], 1);
  __syncthreads();
  out[t] = h[t];
}
void run(int* pad, int* out, int n) {
  roles<<<1, 128>>>(pad, out, n);
  short_role<<<1, 128>>>(pad, out, n);
}
"#,
            expect![[r#"
                warning: `__syncthreads()` inside `if (threadIdx.x < 64)`: threads of the block that skip the branch never reach the block barrier, so the block can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                hint: `return` under `if (threadIdx.x < 64)` ends some threads of the block before `__syncthreads()`: the CUDA programming guide allows a block barrier only where every thread of the block reaches it; today the hardware lets the barrier complete without the exited threads (PTX `exit` releases a barrier held up only by exited threads), but their part of the shared-memory work before the barrier is never done; keep every thread to the barrier and guard the work instead (`if (!(threadIdx.x < 64)) { ... }`) (pitfall-synchronization#P1)
            "#]],
        );
    }

    #[test]
    fn if_and_else_that_both_hold_the_barrier() {
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float s[64];
    if (threadIdx.x < 32) {
        s[threadIdx.x] = 1.0f;
        __syncthreads();
        out[threadIdx.x] = s[63 - threadIdx.x];
    } else {
        __syncthreads();
        out[threadIdx.x] = 0.0f;
    }
    if (threadIdx.x < 16) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 16)`
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 16)`
    } else {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 16)`
    }
}
"#,
        );
    }

    #[test]
    fn continue_and_break_belong_to_their_own_loop() {
        check(
            RULE,
            r#"
__global__ void k(const float* in, float* out, int n) {
    __shared__ float tile[256];
    for (int r = 0; r < n; ++r) {
        for (int j = 0; j < 8; ++j) {
            if (threadIdx.x + j >= n) continue;
            out[j] += in[j];
        }
        switch (threadIdx.x & 3) {
        case 0: out[r] = 1.0f; break;
        default: break;
        }
        tile[threadIdx.x] = in[r];
        __syncthreads();
        out[r] += tile[255 - threadIdx.x];
        __syncthreads();
    }
    for (int r = 0; r < n; ++r) {
        for (int j = 0; j < 8; ++j) {
            if (threadIdx.x == j) break;
                               // ^^^^^^ warning: `break` under `if (threadIdx.x == j)` leaves the loop
            __syncthreads();
        }
    }
}
"#,
        );
    }

    #[test]
    fn barriers_of_every_scope() {
        check_messages(
            RULE,
            r#"
namespace cg = cooperative_groups;
__global__ void k(float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    auto tile = cg::tiled_partition<32>(block);
    auto quarter = cg::tiled_partition<8>(block);
    unsigned lane = threadIdx.x % 32;
    if (lane < 16) tile.sync();
    if (lane < 16) __syncwarp();
    if (lane < 16) __syncwarp(0xffff);
    if (threadIdx.x / 32 == 1) __syncwarp();
    if (threadIdx.x < 64) tile.sync();
    if (threadIdx.x == 0) quarter.sync();
    if (threadIdx.x < 128) cg::this_thread_block().sync();
    if (threadIdx.x < 128) cg::sync(block);
    if (blockIdx.x == 0) grid.sync();
    if (blockIdx.x == 0) block.sync();
    if (threadIdx.x < 128) asm volatile("bar.sync 0;");
    if (threadIdx.x < 128) asm volatile("bar.sync 1, 128;");
    if (threadIdx.x < 128) {
        cg::coalesced_group active = cg::coalesced_threads();
        active.sync();
    }
    cg::thread_group sixteen = cg::tiled_partition(block, 16);
    if (threadIdx.x < 16) cg::sync(sixteen);
    if (threadIdx.x < 8) cg::sync(sixteen);
}
"#,
            expect![[r#"
                warning: `tile.sync()` inside `if (lane < 16)`: threads of the tile that skip the branch never reach the tile barrier, so the tile can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `__syncwarp()` inside `if (lane < 16)`: threads of the warp that skip the branch never reach the warp barrier, so the warp can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `quarter.sync()` inside `if (threadIdx.x == 0)`: threads of the tile that skip the branch never reach the tile barrier, so the tile can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `cg::this_thread_block().sync()` inside `if (threadIdx.x < 128)`: threads of the block that skip the branch never reach the block barrier, so the block can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `cg::sync(block)` inside `if (threadIdx.x < 128)`: threads of the block that skip the branch never reach the block barrier, so the block can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `grid.sync()` inside `if (blockIdx.x == 0)`: threads of the grid that skip the branch never reach the grid-wide barrier, so the grid can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `bar.sync 0;` inside `if (threadIdx.x < 128)`: threads of the block that skip the branch never reach the block barrier, so the block can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
                warning: `cg::sync(sixteen)` inside `if (threadIdx.x < 8)`: threads of the tile that skip the branch never reach the tile barrier, so the tile can hang or synchronise the wrong threads; move the barrier out of the branch (pitfall-synchronization#P1)
            "#]],
        );
    }

    /// `expert` is computed from the warp index: its lowered value is the same for every
    /// lane of a warp, whatever `n` and `blockIdx.x` are.
    #[test]
    fn a_warp_barrier_under_a_local_derived_from_the_warp_index_stays_silent() {
        check(
            RULE,
            r#"
__global__ void k(int n) {
    const int warp_id = threadIdx.x / 32;
    const int expert = blockIdx.x * 4 + warp_id;
    if (expert < n) {
        __syncwarp();
    }
}
"#,
        );
    }

    /// Within a warp or a tile, the lowered condition decides, not the words in it: a
    /// condition that names the warp size can split the warp, one that divides by 64
    /// or shifts by 5 cannot, and one on a value the file does not fix (`tid < n`) is
    /// not known to split it.
    #[test]
    fn warp_and_tile_barriers_follow_the_lowered_condition() {
        check(
            RULE,
            r#"
namespace cg = cooperative_groups;
__global__ void k(float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    auto sixteen = cg::tiled_partition<16>(block);
    int tid = threadIdx.x;
    int wid = threadIdx.x >> 5;
    if (threadIdx.x < warpSize / 2) {
        __syncwarp();
     // ^^^^^^^^^^^^ warning: `__syncwarp()` inside `if (threadIdx.x < warpSize / 2)`: threads of the warp that skip the branch never reach the warp barrier
    }
    if (wid == 0) {
        __syncwarp();
    }
    if (threadIdx.x / 64 == 1) {
        __syncwarp();
    }
    if ((threadIdx.x & 31) < 16) {
        __syncwarp();
     // ^^^^^^^^^^^^ warning: `__syncwarp()` inside `if ((threadIdx.x & 31) < 16)`: threads of the warp that skip the branch never reach the warp barrier
    }
    if (threadIdx.x < 16) {
        sixteen.sync();
    }
    if (threadIdx.x < 8) {
        sixteen.sync();
     // ^^^^^^^^^^^^^^ warning: `sixteen.sync()` inside `if (threadIdx.x < 8)`: threads of the tile that skip the branch never reach the tile barrier
    }
    if (tid < n) {
        __syncwarp();
    }
}
"#,
        );
    }

    /// A guard around the rest of the kernel: the threads that skip it meet no barrier
    /// again and exit, as after `if (i >= n) return;`, a hint; also as the whole body of a
    /// loop that does not change the guard (they skip every iteration). With a barrier
    /// after the `if`, or another side that arrives differently, still a warning.
    #[test]
    fn a_guard_around_the_rest_of_the_kernel_is_a_hint() {
        check(
            RULE,
            r#"
__global__ void tail(float* v, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        s[threadIdx.x] = v[i];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (i < n)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit, as after `if (!(i < n)) return;`
        v[i] = s[255 - threadIdx.x];
    }
}
__device__ void body(float* s, float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        s[threadIdx.x] = v[i];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (i < n)`: the threads of the block that skip
        v[i] = s[255 - threadIdx.x];
    }
}
__global__ void calls_last(float* v, int n) {
    __shared__ float s[256];
    body(s, v, n);
}
__global__ void rounds(float* v, int n, int rounds) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < rounds; ++r) {
        if (i < n) {
            s[threadIdx.x] = v[i];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (i < n)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
            v[i] += s[255 - threadIdx.x];
        }
    }
}
__global__ void zero_then_accumulate(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if ((threadIdx.x & 1) == 0) {
        out[i] = 0.0f;
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if ((threadIdx.x & 1) == 0)`: threads of the block that skip the branch never reach
    }
    atomicAdd(&out[i / 2], in[i]);
}
__global__ void other_side(float* v, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        s[threadIdx.x] = v[i];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (i < n)`: both sides of the branch reach block barriers, but their threads arrive at them a different number of times
    } else {
        s[threadIdx.x] = 0.0f;
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (i < n)`
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (i < n)`
    }
}
"#,
        );
    }

    /// A local holding a block-wide reduction (`__syncthreads_count`) is the same in
    /// every thread: a `break` under it leaves the loop for the whole block.
    #[test]
    fn a_local_holding_a_block_reduction_is_uniform() {
        check(
            RULE,
            r#"
__global__ void pick(const float* p, int n, int* out) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = p[i];
        int c = __syncthreads_count(v > 0.5f);
        if (c != 0) {
            if (threadIdx.x == 0) out[0] = i;
            break;
        }
    }
}
"#,
        );
    }

    /// Threads that fail the bounds test take `else { return; }` and exit at once, whatever
    /// follows the `if` (here the rest of a `switch`): the exit hint, as without the
    /// `switch`.
    #[test]
    fn an_else_that_returns_lets_the_skipping_threads_exit() {
        check(
            RULE,
            r#"
__global__ void step(const float* v, float* s, int nx, int order) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    switch (order) {
    case 2:
        if (i > 0 && i < nx) {
            float d = v[i] - v[i - 1];
            __syncthreads();
         // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (i > 0 && i < nx)`: the threads of the block that skip the branch meet no block barrier after it and go on to exit
            s[i] += d;
        } else {
            return;
        }
    default:
        break;
    }
}
void launch(const float* v, float* s, int nx) { step<<<(nx + 127) / 128, 128>>>(v, s, nx, 2); }
"#,
        );
    }

    /// A barrier in the last arm of an `else if` chain whose earlier arms add `first` (a
    /// thread test) to other values of one shared state: every thread that reaches the
    /// last arm has failed the earlier ones, so `split` alone decides, the same in every
    /// thread. An arm whose condition does not rule the earlier one out still splits.
    #[test]
    fn the_last_arm_of_a_chain_of_exclusive_states_is_uniform() {
        check(
            RULE,
            r#"
__global__ void step(int* flags, int* work) {
    __shared__ int state;
    __shared__ int best;
    const bool first = threadIdx.x == 0;
    if (first) state = flags[blockIdx.x] % 3;
    __syncthreads();
    const bool done = state == 0;
    const bool dead = state == 1;
    const bool split = state == 2;
    if (done && first) {
        work[blockIdx.x] = 1;
    } else if (dead && first) {
        flags[blockIdx.x] = 0;
    } else if (split) {
        if (first) best = 1 << 30;
        __syncthreads();
        atomicMin(&best, work[blockIdx.x * blockDim.x + threadIdx.x]);
    }
    if (dead && first) {
        work[blockIdx.x] = 2;
    } else if (state > 0) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (dead && first)`
        work[blockIdx.x] = best;
    }
}
void run(int* f, int* w) { step<<<128, 128>>>(f, w); }
"#,
        );
    }

    /// `__syncwarp()` waits only for the lanes of its mask that have not exited (the CUDA
    /// programming guide): lanes that skip the branch and run nothing after it leave it
    /// nothing to wait for, so there is no finding. Lanes that go on working after the
    /// branch are another matter.
    #[test]
    fn a_warp_barrier_whose_skipping_lanes_exit_is_no_finding() {
        check(
            RULE,
            r#"
__global__ void partial(const float* in, float* out) {
    unsigned lane = threadIdx.x & 31;
    if (lane < 12) {
        float v = in[blockIdx.x * 32 + lane] * 2.0f;
        __syncwarp();
        if (lane == 0) out[blockIdx.x] = v;
    }
}
__global__ void working(const float* in, float* out) {
    unsigned lane = threadIdx.x & 31;
    if (lane < 12) {
        out[lane] = in[lane];
        __syncwarp();
     // ^^^^^^^^^^^^ warning: `__syncwarp()` inside `if (lane < 12)`
    }
    out[32 + lane] = out[(lane + 1) % 12];
}
void run(const float* in, float* out) {
    partial<<<64, 32>>>(in, out);
    working<<<64, 32>>>(in, out);
}
"#,
        );
    }

    /// A warp barrier under a condition on `threadIdx.y`: the lanes of a warp share it
    /// when `blockDim.x` is a multiple of 32. A launch that says so makes it silent; with
    /// no launch in sight, a hint that states the assumption (also where the row index
    /// is held in a local); a block 16 wide splits warps between two rows, a warning.
    #[test]
    fn a_warp_barrier_under_a_row_condition() {
        check(
            RULE,
            r#"
__global__ void rows32(float* out) {
    if (threadIdx.y == 0) {
        out[threadIdx.x] = 0.0f;
        __syncwarp();
    }
    out[64 + threadIdx.x] += 1.0f;
}
__global__ void rows_unknown(float* out) {
    if (threadIdx.y == 0) {
        out[threadIdx.x] = 0.0f;
        __syncwarp();
     // ^^^^^^^^^^^^ hint: `__syncwarp()` inside `if (threadIdx.y == 0)`: threads of the warp that skip the branch never reach the warp barrier, so the warp can hang or synchronise the wrong threads; move the barrier out of the branch (assuming `blockDim.x` is not a multiple of 32
    }
    out[64 + threadIdx.x] += 1.0f;
}
__global__ void rows_alias(float* out) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    if (ty == 3) {
        out[tx] = 0.0f;
        __syncwarp();
     // ^^^^^^^^^^^^ hint: `__syncwarp()` inside `if (ty == 3)`: threads of the warp that skip the branch never reach the warp barrier, so the warp can hang or synchronise the wrong threads; move the barrier out of the branch (assuming `blockDim.x` is not a multiple of 32
    }
    out[64 + tx] += 1.0f;
}
__global__ void rows16(float* out) {
    if (threadIdx.y == 0) {
        out[threadIdx.x] = 0.0f;
        __syncwarp();
     // ^^^^^^^^^^^^ warning: `__syncwarp()` inside `if (threadIdx.y == 0)`
    }
    out[64 + threadIdx.x] += 1.0f;
}
void launch(float* out) {
    rows32<<<4, dim3(32, 16)>>>(out);
    rows16<<<4, dim3(16, 16)>>>(out);
}
"#,
        );
    }

    #[test]
    fn a_guard_the_launch_makes_always_true() {
        check(
            RULE,
            r#"
__global__ void full(float* out) {
    __shared__ float s[256];
    if (threadIdx.x < 256) {
        s[threadIdx.x] = out[threadIdx.x];
        __syncthreads();
    }
    out[threadIdx.x] = s[255 - threadIdx.x];
}
__global__ void half(float* out) {
    __shared__ float s[256];
    if (threadIdx.x < 128) {
        s[threadIdx.x] = out[threadIdx.x];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (threadIdx.x < 128)`
    }
    __syncthreads();
    out[threadIdx.x] = s[255 - threadIdx.x];
}
void launch(float* out) {
    full<<<64, 256>>>(out);
    half<<<64, 256>>>(out);
}
"#,
        );
    }

    /// A bound every launch passes the block's own extent for (`prefix<<<1, n>>>(…, n)`):
    /// `t < n` holds in every thread. Where one launch passes something else, it splits.
    #[test]
    fn a_guard_on_the_parameter_every_launch_makes_the_block_size() {
        check(
            RULE,
            r#"
__global__ void prefix(const unsigned* in, unsigned* out, unsigned n) {
    extern __shared__ unsigned buf[];
    int t = threadIdx.x;
    buf[t] = in[t];
    __syncthreads();
    if (t < n) {
        for (unsigned s = 1; s < n; s <<= 1) {
            unsigned v = (t >= s) ? buf[t - s] : 0u;
            __syncthreads();
            buf[t] += v;
            __syncthreads();
        }
    }
    out[t] = buf[t];
}
__global__ void part(const unsigned* in, unsigned* out, unsigned n) {
    __shared__ unsigned buf[256];
    int t = threadIdx.x;
    if (t < n) {
        buf[t] = in[t];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (t < n)`
    }
    __syncthreads();
    out[t] = buf[255 - t];
}
void run(const unsigned* in, unsigned* out, unsigned n) {
    prefix<<<1, n, n * sizeof(unsigned)>>>(in, out, n);
    prefix<<<1, n, n * sizeof(unsigned)>>>(in, out, static_cast<unsigned>(n));
    part<<<1, n>>>(in, out, n);
    part<<<1, 256>>>(in, out, n);
}
"#,
        );
    }

    /// A bound on a global index that the launch's grid never passes: `n / 128` blocks of
    /// 128 threads (rounded down) start only threads with `i < n`, and a grid of exactly
    /// `work / 128` blocks never takes the early exit. Rounded up, the last block splits.
    #[test]
    fn a_guard_every_launched_grid_makes_always_true() {
        check(
            RULE,
            r#"
__global__ void floor_grid(float* out, const float* in, int n) {
    __shared__ float buf[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        buf[threadIdx.x] = in[i];
        __syncthreads();
        out[i] = buf[127 - threadIdx.x];
    }
    __syncthreads();
}
__global__ void exact(float* sums, const float* m, int work) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= work) return;
    __shared__ float part[128];
    part[threadIdx.x] = m[t];
    __syncthreads();
    if (threadIdx.x == 0) sums[blockIdx.x] = part[5];
}
__global__ void ceil_grid(float* out, const float* in, int n) {
    __shared__ float buf[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        buf[threadIdx.x] = in[i];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (i < n)`
        out[i] = buf[127 - threadIdx.x];
    }
    __syncthreads();
}
void launch(float* out, const float* in, int n, float* sums, const float* m, int rows) {
    floor_grid<<<n / 128, 128>>>(out, in, n);
    int work = rows * 128;
    exact<<<work / 128, 128>>>(sums, m, work);
    ceil_grid<<<(n + 127) / 128, 128>>>(out, in, n);
}
"#,
        );
    }

    /// A barrier chosen by a `?:` on a value the same for the whole block is a block
    /// barrier only where the condition picks its arm: with `G = 8` from the launch,
    /// `(G > warpSize) ? __syncthreads() : __syncwarp()` is a warp barrier, and the
    /// `continue` skips no block barrier; with `G = 64`, or a `constexpr` 64, it is a
    /// block barrier the `continue` skips; with no launch to bind `G`, the file does not
    /// say which, and nothing is reported.
    #[test]
    fn a_barrier_chosen_by_a_conditional_expression() {
        check(
            RULE,
            r#"
template <int G>
__global__ void groups(float* d, const int* partner, int rounds) {
    extern __shared__ float st[];
    for (int r = 0; r < rounds; ++r) {
        int me = (threadIdx.x / G) * rounds + r;
        if (partner[me] <= me) continue;
        st[threadIdx.x] = d[me];
        (G > warpSize) ? __syncthreads() : __syncwarp();
        d[me] = st[threadIdx.x ^ 1];
    }
}
template <int G>
__global__ void wide(float* d, const int* partner, int rounds) {
    extern __shared__ float st[];
    for (int r = 0; r < rounds; ++r) {
        int me = (threadIdx.x / G) * rounds + r;
        if (partner[me] <= me) continue;
                            // ^^^^^^^^^ warning: `continue` under `if (partner[me] <= me)` skips `__syncthreads()`
        st[threadIdx.x] = d[me];
        (G > warpSize) ? __syncthreads() : __syncwarp();
        d[me] = st[threadIdx.x ^ 1];
    }
}
template <int G>
__global__ void unbound(float* d, const int* partner, int rounds) {
    extern __shared__ float st[];
    for (int r = 0; r < rounds; ++r) {
        int me = (threadIdx.x / G) * rounds + r;
        if (partner[me] <= me) continue;
        st[threadIdx.x] = d[me];
        (G > warpSize) ? __syncthreads() : __syncwarp();
        d[me] = st[threadIdx.x ^ 1];
    }
}
constexpr int W = 64;
__global__ void fixed(float* d, const int* partner, int rounds) {
    extern __shared__ float st[];
    for (int r = 0; r < rounds; ++r) {
        int me = (threadIdx.x / W) * rounds + r;
        if (partner[me] <= me) continue;
                            // ^^^^^^^^^ warning: `continue` under `if (partner[me] <= me)` skips `__syncthreads()`
        st[threadIdx.x] = d[me];
        (W > warpSize) ? __syncthreads() : __syncwarp();
        d[me] = st[threadIdx.x ^ 1];
    }
}
void launch(float* d, const int* p, int rounds) {
    groups<8><<<4, 256, 1024>>>(d, p, rounds);
    wide<64><<<4, 256, 1024>>>(d, p, rounds);
}
"#,
        );
    }

    #[test]
    fn a_helper_result_decided_by_block_uniform_values_is_one_branch() {
        // `pick` also takes the thread index for its work, but which value it returns
        // depends only on `mode` (written by one thread before the barrier) and on
        // constants: every thread takes the same side. Helpers whose result the thread
        // decides (a returned value, a branch around a `return` or a `break`, an
        // assignment of the returned local) still split the block.
        check(
            RULE,
            r#"
__device__ void work(float* s, int t) { s[t] = 1.f; }
__device__ int pick(int mode, float* s, int t) {
    switch (mode) {
    case 0: work(s, t); break;
    case 2: for (int i = 0; i < mode; ++i) { if (mode == 4) return 2; } break;
    default: return 0;
    }
    return 1;
}
__device__ int leaves_early(int mode, float* s, int t) {
    switch (mode) {
    case 0: if (t > 3) break; work(s, t); return 2;
    default: return 0;
    }
    return 1;
}
__device__ int offset(int mode, int t) { return mode + t; }
__device__ int clamped(int mode, int t) {
    int r = mode;
    if (t < 16) r = 0;
    return r;
}
__global__ void k(const int* modes, float* out) {
    __shared__ int mode;
    __shared__ float s[128];
    int t = threadIdx.x;
    if (t == 0) mode = modes[blockIdx.x];
    __syncthreads();
    if (!pick(mode, s, t)) {
        __syncthreads();
    }
    if (pick(t, s, t)) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (pick(t, s, t))`
    }
    if (leaves_early(mode, s, t)) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (leaves_early(mode, s, t))`
    }
    if (offset(mode, t) > 4) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (offset(mode, t) > 4)`
    }
    if (clamped(mode, t)) {
        __syncthreads();
     // ^^^^^^^^^^^^^^^ warning: `__syncthreads()` inside `if (clamped(mode, t))`
    }
    out[blockIdx.x * 128 + t] = s[t];
}
void run(const int* m, float* out, int n) { k<<<n, 128>>>(m, out); }
"#,
        );
    }

    /// A warp-specialised loop: one producer thread (`wg == 0 && tid == 0`), and consumer
    /// warp groups (`else if (wg == 1)`, the same for every lane of a warp) that meet at
    /// a `__syncwarp()`. No consumer lane takes the producer's arm, so the warps that reach
    /// the barrier do so whole, a block-uniform `continue` before it or not. Where the
    /// consumer arm is `wg == 0`, lane 0 of warp 0 takes the producer's arm instead and its
    /// warp meets the barrier without it.
    #[test]
    fn a_warp_uniform_else_if_that_excludes_the_first_arm() {
        check(
            RULE,
            r#"
__global__ void ws(const float* in, float* out, int* flag, int n, int tiles) {
    int tid = threadIdx.x, wg = tid / 128, lane = tid % 32;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        if (t * 64 >= n) continue;
        if (wg == 0 && tid == 0) {
            atomicAdd(flag, 1);
        } else if (wg == 1) {
            for (int k = 0; k < n; ++k) {
                float v = in[k * 32 + lane];
                __syncwarp();
                out[t * n * 128 + k * 128 + tid - 128] = v;
            }
        }
    }
}
__global__ void same_group(const float* in, float* out, int* flag, int n) {
    int tid = threadIdx.x, wg = tid / 128, lane = tid % 32;
    if (wg == 0 && tid == 0) {
        atomicAdd(flag, 1);
    } else if (wg == 0) {
        float v = in[lane];
        __syncwarp();
     // ^^^^^^^^^^^^ warning: `__syncwarp()` inside `if (wg == 0 && tid == 0)`
        out[tid] = v;
    }
    for (int k = 0; k < n; ++k) {
        out[k * 384 + tid] += in[k];
        __syncwarp();
    }
}
int main() {
    ws<<<2, 384>>>(nullptr, nullptr, nullptr, 256, 8);
    same_group<<<2, 384>>>(nullptr, nullptr, nullptr, 256);
}
"#,
        );
    }
}
