//! The kernel report: every modelled cost of one kernel in one view, ranked, with the
//! figures after each quick fix ("what-ifs"), before the kernel ever runs.
//!
//! `Analysis::kernel_report(file, kernel)` gathers what the other queries compute, from
//! the same entry points, so that the hover, the lens and the report agree:
//!
//! - the launches of the kernel in every file (grid, block, dynamic shared memory as
//!   written and folded) and the occupancy at each launch's block;
//! - occupancy at the configuration the hover uses ([`crate::reports`]), the register
//!   count with its source, and when that count is assumed, occupancy at 32, 64, 128 and
//!   255 registers;
//! - every shared-memory access of the kernel's body through the bank model
//!   ([`Analysis::bank`]): wavefronts per request, the ideal, the conflict degree and the
//!   lanes that collide in the worst bank;
//! - every global access through the sector model (`kernaut_gpu::sectors`, evaluated as
//!   `coalescing/strided-global-access` evaluates it): sectors per request, the ideal,
//!   bytes used per sector fetched;
//! - async-copy pipelines (stages, wait depth, whether copy and compute can overlap),
//!   block barriers per loop iteration, and the compiler's spills, stack and SASS facts
//!   when compiled facts exist;
//! - the findings of the rules inside the kernel, ranked by an estimated cost, and the
//!   what-ifs.
//!
//! # The cost model
//!
//! The unit is one *memory transaction*: a shared-memory wavefront or a 32-byte global
//! sector of one warp-wide request. Each access counts its transactions times its
//! *executions*: the product of the trip counts of the loops around it inside the kernel
//! (a loop whose trip count the file does not fix counts once, and the entry says so).
//! The kernel's modelled memory transactions are the sum over its accesses (plus the
//! copies of async pipelines and the compiler's spill traffic).
//!
//! - A bank conflict costs its wavefronts above the ideal (one per 128 bytes the active
//!   lanes move) × executions.
//! - An uncoalesced global access costs its sectors above the ideal × executions.
//! - A wait for every async-copy group in a pipelined loop costs the loop's copy sectors
//!   × executions: the traffic that no longer overlaps the compute.
//! - Spills cost the local-memory sectors of one warp: the spilled bytes per thread
//!   (stores and loads), once.
//! - Lost occupancy, when a block size within the launch bounds gives more resident
//!   warps, costs the fraction of warps lost against that best.
//!
//! Each cost is shown as a share of the modelled transactions (occupancy: of the best
//! resident warps), never as a run time. Findings without a model are listed after those
//! with one, as "not costed".

use kernaut_gpu::banks::{AccessWidth, WARP_LANES};
use kernaut_gpu::occupancy::{smallest_best_block_size, OccupancyInput};
use kernaut_syntax::{AccessKind, EnclosingKind, SharedAccess, SourceFile, TextRange};
use std::sync::Arc;

use serde::Serialize;

use crate::analysis::{guarded, Analysis, Cancellable, FileId};
use crate::compiled::SPILLS_RULE;
use crate::diagnostic::{Fix, RuleDiagnostic};
use crate::reports::{OccupancyReport, RegsSource};
use crate::rules::async_ops::OpKind;

/// The rule whose finding the pipeline model costs.
const WAIT_ALL_RULE: &str = "async-copy/wait-all-in-pipelined-loop";
/// The register counts an assumed count is compared with.
const REGISTER_STEPS: [u32; 4] = [32, 64, 128, 255];
/// Bytes a copy is taken to move per lane when its size is not folded.
const ASSUMED_COPY_BYTES: u64 = 16;

/// What a report computes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReportConfig {
    /// Apply each quick fix in a scratch copy and report the figures after it (costs a
    /// re-analysis per fix; the hover and the lens leave it off).
    pub what_ifs: bool,
}

/// The "report" lens of one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportLens {
    /// The kernel's name, where the lens sits.
    pub range: TextRange,
    /// The kernel.
    pub kernel: String,
    /// `report · 45% bank-conflict (line 16)`.
    pub title: String,
}

/// Every modelled cost of one kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelReport {
    /// The kernel's name.
    pub kernel: String,
    /// The range of the kernel's name.
    pub name_range: TextRange,
    /// The 1-based line of the kernel's name.
    pub line: u32,
    /// The architecture modelled.
    pub arch: String,
    /// The kernel's launches in every file.
    pub launches: Vec<LaunchEntry>,
    /// Occupancy at the configuration the hover and the lens use.
    pub occupancy: Option<OccupancySummary>,
    /// Every shared-memory access of the kernel's body.
    pub shared: Vec<SharedEntry>,
    /// Every global load or store of the kernel's body.
    pub global: Vec<GlobalEntry>,
    /// Async-copy pipelines: loops that copy, commit and wait.
    pub pipelines: Vec<PipelineEntry>,
    /// Loops of the kernel with their trip counts and block barriers per iteration.
    pub loops: Vec<LoopEntry>,
    /// What the compiler reported, when compiled facts exist.
    pub compiled: Option<CompiledEntry>,
    /// The kernel's modelled memory transactions (see the module's cost model).
    pub total_transactions: u64,
    /// The findings inside the kernel, costliest first.
    pub costs: Vec<CostEntry>,
    /// Each quick fix applied in a scratch copy, and the figures after it.
    pub what_ifs: Vec<WhatIf>,
    /// Assumptions, in sentences.
    pub notes: Vec<String>,
}

/// One launch of the kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaunchEntry {
    /// The file's name (without its folder) when the launch is in another file.
    pub file_name: Option<String>,
    /// The 1-based line.
    pub line: u32,
    /// The grid as written.
    pub grid: String,
    /// The block as written.
    pub block_text: String,
    /// The block folded, when the file fixes it.
    pub block: Option<[i64; 3]>,
    /// The dynamic shared memory as written.
    pub dynamic_smem_text: Option<String>,
    /// The dynamic shared memory folded.
    pub dynamic_smem: Option<i64>,
    /// The template arguments as written.
    pub template_args: Option<String>,
    /// Occupancy at this launch's block (the rest of the configuration as in
    /// [`KernelReport::occupancy`]).
    pub occupancy: Option<f64>,
}

/// Occupancy and the inputs it rests on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OccupancySummary {
    /// The block, x, y, z.
    pub block: [u32; 3],
    /// Where the block came from, in words.
    pub block_source: String,
    /// Registers per thread.
    pub registers: u32,
    /// Where the count came from, in words.
    pub registers_source: String,
    /// Whether the count is assumed rather than the compiler's.
    pub registers_assumed: bool,
    /// Static shared memory, bytes.
    pub static_smem: u32,
    /// Dynamic shared memory, bytes.
    pub dynamic_smem: u32,
    /// Occupancy (0 to 1), when the configuration launches.
    pub occupancy: Option<f64>,
    /// Resident warps per SM.
    pub active_warps: u32,
    /// The architecture's maximum warps per SM.
    pub max_warps: u32,
    /// Resident blocks per SM.
    pub blocks_per_sm: u32,
    /// The binding limiters.
    pub limiters: Vec<String>,
    /// Why the configuration cannot launch.
    pub error: Option<String>,
    /// With an assumed count: occupancy at 32, 64, 128 and 255 registers.
    pub at_registers: Vec<(u32, Option<f64>)>,
    /// The block size (within the launch bounds) with the most resident threads, and
    /// its occupancy.
    pub best_block: Option<(u32, f64)>,
    /// Occupancy against threads per block, the rest of the configuration fixed:
    /// (threads, occupancy).
    pub curve_threads: Vec<(u32, f64)>,
    /// Occupancy against registers per thread: (registers, occupancy).
    pub curve_registers: Vec<(u32, f64)>,
    /// Occupancy against shared memory per block: (bytes, occupancy).
    pub curve_shared: Vec<(u32, f64)>,
    /// The model's notes.
    pub notes: Vec<String>,
}

/// How often an access runs per thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Executions {
    /// The product of the known trip counts around it (1 outside loops).
    pub count: u64,
    /// Loops around it whose trip count is not known (each counted once).
    pub unknown_loops: u32,
}

/// One shared-memory access through the bank model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SharedEntry {
    /// The access's range.
    pub range: TextRange,
    /// Its 1-based line.
    pub line: u32,
    /// The access as written.
    pub text: String,
    /// `load`, `store`, `update` or `address`.
    pub op: String,
    /// Bytes per lane.
    pub width: Option<u64>,
    /// How often it runs.
    pub executions: Executions,
    /// Wavefronts per warp request, when modelled.
    pub wavefronts: Option<u32>,
    /// The wavefronts its bytes need (one per 128 bytes of the active lanes).
    pub ideal_wavefronts: Option<u32>,
    /// The conflict degree.
    pub conflict_degree: Option<u32>,
    /// The bank with the most distinct words, and the lanes that reach it.
    pub worst_bank: Option<u32>,
    /// Lanes of warp 0 that touch the worst bank at different words.
    pub colliding_lanes: Vec<u32>,
    /// Distinct 32-bit words per bank (the bank map of warp 0).
    pub words_per_bank: Vec<u32>,
    /// Why it is not modelled.
    pub unknown: Option<String>,
    /// Where the access is when it is in a device function the kernel calls.
    pub callee: Option<CalleeSite>,
}

/// Where an access of a device function the kernel calls is, and how it is reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CalleeSite {
    /// The device function.
    pub function: String,
    /// The file's name (without its folder) when the function is in another file.
    pub file_name: Option<String>,
    /// The 1-based line of the kernel's call the function is reached through.
    pub call_line: u32,
    /// The functions called on the way, the kernel's callee first.
    pub chain: Vec<String>,
}

/// One global access through the sector model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GlobalEntry {
    /// The access's range.
    pub range: TextRange,
    /// Its 1-based line.
    pub line: u32,
    /// The access as written.
    pub text: String,
    /// `load`, `store` or `update`.
    pub op: String,
    /// Bytes per lane.
    pub width: Option<u64>,
    /// How often it runs.
    pub executions: Executions,
    /// Sectors per warp request, when modelled.
    pub sectors: Option<u32>,
    /// The sectors its bytes need.
    pub ideal_sectors: Option<u32>,
    /// Distinct bytes the active lanes move.
    pub bytes: Option<u64>,
    /// Bytes used per 32-byte sector fetched.
    pub bytes_per_sector: Option<f64>,
    /// Lanes that issue it.
    pub active_lanes: u32,
    /// The byte distance between neighbouring lanes, when constant.
    pub lane_stride: Option<i64>,
    /// Why it is not modelled.
    pub unknown: Option<String>,
    /// Where the access is when it is in a device function the kernel calls.
    pub callee: Option<CalleeSite>,
}

/// An async-copy pipeline: a loop with copies and a wait.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelineEntry {
    /// The 1-based line of the loop.
    pub line: u32,
    /// The wait's range.
    pub wait_range: TextRange,
    /// Groups committed before the loop plus one, when counted.
    pub stages: Option<i64>,
    /// Groups the wait leaves pending.
    pub wait_depth: Option<i64>,
    /// Whether the next tile's copy can overlap the compute.
    pub overlap: bool,
    /// Copy calls in the loop.
    pub copies_per_iteration: u32,
    /// Global sectors the loop's copies read per warp and iteration.
    pub copy_sectors: u64,
    /// How often the loop body runs.
    pub executions: Executions,
}

/// A loop of the kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoopEntry {
    /// The 1-based line.
    pub line: u32,
    /// The header, as written.
    pub header: String,
    /// Its trip count, when known.
    pub trip_count: Option<u64>,
    /// Block barriers each iteration runs (nested loops not included).
    pub barriers_per_iteration: u32,
}

/// What the compiler reported for the kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompiledEntry {
    /// The toolkit.
    pub toolkit: String,
    /// The instantiation shown (the one with the most registers).
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Spill stores, bytes per thread.
    pub spill_store_bytes: u64,
    /// Spill loads, bytes per thread.
    pub spill_load_bytes: u64,
    /// Stack frame, bytes per thread.
    pub stack_frame_bytes: u64,
    /// SASS instructions, when disassembled.
    pub sass_instructions: Option<u32>,
    /// Local loads and stores in the SASS.
    pub sass_local: Option<(u32, u32)>,
}

/// What a cost is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostKind {
    /// Extra shared-memory wavefronts.
    SharedWavefronts,
    /// Extra global sectors.
    GlobalSectors,
    /// Async copies that no longer overlap the compute.
    SerializedCopies,
    /// Local-memory traffic of spills.
    Spills,
    /// Resident warps lost against the best block size.
    Occupancy,
    /// A finding the model does not cost.
    NotCosted,
}

/// One finding with its estimated cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostEntry {
    /// The rule (or `occupancy` for the report's own occupancy finding).
    pub rule: String,
    /// The finding's range.
    pub range: TextRange,
    /// Its 1-based line.
    pub line: u32,
    /// What the cost is made of.
    pub kind: CostKind,
    /// Extra transactions (for the memory kinds).
    pub extra_transactions: Option<u64>,
    /// The cost as a share of the modelled transactions (occupancy: of the best
    /// resident warps), 0 to 1.
    pub share: Option<f64>,
    /// One line: the figure and how it was counted.
    pub summary: String,
    /// The finding's message.
    pub message: String,
    /// The wiki section it cites.
    pub wiki: String,
}

/// One quick fix applied in a scratch copy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WhatIf {
    /// The fix's title (or the change, for an occupancy what-if).
    pub title: String,
    /// The rule whose fix it is.
    pub rule: String,
    /// The 1-based line of the finding.
    pub line: u32,
    /// Whether `check --fix` may apply the fix unreviewed.
    pub safe: bool,
    /// One line: what changes ("1 wavefront instead of 32").
    pub summary: String,
    /// Modelled transactions before.
    pub transactions_before: u64,
    /// Modelled transactions after.
    pub transactions_after: u64,
    /// Occupancy before.
    pub occupancy_before: Option<f64>,
    /// Occupancy after.
    pub occupancy_after: Option<f64>,
    /// Findings inside the kernel before and after.
    pub findings: (usize, usize),
    /// The fix's edits, for a front end that applies it (`ktui FILE.cu`); empty for a
    /// change the report only describes (a launch's block size).
    #[serde(skip)]
    pub edits: Vec<crate::diagnostic::TextEdit>,
}

/// The report of `kernel` (defined in `file`); `None` when the file defines no such
/// kernel.
pub(crate) fn kernel_report(
    db: &Analysis,
    file: FileId,
    kernel: &str,
    config: ReportConfig,
) -> Cancellable<Option<KernelReport>> {
    let (path, _) = db.data(file)?;
    db.query("kernel_report", || {
        build(&db.for_path(path), path, kernel, config)
    })
}

/// The kernel whose definition contains `offset`, or whose name (or a launch of
/// which) is at `offset`.
pub(crate) fn kernel_at(db: &Analysis, file: FileId, offset: usize) -> Cancellable<Option<String>> {
    let (path, data) = db.data(file)?;
    db.query("kernel_at", || {
        let facts = data.facts();
        if let Some(k) = facts.kernels.iter().find(|k| k.range.contains(&offset)) {
            return Some(k.name.clone());
        }
        let _ = path;
        facts
            .launches
            .iter()
            .find(|l| l.range.contains(&offset))
            .and_then(|l| facts.kernel(kernaut_syntax::short_name(&l.kernel)))
            .map(|k| k.name.clone())
    })
}

/// A "report" lens above each kernel of `file`: its title names the costliest finding,
/// its command (`kernaut.kernelReport`) opens the whole report.
pub(crate) fn report_lenses(db: &Analysis, file: FileId) -> Cancellable<Vec<ReportLens>> {
    let (path, data) = db.data(file)?;
    db.query("report_lenses", || {
        let a = db.for_path(path);
        let Some(prepared) = prepare(&a, path) else {
            return Vec::new();
        };
        data.facts()
            .kernels
            .iter()
            .filter_map(|k| {
                let r = build_with(&a, path, &k.name, ReportConfig::default(), &prepared)?;
                Some(ReportLens {
                    range: k.name_range.clone(),
                    kernel: k.name.clone(),
                    title: r.lens_title(),
                })
            })
            .collect()
    })
}

/// The report without what-ifs, for features inside a query (the kernel hover), of a
/// kernel with findings: a kernel without one has no finding to cost, and its hover
/// pays nothing for the report.
pub(crate) fn kernel_report_at(db: &Analysis, path: &str, kernel: &str) -> Option<KernelReport> {
    guarded(|| {
        let range = db.file(path)?.facts().kernel(kernel)?.range.clone();
        let diagnostics = crate::rules::host::diagnostics_at(db, path, true)?;
        if !diagnostics
            .iter()
            .any(|d| range.start <= d.range.start && d.range.end <= range.end)
        {
            return None;
        }
        build(db, path, kernel, ReportConfig::default())
    })
    .flatten()
}

/// What every kernel's report of one file reads: computed once per file, so that the
/// lenses of a file with many kernels cost one pass over it.
struct Prepared {
    /// The file's global accesses.
    globals: Vec<SharedAccess>,
    /// The file's functions with async-copy operations or barriers, classified.
    async_functions: Arc<[crate::rules::async_ops::AsyncFunction]>,
    /// The file's diagnostics (the cached rules run).
    diagnostics: Arc<Vec<RuleDiagnostic>>,
    /// The quoted headers the file includes that the host holds (where the kernels'
    /// calls may lead).
    headers: Vec<String>,
}

fn prepare(a: &Analysis, path: &str) -> Option<Prepared> {
    let data = a.file(path)?;
    let async_functions = match a.knowledge.as_deref() {
        Some(knowledge) => {
            let fc = a.config_for_path(path);
            crate::rules::RuleContext::with_settings(
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
            .with_shared_accesses(data.accesses_slot())
            .async_functions()
        }
        None => Arc::from(Vec::new()),
    };
    Some(Prepared {
        globals: data.source.global_accesses(),
        async_functions,
        diagnostics: crate::rules::host::diagnostics_at(a, path, true).unwrap_or_default(),
        headers: crate::callers::header_paths(a, path),
    })
}

fn build(a: &Analysis, path: &str, kernel: &str, config: ReportConfig) -> Option<KernelReport> {
    build_with(a, path, kernel, config, &prepare(a, path)?)
}

fn build_with(
    a: &Analysis,
    path: &str,
    kernel: &str,
    config: ReportConfig,
    prepared: &Prepared,
) -> Option<KernelReport> {
    let data = a.file(path)?;
    let facts = data.facts();
    let k = facts
        .kernel(kernel)
        .or_else(|| facts.kernel(kernaut_syntax::short_name(kernel)))?
        .clone();
    let src = &data.source;
    let text = src.text();
    let inside = |r: &TextRange| k.range.start <= r.start && r.end <= k.range.end;
    let mut notes = Vec::new();

    let occ = crate::reports::occupancy_for(a, path, &k.name);
    let occupancy = occ.as_ref().map(|o| occupancy_summary(a, path, o));

    // Launches in every file, with occupancy at each block.
    let short = kernaut_syntax::short_name(&k.name);
    let launches: Vec<LaunchEntry> = a
        .launches_of(path, short)
        .into_iter()
        .map(|(p, l)| {
            let line = a.file(&p).map_or(1, |d| d.line_of(l.range.start));
            let occupancy = match (&occ, l.block.value) {
                (Some(o), Some(b)) => {
                    let threads = b.iter().product::<i64>();
                    u32::try_from(threads).ok().and_then(|t| {
                        let dynamic = l
                            .shared_bytes
                            .and_then(|d| u32::try_from(d).ok())
                            .unwrap_or(o.dynamic_smem);
                        o.what_if(o.arch, t, o.regs_per_thread, o.static_smem, dynamic)
                            .1
                            .ok()
                            .map(|r| r.occupancy)
                    })
                }
                _ => None,
            };
            LaunchEntry {
                file_name: (p != path)
                    .then(|| p.rsplit(['/', '\\']).next().unwrap_or(&p).to_string()),
                line,
                grid: l.grid.text.clone(),
                block_text: l.block.text.clone(),
                block: l.block.value,
                dynamic_smem_text: l.shared_bytes_text.clone(),
                dynamic_smem: l.shared_bytes,
                template_args: l.template_args.clone(),
                occupancy,
            }
        })
        .collect();

    // Shared accesses through the bank model.
    let mut shared = Vec::new();
    for access in data.accesses().iter().filter(|x| inside(&x.range)) {
        let executions = executions(src, access.range.start, &k.range);
        let bank = crate::reports::bank_at(a, path, access);
        shared.push(shared_entry(data, text, access, executions, bank));
    }

    // Global accesses through the sector model, as the coalescing rule evaluates them.
    let shape = crate::model::Scope::of(a, path).map_or([None; 3], |scope| {
        crate::model::launch_shape(&scope, Some(&k.name))
    });
    // The kernel's parameters every launch passes as one constant, as the rule reads
    // them.
    let fixed = crate::model::Scope::of(a, path)
        .map(|scope| crate::model::fixed_kernel_args(&scope, &k))
        .unwrap_or_default();
    let with_fixed = |access: &SharedAccess| -> Option<SharedAccess> {
        if fixed.is_empty() {
            return None;
        }
        let offset = access.byte_offset.substitute(&|n| {
            let (name, v) = fixed.iter().find(|(p, _)| p == n)?;
            Some(kernaut_syntax::IndexExpr::Const {
                name: name.clone(),
                value: *v,
            })
        });
        (offset != access.byte_offset)
            .then(|| crate::callers::rebuilt(access, access.root.clone(), offset))
    };
    let mut global = Vec::new();
    for access in prepared.globals.iter().filter(|x| inside(&x.range)) {
        if access.kind == AccessKind::AddressOf {
            continue;
        }
        let executions = executions(src, access.range.start, &k.range);
        let bound = with_fixed(access);
        global.push(global_entry(
            data,
            text,
            src,
            bound.as_ref().unwrap_or(access),
            shape,
            executions,
            &crate::model::ActiveLanes::All,
        ));
    }

    // The accesses of the device functions the kernel calls, under the kernel's launch
    // and with the arguments of the calls.
    let contexts =
        crate::callers::Callees::new(crate::callers::callee_files(a, path, &prepared.headers))
            .contexts_of_kernel(&k, shape);
    let kernel_launch =
        crate::model::Scope::of(a, path).map(|scope| crate::model::launch_config(&scope, Some(&k)));
    let mut globals_of: Vec<(String, Vec<SharedAccess>)> = Vec::new();
    for c in &contexts {
        let (Some(fdata), Some(scope), Some(launch)) = (
            a.file(&c.function_path),
            crate::model::Scope::of(a, &c.function_path),
            kernel_launch.as_ref(),
        ) else {
            continue;
        };
        if !globals_of.iter().any(|(p, _)| *p == c.function_path) {
            globals_of.push((c.function_path.clone(), fdata.source.global_accesses()));
        }
        let Some((_, fglobals)) = globals_of.iter().find(|(p, _)| *p == c.function_path) else {
            continue;
        };
        let (bound_shared, bound_global) = c.bound_accesses(fdata.accesses(), fglobals);
        let site = CalleeSite {
            function: c.function.clone(),
            file_name: (c.function_path != path).then(|| {
                c.function_path
                    .rsplit(['/', '\\'])
                    .next()
                    .unwrap_or(&c.function_path)
                    .to_string()
            }),
            call_line: data.line_of(c.call_range.start),
            chain: c.chain.clone(),
        };
        let call_runs = executions(src, c.call_range.start, &k.range);
        let runs = |offset: usize| {
            let inner = executions(&fdata.source, offset, &c.function_range);
            Executions {
                count: call_runs.count.saturating_mul(inner.count),
                unknown_loops: call_runs.unknown_loops + inner.unknown_loops,
            }
        };
        let ftext = fdata.source.text();
        for access in &bound_shared {
            let bank =
                guarded(|| crate::callers::bound_bank(&scope, launch, c, &bound_shared, access))
                    .flatten();
            let mut e = shared_entry(fdata, ftext, access, runs(access.range.start), bank);
            e.callee = Some(site.clone());
            shared.push(e);
        }
        for access in bound_global
            .iter()
            .filter(|x| x.kind != AccessKind::AddressOf)
        {
            let bound = with_fixed(access);
            let mut e = global_entry(
                fdata,
                ftext,
                &fdata.source,
                bound.as_ref().unwrap_or(access),
                shape,
                runs(access.range.start),
                &c.lanes,
            );
            e.callee = Some(site.clone());
            global.push(e);
        }
    }

    // The kernel's findings, and those on the accesses of the device functions of its
    // file that it calls where, under its launch, the access costs more than it needs.
    let costly_callee_access = |r: &TextRange| {
        shared.iter().any(|s| {
            s.callee.as_ref().is_some_and(|c| c.file_name.is_none())
                && s.range == *r
                && s.wavefronts > s.ideal_wavefronts
        }) || global.iter().any(|g| {
            g.callee.as_ref().is_some_and(|c| c.file_name.is_none())
                && g.range == *r
                && g.sectors > g.ideal_sectors
        })
    };
    let diagnostics: Vec<RuleDiagnostic> = prepared
        .diagnostics
        .iter()
        .filter(|d| inside(&d.range) || costly_callee_access(&d.range))
        .cloned()
        .collect();

    let (pipelines, loops) = pipelines_and_loops(a, path, &k, &diagnostics, prepared);

    let compiled = a.compiled_kernel(path, short).map(|(f, v)| {
        let c = v[0];
        CompiledEntry {
            toolkit: f.toolkit.clone(),
            name: c.name.clone(),
            registers: c.registers,
            spill_store_bytes: c.spill_store_bytes,
            spill_load_bytes: c.spill_load_bytes,
            stack_frame_bytes: c.stack_frame_bytes,
            sass_instructions: c.sass.as_ref().map(|s| s.instructions),
            sass_local: c.sass.as_ref().map(|s| (s.local_loads, s.local_stores)),
        }
    });

    let spill_sectors = compiled
        .as_ref()
        .map_or(0, |c| c.spill_store_bytes + c.spill_load_bytes);
    let total_transactions = shared
        .iter()
        .filter_map(|s| s.wavefronts.map(|w| u64::from(w) * s.executions.count))
        .sum::<u64>()
        + global
            .iter()
            .filter_map(|g| g.sectors.map(|s| u64::from(s) * g.executions.count))
            .sum::<u64>()
        + pipelines
            .iter()
            .map(|p| p.copy_sectors * p.executions.count)
            .sum::<u64>()
        + spill_sectors;

    let costs = rank(
        data,
        &diagnostics,
        &shared,
        &global,
        &pipelines,
        compiled.as_ref(),
        occupancy.as_ref(),
        &k,
        total_transactions,
    );
    let unknown_trips = shared
        .iter()
        .map(|s| &s.executions)
        .chain(global.iter().map(|g| &g.executions))
        .chain(pipelines.iter().map(|p| &p.executions))
        .any(|e| e.unknown_loops > 0);
    if unknown_trips {
        notes.push(
            "A loop whose trip count the file does not fix counts each access inside it once."
                .into(),
        );
    }
    let mut report = KernelReport {
        kernel: k.name.clone(),
        name_range: k.name_range.clone(),
        line: data.line_of(k.name_range.start),
        arch: a.config.arch.to_string(),
        launches,
        occupancy,
        shared,
        global,
        pipelines,
        loops,
        compiled,
        total_transactions,
        costs,
        what_ifs: Vec::new(),
        notes,
    };
    if config.what_ifs {
        report.what_ifs = what_ifs(a, path, &report, &diagnostics);
    }
    Some(report)
}

fn occupancy_summary(a: &Analysis, path: &str, o: &OccupancyReport) -> OccupancySummary {
    let assumed = !matches!(o.regs_source, RegsSource::Compiler);
    let threads: u32 = o.block.iter().product();
    let at_registers = if assumed {
        REGISTER_STEPS
            .iter()
            .map(|&r| {
                let (_, res) = o.what_if(o.arch, threads, r, o.static_smem, o.dynamic_smem);
                (r, res.ok().map(|x| x.occupancy))
            })
            .collect()
    } else {
        Vec::new()
    };
    // The smallest block that reaches the best occupancy: 256 threads at 100 % is the
    // suggestion, not 1024 at the same 100 %.
    let best_block = smallest_best_block_size(
        o.arch,
        &OccupancyInput {
            threads_per_block: threads,
            ..o.input.clone()
        },
    )
    .ok()
    .flatten()
    .map(|b| (b.block_size, b.occupancy));
    let (occupancy, active_warps, max_warps, blocks_per_sm, error) = match &o.result {
        Ok(r) => (
            Some(r.occupancy),
            r.active_warps,
            r.max_warps_per_sm,
            r.blocks_per_sm,
            None,
        ),
        Err(e) => (None, 0, 0, 0, Some(e.clone())),
    };
    let curves = kernaut_gpu::occupancy::occupancy_curves(o.arch, &o.input).ok();
    let points =
        |f: fn(&kernaut_gpu::occupancy::Curves) -> &Vec<kernaut_gpu::occupancy::CurvePoint>| {
            curves
                .as_ref()
                .map(|c| f(c).iter().map(|p| (p.x, p.occupancy)).collect())
                .unwrap_or_default()
        };
    OccupancySummary {
        curve_threads: points(|c| &c.threads),
        curve_registers: points(|c| &c.registers),
        curve_shared: points(|c| &c.shared_memory),
        block: o.block,
        block_source: block_source_text(a, &o.block_source, path),
        registers: o.regs_per_thread,
        registers_source: match o.regs_source {
            RegsSource::LaunchBounds { .. } => "the `__launch_bounds__` limit".into(),
            RegsSource::Default => "assumed: a typical count".into(),
            RegsSource::Project => "assumed: `registers` in `.kernaut.toml`".into(),
            RegsSource::Comment => "assumed: the `kernaut: registers=` comment".into(),
            RegsSource::Compiler => "ptxas".into(),
        },
        registers_assumed: assumed,
        static_smem: o.static_smem,
        dynamic_smem: o.dynamic_smem,
        occupancy,
        active_warps,
        max_warps,
        blocks_per_sm,
        limiters: o.limiter_names().iter().map(|s| s.to_string()).collect(),
        error,
        at_registers,
        best_block,
        notes: o.notes.clone(),
    }
}

/// Where the block came from, in words (as the kernel hover says it).
fn block_source_text(a: &Analysis, src: &crate::reports::BlockSource, current: &str) -> String {
    use crate::reports::BlockSource;
    match src {
        BlockSource::Launch { file, line, .. } => {
            match file.and_then(|f| a.path(f)).filter(|p| *p != current) {
                Some(p) => format!("from the launch at {p}:{line}"),
                None => format!("from the launch at line {line}"),
            }
        }
        BlockSource::LaunchBounds => {
            "the `__launch_bounds__` maximum; no launch with a known block was found".into()
        }
        BlockSource::Default => "the configured default; no launch was found".into(),
    }
}

/// How often the statement at `offset` runs per thread: the product of the known trip
/// counts of the loops around it inside `kernel`.
fn executions(src: &SourceFile, offset: usize, kernel: &TextRange) -> Executions {
    let mut count: u64 = 1;
    let mut unknown_loops = 0;
    for e in src.enclosing(offset) {
        if !(kernel.start <= e.range.start && e.range.end <= kernel.end) {
            continue;
        }
        match &e.kind {
            EnclosingKind::For { .. }
            | EnclosingKind::While { .. }
            | EnclosingKind::DoWhile { .. } => match trip_count(src, &e.kind, e.range.start) {
                Some(t) => count = count.saturating_mul(t),
                None => unknown_loops += 1,
            },
            _ => {}
        }
    }
    Executions {
        count,
        unknown_loops,
    }
}

/// The trip count of a `for` loop whose start, end and step the file fixes.
fn trip_count(src: &SourceFile, kind: &EnclosingKind, at: usize) -> Option<u64> {
    let EnclosingKind::For {
        start: Some(start),
        end: Some(end),
        step: Some(step),
        ..
    } = kind
    else {
        return None;
    };
    let start = src.facts().fold_text(start, at)?;
    let (lo, hi, step) = if *step > 0 {
        (start, *end, *step)
    } else if *step < 0 {
        (*end, start, -*step)
    } else {
        return None;
    };
    if hi <= lo {
        return Some(0);
    }
    u64::try_from((hi - lo + step - 1) / step).ok()
}

fn op_name(kind: AccessKind) -> &'static str {
    match kind {
        AccessKind::Load => "load",
        AccessKind::Store => "store",
        AccessKind::LoadStore => "update",
        AccessKind::AddressOf => "address",
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn shared_entry(
    data: &crate::analysis::FileData,
    text: &str,
    access: &SharedAccess,
    executions: Executions,
    bank: Option<crate::reports::BankAnalysis>,
) -> SharedEntry {
    let mut e = SharedEntry {
        range: access.range.clone(),
        line: data.line_of(access.range.start),
        text: one_line(text.get(access.range.clone()).unwrap_or("")),
        op: op_name(access.kind).into(),
        width: access.width,
        executions,
        wavefronts: None,
        ideal_wavefronts: None,
        conflict_degree: None,
        worst_bank: None,
        colliding_lanes: Vec::new(),
        words_per_bank: Vec::new(),
        unknown: None,
        callee: None,
    };
    let Some(b) = bank else {
        e.unknown = Some("the bank model does not apply here".into());
        return e;
    };
    e.width = b.width.or(e.width);
    match &b.result {
        Ok(r) => {
            let width = b.width.unwrap_or(4);
            e.wavefronts = Some(r.wavefronts);
            e.ideal_wavefronts =
                Some(((u64::from(r.active_lanes) * width).div_ceil(128)).max(1) as u32);
            e.conflict_degree = Some(r.conflict_degree);
            e.words_per_bank = r.words_per_bank.to_vec();
            if r.conflict_degree > 1 {
                let (bank, lanes) = colliding_lanes(&b.addresses, width);
                e.worst_bank = bank;
                e.colliding_lanes = lanes;
            }
        }
        Err(why) => e.unknown = Some(why.clone()),
    }
    e
}

/// The bank with the most distinct 32-bit words among the lanes' addresses, and the
/// lanes that touch it.
fn colliding_lanes(addresses: &[Option<i64>], width: u64) -> (Option<u32>, Vec<u32>) {
    let mut words: Vec<Vec<(i64, u32)>> = vec![Vec::new(); 32];
    for (lane, a) in addresses.iter().enumerate().take(WARP_LANES) {
        let Some(a) = a else { continue };
        let mut w = a.div_euclid(4);
        while w * 4 < a + width as i64 {
            words[w.rem_euclid(32) as usize].push((w, lane as u32));
            w += 1;
        }
    }
    let distinct = |v: &Vec<(i64, u32)>| {
        let mut ws: Vec<i64> = v.iter().map(|(w, _)| *w).collect();
        ws.sort_unstable();
        ws.dedup();
        ws.len()
    };
    let Some((bank, list)) = words
        .iter()
        .enumerate()
        .max_by_key(|(b, v)| (distinct(v), std::cmp::Reverse(*b)))
    else {
        return (None, Vec::new());
    };
    let mut lanes: Vec<u32> = list.iter().map(|(_, l)| *l).collect();
    lanes.sort_unstable();
    lanes.dedup();
    (Some(bank as u32), lanes)
}

fn global_entry(
    data: &crate::analysis::FileData,
    text: &str,
    src: &SourceFile,
    access: &SharedAccess,
    shape: [Option<i64>; 3],
    executions: Executions,
    outer: &crate::model::ActiveLanes,
) -> GlobalEntry {
    let mut e = GlobalEntry {
        range: access.range.clone(),
        line: data.line_of(access.range.start),
        text: one_line(text.get(access.range.clone()).unwrap_or("")),
        op: op_name(access.kind).into(),
        width: access.width,
        executions,
        sectors: None,
        ideal_sectors: None,
        bytes: None,
        bytes_per_sector: None,
        active_lanes: 32,
        lane_stride: None,
        unknown: None,
        callee: None,
    };
    if let Some(why) = access.byte_offset.unknown_reason() {
        e.unknown = Some(why.to_string());
        return e;
    }
    let Some(width) = access
        .width
        .and_then(|w| u32::try_from(w).ok())
        .and_then(AccessWidth::from_bytes)
    else {
        e.unknown = Some("the element size is not known".into());
        return e;
    };
    let lanes = crate::callers::combine(
        outer,
        crate::model::active_lanes(src, access.range.start, shape),
    );
    let mask = match lanes {
        crate::model::ActiveLanes::All => u32::MAX,
        crate::model::ActiveLanes::Known { mask, .. } => mask,
        crate::model::ActiveLanes::Partial { .. } => {
            e.unknown = Some(
                "a condition leaves part of the warp idle in a way the model cannot evaluate"
                    .into(),
            );
            return e;
        }
        crate::model::ActiveLanes::DataDependent { condition } => {
            e.unknown = Some(format!(
                "which lanes pass `{condition}` depends on data loaded at run time"
            ));
            return e;
        }
    };
    e.active_lanes = mask.count_ones();
    match crate::rules::strided_global_access::warp_sectors(&access.byte_offset, width, shape, mask) {
        Some((r, stride)) => {
            e.sectors = Some(r.sectors);
            e.ideal_sectors = Some(r.ideal);
            e.bytes = Some(r.bytes);
            e.bytes_per_sector = Some(r.bytes as f64 / f64::from(r.sectors.max(1)));
            e.lane_stride = stride;
        }
        None => {
            e.unknown = Some(
                "the sectors depend on a value the file does not fix (they differ between the values tried)"
                    .into(),
            )
        }
    }
    e
}

fn pipelines_and_loops(
    a: &Analysis,
    path: &str,
    k: &kernaut_syntax::Function,
    diagnostics: &[RuleDiagnostic],
    prepared: &Prepared,
) -> (Vec<PipelineEntry>, Vec<LoopEntry>) {
    let Some(data) = a.file(path) else {
        return (Vec::new(), Vec::new());
    };
    let src = &data.source;
    let body = k.body_range.clone().unwrap_or(k.range.clone());
    let ops: Vec<_> = prepared
        .async_functions
        .iter()
        .filter(|(r, _)| {
            r.start <= body.start && body.end <= r.end || body.start <= r.start && r.end <= body.end
        })
        .flat_map(|(_, ops)| ops.iter().cloned())
        .filter(|o| k.range.contains(&o.call.range.start))
        .collect();
    let calls = src.calls_in(body.start);
    let is_barrier = |callee: &str, kind: Option<&OpKind>| {
        matches!(kind, Some(OpKind::Barrier))
            || callee.starts_with("__syncthreads")
            || callee.starts_with("bar.sync")
            || callee.starts_with("barrier.sync")
    };
    // The loops around every call and access of the kernel.
    let mut loop_ranges: Vec<(TextRange, EnclosingKind)> = Vec::new();
    let offsets = calls
        .iter()
        .map(|c| c.range.start)
        .chain(data.accesses().iter().map(|x| x.range.start))
        .chain(prepared.globals.iter().map(|x| x.range.start))
        .filter(|o| k.range.contains(o));
    for o in offsets {
        for e in src.enclosing(o) {
            if matches!(
                e.kind,
                EnclosingKind::For { .. }
                    | EnclosingKind::While { .. }
                    | EnclosingKind::DoWhile { .. }
            ) && k.range.start <= e.range.start
                && e.range.end <= k.range.end
                && !loop_ranges.iter().any(|(r, _)| *r == e.range)
            {
                loop_ranges.push((e.range.clone(), e.kind.clone()));
            }
        }
    }
    loop_ranges.sort_by_key(|(r, _)| r.start);
    let innermost = |offset: usize| {
        loop_ranges
            .iter()
            .filter(|(r, _)| r.contains(&offset))
            .min_by_key(|(r, _)| r.len())
            .map(|(r, _)| r.clone())
    };
    let mut loops = Vec::new();
    for (r, kind) in &loop_ranges {
        let barriers = calls
            .iter()
            .filter(|c| {
                let op = ops
                    .iter()
                    .find(|o| o.call.range == c.range)
                    .map(|o| &o.kind);
                is_barrier(&c.callee, op) && innermost(c.range.start).as_ref() == Some(r)
            })
            .count() as u32;
        let header = match kind {
            EnclosingKind::For { header, .. } => format!("for ({})", one_line(header)),
            EnclosingKind::While { condition, .. } => format!("while ({})", one_line(condition)),
            EnclosingKind::DoWhile { condition, .. } => {
                format!("do … while ({})", one_line(condition))
            }
            _ => String::new(),
        };
        loops.push(LoopEntry {
            line: data.line_of(r.start),
            header,
            trip_count: trip_count(src, kind, r.start),
            barriers_per_iteration: barriers,
        });
    }
    // Pipelines: each wait inside a loop that also copies.
    let mut pipelines = Vec::new();
    for w in &ops {
        let OpKind::Wait { count, .. } = &w.kind else {
            continue;
        };
        let Some(l) = innermost(w.call.range.start) else {
            continue;
        };
        let copies: Vec<_> = ops
            .iter()
            .filter(|o| o.kind == OpKind::Copy && l.contains(&o.call.range.start))
            .collect();
        if copies.is_empty() {
            continue;
        }
        let drained = ops
            .iter()
            .filter(|o| {
                matches!(o.kind, OpKind::Wait { count: Some(0), .. }) && o.call.range.end <= l.start
            })
            .map(|o| o.call.range.end)
            .max()
            .unwrap_or(0);
        let prologue = ops
            .iter()
            .filter(|o| {
                o.kind == OpKind::Commit
                    && o.call.range.end <= l.start
                    && o.call.range.start >= drained
            })
            .filter(|o| innermost(o.call.range.start).is_none())
            .count() as i64;
        let flagged = diagnostics
            .iter()
            .any(|d| d.rule == WAIT_ALL_RULE && d.range == w.call.range);
        let copy_sectors = copies
            .iter()
            .map(|c| {
                let bytes = c
                    .call
                    .args
                    .get(2)
                    .and_then(|s| src.facts().fold_text(s, c.call.range.start))
                    .and_then(|v| u64::try_from(v).ok())
                    .filter(|v| [4, 8, 16].contains(v))
                    .unwrap_or(ASSUMED_COPY_BYTES);
                (WARP_LANES as u64 * bytes).div_ceil(32)
            })
            .sum();
        pipelines.push(PipelineEntry {
            line: data.line_of(l.start),
            wait_range: w.call.range.clone(),
            stages: (prologue > 0).then_some(prologue + 1),
            wait_depth: *count,
            overlap: prologue > 0 && !flagged,
            copies_per_iteration: copies.len() as u32,
            copy_sectors,
            executions: executions(src, w.call.range.start, &k.range),
        });
    }
    (pipelines, loops)
}

#[allow(clippy::too_many_arguments)]
fn rank(
    data: &crate::analysis::FileData,
    diagnostics: &[RuleDiagnostic],
    shared: &[SharedEntry],
    global: &[GlobalEntry],
    pipelines: &[PipelineEntry],
    compiled: Option<&CompiledEntry>,
    occupancy: Option<&OccupancySummary>,
    k: &kernaut_syntax::Function,
    total: u64,
) -> Vec<CostEntry> {
    let share = |extra: u64| (total > 0).then(|| extra as f64 / total as f64);
    let times = |e: &Executions| {
        let mut s = if e.count == 1 {
            "1 execution".to_string()
        } else {
            format!("{} executions", e.count)
        };
        if e.unknown_loops > 0 {
            s.push_str(" (a loop of unknown trip count counted once)");
        }
        s
    };
    let mut out = Vec::new();
    for d in diagnostics {
        let mut entry = CostEntry {
            rule: d.rule.to_string(),
            range: d.range.clone(),
            line: data.line_of(d.range.start),
            kind: CostKind::NotCosted,
            extra_transactions: None,
            share: None,
            summary: "not costed by the model".into(),
            message: d.message.clone(),
            wiki: d.wiki.clone(),
        };
        if let Some(s) = shared.iter().find(|s| {
            d.rule == "bank-conflict" && overlaps(&s.range, &d.range) && s.wavefronts.is_some()
        }) {
            // A device function's access runs once per call: the calls with the same
            // figures add their executions.
            let s = &SharedEntry {
                executions: same_figures(
                    shared,
                    s,
                    |x| (x.wavefronts, x.ideal_wavefronts),
                    |x| (&x.range, &x.executions),
                ),
                ..s.clone()
            };
            let (w, ideal) = (s.wavefronts.unwrap_or(0), s.ideal_wavefronts.unwrap_or(1));
            let extra = u64::from(w.saturating_sub(ideal)) * s.executions.count;
            entry.kind = CostKind::SharedWavefronts;
            entry.extra_transactions = Some(extra);
            entry.share = share(extra);
            entry.summary = format!(
                "{w} wavefronts per request instead of {ideal}: {} extra × {}",
                w.saturating_sub(ideal),
                times(&s.executions)
            );
        } else if let Some(g) = global.iter().find(|g| {
            d.rule == "coalescing/strided-global-access"
                && overlaps(&g.range, &d.range)
                && g.sectors.is_some()
        }) {
            let g = &GlobalEntry {
                executions: same_figures(
                    global,
                    g,
                    |x| (x.sectors, x.ideal_sectors),
                    |x| (&x.range, &x.executions),
                ),
                ..g.clone()
            };
            let (s, ideal) = (g.sectors.unwrap_or(0), g.ideal_sectors.unwrap_or(0));
            let extra = u64::from(s.saturating_sub(ideal)) * g.executions.count;
            entry.kind = CostKind::GlobalSectors;
            entry.extra_transactions = Some(extra);
            entry.share = share(extra);
            entry.summary = format!(
                "{s} sectors per request instead of {ideal}: {} extra × {}",
                s.saturating_sub(ideal),
                times(&g.executions)
            );
        } else if let Some(p) = pipelines
            .iter()
            .find(|p| d.rule == WAIT_ALL_RULE && p.wait_range == d.range)
        {
            let extra = p.copy_sectors * p.executions.count;
            entry.kind = CostKind::SerializedCopies;
            entry.extra_transactions = Some(extra);
            entry.share = share(extra);
            entry.summary = format!(
                "{} copy sectors per iteration no longer overlap the compute × {}",
                p.copy_sectors,
                times(&p.executions)
            );
        } else if d.rule == SPILLS_RULE {
            if let Some(c) = compiled {
                let extra = c.spill_store_bytes + c.spill_load_bytes;
                entry.kind = CostKind::Spills;
                entry.extra_transactions = Some(extra);
                entry.share = share(extra);
                entry.summary = format!(
                    "{} B stored + {} B loaded per thread: {extra} local-memory sectors per warp, counted once",
                    c.spill_store_bytes, c.spill_load_bytes
                );
            }
        }
        out.push(entry);
    }
    // Occupancy lost against the best block size.
    if let Some(o) = occupancy {
        if let (Some(now), Some((best, best_occ))) = (o.occupancy, o.best_block) {
            let threads: u32 = o.block.iter().product();
            if best_occ > now + 1e-9 && best != threads {
                let lost = 1.0 - now / best_occ;
                out.push(CostEntry {
                    rule: "occupancy".into(),
                    range: k.name_range.clone(),
                    line: data.line_of(k.name_range.start),
                    kind: CostKind::Occupancy,
                    extra_transactions: None,
                    share: Some(lost),
                    summary: format!(
                        "occupancy {:.0}% at {threads} threads per block, {:.0}% at {best}: {:.0}% of the resident warps lost",
                        now * 100.0,
                        best_occ * 100.0,
                        lost * 100.0
                    ),
                    message: format!(
                        "a block of {threads} threads leaves {} warps per SM resident; {} limits it",
                        o.active_warps,
                        if o.limiters.is_empty() { "nothing".to_string() } else { o.limiters.join(" and ") }
                    ),
                    wiki: "skill-occupancy#S1".into(),
                });
            }
        }
    }
    out.sort_by(|a, b| {
        let key = |c: &CostEntry| c.share.unwrap_or(-1.0);
        key(b)
            .partial_cmp(&key(a))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.range.start.cmp(&b.range.start))
    });
    out
}

/// The executions of `first` and of every other entry at its range with the same
/// figures (the calls of a device function), added.
fn same_figures<T, F: PartialEq>(
    entries: &[T],
    first: &T,
    figures: impl Fn(&T) -> F,
    site: impl Fn(&T) -> (&TextRange, &Executions),
) -> Executions {
    let (range, _) = site(first);
    let mut total = Executions {
        count: 0,
        unknown_loops: 0,
    };
    for e in entries {
        let (r, x) = site(e);
        if r == range && figures(e) == figures(first) {
            total.count = total.count.saturating_add(x.count);
            total.unknown_loops = total.unknown_loops.max(x.unknown_loops);
        }
    }
    total
}

fn overlaps(a: &TextRange, b: &TextRange) -> bool {
    a.start < b.end && b.start < a.end
}

/// Each quick fix of the kernel's findings applied to a scratch copy of the host, and
/// the figures after it; then the best block size, when it raises occupancy.
fn what_ifs(
    a: &Analysis,
    path: &str,
    before: &KernelReport,
    diagnostics: &[RuleDiagnostic],
) -> Vec<WhatIf> {
    let mut out = Vec::new();
    let Some(text) = a.text_at(path) else {
        return out;
    };
    let Some(data) = a.file(path) else {
        return out;
    };
    let mut seen: Vec<&Fix> = Vec::new();
    for d in diagnostics {
        for fix in &d.fixes {
            if seen.iter().any(|f| f.edits == fix.edits) || fix.edits.is_empty() {
                continue;
            }
            seen.push(fix);
            let new_text = crate::rules::apply_edits(text, &fix.edits);
            let scratch = scratch_host(a, path, &new_text);
            let snapshot = scratch.analysis();
            let Some(after) = build(&snapshot, path, &before.kernel, ReportConfig::default())
            else {
                continue;
            };
            let moved = shift_through(d.range.start, &fix.edits);
            let summary = what_if_summary(before, &after, d, moved);
            out.push(WhatIf {
                title: fix.title.clone(),
                rule: d.rule.to_string(),
                line: data.line_of(d.range.start),
                safe: fix.safe,
                summary,
                transactions_before: before.total_transactions,
                transactions_after: after.total_transactions,
                occupancy_before: before.occupancy.as_ref().and_then(|o| o.occupancy),
                occupancy_after: after.occupancy.as_ref().and_then(|o| o.occupancy),
                findings: (
                    before
                        .costs
                        .iter()
                        .filter(|c| c.rule != "occupancy")
                        .count(),
                    after.costs.iter().filter(|c| c.rule != "occupancy").count(),
                ),
                edits: fix.edits.clone(),
            });
        }
    }
    if let Some(c) = before.costs.iter().find(|c| c.kind == CostKind::Occupancy) {
        if let Some(o) = &before.occupancy {
            if let (Some((best, best_occ)), Some(now)) = (o.best_block, o.occupancy) {
                out.push(WhatIf {
                    title: format!("Launch with blocks of {best} threads"),
                    rule: "occupancy".into(),
                    line: c.line,
                    safe: false,
                    summary: format!(
                        "block {} → {best}: occupancy {:.0}% instead of {:.0}%",
                        o.block.iter().product::<u32>(),
                        best_occ * 100.0,
                        now * 100.0
                    ),
                    transactions_before: before.total_transactions,
                    transactions_after: before.total_transactions,
                    occupancy_before: Some(now),
                    occupancy_after: Some(best_occ),
                    findings: (before.costs.len() - 1, before.costs.len() - 1),
                    edits: Vec::new(),
                });
            }
        }
    }
    out
}

/// A host holding the snapshot's files (those that name the kernel's file or mention
/// the kernel), configuration, wiki and compiled facts, with `path` replaced by `text`.
fn scratch_host(a: &Analysis, path: &str, text: &str) -> crate::AnalysisHost {
    let mut host = crate::AnalysisHost::new((*a.config).clone());
    if let Some(k) = &a.knowledge {
        host.set_knowledge(k.clone());
    }
    let mut change = crate::Change::new();
    for (dir, cfg) in a.dir_configs.iter() {
        change.set_dir_config(dir.clone(), Some(cfg.clone()));
    }
    let id = host.file_id(path);
    change.set_file(id, text.to_string());
    for (p, d) in a.files.iter() {
        if p != path {
            let id = host.file_id(p);
            change.set_file(id, d.source.text().to_string());
        }
    }
    if let Some(c) = a.compiled.get(path) {
        change.set_compiled(id, Some((**c).clone()));
    }
    host.apply_change(change);
    host
}

/// Where `offset` lands after `edits`.
fn shift_through(offset: usize, edits: &[crate::diagnostic::TextEdit]) -> usize {
    let mut delta: isize = 0;
    for e in edits {
        if e.range.end <= offset {
            delta += e.new_text.len() as isize - (e.range.end - e.range.start) as isize;
        }
    }
    (offset as isize + delta).max(0) as usize
}

fn what_if_summary(
    before: &KernelReport,
    after: &KernelReport,
    d: &RuleDiagnostic,
    moved: usize,
) -> String {
    let plural = |n: u32, w: &str| {
        if n == 1 {
            format!("1 {w}")
        } else {
            format!("{n} {w}s")
        }
    };
    let totals = format!(
        "modelled memory transactions {} → {}",
        before.total_transactions, after.total_transactions
    );
    if let Some(s) = before
        .shared
        .iter()
        .find(|s| overlaps(&s.range, &d.range) && s.wavefronts.is_some())
    {
        let line_after = after.shared.iter().find(|x| {
            x.range.start <= moved && moved < x.range.end.max(x.range.start + 1)
                || x.range.start == moved
        });
        if let Some(x) = line_after.and_then(|x| x.wavefronts) {
            return format!(
                "{} per request instead of {}; {totals}",
                plural(x, "wavefront"),
                s.wavefronts.unwrap_or(0)
            );
        }
    }
    if let Some(g) = before
        .global
        .iter()
        .find(|g| overlaps(&g.range, &d.range) && g.sectors.is_some())
    {
        let after_g = after.global.iter().find(|x| x.range.start == moved);
        if let Some(x) = after_g.and_then(|x| x.sectors) {
            return format!(
                "{} per request instead of {}; {totals}",
                plural(x, "sector"),
                g.sectors.unwrap_or(0)
            );
        }
    }
    if d.rule == WAIT_ALL_RULE {
        if let Some(p) = after.pipelines.iter().find(|p| p.overlap) {
            return format!(
                "the wait leaves {} group(s) pending: copy and compute overlap; {totals}",
                p.wait_depth.map_or("?".into(), |v| v.to_string())
            );
        }
    }
    let f = |r: &KernelReport| r.costs.iter().filter(|c| c.rule != "occupancy").count();
    format!(
        "findings in the kernel {} → {}; {totals}",
        f(before),
        f(after)
    )
}
