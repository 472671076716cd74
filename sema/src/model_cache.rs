//! The bank and occupancy models run on their inputs alone, and their answers kept by
//! those inputs ([`ReportCache`]): the host owns one, below every feature that asks.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kernaut_gpu::banks::{self, AccessWidth, BankReport, WarpAccess};
use kernaut_gpu::expr::{Loops, Uniforms, Valuation};
use kernaut_gpu::occupancy::{occupancy, Occupancy, OccupancyInput};
use kernaut_gpu::Arch;
use kernaut_syntax::IndexExpr;

/// Values tried for the uniforms of an index; the report stands only if they all agree.
const UNIFORM_TRIALS: [i64; 4] = [1, 2, 3, 32];

/// What the bank model needs of an access besides its byte offset: the report depends
/// on nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BankShape {
    /// The bytes per lane.
    pub width: Option<u64>,
    /// Load or store.
    pub kind: banks::AccessKind,
    /// The block the lanes are laid out in.
    pub block: [u32; 3],
}

/// The bank model's answer for one `BankKey`.
#[derive(Debug)]
pub struct BankModel {
    /// The byte offset lowered for the model, when it can be.
    pub lowered: Option<LoweredText>,
    /// The byte address each lane of warp 0 touches.
    pub addresses: Vec<Option<i64>>,
    /// The model's answer, or why it has none.
    pub result: Result<BankReport, BankFailure>,
}

/// A lowered index as reports show it.
#[derive(Debug)]
pub struct LoweredText {
    /// The index as lowered.
    pub text: String,
    /// The loops held at one iteration (variable, value).
    pub held_loops: Vec<(String, String)>,
    /// The names taken as uniform over the warp.
    pub uniforms: Vec<String>,
}

/// Why an access cannot be modelled.
#[derive(Debug)]
pub enum BankFailure {
    /// The width is not known (the message names the array, which is not in the key).
    ElementSizeUnknown,
    /// Any other reason, as shown.
    Other(String),
}

/// Runs the bank model on the byte offset `index`, evaluated for warp 0 of the block by
/// the one warp valuation (loops at their first iteration, every uniform at one value).
/// Whether `lane` enters every counting loop of `index` at the valuation's iteration: a
/// loop variable whose constant end is known and that counts up starts below its end.
fn enters_loops(index: &IndexExpr, valuation: &Valuation<'_>, lane: usize) -> bool {
    !index.mentions(&|e| match e {
        IndexExpr::LoopVar {
            start,
            end: Some(end),
            step,
            stride,
            ..
        } if step.is_some_and(|s| s > 0) || (step.is_none() && stride.is_some()) => {
            start.depends_on_thread() && valuation.lane(start, lane).is_some_and(|v| v >= *end)
        }
        _ => false,
    })
}

fn model_bank(index: &IndexExpr, key: BankShape) -> BankModel {
    let mut out = BankModel {
        lowered: None,
        addresses: Vec::new(),
        result: Err(BankFailure::Other(String::new())),
    };
    if let Some(reason) = unmodelled(index) {
        out.result = Err(BankFailure::Other(reason));
        return out;
    }
    let (held, held_loops) = index.held_at_start();
    let uniforms = index.uniforms();
    out.lowered = Some(LoweredText {
        text: held.to_string(),
        held_loops,
        uniforms: uniforms.clone(),
    });
    let width = match key.width {
        None => {
            out.result = Err(BankFailure::ElementSizeUnknown);
            return out;
        }
        Some(w) => match u32::try_from(w).ok().and_then(AccessWidth::from_bytes) {
            Some(w) => w,
            None => {
                out.result = Err(BankFailure::Other(format!(
                    "a {w}-byte access is not one shared-memory instruction (1, 2, 4, 8 or 16 bytes)"
                )));
                return out;
            }
        },
    };
    if key.block.contains(&0) {
        out.result = Err(BankFailure::Other(format!(
            "block {}x{}x{} has no threads",
            key.block[0], key.block[1], key.block[2]
        )));
        return out;
    }
    let run = |uniform: i64| {
        run_bank(
            index,
            key,
            width,
            uniform,
            Loops::Iteration(0),
            (0, u32::MAX),
        )
    };
    match run(0) {
        Err(e) => out.result = Err(BankFailure::Other(e)),
        Ok((addresses, report)) => {
            out.addresses = addresses;
            if !uniforms.is_empty() {
                for t in UNIFORM_TRIALS {
                    if let Ok((_, other)) = run(t) {
                        if (other.conflict_degree, other.wavefronts)
                            != (report.conflict_degree, report.wavefronts)
                        {
                            out.result = Err(BankFailure::Other(format!(
                                "the conflicts depend on {}, which every lane shares but the file does not fix ({}-way at 0, {}-way at {t})",
                                uniforms
                                    .iter()
                                    .map(|u| format!("`{u}`"))
                                    .collect::<Vec<_>>()
                                    .join(", "),
                                report.conflict_degree,
                                other.conflict_degree
                            )));
                            return out;
                        }
                    }
                }
            }
            out.result = Ok(report);
        }
    }
    out
}

/// The bank model of `index` for the lanes of warp 0 in `lanes` (bit `i`: lane `i`),
/// with every uniform at `uniform` and the loops at `loops`: each lane's byte offset
/// and the report.
fn run_bank(
    index: &IndexExpr,
    key: BankShape,
    width: AccessWidth,
    uniform: i64,
    loops: Loops<'_>,
    (warp, lanes): (i64, u32),
) -> Result<(Vec<Option<i64>>, BankReport), String> {
    let valuation = Valuation {
        block: key.block.map(|d| Some(i64::from(d))),
        warp,
        sample: 0,
        uniforms: Uniforms::All(uniform),
        loops,
    };
    let mut values = valuation.warp_values(index).map_err(|e| e.to_string())?;
    // A lane whose loop variable starts at or past the loop's end never enters the
    // loop (`for (r = threadIdx.x; r < 8; r += blockDim.x)`): it issues nothing.
    for (lane, v) in values.iter_mut().enumerate() {
        if lanes & (1 << lane) == 0 || !enters_loops(index, &valuation, lane) {
            *v = None;
        }
    }
    let mut addresses = [None; banks::WARP_LANES];
    for (lane, v) in values.iter().enumerate() {
        if let Some(v) = v {
            let a = u32::try_from(*v)
                .map_err(|_| format!("lane {lane}: the byte offset {v} is outside the buffer"))?;
            addresses[lane] = Some(a);
        }
    }
    let report = banks::analyze(&WarpAccess {
        addresses,
        width,
        kind: key.kind,
    })
    .map_err(|e| e.to_string())?;
    Ok((values.to_vec(), report))
}

/// The bank model of `index` at one step of the loops that double or halve
/// ([`Loops::Scaled`]`(step)`), for the lanes in `lanes` of warp `warp` of the block:
/// each lane's byte offset and the report, the same for every value of the uniforms the
/// offset reads (else why not).
pub fn bank_at_step(
    index: &IndexExpr,
    key: BankShape,
    step: i64,
    (warp, lanes): (i64, u32),
) -> Result<(Vec<Option<i64>>, BankReport), String> {
    if let Some(reason) = unmodelled(index) {
        return Err(reason);
    }
    let width = key
        .width
        .and_then(|w| u32::try_from(w).ok())
        .and_then(AccessWidth::from_bytes)
        .ok_or_else(|| "the access width is not modelled".to_string())?;
    let run = |uniform| {
        run_bank(
            index,
            key,
            width,
            uniform,
            Loops::Scaled(step),
            (warp, lanes),
        )
    };
    let (addresses, report) = run(0)?;
    if !index.uniforms().is_empty() {
        for t in UNIFORM_TRIALS {
            if let Ok((_, other)) = run(t) {
                if (other.conflict_degree, other.wavefronts)
                    != (report.conflict_degree, report.wavefronts)
                {
                    return Err("the conflicts depend on a value every lane shares but the file does not fix".to_string());
                }
            }
        }
    }
    Ok((addresses, report))
}

/// Why `e` cannot be modelled: its first unknown part, named through the loop variable
/// whose start it is in.
fn unmodelled(e: &IndexExpr) -> Option<String> {
    match e {
        IndexExpr::Unknown(r) => Some(r.clone()),
        IndexExpr::Binary(a, _, b) => unmodelled(a).or_else(|| unmodelled(b)),
        IndexExpr::LoopVar { name, start, .. } => {
            unmodelled(start).map(|r| format!("the start of loop variable `{name}`: {r}"))
        }
        _ => None,
    }
}

/// The occupancy model's inputs, as a key (the model depends on nothing else).
type OccupancyKey = (Arch, [u32; 4], [Option<u32>; 3]);

/// The entries a [`ReportCache`] table holds before it starts again empty.
const CACHE_ENTRIES: usize = 1 << 14;

/// The bank and occupancy models' answers by their inputs. A host's snapshots share
/// one, and it outlives edits: accesses and kernels an edit does not change (and
/// repeated ones, such as the same index in several kernels) are modelled once.
#[derive(Debug, Default)]
pub struct ReportCache {
    /// By byte offset, then by the rest of the inputs (an offset is nearly always
    /// modelled with one shape; looking up by the offset alone needs no copy of it).
    banks: Mutex<FxHashMap<IndexExpr, BankModels>>,
    occupancy: Mutex<FxHashMap<OccupancyKey, Result<Occupancy, String>>>,
    /// Byte offsets split into core and constant, for the merged-access search, which
    /// compares each access with its neighbours.
    splits: Mutex<FxHashMap<IndexExpr, Arc<(IndexExpr, i64)>>>,
    /// Byte offsets at their loops' first iteration, split the same way.
    first_splits: Mutex<FxHashMap<IndexExpr, Arc<(IndexExpr, i64)>>>,
    /// The bytes a thread's access touches over its loops, by byte offset and then
    /// width: the merge and store-coverage questions list them for each neighbour.
    elements: Mutex<FxHashMap<IndexExpr, ElementsByWidth>>,
}

/// A thread's part of an array and the byte ranges past it that an access touches.
pub type ElementBytes = (IndexExpr, Vec<(i64, i64)>);

/// The listed bytes of one byte offset, by the access width.
type ElementsByWidth = Vec<(u64, Arc<Option<ElementBytes>>)>;

/// The models of one byte offset, by the rest of the inputs.
type BankModels = Vec<(BankShape, Arc<BankModel>)>;

pub use rustc_hash::FxHashMap;

/// Locks a cache table; a panic while it was held leaves it usable (every entry is
/// inserted whole).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `f(index)`, kept in `table` by `index`.
fn memo<T>(
    table: &Mutex<FxHashMap<IndexExpr, Arc<T>>>,
    index: &IndexExpr,
    f: impl FnOnce(&IndexExpr) -> T,
) -> Arc<T> {
    if let Some(s) = lock(table).get(index) {
        return s.clone();
    }
    let s = Arc::new(f(index));
    let mut table = lock(table);
    if table.len() >= CACHE_ENTRIES {
        table.clear();
    }
    table.insert(index.clone(), s.clone());
    s
}

impl ReportCache {
    /// `split(index)`, kept by `index`.
    pub fn split(
        &self,
        index: &IndexExpr,
        split: impl FnOnce(&IndexExpr) -> (IndexExpr, i64),
    ) -> Arc<(IndexExpr, i64)> {
        memo(&self.splits, index, split)
    }

    /// `split(index)` for `index` at its loops' first iteration, kept by `index`.
    pub fn first_split(
        &self,
        index: &IndexExpr,
        split: impl FnOnce(&IndexExpr) -> (IndexExpr, i64),
    ) -> Arc<(IndexExpr, i64)> {
        memo(&self.first_splits, index, split)
    }

    /// `list(index)`, the bytes a `width`-byte access at `index` touches, kept by both.
    pub fn element_bytes(
        &self,
        index: &IndexExpr,
        width: u64,
        list: impl FnOnce() -> Option<ElementBytes>,
    ) -> Arc<Option<ElementBytes>> {
        let found = lock(&self.elements)
            .get(index)
            .and_then(|v| v.iter().find(|(w, _)| *w == width).map(|(_, e)| e.clone()));
        if let Some(e) = found {
            return e;
        }
        let e = Arc::new(list());
        let mut table = lock(&self.elements);
        if table.len() >= CACHE_ENTRIES {
            table.clear();
        }
        table
            .entry(index.clone())
            .or_default()
            .push((width, e.clone()));
        e
    }

    /// The bank model of `index` on an array of `shape`, computed once.
    pub fn bank(&self, index: &IndexExpr, shape: BankShape) -> Arc<BankModel> {
        let found = lock(&self.banks)
            .get(index)
            .and_then(|v| v.iter().find(|(s, _)| *s == shape).map(|(_, m)| m.clone()));
        if let Some(m) = found {
            return m;
        }
        // Run the model unlocked: it may panic, and other threads may read meanwhile.
        let model = Arc::new(model_bank(index, shape));
        let mut table = lock(&self.banks);
        if table.len() >= CACHE_ENTRIES {
            table.clear();
        }
        let shapes = table.entry(index.clone()).or_default();
        if !shapes.iter().any(|(s, _)| *s == shape) {
            shapes.push((shape, model.clone()));
        }
        model
    }

    /// The occupancy at one configuration, computed once.
    pub fn occupancy(&self, arch: Arch, input: &OccupancyInput) -> Result<Occupancy, String> {
        let OccupancyInput {
            threads_per_block,
            regs_per_thread,
            static_smem,
            dynamic_smem,
            carveout,
            launch_bounds_max_threads,
            max_dynamic_smem,
        } = *input;
        let key = (
            arch,
            [
                threads_per_block,
                regs_per_thread,
                static_smem,
                dynamic_smem,
            ],
            [carveout, launch_bounds_max_threads, max_dynamic_smem],
        );
        if let Some(r) = lock(&self.occupancy).get(&key) {
            return r.clone();
        }
        let result = occupancy(arch, input).map_err(|e| e.to_string());
        let mut table = lock(&self.occupancy);
        if table.len() >= CACHE_ENTRIES {
            table.clear();
        }
        table.insert(key, result.clone());
        result
    }
}
