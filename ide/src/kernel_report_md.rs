//! The kernel report as Markdown (the `kernaut.kernelReport` command, `kernaut-lsp report
//! --format md`) and the one-line costs the kernel hover and the lens show. Every figure
//! comes from [`KernelReport`]; nothing is computed here.

use std::fmt::Write as _;

use crate::kernel_report::{CostEntry, CostKind, KernelReport};

/// How many costs the kernel hover lists.
pub const HOVER_COSTS: usize = 3;

fn pct(v: f64) -> String {
    let p = v * 100.0;
    if p > 0.0 && p < 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

impl CostEntry {
    /// One line: the share, the rule, the line and the figure.
    pub fn line_text(&self) -> String {
        match self.share {
            Some(s) if self.kind == CostKind::Occupancy => format!(
                "{} of resident warps · `{}` (line {}): {}",
                pct(s),
                self.rule,
                self.line,
                self.summary
            ),
            Some(s) => format!(
                "{} of memory transactions · `{}` (line {}): {}",
                pct(s),
                self.rule,
                self.line,
                self.summary
            ),
            None => format!("not costed · `{}` (line {})", self.rule, self.line),
        }
    }
}

impl KernelReport {
    /// The costliest findings, one line each (at most `n`).
    pub fn top_costs(&self, n: usize) -> Vec<String> {
        self.costs
            .iter()
            .filter(|c| c.share.is_some())
            .take(n)
            .map(CostEntry::line_text)
            .collect()
    }

    /// The title of the "report" lens: the costliest finding, or that none is costed.
    pub fn lens_title(&self) -> String {
        match self.costs.iter().find(|c| c.share.is_some()) {
            Some(c) => format!(
                "report · top cost {} `{}` (line {})",
                pct(c.share.unwrap_or(0.0)),
                c.rule,
                c.line
            ),
            None => "report · no costed finding".to_string(),
        }
    }

    /// The hover's section: the costliest findings, one line each, and where the whole
    /// report is.
    pub fn hover_markdown(&self) -> String {
        let lines = self.top_costs(HOVER_COSTS);
        let mut md = String::from(
            "**Top costs** (share of modelled memory transactions):

",
        );
        if lines.is_empty() {
            md.push_str(
                "- no costed finding
",
            );
        }
        for l in lines {
            let _ = writeln!(md, "- {l}");
        }
        let _ = writeln!(
            md,
            "
The full report: the `report` lens above the kernel, or `kernaut-lsp report FILE:{}`.",
            self.kernel
        );
        md
    }

    /// The whole report as Markdown.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let _ = writeln!(md, "# Kernel report: `{}` on {}\n", self.kernel, self.arch);
        let _ = writeln!(
            md,
            "Costs are modelled memory transactions (shared-memory wavefronts and 32-byte global sectors of one warp request, times the executions the loops' trip counts give), not run times. The kernel's modelled total: **{}** transactions.\n",
            self.total_transactions
        );
        md.push_str("## Costs, ranked\n\n");
        if self.costs.is_empty() {
            md.push_str("No finding in this kernel.\n\n");
        }
        for (i, c) in self.costs.iter().enumerate() {
            let _ = writeln!(md, "{}. {}", i + 1, c.line_text());
            let _ = writeln!(md, "   - {} ([{}])", c.message, c.wiki);
        }
        if !self.costs.is_empty() {
            md.push('\n');
        }
        if !self.what_ifs.is_empty() {
            md.push_str("## What if\n\n");
            for w in &self.what_ifs {
                let occ = match (w.occupancy_before, w.occupancy_after) {
                    (Some(a), Some(b)) if (a - b).abs() > 1e-9 => {
                        format!("; occupancy {} → {}", pct(a), pct(b))
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    md,
                    "- {} (line {}, `{}`{}): {}{occ}",
                    w.title,
                    w.line,
                    w.rule,
                    if w.safe {
                        ", mechanical"
                    } else {
                        ", review it"
                    },
                    w.summary
                );
            }
            md.push('\n');
        }
        md.push_str("## Launch and occupancy\n\n");
        if self.launches.is_empty() {
            md.push_str("No launch of the kernel in the files analysed.\n");
        }
        for l in &self.launches {
            let at = match &l.file_name {
                Some(f) => format!("{f}:{}", l.line),
                None => format!("line {}", l.line),
            };
            let mut cfg = format!("<<<{}, {}", l.grid, l.block_text);
            if let Some(s) = &l.dynamic_smem_text {
                cfg.push_str(&format!(", {s}"));
            }
            cfg.push_str(">>>");
            let block = match l.block {
                Some([x, y, z]) => format!("block {x}×{y}×{z}"),
                None => "block not known from the file".into(),
            };
            let dynamic = match l.dynamic_smem {
                Some(d) => format!(", {d} B dynamic shared memory"),
                None if l.dynamic_smem_text.is_some() => {
                    ", dynamic shared memory not known from the file".into()
                }
                None => String::new(),
            };
            let occ = l
                .occupancy
                .map_or(String::new(), |o| format!(": occupancy {}", pct(o)));
            let _ = writeln!(md, "- {at}: `{cfg}` ({block}{dynamic}){occ}");
        }
        if let Some(o) = &self.occupancy {
            let _ = writeln!(
                md,
                "\nBlock {}×{}×{} ({}), {} registers per thread ({}), {} B static + {} B dynamic shared memory.",
                o.block[0],
                o.block[1],
                o.block[2],
                o.block_source,
                o.registers,
                o.registers_source,
                o.static_smem,
                o.dynamic_smem
            );
            match (o.occupancy, &o.error) {
                (Some(v), _) => {
                    let _ = writeln!(
                        md,
                        "\n**Occupancy {}**: {} blocks/SM, {} of {} warps, limited by {}.",
                        pct(v),
                        o.blocks_per_sm,
                        o.active_warps,
                        o.max_warps,
                        if o.limiters.is_empty() {
                            "nothing".to_string()
                        } else {
                            o.limiters.join(" and ")
                        }
                    );
                }
                (None, Some(e)) => {
                    let _ = writeln!(md, "\nThe configuration cannot launch: {e}.");
                }
                _ => {}
            }
            if !o.at_registers.is_empty() {
                let cells: Vec<String> = o
                    .at_registers
                    .iter()
                    .map(|(r, v)| format!("{r}: {}", v.map_or("cannot launch".into(), pct)))
                    .collect();
                let _ = writeln!(
                    md,
                    "\nThe register count is assumed; occupancy at other counts: {}.",
                    cells.join(" · ")
                );
            }
            // A block size is suggested only where it beats the launch's occupancy.
            if let (Some((b, v)), Some(now)) = (o.best_block, o.occupancy) {
                if v > now + 1e-9 {
                    let _ = writeln!(
                        md,
                        "\nBest block size for these resources: {b} threads ({}).",
                        pct(v)
                    );
                } else {
                    let _ = writeln!(
                        md,
                        "\nThe launch's block already reaches the best occupancy for these resources."
                    );
                }
            }
        }
        md.push('\n');
        if !self.shared.is_empty() {
            md.push_str("## Shared-memory accesses\n\n| line | access | op | bytes | runs | wavefronts | ideal | conflict | colliding lanes |\n|---|---|---|---|---|---|---|---|---|\n");
            for s in &self.shared {
                let (w, i, d) = match (s.wavefronts, s.ideal_wavefronts, s.conflict_degree) {
                    (Some(w), Some(i), Some(d)) => {
                        (w.to_string(), i.to_string(), format!("{d}-way"))
                    }
                    _ => (
                        "?".into(),
                        "?".into(),
                        s.unknown.clone().unwrap_or_default(),
                    ),
                };
                let lanes = match s.worst_bank {
                    Some(b) if !s.colliding_lanes.is_empty() => {
                        format!("bank {b}: lanes {}", lane_list(&s.colliding_lanes))
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    md,
                    "| {} | `{}` | {} | {} | {} | {w} | {i} | {d} | {lanes} |",
                    place(s.line, s.callee.as_ref()),
                    s.text.replace('|', "\\|"),
                    s.op,
                    s.width.map_or("?".into(), |w| w.to_string()),
                    runs(s.executions.count, s.executions.unknown_loops)
                );
            }
            md.push('\n');
        }
        if !self.global.is_empty() {
            md.push_str("## Global accesses\n\n| line | access | op | bytes | runs | sectors | ideal | bytes used per sector | lanes |\n|---|---|---|---|---|---|---|---|---|\n");
            for g in &self.global {
                let (s, i, b) = match (g.sectors, g.ideal_sectors, g.bytes_per_sector) {
                    (Some(s), Some(i), Some(b)) => {
                        (s.to_string(), i.to_string(), format!("{b:.1} of 32"))
                    }
                    _ => (
                        "?".into(),
                        "?".into(),
                        g.unknown.clone().unwrap_or_default(),
                    ),
                };
                let _ = writeln!(
                    md,
                    "| {} | `{}` | {} | {} | {} | {s} | {i} | {b} | {} |",
                    place(g.line, g.callee.as_ref()),
                    g.text.replace('|', "\\|"),
                    g.op,
                    g.width.map_or("?".into(), |w| w.to_string()),
                    runs(g.executions.count, g.executions.unknown_loops),
                    g.active_lanes
                );
            }
            md.push('\n');
        }
        if !self.pipelines.is_empty() {
            md.push_str("## Async-copy pipelines\n\n");
            for p in &self.pipelines {
                let _ = writeln!(
                    md,
                    "- loop at line {}: {} stage(s), wait leaves {} group(s) pending, {} cop{} per iteration ({} sectors per warp): {}",
                    p.line,
                    p.stages.map_or("1".into(), |s| s.to_string()),
                    p.wait_depth.map_or("?".into(), |d| d.to_string()),
                    p.copies_per_iteration,
                    if p.copies_per_iteration == 1 { "y" } else { "ies" },
                    p.copy_sectors,
                    if p.overlap {
                        "copy and compute can overlap"
                    } else {
                        "copy and compute do not overlap"
                    }
                );
            }
            md.push('\n');
        }
        if !self.loops.is_empty() {
            md.push_str("## Loops and barriers\n\n");
            for l in &self.loops {
                let _ = writeln!(
                    md,
                    "- line {}: `{}`: {} iteration(s), {} block barrier(s) per iteration",
                    l.line,
                    l.header,
                    l.trip_count.map_or("unknown".into(), |t| t.to_string()),
                    l.barriers_per_iteration
                );
            }
            md.push('\n');
        }
        match &self.compiled {
            Some(c) => {
                let _ = writeln!(
                    md,
                    "## Compiled ({})\n\n`{}`: {} registers, {} B spill stores, {} B spill loads, {} B stack per thread{}.\n",
                    c.toolkit,
                    c.name,
                    c.registers,
                    c.spill_store_bytes,
                    c.spill_load_bytes,
                    c.stack_frame_bytes,
                    match (c.sass_instructions, c.sass_local) {
                        (Some(n), Some((ld, st))) =>
                            format!("; SASS: {n} instructions, {ld} local loads, {st} local stores"),
                        _ => String::new(),
                    }
                );
            }
            None => {
                md.push_str("No compiled facts: spills, stack and SASS need a CUDA toolkit.\n\n")
            }
        }
        if !self.notes.is_empty() || self.occupancy.as_ref().is_some_and(|o| !o.notes.is_empty()) {
            md.push_str("## Notes\n\n");
            for n in self
                .occupancy
                .iter()
                .flat_map(|o| o.notes.iter())
                .chain(&self.notes)
            {
                let _ = writeln!(md, "- {n}");
            }
        }
        md
    }
}

fn runs(count: u64, unknown: u32) -> String {
    if unknown > 0 {
        format!("{count}+")
    } else {
        count.to_string()
    }
}

/// `0-31` or `0, 2, 4` for a lane list.
pub fn lane_list(lanes: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lanes.len() {
        let mut j = i;
        while j + 1 < lanes.len() && lanes[j + 1] == lanes[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", lanes[i], lanes[j])
        } else {
            lanes[i].to_string()
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// The line of an access, and for one in a device function the kernel calls, where:
/// `7 (in `column`, called at line 21)`.
pub fn place(line: u32, callee: Option<&crate::kernel_report::CalleeSite>) -> String {
    match callee {
        None => line.to_string(),
        Some(c) => format!(
            "{}{line} (in `{}`, called at line {})",
            c.file_name
                .as_ref()
                .map_or(String::new(), |f| format!("{f}:")),
            c.function,
            c.call_line
        ),
    }
}
