//! Queries on an old snapshot are cancelled by a change; a failure is not an empty
//! answer.

use std::sync::Arc;

use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, Knowledge, QueryError};
use kernaut_test_utils::gen::generated;

#[test]
fn an_edit_cancels_diagnostics_running_on_the_10000_line_file() {
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let text = generated(10_000);
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge);
    let file = host.set_file("/gen.cu", &text);
    // The rules on 10,000 lines take long enough that the edit lands while they run; if
    // a fast machine finishes first, try again on the next revision.
    let mut outcomes = Vec::new();
    for attempt in 0..5 {
        let analysis = host.analysis();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            started_tx.send(()).unwrap();
            analysis.diagnostics(file).map(|d| d.len())
        });
        started_rx.recv().unwrap();
        let mut change = Change::new();
        change.edit_file(file, 0..0, format!("// edit {attempt}\n"));
        host.apply_change(change);
        let outcome = worker.join().expect("the query thread does not panic");
        outcomes.push(outcome.clone());
        if outcome == Err(QueryError::Cancelled) {
            break;
        }
    }
    assert_eq!(
        outcomes.last(),
        Some(&Err(QueryError::Cancelled)),
        "{outcomes:?}"
    );
    // A snapshot taken after the change answers.
    let fresh = host.analysis().diagnostics(file).unwrap();
    assert!(!fresh.is_empty());
}

#[test]
fn a_snapshot_older_than_the_host_answers_cancelled_at_once() {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    let file = host.set_file("/k.cu", "__global__ void k() {}\n");
    let old = host.analysis();
    assert!(old.kernel_facts(file).is_ok());
    let mut change = Change::new();
    change.set_file(file, "__global__ void k2() {}\n");
    host.apply_change(change);
    assert!(old.is_cancelled());
    assert_eq!(old.hover(file, 16).err(), Some(QueryError::Cancelled));
    assert_eq!(old.kernel_facts(file).err(), Some(QueryError::Cancelled));
    let names: Vec<String> = host
        .analysis()
        .kernel_facts(file)
        .unwrap()
        .iter()
        .map(|k| k.function.name.clone())
        .collect();
    assert_eq!(names, ["k2"]);
}

#[test]
fn one_change_carries_edits_of_several_files_and_the_configuration() {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    let a = host.file_id("/a.cu");
    let b = host.file_id("/b.cu");
    let mut change = Change::new();
    change
        .set_file(a, "__global__ void ka() {}\n")
        .set_file(b, "int x;\n")
        .edit_file(b, 0..0, "__global__ void kb() {}\n")
        .edit_file(a, 0..0, "// first\n");
    change.set_config(AnalysisConfig {
        default_block: [128, 1, 1],
        ..AnalysisConfig::default()
    });
    host.apply_change(change);
    let an = host.analysis();
    assert_eq!(an.text(a).unwrap(), "// first\n__global__ void ka() {}\n");
    assert_eq!(an.text(b).unwrap(), "__global__ void kb() {}\nint x;\n");
    assert_eq!(an.config().default_block, [128, 1, 1]);
    assert_eq!(an.files(), vec![a, b]);
    assert_eq!(an.path(b), Some("/b.cu"));
    let mut change = Change::new();
    change.remove_file(a);
    host.apply_change(change);
    assert_eq!(host.analysis().text(a), Err(QueryError::UnknownFile));
}

#[test]
fn a_kernaut_toml_applies_to_the_files_below_it() {
    use kernaut_ide::config::{parse_config, RuleLevel};
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let code = "__global__ void k(unsigned* o) {\n    o[threadIdx.x] = __reduce_add_sync(0xffffffffu, threadIdx.x);\n}\n";
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge);
    let old = host.set_file("/proj/old/k.cu", code);
    let new = host.set_file("/proj/new/k.cu", code);
    let mut change = Change::new();
    change
        .set_dir_config("/proj/old", Some(parse_config("arch = \"sm_70\"").unwrap()))
        .set_dir_config(
            "/proj",
            Some(parse_config("[rules]\n\"bank-conflict\" = \"off\"").unwrap()),
        );
    host.apply_change(change);
    let a = host.analysis();
    assert_eq!(a.file_config(old).arch.to_string(), "sm_70");
    assert_eq!(a.file_config(old).config_dir.as_deref(), Some("/proj/old"));
    assert_eq!(a.file_config(new).arch.to_string(), "sm_90");
    assert_eq!(
        a.file_config(new).rules.level("bank-conflict"),
        Some(RuleLevel::Off)
    );
    let rules = |f| -> Vec<&str> { a.diagnostics(f).unwrap().iter().map(|d| d.rule).collect() };
    assert!(
        rules(old).contains(&"arch/requires-newer-sm"),
        "{:?}",
        rules(old)
    );
    assert!(
        !rules(new).contains(&"arch/requires-newer-sm"),
        "{:?}",
        rules(new)
    );
}
