//! `ilp/over-unroll`: `#pragma unroll N` with N above 16 on a loop with a large body.
//!
//! Unrolling multiplies code size and register live ranges; beyond the ILP the latency
//! needs it buys only the loop overhead (`pitfall-ilp#P4`).
//!
//! ```cuda
//! // Before
//! #pragma unroll 64
//! for (int k = 0; k < K; ++k) { /* a large body */ }
//! // After
//! #pragma unroll 4
//! for (int k = 0; k < K; ++k) { /* a large body */ }
//! ```

use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    id: "ilp/over-unroll",
    severity: Severity::Hint,
    wiki: &["pitfall-ilp#P4"],
    run,
};

fn run(_ctx: &RuleContext, _out: &mut Vec<RuleDiagnostic>) {}
