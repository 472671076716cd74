//! Hover, the rules, occupancy, code lenses and inlay hints tell one story about every
//! shared-memory access and every kernel, because they all ask the one model layer
//! (`kernaut_ide::model`). Both directions are checked over every access of the rule and
//! hover fixtures and of the benchmark generator's file:
//!
//! - where `bank-conflict` reports an access, the model's definite conflict has the
//!   degree and wavefronts the finding states, and the hover shows them with the bytes
//!   per lane the model used;
//! - where the model has a definite conflict, the rule reports it; where the model's
//!   conflict is not definite (another plausible block avoids it, part of the warp), the
//!   hover says why the rule is silent;
//! - every kernel's static shared bytes are the same in the occupancy report, the kernel
//!   hover, the code lens and `smem/over-capacity`.

use std::sync::Arc;

use kernaut_ide::editor::format_bytes;
use kernaut_ide::model::kernel_static_shared;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};
use kernaut_test_utils::gen::{clean_kernel, generated, generated_with};
use kernaut_test_utils::Fixture;

/// (degree, wavefronts) from a rule message `N-way bank conflict: … takes W wavefronts`.
fn stated(message: &str) -> Option<(u32, u32)> {
    let degree = message.split("-way").next()?.trim().parse().ok()?;
    let w = message
        .split(" takes ")
        .nth(1)?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    Some((degree, w))
}

#[derive(Default, Debug)]
struct Counts {
    accesses: usize,
    findings: usize,
    silent_conflicts: usize,
    kernels: usize,
}

/// Compares rules, model, hover, lenses and inlay hints over every access and kernel of
/// the files (all open in one host), adding to `counts`.
fn compare(
    knowledge: &Arc<Knowledge>,
    config: AnalysisConfig,
    files: &[(String, String)],
    counts: &mut Counts,
) {
    let limit = u64::from(config.arch.limits().smem_per_block);
    let mut host = AnalysisHost::new(config);
    host.set_knowledge(knowledge.clone());
    let ids: Vec<_> = files
        .iter()
        .map(|(p, t)| host.set_file(p, t.as_str()))
        .collect();
    let a = host.analysis();
    for (f, (path, text)) in ids.into_iter().zip(files) {
        let diags = a.diagnostics(f).unwrap();
        let inlays = a
            .inlay_hints(f, None, kernaut_ide::editor::InlayConfig::default())
            .unwrap();
        for access in a.shared_accesses(f).unwrap() {
            counts.accesses += 1;
            let written = &text[access.range.clone()];
            let bank = a.bank(f, access).unwrap();
            let finding = diags
                .iter()
                .find(|d| d.rule == "bank-conflict" && d.range == access.range);
            let definite = bank.as_ref().and_then(|b| b.definite_conflict());
            let hover = a.hover(f, access.range.start + 1).unwrap();
            let inlay = inlays.iter().find(|h| {
                h.kind == kernaut_ide::editor::InlayKind::BankConflict
                    && h.offset == access.range.end
            });
            match (finding, definite) {
                (Some(d), Some(r)) => {
                    let bank = bank.as_ref().unwrap();
                    assert_eq!(
                        stated(&d.message),
                        Some((r.conflict_degree, r.wavefronts)),
                        "rule and model disagree on `{written}`: {}",
                        d.message
                    );
                    let wide = bank.width.is_some_and(|w| w >= 8);
                    assert!(
                        d.wiki.ends_with("#P2")
                            || (bank.sweep.is_some() && d.wiki.ends_with("#P7"))
                            || d.wiki.ends_with("#P4") == wide,
                        "`{written}`: the rule cites {} for a {:?}-byte access",
                        d.wiki,
                        bank.width
                    );
                    let hover = hover.expect("a hover on a reported access").markdown;
                    for said in [
                        format!("**{}-way bank conflict**", r.conflict_degree),
                        format!("{} wavefronts per request", r.wavefronts),
                        format!("{} B per lane", bank.width.unwrap_or(0)),
                    ] {
                        assert!(
                            hover.contains(&said),
                            "hover on `{written}` does not say {said:?}:\n{hover}"
                        );
                    }
                    assert!(
                        inlay.is_some_and(|h| h.label == format!("{}-way conflict", r.conflict_degree)),
                        "no inlay hint for the reported `{written}`: {inlay:?}"
                    );
                    counts.findings += 1;
                }
                (None, None) => {
                    assert!(inlay.is_none(), "inlay hint on unreported `{written}`");
                    let Some(bank) = &bank else { continue };
                    let Ok(r) = &bank.result else { continue };
                    let hover = hover.expect("a hover on a modelled access").markdown;
                    assert!(
                        hover.contains(&format!("{} B per lane", bank.width.unwrap_or(0))),
                        "hover on `{written}` does not give the bytes the model used:\n{hover}"
                    );
                    let thread_dependent = access.byte_offset.depends_on_thread()
                        && access.kind != kernaut_ide::syntax::AccessKind::AddressOf;
                    if r.conflict_degree >= 2 && thread_dependent {
                        // The hover shows the conflict under the block assumed and says
                        // why the rule does not report it.
                        assert!(
                            hover.contains("the `bank-conflict` rule does not report it")
                                || hover.contains("so it does not report this access"),
                            "hover on `{written}` claims a conflict the rule does not report, without saying why:\n{hover}"
                        );
                        counts.silent_conflicts += 1;
                    }
                }
                (Some(d), None) => panic!(
                    "the rule reports `{written}` but the model has no definite conflict: {}\n{bank:#?}",
                    d.message
                ),
                // A later part of a wide access: reported at its first part, which the
                // hover says.
                (None, Some(r))
                    if hover.as_ref().is_some_and(|h| {
                        h.markdown.contains("reports the wide access once, at its first part")
                    }) =>
                {
                    counts.silent_conflicts += usize::from(r.conflict_degree >= 2);
                }
                (None, Some(r)) => panic!(
                    "the model has a definite {}-way conflict on `{written}` the rule does not report",
                    r.conflict_degree
                ),
            }
        }
        // Static shared bytes: occupancy, kernel hover, code lens, over-capacity.
        let facts = a.file_facts(f).unwrap();
        let lenses = a.code_lenses(f).unwrap();
        for k in &facts.kernels {
            let shared = kernel_static_shared(facts, &k.name);
            let Some(occ) = a.occupancy(f, &k.name).unwrap() else {
                continue;
            };
            counts.kernels += 1;
            assert_eq!(
                u64::from(occ.static_smem),
                shared.bytes.min(u64::from(u32::MAX)),
                "occupancy of `{}`",
                k.name
            );
            let hover = a
                .hover(f, k.name_range.start)
                .unwrap()
                .expect("a hover on a kernel")
                .markdown;
            let said = format!("{} B static", occ.static_smem);
            assert!(
                hover.contains(&said),
                "hover on `{}` does not say {said}:\n{hover}",
                k.name
            );
            let lens = lenses
                .iter()
                .find(|l| l.range == k.name_range)
                .expect("a lens per kernel");
            let bytes = format_bytes(u64::from(occ.static_smem) + u64::from(occ.dynamic_smem));
            assert!(
                lens.title.contains(&bytes) || occ.result.is_err(),
                "lens of `{}`: {} (expected {bytes})",
                k.name,
                lens.title
            );
            let over = diags
                .iter()
                .find(|d| d.rule == "smem/over-capacity" && d.range == k.name_range);
            match over {
                Some(d) => assert!(
                    shared.bytes > limit && d.message.contains(&format!("{} bytes", shared.bytes)),
                    "over-capacity on `{}` says {} but the model has {} bytes",
                    k.name,
                    d.message,
                    shared.bytes
                ),
                // A template no launch instantiates may be compiled nowhere.
                None => assert!(
                    shared.bytes <= limit
                        || (!k.template_params.is_empty()
                            && a.launches_of(path, &k.name).is_empty()),
                    "`{}` has {} static bytes but no over-capacity finding",
                    k.name,
                    shared.bytes
                ),
            }
        }
    }
}

#[test]
fn every_access_and_kernel_tells_one_story() {
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let mut generated_counts = Counts::default();
    compare(
        &knowledge,
        AnalysisConfig::default(),
        &[("/gen.cu".into(), generated(2_000))],
        &mut generated_counts,
    );
    assert!(
        generated_counts.findings > 10,
        "only {generated_counts:?} compared"
    );
    compare(
        &knowledge,
        AnalysisConfig::default(),
        &[("/clean.cu".into(), generated_with(2_000, clean_kernel))],
        &mut generated_counts,
    );
    // The fixtures of the rule and hover tests.
    let fixtures = [
        include_str!("../src/rules/bank_conflict.rs"),
        include_str!("../src/rules/over_capacity.rs"),
        include_str!("hover.rs"),
        include_str!("acceptance.rs"),
    ];
    let mut counts = Counts::default();
    for source in fixtures {
        for block in source.split("r#\"").skip(1) {
            let Some(fixture) = block.split("\"#").next() else {
                continue;
            };
            if !fixture.contains("__shared__") {
                continue;
            }
            let f = Fixture::parse(fixture);
            let mut config = AnalysisConfig::default();
            if let Some(b) = f.files.iter().find_map(|file| file.block()) {
                config.default_block = b;
            }
            let files: Vec<(String, String)> = f
                .files
                .iter()
                .map(|file| (file.path.clone(), file.text.clone()))
                .collect();
            compare(&knowledge, config, &files, &mut counts);
        }
    }
    eprintln!("generated: {generated_counts:?}; fixtures: {counts:?}");
    assert!(
        counts.findings > 20 && counts.silent_conflicts > 2 && counts.kernels > 50,
        "too little compared: {counts:?}"
    );
}

/// The rules see the launches of every file of the host, as hover does, and a change to
/// another file's launch reaches the diagnostics of the kernel's file.
#[test]
fn rules_see_launches_in_other_files() {
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let f = Fixture::parse(
        r#"
//- /kernel.cu
__global__ void k(float* out) {
    __shared__ float tile[32][16];
    out[0] = tile[threadIdx.x][threadIdx.y];
}
//- /main.cu
void launch(float* out) {
    k<<<1, dim3(16, 16)>>>(out);
}
"#,
    );
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge);
    let ids: Vec<_> = f
        .files
        .iter()
        .map(|file| host.set_file(&file.path, file.text.as_str()))
        .collect();
    let kernel_text = &f.files[0].text;
    let at = kernel_text.find("tile[threadIdx.x]").unwrap();
    let findings = |host: &AnalysisHost| -> Vec<(std::ops::Range<usize>, String)> {
        host.analysis()
            .diagnostics(ids[0])
            .unwrap()
            .into_iter()
            .filter(|d| d.rule == "bank-conflict")
            .map(|d| (d.range, d.message.split(':').next().unwrap().to_string()))
            .collect()
    };
    // 16×16 from the other file: a warp spans two rows, 8-way (32-way if `threadIdx.x`
    // ran over the warp).
    let range = at..at + "tile[threadIdx.x][threadIdx.y]".len();
    assert_eq!(
        findings(&host),
        vec![(range.clone(), "8-way bank conflict".to_string())]
    );
    let hover = host.analysis().hover(ids[0], at + 1).unwrap().unwrap();
    assert!(
        hover.markdown.contains("**8-way bank conflict**"),
        "{}",
        hover.markdown
    );
    // The launch changes to 32×8: a warp is one row, 16-way.
    host.set_file(
        "/main.cu",
        "void launch(float* out) {\n    k<<<1, dim3(32, 8)>>>(out);\n}\n",
    );
    assert_eq!(
        findings(&host),
        vec![(range, "16-way bank conflict".to_string())]
    );
}
