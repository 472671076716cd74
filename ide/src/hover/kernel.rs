//! Kernel hover: launch sites, block size and occupancy.

use super::*;

pub(crate) fn kernel_hover(analysis: &Analysis, path: &str, s: &SymbolRef) -> Option<HoverResult> {
    let name = short_name(&s.name);
    let (kpath, function) = analysis
        .sorted_files(path)
        .into_iter()
        .find_map(|(p, d)| d.facts().kernel(name).cloned().map(|k| (p, k)))?;
    let launches = analysis.launches_of(kpath, name);
    // A template kernel's launch bounds in the instantiation the occupancy uses.
    let inst = analysis
        .file(kpath)
        .and_then(|f| crate::instances::chosen_instantiation(f.facts(), &function.name));
    let function = match (&inst, analysis.file(kpath)) {
        (Some(i), Some(f)) => crate::instances::bind_function(f.facts(), &function, &i.bound),
        _ => function,
    };
    let limits = analysis.config.arch.limits();
    let launch_bounds_regs = crate::model::launch_bounds_regs(limits, &function).map(|l| l.limit);
    let occ = crate::reports::occupancy_at(analysis, kpath, name);
    let mut md = String::new();
    let params: Vec<String> = function
        .params
        .iter()
        .map(|p| {
            if p.name.is_empty() {
                p.ty.clone()
            } else {
                format!("{} {}", p.ty, p.name)
            }
        })
        .collect();
    let template = if function.template_params.is_empty() {
        String::new()
    } else {
        let ps: Vec<String> = function
            .template_params
            .iter()
            .map(|t| match &t.default {
                Some(d) => format!("{} {} = {d}", t.ty, t.name),
                None => format!("{} {}", t.ty, t.name),
            })
            .collect();
        format!("template <{}> ", ps.join(", "))
    };
    md.push_str(&format!(
        "**kernel** `{}`\n\n```cuda\n{template}__global__ void {}({})\n```\n",
        function.name,
        function.name,
        params.join(", ")
    ));
    match &function.launch_bounds {
        Some(lb) => {
            md.push_str(&format!("\n`__launch_bounds__({})`", lb.args.join(", ")));
            if let Some(r) = launch_bounds_regs {
                let max = lb.max_threads.unwrap_or(0);
                let min = lb.min_blocks.unwrap_or(1);
                let with = match &inst {
                    Some(i) if !i.bound.is_empty() => format!(" with {}", i.describe()),
                    _ => String::new(),
                };
                md.push_str(&format!(
                    "{with}: at most {max} threads per block and at least {min} block{} per SM, so the compiler keeps to at most {r} registers per thread on {}.\n",
                    if min == 1 { "" } else { "s" },
                    analysis.config.arch
                ));
            } else {
                md.push_str(": the values are not known from the file.\n");
            }
        }
        None => md.push_str("\nNo `__launch_bounds__`.\n"),
    }
    if let Some(c) = function.cluster_dims {
        let show = |v: Option<i64>| v.map_or("?".to_string(), |v| v.to_string());
        md.push_str(&format!(
            "\n`__cluster_dims__`: {} × {} × {}.\n",
            show(c[0]),
            show(c[1]),
            show(c[2])
        ));
    }
    if launches.is_empty() {
        md.push_str("\nNo launch site in the open files.\n");
    } else {
        md.push_str(&format!("\nLaunch sites ({}):\n", launches.len()));
        for (f, l) in launches.iter().take(8) {
            let line = analysis.file(f).map_or(1, |d| d.line_of(l.range.start));
            let mut cfg = format!("<<<{}, {}", l.grid.text, l.block.text);
            if let Some(s) = &l.shared_bytes_text {
                cfg.push_str(&format!(", {s}"));
            }
            if let Some(s) = &l.stream {
                cfg.push_str(&format!(", {s}"));
            }
            cfg.push_str(">>>");
            let mut block = match l.block.value {
                Some([x, y, z]) => format!("block {x}×{y}×{z} = {} threads", x * y * z),
                None => "block not known from the file".to_string(),
            };
            if let (false, Some(caller)) = (l.caller_bound.is_empty(), &l.function) {
                let b: Vec<String> = l
                    .caller_bound
                    .iter()
                    .map(|(n, v)| format!("{n} = {v}"))
                    .collect();
                block.push_str(&format!(
                    " (with `{}` as the file's call of `{caller}` binds them)",
                    b.join(", ")
                ));
            }
            md.push_str(&format!(
                "- {}: `{}{cfg}`: {block}\n",
                location(f, path, line),
                l.kernel
            ));
        }
    }
    if let Some(id) = analysis.file_id(path) {
        let targets = analysis.file_config(id).targets;
        md.push_str(&if let Some(why) = &targets.not_built {
            format!("\nTargets: none: the build does not compile this file ({why}).\n")
        } else if targets.assumed {
            format!(
                "\nTargets: {} (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).\n",
                targets.names()
            )
        } else {
            format!("\nTargets: {}.\n", targets.describe())
        });
    }
    if let Some(o) = &occ {
        md.push('\n');
        md.push_str(&occupancy_markdown(analysis, o, path));
    }
    if let Some((facts, compiled)) =
        analysis.compiled_kernel(kpath, crate::analysis::short_name(name))
    {
        md.push('\n');
        md.push_str(&compiled[0].markdown(&facts.toolkit));
    }
    // The costliest findings, when the model costs any (a kernel without one says nothing
    // more).
    if let Some(r) = crate::kernel_report::kernel_report_at(analysis, kpath, &function.name)
        .filter(|r| !r.top_costs(1).is_empty())
    {
        md.push('\n');
        md.push_str(&r.hover_markdown());
    }
    Some(HoverResult {
        markdown: md,
        range: s.range.clone(),
        symbol: function.name.clone(),
        kind: HoverKind::Kernel,
        symbol_ref: Some(s.clone()),
        wiki: None,
        kernel: Some(KernelInfo {
            function,
            file: analysis.file_id(kpath)?,
            launches: launches
                .into_iter()
                .filter_map(|(p, l)| Some((analysis.file_id(&p)?, l)))
                .collect(),
            launch_bounds_regs,
        }),
        occupancy: occ,
        shared: None,
        bank: None,
        findings: Vec::new(),
    })
}

pub(crate) fn location(file: &str, current: &str, line: u32) -> String {
    if file == current {
        format!("line {line}")
    } else {
        format!("{file}:{line}")
    }
}

pub(crate) fn block_text(b: [u32; 3]) -> String {
    format!("{}×{}×{}", b[0], b[1], b[2])
}

pub(crate) fn block_source_text(analysis: &Analysis, src: &BlockSource, current: &str) -> String {
    match src {
        BlockSource::Launch { file, line, .. } => {
            let file = file.and_then(|f| analysis.path(f)).unwrap_or(current);
            format!("from the launch at {}", location(file, current, *line))
        }
        BlockSource::LaunchBounds => {
            "the `__launch_bounds__` maximum; no launch with a known block was found".into()
        }
        BlockSource::Default => "the configured default; no launch was found".into(),
    }
}

pub(crate) fn occupancy_markdown(
    analysis: &Analysis,
    o: &OccupancyReport,
    current: &str,
) -> String {
    let threads: u32 = o.block.iter().product();
    let regs = match o.regs_source {
        RegsSource::LaunchBounds { .. } => "the `__launch_bounds__` limit",
        RegsSource::Default => "assumed: a typical count, not measured",
        RegsSource::Project => "assumed: `registers` in `.kernaut.toml`",
        RegsSource::Comment => "assumed: the `kernaut: registers=` comment",
        RegsSource::Compiler => "ptxas (compiled)",
    };
    let mut md = format!(
        "**Occupancy on {}**: block {} = {threads} threads ({}), {} registers per thread ({regs}), {} B static + {} B dynamic shared memory.\n\n",
        o.arch,
        block_text(o.block),
        block_source_text(analysis, &o.block_source, current),
        o.regs_per_thread,
        o.static_smem,
        o.dynamic_smem,
    );
    match &o.result {
        Ok(occ) => {
            let lim = o.limiter_names();
            md.push_str(&format!(
                "{} block{}/SM · {} of {} warps active ({:.0}%) · limited by {}.\n",
                occ.blocks_per_sm,
                if occ.blocks_per_sm == 1 { "" } else { "s" },
                occ.active_warps,
                occ.max_warps_per_sm,
                occ.occupancy * 100.0,
                if lim.is_empty() {
                    "nothing".to_string()
                } else {
                    lim.join(" and ")
                }
            ));
        }
        Err(e) => md.push_str(&format!("The configuration cannot launch: {e}.\n")),
    }
    for n in &o.notes {
        md.push_str(&format!("\n{n}\n"));
    }
    md
}
