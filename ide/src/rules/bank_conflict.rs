//! `bank-conflict`: a `__shared__` access whose lanes hit one bank in several words.
//!
//! The lane byte offsets of warp 0 go through the bank model (`kernaut_gpu::banks`): a
//! warning from a 4-way conflict, a hint at 2- and 3-way, nothing for broadcasts. The
//! block shape comes from the file's launches of the kernel; without one, `threadIdx.x`
//! is taken to run over the lanes. An index whose conflict depends on a value the file
//! does not show (a kernel parameter in the stride) is left alone.
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
use std::hash::{Hash, Hasher};

use kernaut_gpu::banks::{analyze, AccessKind as BankKind, AccessWidth, WarpAccess};
use kernaut_syntax::{AccessKind, Axis, EnclosingKind, IndexExpr, SharedAccess, SharedDecl};

use super::{partial_warp, Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;
use crate::reports::{
    assumed_defaults, launched_instantiations, offset_in, FxHashMap as HashMap, FxHasher,
    Instantiation,
};

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

/// The block shape used to map lanes to thread indices; `None` where unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Shape([Option<i64>; 3]);

/// Values tried for things that are the same across the warp but unknown here.
const UNIFORM_SAMPLES: [i64; 4] = [0, 1, 5, 32];
const BLOCK_X_SAMPLES: [i64; 4] = [32, 64, 128, 256];
const BLOCK_YZ_SAMPLES: [i64; 4] = [1, 2, 4, 8];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cost {
    degree: u32,
    wavefronts: u32,
    ideal: u32,
}

/// [`access_cost`] results of one run, by what they depend on: the offset, the access
/// width, whether it loads, and the block shape. Padding tries many layouts for each
/// conflict and generated or unrolled code repeats the same offsets, so most costs are
/// asked for more than once. Entries are bucketed by the hash of a borrowed key, so a hit
/// clones nothing.
#[derive(Default)]
struct CostCache(RefCell<HashMap<u64, Vec<CostEntry>>>);

type CostKey = (IndexExpr, Option<u64>, bool, Shape);
type CostEntry = (CostKey, Option<Cost>);

impl CostCache {
    fn cost(&self, a: &SharedAccess, offset: &IndexExpr, shape: Shape) -> Option<Cost> {
        let load = a.kind == AccessKind::Load;
        let hash = {
            let mut h = FxHasher::default();
            (offset, a.width, load, shape).hash(&mut h);
            h.finish()
        };
        let hit = |k: &CostKey| k.0 == *offset && k.1 == a.width && k.2 == load && k.3 == shape;
        if let Some(bucket) = self.0.borrow().get(&hash) {
            if let Some((_, c)) = bucket.iter().find(|(k, _)| hit(k)) {
                return *c;
            }
        }
        let cost = access_cost(a, offset, shape);
        self.0
            .borrow_mut()
            .entry(hash)
            .or_default()
            .push(((offset.clone(), a.width, load, shape), cost));
        cost
    }
}

/// What one run shares between accesses: the costs, the accesses of each array in each
/// function, the block shape of each kernel, and the cost of each access under each
/// padding tried.
struct Run<'c, 'a> {
    ctx: &'c RuleContext<'a>,
    costs: CostCache,
    /// Indices into the accesses, by (array, function), in document order.
    groups: HashMap<(&'c str, Option<&'c str>), Vec<usize>>,
    /// The block shapes of the launches of each kernel, in document order.
    launches: HashMap<&'c str, Vec<Option<[i64; 3]>>>,
    shapes: RefCell<HashMap<Option<&'c str>, Shape>>,
    /// The cost of each access (by index) as written, under its kernel's block shape.
    base: RefCell<HashMap<usize, Option<Cost>>>,
    /// [`static_bytes_by_function`], built on the first ask.
    static_bytes: OnceCell<HashMap<Option<&'c str>, u64>>,
    /// The cost of an access re-laid out, by what it depends on: its indices, width and
    /// kind (through the hash in `index_hashes` and the position of an access with the
    /// same ones), the dimensions, the element size and the shape. Repeated kernels ask
    /// for the same layouts of equal indices.
    relaid: RefCell<HashMap<u64, Vec<RelaidEntry>>>,
    /// The hash of each access's (indices, width, kind), by position.
    index_hashes: RefCell<HashMap<usize, u64>>,
    /// [`Run::instantiated`] by access.
    instances: RefCell<HashMap<usize, Option<(IndexExpr, Instantiation)>>>,
}

/// A [`Run::relaid_cost`] answer: the position of the access it was computed for, the
/// dimensions, the element size, the shape and the cost.
type RelaidEntry = (usize, Vec<u64>, u64, Shape, Option<Cost>);

impl<'c, 'a> Run<'c, 'a> {
    fn new(ctx: &'c RuleContext<'a>, accesses: &'c [SharedAccess]) -> Self {
        let mut groups: HashMap<(&str, Option<&str>), Vec<usize>> = HashMap::default();
        for (i, a) in accesses.iter().enumerate() {
            groups
                .entry((a.array.as_str(), a.function.as_deref()))
                .or_default()
                .push(i);
        }
        let mut launches: HashMap<&str, Vec<Option<[i64; 3]>>> = HashMap::default();
        for l in &ctx.facts.launches {
            launches
                .entry(l.kernel.as_str())
                .or_default()
                .push(l.block.value);
        }
        Run {
            ctx,
            costs: CostCache::default(),
            groups,
            launches,
            shapes: RefCell::default(),
            base: RefCell::default(),
            static_bytes: OnceCell::new(),
            relaid: RefCell::default(),
            index_hashes: RefCell::default(),
            instances: RefCell::default(),
        }
    }

    /// The block shape of the kernel `function`, when every launch in the file agrees on
    /// it.
    fn block_shape(&self, function: Option<&'c str>) -> Shape {
        if let Some(s) = self.shapes.borrow().get(&function) {
            return *s;
        }
        let shape = block_shape(function.and_then(|f| self.launches.get(f)));
        self.shapes.borrow_mut().insert(function, shape);
        shape
    }

    /// Static shared memory of the function that declares `decl` (and file-scope
    /// buffers). Summed for every function at once: summing the file's declarations for
    /// each conflicting one made the rule quadratic in its findings (40,000 one-line
    /// kernels with a conflict each: 1.6 billion name comparisons).
    fn static_bytes(&self, decl: &'c SharedDecl) -> u64 {
        let table = self
            .static_bytes
            .get_or_init(|| static_bytes_by_function(self.ctx));
        let file_scope = table.get(&None).copied().unwrap_or(0);
        match decl.function.as_deref() {
            None => file_scope,
            function => file_scope + table.get(&function).copied().unwrap_or(0),
        }
    }

    /// The cost of access `i` of `all` with its array's dimensions `dims` and element size
    /// `elem` ([`relaid`]), under `shape`.
    fn relaid_cost(
        &self,
        all: &[SharedAccess],
        i: usize,
        dims: &[u64],
        elem: u64,
        shape: Shape,
    ) -> Option<Cost> {
        let o = &all[i];
        let load = o.kind == AccessKind::Load;
        let index_hash = *self.index_hashes.borrow_mut().entry(i).or_insert_with(|| {
            let mut h = FxHasher::default();
            (&o.indices, o.width, load).hash(&mut h);
            h.finish()
        });
        let key = {
            let mut h = FxHasher::default();
            (index_hash, dims, elem, shape).hash(&mut h);
            h.finish()
        };
        let same = |j: usize| {
            let p = &all[j];
            j == i
                || (p.width == o.width
                    && (p.kind == AccessKind::Load) == load
                    && p.indices == o.indices)
        };
        if let Some(bucket) = self.relaid.borrow().get(&key) {
            if let Some((.., c)) = bucket
                .iter()
                .find(|(j, d, e, s, _)| d == dims && *e == elem && *s == shape && same(*j))
            {
                return *c;
            }
        }
        let c = relaid(o, dims, elem).and_then(|off| self.costs.cost(o, &off, shape));
        self.relaid
            .borrow_mut()
            .entry(key)
            .or_default()
            .push((i, dims.to_vec(), elem, shape, c));
        c
    }

    /// The byte offset of access `i` (`a`) in the instantiation of its kernel that the
    /// file launches with the worst conflict under `shape` (the first on a tie, as the
    /// hover's model picks), when the file launches other than the template defaults.
    fn instantiated(
        &self,
        i: usize,
        a: &SharedAccess,
        shape: Shape,
    ) -> Option<(IndexExpr, Instantiation)> {
        if let Some(v) = self.instances.borrow().get(&i) {
            return v.clone();
        }
        let instances = a
            .function
            .as_deref()
            .map(|k| launched_instantiations(self.ctx.facts, k))
            .unwrap_or_default();
        let mut best: Option<(IndexExpr, Instantiation, u32)> = None;
        for inst in instances {
            let offset = offset_in(self.ctx.facts, a, &inst);
            let degree = self.costs.cost(a, &offset, shape).map_or(0, |c| c.degree);
            if best.as_ref().is_none_or(|(.., d)| degree > *d) {
                best = Some((offset, inst, degree));
            }
        }
        let v = best.map(|(o, inst, _)| (o, inst));
        self.instances.borrow_mut().insert(i, v.clone());
        v
    }

    /// The cost of access `i` of `all` as written, under `shape`: always the block shape
    /// of its own kernel, so the index is the key.
    fn base_cost(&self, all: &[SharedAccess], i: usize, shape: Shape) -> Option<Cost> {
        if let Some(c) = self.base.borrow().get(&i) {
            return *c;
        }
        let a = &all[i];
        let c = match self.instantiated(i, a, shape) {
            Some((offset, _)) => self.costs.cost(a, &offset, shape),
            None => self.costs.cost(a, &a.byte_offset, shape),
        };
        self.base.borrow_mut().insert(i, c);
        c
    }
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let accesses = ctx.shared_accesses();
    let run = Run::new(ctx, accesses);
    let cache = &run.costs;
    for (i, a) in accesses.iter().enumerate() {
        if a.kind == AccessKind::AddressOf || !a.byte_offset.depends_on_thread() {
            continue;
        }
        let shape = run.block_shape(a.function.as_deref());
        let Some(cost) = run.base_cost(accesses, i, shape) else {
            continue;
        };
        if cost.degree < 2 {
            continue;
        }
        // Inside `if (lane == 0)` or `if (lane < 10)` only part of the warp accesses:
        // the model's full warp would overstate the conflict.
        if ctx.enclosing(a.range.start).iter().any(|e| match &e.kind {
            EnclosingKind::If {
                condition,
                thread_dependent: true,
                ..
            } => partial_warp(condition),
            _ => false,
        }) {
            continue;
        }
        // Without a known block shape `threadIdx.x` is taken to span the warp; when the
        // index also uses `.y` or `.z`, narrower blocks put several rows in one warp, so
        // the conflict must hold for those shapes too.
        let unknown_shape = shape.0 == [None; 3];
        let instance = run.instantiated(i, a, shape);
        let offset = instance.as_ref().map_or(&a.byte_offset, |(o, _)| o);
        if unknown_shape && (mentions_rows(offset) || two_dimensional(ctx, a)) {
            let holds = [16, 8, 4].iter().all(|&bx| {
                let narrow = Shape([Some(bx), Some(32 / bx), None]);
                cache.cost(a, offset, narrow).is_some_and(|c| c.degree >= 2)
            });
            if !holds {
                continue;
            }
        }
        let severity = if cost.degree >= 4 {
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
            "{}-way bank conflict: this {what} `{}` takes {} wavefronts instead of {}, because lanes of a warp hit {} different words of one bank",
            cost.degree, a.array, cost.wavefronts, cost.ideal, cost.degree
        );
        if let Some((_, inst)) = &instance {
            message.push_str(&format!(" (in {})", inst.phrase()));
        }
        if let Some(defaults) = assumed_defaults(ctx.facts, a).filter(|_| instance.is_none()) {
            message.push_str(&format!(
                " (with the template defaults `{defaults}`: no launch in the file instantiates `{}`)",
                a.function.as_deref().unwrap_or_default()
            ));
        }
        if unknown_shape {
            message.push_str(&format!(
                " (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `{}` in the file gives its block)",
                a.function.as_deref().unwrap_or("this function")
            ));
        }
        let wide = a.width.is_some_and(|w| w >= 8);
        let mut wiki = if wide {
            "pitfall-bank-conflict#P4"
        } else {
            "pitfall-bank-conflict#P1"
        };
        let mut fixes = Vec::new();
        // The padding is worked out on the rows as written, not the instantiation's.
        let pad = if instance.as_ref().is_some_and(|(_, i)| !i.bound.is_empty()) {
            Padding::None
        } else {
            padding(&run, i, accesses, shape)
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
            Padding::None if cost.degree == 2 && !wide => {
                wiki = "pitfall-bank-conflict#P5";
            }
            Padding::None => {}
        }
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity,
            range: a.range.clone(),
            message,
            wiki: wiki.to_string(),
            fixes,
        });
    }
}

/// The block shape of a kernel from the block shapes of its launches, when every launch
/// in the file agrees on it.
fn block_shape(launches: Option<&Vec<Option<[i64; 3]>>>) -> Shape {
    let unknown = Shape([None; 3]);
    let Some(launches) = launches else {
        return unknown;
    };
    let mut shape = None;
    for &block in launches {
        match (shape, block) {
            (_, None) => return unknown,
            (None, Some(v)) => shape = Some(v),
            (Some(s), Some(v)) if s != v => return unknown,
            _ => {}
        }
    }
    shape.map_or(unknown, |[x, y, z]| Shape([Some(x), Some(y), Some(z)]))
}

/// Whether the function around `a` uses `threadIdx.y` or `threadIdx.z`: its blocks may
/// be 2-D, with rows narrower than a warp.
fn two_dimensional(ctx: &RuleContext, a: &SharedAccess) -> bool {
    let Some(body) = ctx
        .facts
        .function_at(a.range.start)
        .and_then(|f| f.body_range.clone())
    else {
        return false;
    };
    ctx.text()
        .get(body)
        .is_some_and(|t| t.contains("threadIdx.y") || t.contains("threadIdx.z"))
}

/// Whether `e` depends on `threadIdx.y` or `threadIdx.z`.
fn mentions_rows(e: &IndexExpr) -> bool {
    match e {
        IndexExpr::ThreadIdx(Axis::Y | Axis::Z) => true,
        IndexExpr::Binary(a, _, b) => mentions_rows(a) || mentions_rows(b),
        IndexExpr::LoopVar { start, .. } => mentions_rows(start),
        _ => false,
    }
}

/// The cost of `offset` (bytes, as lowered) for warp 0, or `None` when it cannot be
/// modelled or depends on a value the file does not determine.
fn access_cost(a: &SharedAccess, offset: &IndexExpr, shape: Shape) -> Option<Cost> {
    let width = AccessWidth::from_bytes(u32::try_from(a.width?).ok()?)?;
    if offset.unknown_reason().is_some() {
        return None;
    }
    let kind = match a.kind {
        AccessKind::Load => BankKind::Load,
        _ => BankKind::Store,
    };
    let mut result: Option<Cost> = None;
    for sample in 0..UNIFORM_SAMPLES.len() {
        let mut worst: Option<Cost> = None;
        for iteration in 0..2 {
            let Some(cost) = warp_cost(offset, width, kind, shape, sample, iteration) else {
                continue;
            };
            if worst.is_none_or(|w| cost.degree > w.degree) {
                worst = Some(cost);
            }
        }
        let Some(worst) = worst else {
            continue;
        };
        // Without a conflict under the first sample there is nothing to report: either
        // every sample agrees, or the conflict depends on an unknown value.
        if result.is_none() && worst.degree < 2 {
            return Some(worst);
        }
        match result {
            None => result = Some(worst),
            Some(r) if r.degree != worst.degree => return None,
            _ => {}
        }
    }
    result
}

fn warp_cost(
    offset: &IndexExpr,
    width: AccessWidth,
    kind: BankKind,
    shape: Shape,
    sample: usize,
    iteration: i64,
) -> Option<Cost> {
    let [bx, by, bz] = shape.0;
    let bx_lanes = bx.unwrap_or(32).max(1);
    let by_lanes = by.unwrap_or(1).max(1);
    let mut addresses = [None; 32];
    for (lane, slot) in addresses.iter_mut().enumerate() {
        let tid = lane as i64;
        let leaf = |e: &IndexExpr| {
            leaf_value(
                e,
                tid,
                [bx_lanes, by_lanes],
                [bx, by, bz],
                sample,
                iteration,
            )
        };
        let v = offset.eval(&leaf)?;
        *slot = Some(u32::try_from(v).ok()?);
    }
    let report = analyze(&WarpAccess {
        addresses,
        width,
        kind,
    })
    .ok()?;
    Some(Cost {
        degree: report.conflict_degree,
        wavefronts: report.wavefronts,
        ideal: report.wavefronts - report.bank_conflicts,
    })
}

fn leaf_value(
    e: &IndexExpr,
    tid: i64,
    lanes: [i64; 2],
    block: [Option<i64>; 3],
    sample: usize,
    iteration: i64,
) -> Option<i64> {
    let [bx, by] = lanes;
    match e {
        IndexExpr::ThreadIdx(Axis::X) => Some(tid % bx),
        IndexExpr::ThreadIdx(Axis::Y) => Some((tid / bx) % by),
        IndexExpr::ThreadIdx(Axis::Z) => Some(tid / (bx * by)),
        IndexExpr::Lane => Some(tid % 32),
        IndexExpr::BlockDim(axis) => {
            let (i, samples) = match axis {
                Axis::X => (0, &BLOCK_X_SAMPLES),
                Axis::Y => (1, &BLOCK_YZ_SAMPLES),
                Axis::Z => (2, &BLOCK_YZ_SAMPLES),
            };
            Some(block[i].unwrap_or(samples[sample]))
        }
        IndexExpr::Uniform(_) => Some(UNIFORM_SAMPLES[sample]),
        IndexExpr::LoopVar { start, step, .. } => {
            let start = start.eval(&|e| leaf_value(e, tid, lanes, block, sample, iteration))?;
            Some(start + iteration * step.unwrap_or(0))
        }
        _ => None,
    }
}

enum Padding {
    Fix(Fix),
    OverBudget { bytes: u64, limit: u64 },
    None,
}

/// The smallest padding of the inner dimension of `a`'s array that removes its conflict.
fn padding<'c>(run: &Run<'c, '_>, a_index: usize, all: &[SharedAccess], shape: Shape) -> Padding {
    let ctx = run.ctx;
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
    // Every access of the group is in `a`'s function, so under `a`'s block shape.
    let before: Vec<Option<Cost>> = same.iter().map(|&i| run.base_cost(all, i, shape)).collect();
    let max_pad = (128 / elem).max(1);
    for pad in 1..=max_pad {
        let mut padded = dims.clone();
        if let Some(last) = padded.last_mut() {
            *last += pad;
        }
        if needs_16 && (padded[padded.len() - 1] * elem) % 16 != 0 {
            continue;
        }
        let Some(mine) = run.relaid_cost(all, a_index, &padded, elem, shape) else {
            continue;
        };
        if mine.degree > 1 {
            continue;
        }
        let worse = same.iter().zip(&before).any(|(&i, b)| {
            let after = run.relaid_cost(all, i, &padded, elem, shape);
            match (b, after) {
                (Some(b), Some(a)) => a.degree > b.degree.max(1),
                _ => false,
            }
        });
        if worse {
            continue;
        }
        let extra = outer * pad * elem;
        let limit = u64::from(ctx.arch.limits().smem_per_block);
        let total = run.static_bytes(decl) + extra;
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

/// The static shared memory declared in each function (`None`: at file scope), in one
/// pass over the file's declarations.
fn static_bytes_by_function<'c>(ctx: &RuleContext<'c>) -> HashMap<Option<&'c str>, u64> {
    let mut table: HashMap<Option<&'c str>, u64> = HashMap::default();
    for d in &ctx.facts.shared {
        if let Some(b) = d.static_bytes {
            *table.entry(d.function.as_deref()).or_insert(0) += b;
        }
    }
    table
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
                warning: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `transpose` in the file gives its block) (pitfall-bank-conflict#P1)
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

    #[test]
    fn partial_warps_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float red[64];
    int lane = threadIdx.x % 32;
    if (lane < 10) {
        out[lane] = red[lane * 4];
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
                hint: 2-way bank conflict: this load from `buf` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` in the file gives its block) (pitfall-bank-conflict#P5)
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
        // 128 bytes), so it stays silent; `s[32 * tx]` conflicts under every shape.
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    __shared__ float s[4096];
    int tx = threadIdx.x, ty = threadIdx.y;
    out[ty] = s[2 * tx];
    out[ty] += s[32 * tx];
            // ^^^^^^^^^^ warning: 32-way bank conflict: this load from `s` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (assuming `threadIdx.x` runs over the warp
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
                warning: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` in the file gives its block); padding the rows would need 50688 bytes of static shared memory, past the 48 KB per-block limit, so swizzle the index instead (pitfall-bank-conflict#P2)
            "#]],
        );
    }
}
