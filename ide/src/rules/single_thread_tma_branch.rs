//! `async-copy/single-thread-tma-branch`: a bulk (TMA) copy issued inside
//! `if (threadIdx.x == 0)`.
//!
//! Bulk copies take their operands in uniform registers; the compiler cannot prove that one
//! lane runs a thread-index branch, so it wraps the copy in a loop over the active lanes
//! (`pitfall-async-copy#P5`). The fix elects the lane with `cooperative_groups::invoke_one`.
//!
//! ```cuda
//! // Before
//! if (threadIdx.x == 0)
//!     cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar);
//! // After
//! if (threadIdx.x == 0)
//!     cooperative_groups::invoke_one(cooperative_groups::coalesced_threads(), [&] { cuda::memcpy_async(smem, gmem, cuda::aligned_size_t<16>(bytes), bar); });
//! ```

use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    id: "async-copy/single-thread-tma-branch",
    severity: Severity::Warning,
    wiki: &["pitfall-async-copy#P5"],
    run,
};

fn run(_ctx: &RuleContext, _out: &mut Vec<RuleDiagnostic>) {}
