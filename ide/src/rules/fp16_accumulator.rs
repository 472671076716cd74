//! `half/fp16-accumulator`: a `__half` or `__nv_bfloat16` variable accumulated in a loop.
//!
//! fp16 overflows at 65,504 and a running sum of ones stops at 2,048; bf16 stops at 256
//! (`pitfall-half-precision-math#P1`, `#P2`). The fix accumulates in `float`: the
//! declaration, the update widened with `__half2float` / `__bfloat162float`, and the stores
//! of the accumulator narrowed back.
//!
//! ```cuda
//! // Before: the sum is rounded to fp16 every iteration.
//! __half acc = __float2half(0.f);
//! for (int i = tid; i < n; i += stride) acc = __hadd(acc, x[i]);
//! out[blockIdx.x] = acc;
//! // After: an fp32 accumulator, narrowed once.
//! float acc = 0.f;
//! for (int i = tid; i < n; i += stride) acc = acc + __half2float(x[i]);
//! out[blockIdx.x] = __float2half_rn(acc);
//! ```

use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    id: "half/fp16-accumulator",
    severity: Severity::Warning,
    wiki: &["pitfall-half-precision-math#P1", "pitfall-half-precision-math#P2"],
    run,
};

fn run(_ctx: &RuleContext, _out: &mut Vec<RuleDiagnostic>) {}
