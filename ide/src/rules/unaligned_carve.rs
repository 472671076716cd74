//! `smem/unaligned-carve`: an `extern __shared__` buffer carved at an offset that is not a
//! multiple of 16 bytes.
//!
//! Vector accesses and async copies need 16-byte alignment, and swizzled layouts assume the
//! tile starts at the pattern's period (`pitfall-bank-conflict#P6`). The fix rounds the
//! offset up to 128.
//!
//! ```cuda
//! // Before
//! float4* b = reinterpret_cast<float4*>(smem + 130);
//! // After
//! float4* b = reinterpret_cast<float4*>(smem + 256);
//! ```

use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    id: "smem/unaligned-carve",
    severity: Severity::Hint,
    wiki: &["pitfall-bank-conflict#P6"],
    run,
};

fn run(_ctx: &RuleContext, _out: &mut Vec<RuleDiagnostic>) {}
