//! `async-copy/commit-in-divergent-branch`: `producer_commit()`, `__pipeline_commit()` or
//! `cp.async.commit_group` inside a branch on the thread index.
//!
//! Commits from divergent paths add one batch per path to the warp's shared sequence, so
//! `wait_prior(N)` then waits for more recent batches than each thread meant and the
//! overlap is lost (`pitfall-async-copy#P2`). Branches whose lowered condition is the
//! same for every lane of each warp (`sema::context::barriers::uniformity_in_groups`: a
//! warp index `threadIdx.x >> 5`, `threadIdx.x < 64`, under the known launch or the sample
//! block shapes) stay silent, as do CUTLASS-style
//! `pipeline.producer_commit(state, bytes)` calls, which arrive on an mbarrier from the
//! one elected producer thread by design, and functions whose every wait drains all groups
//! (`__pipeline_wait_prior(0)`): no count there can be off.
//!
//! The fix moves the commit after the branch: every thread commits, possibly an empty
//! group. It is offered when each commit in the branch is a call statement of its own in a
//! `{ … }` block (syntax facts: `statement_at`, `is_call_statement`, `in_block`), not the
//! whole body of a brace-less `if`/`else`.
//!
//! ```cuda
//! // Before
//! if (t < ntiles) {
//!     __pipeline_memcpy_async(&buf[s][tid], &in[t * T + tid], sizeof(float));
//!     __pipeline_commit();
//! }
//! // After
//! if (t < ntiles) {
//!     __pipeline_memcpy_async(&buf[s][tid], &in[t * T + tid], sizeof(float));
//! }
//! __pipeline_commit();
//! ```

use kernaut_syntax::{EnclosingKind, SymbolKind, TextRange};

use super::async_ops::{base_name, OpKind};
use super::barriers::{certain_block, uniformity_in_groups, Uniformity};
use super::{indent_at, line_start, Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("commit_in_divergent_branch.rs"),
    id: "async-copy/commit-in-divergent-branch",
    severity: Severity::Warning,
    wiki: &["pitfall-async-copy#P2"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let text = ctx.text();
    for (_, ops) in ctx.async_functions().iter() {
        let commits: Vec<_> = ops
            .iter()
            .filter(|o| o.kind == OpKind::Commit)
            // A block-scoped pipeline with producer and consumer roles commits from the
            // producer branch by design.
            .filter(|o| {
                !(o.call.callee.ends_with("producer_commit") && on_block_pipeline(ctx, &o.call))
            })
            // `pipeline.producer_commit(state, bytes)` (CUTLASS's mbarrier pipelines) is an
            // arrive on the stage's barrier by the producer thread, not a commit group:
            // `cuda::pipeline`'s `producer_commit()` takes no argument.
            .filter(|o| !o.call.callee.ends_with("producer_commit") || o.call.args.is_empty())
            .collect();
        for c in &commits {
            let Some((branch, condition, is_if)) = divergent_branch(ctx, c.call.range.start) else {
                continue;
            };
            // A branch that waits for everything it committed (`commit; wait_prior(0)`, or a
            // pipeline's `consumer_wait()` right after) leaves no pending group whose count
            // could be off.
            let drained = ops.iter().any(|o| {
                o.call.range.start > c.call.range.end
                    && branch.contains(&o.call.range.start)
                    && match &o.kind {
                        OpKind::Wait { count, .. } => {
                            *count == Some(0) || base_name(&o.call.callee) == "consumer_wait"
                        }
                        _ => false,
                    }
            });
            // Every wait of the function waits for all groups (`__pipeline_wait_prior(0)`,
            // `cp.async.wait_all`): what each thread committed is drained whatever the
            // count, so no count can be off.
            let waits: Vec<_> = ops
                .iter()
                .filter_map(|o| match &o.kind {
                    OpKind::Wait { count, .. } => Some(*count),
                    _ => None,
                })
                .collect();
            if drained || (!waits.is_empty() && waits.iter().all(|c| *c == Some(0))) {
                continue;
            }
            let mut fixes = Vec::new();
            if is_if && c.call.kind != SymbolKind::Ptx {
                let in_branch: Vec<TextRange> = commits
                    .iter()
                    .filter(|o| {
                        o.call.kind != SymbolKind::Ptx && branch.contains(&o.call.range.start)
                    })
                    .map(|o| o.call.range.clone())
                    .collect();
                if let Some(fix) = move_after(ctx, &branch, &in_branch, &c.call.range) {
                    fixes.push(fix);
                }
            }
            let written: String = text[c.call.range.clone()]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity: RULE.severity,
                range: c.call.range.clone(),
                message: format!(
                    "`{}` inside `if ({condition})`: threads of one warp that take different paths each add a batch, so later waits count the wrong groups and the copy/compute overlap is lost; commit from converged code",
                    written.trim_end_matches(';')
                ),
                wiki: RULE.wiki[0].to_string(),
                fixes,
            });
        }
    }
}

/// Whether `call` (`pipe.producer_commit()`) is made on a block-scoped `cuda::pipeline`:
/// the object's declared type has `thread_scope_block` as its scope argument
/// (`cuda::pipeline<cuda::thread_scope_block>`), or its initialiser passes a shared state
/// that has (`auto pipe = cuda::make_pipeline(block, &state, role)` with
/// `cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state`). Declarations and
/// their types are syntax facts; a comment or another object that mentions the scope
/// does not count.
fn on_block_pipeline(ctx: &RuleContext, call: &kernaut_syntax::CallSite) -> bool {
    let file = &ctx.file;
    let Some((object, at)) = file.names_in(&call.callee_range).into_iter().next() else {
        return false;
    };
    let Some(pipe) = file.variable_named(&object, at.start) else {
        return false;
    };
    if block_scoped(&pipe.ty) {
        return true;
    }
    pipe.init.is_some_and(|init| {
        file.names_in(&init).iter().any(|(name, at)| {
            file.variable_named(name, at.start)
                .is_some_and(|state| block_scoped(&state.ty))
        })
    })
}

/// Whether a declared type's first template argument is the block scope
/// (`cuda::thread_scope_block`, `cuda::thread_scope::thread_scope_block`).
fn block_scoped(ty: &str) -> bool {
    ty.split_once('<').is_some_and(|(_, args)| {
        args.split([',', '>'])
            .next()
            .is_some_and(|first| kernaut_syntax::short_name(first.trim()) == "thread_scope_block")
    })
}

/// The innermost thread-dependent branch around `offset` that is not warp-uniform: its
/// range, its condition, and whether it is an `if` statement.
fn divergent_branch(ctx: &RuleContext, offset: usize) -> Option<(TextRange, String, bool)> {
    for e in ctx.enclosing(offset).iter() {
        let (condition, range, dependent, is_if) = match &e.kind {
            EnclosingKind::If {
                condition,
                condition_range,
                thread_dependent,
                ..
            } => (condition, condition_range, *thread_dependent, true),
            EnclosingKind::Switch {
                condition,
                condition_range,
                thread_dependent,
                ..
            }
            | EnclosingKind::Conditional {
                condition,
                condition_range,
                thread_dependent,
                ..
            } => (condition, condition_range, *thread_dependent, false),
            EnclosingKind::Function { .. } => return None,
            _ => continue,
        };
        // A condition on threadIdx.y or .z alone splits the block by rows: whole warps when
        // blockDim.x is a multiple of 32, as producer/consumer splits are written.
        let rows_only = (condition.contains("threadIdx.y") || condition.contains("threadIdx.z"))
            && !condition.contains("threadIdx.x");
        // The lowered condition decides whether the lanes of a warp can differ: one
        // shown the same for every lane (`wid == 0` with `wid = threadIdx.x >> 5`) is
        // not a split; one the file leaves open (`tid < ntiles`) still is, as the commit
        // counts of the block's threads differ whenever it splits them.
        if dependent
            && !rows_only
            && uniformity_in_groups(ctx, range, 32, certain_block(ctx, offset))
                != Uniformity::Uniform
        {
            return Some((e.range.clone(), condition.to_string(), is_if));
        }
    }
    None
}

/// Deletes the commits in the branch (each a statement of its own in a block) and writes
/// one after the branch.
fn move_after(
    ctx: &RuleContext,
    branch: &TextRange,
    commits: &[TextRange],
    this: &TextRange,
) -> Option<Fix> {
    let text = ctx.text();
    let mut edits = Vec::new();
    for r in commits {
        // A commit that is the whole body of a brace-less `if`/`else`, or part of a
        // larger statement, cannot be deleted alone.
        let statement = ctx.file.statement_at(r)?;
        if !ctx.file.is_call_statement(r) || !ctx.file.in_block(&statement) {
            return None;
        }
        // The statement's line goes with it when nothing else is on it.
        let start = line_start(text, statement.start);
        let line_end = text[statement.end..]
            .find('\n')
            .map_or(text.len(), |i| statement.end + i + 1);
        let first = text[start..statement.start].trim().is_empty();
        let after = &text[statement.end..line_end];
        let range = if first && after.trim().is_empty() {
            start..line_end
        } else if first {
            // A comment follows: it keeps the statement's place.
            statement.start..statement.end + (after.len() - after.trim_start().len())
        } else {
            statement
        };
        edits.push(TextEdit::replace(range, ""));
    }
    let statement = ctx.file.statement_at(this)?;
    let indent = indent_at(text, branch.start);
    edits.push(TextEdit::insert(
        branch.end,
        format!("\n{indent}{}", &text[statement]),
    ));
    Some(Fix {
        safe: false,
        title: "Move the commit after the branch".into(),
        edits,
    })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_no_fix};

    const RULE: &str = "async-copy/commit-in-divergent-branch";

    const HIT: &str = r#"
__global__ void k(const float* in, int ntiles) {
    __shared__ float buf[2][256];
    int tid = threadIdx.x;
    for (int t = 0; t < ntiles; ++t) {
        if (tid < ntiles - t) {
            __pipeline_memcpy_async(&buf[t % 2][tid], &in[t * 256 + tid], sizeof(float));
            __pipeline_commit();
        }
        __pipeline_wait_prior(1);
    }
}
"#;

    #[test]
    fn commit_inside_a_thread_branch() {
        check(
            RULE,
            r#"
__global__ void k(const float* in, int ntiles, cuda::pipeline<cuda::thread_scope_thread>& pipe) {
    int tid = threadIdx.x;
    if (tid < ntiles) {
        pipe.producer_commit();
     // ^^^^^^^^^^^^^^^^^^^^^^ warning: `pipe.producer_commit()` inside `if (tid < ntiles)`
    }
    if (threadIdx.x % 2 == 0) asm volatile("cp.async.commit_group;\n" ::);
                                         // ^^^^^^^^^^^^^^^^^^^^^^ warning: `cp.async.commit_group` inside
}
"#,
        );
    }

    #[test]
    fn converged_and_warp_uniform_commits_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(const float* in, int ntiles) {
    __shared__ float buf[256];
    int tid = threadIdx.x;
    int warp_id = tid / 32;
    if (tid < ntiles)
        __pipeline_memcpy_async(&buf[tid], &in[tid], sizeof(float));
    __pipeline_commit();
    if (warp_id == 0) {
        __pipeline_commit();
    }
    if (threadIdx.x < 64) {
        __pipeline_commit();
    }
    if (ntiles > 4) {
        __pipeline_commit();
    }
    if (threadIdx.y >= 4) {
        __pipeline_commit();
    }
    if (threadIdx.x == 0) {
        __pipeline_commit();
        __pipeline_wait_prior(0);
    }
}
"#,
        );
    }

    /// Where every wait of the kernel drains all groups, a commit under a tail guard
    /// cannot leave a count off; one `wait_prior(1)` makes the counts matter again.
    #[test]
    fn commits_whose_every_wait_drains_all_groups_stay_silent() {
        check(
            RULE,
            r#"
__global__ void drain(uint4* data, int n) {
    extern __shared__ uint4 stage[];
    for (int base = 0; base < n; base += gridDim.x * blockDim.x) {
        int id = base + blockIdx.x * blockDim.x + threadIdx.x;
        if (id < n) {
            __pipeline_memcpy_async(&stage[threadIdx.x], &data[id], sizeof(uint4));
            __pipeline_commit();
        }
        __pipeline_wait_prior(0);
        __syncthreads();
        if (id < n) data[id] = stage[threadIdx.x];
        __syncthreads();
    }
}
__global__ void overlap(uint4* data, int n) {
    extern __shared__ uint4 stage[];
    for (int base = 0; base < n; base += gridDim.x * blockDim.x) {
        int id = base + blockIdx.x * blockDim.x + threadIdx.x;
        if (id < n) {
            __pipeline_memcpy_async(&stage[threadIdx.x], &data[id], sizeof(uint4));
            __pipeline_commit();
         // ^^^^^^^^^^^^^^^^^^^ warning: `__pipeline_commit()` inside `if (id < n)`
        }
        __pipeline_wait_prior(1);
        __syncthreads();
        if (id < n) data[id] = stage[threadIdx.x];
        __syncthreads();
    }
}
"#,
        );
    }

    /// Whether a warp's lanes can differ is read off the lowered condition: `warpSize`
    /// in it does not make it uniform, a warp index computed with `>> 5` or a division
    /// by 64 does.
    #[test]
    fn warp_uniformity_follows_the_lowered_condition() {
        check(
            RULE,
            r#"
__global__ void k(const float* in) {
    int wid = threadIdx.x >> 5;
    if (threadIdx.x < warpSize / 2) {
        __pipeline_commit();
     // ^^^^^^^^^^^^^^^^^^^ warning: `__pipeline_commit()` inside `if (threadIdx.x < warpSize / 2)`
    }
    if (wid == 0) {
        __pipeline_commit();
    }
    if (threadIdx.x / 64 == 1) {
        __pipeline_commit();
    }
    if ((threadIdx.x & 31) < 16) {
        __pipeline_commit();
     // ^^^^^^^^^^^^^^^^^^^ warning: `__pipeline_commit()` inside `if ((threadIdx.x & 31) < 16)`
    }
}
"#,
        );
    }

    #[test]
    fn fix_moves_the_commit_after_the_branch() {
        check_fix(
            RULE,
            HIT,
            0,
            expect![[r#"
                // Move the commit after the branch
                __global__ void k(const float* in, int ntiles) {
                    __shared__ float buf[2][256];
                    int tid = threadIdx.x;
                    for (int t = 0; t < ntiles; ++t) {
                        if (tid < ntiles - t) {
                            __pipeline_memcpy_async(&buf[t % 2][tid], &in[t * 256 + tid], sizeof(float));
                        }
                        __pipeline_commit();
                        __pipeline_wait_prior(1);
                    }
                }
            "#]],
        );
    }

    #[test]
    fn fix_reads_the_statements_not_the_line_before() {
        // The line before ends with `)` (a comment), the second commit shares its line
        // with a comment: both are statements of the block.
        check_fix(
            RULE,
            r#"
__global__ void k(const float* in, int n) {
    __shared__ float buf[256];
    int tid = threadIdx.x;
    if (tid < n) {
        __pipeline_memcpy_async(&buf[tid], &in[tid], sizeof(float));
        // one group per stage (see the wait below)
        __pipeline_commit();
        __pipeline_commit(); // an empty group
    }
    __pipeline_wait_prior(1);
}
"#,
            0,
            expect![[r#"
                // Move the commit after the branch
                __global__ void k(const float* in, int n) {
                    __shared__ float buf[256];
                    int tid = threadIdx.x;
                    if (tid < n) {
                        __pipeline_memcpy_async(&buf[tid], &in[tid], sizeof(float));
                        // one group per stage (see the wait below)
                        // an empty group
                    }
                    __pipeline_commit();
                    __pipeline_wait_prior(1);
                }
            "#]],
        );
        check_no_fix(
            RULE,
            r#"
__global__ void k(int n) {
    if (threadIdx.x < n) {
        n += 1;
    } else __pipeline_commit();
}
"#,
        );
    }

    #[test]
    fn no_fix_for_a_braceless_body() {
        check_no_fix(
            RULE,
            r#"
__global__ void k(int n) {
    if (threadIdx.x < n)
        __pipeline_commit();
}
"#,
        );
    }

    #[test]
    fn mbarrier_pipeline_producer_commit_from_one_thread_stays_silent() {
        check(
            RULE,
            r#"
template <class Pipeline, class State>
__global__ void producer(Pipeline pipeline, State state, int tiles, unsigned bytes) {
    int warp_idx = threadIdx.x / 32;
    bool leader = (threadIdx.x % 32) == 0;
    for (int t = 0; t < tiles; ++t) {
        if (warp_idx == 0 && leader) {
            pipeline.producer_acquire(state);
            pipeline.producer_commit(state, bytes);
        }
        ++state;
    }
}
"#,
        );
    }

    #[test]
    fn producer_commit_on_a_block_scoped_pipeline_stays_silent() {
        // The producer branch of a block-scoped pipeline (its type, or the shared state
        // its `make_pipeline` takes) commits by design; a thread-scoped pipeline's
        // commit in a lane branch is reported, whatever a comment says.
        check(
            RULE,
            r#"
#include <cuda/pipeline>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(const float* in, float* out) {
    __shared__ float buf[256];
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
    auto block = cg::this_thread_block();
    auto pipe = cuda::make_pipeline(block, &state, threadIdx.x % 32 < 16 ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer);
    if (threadIdx.x % 32 < 16) {
        pipe.producer_acquire();
        cuda::memcpy_async(&buf[threadIdx.x], &in[threadIdx.x], sizeof(float), pipe);
        pipe.producer_commit();
    }
}
__global__ void j(const float* in, float* out) {
    __shared__ float buf[256];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    // not a cuda::thread_scope_block pipeline
    if (threadIdx.x % 32 < 16) {
        pipe.producer_acquire();
        cuda::memcpy_async(&buf[threadIdx.x], &in[threadIdx.x], sizeof(float), pipe);
        pipe.producer_commit();
     // ^^^^^^^^^^^^^^^^^^^^^^ warning: `pipe.producer_commit()` inside `if (threadIdx.x % 32 < 16)`
    }
}
"#,
        );
    }
}
