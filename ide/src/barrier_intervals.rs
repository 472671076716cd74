//! The barrier intervals of a kernel: the stretches of its body between two barriers
//! that order the whole block, with the shared and global accesses in each, and which of
//! them race with another access of the same interval (issue 26).
//!
//! The body is walked as the race model walks it ([`crate::races::body_events`]): its
//! statements, `if`s, loops and exits, and per statement the accesses and barrier calls
//! in program order. An interval is named by the point that opens it (the kernel's entry
//! or a block barrier) and holds every access reachable from there without passing
//! another block barrier; it closes at each block barrier (or the kernel's exit) that can
//! come next. Loops are followed around their back edge, so the interval a barrier at the
//! top of a loop body opens also holds what the previous iteration does after the last
//! barrier of the body (the missing second barrier of a double-buffered loop). An `if`
//! joins both branches, and a loop is taken to possibly run no iteration unless it is a
//! `for` whose first test holds on constants, so an interval may list an access that only
//! a path the launch never takes reaches: membership means "may share", never "races". A warp barrier (`__syncwarp()`) orders the lanes of one warp
//! only: it is listed inside the interval, which it does not close.
//!
//! Which accesses conflict comes from the race model itself ([`crate::races`]): two
//! accesses of one interval are marked when the model found two threads touching one
//! address through them under a launch the host code shows. An interval with accesses
//! and no mark is not claimed race-free: it only had no race the model could prove.

use std::collections::{BTreeMap, BTreeSet};

use kernaut_syntax::{Step, TextRange};
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::analysis::{Analysis, Cancellable, FileId};
use crate::races::{BodyEvent, Op, Race, RaceKind, Space};

pub use crate::races::BarrierScope;

/// A barrier call of the kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BarrierCall {
    /// The call.
    pub range: TextRange,
    /// Its 1-based line.
    pub line: u32,
    /// The call as written (`__syncthreads()`).
    pub text: String,
    /// Which threads it orders.
    pub scope: BarrierScope,
}

/// What opens or closes an interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Edge {
    /// The kernel's entry.
    Entry,
    /// A barrier: an index into [`BarrierIntervals::barriers`].
    Barrier(usize),
    /// The kernel's end (or a `return`).
    Exit,
}

/// One access of an interval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IntervalAccess {
    /// The access expression.
    pub range: TextRange,
    /// Its 1-based line.
    pub line: u32,
    /// The access as written (`tile[threadIdx.y][threadIdx.x]`).
    pub text: String,
    /// `shared` or `global`.
    pub space: &'static str,
    /// `reads`, `writes` or `updates`.
    pub op: &'static str,
    /// The races the model found between this access and another of the same interval
    /// (or itself, executed by two threads), in words: "thread (0,1) writes `out[0]` at
    /// line 12; thread (0,0) writes it too".
    pub conflicts: Vec<String>,
}

/// The stretch between two barriers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Interval {
    /// What opens it.
    pub opens: Edge,
    /// What can close it (the next block barriers, or the exit).
    pub closes: Vec<Edge>,
    /// The accesses it holds, in the order of the text.
    pub accesses: Vec<IntervalAccess>,
    /// Warp barriers inside it (indices into [`BarrierIntervals::barriers`]).
    pub warp_barriers: Vec<usize>,
}

impl Interval {
    /// Whether an access of the interval races with another one of it.
    pub fn has_conflict(&self) -> bool {
        self.accesses.iter().any(|a| !a.conflicts.is_empty())
    }
}

/// The barrier intervals of one kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BarrierIntervals {
    /// The kernel.
    pub kernel: String,
    /// Every barrier call of the body, in the order of the text.
    pub barriers: Vec<BarrierCall>,
    /// The intervals: the one the entry opens first, then by opening barrier.
    pub intervals: Vec<Interval>,
    /// Whether the race model ran the kernel under a launch the host shows (without one
    /// no access is marked).
    pub launched: bool,
}

impl BarrierIntervals {
    /// `entry`, `__syncthreads() (line 9)`, `exit`.
    pub fn edge_name(&self, e: Edge) -> String {
        match e {
            Edge::Entry => "kernel entry".to_string(),
            Edge::Exit => "kernel exit".to_string(),
            Edge::Barrier(i) => match self.barriers.get(i) {
                Some(b) => format!("{} (line {})", b.text, b.line),
                None => "a barrier".to_string(),
            },
        }
    }
}

/// The barrier intervals of `kernel` (defined in `file`) ([`Analysis::barrier_intervals`]).
pub(crate) fn barrier_intervals(
    db: &Analysis,
    file: FileId,
    kernel: &str,
) -> Cancellable<Option<BarrierIntervals>> {
    let (path, _) = db.data(file)?;
    db.query("barrier_intervals", || {
        intervals_of(&db.for_path(path), path, kernel)
    })
}

fn intervals_of(a: &Analysis, path: &str, kernel: &str) -> Option<BarrierIntervals> {
    let data = a.file(path)?;
    let facts = data.facts();
    let k = facts
        .kernel(kernel)
        .or_else(|| facts.kernel(kernaut_syntax::short_name(kernel)))?
        .clone();
    let body = k.body_range.clone()?;
    let knowledge = a.knowledge.as_deref()?;
    let fc = a.config_for_path(path);
    let ctx = crate::rules::RuleContext::with_settings(
        &data.source,
        knowledge,
        crate::rules::RuleSettings {
            arch: fc.arch,
            arch_configured: fc.arch_configured,
            targets: Some(&fc.targets),
            defines: &fc.defines,
            target_defines: &fc.target_defines,
            levels: &fc.rules,
        },
    )
    .in_host(a, path)
    .with_shared_accesses(data.accesses_slot());
    let calls = ctx.calls_in_body(body.start);
    let shared = ctx.shared_accesses_from(body.clone());
    let global = data.source.global_accesses();
    let line_of = |o: usize| data.line_of(o);
    let (steps, events) =
        crate::races::body_events(&data.source, &k, shared, &global, &calls, &line_of)?;
    let text = data.source.text();
    // Barriers and accesses get indices in the order of the text.
    let mut barrier_at: Vec<(usize, BarrierScope)> = Vec::new();
    let mut access_at: BTreeMap<usize, (TextRange, u32, Space, Op)> = BTreeMap::new();
    for evs in events.values() {
        for e in evs {
            match e {
                BodyEvent::Barrier { at, scope } => barrier_at.push((*at, *scope)),
                BodyEvent::Access {
                    range,
                    line,
                    space,
                    op,
                    ..
                } => {
                    access_at.insert(range.start, (range.clone(), *line, *space, *op));
                }
            }
        }
    }
    barrier_at.sort_by_key(|(at, _)| *at);
    let barriers: Vec<BarrierCall> = barrier_at
        .iter()
        .map(|(at, scope)| {
            let range = calls
                .iter()
                .find(|c| c.range.start == *at)
                .map_or(*at..*at, |c| c.range.clone());
            BarrierCall {
                text: text.get(range.clone()).unwrap_or("").trim().to_string(),
                line: data.line_of(*at),
                range,
                scope: *scope,
            }
        })
        .collect();
    let mut walk = Walk {
        events: &events,
        barrier_index: barrier_at
            .iter()
            .enumerate()
            .map(|(i, (at, _))| (*at, i))
            .collect(),
        access_index: access_at
            .keys()
            .enumerate()
            .map(|(i, at)| (*at, i))
            .collect(),
        open: BTreeMap::new(),
    };
    walk.open.insert(Edge::Entry, Open::default());
    let mut live = BTreeSet::from([Edge::Entry]);
    let flow = walk.steps(&steps.steps, &mut live);
    for e in flow.normal.iter().chain(&flow.exits) {
        walk.close(*e, Edge::Exit);
    }
    // Breaks or continues outside a loop (not C++): the rest is the exit.
    for e in flow.breaks.iter().chain(&flow.continues) {
        walk.close(*e, Edge::Exit);
    }
    let accesses: Vec<(TextRange, u32, Space, Op)> = access_at.into_values().collect();
    let races: Vec<Race> = ctx
        .races()
        .iter()
        .filter(|r| body.start <= r.second.range.start && r.second.range.end <= body.end)
        .cloned()
        .collect();
    let intervals = walk
        .open
        .into_iter()
        .filter(|(_, o)| !o.accesses.is_empty() || !o.closes.is_empty())
        .map(|(opens, o)| {
            let held: Vec<usize> = o.accesses.iter().copied().collect();
            let access = |i: usize| {
                let (range, line, space, op) = accesses[i].clone();
                let conflicts = races
                    .iter()
                    .filter(|r| {
                        let has = |x: &TextRange| held.iter().any(|&j| accesses[j].0 == *x);
                        has(&r.first.range)
                            && has(&r.second.range)
                            && (r.first.range == range || r.second.range == range)
                    })
                    .map(race_words)
                    .collect();
                IntervalAccess {
                    text: text.get(range.clone()).unwrap_or("").to_string(),
                    line,
                    space: match space {
                        Space::Shared => "shared",
                        Space::Global => "global",
                    },
                    op: op.verb(),
                    range,
                    conflicts,
                }
            };
            Interval {
                opens,
                closes: o.closes.into_iter().collect(),
                accesses: held.iter().map(|&i| access(i)).collect(),
                warp_barriers: o.warp.into_iter().collect(),
            }
        })
        .collect();
    Some(BarrierIntervals {
        kernel: k.name.clone(),
        barriers,
        intervals,
        launched: has_block_launch(&ctx, &k),
    })
}

/// Whether a launch the host code shows fixes the kernel's block (the race model runs
/// only such kernels).
fn has_block_launch(ctx: &crate::rules::RuleContext<'_>, k: &kernaut_syntax::Function) -> bool {
    ctx.scope()
        .launches(&k.name)
        .iter()
        .any(|(_, site)| site.block.value.is_some())
}

/// The race in the words of the race rules' messages.
fn race_words(r: &Race) -> String {
    let first = format!(
        "{} {} `{}` at line {}",
        r.thread_name(&r.first),
        r.first.op.verb(),
        r.first.element,
        r.first.line
    );
    let what = match r.kind {
        RaceKind::SameAddressWrite => format!(
            "; {} {} it too",
            r.thread_name(&r.second),
            r.second.op.verb()
        ),
        RaceKind::DataDependentUpdate => {
            "; other threads may reach the same element (the index is loaded from memory)"
                .to_string()
        }
        _ => format!(
            " and {} {} it at line {}{}",
            r.thread_name(&r.second),
            r.second.op.verb(),
            r.second.line,
            if r.loop_carried {
                " in the next iteration"
            } else {
                ""
            }
        ),
    };
    let assumed = r
        .assumption
        .as_ref()
        .map(|a| format!(" (assuming {a})"))
        .unwrap_or_default();
    format!("{first}{what}{assumed}")
}

/// Whether a `for` loop's condition holds for its start value, all on constants (`for
/// (int t = 0; t < 4; ++t)`, `TILE` a macro): then it runs at least once.
fn runs_once(
    var: Option<&str>,
    start: Option<&kernaut_syntax::IndexExpr>,
    condition: Option<&[kernaut_syntax::GuardComparison]>,
) -> bool {
    let (Some(var), Some(start), Some(cond)) = (var, start, condition) else {
        return false;
    };
    let Some(v0) = start.eval(&|_| None) else {
        return false;
    };
    let leaf = |x: &kernaut_syntax::IndexExpr| match x {
        kernaut_syntax::IndexExpr::LoopVar { name, .. } if name == var => Some(v0),
        _ => None,
    };
    !cond.is_empty()
        && cond.iter().all(|c| {
            matches!((c.left.eval(&leaf), c.right.eval(&leaf)), (Some(l), Some(r)) if c.holds(l, r))
        })
}

/// An interval being collected.
#[derive(Debug, Default)]
struct Open {
    accesses: BTreeSet<usize>,
    closes: BTreeSet<Edge>,
    warp: BTreeSet<usize>,
}

/// Where control can go after some steps: on, out of the loop, to its next iteration,
/// out of the kernel; each the set of intervals open there.
#[derive(Debug, Default)]
struct Flow {
    normal: BTreeSet<Edge>,
    breaks: BTreeSet<Edge>,
    continues: BTreeSet<Edge>,
    exits: BTreeSet<Edge>,
}

struct Walk<'e> {
    events: &'e FxHashMap<usize, Vec<BodyEvent>>,
    barrier_index: FxHashMap<usize, usize>,
    access_index: FxHashMap<usize, usize>,
    open: BTreeMap<Edge, Open>,
}

impl Walk<'_> {
    fn close(&mut self, interval: Edge, by: Edge) {
        self.open.entry(interval).or_default().closes.insert(by);
    }

    /// Walks `steps` with the intervals `live` open at their start.
    fn steps(&mut self, steps: &[Step], live: &mut BTreeSet<Edge>) -> Flow {
        let mut out = Flow::default();
        for s in steps {
            let f = self.step(s, live);
            out.breaks.extend(f.breaks);
            out.continues.extend(f.continues);
            out.exits.extend(f.exits);
            *live = f.normal;
            if live.is_empty() {
                break;
            }
        }
        out.normal = live.clone();
        out
    }

    fn step(&mut self, s: &Step, live: &BTreeSet<Edge>) -> Flow {
        let mut out = Flow::default();
        match s {
            Step::Stmt { range } => {
                let mut live = live.clone();
                if let Some(evs) = self.events.get(&range.start) {
                    for e in evs {
                        match e {
                            BodyEvent::Access { range, .. } => {
                                if let Some(&i) = self.access_index.get(&range.start) {
                                    for l in &live {
                                        self.open.entry(*l).or_default().accesses.insert(i);
                                    }
                                }
                            }
                            BodyEvent::Barrier { at, scope } => {
                                let Some(&b) = self.barrier_index.get(at) else {
                                    continue;
                                };
                                if *scope == BarrierScope::Warp {
                                    for l in &live {
                                        self.open.entry(*l).or_default().warp.insert(b);
                                    }
                                    continue;
                                }
                                for l in std::mem::take(&mut live) {
                                    self.close(l, Edge::Barrier(b));
                                }
                                self.open.entry(Edge::Barrier(b)).or_default();
                                live.insert(Edge::Barrier(b));
                            }
                        }
                    }
                }
                out.normal = live;
            }
            Step::Exit { kind, .. } => match *kind {
                "return" => out.exits = live.clone(),
                "break" => out.breaks = live.clone(),
                _ => out.continues = live.clone(),
            },
            Step::If {
                then_steps,
                else_steps,
                ..
            } => {
                let mut a = live.clone();
                let mut b = live.clone();
                let fa = self.steps(then_steps, &mut a);
                let fb = self.steps(else_steps, &mut b);
                for f in [fa, fb] {
                    out.normal.extend(f.normal);
                    out.breaks.extend(f.breaks);
                    out.continues.extend(f.continues);
                    out.exits.extend(f.exits);
                }
            }
            Step::For { body, .. } | Step::Loop { body, .. } => {
                // A `for` whose first test holds on constants runs at least once: its
                // entry does not fall through to what follows.
                let once = match s {
                    Step::For {
                        var,
                        start,
                        condition,
                        ..
                    } => runs_once(var.as_deref(), start.as_ref(), condition.as_deref()),
                    _ => false,
                };
                // Around the back edge until the intervals open at the loop's head settle
                // (they only grow, and there are finitely many).
                let mut head = live.clone();
                let mut breaks = BTreeSet::new();
                let mut ends = BTreeSet::new();
                loop {
                    let mut inner = head.clone();
                    let f = self.steps(body, &mut inner);
                    breaks.extend(f.breaks);
                    out.exits.extend(f.exits);
                    ends.extend(f.normal.iter().copied());
                    ends.extend(f.continues.iter().copied());
                    let mut next = head.clone();
                    next.extend(f.normal);
                    next.extend(f.continues);
                    if next == head {
                        break;
                    }
                    head = next;
                }
                out.normal = if once { ends } else { head };
                out.normal.extend(breaks);
            }
            Step::Other { body, .. } => {
                // May or may not run; a `break` leaves it (a `switch`).
                let mut inner = live.clone();
                let f = self.steps(body, &mut inner);
                out.normal = live.clone();
                out.normal.extend(f.normal);
                out.normal.extend(f.breaks);
                out.continues = f.continues;
                out.exits = f.exits;
            }
        }
        out
    }
}
