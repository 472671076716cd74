//! Shared-memory hover: a `__shared__` declaration and an access to it, with the bank
//! map of one warp.

use super::*;

pub(crate) fn shared_hover(
    analysis: &Analysis,
    path: &str,
    d: &SharedDecl,
    sym: Option<SymbolRef>,
) -> HoverResult {
    let arch = analysis.config.arch;
    let file = analysis.file(path);
    let function = file.and_then(|f| {
        d.function
            .as_deref()
            .and_then(|n| f.facts().kernels.iter().find(|k| k.name == n))
    });
    // A template kernel's declaration: its sizes in the instantiation chosen.
    let facts = file.map(|f| f.facts());
    let inst = facts.zip(d.function.as_deref()).and_then(|(fa, k)| {
        function
            .is_some_and(|f| !f.template_params.is_empty())
            .then(|| crate::instances::chosen_instantiation(fa, k))
            .flatten()
    });
    let bound: &[(String, i64)] = inst.as_ref().map_or(&[], |i| &i.bound);
    let bound_function = facts
        .zip(function)
        .map(|(fa, f)| crate::instances::bind_function(fa, f, bound));
    let written = d;
    let bound_decl = facts.map(|fa| crate::instances::bind_shared(fa, d, bound));
    let d = bound_decl.as_ref().unwrap_or(d);
    let (block, block_source, dynamic, _) = block_for(analysis, path, bound_function.as_ref());
    let threads: u32 = block.iter().fold(1u32, |a, b| a.saturating_mul(*b));
    let smem_limit = |bytes: u64| -> (Option<u32>, Option<u32>) {
        let Ok(b) = u32::try_from(bytes) else {
            return (None, None);
        };
        let input = OccupancyInput {
            threads_per_block: threads,
            static_smem: b.min(arch.limits().smem_per_block),
            dynamic_smem: b.saturating_sub(arch.limits().smem_per_block),
            ..OccupancyInput::default()
        };
        match occupancy(arch, &input) {
            Ok(o) => (o.limits.shared_memory, Some(o.limits.warps)),
            Err(_) => (Some(0), None),
        }
    };
    let bytes = if d.is_extern {
        dynamic.map(u64::from)
    } else {
        d.static_bytes
    };
    let (alone, warps) = bytes.map_or((None, None), smem_limit);
    let function_static_bytes = file.and_then(|f| {
        let decls: Vec<_> = f
            .shared_in(d.function.as_deref()?)
            .map(|s| crate::instances::bind_shared(f.facts(), s, bound))
            .collect();
        crate::model::static_shared(&decls).exact()
    });
    let total = function_static_bytes.map(|s| {
        s + if d.is_extern {
            bytes.unwrap_or(0)
        } else {
            dynamic.map_or(0, u64::from)
        }
    });
    let (with_all, warps2) = total.map_or((None, None), smem_limit);
    let warps = warps.or(warps2);

    let dims: String = d.dims_text.iter().map(|t| format!("[{t}]")).collect();
    let mut md = format!(
        "`{}__shared__ {} {}{dims}`",
        if d.is_extern { "extern " } else { "" },
        d.element_type,
        d.name
    );
    if let Some(f) = &d.function {
        md.push_str(&format!(" in `{f}`"));
    }
    md.push_str("\n\n");
    let folded: Vec<String> = d
        .dims
        .iter()
        .map(|v| v.map_or("?".to_string(), |v| v.to_string()))
        .collect();
    let elem = d
        .element_size
        .map_or("unknown size".to_string(), |s| format!("{s} B"));
    if d.is_extern {
        md.push_str(&format!(
            "Dynamic shared memory of `{}` ({elem} each), sized at launch",
            d.element_type
        ));
        match dynamic {
            Some(b) => md.push_str(&format!(": {b} B at the launch found.\n")),
            None => md.push_str("; no launch found gives its size.\n"),
        }
    } else {
        match d.static_bytes {
            Some(b) => md.push_str(&format!(
                "{} × {elem} = **{b} bytes** ({:.1} KiB).\n",
                folded.join(" × "),
                b as f64 / 1024.0
            )),
            None => md.push_str(&format!(
                "Size not known from the file (dimensions {}, element {elem}).\n",
                folded.join(" × ")
            )),
        }
    }
    if let (Some(fa), Some(f)) = (facts, function) {
        md.push_str(&template_sizes(fa, written, f, inst.as_ref()));
    }
    if let Some(a) = d.alignment {
        md.push_str(&format!("\nAligned to {a} bytes.\n"));
    }
    // A build for targets older than every occupancy table (sm_35 alone): no figure.
    let targets = &analysis.config.targets;
    let unmodelled = !targets.is_empty() && !kernaut_sema::config::modelled(targets);
    if unmodelled {
        md.push_str(&format!(
            "\n**Occupancy**: not modelled for {} (the build's targets): the occupancy tables start at sm_50.\n",
            targets
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    } else {
        let limits = arch.limits();
        md.push_str(&format!(
            "\n**Occupancy on {arch}** at {} = {threads} threads ({}); {} KiB of shared memory per SM, {} B reserved per block:\n",
            block_text(block),
            block_source_text(analysis, &block_source, path),
            limits.smem_per_sm / 1024,
            limits.reserved_smem_per_block
        ));
        // A resource's own limit above the SM's block limit is capped, and the cap named:
        // "45 blocks/SM" would promise blocks no SM holds.
        let cap = limits.max_blocks_per_sm;
        let capped = |n: u32| {
            if n > cap {
                format!(
                    "{} (the per-SM block limit; shared memory alone would fit {n})",
                    per_sm(cap)
                )
            } else {
                per_sm(n)
            }
        };
        if let Some(a) = alone {
            md.push_str(&format!("- this buffer alone allows {}\n", capped(a)));
        }
        if let (Some(t), Some(w)) = (total, with_all) {
            md.push_str(&format!(
                "- with all {t} B of `{}`'s shared memory: {}\n",
                d.function.as_deref().unwrap_or("the function"),
                capped(w)
            ));
        }
        if let Some(w) = warps {
            md.push_str(&format!(
                "- warps allow {} at this block size",
                per_sm(w.min(cap))
            ));
            match with_all.or(alone) {
                Some(s) if s < w => md.push_str(", so shared memory is the limit\n"),
                Some(_) => md.push_str(", so shared memory is not the limit\n"),
                None => md.push('\n'),
            }
        }
    }
    let (alone, with_all, warps) = if unmodelled {
        (None, None, None)
    } else {
        (alone, with_all, warps)
    };
    HoverResult {
        markdown: md,
        range: d.name_range.clone(),
        symbol: d.name.clone(),
        kind: HoverKind::SharedDeclaration,
        symbol_ref: sym,
        wiki: None,
        kernel: None,
        occupancy: None,
        shared: Some(SharedInfo {
            decl: d.clone(),
            block,
            block_source,
            blocks_per_sm_alone: alone,
            function_static_bytes,
            blocks_per_sm_function: with_all,
            blocks_per_sm_warps: warps,
        }),
        bank: None,
        findings: Vec::new(),
    }
}

/// What a template kernel's shared declaration says about its template arguments: the
/// instantiation its size is shown for (and the size in each other one the file
/// launches), or which parameters are unbound and what was assumed. Empty when the
/// dimensions name no template parameter.
fn template_sizes(
    facts: &kernaut_syntax::FileFacts,
    d: &SharedDecl,
    f: &Function,
    inst: Option<&crate::reports::Instantiation>,
) -> String {
    let names = |p: &&kernaut_syntax::TemplateParam| {
        !p.is_type && d.dims_text.iter().any(|t| names_token(t, &p.name))
    };
    let Some(inst) = inst else {
        // Unbound: the parameters the dimensions name, or every value parameter when a
        // size is not known (a constant between them, `constexpr int N = BM * 2`).
        let unknown = !d.is_extern && d.static_bytes.is_none();
        let unbound: Vec<_> = crate::instances::unbound_params(facts, f)
            .into_iter()
            .filter(|p| names(p) || unknown)
            .collect();
        return crate::instances::unbound_sentence(&f.name, &unbound)
            .map_or(String::new(), |s| format!("\n{s}\n"));
    };
    let bound = crate::instances::bind_shared(facts, d, &inst.bound);
    if !f.template_params.iter().any(|p| names(&p)) && bound.dims == d.dims {
        return String::new();
    }
    let mut md = format!(
        "\nTemplate arguments: {}.\n",
        crate::instances::chosen_phrase(inst)
    );
    if inst.of > 1 {
        let all = crate::reports::launched_instantiations(facts, &f.name);
        for other in all.iter().take(8) {
            let b = crate::instances::bind_shared(facts, d, &other.bound);
            let dims: Vec<String> = b
                .dims
                .iter()
                .map(|v| v.map_or("?".to_string(), |v| v.to_string()))
                .collect();
            let bytes = b
                .static_bytes
                .map_or("size not known".to_string(), |v| format!("{v} bytes"));
            md.push_str(&format!(
                "- {}: {} = {bytes}\n",
                other.describe(),
                dims.join(" × ")
            ));
        }
    }
    md
}

pub(crate) fn access_hover(
    analysis: &Analysis,
    path: &str,
    a: &SharedAccess,
    sym: Option<SymbolRef>,
) -> Option<HoverResult> {
    let bank = crate::reports::bank_at(analysis, path, a)?;
    Some(access_hover_with(analysis, path, a, sym, bank, None))
}

/// The hover of access `a` whose bank model is `bank`; `place` says where it runs, for
/// an access of a device function modelled in a kernel that calls it.
pub(crate) fn access_hover_with(
    analysis: &Analysis,
    path: &str,
    a: &SharedAccess,
    sym: Option<SymbolRef>,
    bank: crate::reports::BankAnalysis,
    place: Option<String>,
) -> HoverResult {
    let text = analysis.text_at(path).unwrap_or("");
    let written = text.get(a.range.clone()).unwrap_or(&a.array);
    let written: String = written.split_whitespace().collect::<Vec<_>>().join(" ");
    let kind = match a.kind {
        kernaut_syntax::AccessKind::Load => "load",
        kernaut_syntax::AccessKind::Store => "store",
        kernaut_syntax::AccessKind::LoadStore => "load and store",
        kernaut_syntax::AccessKind::AddressOf => "address taken",
    };
    let width = bank
        .width
        .map_or("unknown width".to_string(), |w| format!("{w} B per lane"));
    let mut md = format!(
        "**shared {kind}** `{written}` · {width} · warp 0 of a {} block ({})\n\n",
        block_text(bank.block),
        block_source_text(analysis, &bank.block_source, path)
    );
    if let Some(p) = &place {
        md.push_str(&format!(
            "In {p}: modelled with the kernel's block and the call's arguments.\n\n"
        ));
    }
    match (&bank.copy, a.kind) {
        (Some(callee), _) => md.push_str(&format!(
            "The destination of `{callee}`: modelled as its {}-byte shared write per lane.\n\n",
            bank.width.unwrap_or(0)
        )),
        (None, kernaut_syntax::AccessKind::AddressOf) => md.push_str("The address is taken (for `cp.async`, `ldmatrix` or a pointer); modelled as a load of the element width.\n\n"),
        _ => {}
    }
    if let Some(defaults) = &bank.assumed_defaults {
        md.push_str(&format!(
            "Template defaults assumed: `{defaults}` (no launch in the file instantiates the kernel).\n\n"
        ));
    }
    if let Some(inst) = &bank.instantiation {
        md.push_str(&format!("In {}.", inst.phrase()));
        let file = analysis.file(path);
        let decl = file.and_then(|f| {
            f.facts()
                .shared_named(&a.array, a.range.start)
                .map(|d| (f, d))
        });
        if let Some((f, d)) = decl.filter(|_| a.root == a.array) {
            let b = crate::instances::bind_shared(f.facts(), d, &inst.bound);
            if let (Some(bytes), true) = (b.static_bytes, b.dims != d.dims) {
                let dims: Vec<String> = b.dims.iter().flatten().map(u64::to_string).collect();
                md.push_str(&format!(
                    " There `{}` is {} × {} B = {bytes} bytes.",
                    d.name,
                    dims.join(" × "),
                    d.element_size.unwrap_or(0)
                ));
            }
        }
        md.push_str("\n\n");
    }
    if let Some(l) = &bank.lowered {
        md.push_str(&format!("Byte offset: `{l}`\n\n"));
    }
    // A pointer carved at an offset the file does not fold (`float* p = s + off`):
    // modelled from the buffer with that offset as a symbol.
    let carve = analysis.file(path).and_then(|f| {
        f.facts().carves.iter().rev().find(|c| {
            c.name == a.array
                && c.function == a.function
                && c.range.start < a.range.start
                && c.offset_bytes.is_none()
        })
    });
    if let (Some(c), Some(_)) = (carve, &bank.lowered) {
        let decl = text
            .get(c.range.clone())
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        md.push_str(&format!(
            "`{}` points into `{}` at an offset the file does not fix (`{decl}`); it is modelled as a symbol.\n\n",
            c.name, c.root
        ));
    }
    let swept = |name: &str| {
        bank.sweep
            .as_ref()
            .is_some_and(|s| s.steps[0].values.iter().any(|(n, _)| n == name))
    };
    for (name, start) in bank.held_loops.iter().filter(|(n, _)| !swept(n)) {
        md.push_str(&format!(
            "Loop variable `{name}` held at its start value `{start}` (the first iteration).\n\n"
        ));
    }
    if !bank.uniforms.is_empty() && bank.result.is_ok() {
        md.push_str(&format!(
            "{} is the same for every lane; the result does not depend on its value.\n\n",
            bank.uniforms
                .iter()
                .map(|u| format!("`{u}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match &bank.result {
        Ok(r) => {
            let verdict = if r.conflict_degree <= 1 {
                "conflict-free".to_string()
            } else {
                format!("{}-way bank conflict", r.conflict_degree)
            };
            md.push_str(&format!(
                "**{verdict}**: {} wavefront{} per request ({} active lanes, {} distinct words",
                r.wavefronts,
                if r.wavefronts == 1 { "" } else { "s" },
                r.active_lanes,
                r.distinct_words
            ));
            if r.lanes_per_group < 32 {
                md.push_str(&format!(
                    ", resolved in groups of {} lanes",
                    r.lanes_per_group
                ));
            }
            if r.pair_packed {
                md.push_str(", pair-packed");
            }
            md.push(')');
            if r.conflict_degree <= 1 && r.wavefronts > 1 {
                md.push_str(&format!(
                    "; {} is the minimum for {}-byte accesses",
                    r.wavefronts,
                    bank.width.unwrap_or(0)
                ));
            }
            md.push_str(".\n\n");
            // The term that spreads the lanes, quoted where it is written.
            let term = (r.conflict_degree >= 2 && place.is_none())
                .then(|| analysis.file(path))
                .flatten()
                .and_then(|f| kernaut_sema::terms::lane_term(&f.source, a, bank.block));
            if let Some(t) = term {
                let line = text
                    .get(..t.range.start)
                    .map_or(0, |b| b.matches('\n').count())
                    + 1;
                md.push_str(&format!(
                    "The lanes' stride comes from {} (line {line}).\n\n",
                    kernaut_sema::terms::describe(&t, a.indices.len())
                ));
            }
            md.push_str(&bank.notes_markdown());
            // A later part of a wide access: the rule reports the access at its first.
            if let Some(first) = bank
                .merged
                .as_ref()
                .and_then(|m| m.first_part_before(&a.range))
            {
                let line = text
                    .get(..first.start)
                    .map_or(0, |b| b.matches('\n').count())
                    + 1;
                md.push_str(&format!(
                    "The `bank-conflict` rule reports the wide access once, at its first part (line {line}), so it does not report this access.\n\n"
                ));
            }
            md.push_str(&bank_map(&r.words_per_bank));
        }
        Err(reason) => md.push_str(&format!("**Cannot be modelled**: {reason}.\n")),
    }
    let range = a.range.clone();
    HoverResult {
        markdown: md,
        range,
        symbol: written,
        kind: HoverKind::SharedAccess,
        symbol_ref: sym,
        wiki: None,
        kernel: None,
        occupancy: None,
        shared: None,
        bank: Some(bank),
        findings: Vec::new(),
    }
}

/// The distinct words per bank, as two rows of 16 banks.
pub(crate) fn bank_map(words: &[u32; BANKS]) -> String {
    let mut out = String::from("```text\nbank  ");
    let row = |out: &mut String, from: usize| {
        for b in from..from + 16 {
            out.push_str(&format!("{b:>3}"));
        }
        out.push_str("\nwords ");
        for &w in &words[from..from + 16] {
            if w == 0 {
                out.push_str("  .");
            } else {
                out.push_str(&format!("{w:>3}"));
            }
        }
        out.push('\n');
    };
    row(&mut out, 0);
    out.push_str("bank  ");
    row(&mut out, 16);
    out.push_str("```\n");
    out
}

/// `1 block/SM`, `4 blocks/SM`.
fn per_sm(n: u32) -> String {
    if n == 1 {
        "1 block/SM".to_string()
    } else {
        format!("{n} blocks/SM")
    }
}
