//! Thread-dependent early exits before a block barrier: `return` ahead of a barrier in
//! the same function, `continue` ahead of a barrier later in the loop body, and `break`
//! out of a loop that holds a barrier, each under an `if` on the thread index.
//!
//! A `return` from a kernel ends the thread, and PTX `bar.sync` waits only for threads
//! that have not exited (the `exit` instruction releases a barrier held up only by exiting
//! threads), so it does not hang on today's hardware; it is reported as a hint, for the
//! programming guide's rule and for the work the exited threads skip. A `return` from a
//! `__device__` function, a `continue` and a `break` leave the thread alive past the
//! barrier it skipped: a warning.

use kernaut_syntax::{EnclosingKind, TextRange};

use super::{thread_dependent_branch, RuleContext, RuleDiagnostic, RULE};
use crate::config::Severity;

/// Reports the early exits of the function body `body`, whose block barriers (in
/// document order) are `barriers`.
pub(super) fn check(
    ctx: &RuleContext,
    body: &TextRange,
    barriers: &[TextRange],
    out: &mut Vec<RuleDiagnostic>,
) {
    if barriers.is_empty() {
        return;
    }
    let text = ctx.text();
    for (word, at) in jumps(text, body.clone()) {
        let chain = ctx.enclosing(at);
        // The loop a `continue` or `break` leaves (a `break` in a `switch` leaves the
        // `switch`), or the function a `return` leaves.
        let left = if word == "return" {
            body.clone()
        } else {
            let target = chain.iter().find(|e| match e.kind {
                EnclosingKind::For { .. }
                | EnclosingKind::While { .. }
                | EnclosingKind::DoWhile { .. }
                | EnclosingKind::Function { .. } => true,
                EnclosingKind::Switch { .. } => word == "break",
                _ => false,
            });
            match target {
                Some(e)
                    if !matches!(
                        e.kind,
                        EnclosingKind::Function { .. } | EnclosingKind::Switch { .. }
                    ) =>
                {
                    e.range.clone()
                }
                _ => continue,
            }
        };
        // The barrier the leaving threads miss: for `return` and `continue` one after the
        // exit (in the function, in the loop body), for `break` any in the loop.
        let missed = barriers
            .iter()
            .find(|b| left.contains(&b.start) && (word == "break" || b.start > at));
        let Some(missed) = missed else {
            continue;
        };
        // The branch that makes the exit thread-dependent must be inside what is left.
        let Some((branch, condition)) = thread_dependent_branch(ctx, at) else {
            continue;
        };
        if !left.contains(&branch.start) || branch.start == left.start {
            continue;
        }
        let end = statement_end(text, at);
        let written: String = text[missed.clone()].split_whitespace().collect();
        let in_kernel = chain.iter().any(|e| {
            matches!(
                e.kind,
                EnclosingKind::Function {
                    is_kernel: true,
                    ..
                }
            )
        });
        let guard = format!("guard the work instead (`if (!({condition})) {{ ... }}`)");
        let (severity, message) = match word {
            // The thread exits. PTX `exit` releases a block barrier that only exited
            // threads hold up, so this does not hang today, but it is outside what the
            // programming guide allows, and the work of the exited threads is not done.
            "return" if in_kernel => (
                Severity::Hint,
                format!(
                    "`return` under `if ({condition})` ends some threads of the block before `{written}`: the CUDA programming guide allows a block barrier only where every thread of the block reaches it; today the hardware lets the barrier complete without the exited threads (PTX `exit` releases a barrier held up only by exited threads), but their part of the shared-memory work before the barrier is never done; keep every thread to the barrier and {guard}"
                ),
            ),
            "return" => (
                RULE.severity,
                format!(
                    "`return` under `if ({condition})` leaves this device function for some threads of the block, which skip `{written}` below but keep running in the caller: a block barrier that not every live thread reaches is undefined behaviour (the block can hang, or this barrier pairs with a later one); keep every thread to the barrier and {guard}"
                ),
            ),
            "continue" => (
                RULE.severity,
                format!(
                    "`continue` under `if ({condition})` skips `{written}` later in this iteration for some threads of the block, which stay alive and reach the barrier of the next iteration instead: a block barrier that not every live thread reaches is undefined behaviour (the block can hang, or the barriers pair up wrongly); keep every thread to the barrier and {guard}"
                ),
            ),
            _ => (
                RULE.severity,
                format!(
                    "`break` under `if ({condition})` leaves the loop for some threads of the block, which stay alive and miss `{written}` in every later iteration: a block barrier that not every live thread reaches is undefined behaviour (the block can hang, or the barriers pair up wrongly); keep every thread in the loop and {guard}"
                ),
            ),
        };
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity,
            range: at..end,
            message,
            wiki: RULE.wiki[0].to_string(),
            fixes: Vec::new(),
        });
    }
}

/// The end of the statement that starts at `at`: after its `;` (outside brackets), or
/// the end of the line.
fn statement_end(text: &str, at: usize) -> usize {
    let mut depth = 0i32;
    for (i, c) in text[at..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ';' if depth <= 0 => return at + i + 1,
            '\n' if depth <= 0 => return at + i,
            _ => {}
        }
    }
    text.len()
}

/// The `return`, `continue` and `break` keywords in `range` of `text`, outside comments,
/// strings and character literals.
fn jumps(text: &str, range: TextRange) -> Vec<(&'static str, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = range.start;
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < range.end.min(b.len()) {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            c if is_ident(c) => {
                let start = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                for word in ["return", "continue", "break"] {
                    if &text[start..i] == word {
                        out.push((word, start));
                    }
                }
            }
            _ => i += 1,
        }
    }
    out
}
