//! Pragmas: `#pragma unroll` sites and the loops they apply to.

use super::*;
use crate::util::preorder;

/// A `#pragma unroll` site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnrollPragma {
    /// The range of the pragma line.
    pub range: TextRange,
    /// The factor: `Some(n)` for `#pragma unroll n`, `None` for full unrolling.
    pub factor: Option<i64>,
    /// The text after `unroll`.
    pub factor_text: String,
    /// The range from the end of the word `unroll` to the end of the pragma: the factor
    /// with the blanks before it (empty for a bare `#pragma unroll`).
    pub factor_range: TextRange,
    /// The loop it applies to, if one follows.
    pub loop_range: Option<TextRange>,
}

/// The offsets of the `#` of every line that reads `#pragma unroll…` (blanks allowed
/// around `#`), in order.
pub(crate) fn pragma_unroll_lines(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    // Each such line holds `unroll`: only the lines around its occurrences are read.
    for (at, _) in text.match_indices("unroll") {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[line_start..];
        let trimmed = line.trim_start();
        let hash = line_start + (line.len() - trimmed.len());
        if out.last() == Some(&hash) {
            continue;
        }
        let Some(rest) = trimmed.strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(rest) = rest.strip_prefix("pragma") {
            if rest.trim_start().starts_with("unroll") {
                out.push(hash);
            }
        }
    }
    out
}

impl SourceFile {
    /// Every `#pragma unroll` in the file, with the loop that follows it (found once per
    /// file).
    pub fn unroll_pragmas(&self) -> Vec<UnrollPragma> {
        match self.tree_memo() {
            Some(memo) => memo
                .unroll_pragmas
                .get_or_init(|| self.find_unroll_pragmas().into())
                .to_vec(),
            None => self.find_unroll_pragmas(),
        }
    }

    /// The `#pragma unroll` of the loop that starts at `loop_start`, if it has one
    /// (without copying the file's list).
    pub fn unroll_pragma_of(&self, loop_start: usize) -> Option<UnrollPragma> {
        let of = |p: &&UnrollPragma| p.loop_range.as_ref().is_some_and(|r| r.start == loop_start);
        match self.tree_memo() {
            Some(memo) => memo
                .unroll_pragmas
                .get_or_init(|| self.find_unroll_pragmas().into())
                .iter()
                .find(of)
                .cloned(),
            None => self.find_unroll_pragmas().iter().find(of).cloned(),
        }
    }

    fn find_unroll_pragmas(&self) -> Vec<UnrollPragma> {
        let mut out = Vec::new();
        let text = self.text();
        // Found in the text first (most files have few), then in the tree: a match in a
        // comment or a string has no `preproc_call` around it.
        let mut calls = Vec::new();
        for at in pragma_unroll_lines(text) {
            let Some(root) = self.root_at(at) else {
                continue;
            };
            let call = chain_at(root, at)
                .into_iter()
                .find(|n| n.kind_name() == "preproc_call");
            if let Some(call) = call {
                if calls.last() != Some(&call) {
                    calls.push(call);
                }
            }
        }
        for node in calls {
            let directive = node.field("directive").map(|d| node_text(d, text));
            let arg = node
                .field("argument")
                .map(|a| node_text(a, text).trim())
                .unwrap_or("");
            if directive == Some("#pragma")
                && (arg == "unroll" || arg.starts_with("unroll ") || arg.starts_with("unroll("))
            {
                let factor_text = arg["unroll".len()..].trim().to_string();
                let factor = if factor_text.is_empty() {
                    None
                } else {
                    self.facts().fold_text(&factor_text, node.start_byte())
                };
                let mut next = node.next_named_sibling();
                while let Some(n) = next {
                    if n.kind_name() == "comment" {
                        next = n.next_named_sibling();
                    } else {
                        break;
                    }
                }
                let loop_range = next
                    .filter(|n| {
                        matches!(
                            n.kind_name(),
                            "for_statement" | "while_statement" | "do_statement" | "for_range_loop"
                        )
                    })
                    .map(|n| n.byte_range());
                let end = node.end_byte().min(text.len());
                let trimmed_end = text
                    .get(node.start_byte()..end)
                    .map_or(end, |t| node.start_byte() + t.trim_end().len());
                // The argument starts with `unroll`: the factor follows it.
                let after_word = node
                    .field("argument")
                    .map_or(trimmed_end, |a| {
                        let lead = node_text(a, text).len() - node_text(a, text).trim_start().len();
                        a.start_byte() + lead + "unroll".len()
                    })
                    .min(trimmed_end);
                out.push(UnrollPragma {
                    range: node.start_byte()..trimmed_end,
                    factor,
                    factor_text,
                    factor_range: after_word..trimmed_end,
                    loop_range,
                });
            }
        }
        out
    }
}

/// What one operation of a loop body counts for in [`SourceFile::loop_body_cost`]: an
/// operator, an assignment, an element access or a cast is 1, a call 20 (its body is
/// inlined or a libdevice routine: `sinf`, `cosf`), a nested loop or an `asm` statement
/// makes the cost unknown (its own unrolling multiplies what it holds).
const CALL_COST: u32 = 20;

/// Device math functions that compile to one or two instructions (a `FMNMX`, an `MUFU`
/// and a multiply): they weigh as an operator. nvcc 13.5 `-arch=sm_90 -O3`: loops of 64
/// `m = fmaxf(m, s[t * 64 + x])` and of 64 `e += __expf(s[t * 64 + x] - m)` are unrolled in
/// full (16 `LDS.128` each), where 64 × (4 + 20) would be past the limit.
const CHEAP_CALLS: &[&str] = &[
    "fmaxf",
    "fminf",
    "fmax",
    "fmin",
    "max",
    "min",
    "fabsf",
    "fabs",
    "abs",
    "__expf",
    "__exp10f",
    "__logf",
    "__log2f",
    "__log10f",
    "exp2f",
    "__fdividef",
    "__frcp_rn",
    "rsqrtf",
    "__fsqrt_rn",
    "__saturatef",
    "fmaf",
    "__fmaf_rn",
    "__fmul_rn",
    "__fadd_rn",
    "__float2half",
    "__half2float",
    "__float2bfloat16",
    "__bfloat162float",
    "__hadd",
    "__hmul",
    "__hfma",
    "__hmax",
    "__hmin",
    "__ldg",
];

impl SourceFile {
    /// The size of the body of the loop at `loop_range` (a `for_statement`'s range) as
    /// nvcc's unroller weighs it, in operations (see [`CALL_COST`]); `None` where it is
    /// not known: no such loop, a loop or `asm` statement inside.
    ///
    /// Calibrated in SASS (nvcc 13.5, `-arch=sm_90 -cubin`, `cuobjdump -sass`): a
    /// constant-trip loop with no pragma over `t[threadIdx.x][c]` is unrolled in full when
    /// trips × cost ≤ 600 and not when it is ≥ 768 (see `kernaut_sema::model::Merged`).
    pub fn loop_body_cost(&self, loop_range: &TextRange) -> Option<u32> {
        match self.tree_memo() {
            Some(memo) => memo.body_cost(loop_range, || self.find_loop_body_cost(loop_range)),
            None => self.find_loop_body_cost(loop_range),
        }
    }

    fn find_loop_body_cost(&self, loop_range: &TextRange) -> Option<u32> {
        let root = self.root_at(loop_range.start)?;
        let lp = chain_at(root, loop_range.start)
            .into_iter()
            .find(|n| n.kind_name() == "for_statement" && n.byte_range() == *loop_range)?;
        let body = lp.field("body")?;
        let mut cost: u32 = 0;
        let mut known = true;
        preorder(body, |n| {
            match n.kind_name() {
                "for_statement" | "while_statement" | "do_statement" | "for_range_loop"
                | "gnu_asm_expression" | "asm_statement" => {
                    known = false;
                    return false;
                }
                "binary_expression"
                | "assignment_expression"
                | "update_expression"
                | "subscript_expression"
                | "cast_expression"
                | "conditional_expression" => cost = cost.saturating_add(1),
                "call_expression" => {
                    let cheap = n
                        .field("function")
                        .is_some_and(|f| CHEAP_CALLS.contains(&node_text(f, self.text()).trim()));
                    cost = cost.saturating_add(if cheap { 1 } else { CALL_COST });
                }
                _ => {}
            }
            true
        });
        known.then_some(cost.max(1))
    }
}
