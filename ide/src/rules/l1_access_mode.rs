//! `async-copy/l1-access-mode`: an async copy of 4 or 8 bytes where 16-byte copies were
//! possible.
//!
//! Only 16-byte, 16-byte-aligned `cp.async` copies can bypass L1 (`cp.async.cg`); 4- and
//! 8-byte copies are `cp.async.ca` and take four or two times the instructions
//! (`pitfall-async-copy#P1`).
//!
//! ```cuda
//! // Before: one float per thread.
//! __pipeline_memcpy_async(&tile[tid], &g[base + tid], sizeof(float));
//! // After: a float4 per thread, a quarter of the threads.
//! if (tid < T / 4) __pipeline_memcpy_async(&tile[4 * tid], &g[base + 4 * tid], 16);
//! ```

use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    id: "async-copy/l1-access-mode",
    severity: Severity::Hint,
    wiki: &["pitfall-async-copy#P1"],
    run,
};

fn run(_ctx: &RuleContext, _out: &mut Vec<RuleDiagnostic>) {}
