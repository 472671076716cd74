//! `bank-conflict`: a `__shared__` access whose lanes hit one bank in several words.
//!
//! Each access goes through the one bank model the hover shows ([`crate::model::bank`]):
//! a warning from a 4-way conflict, a hint at 2- and 3-way, nothing for broadcasts. The
//! block comes from the launches of the kernel in every open file; without one,
//! the configured default is assumed, and a conflict is reported only when it also holds
//! under the other plausible blocks (rows narrower than a warp where the kernel uses
//! `threadIdx.y`). An index whose conflict depends on a value the file does not show (a
//! kernel parameter in the stride) is left alone, and adjacent scalar accesses that
//! ptxas merges into one 8- or 16-byte access are modelled as that access.
//!
//! The fix pads the inner dimension of a 2-D (or deeper) array by the fewest elements that
//! remove the conflict without making another access of the array worse. There is no fix
//! when the padding would push the block's static shared memory past the per-block limit
//! (swizzle instead, `pitfall-bank-conflict#P2`), or when no padding helps (a stride inside
//! the row, `#P5`).
//!
//! ```cuda
//! // Before: the column read is a 32-way conflict.
//! __shared__ float tile[32][32];
//! out[i] = tile[threadIdx.x][threadIdx.y];
//! // After: one word of padding per row.
//! __shared__ float tile[32][33];
//! out[i] = tile[threadIdx.x][threadIdx.y];
//! ```

use std::cell::{OnceCell, RefCell};

use kernaut_syntax::{AccessKind, IndexExpr, SharedAccess, SharedDecl};

use super::{Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;
use crate::model::{
    bank_of_offset, bank_with, launch_config, LaunchConfig, MergeDoubt, Scope, StaticSharedTable,
};
use crate::reports::{BankAnalysis, BlockSource, FxHashMap as HashMap};

pub(crate) const RULE: Rule = Rule {
    source: include_str!("bank_conflict.rs"),
    id: "bank-conflict",
    severity: Severity::Warning,
    wiki: &[
        "pitfall-bank-conflict#P1",
        "pitfall-bank-conflict#P2",
        "pitfall-bank-conflict#P4",
        "pitfall-bank-conflict#P5",
    ],
    run,
};

/// What one run shares between accesses: the model's answer for each access and the
/// accesses of each array in each function.
struct Run<'c, 'a> {
    ctx: &'c RuleContext<'a>,
    scope: Scope<'c>,
    all: &'c [SharedAccess],
    /// Indices into the accesses, by (array, function), in document order.
    groups: HashMap<(&'c str, Option<&'c str>), Vec<usize>>,
    /// The model's answer for each access (by index).
    banks: RefCell<HashMap<usize, Option<BankAnalysis>>>,
    /// The launch configuration of each function.
    launches: RefCell<HashMap<Option<&'c str>, LaunchConfig>>,
    /// The static shared memory of each function, built on the first ask.
    static_bytes: OnceCell<StaticSharedTable<'c>>,
}

impl<'c, 'a> Run<'c, 'a> {
    fn new(ctx: &'c RuleContext<'a>, all: &'c [SharedAccess]) -> Self {
        let mut groups: HashMap<(&str, Option<&str>), Vec<usize>> = HashMap::default();
        for (i, a) in all.iter().enumerate() {
            groups
                .entry((a.array.as_str(), a.function.as_deref()))
                .or_default()
                .push(i);
        }
        Run {
            ctx,
            scope: ctx.scope(),
            all,
            groups,
            banks: RefCell::default(),
            launches: RefCell::default(),
            static_bytes: OnceCell::new(),
        }
    }

    /// The model's answer for access `i`.
    fn bank(&self, i: usize) -> Option<BankAnalysis> {
        if let Some(b) = self.banks.borrow().get(&i) {
            return b.clone();
        }
        let a = &self.all[i];
        let function = a.function.as_deref();
        let launch = self
            .launches
            .borrow_mut()
            .entry(function)
            .or_insert_with(|| {
                launch_config(&self.scope, function.and_then(|f| self.ctx.facts.kernel(f)))
            })
            .clone();
        let b = bank_with(&self.scope, self.all, a, &launch);
        self.banks.borrow_mut().insert(i, b.clone());
        b
    }

    /// The static shared memory of the kernel that declares `decl` (for a buffer at file
    /// scope, the function of `a` and the buffer).
    fn static_bytes(&self, decl: &SharedDecl, a: &SharedAccess) -> u64 {
        let table = self
            .static_bytes
            .get_or_init(|| StaticSharedTable::new(self.ctx.facts));
        match decl.function.as_deref() {
            Some(f) => table.get(f).bytes,
            None => a
                .function
                .as_deref()
                .map_or(0, |f| table.get(f).bytes)
                .saturating_add(decl.static_bytes.unwrap_or(0)),
        }
    }
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let accesses = ctx.shared_accesses();
    let run = Run::new(ctx, accesses);
    // The device functions the file's kernels call run under those kernels' launches
    // and with the calls' arguments: their accesses are diagnosed in each such context
    // (below), not under a block of their own.
    let path = ctx.model.host.map_or("", |(_, p)| p);
    let contexts = crate::callers::contexts_in_file(&ctx.scope());
    let called: Vec<&str> = contexts.iter().map(|c| c.function.as_str()).collect();
    for (i, a) in accesses.iter().enumerate() {
        if a.function.as_deref().is_some_and(|f| called.contains(&f)) {
            continue;
        }
        if let Some(d) = run
            .bank(i)
            .and_then(|bank| diagnose(&run, Some(i), a, &bank, None))
        {
            out.push(d);
        }
    }
    if contexts.is_empty() {
        return;
    }
    // Each access of a called function once, in the context that gives the worst
    // conflict (the first on a tie).
    let globals = ctx.file.global_accesses();
    let mut found: Vec<(u32, RuleDiagnostic)> = Vec::new();
    for c in &contexts {
        let Some(kernel) = ctx.facts.kernel(&c.kernel) else {
            continue;
        };
        let launch = run
            .launches
            .borrow_mut()
            .entry(Some(kernel.name.as_str()))
            .or_insert_with(|| launch_config(&run.scope, Some(kernel)))
            .clone();
        let (bound, _) = c.bound_accesses(accesses, &globals);
        let line = run.scope.line_of(path, c.call_range.start);
        for a in &bound {
            if a.kind == AccessKind::AddressOf || !a.byte_offset.depends_on_thread() {
                continue;
            }
            let Some(bank) = crate::callers::bound_bank(&run.scope, &launch, c, &bound, a) else {
                continue;
            };
            let Some(d) = diagnose(&run, None, a, &bank, Some((c, line))) else {
                continue;
            };
            let degree = bank.result.as_ref().map_or(0, |r| r.conflict_degree);
            match found.iter_mut().find(|(_, f)| f.range == d.range) {
                Some((worst, f)) if degree > *worst => {
                    *worst = degree;
                    *f = d;
                }
                Some(_) => {}
                None => found.push((degree, d)),
            }
        }
    }
    out.extend(found.into_iter().map(|(_, d)| d));
}

/// The finding for access `a` (number `i` of the file's accesses, `None` for one bound
/// in a call context) whose bank model is `bank`; `context` is the call context and the
/// line of its call in the kernel, for an access of a called device function.
fn diagnose(
    run: &Run<'_, '_>,
    i: Option<usize>,
    a: &SharedAccess,
    bank: &BankAnalysis,
    context: Option<(&crate::callers::CallContext, u32)>,
) -> Option<RuleDiagnostic> {
    if a.kind == AccessKind::AddressOf || !a.byte_offset.depends_on_thread() {
        return None;
    }
    // A conflict under the block assumed that another plausible block avoids, or one
    // in a branch only part of the warp takes, is the hover's to explain, not a
    // finding.
    let report = bank.definite_conflict()?;
    // One wide access that nvcc makes of several written ones (`t[i][0] = a; t[i][1] =
    // b;` as one `STS.128`) is one finding, at its first part.
    if bank
        .merged
        .as_ref()
        .is_some_and(|m| m.first_part_before(&a.range).is_some())
    {
        return None;
    }
    let (degree, wavefronts) = (report.conflict_degree, report.wavefronts);
    let ideal = report.wavefronts - report.bank_conflicts;
    // A degree that rests on `blockDim.x` (`threadIdx.x * (2048 / blockDim.x)`) where no
    // launch fixes the block is the assumed block's: a hint that states it.
    let block_assumed = !matches!(bank.block_source, BlockSource::Launch { .. })
        && crate::model::depends_on_block_x(
            &a.byte_offset,
            [
                None,
                Some(i64::from(bank.block[1])),
                Some(i64::from(bank.block[2])),
            ],
        );
    // Where no launch gives the block, another shape the kernel may run with (rows of 16
    // threads in a kernel that reads `threadIdx.y`) may give another degree: the message
    // names the lowest, and a warning needs that one to be one.
    let other_degree = (!matches!(bank.block_source, BlockSource::Launch { .. }))
        .then(|| {
            bank.other_blocks
                .iter()
                .filter_map(|(b, d)| Some((*b, (*d)?)))
                .filter(|(_, d)| *d < degree)
                .min_by_key(|(_, d)| *d)
        })
        .flatten();
    let lowest = other_degree.map_or(degree, |(_, d)| d);
    // Lanes past the array's extent under a block no launch gives: the real block is
    // likely narrower than the one assumed (`t[16][16]` read at `[threadIdx.x]
    // [threadIdx.y]` by a 16 × 16 block set field by field), and its warps span rows.
    let bounds_assumed = bank.in_bounds.is_some()
        && !matches!(bank.block_source, BlockSource::Launch { .. })
        && a.byte_offset.mentions(&|e| {
            matches!(
                e,
                kernaut_syntax::IndexExpr::ThreadIdx(
                    kernaut_syntax::Axis::Y | kernaut_syntax::Axis::Z
                )
            )
        });
    let severity = if lowest >= 4
        && !block_assumed
        && !bounds_assumed
        && bank.data_guard.is_none()
        && bank.merge_uncertain.is_none()
    {
        Severity::Warning
    } else {
        Severity::Hint
    };
    let what = match a.kind {
        AccessKind::Store => "store to",
        AccessKind::LoadStore => "update of",
        _ => "load from",
    };
    let mut message = format!(
        "{degree}-way bank conflict: this {what} `{}` takes {wavefronts} wavefronts instead of {ideal}",
        a.array
    );
    // The other parts of the wide access this one heads.
    if let Some(m) = bank.merged.as_ref().filter(|m| m.parts.len() > 1) {
        let scope = run.ctx.scope();
        let mut lines: Vec<u32> = m.parts[1..]
            .iter()
            .map(|r| scope.line_of(scope.path, r.start))
            .collect();
        lines.dedup();
        let lines: Vec<String> = lines.iter().map(ToString::to_string).collect();
        message.push_str(&format!(
            " (one {}-byte access with the part{} at line{} {}, as nvcc merges them)",
            m.width,
            if m.parts.len() > 2 { "s" } else { "" },
            if lines.len() > 1 { "s" } else { "" },
            lines.join(", ")
        ));
    }
    if let Some(sweep) = &bank.sweep {
        message.push_str(&format!(" at the step where {}", sweep.worst_values()));
    }
    message.push_str(&format!(
        ", because lanes of a warp hit {degree} different words of one bank"
    ));
    if let Some(sweep) = &bank.sweep {
        let (all, ideal_all) = sweep.total_wavefronts();
        let first = sweep.steps[0].report.conflict_degree;
        message.push_str(&format!(
            "; over the {} steps of the loop over `{}` (`{}`) warp 0 takes {all} wavefronts instead of {ideal_all} ({} at the first step)",
            sweep.steps.len(),
            sweep.var,
            sweep.update,
            if first < 2 {
                "conflict-free".to_string()
            } else {
                format!("{first}-way")
            }
        ));
    }
    if bank.sweep.is_none() {
        if let Some(var) = scaled_loop_var(&a.byte_offset) {
            message.push_str(&format!(
                " (at the first step of the loop over `{var}`, the only one the model holds: the stride changes each step, so later steps may conflict more)"
            ));
        }
    }
    if let Some(inst) = &bank.instantiation {
        message.push_str(&format!(" (in {})", inst.phrase()));
    }
    if let Some(defaults) = &bank.assumed_defaults {
        message.push_str(&format!(
            " (with the template defaults `{defaults}`: no launch in the file instantiates `{}`)",
            a.function.as_deref().unwrap_or_default()
        ));
    }
    if let Some((c, line)) = context {
        message.push_str(&format!(" (in {})", c.phrase(line)));
    }
    match bank.merge_uncertain {
        Some(MergeDoubt::PartialUnroll) => message.push_str(
            " (at most: nvcc unrolls the loop only in part, its trip count being known only at run time or too large, and fuses consecutive elements of the unrolled steps into 8- or 16-byte loads or stores, whose degree is lower)",
        ),
        Some(MergeDoubt::AcrossStatements) => message.push_str(
            " (at most: this access and the next statement or unrolled loop of the same thread cover consecutive elements together, which nvcc fuses into 8- or 16-byte loads or stores, whose degree is lower)",
        ),
        Some(MergeDoubt::CarriedThroughMemory) => message.push_str(
            " (at most: a step of the unrolled loop reads what an earlier step of the same thread stored; nvcc keeps such values in registers and fuses the rest into 8- or 16-byte loads or stores, whose degree is lower)",
        ),
        Some(MergeDoubt::Alignment) => message.push_str(
            " (at most: this access and its neighbours cover a 16-byte slot together, which nvcc fuses into one 8- or 16-byte load or store where it proves the buffer so aligned from its layout, and does not otherwise; declaring the buffer `__align__(16)` makes it sure)",
        ),
        None => {}
    }
    if let Some(condition) = &bank.data_guard {
        message.push_str(&format!(
            " (a hint only: assuming every lane of the warp passes `{condition}`, which depends on data loaded at run time)"
        ));
    }
    let kernel = match context {
        Some((c, _)) => c.kernel.as_str(),
        None => a.function.as_deref().unwrap_or("this function"),
    };
    let [x, y, z] = bank.block;
    match &bank.block_source {
        BlockSource::Launch { .. } => {
            if let Some(why) = &bank.block_uncertain {
                message.push_str(&format!(
                    " (with the {x}×{y}×{z} block of the first launch of `{kernel}`, and under the others too: {why})"
                ));
            }
        }
        _ if block_assumed => message.push_str(&format!(
            " (assuming `blockDim.x` = {x}: no launch of `{kernel}` fixes its block, and the figure depends on it)"
        )),
        // Lanes past the array's extent cannot run the access: the lanes left say more
        // than a block assumed.
        _ if bank.in_bounds.is_some() => {}
        _ if x >= 32 && x % 32 == 0 => {
            message.push_str(&format!(
                " (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `{kernel}` gives its block"
            ));
            if let Some(([bx, by, bz], d)) = other_degree {
                message.push_str(&format!(
                    "; with a {bx}×{by}×{bz} block, whose warps span rows, it is {}",
                    if d < 2 {
                        "conflict-free".to_string()
                    } else {
                        format!("{d}-way")
                    }
                ));
            }
            message.push(')');
        }
        BlockSource::LaunchBounds => message.push_str(&format!(
            " (assuming the {x}×{y}×{z} block of the `__launch_bounds__` maximum: no launch of `{kernel}` gives its block)"
        )),
        BlockSource::Default => message.push_str(&format!(
            " (assuming the configured default block {x}×{y}×{z}: no launch of `{kernel}` gives its block)"
        )),
    }
    if let Some((n, decl)) = &bank.in_bounds {
        if bounds_assumed {
            message.push_str(&format!(
                " (a hint only: no launch of `{kernel}` gives its block; with `threadIdx.x` over the warp only the {n} lanes of warp 0 whose index stays inside `{decl}` could run it, so the block is likely narrower, and with warps that span rows the degree differs)"
            ));
        } else {
            message.push_str(&format!(
                " (only the {n} lanes of warp 0 whose index stays inside `{decl}` can run it)"
            ));
        }
    }
    if let Some((n, warp, condition)) = &bank.guarded {
        message.push_str(&format!(
            " (only the {n} lanes of warp {warp} that pass `{condition}` run it)"
        ));
    }
    let wide = bank.width.is_some_and(|w| w >= 8);
    let mut wiki = if bank.sweep.is_some() {
        "pitfall-bank-conflict#P7"
    } else if wide {
        "pitfall-bank-conflict#P4"
    } else {
        "pitfall-bank-conflict#P1"
    };
    let mut fixes = Vec::new();
    // The padding is worked out on the rows as written, not the instantiation's, and
    // for the access as written, not merged.
    let pad = if let Some(i) = i.filter(|_| {
        !(bank
            .instantiation
            .as_ref()
            .is_some_and(|i| !i.bound.is_empty())
            || bank.merged.is_some()
            || bank.sweep.is_some())
    }) {
        padding(run, i, bank.block)
    } else {
        Padding::None
    };
    match pad {
        Padding::Fix(fix) => fixes.push(fix),
        Padding::OverBudget { bytes, limit } => {
            message.push_str(&format!(
                "; padding the rows would need {bytes} bytes of static shared memory, past the {} KB per-block limit, so swizzle the index instead",
                limit / 1024
            ));
            wiki = "pitfall-bank-conflict#P2";
        }
        Padding::None if degree == 2 && !wide && bank.sweep.is_none() => {
            wiki = "pitfall-bank-conflict#P5";
        }
        Padding::None => {}
    }
    // The term of the index that spreads the lanes, where one alone does (an access of
    // a called function is modelled with the call's arguments, not its own terms).
    if context.is_none() {
        if let Some(t) = kernaut_sema::terms::lane_term(run.ctx.file, a, bank.block) {
            message.push_str(&format!(
                "; the lanes' stride comes from {}",
                kernaut_sema::terms::describe(&t, a.indices.len())
            ));
        }
    }
    Some(RuleDiagnostic {
        rule: RULE.id,
        severity,
        range: a.range.clone(),
        message,
        wiki: wiki.to_string(),
        fixes,
    })
}

enum Padding {
    Fix(Fix),
    OverBudget { bytes: u64, limit: u64 },
    None,
}

/// The smallest padding of the inner dimension of `a`'s array that removes its conflict
/// under `block` (the block the model assumed for the kernel).
fn padding(run: &Run<'_, '_>, a_index: usize, block: [u32; 3]) -> Padding {
    let ctx = run.ctx;
    let all = run.all;
    let a = &all[a_index];
    let Some(decl) = ctx.facts.shared_named(&a.array, a.range.start) else {
        return Padding::None;
    };
    if decl.is_extern || decl.dims.len() < 2 || a.root != a.array || a.cast_type.is_some() {
        return Padding::None;
    }
    let (Some(elem), Some(dims)) = (
        decl.element_size,
        decl.dims.iter().copied().collect::<Option<Vec<u64>>>(),
    ) else {
        return Padding::None;
    };
    let same: &[usize] = run
        .groups
        .get(&(a.array.as_str(), a.function.as_deref()))
        .map_or(&[], Vec::as_slice);
    // Accesses through a cast or with a different number of indices cannot be re-laid out.
    if same.iter().map(|&i| &all[i]).any(|o| {
        (o.kind != AccessKind::AddressOf && o.cast_type.is_some()) || o.indices.len() != dims.len()
    }) {
        return Padding::None;
    }
    let needs_16 = same.iter().any(|&i| all[i].kind == AccessKind::AddressOf);
    let inner = *dims.last().unwrap_or(&0);
    let outer: u64 = dims[..dims.len() - 1].iter().product();
    // Every access of the group is in `a`'s function, so under `a`'s block.
    let relaid_degree = |o: &SharedAccess, dims: &[u64]| -> Option<u32> {
        let offset = relaid(o, dims, elem)?;
        let store = o.kind != AccessKind::Load;
        bank_of_offset(&run.scope, &offset, o.width, store, block).map(|r| r.conflict_degree)
    };
    let before: Vec<Option<u32>> = same
        .iter()
        .map(|&i| relaid_degree(&all[i], &dims))
        .collect();
    let max_pad = (128 / elem).max(1);
    for pad in 1..=max_pad {
        let mut padded = dims.clone();
        if let Some(last) = padded.last_mut() {
            *last += pad;
        }
        if needs_16 && (padded[padded.len() - 1] * elem) % 16 != 0 {
            continue;
        }
        let Some(mine) = relaid_degree(a, &padded) else {
            continue;
        };
        if mine > 1 {
            continue;
        }
        let worse =
            same.iter()
                .zip(&before)
                .any(|(&i, b)| match (b, relaid_degree(&all[i], &padded)) {
                    (Some(b), Some(after)) => after > (*b).max(1),
                    _ => false,
                });
        if worse {
            continue;
        }
        let extra = outer * pad * elem;
        let limit = u64::from(ctx.arch.limits().smem_per_block);
        let total = run.static_bytes(decl, a).saturating_add(extra);
        if total > limit {
            return Padding::OverBudget {
                bytes: total,
                limit,
            };
        }
        let Some(edit) = inner_dim_edit(ctx.text(), decl, pad) else {
            return Padding::None;
        };
        let new_inner = inner + pad;
        return Padding::Fix(Fix {
            safe: false,
            title: format!(
                "Pad the rows of `{}` to {new_inner} elements ({extra} more bytes)",
                decl.name
            ),
            edits: vec![edit],
        });
    }
    Padding::None
}

/// The byte offset of `a` with the array laid out with `dims`.
fn relaid(a: &SharedAccess, dims: &[u64], elem: u64) -> Option<IndexExpr> {
    if a.indices.len() != dims.len() {
        return None;
    }
    let mut flat = a.indices[0].clone();
    for (idx, d) in a.indices.iter().zip(dims).skip(1) {
        let d = i64::try_from(*d).ok()?;
        flat = IndexExpr::binary(
            IndexExpr::binary(flat, kernaut_syntax::BinOp::Mul, IndexExpr::Int(d)),
            kernaut_syntax::BinOp::Add,
            idx.clone(),
        );
    }
    Some(IndexExpr::binary(
        flat,
        kernaut_syntax::BinOp::Mul,
        IndexExpr::Int(i64::try_from(elem).ok()?),
    ))
}

/// The edit that adds `pad` to the last dimension of `decl`.
fn inner_dim_edit(text: &str, decl: &SharedDecl, pad: u64) -> Option<TextEdit> {
    let rest = text.get(decl.name_range.end..decl.range.end)?;
    let mut last = None;
    let mut depth = 0usize;
    let mut open = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => {
                if depth == 0 {
                    open = i + 1;
                }
                depth += 1;
            }
            ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    last = Some(open..i);
                }
            }
            '=' | ';' | ',' if depth == 0 => break,
            _ => {}
        }
    }
    let inner = last?;
    let range = decl.name_range.end + inner.start..decl.name_range.end + inner.end;
    let written = text.get(range.clone())?.trim();
    let new_text = match written.parse::<u64>() {
        Ok(v) => (v + pad).to_string(),
        Err(_) => format!("{written} + {pad}"),
    };
    Some(TextEdit::replace(range, new_text))
}

/// The loop variable of `offset` that doubles or halves each step in a loop whose bound
/// the code does not fix (`s` of `2 * s * tid` in `for (s = 1; s < n; s *= 2)`), where
/// there is one.
fn scaled_loop_var(offset: &kernaut_syntax::IndexExpr) -> Option<&str> {
    use kernaut_syntax::IndexExpr;
    match offset {
        IndexExpr::LoopVar {
            name,
            scale: Some(scale),
            ..
        } if scale
            .trip
            .as_ref()
            .is_none_or(|t| t.bound.constant().is_none() || t.start.constant().is_none()) =>
        {
            Some(name.as_str())
        }
        // `(t * 2) << u` over `u++`: the stride doubles each iteration as well.
        IndexExpr::Binary(_, kernaut_syntax::BinOp::Shl | kernaut_syntax::BinOp::Shr, b)
            if shift_loop_var(b).is_some() =>
        {
            shift_loop_var(b)
        }
        IndexExpr::Binary(a, _, b) => scaled_loop_var(a).or_else(|| scaled_loop_var(b)),
        _ => None,
    }
}

/// The loop variable a shift count reads (`u` in `x << u`, `x << (u + 1)`).
fn shift_loop_var(count: &kernaut_syntax::IndexExpr) -> Option<&str> {
    use kernaut_syntax::IndexExpr;
    match count {
        IndexExpr::LoopVar { name, .. } => Some(name.as_str()),
        IndexExpr::Binary(a, _, b) => shift_loop_var(a).or_else(|| shift_loop_var(b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages, check_no_fix};

    const RULE: &str = "bank-conflict";

    #[test]
    fn column_read_of_a_32x32_tile() {
        check(
            RULE,
            r#"
__global__ void transpose(float* out, const float* in) {
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
                    // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict
}
"#,
        );
        check_messages(
            RULE,
            r#"
__global__ void transpose(float* out) {
    __shared__ float tile[32][32];
    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"#,
            expect![[r#"
                warning: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `transpose` gives its block; with a 4×8×1 block, whose warps span rows, it is 4-way); the lanes' stride comes from `threadIdx.x` in the row index (pitfall-bank-conflict#P1)
            "#]],
        );
    }

    #[test]
    fn padded_tile_and_broadcast_stay_silent() {
        check(
            RULE,
            r#"
#define TILE 32
__global__ void transpose(float* out, int k) {
    __shared__ float tile[TILE][TILE + 1];
    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
    out[threadIdx.y] = tile[threadIdx.y][k];
    out[k] = tile[threadIdx.y][threadIdx.x];
}
"#,
        );
    }

    #[test]
    fn rows_that_narrow_blocks_keep_apart_stay_silent() {
        // With blockDim.x == 4 (asserted, launched from elsewhere) the warp reads 32
        // consecutive words; only a warp-wide x would conflict.
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float sub[32][8];
    out[0] = sub[threadIdx.x][threadIdx.y];
}
"#,
        );
    }

    /// Ten lanes of a stride of four words: lanes 0 and 8 share bank 0, 2-way (the full
    /// warp would be 4-way).
    #[test]
    fn partial_warps_are_modelled_with_their_lanes() {
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float red[64];
    int lane = threadIdx.x % 32;
    if (lane < 10) {
        out[lane] = red[lane * 4];
                 // ^^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `red` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block) (only the 10 lanes of warp 0 that pass `lane < 10` run it)
    }
}
"#,
        );
    }

    #[test]
    fn unknown_stride_stays_silent() {
        check(
            RULE,
            r#"
__global__ void k(float* out, int stride) {
    __shared__ float buf[1024];
    out[threadIdx.x] = buf[threadIdx.x * stride];
}
"#,
        );
    }

    #[test]
    fn stride_two_is_a_hint_without_fix() {
        let fixture = r#"
__global__ void k(float* out) {
    __shared__ float buf[512];
    out[threadIdx.x] = buf[2 * threadIdx.x];
                    // ^^^^^^^^^^^^^^^^^^^^ hint: 2-way bank conflict
}
"#;
        check(RULE, fixture);
        check_no_fix(RULE, fixture);
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                hint: 2-way bank conflict: this load from `buf` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block); the lanes' stride comes from `2 * threadIdx.x` (pitfall-bank-conflict#P5)
            "#]],
        );
    }

    #[test]
    fn vector_width_macros_are_wide_accesses() {
        // Through the file's own vector macros each thread moves 8 or 16 bytes: the
        // contiguous ones are conflict-free under the half-/quarter-warp rule (read as
        // scalar 4-byte accesses at stride 2 or 4 they would look 2- and 4-way), while
        // a 128-byte stride puts each quarter-warp's 8 lanes in the same four banks. A
        // macro call assigned to is a store.
        check(
            RULE,
            r#"
#define FLOAT4(value) (reinterpret_cast<float4 *>(&(value))[0])
#define LDST64BITS(v) (*(float2 *)(&(v)))
__global__ void k(const float* in, float* out) {
    __shared__ float s[4096];
    int t = threadIdx.x;
    float4 a = FLOAT4(s[4 * t]);
    float2 b = LDST64BITS(s[2 * t]);
    FLOAT4(s[4 * t]) = FLOAT4(in[4 * t]);
    FLOAT4(s[32 * t]) = a;
        // ^^^^^^^^^ warning: 8-way bank conflict: this store to `s`
    out[t] = a.x + b.y;
}
"#,
        );
    }

    #[test]
    fn macros_that_are_not_vector_casts_stay_scalar() {
        // `SQ(v)` is no reinterpret cast: its argument is a 4-byte load at stride 4.
        check(
            RULE,
            r#"
#define SQ(v) ((v) * (v))
__global__ void k(float* out) {
    __shared__ float s[4096];
    int t = threadIdx.x;
    out[t] = SQ(s[4 * t]);
             // ^^^^^^^^ warning: 4-way bank conflict: this load from `s`
}
"#,
        );
    }

    #[test]
    fn unknown_shape_of_a_2d_kernel_warns_only_for_every_shape() {
        // No launch, and the kernel uses `threadIdx.y`: its rows may be 16, 8 or 4 threads
        // wide. `s[2 * tx]` is 2-way only when a row spans the warp (16 threads cover
        // 128 bytes), so it stays silent; `s[32 * tx]` conflicts at least 4-way under
        // every shape (a warning that names the lowest), `s[16 * tx]` only 2-way in rows
        // of 4 (a hint).
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float s[4096];
    int tx = threadIdx.x, ty = threadIdx.y;
    out[ty] = s[2 * tx];
    out[ty] += s[32 * tx];
            // ^^^^^^^^^^ warning: 32-way bank conflict: this load from `s` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block; with a 4×8×1 block, whose warps span rows, it is 4-way)
    out[ty] += s[16 * tx];
            // ^^^^^^^^^^ hint: 16-way bank conflict: this load from `s` takes 16 wavefronts instead of 1, because lanes of a warp hit 16 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block; with a 4×8×1 block, whose warps span rows, it is 2-way)
}
__global__ void flat(float* out) {
    __shared__ float s[4096];
    out[threadIdx.x] = s[2 * threadIdx.x];
                    // ^^^^^^^^^^^^^^^^^^ hint: 2-way bank conflict
}
"#,
        );
    }

    #[test]
    fn template_arguments_bound_at_the_launch() {
        // `pad<1>` pads the rows, so the column read of the launched instantiation is
        // conflict-free although the default `OFFSET = 0` would make it 32-way; `bare<0>`
        // undoes its padded default and conflicts.
        check(
            RULE,
            r#"
template <int OFFSET = 0>
__global__ void pad(float* out) {
    __shared__ float s[32][32 + OFFSET];
    out[threadIdx.x] = s[threadIdx.x][0];
}
template <int ROWS, int OFFSET = 1>
__global__ void bare(float* out) {
    __shared__ float s[ROWS][32 + OFFSET];
    out[threadIdx.x] = s[threadIdx.x][OFFSET];
                    // ^^^^^^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this load from `s` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (in the instantiation the file launches: `ROWS = 32, OFFSET = 0`)
}
void launch(float* out) {
    constexpr int R = 32;
    pad<1><<<1, 32>>>(out);
    bare<R, 0><<<1, 32>>>(out);
}
"#,
        );
    }

    #[test]
    fn the_worst_launched_instantiation_is_reported() {
        // Launched padded and unpadded: the unpadded instantiation conflicts, and the
        // finding says which one it is.
        check(
            RULE,
            r#"
template <int OFFSET = 1>
__global__ void k(float* out) {
    __shared__ float s[32][32 + OFFSET];
    out[threadIdx.x] = s[threadIdx.x][0];
                    // ^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this load from `s` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (in the worst of the 2 instantiations the file launches: `OFFSET = 0`)
}
void launch(float* out) {
    k<<<1, 32>>>(out);
    k<0><<<1, 32>>>(out);
}
"#,
        );
    }

    #[test]
    fn template_defaults_are_said_without_a_launch() {
        check(
            RULE,
            r#"
template <int OFFSET = 0>
__global__ void k(float* out) {
    __shared__ float s[32][32 + OFFSET];
    out[threadIdx.x] = s[threadIdx.x][0];
                    // ^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this load from `s` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (with the template defaults `OFFSET = 0`: no launch in the file instantiates `k`)
}
template __global__ void k<>(float*);
"#,
        );
    }

    #[test]
    fn block_shape_from_the_launch() {
        // With 16x16 blocks a warp spans two rows: `tile[ty][tx]` with 16-float rows is
        // conflict-free, while the column read is 8-way (two rows of 16 words share a bank).
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float tile[16][16];
    out[0] = tile[threadIdx.y][threadIdx.x];
    out[1] = tile[threadIdx.x][threadIdx.y];
          // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: 8-way bank conflict
}
void launch(float* out) {
    dim3 block(16, 16);
    k<<<1, block>>>(out);
}
"#,
        );
    }

    #[test]
    fn thread_x_modulo_32_in_a_block_narrower_than_a_warp() {
        // `threadIdx.x % 32` is evaluated as written: with 16x2 blocks lanes 16-31 are
        // row 1, whose `threadIdx.x % 32` is 0-15 again, so each pair of lanes reads one
        // word (a broadcast) and the 16 words sit in 16 banks. Read as the lane number
        // it would look like a 2-way conflict.
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float buf[64];
    out[threadIdx.y * 16 + threadIdx.x] = buf[(threadIdx.x % 32) * 2];
}
void launch(float* out) {
    k<<<1, dim3(16, 2)>>>(out);
}
"#,
        );
    }

    #[test]
    fn a_block_thread_rank_is_the_linear_thread_index() {
        // `block.thread_rank()` lowers to the linear thread index, so its stride of two
        // words is the 2-way conflict that `2 * threadIdx.x` is.
        check_messages(
            RULE,
            r#"
#include <cooperative_groups.h>
__global__ void k(float* out) {
    __shared__ float buf[512];
    auto block = cooperative_groups::this_thread_block();
    out[threadIdx.x] = buf[2 * block.thread_rank()];
}
void launch(float* out) {
    k<<<1, 256>>>(out);
}
"#,
            expect![[r#"
                hint: 2-way bank conflict: this load from `buf` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank; the lanes' stride comes from `2 * block.thread_rank()` (pitfall-bank-conflict#P5)
            "#]],
        );
    }

    #[test]
    fn block_shape_from_a_launch_after_macro_statements() {
        // `CHECK(b, M)` with no `;` before `constexpr int BX = 16;` or before the launch:
        // the launch's block is still 16x16, so the column read is 8-way (16-way if `threadIdx.x` ran over
        // the warp).
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float tile[16][16];
    out[1] = tile[threadIdx.x][threadIdx.y];
          // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: 8-way bank conflict
}
__global__ void k2(float* out) {
    __shared__ float tile[16][16];
    out[1] = tile[threadIdx.x][threadIdx.y];
          // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: 8-way bank conflict
}
void launch(float* out, int M) {
    CHECK(out, M)
    CHECK(out, M)
    constexpr int BX = 16;
    dim3 block(BX, BX);
    k<<<1, block>>>(out);
    CHECK(out, M)
    k2<<<1, block>>>(out);
}
"#,
        );
    }

    #[test]
    fn adjacent_scalars_that_ptxas_merges_stay_silent() {
        // Read as two (four) 4-byte accesses at stride 8 (16) bytes these would look 2-way
        // (4-way), but ptxas merges each thread's adjacent elements of a directly declared
        // array into one LDS.64 / LDS.128 / STS.64 (nvcc 13.5, sm_90: `LDS.64 R10, [R7]`,
        // `LDS.128 R12, [R7]`, `STS.64 [R0], R4`; see `crate::model::Merged`), which the
        // half-/quarter-warp rule makes conflict-free. Through a pointer 8 bytes into an
        // `extern` buffer too: `LDS.64 R6, [R4+0x8]`.
        check(
            RULE,
            r#"
__global__ void pair(float* out) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    float a = s[2 * t];
    float b = s[2 * t + 1];
    out[t] = a + b;
}
__global__ void quad(float* out) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    float a = s[4 * t + 0];
    float b = s[4 * t + 1];
    float c = s[4 * t + 2];
    float d = s[4 * t + 3];
    out[t] = a + b + c + d;
}
__global__ void stores(const float* in) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[2 * t] = in[t];
    s[2 * t + 1] = in[t + 1];
}
__global__ void rows(float* out) {
    __shared__ float s[32][64];
    int t = threadIdx.x;
    float a = s[threadIdx.y][2 * t];
    float b = s[threadIdx.y][2 * t + 1];
    out[t] = a + b;
}
__global__ void carved(float* out) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    float* p = s + 2;
    float a = p[2 * t];
    float b = p[2 * t + 1];
    out[t] = a + b;
}
"#,
        );
    }

    #[test]
    fn loops_over_consecutive_elements_that_nvcc_merges() {
        // nvcc 13.5, sm_90 (`-O3 -cubin`, `cuobjdump -sass`; see `crate::model::Merged`):
        // `s[row * 128 + 4 * lane + e]` over `e < 4` is one `LDS.128 R4, [R4]` with or
        // without `#pragma unroll`, conflict-free, its stores one `STS.128 [R0], R8`;
        // `s[8 * lane + e]` over `e < 8` two `LDS.128`, each 2-way (lanes 32 bytes
        // apart: lanes 0 and 4 of a phase share bank 0), not the 8-way of eight 4-byte
        // loads at a 32-byte stride; `#pragma unroll 1` one `LDS` per
        // iteration (4-way at a 16-byte stride), and a loop that also stores to the
        // array four `LDS` and four `STS`.
        check(
            RULE,
            r#"
__global__ void loads(float* out) {
    __shared__ float s[32 * 128];
    int lane = threadIdx.x & 31, row = threadIdx.x >> 5;
    float acc = 0.f;
#pragma unroll
    for (int e = 0; e < 4; ++e) acc += s[row * 128 + 4 * lane + e];
    for (int e = 0; e < 8; ++e) acc += s[8 * lane + e];
                                    // ^^^^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `s` takes 8 wavefronts instead of 4
    out[threadIdx.x] = acc;
}
__global__ void transpose_store(const float* in, float* out) {
    __shared__ float s[32 * 128];
    int lane = threadIdx.x & 31, row = threadIdx.x >> 5;
#pragma unroll
    for (int e = 0; e < 4; ++e) s[row * 128 + 4 * lane + e] = in[threadIdx.x * 4 + e];
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
__global__ void not_unrolled(float* out) {
    __shared__ float s[32 * 128];
    int lane = threadIdx.x & 31;
    float acc = 0.f;
#pragma unroll 1
    for (int e = 0; e < 4; ++e) acc += s[4 * lane + e];
                                    // ^^^^^^^^^^^^^^^ warning: 4-way bank conflict: this load from `s`
    out[threadIdx.x] = acc;
}
__global__ void aliased(float* out) {
    __shared__ float s[32 * 128];
    int lane = threadIdx.x & 31;
    float acc = 0.f;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        acc += s[4 * lane + e];
            // ^^^^^^^^^^^^^^^ warning: 4-way bank conflict: this load from `s`
        s[2048 + 4 * lane + e] = acc;
     // ^^^^^^^^^^^^^^^^^^^^^^ warning: 4-way bank conflict: this store to `s`
    }
    out[threadIdx.x] = acc;
}
void launch(float* out, const float* in) {
    loads<<<1, 256>>>(out);
    transpose_store<<<1, 256>>>(in, out);
    not_unrolled<<<1, 32>>>(out);
    aliased<<<1, 32>>>(out);
}
"#,
        );
    }

    /// The register-tiled GEMM shape: the innermost unrolled loop steps consecutive
    /// elements, inside unrolled loops whose variables are held for it. nvcc 13.5
    /// (sm_90, `cuobjdump -sass`) emits two `LDS.128` per `k` for `sb[k][tx * 8 + n]`:
    /// 2-way each (lanes 32 bytes apart), not the 4-way of eight scalar loads.
    #[test]
    fn an_unrolled_loop_inside_unrolled_loops_is_merged() {
        check(
            RULE,
            r#"
__global__ void gemm(const float* b, float* c) {
    int tx = threadIdx.x, ty = threadIdx.y;
    __shared__ float sb[8][128];
    float acc[8][8] = {0.0f};
    sb[ty / 2][(ty % 2) * 64 + tx] = b[ty * 16 + tx];
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: 2-way bank conflict: this store to `sb`
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 8; k++) {
#pragma unroll
        for (int m = 0; m < 8; m++) {
#pragma unroll
            for (int n = 0; n < 8; n++) {
                acc[m][n] += sb[k][tx * 8 + n];
                          // ^^^^^^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `sb` takes 8 wavefronts instead of 4
            }
        }
    }
    c[ty * 16 + tx] = acc[0][0];
}
void launch(const float* b, float* c) {
    gemm<<<1, dim3(16, 16)>>>(b, c);
}
"#,
        );
    }

    #[test]
    fn adjacent_scalars_that_stay_two_instructions_are_flagged() {
        // Not merged in SASS (nvcc 13.5, sm_90), so each 4-byte load is 2-way: through a
        // pointer one element into the buffer (`LDS R6, [R4+0x4]`, `LDS R7, [R4+0x8]`),
        // and a pair that starts at 4 mod 8 (`LDS R9, [R7+0x4]`,
        // `LDS R10, [R7+0x8]`).
        check(
            RULE,
            r#"
__global__ void viaptr(float* out) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    float* p = s + 1;
    float a = p[2 * t];
           // ^^^^^^^^ hint: 2-way bank conflict: this load from `p`
    float b = p[2 * t + 1];
           // ^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `p`
    out[t] = a + b;
}
__global__ void odd(float* out) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    float a = s[2 * t + 1];
           // ^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `s`
    float b = s[2 * t + 2];
           // ^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `s`
    out[t] = a + b;
}
"#,
        );
    }

    #[test]
    fn adjacent_doubles_and_half_stores_that_ptxas_merges_stay_silent() {
        // nvcc 13.5, sm_90: a pair of doubles is one `LDS.128 R8, [R10]` (loads) or
        // `STS.128 [R11], R4` (stores); four `__half` stores are one `STS.64 [R0], R8`.
        // Each is conflict-free as the wide access it is.
        check(
            RULE,
            r#"
#include <cuda_fp16.h>
__global__ void dpair(double* out) {
    __shared__ double s[1024];
    int t = threadIdx.x;
    double a = s[2 * t];
    double b = s[2 * t + 1];
    out[t] = a + b;
}
__global__ void dstores(const double* in) {
    __shared__ double s[1024];
    int t = threadIdx.x;
    s[2 * t] = in[t];
    s[2 * t + 1] = in[t + 1];
}
__global__ void hstores(const __half* in) {
    __shared__ __half s[4096];
    int t = threadIdx.x;
    s[4 * t] = in[t];
    s[4 * t + 1] = in[t + 1];
    s[4 * t + 2] = in[t + 2];
    s[4 * t + 3] = in[t + 3];
}
"#,
        );
    }

    #[test]
    fn a_column_from_a_remainder_merges_in_an_aligned_tile() {
        // nvcc 13.5, sm_90: `col = (q * 4) % 64` is a multiple of 4 (a remainder of two
        // multiples of 4), and the four stores of a row's `col..col + 3` in a tile
        // declared `__align__(16)`, with 272-byte rows, are one `STS.128 [R11], R4`:
        // conflict-free. In a plain `float` tile they stay four `STS` (4-way each) here,
        // and are one `STS.128` where nvcc proves the tile aligned from the layout (a
        // second tile before it): a hint that says so. `(q % 16) * 4 + k`, a multiple of
        // 4 outside the remainder, is one `STS.128` in a plain tile too.
        let plain = r#"
__global__ void unpack(const float4* src, float* dst) {
    __shared__ float tile[16][68];
    int q = threadIdx.x;
    int row = (q * 4) / 64;
    int col = (q * 4) % 64;
    float4 v = src[q];
    tile[row][col + 0] = v.x;
    tile[row][col + 1] = v.y;
    tile[row][col + 2] = v.z;
    tile[row][col + 3] = v.w;
    __syncthreads();
    dst[threadIdx.x] = tile[0][threadIdx.x % 64];
}
void run(const float4* s, float* d) { unpack<<<1, 256>>>(s, d); }
"#;
        check_messages(
            RULE,
            plain,
            expect![[r#"
            hint: 4-way bank conflict: this store to `tile` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank (at most: this access and its neighbours cover a 16-byte slot together, which nvcc fuses into one 8- or 16-byte load or store where it proves the buffer so aligned from its layout, and does not otherwise; declaring the buffer `__align__(16)` makes it sure) (pitfall-bank-conflict#P1)
            hint: 4-way bank conflict: this store to `tile` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank (at most: this access and its neighbours cover a 16-byte slot together, which nvcc fuses into one 8- or 16-byte load or store where it proves the buffer so aligned from its layout, and does not otherwise; declaring the buffer `__align__(16)` makes it sure) (pitfall-bank-conflict#P1)
            hint: 4-way bank conflict: this store to `tile` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank (at most: this access and its neighbours cover a 16-byte slot together, which nvcc fuses into one 8- or 16-byte load or store where it proves the buffer so aligned from its layout, and does not otherwise; declaring the buffer `__align__(16)` makes it sure) (pitfall-bank-conflict#P1)
            hint: 4-way bank conflict: this store to `tile` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank (at most: this access and its neighbours cover a 16-byte slot together, which nvcc fuses into one 8- or 16-byte load or store where it proves the buffer so aligned from its layout, and does not otherwise; declaring the buffer `__align__(16)` makes it sure) (pitfall-bank-conflict#P1)
        "#]],
        );
        check(
            RULE,
            &plain
                .replace("tile[row][col + ", "tile[q / 16][(q % 16) * 4 + ")
                .replace("int row = (q * 4) / 64;\n    int col = (q * 4) % 64;\n", ""),
        );
        check(
            RULE,
            r#"
__global__ void unpack(const float4* src, float* dst) {
    __shared__ __align__(16) float tile[16][68];
    for (int q = threadIdx.x; q < 256; q += 256) {
        int row = (q * 4) / 64;
        int col = (q * 4) % 64;
        float4 v = src[q];
        tile[row][col + 0] = v.x;
        tile[row][col + 1] = v.y;
        tile[row][col + 2] = v.z;
        tile[row][col + 3] = v.w;
    }
    __syncthreads();
    dst[threadIdx.x] = tile[0][threadIdx.x % 64];
}
void run(const float4* s, float* d) { unpack<<<1, 256>>>(s, d); }
"#,
        );
    }

    #[test]
    fn updates_merge_in_a_dynamic_buffer_only() {
        // nvcc 13.5 `-arch=sm_90 -O3 -cubin`, `cuobjdump -sass`: four `+=` on consecutive
        // floats of an `extern __shared__` buffer are one `LDS.128` and one `STS.128`
        // (conflict-free at a 16-byte stride); the pairwise update of four doubles, with
        // the partner's loads between the targets, is two `LDS.128` of the partner, two
        // `LDS.128` and two `STS.128` of the target: 2-way, 8 wavefronts where 4 are
        // needed. The same `+=` on a static `__shared__` array stays four `LDS` and four
        // `STS` (4-way at a 16-byte stride), and so do updates whose partner offset `h`
        // may overlap the next target. Written as a loop over `k` the same holds: the
        // pairwise step `sq[t * 4 + k] += sq[(t + s) * 4 + k]` on an `extern` buffer is two
        // `LDS.128` and one `STS.128`, `sl[t * 4 + k] += 1.0f` on a static array four `LDS`
        // and four `STS`.
        check(
            RULE,
            r#"
__global__ void ext_floats(float* out) {
    extern __shared__ float sf[];
    int t = threadIdx.x;
    sf[t * 4 + 0] += 1.0f;
    sf[t * 4 + 1] += 2.0f;
    sf[t * 4 + 2] += 3.0f;
    sf[t * 4 + 3] += 4.0f;
    out[t] = sf[t];
}
__global__ void ext_pairs(double* out) {
    extern __shared__ double sd[];
    int t = threadIdx.x;
    for (int h = 16; h > 0; h >>= 1) {
        sd[t * 4 + 0] += sd[(t + h) * 4 + 0];
     // ^^^^^^^^^^^^^ hint: 2-way bank conflict: this update of `sd` takes 8 wavefronts instead of 4
                      // ^^^^^^^^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `sd` takes 8 wavefronts instead of 4
        sd[t * 4 + 1] += sd[(t + h) * 4 + 1];
        __syncthreads();
    }
    out[t] = sd[t];
}
__global__ void static_floats(float* out) {
    __shared__ float st[1024];
    int t = threadIdx.x;
    st[t * 4 + 0] += 1.0f;
 // ^^^^^^^^^^^^^ warning: 4-way bank conflict: this update of `st` takes 4 wavefronts instead of 1
    st[t * 4 + 1] += 2.0f;
 // ^^^^^^^^^^^^^ warning: 4-way bank conflict: this update of `st` takes 4 wavefronts instead of 1
    out[t] = st[t];
}
__global__ void ext_overlap(float* out, int h) {
    extern __shared__ float sa[];
    int t = threadIdx.x;
    sa[t * 4 + 0] += sa[t * 4 + h];
 // ^^^^^^^^^^^^^ warning: 4-way bank conflict: this update of `sa` takes 4 wavefronts instead of 1
                  // ^^^^^^^^^^^^^ warning: 4-way bank conflict: this load from `sa` takes 4 wavefronts instead of 1
    sa[t * 4 + 1] += sa[t * 4 + h + 1];
 // ^^^^^^^^^^^^^ warning: 4-way bank conflict: this update of `sa` takes 4 wavefronts instead of 1
                  // ^^^^^^^^^^^^^^^^^ warning: 4-way bank conflict: this load from `sa` takes 4 wavefronts instead of 1
    out[t] = sa[t];
}
__global__ void ext_loop(float* out) {
    extern __shared__ float sq[];
    int t = threadIdx.x;
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            for (int k = 0; k < 4; k++) sq[t * 4 + k] += sq[(t + s) * 4 + k];
        }
        __syncthreads();
    }
    out[t] = sq[t];
}
__global__ void static_loop(float* out) {
    __shared__ float sl[1024];
    int t = threadIdx.x;
    for (int k = 0; k < 4; k++) sl[t * 4 + k] += 1.0f;
                             // ^^^^^^^^^^^^^ warning: 4-way bank conflict: this update of `sl` takes 4 wavefronts instead of 1
    out[t] = sl[t];
}
"#,
        );
    }

    #[test]
    fn the_lane_a_ballot_picks_walks_alone() {
        // `hit` is one value for the warp, so `lane == __ffs(hit) - 1` lets one lane in:
        // its row walk cannot conflict, in the kernel or in a helper the kernel passes
        // `threadIdx.x % 32` as `lane`. Every lane reading its own row (line 3) does.
        check(
            RULE,
            r#"
__device__ void pick(const int* bins, int lane, int target, int* out) {
    const int top = 255 - 8 * lane;
    int mine = bins[top];
            // ^^^^^^^^^ warning: 8-way bank conflict: this load from `bins` takes 8 wavefronts instead of 1
    const unsigned hit = __ballot_sync(0xffffffffu, mine >= target);
    if (lane == __ffs(hit) - 1) {
        int acc = 0;
        for (int j = 1; j < 8; ++j) acc += bins[top - j];
        out[0] = acc;
    }
}
__global__ void find(const int* in, int target, int* out) {
    __shared__ int bins[256];
    const int lane = threadIdx.x % 32;
    for (int i = threadIdx.x; i < 256; i += blockDim.x) bins[i] = in[i];
    __syncthreads();
    if (threadIdx.x < 32) pick(bins, lane, target, out);
    const unsigned hit = __ballot_sync(0xffffffffu, bins[lane] >= target);
    if (lane == __ffs(hit) - 1) {
        int acc = 0;
        for (int j = 1; j < 8; ++j) acc += bins[255 - 8 * lane - j];
        out[1] = acc;
    }
}
void run(const int* in, int t, int* out) { find<<<1, 32>>>(in, t, out); }
"#,
        );
    }

    /// A clamp of the thread's own element between its store and the loads after it
    /// (`if (buf[p] > 0.2f) buf[p] = 0.2f;`) leaves a value the compiler holds: nvcc 13.5
    /// `-O3 -arch=sm_90` gives one `LDS` (the read in the scaling) and one `STS` per
    /// element, and no load for `acc += buf[p] * buf[p]`.
    #[test]
    fn a_clamp_of_the_threads_own_element_keeps_it_in_a_register() {
        check(
            RULE,
            r#"
__global__ void normalise(const float* in, float* out) {
    __shared__ float buf[512];
    int tx = threadIdx.x;
    for (int i = 0; i < 32; ++i) buf[16 * i + tx] = in[blockIdx.x * 512 + 16 * i + tx];
    __syncthreads();
    float acc = 0.f;
    for (int i = 0; i < 8; ++i) {
        int p = 4 * (i + 8 * tx);
        buf[p] = 0.5f * buf[p];
     // ^^^^^^ warning: 16-way bank conflict: this store to `buf` takes 16 wavefronts instead of 1
                     // ^^^^^^ warning: 16-way bank conflict: this load from `buf` takes 16 wavefronts instead of 1
        if (buf[p] > 0.2f) buf[p] = 0.2f;
                        // ^^^^^^ hint: 16-way bank conflict: this store to `buf` takes 16 wavefronts instead of 1
        acc += buf[p] * buf[p];
    }
    out[blockIdx.x * 16 + tx] = acc;
}
void run(const float* a, float* o) { normalise<<<64, 16>>>(a, o); }
"#,
        );
    }

    /// The same element read twice in one expression is one `LDS` (nvcc 13.5 `-O3`):
    /// one finding. Through a `volatile` array both reads happen.
    #[test]
    fn one_element_read_twice_in_an_expression_is_one_load() {
        check(
            RULE,
            r#"
__global__ void square_column(float* out, const float* in, int k) {
    __shared__ float tile[64][32];
    __shared__ volatile float vt[64][32];
    int i = threadIdx.x;
    tile[k][i] = in[i];
    vt[k][i] = in[i];
    __syncthreads();
    out[i] = tile[i][k] * tile[i][k];
          // ^^^^^^^^^^ warning: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1
    out[i + 32] = vt[i][k] * vt[i][k];
               // ^^^^^^^^ warning: 32-way bank conflict: this load from `vt` takes 32 wavefronts instead of 1
                          // ^^^^^^^^ warning: 32-way bank conflict: this load from `vt` takes 32 wavefronts instead of 1
}
void run(float* o, const float* in, int k) { square_column<<<1, 32>>>(o, in, k); }
"#,
        );
    }

    #[test]
    fn loads_of_what_the_thread_just_wrote_never_reach_shared_memory() {
        // nvcc 13.5 `-O3 -arch=sm_90 -cubin`: the helper's read-backs of its own slot
        // are served from registers and its four stores are one `STS.128` (conflict-free
        // at a 16-byte stride). A value read again inside a later `if` of the same block
        // stays in its register too. A `volatile` slot is read back every time, and so is
        // a slot read after a barrier, or in a loop that stores to the array.
        check(
            RULE,
            r#"
__device__ __forceinline__ void weights(float t, float* w) {
    w[3] = t * t;
    w[0] = t - w[3];
    w[2] = 1.0f + w[0] - w[3];
    w[1] = -w[0] - w[2] - w[3];
}
__global__ void fill(const float* pos, float* out) {
    extern __shared__ float slot[];
    weights(pos[threadIdx.x], &slot[4 * threadIdx.x]);
    out[threadIdx.x] = pos[threadIdx.x];
}
__global__ void fill_volatile(const float* pos, float* out) {
    volatile __shared__ float vs[1024];
    int t = threadIdx.x;
    vs[4 * t] = pos[t];
 // ^^^^^^^^^ warning: 4-way bank conflict: this store to `vs` takes 4 wavefronts instead of 1
    out[t] = vs[4 * t] * 2.0f;
          // ^^^^^^^^^ warning: 4-way bank conflict: this load from `vs` takes 4 wavefronts instead of 1
}
__global__ void after_barrier(const float* pos, float* out) {
    __shared__ float sb[1024];
    int t = threadIdx.x;
    sb[4 * t] = pos[t];
 // ^^^^^^^^^ warning: 4-way bank conflict: this store to `sb` takes 4 wavefronts instead of 1
    __syncthreads();
    out[t] = sb[4 * t] * 2.0f;
          // ^^^^^^^^^ warning: 4-way bank conflict: this load from `sb` takes 4 wavefronts instead of 1
}
__global__ void read_again_in_a_branch(const float* pos, float* out, float lim) {
    __shared__ float rb[1024];
    int t = threadIdx.x;
    rb[t] = pos[t];
    __syncthreads();
    float e = rb[4 * t] * 2.0f;
           // ^^^^^^^^^ warning: 4-way bank conflict: this load from `rb` takes 4 wavefronts instead of 1
    if (e < lim) {
        out[t] = rb[4 * t];
    }
    for (int i = 0; i < 4; ++i) {
        out[t + i] += rb[4 * t];
                   // ^^^^^^^^^ warning: 4-way bank conflict: this load from `rb` takes 4 wavefronts instead of 1
        rb[t] = 0.0f;
    }
}
void run(const float* pos, float* out) {
    fill<<<1, 256, 4096>>>(pos, out);
    fill_volatile<<<1, 256>>>(pos, out);
    after_barrier<<<1, 256>>>(pos, out);
    read_again_in_a_branch<<<1, 256>>>(pos, out, 1.0f);
}
"#,
        );
    }

    #[test]
    fn adjacent_doubles_and_half_loads_that_stay_separate_are_flagged() {
        // nvcc 13.5, sm_90: doubles starting at an odd element stay two loads
        // (`LDS.64 R6, [R0+0x8]`, `LDS.64 R8, [R0+0x10]`); four `__half` loads of a
        // default-aligned array stay four `LDS.U16` (`[R4]`, `[R4+0x2]`, `[R4+0x4]`,
        // `[R4+0x6]`), each 2-way at a stride of 8 bytes.
        check(
            RULE,
            r#"
#include <cuda_fp16.h>
__global__ void dodd(double* out) {
    __shared__ double s[1024];
    int t = threadIdx.x;
    double a = s[2 * t + 1];
            // ^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `s`
    double b = s[2 * t + 2];
            // ^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `s`
    out[t] = a + b;
}
__global__ void hquad(__half* out) {
    __shared__ __half s[4096];
    int t = threadIdx.x;
    __half a = s[4 * t];
            // ^^^^^^^^ hint: 2-way bank conflict: this load from `s`
    __half b = s[4 * t + 1];
            // ^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `s`
    __half c = s[4 * t + 2];
            // ^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `s`
    __half d = s[4 * t + 3];
            // ^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `s`
    out[t] = __hadd(__hadd(a, b), __hadd(c, d));
}
"#,
        );
    }

    #[test]
    fn pointer_at_an_unknown_uniform_offset_keeps_two_conflicting_loads() {
        // `p = s + off` with `off` a kernel parameter: ptxas cannot prove the pair 8-byte
        // aligned and keeps two loads (nvcc 13.5, sm_90: `LDS R4, [R0]`,
        // `LDS R5, [R0+0x4]`). Each is 2-way for every value of `off`, which all lanes
        // share.
        let fixture = r#"
__global__ void viaoff(float* out, int off) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    float* p = s + off;
    float a = p[2 * t];
           // ^^^^^^^^ hint: 2-way bank conflict: this load from `p`
    float b = p[2 * t + 1];
           // ^^^^^^^^^^^^ hint: 2-way bank conflict: this load from `p`
    out[t] = a + b;
}
"#;
        check(RULE, fixture);
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                hint: 2-way bank conflict: this load from `p` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `viaoff` gives its block); the lanes' stride comes from `2 * t` (pitfall-bank-conflict#P5)
                hint: 2-way bank conflict: this load from `p` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `viaoff` gives its block); the lanes' stride comes from `2 * t` (pitfall-bank-conflict#P5)
            "#]],
        );
    }

    #[test]
    fn pointer_at_an_unknown_offset_near_misses_stay_silent() {
        // A computed offset that is a multiple of 8 bytes merges (nvcc 13.5, sm_90:
        // `off = blockIdx.x * 64` gives one `LDS.64 R4, [R0]`); one lane per 4-byte word
        // through an unknown offset is conflict-free for every value of it; an offset
        // loaded from memory cannot be modelled.
        check(
            RULE,
            r#"
__global__ void computed(float* out) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    int off = blockIdx.x * 64;
    float* p = s + off;
    float a = p[2 * t];
    float b = p[2 * t + 1];
    out[t] = a + b;
}
__global__ void contiguous(float* out, int off) {
    extern __shared__ float s[];
    float* p = &s[off];
    out[threadIdx.x] = p[threadIdx.x];
}
__global__ void loaded(float* out, const int* offs) {
    extern __shared__ float s[];
    float* p = s + offs[blockIdx.x];
    out[threadIdx.x] = p[2 * threadIdx.x];
}
"#,
        );
    }

    #[test]
    fn fix_pads_the_inner_dimension() {
        check_fix(
            RULE,
            r#"
#define TILE_DIM 32
__global__ void transpose(float* out, const float* in) {
    __shared__ float tile[TILE_DIM][TILE_DIM];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"#,
            0,
            expect![[r#"
                // Pad the rows of `tile` to 33 elements (128 more bytes)
                #define TILE_DIM 32
                __global__ void transpose(float* out, const float* in) {
                    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
                    tile[threadIdx.y][threadIdx.x] = in[threadIdx.x];
                    __syncthreads();
                    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
                }
            "#]],
        );
        check_fix(
            RULE,
            r#"
__global__ void k(double* out) {
    __shared__ double tile[32][32];
    out[threadIdx.x] = tile[threadIdx.x][0];
}
"#,
            0,
            expect![[r#"
                // Pad the rows of `tile` to 33 elements (256 more bytes)
                __global__ void k(double* out) {
                    __shared__ double tile[32][33];
                    out[threadIdx.x] = tile[threadIdx.x][0];
                }
            "#]],
        );
    }

    #[test]
    fn no_fix_past_the_static_budget() {
        let fixture = r#"
__global__ void k(float* out) {
    __shared__ float tile[384][32];
    out[threadIdx.x] = tile[threadIdx.x][0];
}
"#;
        check_no_fix(RULE, fixture);
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                warning: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block); padding the rows would need 50688 bytes of static shared memory, past the 48 KB per-block limit, so swizzle the index instead; the lanes' stride comes from `threadIdx.x` in the row index (pitfall-bank-conflict#P2)
            "#]],
        );
    }

    /// A device function's accesses are modelled as the kernels of the file call it:
    /// with their blocks and the calls' arguments. The worst call stands; an argument
    /// the model cannot read, or a call only part of the warp makes, says nothing.
    #[test]
    fn device_functions_under_the_kernels_that_call_them() {
        check_messages(
            RULE,
            r#"
__device__ float column(const float* tile, int col) {
    return tile[threadIdx.x * 32 + col];
}
__device__ float row(const float* tile, int r) {
    return tile[r * 32 + threadIdx.x];
}
__device__ float reduce(float v) {
    __shared__ float partial[32][32];
    partial[threadIdx.y][threadIdx.x] = v;
    __syncthreads();
    return partial[threadIdx.x][threadIdx.y];
}
__global__ void k(float* out, const int* idx) {
    __shared__ float tile[32 * 32];
    tile[threadIdx.y * 32 + threadIdx.x] = out[threadIdx.x];
    __syncthreads();
    float a = row(tile, threadIdx.y) + column(tile, threadIdx.y);
    float b = column(tile + 32, 1);
    out[threadIdx.x] = a + b + reduce(a);
}
__global__ void lone(float* out, const int* idx) {
    __shared__ float tile[32 * 32];
    if (threadIdx.x == 0) out[0] = column(tile, 0);
    out[threadIdx.x] = column(tile, idx[threadIdx.x]);
}
int main() { k<<<1, dim3(32, 32)>>>(nullptr, nullptr); lone<<<1, 256>>>(nullptr, nullptr); }
"#,
            expect![[r#"
                warning: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (in `column` as `k` calls it at line 17) (pitfall-bank-conflict#P1)
                warning: 32-way bank conflict: this load from `partial` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (in `reduce` as `k` calls it at line 19) (pitfall-bank-conflict#P1)
            "#]],
        );
    }

    /// A block as wide as a runtime count (one thread per head): lanes whose index would
    /// fall past the array's declared extent cannot run the access in a correct program,
    /// so `sc[h * 16 + j]` on `sc[16 * 16]` runs in lanes 0 to 15: 8-way, not the 16-way
    /// of a full warp.
    #[test]
    fn lanes_past_the_arrays_extent_do_not_count() {
        check_messages(
            RULE,
            r#"
__global__ void heads(const float* q, float* out) {
    __shared__ float sc[16 * 16];
    int h = threadIdx.x;
    for (int j = 0; j < 16; j++) sc[h * 16 + j] = q[blockIdx.x * 256 + h * 16 + j];
    __syncthreads();
    out[blockIdx.x * 16 + h] = sc[h] + sc[h * 16];
}
void run(const float* q, float* out, int tokens, int heads) {
    heads<<<tokens, heads>>>(q, out);
}
"#,
            expect![[r#"
                warning: 4-way bank conflict: this store to `sc` takes 8 wavefronts instead of 2, because lanes of a warp hit 4 different words of one bank (only the 16 lanes of warp 0 whose index stays inside `sc[16 * 16]` can run it); the lanes' stride comes from `h * 16` (pitfall-bank-conflict#P4)
                warning: 8-way bank conflict: this load from `sc` takes 8 wavefronts instead of 1, because lanes of a warp hit 8 different words of one bank (only the 16 lanes of warp 0 whose index stays inside `sc[16 * 16]` can run it); the lanes' stride comes from `h * 16` (pitfall-bank-conflict#P1)
            "#]],
        );
    }

    /// A 16 × 16 tile of doubles read at `[threadIdx.x][threadIdx.y]`. With the block
    /// set field by field (`b.x = b.y = 16;`) the launch gives it: warps span two rows,
    /// 16-way on 8-byte words, 32 wavefronts where 2 would do. With the block filled in by
    /// a helper the file cannot see, under a block as wide as the warp only 16 lanes stay
    /// inside the tile, so the real block is narrower and its warps span rows, which
    /// gives another figure: a hint that says what it assumes.
    #[test]
    fn a_tile_read_by_a_block_the_file_does_not_fold_is_a_hint() {
        let kernel = r#"
__global__ void transpose_d(const double* src, double* dst, int n) {
    __shared__ double s[16][16];
    int x = threadIdx.x + 16 * blockIdx.x, y = threadIdx.y + 16 * blockIdx.y;
    if (x < n && y < n) s[threadIdx.y][threadIdx.x] = src[x + n * y];
    __syncthreads();
    x = threadIdx.x + 16 * blockIdx.y; y = threadIdx.y + 16 * blockIdx.x;
    if (x < n && y < n) dst[x + n * y] = s[threadIdx.x][threadIdx.y];
                                      // ^^^^^^^^^^^^^^^^^^^^^^^^^^^ SEVERITY
}
"#;
        check(
            RULE,
            &format!(
                "{}void run(const double* src, double* dst, int n) {{\n    dim3 b; b.x = b.y = 16; b.z = 1;\n    transpose_d<<<dim3(n / 16, n / 16), b>>>(src, dst, n);\n}}\n",
                kernel.replace("SEVERITY", "warning: 16-way bank conflict: this load from `s` takes 32 wavefronts instead of 2")
            ),
        );
        check(
            RULE,
            &format!(
                "void make_block(dim3* b, int tile);\n{}void run(const double* src, double* dst, int n) {{\n    dim3 b;\n    make_block(&b, 16);\n    transpose_d<<<dim3(n / 16, n / 16), b>>>(src, dst, n);\n}}\n",
                kernel.replace("SEVERITY", "hint: 16-way bank conflict: this load from `s` takes 16 wavefronts instead of 1")
            ),
        );
    }

    /// A tree loop in a device function whose length and thread index are parameters:
    /// the call's arguments (`N` = 256, `tid` = `threadIdx.x`) go into the function's
    /// guard too, so `n < N` leaves 128 / `s` lanes at step `s` (8-way at worst, not
    /// 32-way at `s` = 16, where only 8 lanes pass).
    #[test]
    fn a_guard_on_parameters_takes_the_calls_arguments() {
        check_messages(
            RULE,
            r#"
__device__ void upsweep(float* a, int N, int tid) {
    for (int s = 1; s < N; s <<= 1) {
        int n = 2 * s * (tid + 1) - 1;
        if (n < N) a[n] += a[n - s];
        __syncthreads();
    }
}
__global__ void scan256(float* g) {
    __shared__ float buf[256];
    buf[threadIdx.x] = g[threadIdx.x];
    __syncthreads();
    upsweep(buf, 256, threadIdx.x);
    g[threadIdx.x] = buf[threadIdx.x];
}
void run(float* g) { scan256<<<4, 256>>>(g); }
"#,
            expect![[r#"
                warning: 8-way bank conflict: this update of `a` takes 8 wavefronts instead of 1 at the step where `s` = 4, because lanes of a warp hit 8 different words of one bank; over the 8 steps of the loop over `s` (`s <<= 1`) warp 0 takes 37 wavefronts instead of 8 (2-way at the first step) (in `upsweep` as `scan256` calls it at line 12) (pitfall-bank-conflict#P7)
                warning: 8-way bank conflict: this load from `a` takes 8 wavefronts instead of 1 at the step where `s` = 4, because lanes of a warp hit 8 different words of one bank; over the 8 steps of the loop over `s` (`s <<= 1`) warp 0 takes 37 wavefronts instead of 9 (conflict-free at the first step) (in `upsweep` as `scan256` calls it at line 12) (pitfall-bank-conflict#P7)
            "#]],
        );
    }

    /// A tree whose stride is a shift by the loop's counter (`(t * 2) << u` over `u++`)
    /// doubles its stride each pass, which the model does not step through: the figure is
    /// the first pass's, and the message says later passes may conflict more.
    #[test]
    fn a_stride_shifted_by_the_loop_counter_names_its_first_pass() {
        check_messages(
            RULE,
            r#"
__global__ void tree(const float* in, float* out) {
    __shared__ float v[512];
    v[threadIdx.x] = in[threadIdx.x];
    for (int u = 0; (1 << u) < blockDim.x; u++) {
        __syncthreads();
        if (threadIdx.x < (blockDim.x >> (u + 1))) {
            int a = (threadIdx.x * 2) << u;
            v[a] = v[a] + 1.0f;
        }
    }
    if (threadIdx.x == 0) out[blockIdx.x] = v[0];
}
void run(const float* in, float* out) { tree<<<8, 512>>>(in, out); }
"#,
            expect![[r#"
                hint: 2-way bank conflict: this store to `v` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (at the first step of the loop over `u`, the only one the model holds: the stride changes each step, so later steps may conflict more); the lanes' stride comes from `(threadIdx.x * 2) << u` (pitfall-bank-conflict#P5)
                hint: 2-way bank conflict: this load from `v` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (at the first step of the loop over `u`, the only one the model holds: the stride changes each step, so later steps may conflict more); the lanes' stride comes from `(threadIdx.x * 2) << u` (pitfall-bank-conflict#P5)
            "#]],
        );
    }

    /// A stride that a local doubles at the end of each pass (`step <<= 1`) of a loop
    /// that starts at a value the code does not fix (`active = n >> 1`): the model holds
    /// the first pass only, and says so.
    #[test]
    fn a_stride_doubled_in_a_loop_of_unfixed_start_names_its_first_pass() {
        check_messages(
            RULE,
            r#"
__global__ void upsweep(int* out, const int* in, int n) {
    extern __shared__ int buf[];
    int t = threadIdx.x;
    buf[t] = in[t];
    int step = 1;
    for (int active = n >> 1; active > 0; active >>= 1) {
        __syncthreads();
        if (t < active) {
            int lo = step * (2 * t + 1) - 1;
            int hi = step * (2 * t + 2) - 1;
            buf[hi] += buf[lo];
        }
        step <<= 1;
    }
    out[t] = buf[t];
}
"#,
            expect![[r#"
                hint: 2-way bank conflict: this update of `buf` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (at the first step of the loop over `step`, the only one the model holds: the stride changes each step, so later steps may conflict more) (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `upsweep` gives its block); the lanes' stride comes from `step * (2 * t + 2)` (pitfall-bank-conflict#P5)
                hint: 2-way bank conflict: this load from `buf` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (at the first step of the loop over `step`, the only one the model holds: the stride changes each step, so later steps may conflict more) (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `upsweep` gives its block); the lanes' stride comes from `step * (2 * t + 1)` (pitfall-bank-conflict#P5)
            "#]],
        );
    }

    /// A scan's up-sweep doubles `s` once per step (`s *= 2` at the end of its body);
    /// a later down-sweep halves the same `s`. The later loop's writes do not reach the
    /// first loop, whose steps are modelled with `s` doubling: 32-way at `s` = 16, 93
    /// wavefronts over the ten steps where 10 are needed (the same figure as without the
    /// down-sweep).
    #[test]
    fn a_stride_a_later_loop_reuses_still_doubles_in_the_first() {
        let up = r#"
__global__ void scan(unsigned* data) {
    extern __shared__ unsigned sh[];
    int t = threadIdx.x;
    sh[2 * t] = data[2 * t];
    sh[2 * t + 1] = data[2 * t + 1];
    int s = 1;
    for (int d = blockDim.x; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) sh[s * (2 * t + 2) - 1] += sh[s * (2 * t + 1) - 1];
        s *= 2;
    }
DOWN    __syncthreads();
    data[2 * t] = sh[2 * t];
}
void run(unsigned* d) { scan<<<1, 512, 4096>>>(d); }
"#;
        let down = "    for (int d = 1; d < 2 * blockDim.x; d *= 2) {\n        s >>= 1;\n        __syncthreads();\n        if (t < d) sh[s * (2 * t + 1) - 1] = 0;\n    }\n";
        let first_loop = |text: &str| -> Vec<String> {
            crate::rules::testing::messages(RULE, text)
                .into_iter()
                .filter(|m| m.contains("over the 10 steps of the loop over `d` (`d >>= 1`)"))
                .collect()
        };
        let alone = first_loop(&up.replace("DOWN", ""));
        let with_down = first_loop(&up.replace("DOWN", down));
        assert_eq!(alone.len(), 2, "{alone:?}");
        assert!(
            alone[0].contains("warp 0 takes 93 wavefronts instead of 10"),
            "{alone:?}"
        );
        assert_eq!(with_down, alone);
    }

    /// A down-sweep's last step (`d` = 1) reads `w[k - 1]` and `w[k]` as one `LDS.64` and
    /// writes them back as one `STS.64` (nvcc 13.5, sm_90: `LDS.64` then `STS.64` at the
    /// same address): the plain store counts the merged store (9 wavefronts ideal over the
    /// sweep, conflict-free at the first step), the update adds nothing at that step.
    #[test]
    fn a_down_sweeps_last_step_stores_one_pair() {
        check_messages(
            RULE,
            r#"
__global__ void downsweep(float* g) {
    __shared__ float w[256];
    int t = threadIdx.x;
    w[t] = g[t];
    __syncthreads();
    for (int d = 128; d >= 1; d /= 2) {
        int k = 2 * d * (t + 1) - 1;
        if (k < 256) {
            float left = w[k - d];
            w[k - d] = w[k];
            w[k] += left;
        }
        __syncthreads();
    }
    g[t] = w[t];
}
void run(float* g) { downsweep<<<1, 256>>>(g); }
"#,
            expect![[r#"
                warning: 8-way bank conflict: this load from `w` takes 8 wavefronts instead of 1 at the step where `d` = 16, because lanes of a warp hit 8 different words of one bank; over the 8 steps of the loop over `d` (`d >>= 1`) warp 0 takes 37 wavefronts instead of 9 (conflict-free at the first step); the lanes' stride comes from `2 * d * (t + 1)` (pitfall-bank-conflict#P7)
                warning: 8-way bank conflict: this store to `w` takes 8 wavefronts instead of 1 at the step where `d` = 16, because lanes of a warp hit 8 different words of one bank; over the 8 steps of the loop over `d` (`d >>= 1`) warp 0 takes 37 wavefronts instead of 9 (conflict-free at the first step); the lanes' stride comes from `2 * d * (t + 1)` (pitfall-bank-conflict#P7)
                warning: 8-way bank conflict: this load from `w` takes 8 wavefronts instead of 1 at the step where `d` = 16, because lanes of a warp hit 8 different words of one bank; over the 8 steps of the loop over `d` (`d >>= 1`) warp 0 takes 35 wavefronts instead of 7 (conflict-free at the first step); the lanes' stride comes from `2 * d * (t + 1)` (pitfall-bank-conflict#P7)
                warning: 8-way bank conflict: this update of `w` takes 8 wavefronts instead of 1 at the step where `d` = 16, because lanes of a warp hit 8 different words of one bank; over the 8 steps of the loop over `d` (`d >>= 1`) warp 0 takes 35 wavefronts instead of 7 (conflict-free at the first step); the lanes' stride comes from `2 * d * (t + 1)` (pitfall-bank-conflict#P7)
            "#]],
        );
    }

    /// Only the lanes a loop's bound lets in issue the access: with `r` from
    /// `threadIdx.x` below 8, eight lanes read eight rows of 128 floats (8-way, not
    /// 32-way). The `d` loop has no pragma but is small enough for nvcc to unroll in
    /// full: nvcc 13.5 `-arch=sm_90 -cubin` gives 32 `LDS.128`, so the merged access's
    /// page (P4) is cited.
    #[test]
    fn a_loop_bound_limits_the_lanes() {
        check_messages(
            RULE,
            r#"
constexpr int R = 8;
__global__ void rows(const float* q, float* out) {
  __shared__ float t[R][128];
  for (int i = threadIdx.y; i < R; i += blockDim.y)
    for (int d = threadIdx.x; d < 128; d += blockDim.x) t[i][d] = q[i * 128 + d];
  __syncthreads();
  float acc = 0.f;
  for (int r = threadIdx.x; r < R; r += blockDim.x)
    for (int d = 0; d < 128; d++) acc += t[r][d];
  out[threadIdx.x] = acc;
}
void run(const float* q, float* out) { rows<<<1, dim3(128, 8)>>>(q, out); }
"#,
            expect![[r#"
                warning: 8-way bank conflict: this load from `t` takes 8 wavefronts instead of 1, because lanes of a warp hit 8 different words of one bank; the lanes' stride comes from `r` in the row index (pitfall-bank-conflict#P4)
            "#]],
        );
    }

    /// A loop of known length too long to unroll in full (`k < 64` around a pragma-unrolled
    /// loop over four rows) is unrolled in part, and consecutive `k` merge: nvcc 13.5
    /// `-O3 -arch=sm_90` gives `LDS.128` for `t[c * 4 + r][k]`. The scalar 8-way figure is
    /// an upper bound, a hint that says so.
    #[test]
    fn a_long_loop_unrolled_in_part_is_an_upper_bound() {
        check(
            RULE,
            r#"
__global__ void dot_tiles(const float* src, float* dst) {
    __shared__ float t[64][68];
    for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x)
        t[i / 64][i % 64] = src[blockIdx.x * 64 * 64 + i];
    __syncthreads();
    const int c = threadIdx.x % 16;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k = 0; k < 64; ++k) {
#pragma unroll
        for (int r = 0; r < 4; ++r)
            acc[r] += t[c * 4 + r][k];
                   // ^^^^^^^^^^^^^^^ hint: 8-way bank conflict: this load from `t` takes 8 wavefronts instead of 1, because lanes of a warp hit 8 different words of one bank (at most: nvcc unrolls the loop only in part
    }
    dst[blockIdx.x * blockDim.x + threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
}
void launch(const float* s, float* d) { dot_tiles<<<80, 256>>>(s, d); }
"#,
        );
    }

    /// A constant-trip loop with no pragma is unrolled in full when its trip count times
    /// its body is small, and its consecutive elements merge: nvcc 13.5 `-arch=sm_90
    /// -cubin` gives 16 `LDS.128` for the float row (8-way, 32 wavefronts instead of 4)
    /// and 16 `LDS.64` for the half row (16-way, 32 instead of 2). A body with calls
    /// (`sinf`, `cosf`) over 32 trips is not unrolled (one `LDS` in a loop): 32-way.
    #[test]
    fn a_small_loop_without_pragma_is_unrolled_and_merged() {
        check_messages(
            RULE,
            r#"
#include <cuda_fp16.h>
__global__ void rows_h(const half* in, half* out, const unsigned* pos) {
  __shared__ half t[64][64];
  for (int r = 0; r < 64; r++) t[r][threadIdx.x] = in[r * 64 + threadIdx.x];
  __syncthreads();
  unsigned p = pos[threadIdx.x];
  for (int c = 0; c < 64; c++) out[p * 64 + c] = t[threadIdx.x][c];
}
__global__ void rows_f(const float* in, float* out, const unsigned* pos, int plane) {
  __shared__ float t[64][64];
  for (int r = 0; r < 64; r++) t[r][threadIdx.x] = in[r * 64 + threadIdx.x];
  __syncthreads();
  unsigned p = pos[threadIdx.x];
  for (int c = 0; c < 64; c++) out[c * plane + p] = t[threadIdx.x][c];
}
__global__ void rows_big(const float* in, float* out) {
  __shared__ float t[64][32];
  for (int r = 0; r < 32; r++) t[threadIdx.x][r] = in[r * 64 + threadIdx.x];
  __syncthreads();
  float acc = 0.f;
  for (int c = 0; c < 32; c++) acc = acc * 1.5f + sinf((float)t[threadIdx.x][c]) * cosf(acc);
  out[threadIdx.x] = acc;
}
void run(const half* a, half* b, const float* c, float* d, const unsigned* p, int plane) {
  rows_h<<<1, 64>>>(a, b, p);
  rows_f<<<1, 64>>>(c, d, p, plane);
  rows_big<<<1, 64>>>(c, d);
}
"#,
            expect![[r#"
                warning: 16-way bank conflict: this load from `t` takes 32 wavefronts instead of 2, because lanes of a warp hit 16 different words of one bank; the lanes' stride comes from `threadIdx.x` in the row index (pitfall-bank-conflict#P4)
                warning: 8-way bank conflict: this load from `t` takes 32 wavefronts instead of 4, because lanes of a warp hit 8 different words of one bank; the lanes' stride comes from `threadIdx.x` in the row index (pitfall-bank-conflict#P4)
                warning: 8-way bank conflict: this store to `t` takes 32 wavefronts instead of 4, because lanes of a warp hit 8 different words of one bank; the lanes' stride comes from `threadIdx.x` in the row index (pitfall-bank-conflict#P4)
                warning: 32-way bank conflict: this load from `t` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank; the lanes' stride comes from `threadIdx.x` in the row index (pitfall-bank-conflict#P1)
            "#]],
        );
    }

    /// A pair of statements inside an unrolled 2-trip loop merges across the iterations:
    /// nvcc 13.5 `-arch=sm_90 -cubin` stores the four floats with one `STS.128` (8-way,
    /// 32 wavefronts instead of 4), not two `STS.64` (16-way).
    #[test]
    fn pairs_merge_across_an_unrolled_loop() {
        check_messages(
            RULE,
            r#"
__global__ void pairs(const float* in, float* out) {
  __shared__ float s[128 * 32];
  float v[8];
  for (int j = 0; j < 8; j++) v[j] = in[j * 128 + threadIdx.x];
  for (int n = 0; n < 2; n++) {
    for (int i = 0; i < 2; i++) {
      s[threadIdx.x * 32 + n * 4 + i * 2] = v[n * 4 + i * 2];
      s[threadIdx.x * 32 + n * 4 + i * 2 + 1] = v[n * 4 + i * 2 + 1];
    }
  }
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}
void run(const float* in, float* out) { pairs<<<1, 128>>>(in, out); }
"#,
            expect![[r#"
                warning: 8-way bank conflict: this store to `s` takes 32 wavefronts instead of 4 (one 16-byte access with the part at line 8, as nvcc merges them), because lanes of a warp hit 8 different words of one bank; the lanes' stride comes from `threadIdx.x * 32` (pitfall-bank-conflict#P4)
            "#]],
        );
    }

    /// A row a thread stores in one unrolled loop and reads back in the next (no barrier,
    /// nothing between) is read from registers: nvcc 13.5 `-arch=sm_90 -O3` gives 8
    /// `STS.128` and no `LDS`. Only the store is reported; behind a barrier, or with a
    /// loop that skips iterations, the load is read from shared memory again.
    #[test]
    fn a_row_read_back_in_the_next_unrolled_loop_comes_from_registers() {
        check(
            RULE,
            r#"
__global__ void rowexp(const float* in, float* out) {
    __shared__ float tile[64 * 32];
    int r = threadIdx.x;
    float m = -1e30f;
    #pragma unroll
    for (int c = 0; c < 32; ++c) {
        float v = in[(blockIdx.x * 64 + r) * 32 + c];
        tile[r * 32 + c] = v;
     // ^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this store to `tile` takes 32 wavefronts instead of 4
        m = fmaxf(m, v);
    }
    float s = 0.f;
    #pragma unroll
    for (int c = 0; c < 32; ++c)
        s += __expf(tile[r * 32 + c] - m);
    out[blockIdx.x * 64 + r] = s;
}
void launch(const float* in, float* out) { rowexp<<<8, 64>>>(in, out); }
"#,
        );
        check(
            RULE,
            r#"
__global__ void rowexp(const float* in, float* out) {
    __shared__ float tile[64 * 32];
    int r = threadIdx.x;
    #pragma unroll
    for (int c = 0; c < 32; ++c)
        tile[r * 32 + c] = in[(blockIdx.x * 64 + r) * 32 + c];
     // ^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this store to `tile`
    __syncthreads();
    float s = 0.f;
    #pragma unroll
    for (int c = 0; c < 32; ++c)
        s += __expf(tile[r * 32 + c]);
                 // ^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this load from `tile`
    out[blockIdx.x * 64 + r] = s;
}
void launch(const float* in, float* out) { rowexp<<<8, 64>>>(in, out); }
"#,
        );
    }

    /// The row read back by an unrolled loop inside a later loop (`for (d …)` over the
    /// columns of another tile) stays in registers too, where nothing in that loop
    /// writes the row or synchronises: nvcc 13.5 `-arch=sm_90 -O3` issues 8 `STS.128` for
    /// the row and, at the read, only the 32 `LDS` of `vt`. Where the outer loop also
    /// stores into the row, the read is 8 `LDS.128` again.
    #[test]
    fn a_row_read_back_inside_a_later_loop_comes_from_registers() {
        check(
            RULE,
            r#"
__global__ void rowmix(const float* in, const float* v, float* out) {
    __shared__ float tile[64 * 32];
    __shared__ float vt[32 * 16];
    int r = threadIdx.x;
    for (int i = r; i < 32 * 16; i += blockDim.x) vt[i] = v[i];
    __syncthreads();
    #pragma unroll
    for (int c = 0; c < 32; ++c)
        tile[r * 32 + c] = __expf(in[(blockIdx.x * 64 + r) * 32 + c]);
     // ^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this store to `tile` takes 32 wavefronts instead of 4
    for (int d = 0; d < 16; ++d) {
        float acc = 0.f;
        #pragma unroll
        for (int c = 0; c < 32; ++c)
            acc += tile[r * 32 + c] * vt[c * 16 + d];
        out[(blockIdx.x * 64 + r) * 16 + d] = acc;
    }
}
__global__ void rowmix2(const float* in, const float* v, float* out) {
    __shared__ float tile[64 * 32];
    __shared__ float vt[32 * 16];
    int r = threadIdx.x;
    for (int i = r; i < 32 * 16; i += blockDim.x) vt[i] = v[i];
    __syncthreads();
    #pragma unroll
    for (int c = 0; c < 32; ++c)
        tile[r * 32 + c] = __expf(in[(blockIdx.x * 64 + r) * 32 + c]);
     // ^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this store to `tile` takes 32 wavefronts instead of 4
    for (int d = 0; d < 16; ++d) {
        float acc = 0.f;
        #pragma unroll
        for (int c = 0; c < 32; ++c)
            acc += tile[r * 32 + c] * vt[c * 16 + d];
                // ^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this load from `tile` takes 32 wavefronts instead of 4
        tile[r * 32 + d] = acc;
     // ^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this store to `tile`
    }
    out[blockIdx.x * 64 + r] = tile[r * 32 + 5];
                            // ^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this load from `tile`
}
void launch(const float* in, const float* v, float* out) {
    rowmix<<<8, 64>>>(in, v, out);
    rowmix2<<<8, 64>>>(in, v, out);
}
"#,
        );
    }

    /// A `__shared__` array each thread uses only at its own element, with no barrier
    /// after its first use: no other thread can see the values without a race, and nvcc
    /// keeps them in registers (nvcc 13.5 `-O3 -arch=sm_90`: the reads below issue no
    /// `LDS`). The reads that a store of the same element reaches on every path, with no
    /// barrier between, are not reported; the stores are (which of them nvcc keeps is
    /// its choice). After a barrier the read is reported.
    #[test]
    fn a_threads_own_scratch_is_kept_in_registers() {
        check(
            RULE,
            r#"
__global__ void accumulate(const float* in, float* out, int rows, int steps) {
    __shared__ float acc[32][32];
    for (int r = 0; r < rows; ++r) {
        acc[threadIdx.x][threadIdx.y] = 1.0f;
     // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this store to `acc` takes 32 wavefronts instead of 1
        for (int k = 0; k < steps; ++k) {
            float v = in[(r * steps + k) * 1024 + threadIdx.y * 32 + threadIdx.x];
            acc[threadIdx.x][threadIdx.y] = acc[threadIdx.x][threadIdx.y] * 0.5f + v;
         // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this store to `acc`
        }
        out[r * 1024 + threadIdx.y * 32 + threadIdx.x] = acc[threadIdx.x][threadIdx.y];
    }
}
__global__ void shared_rows(const float* in, float* out) {
    __shared__ float acc[32][32];
    acc[threadIdx.x][threadIdx.y] = in[threadIdx.y * 32 + threadIdx.x];
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this store to `acc`
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = acc[threadIdx.x][threadIdx.y];
                                       // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this load from `acc`
}
void run(const float* in, float* out) {
    accumulate<<<1, dim3(32, 32)>>>(in, out, 4, 8);
    shared_rows<<<1, dim3(32, 32)>>>(in, out);
}
"#,
        );
    }

    /// A thread's own slot of a buffer, filled, mixed and updated element by element,
    /// then rewritten in full by a last unrolled loop, with no barrier after the slot's
    /// first use: nvcc keeps the slot in registers and writes it once, at the last loop
    /// (nvcc 13.5 `-O3 -arch=sm_90`: four `STS.128` at that line, no `LDS` of the slot and
    /// no other `STS`). Only that loop is reported, as the vector stores it becomes.
    #[test]
    fn a_threads_slot_rewritten_at_the_end_is_stored_once() {
        check(
            RULE,
            r#"
__global__ void keystream(unsigned* out, const unsigned* key, const unsigned* nonce) {
    extern __shared__ unsigned words[];
    unsigned* mine = &words[threadIdx.x * 16];
    for (int i = 0; i < 16; i++) mine[i] = key[i];
    mine[12] = blockIdx.x * blockDim.x + threadIdx.x;
    for (int round = 0; round < 4; round++) {
        mine[0] += mine[4];
        mine[12] ^= mine[0];
    }
    mine[1] += nonce[0];
    for (int i = 0; i < 16; i++) mine[i] += key[i];
                              // ^^^^^^^ warning: 4-way bank conflict: this update of `mine` takes 16 wavefronts instead of 4
    for (int i = 0; i < 16; i++) out[(blockIdx.x * blockDim.x + threadIdx.x) * 16 + i] = mine[i];
}
void run(unsigned* o, const unsigned* k, const unsigned* n) { keystream<<<64, 128, 128 * 64>>>(o, k, n); }
"#,
        );
    }

    /// A thread's eight words written as a head statement, an unrolled loop over the
    /// middle six and a tail statement: nvcc 13.5 `-O3 -arch=sm_90` fuses them into two
    /// `STS.128` (2-way, 8 wavefronts where 4 would do), which the merge model, fusing
    /// within a stretch of statements or within a loop, does not see. The scalar 8-way
    /// figure is an upper bound: hints that say so.
    #[test]
    fn a_head_loop_and_tail_over_a_threads_words_are_hints() {
        check(
            RULE,
            r#"
__global__ void pack8(const float* __restrict__ in, float* out) {
    extern __shared__ float buf[];
    const int t = threadIdx.x;
    float v[8];
    for (int k = 0; k < 8; ++k) v[k] = in[(blockIdx.x * blockDim.x + t) * 8 + k];
    buf[t * 8 + 0] = v[0];
 // ^^^^^^^^^^^^^^ hint: 8-way bank conflict: this store to `buf` takes 8 wavefronts instead of 1
    for (int k = 1; k < 7; ++k) buf[t * 8 + k] = v[k];
                             // ^^^^^^^^^^^^^^ hint: 8-way bank conflict: this store to `buf` takes 8 wavefronts instead of 1
    buf[t * 8 + 7] = v[7];
 // ^^^^^^^^^^^^^^ hint: 8-way bank conflict: this store to `buf` takes 8 wavefronts instead of 1
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = buf[((t + 1) % 256) * 8];
                                    // ^^^^^^^^^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this load from `buf` takes 8 wavefronts instead of 1
}
void run(const float* a, float* o) { pack8<<<4, 256, 256 * 8 * sizeof(float)>>>(a, o); }
"#,
        );
    }

    /// An up-sweep whose guard leaves every thread out at the last step (`index = (t + 1) *
    /// stride * 2 < 1024` at `stride` = 512): that step costs nothing. Warp 0's lanes per
    /// step are 32, 32, 32, 32, 31, 15, 7, 3, 1, 0, so the worst step is `stride` = 16
    /// (31-way) and the sweep takes 2 + 4 + 8 + 16 + 31 + 15 + 7 + 3 + 1 = 87 wavefronts.
    #[test]
    fn a_sweep_step_no_thread_runs_costs_nothing() {
        check_messages(
            RULE,
            r#"
__global__ void upsweep(float* data) {
    extern __shared__ float s[];
    s[threadIdx.x] = data[blockIdx.x * 1024 + threadIdx.x];
    int stride = 1;
    while (stride < 1024) {
        __syncthreads();
        int index = (threadIdx.x + 1) * stride * 2;
        if (index < 1024)
            s[index] += 1.0f;
        stride *= 2;
    }
}
void run(float* d) { upsweep<<<4, 1024, 4096>>>(d); }
"#,
            expect![[r#"
                warning: 31-way bank conflict: this update of `s` takes 31 wavefronts instead of 1 at the step where `stride` = 16, because lanes of a warp hit 31 different words of one bank; over the 10 steps of the loop over `stride` (`stride <<= 1`) warp 0 takes 87 wavefronts instead of 9 (2-way at the first step); the lanes' stride comes from `(threadIdx.x + 1) * stride * 2` (pitfall-bank-conflict#P7)
            "#]],
        );
    }

    /// A grid-stride loop whose variable starts at `threadIdx.x * 4` and steps by
    /// `blockDim.x * 4` keeps every value a multiple of 4 elements: the four stores of a
    /// thread's slice merge into one `STS.128` (nvcc 13.5 `-arch=sm_90 -O3`), 16 bytes a
    /// lane, contiguous across the warp: no conflict.
    #[test]
    fn a_runtime_step_keeps_the_alignment_of_its_divisor() {
        check(
            RULE,
            r#"
__global__ void prefix4(const float* in, float* out, int n) {
    __shared__ float tile[8192];
    for (int k = threadIdx.x * 4; k < n; k += blockDim.x * 4) {
        float a = in[k], b = in[k + 1], c = in[k + 2], d = in[k + 3];
        tile[k] = a;
        tile[k + 1] = a + b;
        tile[k + 2] = a + b + c;
        tile[k + 3] = a + b + c + d;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = tile[i];
}
void run(const float* in, float* out) { prefix4<<<32, 512>>>(in, out, 8192); }
"#,
        );
    }

    /// Two `__half` stores a step of an unrolled loop pack into 8 bytes, not 16: nvcc 13.5
    /// `-arch=sm_90 -O3` gives eight `STS.64` for 16 steps, rows 128 bytes apart and two
    /// threads a row: 8-way, 16 wavefronts instead of 2.
    #[test]
    fn half_pairs_across_an_unrolled_loop_pack_into_8_bytes() {
        check(
            RULE,
            r#"
#include <cuda_fp16.h>
__global__ void dequant(const unsigned char* q, __half* out) {
    __shared__ __half W[64][64];
    int tid = threadIdx.x;
    int row = tid >> 1;
    int base = (tid & 1) << 5;
    #pragma unroll
    for (int i = 0; i < 16; ++i) {
        W[row][base + 2 * i + 0] = __int2half_rn(q[tid * 16 + i] & 15);
     // ^^^^^^^^^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this store to `W` takes 16 wavefronts instead of 2
        W[row][base + 2 * i + 1] = __int2half_rn(q[tid * 16 + i] >> 4);
    }
    __syncthreads();
    out[tid] = W[0][tid & 63];
}
void launch(const unsigned char* q, __half* out) { dequant<<<1, 128>>>(q, out); }
"#,
        );
    }

    /// The guards of the launched instantiation: `tid < R` with `R = 4` leaves four
    /// lanes (rows 8 words apart, conflict-free), also joined with a bound on a global
    /// index; `tid < nw * 4` with a runtime `nw` leaves an unknown part of the warp:
    /// silent, not "all 32 lanes".
    #[test]
    fn guards_on_template_and_runtime_values_limit_the_lanes() {
        check(
            RULE,
            r#"
template <int R>
__global__ void fold(const float* in, float* out, int nw) {
  __shared__ float s[R][8];
  int tid = threadIdx.x;
  if (tid < 8)
    for (int r = 0; r < R; r++) s[r][tid] = in[r * 8 + tid];
  __syncthreads();
  if (tid < R) {
    float v = 0.f;
    for (int w = 0; w < nw; w++) v += s[tid][w];
    out[tid] = v;
  }
  if (tid < nw * 4) {
    float v = 0.f;
    for (int w = 0; w < nw; w++) v += s[tid % R][w];
    out[tid] += v;
  }
  if (tid < R && blockIdx.x * R + tid < nw) {
    float v = 0.f;
    for (int w = 0; w < nw; w++) v += s[tid][w];
    out[tid] += v;
  }
}
void run(const float* in, float* out, int nw) { fold<4><<<1, 128>>>(in, out, nw); }
"#,
        );
    }

    /// A lane guard held in a local no assignment reaches (`const bool few = tid < 8;`)
    /// limits the lanes as the comparison written in place does, through `if (few)` and
    /// `few ? s[..] : 0` alike: the eight lanes that take the branch are 8-way; the
    /// unguarded access of the same stride is 32-way.
    #[test]
    fn a_lane_guard_held_in_a_bool_local_limits_the_lanes() {
        check(
            RULE,
            r#"
__global__ void starts(unsigned* out) {
    __shared__ unsigned s[1024];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x < 32) {
        const bool few = threadIdx.x < 8;
        unsigned t = few ? s[threadIdx.x << 5] : 0;
                        // ^^^^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this load from `s` takes 8 wavefronts instead of 1, because lanes of a warp hit 8 different words of one bank (only the 8 lanes of warp 0 that pass `few` run it)
        if (few)
            s[threadIdx.x << 5] = t + 1;
         // ^^^^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this store to `s`
        out[threadIdx.x] = s[threadIdx.x << 5];
                        // ^^^^^^^^^^^^^^^^^^^ warning: 32-way bank conflict: this load from `s`
    }
}
void run(unsigned* out) { starts<<<1, 256>>>(out); }
"#,
        );
    }

    /// Past `if (t >= 8) return;` only eight lanes read the column, and past `if (t >=
    /// 16) continue;` sixteen: 8-way and 16-way, the lanes that run it (the full warp's
    /// 32-way figure would overstate them); the same read before the exits is 32-way.
    #[test]
    fn early_exits_leave_partial_warps() {
        check_messages(
            RULE,
            r#"
__global__ void column(float* out) {
    __shared__ float s[32 * 32];
    unsigned t = threadIdx.x;
    for (int i = 0; i < 32; ++i) s[i * 32 + t] = i;
    __syncthreads();
    out[64 + t] = s[t * 32 + 5];
    for (int i = 0; i < 4; ++i) {
        if (t >= 16) continue;
        out[i * 32 + t] = s[t * 32 + i];
    }
    if (t >= 8)
        return;
    out[t] = s[t * 32];
}
void run(float* out) { column<<<1, 32>>>(out); }
"#,
            expect![[r#"
                warning: 32-way bank conflict: this load from `s` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank; the lanes' stride comes from `t * 32` (pitfall-bank-conflict#P1)
                warning: 16-way bank conflict: this load from `s` takes 16 wavefronts instead of 1, because lanes of a warp hit 16 different words of one bank (only the 16 lanes of warp 0 that pass `!(t >= 16)` run it); the lanes' stride comes from `t * 32` (pitfall-bank-conflict#P1)
                warning: 8-way bank conflict: this load from `s` takes 8 wavefronts instead of 1, because lanes of a warp hit 8 different words of one bank (only the 8 lanes of warp 0 that pass `!(t >= 8)` run it); the lanes' stride comes from `t * 32` (pitfall-bank-conflict#P1)
            "#]],
        );
    }

    /// A transposed thread number (`tid = threadIdx.x * blockDim.y + threadIdx.y`) under
    /// `tid < 256`: with the 32×32 block of the launch, warp 0 is row `ty` = 0 and its
    /// lanes 0 to 7 pass, all in bank 0 (8-way); with no launch in sight the lanes that
    /// pass depend on the block, and with a second launch of a 16×16 block too, so
    /// nothing is said of them.
    #[test]
    fn partial_warp_lanes_that_the_block_decides() {
        let kernel = r#"
__global__ void hist(const unsigned char* in, unsigned* out) {
    __shared__ unsigned cache[256];
    int tid = threadIdx.x * blockDim.y + threadIdx.y;
    if (tid < 256) cache[tid] = 0;
    __syncthreads();
    atomicAdd(&cache[in[blockIdx.x * 1024 + threadIdx.y * 32 + threadIdx.x]], 1u);
    __syncthreads();
    if (tid < 256) out[blockIdx.x * 256 + tid] = cache[tid];
}
"#;
        check_messages(
            RULE,
            &format!("{kernel}void run(const unsigned char* in, unsigned* out, int n) {{ dim3 block(32, 32); hist << <n, block >> > (in, out); }}\n"),
            expect![[r#"
                warning: 8-way bank conflict: this store to `cache` takes 8 wavefronts instead of 1, because lanes of a warp hit 8 different words of one bank (only the 8 lanes of warp 0 that pass `tid < 256` run it); the lanes' stride comes from `threadIdx.x * blockDim.y` (pitfall-bank-conflict#P1)
                warning: 8-way bank conflict: this load from `cache` takes 8 wavefronts instead of 1, because lanes of a warp hit 8 different words of one bank (only the 8 lanes of warp 0 that pass `tid < 256` run it); the lanes' stride comes from `threadIdx.x * blockDim.y` (pitfall-bank-conflict#P1)
            "#]],
        );
        check(RULE, kernel);
        // A second launch with a 16×16 block lets all 32 lanes of warp 0 in.
        check(
            RULE,
            &format!("{kernel}void run(const unsigned char* in, unsigned* out, int n) {{ hist<<<n, dim3(32, 32)>>>(in, out); hist<<<n, dim3(16, 16)>>>(in, out); }}\n"),
        );
    }

    /// A tile's border threads leave before the reads (`if (tx <= 0 || ty <= 0 || tx >=
    /// 31 || ty >= 31) return;`): no lane of warp 0 (row `ty` = 0) reads, and of warp 1
    /// the 30 lanes 1 to 30, which hit one bank: 30-way (nvcc 13.5 `-arch=sm_90`: `@P0
    /// EXIT` on the negated range, then a scalar `LDS`).
    #[test]
    fn a_disjunction_of_exits_leaves_the_inner_lanes() {
        check_messages(
            RULE,
            r#"
__global__ void edges(const float* in, float* out, int w) {
    __shared__ float tile[32][32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int g = (blockIdx.y * 32 + ty) * w + blockIdx.x * 32 + tx;
    tile[ty][tx] = in[g];
    __syncthreads();
    if (tx <= 0 || ty <= 0 || tx >= 31 || ty >= 31) return;
    out[g] = tile[tx][ty] + tile[tx + 1][ty - 1];
}
void run(const float* in, float* out) { edges<<<dim3(16, 16), dim3(32, 32)>>>(in, out, 512); }
"#,
            expect![[r#"
                warning: 30-way bank conflict: this load from `tile` takes 30 wavefronts instead of 1, because lanes of a warp hit 30 different words of one bank (only the 30 lanes of warp 1 that pass `!(tx <= 0 || ty <= 0 || tx >= 31 || ty >= 31)` run it); the lanes' stride comes from `threadIdx.x` in the row index (pitfall-bank-conflict#P1)
                warning: 30-way bank conflict: this load from `tile` takes 30 wavefronts instead of 1, because lanes of a warp hit 30 different words of one bank (only the 30 lanes of warp 1 that pass `!(tx <= 0 || ty <= 0 || tx >= 31 || ty >= 31)` run it); the lanes' stride comes from `threadIdx.x` in the row index (pitfall-bank-conflict#P1)
            "#]],
        );
    }

    /// A thread's four adjacent words written inside a compiled `#if` arm are one
    /// `STS.128`, as without the `#if` (conflict-free at a 16-byte lane stride); an arm on
    /// a macro nothing defines is compiled only where a `-D` says so: a finding there is
    /// a hint that states it, while the arm the build as written compiles (`#if !defined
    /// KERNELS_DISABLED`) keeps its warning.
    #[test]
    fn preprocessor_arms_keep_merges_and_state_their_condition() {
        check_messages(
            RULE,
            r#"
#define PARTS 4
__global__ void quads(const uint4* in, unsigned* out) {
  __shared__ unsigned q[4 * 128];
  unsigned t = threadIdx.x;
  uint4 v = in[t];
#if PARTS == 4
  q[4 * t] = v.x;
  q[4 * t + 1] = v.y;
  q[4 * t + 2] = v.z;
  q[4 * t + 3] = v.w;
#endif
  __syncthreads();
  out[t] = q[t];
}
__global__ void rows(const unsigned* in, unsigned* out) {
  __shared__ unsigned r[4 * 128];
  unsigned t = threadIdx.x;
#if ROW_WIDTH == 4
  r[4 * t] = in[t];
#else
  r[t] = in[t];
#endif
  __syncthreads();
  out[t] = r[(t * 5) & 511];
}
__global__ void enabled(const unsigned* in, unsigned* out) {
  __shared__ unsigned e[4 * 128];
  unsigned t = threadIdx.x;
#if !defined KERNELS_DISABLED
  e[4 * t] = in[t];
#endif
  __syncthreads();
  out[t] = e[(t * 5) & 511];
}
void run(const uint4* in, unsigned* out) {
  quads<<<1, 128>>>(in, out);
  rows<<<1, 128>>>((const unsigned*)in, out);
  enabled<<<1, 128>>>((const unsigned*)in, out);
}
"#,
            expect![[r#"
                hint: 4-way bank conflict: this store to `r` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank; the lanes' stride comes from `4 * t` (a hint only: this line is compiled only where `#if ROW_WIDTH == 4` holds, which neither the file nor its build decides) (pitfall-bank-conflict#P1)
                warning: 4-way bank conflict: this store to `e` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank; the lanes' stride comes from `4 * t` (pitfall-bank-conflict#P1)
            "#]],
        );
    }

    /// A thread's 16-byte slice read one word per statement, the statements of the slice
    /// spread over a block of unrolled code with reads of the other slices between
    /// them: ptxas moves the loads together into `LDS.128` (SASS of nvcc 13.5, sm_90):
    /// at a 32-byte lane stride that is 2-way (8 wavefronts for 4), not the scalar 8-way.
    #[test]
    fn loads_spread_over_unrolled_statements_merge() {
        check_messages(
            RULE,
            r#"
__global__ void dots(const float* a, float* out) {
  __shared__ float tile[32 * 8];
  for (int i = threadIdx.x; i < 32 * 8; i += 32) tile[i] = a[i];
  __syncthreads();
  float x = 0.f, y = 0.f;
  x += tile[threadIdx.x * 8 + 0];
  x += tile[threadIdx.x * 8 + 4];
  y += tile[threadIdx.x * 8 + 1];
  y += tile[threadIdx.x * 8 + 5];
  x += tile[threadIdx.x * 8 + 2];
  x += tile[threadIdx.x * 8 + 6];
  y += tile[threadIdx.x * 8 + 3];
  y += tile[threadIdx.x * 8 + 7];
  out[threadIdx.x] = x + y;
}
void run(const float* a, float* out) { dots<<<1, 32>>>(a, out); }
"#,
            expect![[r#"
                hint: 2-way bank conflict: this load from `tile` takes 8 wavefronts instead of 4 (one 16-byte access with the parts at lines 8, 10, 12, as nvcc merges them), because lanes of a warp hit 2 different words of one bank; the lanes' stride comes from `threadIdx.x * 8` (pitfall-bank-conflict#P4)
                hint: 2-way bank conflict: this load from `tile` takes 8 wavefronts instead of 4 (one 16-byte access with the parts at lines 9, 11, 13, as nvcc merges them), because lanes of a warp hit 2 different words of one bank; the lanes' stride comes from `threadIdx.x * 8` (pitfall-bank-conflict#P4)
            "#]],
        );
    }

    /// The same in generated code, where the words of one slice are several KB of text
    /// apart (each word's statements come after those of every other slice's same
    /// word): searched in the whole straight-line stretch for an access whose scalar
    /// model conflicts. Four words a thread at a 656-byte stride are `LDS.128`s,
    /// conflict-free; scalar they would be 4-way.
    #[test]
    fn loads_far_apart_in_generated_code_merge() {
        let mut body = String::new();
        for word in 0..4 {
            for slice in 0..40 {
                body.push_str(&format!(
                    "  acc[{slice}] = acc[{slice}] + w[{word}] * tile[((int)threadIdx.x) * 164 + {}];\n",
                    slice * 4 + word
                ));
            }
        }
        let fixture = format!(
            "__global__ void gen(const float* a, const float* w, float* out) {{\n  __shared__ float tile[32 * 164];\n  float acc[40];\n  for (int i = threadIdx.x; i < 32 * 164; i += 32) tile[i] = a[i];\n  __syncthreads();\n{body}  out[threadIdx.x] = acc[0] + acc[39];\n}}\nvoid run(const float* a, const float* w, float* out) {{ gen<<<1, 32>>>(a, w, out); }}\n"
        );
        assert!(fixture.len() > 2 * 4096);
        check(RULE, &fixture);
    }

    /// A tree loop (its variable halves each step) is modelled at every step with the
    /// lanes its guard leaves then: in a Blelloch down-sweep only lane 0 passes `i + s < 2
    /// * N` at the first step, and 31 lanes at a stride of 32 words when `s` = 16.
    #[test]
    fn a_tree_loop_is_modelled_at_every_step() {
        check_messages(
            RULE,
            r#"
#define N 512
__global__ void scan(unsigned* io) {
  __shared__ unsigned a[2 * N];
  a[threadIdx.x] = io[threadIdx.x];
  a[threadIdx.x + N] = io[threadIdx.x + N];
  __syncthreads();
  for (int s = N >> 1; s > 0; s >>= 1) {
    int i = (threadIdx.x + 1) * s * 2 - 1;
    if (i + s < 2 * N) a[i + s] += a[i];
    __syncthreads();
  }
  io[threadIdx.x] = a[threadIdx.x];
}
void run(unsigned* io) { scan<<<1, N>>>(io); }
"#,
            expect![[r#"
                warning: 31-way bank conflict: this update of `a` takes 31 wavefronts instead of 1 at the step where `s` = 16, because lanes of a warp hit 31 different words of one bank; over the 9 steps of the loop over `s` (`s >>= 1`) warp 0 takes 87 wavefronts instead of 9 (conflict-free at the first step); the lanes' stride comes from `(threadIdx.x + 1) * s * 2` (pitfall-bank-conflict#P7)
                warning: 31-way bank conflict: this load from `a` takes 31 wavefronts instead of 1 at the step where `s` = 16, because lanes of a warp hit 31 different words of one bank; over the 9 steps of the loop over `s` (`s >>= 1`) warp 0 takes 87 wavefronts instead of 9 (conflict-free at the first step); the lanes' stride comes from `(threadIdx.x + 1) * s * 2` (pitfall-bank-conflict#P7)
            "#]],
        );
    }

    /// A scan's up-sweep whose stride is a local doubled at the end of each step
    /// (`offset *= 2;`), while the guard halves the lanes: the worst step is 16-way.
    #[test]
    fn a_stride_doubled_in_the_loop_body_follows_the_steps() {
        check_messages(
            RULE,
            r#"
__global__ void upsweep(float* d) {
  __shared__ float t[512];
  int tid = threadIdx.x;
  t[2 * tid] = d[2 * tid];
  t[2 * tid + 1] = d[2 * tid + 1];
  int offset = 1;
  for (int s = 256; s > 0; s >>= 1) {
    __syncthreads();
    if (tid < s) {
      int ai = offset * (2 * tid + 1) - 1;
      int bi = offset * (2 * tid + 2) - 1;
      t[bi] += t[ai];
    }
    offset *= 2;
  }
}
void run(float* d) { upsweep<<<1, 256>>>(d); }
"#,
            expect![[r#"
                warning: 16-way bank conflict: this update of `t` takes 16 wavefronts instead of 1 at the step where `offset` = 8, `s` = 32, because lanes of a warp hit 16 different words of one bank; over the 9 steps of the loop over `s` (`s >>= 1`) warp 0 takes 61 wavefronts instead of 9 (2-way at the first step); the lanes' stride comes from `offset * (2 * tid + 2)` (pitfall-bank-conflict#P7)
                warning: 16-way bank conflict: this load from `t` takes 16 wavefronts instead of 1 at the step where `offset` = 8, `s` = 32, because lanes of a warp hit 16 different words of one bank; over the 9 steps of the loop over `s` (`s >>= 1`) warp 0 takes 61 wavefronts instead of 10 (conflict-free at the first step); the lanes' stride comes from `offset * (2 * tid + 1)` (pitfall-bank-conflict#P7)
            "#]],
        );
    }

    /// The ragged tail of a loop over groups of four (`k = 4 * threadIdx.x`, the `else` of
    /// `k + 3 < len` inside `k < len`) holds `k` in a window of 3 values against the
    /// runtime `len`: at most one lane enters it, and one lane has no conflict. A window of
    /// 7 values holds at most two lanes: fewer than the warp, no figure for the warp.
    #[test]
    fn a_ragged_tail_at_most_one_lane_enters_has_no_conflict() {
        check(
            RULE,
            r#"
__global__ void prefix4(const float* in, float* out, int len) {
  __shared__ float tile[1024];
  for (int k = threadIdx.x * 4; k < len; k += blockDim.x * 4) {
    if (k + 3 < len) {
      tile[k] = in[k];
   // ^^^^^^^ warning: 4-way bank conflict: this store to `tile` takes 4 wavefronts instead of 1
    } else {
      float s = 0.f;
      for (int t = k; t < len; t++) {
        s += in[t];
        tile[t] = s;
      }
    }
  }
  for (int k = threadIdx.x * 4; k < len; k += blockDim.x * 4) {
    if (k + 7 >= len) {
      for (int t = k; t < len; t++) tile[t] = in[t];
    }
  }
  __syncthreads();
  for (int k = threadIdx.x; k < len; k += blockDim.x) out[k] = tile[k];
}
"#,
        );
    }

    /// A stride declared early and set again before the loop (`int stride = 1;` … `stride
    /// = n >> 1;`) enters the loop with the value set last, and follows the loop's steps
    /// from there: the GPU Gems down-sweep with its padded indices is conflict-free at
    /// every step. The up-sweep above, with its stride set again the same way, keeps its
    /// figures.
    #[test]
    fn a_stride_set_again_before_the_loop_enters_it_with_that_value() {
        check(
            RULE,
            r#"
__global__ void downsweep(unsigned* data) {
    extern __shared__ unsigned s[];
    const int t = threadIdx.x;
    const int n = blockDim.x;
    s[t + t / 32] = data[blockIdx.x * n + t];
    __syncthreads();
    int stride = 1;
    stride = n >> 1;
    for (int d = 1; d <= n >> 1; d <<= 1) {
        if (t < d) {
            int a = stride * (2 * t + 1) - 1;
            int b = a + stride;
            a += a / 32;
            b += b / 32;
            unsigned tmp = s[a];
            s[a] = s[b];
            s[b] = tmp + s[b];
        }
        stride >>= 1;
        __syncthreads();
    }
    data[blockIdx.x * n + t] = s[t + t / 32];
}
void launch(unsigned* d) { downsweep<<<8, 1024, (1024 + 32) * 4>>>(d); }
"#,
        );
        let upsweep = |set: &str| {
            format!(
                "__global__ void upsweep(float* d) {{\n  __shared__ float t[512];\n  int tid = threadIdx.x;\n  t[2 * tid] = d[2 * tid];\n  t[2 * tid + 1] = d[2 * tid + 1];\n  {set}\n  for (int s = 256; s > 0; s >>= 1) {{\n    __syncthreads();\n    if (tid < s) {{\n      int ai = offset * (2 * tid + 1) - 1;\n      int bi = offset * (2 * tid + 2) - 1;\n      t[bi] += t[ai];\n    }}\n    offset *= 2;\n  }}\n}}\nvoid run(float* d) {{ upsweep<<<1, 256>>>(d); }}\n"
            )
        };
        let once = crate::rules::testing::messages(RULE, &upsweep("int offset = 1;"));
        assert_eq!(once.len(), 2, "{once:#?}");
        assert_eq!(
            crate::rules::testing::messages(RULE, &upsweep("int offset = 64;\n  offset = 1;")),
            once
        );
    }

    /// A tree loop whose trip the file fixes is unrolled, and at the step where the
    /// stride is one element the two reads are adjacent: ptxas merges them into one
    /// `LDS.64` (SASS of nvcc 13.5, sm_90), conflict-free, counted at the plain load; the
    /// update is left with its store, a 2-way `STS` at that step. With a runtime bound
    /// (`blockDim.x`) the loop stays rolled and the step keeps two 2-way loads.
    #[test]
    fn an_unrolled_tree_step_merges_adjacent_reads() {
        check_messages(
            RULE,
            r#"
__global__ void wide(float* out) {
  __shared__ float w[1024];
  unsigned tid = threadIdx.x;
  for (unsigned k = tid; k < 1024; k += 32) w[k] = out[k];
  __syncthreads();
  for (unsigned s = 1; s < 1024; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < 1024) w[index] += w[index + s];
    __syncthreads();
  }
  out[tid] = w[tid];
}
__global__ void rolled(float* out) {
  __shared__ float r[1024];
  unsigned tid = threadIdx.x;
  r[tid] = out[tid];
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < blockDim.x) r[index] += r[index + s];
    __syncthreads();
  }
  out[tid] = r[tid];
}
void run(float* out) {
  wide<<<1, 32>>>(out);
  rolled<<<1, 1024>>>(out);
}
"#,
            expect![[r#"
                warning: 32-way bank conflict: this update of `w` takes 32 wavefronts instead of 1 at the step where `s` = 16, because lanes of a warp hit 32 different words of one bank; over the 10 steps of the loop over `s` (`s <<= 1`) warp 0 takes 93 wavefronts instead of 10 (2-way at the first step); the lanes' stride comes from `2 * s * tid` (pitfall-bank-conflict#P7)
                warning: 32-way bank conflict: this load from `w` takes 32 wavefronts instead of 1 at the step where `s` = 16, because lanes of a warp hit 32 different words of one bank; over the 10 steps of the loop over `s` (`s <<= 1`) warp 0 takes 93 wavefronts instead of 11 (conflict-free at the first step); the lanes' stride comes from `2 * s * tid` (pitfall-bank-conflict#P7)
                warning: 32-way bank conflict: this update of `r` takes 32 wavefronts instead of 1 at the step where `s` = 16, because lanes of a warp hit 32 different words of one bank; over the 10 steps of the loop over `s` (`s <<= 1`) warp 0 takes 93 wavefronts instead of 10 (2-way at the first step); the lanes' stride comes from `2 * s * tid` (pitfall-bank-conflict#P7)
                warning: 32-way bank conflict: this load from `r` takes 32 wavefronts instead of 1 at the step where `s` = 16, because lanes of a warp hit 32 different words of one bank; over the 10 steps of the loop over `s` (`s <<= 1`) warp 0 takes 93 wavefronts instead of 10 (2-way at the first step); the lanes' stride comes from `2 * s * tid` (pitfall-bank-conflict#P7)
            "#]],
        );
    }

    /// A tree loop whose bound is a kernel parameter has no known trip: the model holds
    /// the first step, as for any loop.
    #[test]
    fn a_tree_loop_of_runtime_length_keeps_its_first_step() {
        check_messages(
            RULE,
            r#"
__global__ void reduce(float* d, unsigned n) {
  __shared__ float r[1024];
  unsigned tid = threadIdx.x;
  r[tid] = d[tid];
  __syncthreads();
  for (unsigned s = 1; s < n; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < 1024) r[index] += r[index + s];
    __syncthreads();
  }
  d[tid] = r[tid];
}
void run(float* d, unsigned n) { reduce<<<1, 512>>>(d, n); }
"#,
            expect![[r#"
                hint: 2-way bank conflict: this update of `r` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (at the first step of the loop over `s`, the only one the model holds: the stride changes each step, so later steps may conflict more); the lanes' stride comes from `2 * s * tid` (pitfall-bank-conflict#P5)
                hint: 2-way bank conflict: this load from `r` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (at the first step of the loop over `s`, the only one the model holds: the stride changes each step, so later steps may conflict more); the lanes' stride comes from `2 * s * tid` (pitfall-bank-conflict#P5)
            "#]],
        );
    }

    /// With no launch fixing the block, a degree that changes with `blockDim.x` is a
    /// hint stating the value assumed (the coalescing rule assumes the same).
    #[test]
    fn a_degree_resting_on_an_unfixed_block_is_a_hint() {
        check_messages(
            RULE,
            r#"
__global__ void fill(const float* in, float* out) {
  __shared__ float buf[2048];
  int per = 2048 / blockDim.x;
  int base = blockDim.x * blockIdx.x + threadIdx.x * per;
  for (int j = 0; j < per; ++j) buf[threadIdx.x * per + j] = in[base + j];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x * 7) & 2047];
}
void run(const float* in, float* out, int n) {
  for (int t = 32; t <= 512; t *= 2) fill<<<n / t, t>>>(in, out);
}
"#,
            expect![[r#"
                hint: 8-way bank conflict: this store to `buf` takes 8 wavefronts instead of 1, because lanes of a warp hit 8 different words of one bank (assuming `blockDim.x` = 256: no launch of `fill` fixes its block, and the figure depends on it); the lanes' stride comes from `threadIdx.x * per` (pitfall-bank-conflict#P1)
            "#]],
        );
    }

    /// A thread's walk along its own row in a loop whose trip count is known only at run
    /// time: nvcc unrolls it in part and fuses the reads into `LDS.64`/`LDS.128` (rows of
    /// 64 floats, `j < k_size` under `#pragma unroll`), so the scalar 32-way degree is an
    /// upper bound: a hint that says so (a constant trip count is modelled as merged). A
    /// loop that stores back to the row stays scalar (`LDS` and `STS` in SASS): a warning.
    #[test]
    fn a_row_walk_of_a_runtime_length_is_an_upper_bound() {
        check(
            RULE,
            r#"
__global__ void rowmax(const float* in, float* out, int k_size, int w) {
    __shared__ float s[64][64];
    int i = threadIdx.x;
    for (int j = 0; j < 64; ++j) s[j][i] = in[j * 64 + i];
    __syncthreads();
    float m = -1e30f;
#pragma unroll
    for (int j = 0; j < k_size; j++) m = fmaxf(m, s[i][j]);
                                               // ^^^^^^^ hint: 32-way bank conflict: this load from `s` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (at most: nvcc unrolls the loop only in part, its trip count being known only at run time
    for (int j = 0; j < k_size; j++) s[i][j] = expf(s[i][j] - m);
                                  // ^^^^^^^ warning: 32-way bank conflict: this store to `s`
                                                 // ^^^^^^^ warning: 32-way bank conflict: this load from `s`
    out[i] = m;
}
void run(const float* in, float* out, int k) { rowmax<<<1, 64>>>(in, out, k, 64); }
"#,
        );
    }

    /// A thread's sequential scan over its own four words (`buf[idx] += buf[idx - 1]` over
    /// `i`, `idx = t * 4 + i`): each step reads what the step before stored, and nvcc keeps
    /// that value in a register and fuses what is left into `LDS.64`/`LDS.128` differently
    /// with the guard and the buffer (SASS: `LDS.64`, `LDS`, `LDS`, `LDS.64` under `if (idx
    /// < n)` in an `extern` buffer; one `LDS.128` without the guard). The scalar 4-way is an
    /// upper bound: a hint that says so. The loop that only stores each element once keeps
    /// its warning (four predicated `STS`).
    #[test]
    fn a_thread_scan_over_its_own_words_is_an_upper_bound() {
        check(
            RULE,
            r#"
__global__ void section_scan(const float* x, float* y, unsigned n) {
    extern __shared__ float buf[];
    for (unsigned i = 0; i < 4; i++) {
        unsigned idx = threadIdx.x * 4 + i;
        if (idx < n) buf[idx] = x[idx];
                  // ^^^^^^^^ warning: 4-way bank conflict: this store to `buf`
    }
    __syncthreads();
    for (unsigned i = 1; i < 4; i++) {
        unsigned idx = threadIdx.x * 4 + i;
        if (idx < n) buf[idx] += buf[idx - 1];
                  // ^^^^^^^^ hint: 4-way bank conflict: this update of `buf` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank (at most: a step of the unrolled loop reads what an earlier step of the same thread stored; nvcc keeps such values in registers and fuses the rest into 8- or 16-byte loads or stores, whose degree is lower)
                              // ^^^^^^^^^^^^ hint: 4-way bank conflict: this load from `buf` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank (at most: a step of the unrolled loop reads
    }
}
void run(const float* x, float* y, unsigned n) { section_scan<<<1, 256, 4096>>>(x, y, n); }
"#,
        );
    }

    /// Under `if (c)` with `c` loaded from shared memory at each lane's own slot, which
    /// lanes store is data: the 4-way degree of the full warp is an assumption, a hint
    /// that states it. An equality (`c == 3`) evidently leaves part of the warp idle, as
    /// `lane == src` does: silent. A value loaded at one address per warp (`cnt[t / 32]`)
    /// is the same for every lane, and a guard on the thread index is evaluated as before.
    #[test]
    fn a_guard_on_loaded_data_is_a_hint_that_assumes_the_whole_warp() {
        check(
            RULE,
            r#"
__global__ void avg(const int* members, float* out) {
  __shared__ int cnt[128];
  __shared__ float acc[128 * 4];
  int t = threadIdx.x;
  cnt[t] = members[t];
  __syncthreads();
  int c = cnt[t];
  if (c) {
    acc[t * 4] = 1.0f / c;
 // ^^^^^^^^^^ hint: 4-way bank conflict: this store to `acc` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank (a hint only: assuming every lane of the warp passes `c`, which depends on data loaded at run time)
  }
  if (cnt[t] > 40 && t < 64) out[t] = acc[t * 4 + 1];
                                   // ^^^^^^^^^^^^^^ hint: 4-way bank conflict: this load from `acc` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank (a hint only: assuming every lane of the warp passes `cnt[t] > 40 && t < 64`
  if (c == 3) acc[t * 4] = 0.0f;
  int w = cnt[t / 32];
  if (w > 0) acc[t * 4 + 2] = 2.0f;
          // ^^^^^^^^^^^^^^ warning: 4-way bank conflict
  if (t < 64) acc[t * 4 + 3] = 3.0f;
           // ^^^^^^^^^^^^^^ warning: 4-way bank conflict
}
void run(const int* m, float* o) { avg<<<1, 128>>>(m, o); }
"#,
        );
    }

    #[test]
    fn a_launch_through_a_lambda_gives_the_block() {
        // `run` takes the kernel as an `auto` parameter; its call passes a 16×16 block,
        // so a warp is 16 x-lanes by 2 rows: 16 lanes on one bank, not 32.
        check(
            RULE,
            r#"
__global__ void cols(const float* in, float* out) {
  __shared__ float t[16][32];
  int tx = threadIdx.x, ty = threadIdx.y;
  t[tx][ty * 2] = in[ty * 16 + tx];
//^^^^^^^^^^^^^ warning: 16-way bank conflict
  __syncthreads();
  out[ty * 16 + tx] = t[ty][tx];
                   // ^^^^^^^^^ hint: 2-way bank conflict
}
int main() {
  float *in, *out;
  auto run = [&](auto kernel, dim3 block) { kernel<<<1, block>>>(in, out); };
  run(cols, dim3(16, 16));
}
"#,
        );
    }

    #[test]
    fn a_value_loaded_by_an_if_condition_is_not_loaded_again() {
        // The condition's load runs in every lane that reaches the `if` (not only those
        // that pass it) and leaves `s[t * 32]` in a register for the branch and after.
        check(
            RULE,
            r#"
__global__ void k(float* out) {
  __shared__ float s[32 * 32];
  int t = threadIdx.x;
  s[t] = out[t];
  __syncthreads();
  float x = 0.f;
  if (s[t * 32] > 0.f) x = s[t * 32];
   // ^^^^^^^^^ warning: 32-way bank conflict
  out[t] = x + s[t * 32];
}
void run(float* o) { k<<<1, 32>>>(o); }
"#,
        );
    }

    #[test]
    fn a_store_the_thread_overwrites_is_not_made() {
        // The first store is read back as its own value and overwritten before any
        // barrier: nvcc keeps the value in a register and stores once, at the second.
        // The loop then only stores, and its 16 stores merge: nvcc 13.5 `-arch=sm_90 -O3`
        // gives four `STS.128` (4-way at a 64-byte stride). With a barrier between, both
        // stores are made.
        check(
            RULE,
            r#"
__global__ void prefix(const float* in, float* out) {
  __shared__ float buf[64 * 16];
  int t = threadIdx.x;
  float run = 0.f;
  for (int k = 0; k < 16; ++k) {
    buf[t * 16 + k] = in[t * 16 + k];
    run += buf[t * 16 + k];
    buf[t * 16 + k] = run;
 // ^^^^^^^^^^^^^^^ warning: 4-way bank conflict: this store to `buf` takes 16 wavefronts instead of 4
  }
  __syncthreads();
  buf[t * 16] = in[t];
//^^^^^^^^^^^ warning: 16-way bank conflict
  __syncthreads();
  buf[t * 16] = out[buf[(t + 1) % 64 * 16]];
//^^^^^^^^^^^ warning: 16-way bank conflict
                 // ^^^^^^^^^^^^^^^^^^^^^^ warning: 16-way bank conflict
  out[t] = buf[t];
}
void run(const float* i, float* o) { prefix<<<1, 64>>>(i, o); }
"#,
        );
    }

    /// A thread's row of eight floats stored, transformed and transformed again in three
    /// unrolled loops with no barrier, then its first element read: nvcc 13.5
    /// `-arch=sm_90 -O3` keeps the row in registers and issues two `STS.128` at the last
    /// loop and nothing else (the earlier stores are overwritten, the loads served from
    /// registers), 2-way at a 32-byte stride.
    #[test]
    fn a_row_kept_in_registers_across_unrolled_loops_is_stored_once() {
        check_messages(
            RULE,
            r#"
__global__ void scale_exp(const float* a, float* o) {
  __shared__ float sc[32 * 8];
  int t = threadIdx.x;
  for (int k = 0; k < 8; ++k) sc[t * 8 + k] = a[t * 8 + k];
  for (int k = 0; k < 8; ++k) sc[t * 8 + k] = sc[t * 8 + k] * 2.f;
  for (int k = 0; k < 8; ++k) sc[t * 8 + k] = __expf(sc[t * 8 + k]);
  o[t] = sc[t * 8];
}
void go(const float* a, float* o) { scale_exp<<<1, 32>>>(a, o); }
"#,
            expect![[r#"
                hint: 2-way bank conflict: this store to `sc` takes 8 wavefronts instead of 4, because lanes of a warp hit 2 different words of one bank; the lanes' stride comes from `t * 8` (pitfall-bank-conflict#P4)
            "#]],
        );
    }

    /// A softmax over a thread's own row of 32 floats: `fmaxf` and `__expf` weigh as
    /// operators in the unroller's budget, so both loops are unrolled in full and merged
    /// (nvcc 13.5 `-arch=sm_90 -O3`: eight `LDS.128` for the maximum, eight `STS.128` for
    /// the exponentials, whose loads are the maximum's values kept in registers), 8-way at
    /// a 128-byte stride.
    #[test]
    fn cheap_math_calls_keep_a_row_loop_unrolled_and_merged() {
        check_messages(
            RULE,
            r#"
__global__ void row_softmax(const float* in, float* out) {
  __shared__ float s[32 * 32];
  int t = threadIdx.x;
  for (int x = 0; x < 32; ++x) s[x * 32 + t] = in[x * 32 + t];
  __syncthreads();
  float m = 0.f;
  for (int x = 0; x < 32; ++x) m = fmaxf(m, s[t * 32 + x]);
  for (int x = 0; x < 32; ++x) s[t * 32 + x] = __expf(s[t * 32 + x] - m);
  __syncthreads();
  out[t] = s[t];
}
void go(const float* in, float* out) { row_softmax<<<1, 32>>>(in, out); }
"#,
            expect![[r#"
                warning: 8-way bank conflict: this load from `s` takes 32 wavefronts instead of 4, because lanes of a warp hit 8 different words of one bank; the lanes' stride comes from `t * 32` (pitfall-bank-conflict#P4)
                warning: 8-way bank conflict: this store to `s` takes 32 wavefronts instead of 4, because lanes of a warp hit 8 different words of one bank; the lanes' stride comes from `t * 32` (pitfall-bank-conflict#P4)
            "#]],
        );
    }

    #[test]
    fn a_constant_written_as_arithmetic_keeps_the_walk_aligned() {
        // `kb * (GROUP / 4)` is `kb * 8`: each thread's 8 consecutive ints start 32 bytes
        // apart, and nvcc reads them as two `LDS.128` (8-way, 32 wavefronts for 4).
        check(
            RULE,
            r#"
#define GROUP 32
__global__ void walk(const int* src, int* dst) {
  __shared__ int rows[32 * 64];
  for (int i = threadIdx.x; i < 32 * 64; i += blockDim.x) rows[i] = src[i];
  __syncthreads();
  int sum = 0;
#pragma unroll
  for (int kb = 0; kb < 8; kb++) {
    const int base = kb * (GROUP / 4);
#pragma unroll
    for (int q = 0; q < 8; q++) sum += rows[threadIdx.x * 64 + base + q] * (q + 1);
                                    // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: 8-way bank conflict: this load from `rows` takes 32 wavefronts instead of 4
  }
  dst[blockIdx.x * 32 + threadIdx.x] = sum;
}
void run(const int* s, int* d) { walk<<<8, 32>>>(s, d); }
"#,
        );
    }

    #[test]
    fn iterations_some_threads_skip_are_not_merged() {
        // `per` is a local holding 4: the loop runs 4 times. Where each iteration may be
        // skipped (`continue`, a guard on the element), nvcc keeps four scalar `LDS`
        // (4-way at a 16-byte lane stride); without them it reads one `LDS.128`
        // (conflict-free).
        check(
            RULE,
            r#"
__global__ void tail(const float* x, float* y, int n) {
  __shared__ float s[1024];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  __syncthreads();
  unsigned per = 1024 / 256;
  for (unsigned i = 0; i < per; ++i) {
    unsigned l = t * per + i;
    if (l >= 1024) continue;
    unsigned g = blockIdx.x * 1024 + l;
    if (g < n) y[g] = s[l];
                   // ^^^^ warning: 4-way bank conflict
  }
}
void run(const float* x, float* y, int n) { tail<<<4, 256>>>(x, y, n); }
"#,
        );
        check(
            RULE,
            r#"
__global__ void tail(const float* x, float* y) {
  __shared__ float s[1024];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  __syncthreads();
  unsigned per = 1024 / 256;
  float acc = 0.f;
  for (unsigned i = 0; i < per; ++i) acc += s[t * per + i];
  y[t] = acc;
}
void run(const float* x, float* y) { tail<<<4, 256>>>(x, y); }
"#,
        );
    }
}
