//! `kernaut-lsp setup-clangd` on a fixture project, then clangd-19 on CUDA kernels:
//! its error count before and after. Needs `clangd-19` and NVIDIA's wheels (or a
//! toolkit); without them it says why it skipped.

use std::path::Path;
use std::process::Command;

/// Kernels in the style of the held-out set: fp16 intrinsics, shared tiles, warp
/// shuffles, cooperative groups.
const KERNELS: &[(&str, &str)] = &[
    ("hover.cu", include_str!("../../editors/fixtures/hover.cu")),
    (
        "reduce.cu",
        "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\nnamespace cg = cooperative_groups;\n\
         __global__ void reduce(const float* in, float* out, int n) {\n\
         \x20   __shared__ float partial[32];\n\
         \x20   auto block = cg::this_thread_block();\n\
         \x20   auto warp = cg::tiled_partition<32>(block);\n\
         \x20   float v = 0.f;\n\
         \x20   for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];\n\
         \x20   v = cg::reduce(warp, v, cg::plus<float>());\n\
         \x20   if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = v;\n\
         \x20   block.sync();\n\
         \x20   if (threadIdx.x < 32) v = __shfl_down_sync(0xffffffff, partial[threadIdx.x], 16);\n\
         \x20   if (threadIdx.x == 0) atomicAdd(out, v);\n}\n",
    ),
];

/// The errors clangd-19 reports for `file` (its `--check` mode), less its own
/// include-cleaner noise.
fn clangd_errors(dir: &Path, file: &str) -> Vec<String> {
    let out = Command::new("clangd-19")
        .arg(format!("--check={file}"))
        .current_dir(dir)
        .output()
        .expect("clangd-19 runs");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("E[") && !l.contains("IncludeCleaner"))
        .map(str::to_string)
        .collect()
}

#[test]
fn setup_clangd_makes_clangd_parse_cuda_without_a_toolkit() {
    if Command::new("clangd-19").arg("--version").output().is_err() {
        eprintln!("skipped: no clangd-19 on PATH (apt-get install clangd-19)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kernaut-setup-clangd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in KERNELS {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let before: Vec<usize> = KERNELS
        .iter()
        .map(|(f, _)| clangd_errors(&dir, f).len())
        .collect();
    // Without consent nothing is written.
    let dry = Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"))
        .args(["setup-clangd", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&dry.stdout);
    if !dry.status.success() {
        let why = String::from_utf8_lossy(&dry.stderr);
        assert!(why.contains("no CUDA headers found"), "{why}");
        eprintln!("skipped: {why}");
        return;
    }
    assert!(stdout.contains("+    - -xcuda"), "{stdout}");
    assert!(stdout.contains("was not written"), "{stdout}");
    assert!(!dir.join(".clangd").exists());
    let wrote = Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"))
        .args(["setup-clangd", "--yes", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(wrote.status.success(), "{wrote:?}");
    let clangd = std::fs::read_to_string(dir.join(".clangd")).unwrap();
    assert!(
        clangd.contains("--cuda-gpu-arch=sm_90") && clangd.contains("-nocudalib"),
        "{clangd}"
    );
    let after: Vec<Vec<String>> = KERNELS
        .iter()
        .map(|(f, _)| clangd_errors(&dir, f))
        .collect();
    eprintln!(
        "clangd-19 errors before: {before:?}, after: {:?}",
        after.iter().map(Vec::len).collect::<Vec<_>>()
    );
    // What is left is what clang itself makes of the code with NVIDIA's headers (the
    // same with an installed toolkit): never a missing installation, header or CUDA
    // keyword.
    let toolkit_problems = [
        "cannot find CUDA installation",
        "file not found",
        "unknown type name '__",
        "use of undeclared identifier 'threadIdx'",
        "libdevice",
    ];
    for (i, (name, _)) in KERNELS.iter().enumerate() {
        assert!(before[i] >= 3, "{name}: {} errors before", before[i]);
        assert!(after[i].len() < before[i], "{name}: {:?}", after[i]);
        for e in &after[i] {
            assert!(
                !toolkit_problems.iter().any(|p| e.contains(p)),
                "{name}: {e}"
            );
        }
    }
    assert!(after[0].is_empty(), "hover.cu: {:?}", after[0]);
    let _ = std::fs::remove_dir_all(&dir);
}
