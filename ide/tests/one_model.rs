//! Hover and the rules tell one story about every shared-memory access: where the
//! `bank-conflict` rule reports an access, the conflict degree and wavefronts it states
//! are those the hover's bank model gives for the same access.

use std::sync::Arc;

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

/// Compares rule and model over every access of `text`; returns (accesses, compared).
fn compare(knowledge: &Arc<Knowledge>, config: AnalysisConfig, text: &str) -> (usize, usize) {
    let mut host = AnalysisHost::new(config);
    host.set_knowledge(knowledge.clone());
    let f = host.set_file("/k.cu", text);
    let a = host.analysis();
    let diags = a.diagnostics(f).unwrap();
    let accesses = a.shared_accesses(f).unwrap();
    let mut compared = 0;
    for d in diags.iter().filter(|d| d.rule == "bank-conflict") {
        let Some((degree, wavefronts)) = stated(&d.message) else {
            continue;
        };
        let access = accesses
            .iter()
            .find(|x| x.range == d.range)
            .unwrap_or_else(|| panic!("the finding at {:?} is an access", d.range));
        let bank = a
            .bank(f, access)
            .unwrap()
            .expect("the model answers where the rule did");
        let report = bank.result.as_ref().expect("a bank report");
        assert_eq!(
            (report.conflict_degree, report.wavefronts),
            (degree, wavefronts),
            "rule and hover disagree on `{}`: {}",
            &text[d.range.clone()],
            d.message
        );
        // The hover shows the same figure.
        let hover = a
            .hover(f, d.range.start + 1)
            .unwrap()
            .expect("a hover on the access");
        assert!(
            hover.markdown.contains(&format!("{degree}-way")),
            "hover on `{}` does not say {degree}-way:\n{}",
            &text[d.range.clone()],
            hover.markdown
        );
        compared += 1;
    }
    (accesses.len(), compared)
}

#[test]
fn rules_and_hover_agree_on_every_flagged_access() {
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let (_, n) = compare(&knowledge, AnalysisConfig::default(), &generated(2_000));
    assert!(n > 10, "only {n} findings compared");
    compare(
        &knowledge,
        AnalysisConfig::default(),
        &generated_with(2_000, clean_kernel),
    );
    // The fixtures of the rule and hover tests.
    let fixtures = [
        include_str!("../src/rules/bank_conflict.rs"),
        include_str!("hover.rs"),
        include_str!("acceptance.rs"),
    ];
    let mut total = 0;
    for source in fixtures {
        for block in source.split("r#\"").skip(1) {
            let Some(fixture) = block.split("\"#").next() else {
                continue;
            };
            if !fixture.contains("__shared__") {
                continue;
            }
            let f = Fixture::parse(fixture);
            for file in &f.files {
                let mut config = AnalysisConfig::default();
                if let Some(b) = file.block() {
                    config.default_block = b;
                }
                total += compare(&knowledge, config, &file.text).1;
            }
        }
    }
    assert!(total > 0, "no fixture finding compared");
}
