//! `sync/barrier-in-divergent-branch`: `__syncthreads()` (or `block.sync()`) reached only
//! by the threads that take a branch on the thread index.
//!
//! A block barrier must be reached by every thread of the block; inside `if (tid < n)`
//! the other threads never arrive, and the block hangs or the barrier silently
//! misbehaves (`pitfall-synchronization#P1`). Named barriers with a thread count
//! (`bar.sync id, count`), `__syncwarp()` and barriers under conditions that do not depend
//! on the thread index stay silent. There is no automatic fix: the work inside the branch
//! must be split around a barrier that all threads reach.
//!
//! ```cuda
//! // Before
//! if (tid < s) { sdata[tid] += sdata[tid + s]; __syncthreads(); }
//! // After
//! if (tid < s) sdata[tid] += sdata[tid + s];
//! __syncthreads();
//! ```

use kernaut_syntax::SymbolKind;

use super::async_ops::base_name;
use super::{thread_dependent_branch, Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("barrier_in_divergent_branch.rs"),
    id: "sync/barrier-in-divergent-branch",
    severity: Severity::Warning,
    wiki: &["pitfall-synchronization#P1"],
    run,
};

/// Whether `call` is a barrier of the whole block.
fn is_block_barrier(call: &kernaut_syntax::CallSite) -> bool {
    if call.kind == SymbolKind::Ptx {
        return false;
    }
    match base_name(&call.callee) {
        "__syncthreads" | "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or" => true,
        "sync" => {
            let t = call.callee_text.to_ascii_lowercase();
            call.callee.contains("thread_block")
                || call.callee.contains("grid_group")
                || (call.callee == "sync" && (t.starts_with("block.") || t.starts_with("cta.")))
                || t.contains("this_thread_block()")
        }
        _ => false,
    }
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    if !ctx.text().contains("sync") {
        return;
    }
    let mut seen = kernaut_syntax::FxHashSet::default();
    let bodies = ctx.bodies_mentioning(&["sync"]);
    ctx.prefetch_calls(&bodies);
    for body in bodies {
        for call in ctx.calls_in_body(body.start).iter() {
            if !is_block_barrier(call) || !seen.insert(call.range.clone()) {
                continue;
            }
            let Some((_, condition)) = thread_dependent_branch(ctx, call.range.start) else {
                continue;
            };
            let written: String = ctx.text()[call.range.clone()]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity: RULE.severity,
                range: call.range.clone(),
                message: format!(
                    "`{written}` inside `if ({condition})`: threads that skip the branch never reach the block barrier, so the block can hang or synchronise the wrong threads; move the barrier out of the branch"
                ),
                wiki: RULE.wiki[0].to_string(),
                fixes: Vec::new(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::check;

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
}
