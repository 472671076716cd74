//! Branch conditions: whether a condition splits a warp, is warp-uniform or depends on the
//! thread, and the ranges guarded by an architecture check.

use super::*;
use kernaut_syntax::EnclosingKind;

/// Whether a thread-dependent condition is still the same for all lanes of a warp: it
/// names a warp index, divides the thread index by the warp size, or compares it with `<`
/// or `>=` against multiples of 32 only.
pub fn warp_uniform(condition: &str) -> bool {
    let c = condition.to_ascii_lowercase();
    if c.contains("lane") || c.contains('%') || c.contains("& 31") || c.contains("&31") {
        return false;
    }
    if c.contains("warp")
        || c.contains("/ 32")
        || c.contains("/32")
        || c.contains(">> 5")
        || c.contains(">>5")
    {
        return true;
    }
    let b = c.as_bytes();
    let mut saw = false;
    let mut i = 0;
    while i < b.len() {
        let op_len = match (b[i], b.get(i + 1)) {
            (b'<', Some(b'=')) | (b'>', Some(b'=')) | (b'=', Some(b'=')) | (b'!', Some(b'=')) => 2,
            (b'<', Some(b'<')) | (b'>', Some(b'>')) => {
                i += 2;
                continue;
            }
            (b'<', _) | (b'>', _) => 1,
            _ => {
                i += 1;
                continue;
            }
        };
        let op = &c[i..i + op_len];
        let rest = c[i + op_len..].trim_start();
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let ok = match digits.parse::<i64>() {
            Ok(n) => matches!(op, "<" | ">=") && n % 32 == 0,
            Err(_) => false,
        };
        if !ok {
            return false;
        }
        saw = true;
        i += op_len;
    }
    saw
}

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
            } => return Some((e.range.clone(), condition.clone())),
            EnclosingKind::Function { .. } => return None,
            _ => {}
        }
    }
    None
}
