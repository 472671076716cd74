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

/// An upper bound on the trips a thread runs of the `for` loop at `range` (`for (p = lane;
/// p < n / 8; p += 32)`): a constant step up from a start that is a constant or a thread
/// index (no lower than 0), below a bound that folds with the constants every launch of
/// the kernel passes ([`crate::model::fixed_kernel_args`]): `ceil((bound - start) /
/// step)` at the smallest start. `None` where any of them is not known.
pub fn trips_at_most(ctx: &RuleContext, range: &TextRange, kind: &EnclosingKind) -> Option<i64> {
    let EnclosingKind::For {
        header,
        var: Some(var),
        start: Some(start),
        step: Some(step),
        ..
    } = kind
    else {
        return None;
    };
    if *step <= 0 {
        return None;
    }
    let f = ctx.facts.function_at(range.start).filter(|f| f.is_kernel)?;
    let fixed = ctx.fixed_kernel_args(f);
    let cond = header.split(';').nth(1)?.trim();
    let bound = cond
        .strip_prefix(&**var)
        .map(str::trim_start)
        .and_then(|c| c.strip_prefix('<'))
        .filter(|b| !b.starts_with('='))?;
    let bound = match ctx.facts.fold_text_with(bound, range.start, &fixed) {
        Some(b) => b,
        // A thread-block cluster has at most 16 blocks (8 portable, 16 with the
        // non-portable size opted in), in all and along any dimension.
        None if is_cluster_size(ctx, &through_local(ctx, bound, range.start), range.start) => 16,
        None => return None,
    };
    let from = through_local(ctx, start, range.start);
    let low = match ctx.facts.fold_text_with(&from, range.start, &fixed) {
        Some(v) => v,
        // A thread's index within its block, or a lane: at least 0.
        None if ["threadIdx.x", "threadIdx.y", "threadIdx.z"].contains(&squash(&from).as_str())
            || squash(&from).starts_with("threadIdx.x%") =>
        {
            0
        }
        None => return None,
    };
    Some(((bound - low).max(0) + step - 1) / step)
}

/// Whether `bound` (at `at`) is a cluster's size: `cluster.dim_blocks().x` (`.y`, `.z`) or
/// `cluster.num_blocks()` of a variable the function declares as a cluster group
/// (`cg::this_cluster()`, `cluster_group`).
fn is_cluster_size(ctx: &RuleContext, bound: &str, at: usize) -> bool {
    let b = squash(bound);
    let Some(receiver) = ["dim_blocks.x", "dim_blocks.y", "dim_blocks.z", "num_blocks"]
        .iter()
        .find_map(|m| b.strip_suffix(&format!(".{m}")))
    else {
        return false;
    };
    super::is_identifier(receiver)
        && ctx.file.initializer_of(receiver, at).is_some_and(|init| {
            let init = &ctx.text()[init];
            init.contains("this_cluster")
        })
        || ctx
            .file
            .variable_named(receiver, at)
            .is_some_and(|v| v.ty.contains("cluster_group"))
}
