//! The race evaluation set (issue 26): realistic kernels under `tests/data/races/`, each a
//! complete program with a host `main` and a concrete launch, labelled by hand. A racy
//! file says in its header which two threads touch which element, and marks the line
//! kernaut reports (the second access) with `// race: <rule>`; a clean twin has no
//! marker. This test runs the rules on each file alone (as `kernaut-lsp check FILE`
//! does, built-in wiki, sm_90), prints a table, and fails when fewer than 90 % of the
//! labelled races are found or when any race rule reports on a clean file or on a line
//! no label marks.
//!
//! Run `cargo test -p kernaut-ide --test races -- --nocapture` to see the table.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use kernaut_ide::config::Severity;
use kernaut_ide::gpu::Arch;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, Knowledge, PositionEncoding};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/races")
}

fn knowledge() -> Arc<Knowledge> {
    static K: OnceLock<Arc<Knowledge>> = OnceLock::new();
    K.get_or_init(|| Arc::new(Knowledge::load(&WikiConfig::builtin()).expect("the wiki loads")))
        .clone()
}

/// The race findings of one file checked alone: (rule, 1-based line, severity, message).
fn race_findings(path: &Path) -> Vec<(String, u32, Severity, String)> {
    let mut host = AnalysisHost::new(AnalysisConfig {
        arch: Arch::parse("sm_90").unwrap(),
        arch_configured: false,
        ..AnalysisConfig::default()
    });
    host.set_knowledge(knowledge());
    let id = host.file_id(&path.display().to_string());
    let mut change = Change::new();
    change.set_file(id, std::fs::read_to_string(path).unwrap());
    host.apply_change(change);
    let analysis = host.analysis();
    let index = analysis.line_index(id).unwrap();
    analysis
        .diagnostics(id)
        .unwrap()
        .into_iter()
        .filter(|d| d.rule.starts_with("race/"))
        .map(|d| {
            let line = index.line_col(d.range.start, PositionEncoding::Utf8).line + 1;
            (d.rule.to_string(), line, d.severity, d.message)
        })
        .collect()
}

/// The `// race: <rule>` markers of a file: (rule, 1-based line).
fn labels(text: &str) -> Vec<(String, u32)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let rule = l.split("// race: ").nth(1)?.trim();
            Some((rule.to_string(), i as u32 + 1))
        })
        .collect()
}

#[test]
fn races_are_found_and_clean_twins_stay_silent() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    let (mut labelled, mut found, mut as_warning, mut racy, mut clean) = (0, 0, 0, 0, 0);
    let mut wrong: Vec<String> = Vec::new();
    let mut missed: Vec<String> = Vec::new();
    println!("| file | label | found |");
    println!("|---|---|---|");
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        let expect = labels(&text);
        let got = race_findings(path);
        if expect.is_empty() {
            clean += 1;
        } else {
            racy += 1;
        }
        for (rule, line) in &expect {
            labelled += 1;
            let hit = got.iter().find(|(r, l, _, _)| r == rule && l == line);
            let shown = match hit {
                Some((_, _, s, _)) => {
                    found += 1;
                    if *s != Severity::Hint {
                        as_warning += 1;
                    }
                    s.as_str().to_string()
                }
                None => {
                    missed.push(format!("{name}:{line} {rule}"));
                    "missed".to_string()
                }
            };
            println!("| {name} | {rule} line {line} | {shown} |");
        }
        if expect.is_empty() {
            println!(
                "| {name} | clean | {} |",
                if got.is_empty() { "silent" } else { "REPORTED" }
            );
        }
        for (rule, line, severity, message) in &got {
            if !expect.iter().any(|(r, l)| r == rule && l == line) {
                wrong.push(format!(
                    "{name}:{line}: {}: {message} [{rule}]",
                    severity.as_str()
                ));
            }
        }
    }
    println!(
        "\n{racy} racy files, {clean} clean; {found} of {labelled} labelled races found ({as_warning} as warnings); {} reports on unlabelled lines",
        wrong.len()
    );
    assert!(
        racy >= 16 && clean >= 16,
        "the set has {racy} racy and {clean} clean files"
    );
    assert!(
        wrong.is_empty(),
        "reports no label marks:\n{}",
        wrong.join("\n")
    );
    assert!(
        found * 10 >= labelled * 9,
        "found {found} of {labelled}; missed:\n{}",
        missed.join("\n")
    );
}
