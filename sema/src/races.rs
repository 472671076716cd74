//! Data races, found by running each kernel's body for every thread of the blocks its
//! launches give: the barrier intervals of every access, and the pairs of threads that
//! touch one address in one interval with at least one write.
//!
//! Each kernel is run once per launch configuration the host code shows (block, grid and
//! the kernel arguments folded at the launch; at most [`MAX_CONFIGS`]), for every thread
//! of block 0 (and block 1 where the grid fixes more than one block, for global memory),
//! over the steps of [`SourceFile::body_steps`]: `if`s decided per thread from their
//! comparisons, `for` loops stepped from their lowered headers, each access's byte offset
//! evaluated for the thread as a lane of its warp by the one warp valuation
//! ([`Valuation`], as the bank and sector models evaluate it). A thread's *phase* counts the block barriers it has
//! passed (`__syncthreads()`, `block.sync()`, a device function of the file that
//! synchronises, `grid.sync()`), its warp phase the `__syncwarp()`s, its grid phase the
//! grid barriers. Two accesses race when two different threads touch the same bytes, one
//! writes, and nothing orders them: in one block, the same phase (and, in one warp, the
//! same warp phase); in different blocks, the same grid phase.
//!
//! What is not known stays silent: an access whose index the file does not determine, a
//! branch or loop the model cannot decide (its accesses are not used as evidence, and a
//! barrier inside one makes the kernel not modelled), threads that reach different numbers
//! of barriers. A value the file does not fix but that a race needs (a kernel parameter,
//! the grid) is sampled, and the race is reported with that assumption named
//! ([`Race::assumption`]) so that the rules give a hint, not a warning. A kernel that no
//! launch gives a block is not run: the block's shape decides which threads collide.
//! A shared histogram bumped with `++` at an index loaded from memory is reported as a
//! hint ([`RaceKind::DataDependentUpdate`]): which threads collide depends on the data.

use kernaut_syntax::{
    AccessKind, BodySteps, FileFacts, Function, IndexExpr, SharedAccess, SourceFile, Step,
    TextRange,
};
use rustc_hash::{FxHashMap, FxHashSet};

use kernaut_gpu::expr::{Loops, Uniforms, Valuation};

use crate::model::{LaunchConfig, Scope};

/// Launch configurations run per kernel.
pub const MAX_CONFIGS: usize = 3;
/// Iterations of one loop a thread runs. After them, a loop without barriers or exits is
/// left (its later iterations' accesses are not recorded, which loses findings but none
/// of the ones kept); a loop with one stops the thread there (the barriers still to come
/// are not known).
const MAX_ITERATIONS: usize = 8;
/// Steps (statements and accesses) one configuration may take, all threads together.
pub(crate) const MAX_STEPS: usize = 100_000;
/// Steps the kernels of one file may take together: past it, the kernels not yet run
/// are not modelled (a 10,000-line file of kernels stays within the rules' budget).
pub const FILE_STEPS: usize = 120_000;
/// Accesses recorded per configuration before the model gives up on the kernel.
const MAX_INSTANCES: usize = 400_000;
/// The value tried for a kernel parameter the launch does not fix.
const PARAM_SAMPLE: i64 = 4096;
/// Threads of a warp.
const WARP: i64 = kernaut_gpu::banks::WARP_LANES as i64;

/// `threadIdx` of thread `linear` of the configuration's block, as the one valuation
/// numbers threads (x fastest, then y, then z).
fn thread_idx(config: &Config, linear: u32) -> [i64; 3] {
    let l = i64::from(linear);
    Valuation {
        warp: l / WARP,
        ..Valuation::warp0(config.block.map(Some))
    }
    .thread((l % WARP) as usize)
}

/// Which memory an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// `__shared__` memory (one copy per block).
    Shared,
    /// Global memory through a pointer parameter (one copy for the grid).
    Global,
}

/// What kind of race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaceKind {
    /// One store (or `++`/`+=`) executed by two threads at one address.
    SameAddressWrite,
    /// Two accesses to one shared address by two threads in one barrier interval, one a
    /// write.
    SharedMissingBarrier,
    /// A global element written by one thread and read or written by another at another
    /// access, with no grid-wide barrier between.
    GlobalNeighbour,
    /// `++`/`+=` on shared memory at an index loaded from memory, by every thread.
    DataDependentUpdate,
}

/// Whether the two accesses of `race` are ordered by lock-step execution where the
/// lanes of a warp are not scheduled independently (every target older than sm_70): both
/// threads are in one warp, both accesses go through `volatile` (so neither stays in a
/// register), and they are two different accesses (one store by two lanes at one
/// address still leaves the value to chance).
pub fn ordered_in_lockstep(file: &SourceFile, race: &Race) -> bool {
    race.same_warp
        && matches!(
            race.kind,
            RaceKind::SharedMissingBarrier | RaceKind::GlobalNeighbour
        )
        && [&race.first, &race.second].iter().all(|side| {
            file.variable_at(side.range.start)
                .is_some_and(|v| v.is_volatile)
        })
}

/// A read, a write, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read.
    Read,
    /// Written.
    Write,
    /// Read and written (`+=`, `++`).
    ReadWrite,
}

impl Op {
    fn writes(self) -> bool {
        !matches!(self, Op::Read)
    }

    /// The verb for a message.
    pub fn verb(self) -> &'static str {
        match self {
            Op::Read => "reads",
            Op::Write => "writes",
            Op::ReadWrite => "updates",
        }
    }
}

/// One side of a race: which thread does what where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceSide {
    /// The access expression.
    pub range: TextRange,
    /// Its 1-based line.
    pub line: u32,
    /// `threadIdx` of the thread.
    pub thread: [i64; 3],
    /// `blockIdx` of its block.
    pub block: [i64; 3],
    /// Read, write or both.
    pub op: Op,
    /// The element, as `name[i][j]` with the indices evaluated for the thread.
    pub element: String,
    /// The statement the access is in.
    pub stmt: TextRange,
    /// The index as written (`a[i][j]` gives `i][j`), empty for a scalar.
    pub index_text: String,
}

/// A race between two threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// What kind.
    pub kind: RaceKind,
    /// The memory.
    pub space: Space,
    /// The access executed first (in program order).
    pub first: RaceSide,
    /// The access executed second; the diagnostic goes here.
    pub second: RaceSide,
    /// Whether both threads are in one warp.
    pub same_warp: bool,
    /// Whether the second access comes earlier in the text: the pair meets across a loop's
    /// back edge (the next iteration).
    pub loop_carried: bool,
    /// The block of the configuration, and how many dimensions it has (for naming threads).
    pub block_dims: [i64; 3],
    /// Whether the grid has more than one block in a dimension (threads are then named
    /// with their block).
    pub multi_block: bool,
    /// What the race relies on that the file does not say, as a phrase; `None` when it
    /// follows from the launch alone.
    pub assumption: Option<String>,
    /// The 1-based line of the launch the configuration comes from, if any.
    pub launch_line: Option<u32>,
    /// Where a barrier between the two accesses goes, when one place serves every
    /// thread.
    pub barrier_at: Option<BarrierPlace>,
}

/// Where a barrier that orders two accesses goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BarrierPlace {
    /// The statement the barrier goes before (or after, with `after`).
    pub step: TextRange,
    /// Whether it goes after `step` (at the end of a loop body) rather than before.
    pub after: bool,
    /// Whether the place is inside a branch on the thread index, where only a warp
    /// barrier of the threads inside may go.
    pub in_thread_branch: bool,
}

impl Race {
    /// `thread 3`, `thread (0,1)`, `thread 0 of block 1`.
    pub fn thread_name(&self, side: &RaceSide) -> String {
        let dims = if self.block_dims[2] > 1 {
            3
        } else if self.block_dims[1] > 1 {
            2
        } else {
            1
        };
        let t = coords(side.thread, dims);
        if self.multi_block && self.space == Space::Global {
            let bdims = if side.block[2] != 0 {
                3
            } else if side.block[1] != 0 {
                2
            } else {
                1
            };
            format!("thread {t} of block {}", coords(side.block, bdims))
        } else {
            format!("thread {t}")
        }
    }
}

fn coords(c: [i64; 3], dims: usize) -> String {
    match dims {
        1 => c[0].to_string(),
        2 => format!("({},{})", c[0], c[1]),
        _ => format!("({},{},{})", c[0], c[1], c[2]),
    }
}

/// One kernel's launch configuration as the model runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Config {
    block: [i64; 3],
    grid: Option<[i64; 3]>,
    params: Vec<(String, i64)>,
    launch_line: Option<u32>,
}

/// The launch configurations of `kernel` that the host code shows (distinct ones, at most
/// [`MAX_CONFIGS`]); none when no launch fixes the block.
fn configs(scope: &Scope<'_>, kernel: &Function, launch: &LaunchConfig) -> Vec<Config> {
    let mut out: Vec<Config> = Vec::new();
    // The kernel's own file's launches; another file's only when the kernel's file has none
    // and exactly one other file launches a kernel of that name (samples that each define
    // their own `testKernel` do not lend each other blocks).
    let all = scope.launches(&kernel.name);
    let own: Vec<_> = all
        .iter()
        .filter(|(p, _)| *p == scope.path)
        .copied()
        .collect();
    let chosen = if own.is_empty() {
        let mut files: Vec<&str> = all.iter().map(|(p, _)| *p).collect();
        files.dedup();
        if files.len() == 1 {
            all
        } else {
            Vec::new()
        }
    } else {
        own
    };
    for (path, site) in chosen {
        let Some(block) = site.block.value else {
            continue;
        };
        let facts: &FileFacts = match scope.host.and_then(|a| a.file(path)) {
            Some(f) => f.facts(),
            None => scope.file.facts(),
        };
        let mut params = Vec::new();
        if site.args.len() == kernel.params.len() {
            for (p, a) in kernel.params.iter().zip(&site.args) {
                if let Some(v) = facts.fold_text(a, site.range.start) {
                    params.push((p.name.clone(), v));
                }
            }
        }
        let c = Config {
            block,
            grid: site.grid.value,
            params,
            launch_line: Some(scope.line_of(path, site.range.start)),
        };
        if !out
            .iter()
            .any(|o| (&o.block, &o.grid, &o.params) == (&c.block, &c.grid, &c.params))
        {
            out.push(c);
        }
        if out.len() == MAX_CONFIGS {
            break;
        }
    }
    // Without a launch that fixes the block, the shape that decides which threads collide
    // is not known: no configuration, no finding (a default block would turn every test
    // snippet's `out[0] = v` into a report).
    let _ = launch;
    out
}

/// A memory access of the kernel body, as the model runs it.
#[derive(Debug)]
struct Site {
    access: SharedAccess,
    space: Space,
    op: Op,
    /// The buffer: index into `Model::buffers`.
    buffer: u32,
    /// A store of one value in every thread (`flag = 1`, `c[k] = coef[blockIdx.y]`).
    same_value: bool,
    line: u32,
    /// The statement it is in.
    stmt: TextRange,
    /// Where it runs in one pass over the body: its statement, then reads before
    /// read-modify-writes before writes, then its place in the text.
    order: (usize, u8, usize),
}

/// What happens inside one statement, in order.
#[derive(Clone, Copy, Debug)]
enum Event {
    Access(u32),
    /// A barrier, and where its call starts.
    Barrier(Barrier, usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Barrier {
    Block,
    Warp,
    Grid,
    /// A barrier the model cannot place (a named barrier with a count).
    Unknown,
}

/// One access of one thread.
#[derive(Clone, Copy, Debug)]
struct Inst {
    thread: u32,
    block: u32,
    site: u32,
    phase: u32,
    wphase: u32,
    gphase: u32,
    seq: u32,
    /// The byte offset.
    offset: i64,
    /// Bits of `Run::assumed` the access relied on.
    mask: u32,
}

/// The model of one kernel body.
struct Model<'a> {
    file: &'a SourceFile,
    steps: BodySteps,
    sites: Vec<Site>,
    /// The events of each statement, by the statement's start.
    events: FxHashMap<usize, Vec<Event>>,
    /// Steps that hold a barrier, by their start.
    with_barrier: FxHashSet<usize>,
    /// Steps that hold a `return`, `break` or `continue`, by their start.
    with_exit: FxHashSet<usize>,
    /// Shared data-dependent `++` sites.
    data_updates: Vec<u32>,
    /// Whether some site writes each buffer (a buffer only read cannot race).
    written: Vec<bool>,
    /// Whether the kernel spins on memory other blocks write ([`waits_for_other_blocks`]):
    /// then only the threads of one block are compared.
    waits_for_blocks: bool,
}

/// The outcome of walking steps for one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Normal,
    Break,
    Continue,
    Return,
    /// The model stops following the thread (a loop ran too long, or it cannot go on).
    Stop,
}

/// The kernel cannot be modelled (a barrier on an undecided path, too many accesses).
struct Abort;

/// One configuration's run: the state of the thread being walked and what it recorded.
struct Run<'m, 'a> {
    model: &'m Model<'a>,
    config: &'m Config,
    /// Names sampled because the file does not fix them, with the value taken, each a bit
    /// of `Inst::mask`.
    assumed: Vec<(String, i64)>,
    insts: Vec<Inst>,
    // The thread being walked.
    bid: [i64; 3],
    thread: u32,
    block: u32,
    phase: u32,
    wphase: u32,
    gphase: u32,
    seq: u32,
    /// Loop variables in scope, innermost last.
    vars: Vec<(String, i64)>,
    /// Assumption bits of the path (branches and loop bounds decided on samples).
    path_mask: u32,
    /// Whether the path is not certain (an undecided branch): its accesses are no evidence.
    maybe: u32,
    /// How many times each site ran on a decided path.
    executed: Vec<u32>,
    /// When set, the run records nothing but the element its access number `.0` touches.
    capture: Option<(u32, Option<String>)>,
    /// The loops the thread is in (their start) with the iteration of each, outermost
    /// first, and at the captured access.
    iters: Vec<(usize, usize)>,
    captured_iters: Vec<(usize, usize)>,
    /// Whether shared accesses are recorded (the first block only).
    record_shared: bool,
    /// A hash of the block barriers the thread has passed, in order.
    barriers: u64,
    /// Statements walked so far, all threads together.
    steps: usize,
    /// The most statements this run may walk.
    limit: usize,
}

impl<'a> Model<'a> {
    fn new(
        file: &'a SourceFile,
        kernel: &Function,
        shared: &[SharedAccess],
        global: &[SharedAccess],
        calls: &[kernaut_syntax::CallSite],
        line_of: &dyn Fn(usize) -> u32,
    ) -> Option<Model<'a>> {
        let body = kernel.body_range.clone()?;
        let steps = file.body_steps(body.start)?;
        // Statement ranges in order, to place accesses and calls.
        let mut stmts: Vec<TextRange> = Vec::new();
        collect_stmts(&steps.steps, &mut stmts);
        stmts.sort_by_key(|r| r.start);
        let stmt_at = |offset: usize| -> Option<TextRange> {
            let i = stmts
                .partition_point(|r| r.start <= offset)
                .checked_sub(1)?;
            (stmts[i].contains(&offset)).then(|| stmts[i].clone())
        };
        let stmt_of = |offset: usize| stmt_at(offset).map(|r| r.start);
        let mut sites = Vec::new();
        let mut buffers: Vec<(Space, String)> = Vec::new();
        let mut per_stmt: FxHashMap<usize, Vec<(usize, u8, Event)>> = FxHashMap::default();
        let locals: FxHashMap<&str, Option<&str>> = steps
            .locals
            .iter()
            .map(|(n, i)| (n.as_str(), i.as_deref()))
            .collect();
        let all = shared
            .iter()
            .map(|a| (a, Space::Shared))
            .chain(steps.scalar_accesses.iter().map(|a| (a, Space::Shared)))
            .chain(global.iter().map(|a| (a, Space::Global)));
        let mut data_updates = Vec::new();
        for (a, space) in all {
            if !body.contains(&a.range.start) {
                continue;
            }
            let op = match a.kind {
                AccessKind::Load => Op::Read,
                AccessKind::Store => Op::Write,
                AccessKind::LoadStore => Op::ReadWrite,
                AccessKind::AddressOf => continue,
            };
            let Some(stmt_range) = stmt_at(a.range.start) else {
                continue;
            };
            let stmt = stmt_range.start;
            let key = (space, a.root.clone());
            let buffer = match buffers.iter().position(|b| *b == key) {
                Some(i) => i,
                None => {
                    buffers.push(key);
                    buffers.len() - 1
                }
            } as u32;
            let idx = sites.len() as u32;
            // A histogram bump: the index is loaded from memory, and no part of it outside
            // the loads names the thread (`rows[tid][w[k]]` is a private row per thread).
            if space == Space::Shared
                && op == Op::ReadWrite
                && a.byte_offset
                    .unknown_reason()
                    .is_some_and(|r| r.contains("loaded from memory"))
                && !a
                    .index_texts
                    .iter()
                    .any(|t| names_thread(&outside_brackets(t), &locals, 0))
            {
                data_updates.push(idx);
            }
            let same_value = op == Op::Write && file.stores_same_value(a.range.end);
            let order = match op {
                Op::Read => 0,
                Op::ReadWrite => 1,
                Op::Write => 2,
            };
            sites.push(Site {
                access: a.clone(),
                space,
                op,
                buffer,
                same_value,
                line: line_of(a.range.start),
                stmt: stmt_range,
                order: (stmt, order, a.range.start),
            });
            // Loads first, then read-modify-writes, then stores: `a[i] = b[j]` reads `b`
            // before it writes `a`.
            per_stmt
                .entry(stmt)
                .or_default()
                .push((a.range.start, order, Event::Access(idx)));
        }
        let mut with_barrier_at: Vec<usize> = Vec::new();
        for c in calls {
            if !body.contains(&c.range.start) {
                continue;
            }
            let Some(b) = barrier_of(file, c) else {
                continue;
            };
            with_barrier_at.push(c.range.start);
            match stmt_of(c.range.start) {
                Some(stmt) => per_stmt.entry(stmt).or_default().push((
                    c.range.start,
                    3,
                    Event::Barrier(b, c.range.start),
                )),
                // A barrier in a condition or a loop header: not modelled.
                None => return None,
            }
        }
        let mut events = FxHashMap::default();
        for (stmt, mut evs) in per_stmt {
            evs.sort_by_key(|(at, order, _)| (*order, *at));
            events.insert(stmt, evs.into_iter().map(|(_, _, e)| e).collect());
        }
        let mut with_barrier = FxHashSet::default();
        mark_barriers(&steps.steps, &with_barrier_at, &mut with_barrier);
        let mut with_exit = FxHashSet::default();
        mark_exits(&steps.steps, &mut with_exit);
        let mut written = vec![false; buffers.len()];
        for s in &sites {
            if s.op.writes() {
                written[s.buffer as usize] = true;
            }
        }
        Some(Model {
            written,
            waits_for_blocks: waits_for_other_blocks(file, body.start),
            file,
            steps,
            sites,
            events,
            with_barrier,
            with_exit,
            data_updates,
        })
    }
}

/// `text` without the parts inside `[...]`: `in[i] & 255` gives `in & 255`.
fn outside_brackets(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|c| {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth = depth.saturating_sub(1);
                    return false;
                }
                _ => {}
            }
            depth == 0
        })
        .collect()
}

/// Whether `text` reads the thread index, directly or through the initialisers of the
/// locals it names.
/// Whether `text` names the thread index (or a lane, a thread rank), directly or through
/// the initialisers of the locals it names.
pub fn names_thread(text: &str, locals: &FxHashMap<&str, Option<&str>>, depth: usize) -> bool {
    if depth > 6 {
        return true;
    }
    text.contains("threadIdx")
        || text.contains("thread_rank")
        || text.contains("lane")
        || text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .any(|w| {
                locals
                    .get(w)
                    .copied()
                    .flatten()
                    .is_some_and(|i| i != text && names_thread(i, locals, depth + 1))
            })
}

/// How deep [`waits_for_other_blocks`] follows the device functions a kernel calls.
const SPIN_CALL_DEPTH: usize = 4;

/// Whether the function at `body_start`, or a device function of the file it calls, spins
/// on memory that other threads write: a loop whose exit depends on a read written in the
/// loop as atomic, `volatile` or acquire (`while (atomicAdd(&arrived, 0) < gridDim.x) {}`,
/// `do { f = ld_acquire(p); } while (f == 0);`, `for (;;) { if (*(volatile int*)flag)
/// break; }`; a plain read through a pointer declared `volatile` elsewhere is not seen as
/// one). Such a loop is a
/// hand-rolled grid barrier or a flag handed from block to block (a decoupled look-back):
/// it orders threads of different blocks in ways the model does not follow.
pub fn waits_for_other_blocks(file: &SourceFile, body_start: usize) -> bool {
    spins_within(file, body_start, SPIN_CALL_DEPTH)
}

fn spins_within(file: &SourceFile, body_start: usize, depth: usize) -> bool {
    let Some(steps) = file.body_steps(body_start) else {
        return false;
    };
    if steps_spin(file, &steps.steps) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let facts = file.facts();
    file.calls_in(body_start).iter().any(|c| {
        steps.body.contains(&c.range.start)
            && facts
                .device_functions
                .iter()
                .filter(|f| {
                    kernaut_syntax::short_name(&f.name) == kernaut_syntax::short_name(&c.callee)
                })
                .filter_map(|f| f.body_range.as_ref())
                .any(|b| b.start != body_start && spins_within(file, b.start, depth - 1))
    })
}

fn steps_spin(file: &SourceFile, steps: &[Step]) -> bool {
    steps.iter().any(|s| match s {
        Step::Stmt { .. } | Step::Exit { .. } => false,
        Step::If {
            then_steps,
            else_steps,
            ..
        } => steps_spin(file, then_steps) || steps_spin(file, else_steps),
        Step::For {
            range,
            condition,
            body,
            ..
        } => (condition.is_none() && loop_polls(file, range)) || steps_spin(file, body),
        Step::Loop { range, body } => loop_polls(file, range) || steps_spin(file, body),
        Step::Other { body, .. } => steps_spin(file, body),
    })
}

/// Whether the loop at `range` (`while`, `do … while` or `for`) waits on memory: its
/// condition (as the enclosing chain gives it) reads it through an atomic, `volatile` or
/// acquire load, or names a local the loop loads so, or (a loop with no condition) the
/// loop leaves on such a read.
fn loop_polls(file: &SourceFile, range: &TextRange) -> bool {
    use kernaut_syntax::EnclosingKind;
    let Some(inside) = range.end.checked_sub(1) else {
        return false;
    };
    let Some(condition) =
        file.enclosing(inside)
            .into_iter()
            .find(|e| e.range == *range)
            .and_then(|e| match e.kind {
                EnclosingKind::While { condition, .. }
                | EnclosingKind::DoWhile { condition, .. } => Some(condition.to_string()),
                EnclosingKind::For { header, .. } => header.split(';').nth(1).map(str::to_string),
                _ => None,
            })
    else {
        return false;
    };
    let Some(body) = file.text().get(range.clone()) else {
        return false;
    };
    let body = kernaut_syntax::lex::strip_comments(body);
    if polling_read(&condition) {
        return true;
    }
    let cond = condition.trim();
    if cond.is_empty() || cond == "true" || cond == "1" {
        // `for (;;)` / `while (true)`: a wait when the loop leaves on a polled value.
        return polling_read(&body)
            && ["break", "return"]
                .iter()
                .any(|w| kernaut_syntax::lex::find_word(&body, w, 0).is_some());
    }
    // `while (f == 0) { f = atomicAdd(p, 0); }`: a local of the condition loaded so.
    polling_read(&body)
        && cond
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| kernaut_syntax::lex::is_identifier(w))
            .any(|w| {
                let mut from = 0;
                while let Some(at) = kernaut_syntax::lex::find_word(&body, w, from) {
                    let rest = body[at + w.len()..].trim_start();
                    if rest.starts_with('=') && !rest.starts_with("==") {
                        return true;
                    }
                    from = at + w.len();
                }
                false
            })
}

/// Whether `text` reads memory as a wait does: an `atomic…` call, a `volatile` access,
/// an acquire, relaxed or volatile load (`ld.acquire`, `cuda::atomic_ref::load`,
/// `__ldcv`), or a helper named for one (`ld_acquire`, `load_volatile`).
fn polling_read(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !kernaut_syntax::lex::is_ident_byte(b[i])
            || (i > 0 && kernaut_syntax::lex::is_ident_byte(b[i - 1]))
        {
            i += 1;
            continue;
        }
        let end = i + b[i..]
            .iter()
            .position(|c| !kernaut_syntax::lex::is_ident_byte(*c))
            .unwrap_or(b.len() - i);
        let word = text[i..end].to_ascii_lowercase();
        if word.starts_with("atomic")
            || word.contains("volatile")
            || word.contains("acquire")
            || word == "__ldcv"
            || word == "__ldcg"
        {
            return true;
        }
        i = end;
    }
    text.contains(".load(") || text.contains("ld.relaxed") || text.contains(".acquire")
}

fn collect_stmts(steps: &[Step], out: &mut Vec<TextRange>) {
    for s in steps {
        match s {
            Step::Stmt { range } => out.push(range.clone()),
            Step::If {
                then_steps,
                else_steps,
                ..
            } => {
                collect_stmts(then_steps, out);
                collect_stmts(else_steps, out);
            }
            Step::For { body, .. } | Step::Loop { body, .. } | Step::Other { body, .. } => {
                collect_stmts(body, out)
            }
            Step::Exit { .. } => {}
        }
    }
}

/// Marks every step that holds an exit; returns whether one did.
fn mark_exits(steps: &[Step], out: &mut FxHashSet<usize>) -> bool {
    let mut any = false;
    for s in steps {
        let inner = match s {
            Step::Stmt { .. } => false,
            Step::If {
                then_steps,
                else_steps,
                ..
            } => {
                let a = mark_exits(then_steps, out);
                let b = mark_exits(else_steps, out);
                a || b
            }
            Step::For { body, .. } | Step::Loop { body, .. } | Step::Other { body, .. } => {
                mark_exits(body, out)
            }
            Step::Exit { .. } => true,
        };
        if inner {
            out.insert(s.range().start);
            any = true;
        }
    }
    any
}

/// Marks every step that holds one of the barriers at `at`; returns whether one did.
fn mark_barriers(steps: &[Step], at: &[usize], out: &mut FxHashSet<usize>) -> bool {
    let mut any = false;
    for s in steps {
        let inner = match s {
            Step::Stmt { range } => at.iter().any(|o| range.contains(o)),
            Step::If {
                then_steps,
                else_steps,
                ..
            } => {
                let a = mark_barriers(then_steps, at, out);
                let b = mark_barriers(else_steps, at, out);
                a || b
            }
            Step::For { body, .. } | Step::Loop { body, .. } | Step::Other { body, .. } => {
                mark_barriers(body, at, out)
            }
            Step::Exit { .. } => false,
        };
        if inner {
            out.insert(s.range().start);
            any = true;
        }
    }
    any
}

/// How deep [`barrier_of`] follows the file's device functions into the ones they call.
const BARRIER_CALL_DEPTH: usize = 4;

/// The barrier a call is, if it is one: block barriers (`__syncthreads`, `block.sync()`,
/// `bar.sync 0` in `asm`, a device function of the file that synchronises, a CUB block
/// collective), warp barriers (`__syncwarp`, a tile's `sync()`), grid barriers.
fn barrier_of(file: &SourceFile, call: &kernaut_syntax::CallSite) -> Option<Barrier> {
    barrier_within(file, call, BARRIER_CALL_DEPTH)
}

/// Whether `call` is a barrier of any scope, or a device function of the file that
/// reaches one ([`barrier_of`]).
pub(crate) fn reaches_barrier(file: &SourceFile, call: &kernaut_syntax::CallSite) -> bool {
    barrier_of(file, call).is_some()
}

/// [`barrier_of`], following device functions `depth` calls deep.
fn barrier_within(
    file: &SourceFile,
    call: &kernaut_syntax::CallSite,
    depth: usize,
) -> Option<Barrier> {
    let callee = call.callee.as_str();
    let short = kernaut_syntax::short_name(callee);
    let written = call.callee_text.to_ascii_lowercase();
    if call.kind == kernaut_syntax::SymbolKind::Ptx {
        return match callee {
            c if c.starts_with("bar.sync")
                || c.starts_with("barrier.sync")
                || c.starts_with("bar.red") =>
            {
                if call.args.len() > 1 {
                    Some(Barrier::Unknown)
                } else {
                    Some(Barrier::Block)
                }
            }
            c if c.starts_with("bar.warp.sync") => Some(Barrier::Warp),
            c if c.starts_with("bar") || c.starts_with("barrier") => Some(Barrier::Unknown),
            _ => None,
        };
    }
    match short {
        "__syncthreads" | "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or" => {
            return Some(Barrier::Block)
        }
        "__syncwarp" => return Some(Barrier::Warp),
        "__barrier_sync" | "arrive_and_wait" | "barrier_wait" => return Some(Barrier::Unknown),
        // `syncthreads()` with no definition in sight: an old toolkit's alias of the
        // block barrier, or code that does not build (nvcc 13: undefined identifier);
        // either way no race to report across it.
        "syncthreads" | "syncThreads" | "__syncthreads__"
            if !file
                .facts()
                .device_functions
                .iter()
                .any(|f| kernaut_syntax::short_name(&f.name) == short) =>
        {
            return Some(Barrier::Unknown)
        }
        _ => {}
    }
    if short == "sync" || short == "synchronize" {
        // The group's scope as the barrier rules read it (`context::barriers`); a tile
        // of up to 32 threads orders lanes of one warp.
        use crate::groups::{sync_scope, GroupScope};
        return Some(match sync_scope(file, call) {
            Some(GroupScope::Block) => Barrier::Block,
            Some(GroupScope::Grid) => Barrier::Grid,
            Some(GroupScope::Tile(n)) if n.is_none_or(|n| n <= 32) => Barrier::Warp,
            _ => Barrier::Unknown,
        });
    }
    // CUB's block collectives synchronise inside.
    if callee.contains("cub::Block")
        || written.contains("blockreduce")
        || written.contains("blockscan")
    {
        return Some(Barrier::Unknown);
    }
    // A function-like macro whose expansion holds a barrier (a reduction's tail written
    // as `TAIL32(s)`, with `__syncthreads()` first): the model does not see inside the
    // expansion, so a barrier of unknown scope stands there.
    let facts = file.facts();
    if facts.defines_macro(short) && macro_holds_barrier(file, short, depth) {
        return Some(Barrier::Unknown);
    }
    // A device function of the file whose body calls a barrier (of any scope: which
    // threads it orders for the caller is not modelled), through the calls the syntax
    // finds in it; a warp shuffle (`__shfl_down_sync`) is no barrier.
    if let Some(body) = facts
        .device_functions
        .iter()
        .find(|f| kernaut_syntax::short_name(&f.name) == short)
        .and_then(|f| f.body_range.clone())
    {
        if depth > 0
            && file.calls_in(body.start).iter().any(|c| {
                body.contains(&c.range.start) && barrier_within(file, c, depth - 1).is_some()
            })
        {
            return Some(Barrier::Unknown);
        }
    }
    None
}

/// Whether the function-like macro `name` (the file's own definition, else a header's)
/// expands to a barrier call: `__syncthreads`, `__syncwarp`, a group's `sync()`, `bar.sync`
/// in `asm`, or another macro that does (`depth` levels deep).
fn macro_holds_barrier(file: &SourceFile, name: &str, depth: usize) -> bool {
    let facts = file.facts();
    let own;
    let def = if facts.defines_own_macro(name) {
        own = kernaut_syntax::macro_definitions(file.text())
            .into_iter()
            .find(|m| m.name == name);
        own.as_ref()
    } else {
        facts.header_macro(name)
    };
    let Some(def) = def.filter(|d| d.params.is_some()) else {
        return false;
    };
    let body = def.body.as_str();
    let word = |w: &str| kernaut_syntax::lex::find_word(body, w, 0).is_some();
    if [
        "__syncthreads",
        "__syncthreads_count",
        "__syncthreads_and",
        "__syncthreads_or",
        "__syncwarp",
    ]
    .iter()
    .any(|w| word(w))
        || body.contains(".sync()")
        || body.contains("bar.sync")
        || body.contains("barrier.sync")
    {
        return true;
    }
    // Macros it calls.
    depth > 0
        && body
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|id| kernaut_syntax::lex::is_identifier(id))
            .any(|id| {
                id != name && facts.defines_macro(id) && macro_holds_barrier(file, id, depth - 1)
            })
}

impl<'m, 'a> Run<'m, 'a> {
    fn new(model: &'m Model<'a>, config: &'m Config) -> Self {
        Run {
            model,
            config,
            assumed: Vec::new(),
            insts: Vec::new(),
            executed: vec![0; model.sites.len()],
            capture: None,
            iters: Vec::new(),
            captured_iters: Vec::new(),
            bid: [0; 3],
            thread: 0,
            block: 0,
            phase: 0,
            wphase: 0,
            gphase: 0,
            seq: 0,
            vars: Vec::new(),
            path_mask: 0,
            maybe: 0,
            record_shared: true,
            barriers: 0,
            steps: 0,
            limit: MAX_STEPS,
        }
    }

    /// The bit for a sampled name and its value.
    fn assume(&mut self, sampled: (String, i64)) -> u32 {
        let i = match self.assumed.iter().position(|n| *n == sampled) {
            Some(i) => i,
            None => {
                self.assumed.push(sampled);
                self.assumed.len() - 1
            }
        };
        1u32.checked_shl(i as u32).unwrap_or(1 << 31)
    }

    /// The one warp valuation for the current thread's warp: the block and grid of the
    /// configuration (`gridDim` sampled where the launch does not fix it), `blockIdx` and
    /// the loop variables at their values in this run, the parameters the launch passes
    /// by name, others at [`PARAM_SAMPLE`].
    fn valuation(&self) -> Valuation<'_> {
        let config = self.config;
        Valuation {
            block: config.block.map(Some),
            warp: i64::from(self.thread) / WARP,
            sample: 0,
            uniforms: Uniforms::Launch {
                block_idx: self.bid,
                grid: config.grid,
                named: &config.params,
                other: PARAM_SAMPLE,
            },
            loops: Loops::Values(&self.vars),
        }
    }

    /// Evaluates `e` for the current thread (a lane of its warp) through the one warp
    /// valuation: its value and the assumption bits of the sampled values it read.
    fn eval(&mut self, e: &IndexExpr) -> Option<(i64, u32)> {
        let valuation = self.valuation();
        let v = valuation.lane(e, (self.thread % 32) as usize)?;
        let sampled = valuation.assumed(e);
        let mut mask = 0;
        for n in sampled {
            mask |= self.assume(n);
        }
        Some((v, mask))
    }

    /// Whether all of `comps` hold for the current thread, and the assumption bits used;
    /// `None` when one cannot be evaluated.
    fn holds(&mut self, comps: &[kernaut_syntax::GuardComparison]) -> Option<(bool, u32)> {
        let mut all = true;
        let mut mask = 0;
        for c in comps {
            let (l, ml) = self.eval(&c.left)?;
            let (r, mr) = self.eval(&c.right)?;
            mask |= ml | mr;
            all &= c.holds(l, r);
        }
        Some((all, mask))
    }

    fn walk(&mut self, steps: &'m [Step]) -> Result<Flow, Abort> {
        for s in steps {
            let f = self.step(s)?;
            if f != Flow::Normal {
                return Ok(f);
            }
        }
        Ok(Flow::Normal)
    }

    /// Walks steps whose path is not decided: their accesses are no evidence, and a
    /// barrier among them makes the kernel not modelled. An exit among them leaves the
    /// rest of the thread undecided.
    fn walk_undecided(&mut self, range: &TextRange, steps: &[&'m [Step]]) -> Result<Flow, Abort> {
        if self.model.with_barrier.contains(&range.start) {
            return Err(Abort);
        }
        self.maybe += 1;
        let mut exits = false;
        for s in steps {
            match self.walk(s)? {
                Flow::Stop => {
                    self.maybe -= 1;
                    return Ok(Flow::Stop);
                }
                Flow::Normal => {}
                _ => exits = true,
            }
        }
        if !exits {
            self.maybe -= 1;
        }
        Ok(Flow::Normal)
    }

    fn step(&mut self, s: &'m Step) -> Result<Flow, Abort> {
        match s {
            Step::Stmt { range } => {
                self.steps += 1;
                if self.steps > self.limit {
                    return Err(Abort);
                }
                if let Some(events) = self.model.events.get(&range.start) {
                    for &e in events {
                        self.event(e)?;
                    }
                }
                Ok(Flow::Normal)
            }
            Step::Exit { kind, .. } => Ok(match *kind {
                "return" => Flow::Return,
                "break" => Flow::Break,
                _ => Flow::Continue,
            }),
            Step::If {
                range,
                comparisons,
                negated_comparisons,
                then_steps,
                else_steps,
                ..
            } => {
                // `if (x >= nx || y >= ny) return;` is taken where `x < nx && y < ny` fails.
                let decided = match (comparisons, negated_comparisons) {
                    (Some(c), _) => self.holds(c),
                    (None, Some(n)) => self.holds(n).map(|(h, mask)| (!h, mask)),
                    (None, None) => None,
                };
                let Some((taken, mask)) = decided else {
                    return self.walk_undecided(range, &[then_steps, else_steps]);
                };
                let saved = self.path_mask;
                self.path_mask |= mask;
                let flow = self.walk(if taken { then_steps } else { else_steps })?;
                // Where the branch may leave the thread, the rest of it relies on the
                // decision too.
                if !self.model.with_exit.contains(&range.start) {
                    self.path_mask = saved;
                }
                Ok(flow)
            }
            Step::For {
                range,
                var,
                start,
                condition,
                update,
                body,
                check_first,
            } => {
                let (Some(var), Some(start), Some(cond), Some((op, by))) =
                    (var, start, condition, update)
                else {
                    return self.walk_undecided(range, &[body]);
                };
                let Some((mut v, m0)) = self.eval(start) else {
                    return self.walk_undecided(range, &[body]);
                };
                let saved = self.path_mask;
                self.path_mask |= m0;
                self.vars.push((var.clone(), v));
                self.iters.push((range.start, 0));
                let mut iterations = 0;
                let mut first = !*check_first;
                let flow = loop {
                    // A `do … while` runs its body once before it checks.
                    let checked = if std::mem::take(&mut first) {
                        Some((true, 0))
                    } else {
                        self.holds(cond)
                    };
                    let Some((holds, mc)) = checked else {
                        self.vars.pop();
                        self.iters.pop();
                        self.path_mask = saved;
                        return self.walk_undecided(range, &[body]);
                    };
                    self.path_mask |= mc;
                    if !holds {
                        break Flow::Normal;
                    }
                    iterations += 1;
                    if let Some(last) = self.iters.last_mut() {
                        last.1 = iterations;
                    }
                    if iterations > MAX_ITERATIONS {
                        let plain = !self.model.with_barrier.contains(&range.start)
                            && !self.model.with_exit.contains(&range.start);
                        break if plain { Flow::Normal } else { Flow::Stop };
                    }
                    match self.walk(body)? {
                        Flow::Break => break Flow::Normal,
                        Flow::Return => break Flow::Return,
                        Flow::Stop => break Flow::Stop,
                        Flow::Normal | Flow::Continue => {}
                    }
                    let Some((step, ms)) = self.eval(by) else {
                        break Flow::Stop;
                    };
                    self.path_mask |= ms;
                    let Some(next) = op.checked(v, step) else {
                        break Flow::Stop;
                    };
                    if next == v {
                        break Flow::Stop;
                    }
                    v = next;
                    if let Some(last) = self.vars.last_mut() {
                        last.1 = v;
                    }
                };
                self.vars.pop();
                self.iters.pop();
                if !self.model.with_barrier.contains(&range.start)
                    && !self.model.with_exit.contains(&range.start)
                {
                    self.path_mask = saved;
                }
                Ok(flow)
            }
            Step::Loop { range, body } | Step::Other { range, body } => {
                self.walk_undecided(range, &[body])
            }
        }
    }

    fn event(&mut self, e: Event) -> Result<(), Abort> {
        match e {
            Event::Barrier(b, at) => {
                if self.maybe > 0 {
                    return Err(Abort);
                }
                if b != Barrier::Warp {
                    // Which block barriers the thread passed, in order: threads that pass
                    // different ones (a named barrier for half the block) are not modelled.
                    self.barriers = self
                        .barriers
                        .wrapping_mul(0x100_0000_01b3)
                        .wrapping_add(at as u64 + 1);
                }
                match b {
                    Barrier::Block | Barrier::Unknown => self.phase += 1,
                    Barrier::Warp => self.wphase += 1,
                    Barrier::Grid => {
                        self.phase += 1;
                        self.gphase += 1;
                    }
                }
            }
            Event::Access(i) => {
                let site = &self.model.sites[i as usize];
                if self.maybe > 0 {
                    return Ok(());
                }
                if (site.space == Space::Shared && !self.record_shared)
                    || !self.model.written[site.buffer as usize]
                {
                    return Ok(());
                }
                self.executed[i as usize] += 1;
                let Some((offset, mask)) = self.eval(&site.access.byte_offset) else {
                    return Ok(());
                };
                self.seq += 1;
                if let Some((seq, _)) = self.capture {
                    if seq == self.seq {
                        let element = self.element(site);
                        self.capture = Some((seq, Some(element)));
                        self.captured_iters = self.iters.clone();
                    }
                    return Ok(());
                }
                if self.insts.len() >= MAX_INSTANCES {
                    return Err(Abort);
                }
                self.insts.push(Inst {
                    thread: self.thread,
                    block: self.block,
                    site: i,
                    phase: self.phase,
                    wphase: self.wphase,
                    gphase: self.gphase,
                    seq: self.seq,
                    offset,
                    mask: self.path_mask | mask,
                });
            }
        }
        Ok(())
    }

    /// The element `site` touches for the current thread, as `name[i][j]`.
    fn element(&mut self, site: &Site) -> String {
        let mut s = site.access.array.clone();
        let indices = site.access.indices.clone();
        for i in &indices {
            match self.eval(i) {
                Some((v, _)) => s.push_str(&format!("[{v}]")),
                None => s.push_str("[?]"),
            }
        }
        s
    }

    /// Runs the whole body for thread `linear` of block `block` (`bid` its coordinates).
    fn thread(&mut self, linear: u32, block: u32, bid: [i64; 3]) -> Result<Flow, Abort> {
        self.bid = bid;
        self.thread = linear;
        self.block = block;
        self.phase = 0;
        self.barriers = 0;
        self.wphase = 0;
        self.gphase = 0;
        self.seq = 0;
        self.vars.clear();
        self.iters.clear();
        self.path_mask = 0;
        self.maybe = 0;
        let steps = &self.model.steps.steps;
        self.walk(steps)
    }
}

/// The races of `kernel` (a kernel of `scope`'s file) under each launch configuration the
/// host shows. `shared` and `global` are the file's accesses (the kernel's are picked),
/// `calls` the calls in the kernel's body.
pub fn kernel_races(
    scope: &Scope<'_>,
    kernel: &Function,
    launch: &LaunchConfig,
    shared: &[SharedAccess],
    global: &[SharedAccess],
    calls: &[kernaut_syntax::CallSite],
    budget: &std::cell::Cell<usize>,
) -> Vec<Race> {
    if budget.get() == 0 {
        return Vec::new();
    }
    let line_of = |offset: usize| scope.line_of(scope.path, offset);
    let Some(model) = Model::new(scope.file, kernel, shared, global, calls, &line_of) else {
        return Vec::new();
    };
    if model.sites.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<Race> = Vec::new();
    for config in configs(scope, kernel, launch) {
        kernaut_syntax::cancel::checkpoint();
        let threads = config.block.iter().product::<i64>();
        if config.block.iter().any(|d| *d < 1) || !(1..=1024).contains(&threads) {
            continue;
        }
        let mut blocks = vec![[0i64; 3]];
        // A second block only where no hand-rolled wait orders the blocks.
        if model.sites.iter().any(|s| s.space == Space::Global) && !model.waits_for_blocks {
            if let Some(g) = config.grid {
                if let Some(a) = (0..3).find(|&a| g[a] >= 2) {
                    let mut b = [0; 3];
                    b[a] = 1;
                    blocks.push(b);
                }
            }
        }
        let mut run = Run::new(&model, &config);
        run.limit = MAX_STEPS.min(budget.get());
        let outcome = run_blocks(&mut run, &blocks, threads as u32);
        budget.set(budget.get().saturating_sub(run.steps.max(1)));
        if outcome.is_err() {
            continue;
        }
        let multi_block = config.grid.is_some_and(|g| g.iter().any(|d| *d > 1));
        // One race per kind and statement of the second access: the clearest pair (no
        // assumption, then one a barrier between two statements fixes, then one in the
        // same iteration, then the nearest first access).
        for race in witnesses(&model, &run, &config, &blocks, multi_block) {
            let known = found
                .iter()
                .position(|r| r.kind == race.kind && r.second.stmt == race.second.stmt);
            match known {
                Some(i) if rank(&race) < rank(&found[i]) => found[i] = race,
                Some(_) => {}
                None => found.push(race),
            }
        }
        // `hist[bin]++` at an index loaded from memory, by more than one thread.
        for &i in &model.data_updates {
            if run.executed[i as usize] < 2
                || found
                    .iter()
                    .any(|r| r.second.range == model.sites[i as usize].access.range)
            {
                continue;
            }
            let site = &model.sites[i as usize];
            let side = |t: i64| RaceSide {
                range: site.access.range.clone(),
                line: site.line,
                thread: [t, 0, 0],
                block: [0; 3],
                op: Op::ReadWrite,
                element: site.access.array.clone(),
                stmt: site.stmt.clone(),
                index_text: site.access.index_texts.join("]["),
            };
            found.push(Race {
                kind: RaceKind::DataDependentUpdate,
                space: site.space,
                first: side(0),
                second: side(1),
                same_warp: false,
                loop_carried: false,
                block_dims: config.block,
                multi_block: false,
                assumption: Some(format!(
                    "two threads reach the same `{}` (the index is loaded from memory)",
                    site.access.index_texts.join("][")
                )),
                launch_line: config.launch_line,
                barrier_at: None,
            });
        }
    }
    found
}

/// How clear a race is as an example, smaller first: no assumption, two statements (a
/// barrier between them fixes it), the same iteration, the nearest first access.
fn rank(r: &Race) -> (bool, bool, bool, std::cmp::Reverse<usize>) {
    (
        r.assumption.is_some(),
        r.first.stmt == r.second.stmt,
        r.loop_carried,
        std::cmp::Reverse(r.first.range.start),
    )
}

/// Runs every thread of each block; `Err` when the kernel is not modelled (an undecided
/// barrier, too many accesses, threads that pass different numbers of barriers).
fn run_blocks(run: &mut Run<'_, '_>, blocks: &[[i64; 3]], threads: u32) -> Result<(), Abort> {
    for (bi, bid) in blocks.iter().enumerate() {
        run.record_shared = bi == 0;
        let mut phases: Option<(u32, u32, u64)> = None;
        for t in 0..threads {
            if t % 64 == 0 {
                kernaut_syntax::cancel::checkpoint();
            }
            if run.thread(t, bi as u32, *bid)? == Flow::Normal {
                let p = (run.phase, run.gphase, run.barriers);
                if *phases.get_or_insert(p) != p {
                    return Err(Abort);
                }
            }
        }
    }
    Ok(())
}

/// Pair checks per address before the search moves on.
const MAX_CHECKS: usize = 20_000;

/// The best witness of each pair of sites that race in one run.
fn witnesses(
    model: &Model<'_>,
    run: &Run<'_, '_>,
    config: &Config,
    blocks: &[[i64; 3]],
    multi_block: bool,
) -> Vec<Race> {
    let insts = &run.insts;
    // Accesses by (buffer, block for shared memory, byte offset).
    type Key = (u32, u32, i64);
    let mut buckets: FxHashMap<Key, Vec<u32>> = FxHashMap::default();
    for (i, x) in insts.iter().enumerate() {
        let site = &model.sites[x.site as usize];
        let block = if site.space == Space::Shared {
            x.block
        } else {
            u32::MAX
        };
        buckets
            .entry((site.buffer, block, x.offset))
            .or_default()
            .push(i as u32);
    }
    let op = |x: &Inst| model.sites[x.site as usize].op;
    // Whether a site stores one value in every thread of this configuration's block (an
    // axis of one thread reads as 0), asked once per site where a pair needs it.
    let block = config.block.map(|d| u32::try_from(d).unwrap_or(0));
    let same_values: std::cell::RefCell<Vec<Option<bool>>> =
        std::cell::RefCell::new(vec![None; model.sites.len()]);
    let same_value = |site: u32| {
        let s = &model.sites[site as usize];
        if s.same_value || s.op != Op::Write {
            return s.same_value;
        }
        if let Some(known) = same_values.borrow()[site as usize] {
            return known;
        }
        let v = model
            .file
            .stores_same_value_in(s.access.range.end, Some(block));
        same_values.borrow_mut()[site as usize] = Some(v);
        v
    };
    let axes_cache: std::cell::RefCell<FxHashMap<u32, Option<[bool; 3]>>> =
        std::cell::RefCell::new(FxHashMap::default());
    let value_axes = |site: u32| {
        let s = &model.sites[site as usize];
        if s.op != Op::Write {
            return None;
        }
        *axes_cache.borrow_mut().entry(site).or_insert_with(|| {
            model
                .file
                .stored_value_axes_in(s.access.range.end, Some(block))
        })
    };
    // Per (kind, first site, second site): the best pair (score, first, second), whether a
    // pair of different warps was seen, and whether the search was cut short.
    type Best = ((u32, u8, u64), u32, u32);
    let mut best: FxHashMap<(u8, u32, u32), (Best, bool, bool)> = FxHashMap::default();
    let mut keys: Vec<(u8, u32, u32)> = Vec::new();
    let mut buckets: Vec<(&Key, &Vec<u32>)> = buckets.iter().collect();
    buckets.sort_by_key(|(k, _)| **k);
    for (_, bucket) in buckets {
        if bucket.len() < 2 {
            continue;
        }
        let mut checks = 0;
        let mut cut = false;
        for &xi in bucket {
            let x = &insts[xi as usize];
            if !op(x).writes() {
                continue;
            }
            for &yi in bucket {
                if yi == xi {
                    continue;
                }
                let y = &insts[yi as usize];
                if op(y).writes() && yi < xi {
                    continue; // Each pair of writes once.
                }
                checks += 1;
                if checks > MAX_CHECKS {
                    cut = true;
                    break;
                }
                if (x.block, x.thread) == (y.block, y.thread) {
                    continue;
                }
                let ordered = if x.block == y.block {
                    x.phase != y.phase || (x.thread / 32 == y.thread / 32 && x.wphase != y.wphase)
                } else {
                    x.gphase != y.gphase
                };
                if ordered {
                    continue;
                }
                if same_value(x.site) && same_value(y.site) {
                    continue;
                }
                // One store by two threads that agree on every axis its value reads (`m =
                // row` by threads (1, 0) and (0, 0)): the same bits, whichever lands last;
                // a pair that differs on such an axis is the witness.
                if x.site == y.site
                    && x.block == y.block
                    && value_axes(x.site).is_some_and(|axes| {
                        let (a, b) = (thread_idx(config, x.thread), thread_idx(config, y.thread));
                        (0..3).all(|d| !axes[d] || a[d] == b[d])
                    })
                {
                    continue;
                }
                // A read by a thread that stored the element itself at the same site
                // earlier, where the two agree on every axis the stored value reads
                // (`bin[c] = f(t[c]); … = table[bin[c]]` with `c` the same for threads
                // that differ in z): it sees its own value or the same bits.
                if !op(y).writes()
                    && x.block == y.block
                    && value_axes(x.site).is_some_and(|axes| {
                        let (a, b) = (thread_idx(config, x.thread), thread_idx(config, y.thread));
                        (0..3).all(|d| !axes[d] || a[d] == b[d])
                    })
                    && bucket.iter().any(|&zi| {
                        let z = &insts[zi as usize];
                        (z.block, z.thread, z.site) == (y.block, y.thread, x.site) && z.seq < y.seq
                    })
                {
                    continue;
                }
                let sx = &model.sites[x.site as usize];
                let kind = if x.site == y.site {
                    RaceKind::SameAddressWrite
                } else if sx.space == Space::Shared {
                    RaceKind::SharedMissingBarrier
                } else {
                    RaceKind::GlobalNeighbour
                };
                // The pair of sites in either order (which comes first in program order
                // is decided for the witness, from its loop iterations): a thread that
                // skips a branch reaches a later access in fewer steps than one that
                // takes it.
                let same_warp = x.block == y.block && x.thread / 32 == y.thread / 32;
                let score = (
                    (x.mask | y.mask).count_ones(),
                    u8::from(same_warp && kind != RaceKind::SameAddressWrite),
                    u64::from(x.thread) + u64::from(y.thread) + u64::from(x.block + y.block) * 4096,
                );
                let key = (kind as u8, x.site.min(y.site), x.site.max(y.site));
                let pick = (score, xi, yi);
                match best.get_mut(&key) {
                    Some((b, other_warps, _)) => {
                        *other_warps |= !same_warp;
                        if score < b.0 {
                            *b = pick;
                        }
                    }
                    None => {
                        keys.push(key);
                        best.insert(key, (pick, !same_warp, false));
                    }
                }
            }
            if cut {
                break;
            }
        }
        if cut {
            for v in best.values_mut() {
                v.2 = true;
            }
        }
    }
    let mut out = Vec::new();
    // One race per site pair: a same-address write is reported once, from the store; a
    // pair already reported the other way round is not repeated.
    let mut seen: FxHashSet<(u32, u32)> = FxHashSet::default();
    for key in keys {
        let (((_, _, _), xi, yi), other_warps, cut) = best[&key];
        let (x, y) = (&insts[xi as usize], &insts[yi as usize]);
        let pair = (x.site.min(y.site), x.site.max(y.site));
        if !seen.insert(pair) {
            continue;
        }
        let kind = match key.0 {
            k if k == RaceKind::SameAddressWrite as u8 => RaceKind::SameAddressWrite,
            k if k == RaceKind::SharedMissingBarrier as u8 => RaceKind::SharedMissingBarrier,
            _ => RaceKind::GlobalNeighbour,
        };
        let side = |x: &Inst| {
            let site = &model.sites[x.site as usize];
            let mut cap = Run::new(model, config);
            cap.capture = Some((x.seq, None));
            cap.record_shared = x.block == 0;
            let bid = blocks[x.block as usize];
            let _ = cap.thread(x.thread, x.block, bid);
            let element = cap
                .capture
                .and_then(|(_, e)| e)
                .unwrap_or_else(|| site.access.array.clone());
            let side = RaceSide {
                range: site.access.range.clone(),
                line: site.line,
                thread: thread_idx(config, x.thread),
                block: bid,
                op: site.op,
                element,
                stmt: site.stmt.clone(),
                index_text: site.access.index_texts.join("]["),
            };
            (side, cap.captured_iters)
        };
        let ((sx, ix), (sy, iy)) = (side(x), side(y));
        // Program order, the same for every thread: the iterations of the loops around
        // both accesses, then the statements' order in the text, then the write first.
        let common = ix
            .iter()
            .zip(&iy)
            .take_while(|(a, b)| a.0 == b.0)
            .map(|(a, b)| a.1.cmp(&b.1))
            .find(|o| o.is_ne());
        let position = |i: &Inst| {
            let site = &model.sites[i.site as usize];
            (site.order, !site.op.writes())
        };
        let x_first = match common {
            Some(o) => o.is_lt(),
            None => (position(x), x.seq) <= (position(y), y.seq),
        };
        let (f, s, first, second) = if x_first {
            (x, y, sx, sy)
        } else {
            (y, x, sy, sx)
        };
        let mask = f.mask | s.mask;
        let mut assumed: Vec<String> = Vec::new();
        for (i, (name, v)) in run.assumed.iter().enumerate() {
            if mask & (1u32.checked_shl(i as u32).unwrap_or(1 << 31)) != 0 {
                assumed.push(format!("`{name}` = {v}"));
            }
        }
        let loop_carried = f.site != s.site
            && model.sites[f.site as usize].order > model.sites[s.site as usize].order;
        let barrier_at = (f.site != s.site)
            .then(|| barrier_place(model, &first.stmt, &second.stmt, loop_carried))
            .flatten();
        out.push(Race {
            barrier_at,
            kind,
            space: model.sites[f.site as usize].space,
            loop_carried,
            first,
            second,
            same_warp: !other_warps && !cut,
            block_dims: config.block,
            multi_block,
            assumption: (!assumed.is_empty()).then(|| assumed.join(" and ")),
            launch_line: config.launch_line,
        });
    }
    out
}

/// Where a barrier between the statements `first` and `second` goes: before the step that
/// holds `second` in the innermost statement list holding both, or, across a loop's back
/// edge, after the step of the loop body that holds `first`. `None` when they are the
/// same statement or the place is not in a statement list.
fn barrier_place(
    model: &Model<'_>,
    first: &TextRange,
    second: &TextRange,
    loop_carried: bool,
) -> Option<BarrierPlace> {
    if first == second && !loop_carried {
        return None;
    }
    let holds = |s: &Step, r: &TextRange| s.range().start <= r.start && r.end <= s.range().end;
    let mut list: &[Step] = &model.steps.steps;
    let mut in_thread_branch = false;
    let mut in_loop_body = false;
    // After the step that holds `first` in the innermost loop body around both.
    let mut loop_place: Option<BarrierPlace> = None;
    loop {
        let (Some(a), Some(b)) = (
            list.iter().position(|s| holds(s, first)),
            list.iter().position(|s| holds(s, second)),
        ) else {
            return None;
        };
        if in_loop_body {
            loop_place = Some(BarrierPlace {
                step: list[a].range().clone(),
                after: true,
                in_thread_branch,
            });
        }
        if loop_carried {
            // The pair meets across the back edge of the innermost loop around both.
            if a != b {
                return loop_place;
            }
        } else if a != b {
            return Some(BarrierPlace {
                step: list[b].range().clone(),
                after: false,
                in_thread_branch,
            });
        }
        match &list[a] {
            Step::If {
                condition_range,
                then_steps,
                else_steps,
                ..
            } => {
                in_thread_branch |= model.thread_branch(condition_range, first.start);
                let in_then = then_steps.iter().any(|s| holds(s, first));
                list = if in_then { then_steps } else { else_steps };
                in_loop_body = false;
            }
            Step::For { body, .. } | Step::Loop { body, .. } => {
                list = body;
                in_loop_body = true;
            }
            _ => return if loop_carried { loop_place } else { None },
        }
    }
}

impl Model<'_> {
    /// Whether the `if` whose condition is at `condition` (around `offset`; the syntax's
    /// condition range holds its parentheses too) branches on the thread: the syntax's
    /// reading of the condition (the thread index, a lane, a `thread_rank()`, a local
    /// that carries them).
    fn thread_branch(&self, condition: &TextRange, offset: usize) -> bool {
        self.file.enclosing(offset).iter().any(|e| {
            matches!(
                &e.kind,
                kernaut_syntax::EnclosingKind::If {
                    condition_range,
                    thread_dependent: true,
                    ..
                } if condition_range.start <= condition.start && condition.end <= condition_range.end
            )
        })
    }
}

/// Which threads a barrier orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum BarrierScope {
    /// Every thread of the block (`__syncthreads()`, `block.sync()`).
    Block,
    /// The lanes of one warp (`__syncwarp()`, a tile's `sync()`).
    Warp,
    /// Every thread of the grid (`grid.sync()`).
    Grid,
    /// A barrier whose set of threads the model does not know (a named barrier with a
    /// count, a device function that synchronises); taken to order the block.
    Other,
}

impl BarrierScope {
    /// `block`, `warp`, `grid`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            BarrierScope::Block => "block",
            BarrierScope::Warp => "warp",
            BarrierScope::Grid => "grid",
            BarrierScope::Other => "other",
        }
    }
}

/// One thing that happens in a statement of a kernel body, in program order, as the race
/// model sees it: for the barrier-interval query (`kernaut-ide`'s `barrier_intervals`).
#[derive(Clone, Debug)]
pub enum BodyEvent {
    /// A memory access.
    Access {
        /// The access expression.
        range: TextRange,
        /// Its 1-based line.
        line: u32,
        /// The memory.
        space: Space,
        /// Read, write or both.
        op: Op,
    },
    /// A barrier call starting at `at`.
    Barrier {
        /// Where the call starts.
        at: usize,
        /// Which threads it orders.
        scope: BarrierScope,
    },
}

/// The body of `kernel` as the race model walks it: its steps and the events of each
/// statement, by the statement's start. Global accesses are those of buffers the kernel
/// writes (a buffer it only reads cannot race). `None` where the model does not run the
/// kernel (a barrier in a condition or a loop header).
pub fn body_events(
    file: &SourceFile,
    kernel: &Function,
    shared: &[SharedAccess],
    global: &[SharedAccess],
    calls: &[kernaut_syntax::CallSite],
    line_of: &dyn Fn(usize) -> u32,
) -> Option<(BodySteps, FxHashMap<usize, Vec<BodyEvent>>)> {
    let m = Model::new(file, kernel, shared, global, calls, line_of)?;
    let mut out: FxHashMap<usize, Vec<BodyEvent>> = FxHashMap::default();
    for (stmt, evs) in &m.events {
        let list = evs
            .iter()
            .filter_map(|e| match *e {
                Event::Access(i) => {
                    let s = &m.sites[i as usize];
                    (s.space == Space::Shared || m.written[s.buffer as usize]).then(|| {
                        BodyEvent::Access {
                            range: s.access.range.clone(),
                            line: s.line,
                            space: s.space,
                            op: s.op,
                        }
                    })
                }
                Event::Barrier(b, at) => Some(BodyEvent::Barrier {
                    at,
                    scope: match b {
                        Barrier::Block => BarrierScope::Block,
                        Barrier::Warp => BarrierScope::Warp,
                        Barrier::Grid => BarrierScope::Grid,
                        Barrier::Unknown => BarrierScope::Other,
                    },
                }),
            })
            .collect();
        out.insert(*stmt, list);
    }
    Some((m.steps, out))
}
