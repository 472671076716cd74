//! How many times a thread runs a `for` loop's body at the kernel's launches: the loop's
//! bound is a kernel parameter that each launch passes as a constant (`for (t = 0; t <
//! taps; ++t)` launched with `taps` = 16), or a grid-stride loop (`for (i = blockIdx.x *
//! blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)`) whose launches give
//! the grid, the block and `n`: each thread then runs at most `ceil(n / (grid * block))`
//! trips, one where the launch covers `n`.

use kernaut_syntax::{EnclosingKind, TextRange};

use super::RuleContext;

/// The shape of a `for` header this module reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrideLoop {
    /// The kernel parameter that bounds the variable (`n` in `i < n`).
    pub bound: String,
    /// Whether the step is the grid's size in threads (`gridDim.x * blockDim.x`), from a
    /// start that is the thread's global index; otherwise a step of 1 from a constant.
    pub grid_stride: bool,
}

/// `s` without whitespace and parentheses, to compare with the shapes below.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && *c != '(' && *c != ')')
        .collect()
}

const GRID_STEPS: [&str; 2] = ["gridDim.x*blockDim.x", "blockDim.x*gridDim.x"];
const GLOBAL_INDICES: [&str; 4] = [
    "blockIdx.x*blockDim.x+threadIdx.x",
    "blockDim.x*blockIdx.x+threadIdx.x",
    "threadIdx.x+blockIdx.x*blockDim.x",
    "threadIdx.x+blockDim.x*blockIdx.x",
];

/// The expression `text` at `at`, a name of a local no assignment reaches read as its
/// initialiser (`stride` for `const int stride = gridDim.x * blockDim.x;`).
fn through_local(ctx: &RuleContext, text: &str, at: usize) -> String {
    let t = text.trim();
    if super::is_identifier(t) {
        if let Some(init) = ctx.file.initializer_of(t, at) {
            let written = ctx.file.variable_named(t, at).is_some_and(|v| {
                ctx.file
                    .uses_of(&v)
                    .iter()
                    .any(|u| u.write.is_some() || u.address_of)
            });
            if !written {
                return ctx.text()[init].to_string();
            }
        }
    }
    t.to_string()
}

/// The shape of the `for` loop at `range` (its chain entry `kind`) that
/// [`trips_at_launches`] reads: bounded by a name (`i < n`), stepping by one from a
/// constant or by the grid's size from the thread's global index.
pub fn stride_loop(
    ctx: &RuleContext,
    range: &TextRange,
    kind: &EnclosingKind,
) -> Option<StrideLoop> {
    let EnclosingKind::For {
        header,
        var: Some(var),
        start,
        ..
    } = kind
    else {
        return None;
    };
    let parts: Vec<&str> = header.split(';').collect();
    let [_, cond, step] = parts.as_slice() else {
        return None;
    };
    let cond = squash(cond);
    let bound = cond
        .strip_prefix(&format!("{var}<"))
        .filter(|b| !b.starts_with('='))?
        .to_string();
    if !super::is_identifier(&bound) {
        return None;
    }
    let step = squash(step);
    let grid_stride = if step == format!("++{var}")
        || step == format!("{var}++")
        || step == format!("{var}+=1")
    {
        start
            .as_deref()
            .and_then(|s| ctx.facts.fold_text(s, range.start))
            .is_some()
            .then_some(false)?
    } else {
        let s = step.strip_prefix(&format!("{var}+="))?;
        let s = squash(&through_local(ctx, s, range.start));
        let from = squash(&through_local(ctx, start.as_deref()?, range.start));
        (GRID_STEPS.contains(&s.as_str()) && GLOBAL_INDICES.contains(&from.as_str()))
            .then_some(true)?
    };
    Some(StrideLoop { bound, grid_stride })
}

/// The most trips a thread runs of the loop at `range` at any launch of its kernel in this file,
/// when every launch of it fixes them ([`stride_loop`] shapes); `None` otherwise (a
/// launch in another file, an argument the file does not fold, no launch).
pub fn trips_at_launches(
    ctx: &RuleContext,
    range: &TextRange,
    kind: &EnclosingKind,
) -> Option<i64> {
    let shape = stride_loop(ctx, range, kind)?;
    let f = ctx.facts.function_at(range.start).filter(|f| f.is_kernel)?;
    let index = f.params.iter().position(|p| p.name == shape.bound)?;
    // The bound is the parameter's value: no assignment in the kernel changes it.
    if let Some(v) = ctx.file.variable_named(&shape.bound, range.start) {
        if ctx
            .file
            .uses_of(&v)
            .iter()
            .any(|u| u.write.is_some() || u.address_of)
        {
            return None;
        }
    }
    let scope = ctx.scope();
    let launches = scope.launches(&f.name);
    if launches.is_empty() {
        return None;
    }
    let mut most = 0i64;
    for (path, l) in launches {
        if path != scope.path {
            return None;
        }
        let n = ctx.facts.fold_text(l.args.get(index)?, l.range.start)?;
        let trips = if shape.grid_stride {
            let threads = l.grid.value?[0].checked_mul(l.block.value?[0])?;
            if threads <= 0 {
                return None;
            }
            (n.max(0) + threads - 1) / threads
        } else {
            let s = match kind {
                EnclosingKind::For { start: Some(s), .. } => ctx.facts.fold_text(s, range.start)?,
                _ => return None,
            };
            (n - s).max(0)
        };
        most = most.max(trips);
    }
    Some(most)
}
