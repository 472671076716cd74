//! A host that keeps files without their syntax trees (`AnalysisHost::set_keep_trees`,
//! what `kernaut-lsp check` does over a repository) finds exactly what a host that keeps
//! them finds: the rules parse a file again when they run, and the other files' launches,
//! attribute calls, headers and macros are read from the facts that stay.

use std::sync::Arc;

use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, Knowledge};
use kernaut_test_utils::gen::{clean_kernel, generated_with, kernel};

/// Files that read each other: a header of macros and a device function, a file of
/// kernels that includes it, a file that launches them with other blocks and opts one in
/// to more dynamic shared memory, and a large generated file (cut into chunks).
fn project() -> Vec<(&'static str, String)> {
    vec![
        (
            "/p/tile.cuh",
            "#pragma once\n#define TILE 32\n#define PAD 0\n\
             __device__ float twice(float x) { return 2.0f * x; }\n"
                .to_string(),
        ),
        (
            "/p/kernels.cu",
            "#include \"tile.cuh\"\n\
             __global__ void colread(float* out) {\n\
             \x20   __shared__ float tile[TILE][TILE + PAD];\n\
             \x20   tile[threadIdx.y][threadIdx.x] = twice(1.0f);\n\
             \x20   __syncthreads();\n\
             \x20   out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n\
             }\n\
             __global__ void big(float* out) {\n\
             \x20   extern __shared__ float s[];\n\
             \x20   s[threadIdx.x] = 0.0f;\n\
             \x20   out[threadIdx.x] = s[threadIdx.x];\n\
             }\n"
            .to_string(),
        ),
        (
            "/p/launch.cu",
            "void run(float* o, int n) {\n\
             \x20   colread<<<1, dim3(32, 32)>>>(o);\n\
             \x20   big<<<n, 256, 96 * 1024>>>(o);\n\
             }\n"
            .to_string(),
        ),
        ("/p/gen.cu", generated_with(2_000, kernel)),
        ("/p/clean.cu", generated_with(300, clean_kernel)),
    ]
}

fn host(keep_trees: bool, arch: &str) -> AnalysisHost {
    let mut config = AnalysisConfig::default();
    let target = kernaut_ide::gpu::Target::parse_list(arch).unwrap();
    assert!(config.choose_targets(target, "--arch"));
    let mut host = AnalysisHost::new(config);
    host.set_keep_trees(keep_trees);
    host.set_knowledge(Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap()));
    let mut change = Change::new();
    for (path, text) in project() {
        let id = host.file_id(path);
        change.set_file(id, text);
    }
    host.apply_change(change);
    host
}

/// Every file's diagnostics, as `path: rule message` lines.
fn findings(host: &AnalysisHost) -> Vec<String> {
    let analysis = host.analysis();
    let mut out = Vec::new();
    for id in analysis.files() {
        let path = analysis.path(id).unwrap().to_string();
        for d in analysis.diagnostics(id).unwrap() {
            out.push(format!(
                "{path}:{}: {} {}",
                d.range.start, d.rule, d.message
            ));
        }
    }
    out
}

#[test]
fn files_kept_without_trees_give_the_same_diagnostics() {
    for arch in ["sm_90", "sm_80"] {
        let kept = findings(&host(true, arch));
        let dropped = findings(&host(false, arch));
        assert!(kept.len() > 20, "{kept:#?}");
        // The launch in another file decides the conflict; the header sizes the tile.
        assert!(
            kept.iter()
                .any(|d| d.starts_with("/p/kernels.cu") && d.contains("bank-conflict")),
            "{kept:#?}"
        );
        assert_eq!(kept, dropped, "{arch}");
    }
}

#[test]
fn edits_and_header_changes_of_files_kept_without_trees_are_seen() {
    let mut kept = host(true, "sm_90");
    let mut dropped = host(false, "sm_90");
    for h in [&mut kept, &mut dropped] {
        // The header's padding removes the conflict; the launch's block changes.
        let text = h
            .analysis()
            .text(h.file_id("/p/tile.cuh"))
            .unwrap()
            .to_string();
        let at = text.find("PAD 0").unwrap() + 4;
        assert!(h.apply_edit("/p/tile.cuh", at..at + 1, "1"));
        let text = h
            .analysis()
            .text(h.file_id("/p/launch.cu"))
            .unwrap()
            .to_string();
        let at = text.find("256").unwrap();
        assert!(h.apply_edit("/p/launch.cu", at..at + 3, "128"));
    }
    let (a, b) = (findings(&kept), findings(&dropped));
    assert!(
        !a.iter()
            .any(|d| d.starts_with("/p/kernels.cu") && d.contains("bank-conflict")),
        "{a:#?}"
    );
    assert_eq!(a, b);
}
