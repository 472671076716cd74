//! Branch conditions: whether a condition depends on the thread, and the ranges guarded
//! by an architecture check. (Whether one is the same for the lanes of a warp or a tile:
//! `barriers::uniformity_in_groups`, on the lowered guard.)

use super::*;
use kernaut_syntax::EnclosingKind;

/// The innermost `if` (or `switch`, or `?:`) around `offset` whose condition depends on
/// the thread index, inside the function: its range and condition.
pub fn thread_dependent_branch(ctx: &RuleContext, offset: usize) -> Option<(TextRange, String)> {
    for e in ctx.enclosing(offset).iter() {
        match &e.kind {
            EnclosingKind::If {
                condition,
                thread_dependent: true,
                ..
            }
            | EnclosingKind::Switch {
                condition,
                thread_dependent: true,
                ..
            }
            | EnclosingKind::Conditional {
                condition,
                thread_dependent: true,
                ..
            } => return Some((e.range.clone(), condition.to_string())),
            EnclosingKind::Function { .. } => return None,
            _ => {}
        }
    }
    None
}
