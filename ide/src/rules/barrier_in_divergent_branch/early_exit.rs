//! Thread-dependent early exits before a block barrier: `return` ahead of a barrier in
//! the same function, `continue` ahead of a barrier later in the loop body, and `break`
//! out of a loop that holds a barrier, each under an `if` on the thread index.

use kernaut_syntax::{EnclosingKind, TextRange};

use super::{thread_dependent_branch, RuleContext, RuleDiagnostic, RULE};

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
        let (leaves, arrive) = match word {
            "return" => (
                "leaves the function",
                format!("never arrive at `{written}` below"),
            ),
            "continue" => (
                "skips the rest of the loop body",
                format!("never arrive at `{written}` later in this iteration"),
            ),
            _ => (
                "leaves the loop",
                format!("miss `{written}` in every later iteration"),
            ),
        };
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: RULE.severity,
            range: at..end,
            message: format!(
                "`{word}` under `if ({condition})` {leaves} for some threads of the block, and they {arrive}: a block barrier that not every thread of the block reaches is undefined behaviour (the block can hang, or the barrier releases the wrong threads); keep every thread running to the barrier and guard the work instead (`if (!({condition})) {{ ... }}`)"
            ),
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
