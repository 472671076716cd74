//! What the three race rules share: the words and fixes their diagnostics are made of.
//! The races of the file's kernels come from `RuleContext::races`, run once per rules
//! run.

use crate::config::Severity;
use crate::races::{Op, Race, RaceSide};

use super::{indent_at, line_start, Fix, TextEdit};

/// A warning when the race follows from the launch alone, a hint when it rests on an
/// assumption.
pub(super) fn severity(race: &Race, default: Severity) -> Severity {
    if race.assumption.is_some() {
        Severity::Hint
    } else {
        default
    }
}

/// `thread 3 writes `s[3]` at line 12`.
pub(super) fn says(race: &Race, side: &RaceSide) -> String {
    format!(
        "{} {} `{}` at line {}",
        race.thread_name(side),
        side.op.verb(),
        side.element,
        side.line
    )
}

/// ` (block 32×8 from the launch at line 40)`, ` (assuming …)`.
pub(super) fn context(race: &Race) -> String {
    let b = race.block_dims;
    let block = if b[2] > 1 {
        format!("{}×{}×{}", b[0], b[1], b[2])
    } else if b[1] > 1 {
        format!("{}×{}", b[0], b[1])
    } else {
        b[0].to_string()
    };
    match (&race.assumption, race.launch_line) {
        (Some(a), _) => format!(" (assuming {a}, which the launch does not fix)"),
        (None, Some(l)) => format!(" (block of {block} from the launch at line {l})"),
        (None, None) => String::new(),
    }
}

/// The fix that turns a read-modify-write (`x++`, `x += v`, `x -= v`, `x |= v`, …) written
/// as its own statement into the matching atomic.
pub(super) fn atomic_fix(text: &str, side: &RaceSide) -> Option<Fix> {
    let stmt = text.get(side.stmt.clone())?;
    let access = text.get(side.range.clone())?;
    let before = text.get(side.stmt.start..side.range.start)?.trim();
    let after = text.get(side.range.end..side.stmt.end)?.trim();
    let after = after.strip_suffix(';')?.trim();
    let (call, value) = match (before, after) {
        ("++", "") | ("", "++") => ("atomicAdd", "1".to_string()),
        ("--", "") | ("", "--") => ("atomicSub", "1".to_string()),
        ("", rest) => {
            let (op, value) = ["+=", "-=", "|=", "&=", "^="]
                .iter()
                .find_map(|op| rest.strip_prefix(op).map(|v| (*op, v.trim())))?;
            if value.is_empty() || value.contains(';') {
                return None;
            }
            match op {
                "+=" => ("atomicAdd", value.to_string()),
                // `atomicSub` exists for integers only.
                "-=" => ("atomicAdd", format!("-({value})")),
                "|=" => ("atomicOr", value.to_string()),
                "&=" => ("atomicAnd", value.to_string()),
                _ => ("atomicXor", value.to_string()),
            }
        }
        _ => return None,
    };
    let _ = stmt;
    Some(Fix {
        title: format!("Make it `{call}(&{access}, {value})`"),
        safe: false,
        edits: vec![TextEdit::replace(
            side.stmt.clone(),
            format!("{call}(&{access}, {value});"),
        )],
    })
}

/// The fix that lets one thread do the store: `if (threadIdx.y == 0) ` before the
/// statement, naming the thread dimensions the block has and the index does not use.
/// `None` when the two threads differ in a dimension the index uses (a guard on the
/// others would not separate them) or only in their block.
pub(super) fn single_thread_fix(text: &str, race: &Race) -> Option<Fix> {
    let (a, b) = (&race.first, &race.second);
    if a.thread == b.thread {
        return None;
    }
    let used = |axis: &str| {
        let index = &b.index_text;
        index.contains(&format!("threadIdx.{axis}"))
            || (axis == "x" && (index.contains("tid") || index.contains("lane")))
    };
    let axes = ["x", "y", "z"];
    let differ: Vec<&str> = (0..3)
        .filter(|&i| a.thread[i] != b.thread[i])
        .map(|i| axes[i])
        .collect();
    if differ.iter().any(|d| used(d)) || !b.index_text.is_empty() && differ.is_empty() {
        return None;
    }
    // Index words that are locals may hide the thread index; only plain subscripts (or a
    // scalar) get a guard.
    let plain = b.index_text.is_empty()
        || b.index_text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .filter(|w| !w.is_empty())
            .all(|w| {
                w.starts_with("threadIdx.")
                    || w.starts_with("blockIdx.")
                    || w.starts_with("blockDim.")
                    || w.chars().all(|c| c.is_ascii_digit())
                    || w.chars()
                        .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            });
    if !plain {
        return None;
    }
    let guard: Vec<String> = (0..3)
        .filter(|&i| race.block_dims[i] > 1 && !used(axes[i]))
        .map(|i| format!("threadIdx.{} == 0", axes[i]))
        .collect();
    if guard.is_empty() {
        return None;
    }
    let condition = guard.join(" && ");
    let _ = text;
    Some(Fix {
        title: format!("Let one thread store: `if ({condition})`"),
        safe: false,
        edits: vec![TextEdit::insert(b.stmt.start, format!("if ({condition}) "))],
    })
}

/// The fix that puts a barrier where [`Race::barrier_at`] says: `__syncthreads()`, or
/// `__syncwarp()` when both threads are in one warp (the only choice inside a branch on the
/// thread index).
pub(super) fn barrier_fix(text: &str, race: &Race) -> Option<Fix> {
    let place = race.barrier_at.as_ref()?;
    let call = if race.same_warp {
        "__syncwarp()"
    } else if place.in_thread_branch {
        return None;
    } else {
        "__syncthreads()"
    };
    let indent = indent_at(text, place.step.start);
    let edit = if place.after {
        TextEdit::insert(place.step.end, format!("\n{indent}{call};"))
    } else {
        // Before the statement, on a line of its own.
        let start = line_start(text, place.step.start);
        if text.get(start..place.step.start)?.trim().is_empty() {
            TextEdit::insert(start, format!("{indent}{call};\n"))
        } else {
            TextEdit::insert(place.step.start, format!("{call}; "))
        }
    };
    let where_ = if place.after {
        "at the end of the loop body"
    } else {
        "before the second access"
    };
    Some(Fix {
        title: format!("Insert `{call};` {where_}"),
        safe: false,
        edits: vec![edit],
    })
}

/// Whether both sides write.
pub(super) fn both_write(race: &Race) -> bool {
    race.first.op != Op::Read && race.second.op != Op::Read
}
