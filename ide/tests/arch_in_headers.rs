//! `arch/requires-newer-sm` in a header: a `__device__` function of a `.cuh` is compiled
//! only into the files that call it (where the guards around those calls are), so what
//! the header alone shows is a warning; a kernel, or the same helper in a `.cu`, stays an
//! error.

use std::sync::Arc;

use expect_test::{expect, Expect};
use kernaut_ide::gpu::Arch;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};

const RULE: &str = "arch/requires-newer-sm";

const HELPER: &str = r#"
__device__ void load_tile(void* dst, const void* src, unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 128, [%2];"
                 :: "r"(0), "l"(src), "r"(0) : "memory");
}
"#;

const KERNEL: &str = r#"
__global__ void k(const float* src) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 128, [%2];"
                 :: "r"(0), "l"(src), "r"(0) : "memory");
}
"#;

/// The severity and the end of the message of each finding of the rule in `path`.
fn check(path: &str, text: &str, expect: Expect) {
    let config = AnalysisConfig {
        arch: Arch::parse("sm_80").unwrap(),
        arch_configured: true,
        ..AnalysisConfig::default()
    };
    let mut host = AnalysisHost::new(config);
    host.set_knowledge(Arc::new(
        Knowledge::load(&WikiConfig::builtin()).expect("the built-in wiki loads"),
    ));
    let id = host.set_file(path, text);
    let got: Vec<String> = host
        .analysis()
        .diagnostics(id)
        .unwrap()
        .into_iter()
        .filter(|d| d.rule == RULE)
        .map(|d| {
            let tail = d
                .message
                .split(" (a warning")
                .nth(1)
                .map_or("", |_| " (a warning: …)");
            format!(
                "{}: `{}`{tail}",
                d.severity.as_str(),
                &text[d.range.clone()]
            )
        })
        .collect();
    expect.assert_eq(&(got.join("\n") + "\n"));
}

#[test]
fn a_device_function_in_a_header_is_a_warning() {
    check(
        "/lib/tile.cuh",
        HELPER,
        expect![[r#"
            warning: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` (a warning: …)
        "#]],
    );
}

#[test]
fn the_same_function_in_a_source_file_or_a_kernel_in_a_header_is_an_error() {
    check(
        "/lib/tile.cu",
        HELPER,
        expect![[r#"
            error: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`
        "#]],
    );
    check(
        "/lib/tile.cuh",
        KERNEL,
        expect![[r#"
            error: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`
        "#]],
    );
}
