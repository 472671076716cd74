//! Minimum architectures per overload (issue 28): `__hfma2` on `__half2` needs sm_53, on
//! `__nv_bfloat162` sm_80 (`cuda_bf16.hpp` declares the bf16 FMAs only for
//! `__CUDA_ARCH__ >= 800`). The page's `symbol_requires_sm` is the one table: the hover
//! shows the overload's minimum (or the range of both where the file does not show the
//! type), and `arch/requires-newer-sm` reports only the overload that does not exist on
//! the target. An argument of unknown type takes the lowest minimum: silent.

use std::sync::{Arc, OnceLock};

use expect_test::{expect, Expect};
use kernaut_ide::gpu::Arch;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};

fn knowledge() -> Arc<Knowledge> {
    static K: OnceLock<Arc<Knowledge>> = OnceLock::new();
    K.get_or_init(|| Arc::new(Knowledge::load(&WikiConfig::builtin()).expect("the wiki loads")))
        .clone()
}

const CODE: &str = r#"#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void fma_both(__half2* h, __nv_bfloat162* b, float* f) {
    __half2 hx = h[threadIdx.x];
    __nv_bfloat162 bx = b[threadIdx.x];
    h[threadIdx.x] = __hfma2(hx, hx, hx);
    b[threadIdx.x] = __hfma2(bx, bx, bx);
    f[threadIdx.x] = __low2float(__hfma2(load(), bx, bx));
}
"#;

fn host(arch: &str) -> (AnalysisHost, kernaut_ide::FileId) {
    let mut host = AnalysisHost::new(AnalysisConfig {
        arch: Arch::parse(arch).expect("arch"),
        arch_configured: true,
        ..AnalysisConfig::default()
    });
    host.set_knowledge(knowledge());
    let f = host.set_file("/fma.cu", CODE);
    (host, f)
}

/// The hover's lines that name an architecture, at the `n`-th `__hfma2` of the file.
fn check_hover(arch: &str, n: usize, expect: Expect) {
    let (host, f) = host(arch);
    let at = CODE
        .match_indices("__hfma2(")
        .nth(n)
        .expect("the call is in the code")
        .0
        + 2;
    let h = host
        .analysis()
        .hover(f, at)
        .expect("the hover query answers")
        .expect("a hover");
    let lines: Vec<&str> = h.markdown.lines().filter(|l| l.contains("sm_")).collect();
    expect.assert_eq(&lines.join("\n"));
}

/// `line:col rule: message` for each `arch/requires-newer-sm` finding.
fn check_diagnostics(arch: &str, expect: Expect) {
    let (host, f) = host(arch);
    let diags = host.analysis().diagnostics(f).expect("diagnostics");
    let mut out = String::new();
    for d in diags.iter().filter(|d| d.rule == "arch/requires-newer-sm") {
        let line = CODE[..d.range.start].lines().count();
        let col = d.range.start - CODE[..d.range.start].rfind('\n').map_or(0, |i| i + 1) + 1;
        out.push_str(&format!("{line}:{col} {:?}: {}\n", d.severity, d.message));
    }
    if out.is_empty() {
        out.push_str("(none)\n");
    }
    expect.assert_eq(&out);
}

#[test]
fn hover_on_a_half2_call_shows_sm53() {
    check_hover(
        "sm_75",
        0,
        expect!["header: `cuda_fp16.h` · requires sm_53; target sm_75 has it"],
    );
}

#[test]
fn hover_on_a_bf16_call_shows_sm80_unmet_on_sm75() {
    check_hover(
        "sm_75",
        1,
        expect![[r#"
            **error** `arch/requires-newer-sm`: `__hfma2(__nv_bfloat162)` needs sm_80, but the target is sm_75 (from the editor's setting): the call does not compile there; guard it with `#if __CUDA_ARCH__ >= 800` (`NV_IF_TARGET(NV_PROVIDES_SM_80, (...))`), or build for sm_80 only
            header: `cuda_bf16.h` · **requires sm_80 (overload `__hfma2(__nv_bfloat162)`), target is sm_75**: not available on the target"#]],
    );
}

#[test]
fn hover_on_a_call_of_unknown_type_shows_both_minimums() {
    check_hover("sm_75", 2, expect!["headers: `cuda_fp16.h`, `cuda_bf16.h` · requires sm_53; target sm_75 has it · overloads need sm_53 to sm_80, by argument type"]);
}

#[test]
fn requires_newer_sm_reports_only_the_bf16_overload_on_sm75() {
    check_diagnostics(
        "sm_75",
        expect![[r#"
        8:22 Error: `__hfma2(__nv_bfloat162)` needs sm_80, but the target is sm_75 (from the editor's setting): the call does not compile there; guard it with `#if __CUDA_ARCH__ >= 800` (`NV_IF_TARGET(NV_PROVIDES_SM_80, (...))`), or build for sm_80 only
    "#]],
    );
}

#[test]
fn requires_newer_sm_is_silent_on_sm80() {
    check_diagnostics("sm_80", expect![["(none)\n"]]);
}
