//! The test helpers every rule's tests call: the only code in the tests that calls the
//! rule API.

use std::sync::OnceLock;

use expect_test::Expect;
use kernaut_gpu::Arch;
use kernaut_syntax::SourceFile;
use kernaut_test_utils::{Fixture, FixtureFile};
use kernaut_wiki::WikiConfig;

use super::{apply_edits, check as run_rules, RuleContext, RuleDiagnostic, RULES};
use crate::config::RulesConfig;
use crate::Knowledge;

/// The built-in wiki, loaded once for all tests.
pub(crate) fn knowledge() -> &'static Knowledge {
    static K: OnceLock<Knowledge> = OnceLock::new();
    K.get_or_init(|| Knowledge::load(&WikiConfig::builtin()).expect("the built-in wiki indexes"))
}

fn run(file: &FixtureFile, rule: &str) -> Vec<RuleDiagnostic> {
    assert!(
        RULES.iter().any(|r| r.id == rule),
        "no rule `{rule}` in RULES"
    );
    let arch =
        Arch::parse(file.meta.get("arch").map_or("sm_90", String::as_str)).expect("fixture arch");
    let source = SourceFile::parse(&file.text);
    let config = RulesConfig::default();
    let ctx = RuleContext::new(&source, arch, knowledge(), &config);
    run_rules(&ctx)
        .into_iter()
        .filter(|d| d.rule == rule)
        .collect()
}

/// Runs the rules over a one-file fixture and checks the diagnostics of `rule` against
/// its `// ^^^ severity: message` annotations: same ranges and severities, and each
/// message starts with the annotation's text. A fixture without annotations must stay
/// silent.
#[track_caller]
pub(crate) fn check(rule: &str, fixture: &str) {
    let f = Fixture::parse(fixture);
    let file = f.single();
    let got = run(file, rule);
    let show = |d: &RuleDiagnostic| {
        format!(
            "{:?} {:?} {}: {}",
            d.range,
            &file.text[d.range.clone()],
            d.severity.as_str(),
            d.message
        )
    };
    let got_lines: Vec<String> = got.iter().map(show).collect();
    assert_eq!(
        got.len(),
        file.annotations.len(),
        "expected {} diagnostics, got:\n{}",
        file.annotations.len(),
        got_lines.join("\n")
    );
    for (a, d) in file.annotations.iter().zip(&got) {
        assert_eq!(
            (a.range.clone(), a.severity.as_str()),
            (d.range.clone(), d.severity.as_str()),
            "range or severity differs for `{}`; got:\n{}",
            a.message,
            got_lines.join("\n")
        );
        assert!(
            d.message.starts_with(&a.message),
            "message `{}` does not start with `{}`",
            d.message,
            a.message
        );
    }
}

/// Runs the rules over a fixture and compares the full messages (one per line, with the
/// cited anchor) with a snapshot.
#[track_caller]
pub(crate) fn check_messages(rule: &str, fixture: &str, expect: Expect) {
    let f = Fixture::parse(fixture);
    let got = run(f.single(), rule);
    let text: Vec<String> = got
        .iter()
        .map(|d| format!("{}: {} ({})", d.severity.as_str(), d.message, d.wiki))
        .collect();
    expect.assert_eq(&(text.join("\n") + "\n"));
}

/// The messages of `rule` over a one-file fixture.
pub(crate) fn messages(rule: &str, fixture: &str) -> Vec<String> {
    let f = Fixture::parse(fixture);
    run(f.single(), rule)
        .into_iter()
        .map(|d| d.message)
        .collect()
}

/// Applies fix `fix` of the first diagnostic of `rule` and compares the source with a
/// snapshot.
#[track_caller]
pub(crate) fn check_fix(rule: &str, fixture: &str, fix: usize, expect: Expect) {
    let f = Fixture::parse(fixture);
    let file = f.single();
    let got = run(file, rule);
    let d = got.first().expect("the rule fires");
    let fix = d.fixes.get(fix).expect("the diagnostic has that fix");
    let fixed = apply_edits(&file.text, &fix.edits);
    expect.assert_eq(&format!("// {}\n{fixed}", fix.title));
}

/// Checks that the first diagnostic of `rule` offers no fix.
#[track_caller]
pub(crate) fn check_no_fix(rule: &str, fixture: &str) {
    let f = Fixture::parse(fixture);
    let got = run(f.single(), rule);
    let d = got.first().expect("the rule fires");
    assert!(d.fixes.is_empty(), "unexpected fixes: {:?}", d.fixes);
}

#[cfg(test)]
mod tests {
    use kernaut_syntax::SourceFile;

    use super::knowledge;
    use crate::config::{parse_config, Severity};
    use crate::rules::{check, RuleContext, RULES};

    #[test]
    fn every_cited_anchor_exists_in_the_builtin_wiki() {
        let wiki = &knowledge().wiki;
        for rule in RULES {
            assert!(!rule.wiki.is_empty(), "{} cites nothing", rule.id);
            for link in rule.wiki {
                assert!(
                    wiki.resolves(link),
                    "{}: `{link}` is not in the wiki",
                    rule.id
                );
            }
        }
    }

    #[test]
    fn rule_ids_are_unique() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    const CONFLICT: &str = "__global__ void k(float* o) {\n    __shared__ float t[32][32];\n    o[0] = t[threadIdx.x][0];\n    // kernaut: allow(bank-conflict)\n    o[1] = t[threadIdx.x][1];\n    o[2] = t[threadIdx.x][2]; // kernaut: allow(bank-conflict)\n}\n";

    fn run(text: &str, toml: &str) -> Vec<(usize, Severity)> {
        let file = SourceFile::parse(text);
        let config = parse_config(toml).unwrap();
        let ctx = RuleContext::new(
            &file,
            config
                .arch()
                .unwrap_or(kernaut_gpu::Arch::parse("sm_90").unwrap()),
            knowledge(),
            &config.rules,
        );
        let lines = crate::rules::LineIndex::new(text);
        check(&ctx)
            .iter()
            .map(|d| (lines.line(d.range.start) as usize, d.severity))
            .collect()
    }

    #[test]
    fn allow_comments_silence_their_line() {
        assert_eq!(run(CONFLICT, ""), vec![(2, Severity::Warning)]);
    }

    #[test]
    fn configuration_relevels_and_switches_off() {
        assert_eq!(
            run(CONFLICT, "[rules]\nbank-conflict = \"error\"\n"),
            vec![(2, Severity::Error)]
        );
        assert_eq!(run(CONFLICT, "[rules]\nbank-conflict = \"off\"\n"), vec![]);
    }

    /// A misspelled id silences nothing and is reported, with the closest id, where the
    /// comment is; a correct one next to it still silences.
    #[test]
    fn misspelled_allow_ids_are_hints() {
        let text = CONFLICT.replace(
            "    o[2] = t[threadIdx.x][2]; // kernaut: allow(bank-conflict)",
            "    o[2] = t[threadIdx.x][2]; // kernaut: allow(bank-conflit, ilp)",
        );
        assert_eq!(
            run(&text, ""),
            vec![
                (2, Severity::Warning),
                (5, Severity::Warning),
                (5, Severity::Hint)
            ]
        );
        let file = SourceFile::parse(&text);
        let config = parse_config("").unwrap();
        let arch = kernaut_gpu::Arch::parse("sm_90").unwrap();
        let ctx = RuleContext::new(&file, arch, knowledge(), &config.rules);
        let hint = check(&ctx)
            .into_iter()
            .find(|d| d.rule == crate::rules::UNKNOWN_RULE)
            .unwrap();
        assert_eq!(
            hint.message,
            "`allow(bank-conflit)` names no rule and silences nothing; did you mean `bank-conflict`?"
        );
        assert!(text[hint.range.clone()].starts_with("// kernaut: allow(bank-conflit"));
        assert_eq!(hint.fixes.len(), 1);
        assert!(!hint.fixes[0].safe);
        let fixed = crate::rules::apply_edits(&text, &hint.fixes[0].edits);
        assert!(
            fixed.contains("// kernaut: allow(bank-conflict, ilp)"),
            "{fixed}"
        );
        assert_eq!(
            run(&text, "[rules]\n\"config/unknown-rule\" = \"off\"\n"),
            vec![(2, Severity::Warning), (5, Severity::Warning)]
        );
    }
}
