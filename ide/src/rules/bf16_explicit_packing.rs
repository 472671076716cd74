//! `half/bf16-explicit-packing`: packed bf16 arithmetic written for speed where it cannot
//! pay.
//!
//! On the H200 packed bf16 `__hfma2` runs exactly at the packed fp16 rate, 1.62–1.99× the
//! scalar rate, but only in compute-bound code (`skill-half-precision-math#S2`).
//!
//! ```cuda
//! // Before: one packed FMA per pair loaded from global memory.
//! y[i] = __hfma2(x[i], a2, b2);
//! ```

use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    id: "half/bf16-explicit-packing",
    severity: Severity::Hint,
    wiki: &["skill-half-precision-math#S2"],
    run,
};

fn run(_ctx: &RuleContext, _out: &mut Vec<RuleDiagnostic>) {}
