//! `if constexpr` branches found in the tree: a type-trait condition that the launched
//! instantiations decide stands over the target's "unknown" (the branch every launch
//! takes is compiled, and its errors are reported), and a commented-out `if constexpr`
//! is no branch.

use std::sync::Arc;

use kernaut_ide::gpu::Arch;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};
use kernaut_test_utils::Fixture;

const RULE: &str = "arch/requires-newer-sm";

/// Checks the rule's diagnostics for sm_75 against the fixture's `// ^^^` annotations.
fn check(fixture: &str) {
    let fixture = Fixture::parse(fixture);
    let file = fixture.single();
    let mut host = AnalysisHost::new(AnalysisConfig {
        arch: Arch::parse("sm_75").unwrap(),
        arch_configured: true,
        arch_origin: "--arch".into(),
        ..AnalysisConfig::default()
    });
    host.set_knowledge(Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap()));
    let id = host.set_file("/p/k.cu", &file.text);
    let got: Vec<_> = host
        .analysis()
        .diagnostics(id)
        .unwrap()
        .into_iter()
        .filter(|d| d.rule == RULE)
        .collect();
    assert_eq!(
        got.len(),
        file.annotations.len(),
        "{got:#?} against {:#?}",
        file.annotations
    );
    for (d, a) in got.iter().zip(&file.annotations) {
        assert_eq!(d.range, a.range, "{d:?}");
        assert_eq!(d.severity.as_str(), a.severity, "{d:?}");
        assert!(d.message.starts_with(&a.message), "{d:?}");
    }
}

#[test]
fn the_branch_every_launch_takes_is_compiled() {
    check(
        r#"
template <typename T>
__global__ void k(T* out, const float* in) {
    // if constexpr (sizeof(T) == 2) { an older idea }
    if constexpr (sizeof(T) == 4) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(0), "l"(in));
                   // ^^^^^^^^^^^^^^^^^^^^^^^^^ error: `cp.async.ca` needs sm_80
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" :: "r"(0), "l"(in));
    }
}
void run(float* out, const float* in) { k<float><<<1, 32>>>(out, in); }
"#,
    );
}
