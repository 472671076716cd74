//! The rules and the hover see the macros of the project's own headers that a file
//! includes with `#include "…"` (resolved by the host against the including file's
//! directory, among the files it holds), and launches written inside macros.

use std::sync::{Arc, OnceLock};

use expect_test::{expect, Expect};
use kernaut_ide::rules::apply_edits;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, FileId, Knowledge};
use kernaut_test_utils::Fixture;

fn knowledge() -> Arc<Knowledge> {
    static K: OnceLock<Arc<Knowledge>> = OnceLock::new();
    K.get_or_init(|| Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap()))
        .clone()
}

/// A host holding every file of the fixture; the ids in fixture order.
fn host_with(fixture: &str) -> (AnalysisHost, Vec<FileId>, Fixture) {
    let f = Fixture::parse(fixture);
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let ids = f
        .files
        .iter()
        .map(|file| host.set_file(&file.path, file.text.as_str()))
        .collect();
    (host, ids, f)
}

/// The findings of `rule` in `file`: `line:col severity: message` (up to the first `;`
/// or `:` after the first word), the written text under the range, one a line.
fn findings(host: &AnalysisHost, file: FileId, rule: &str) -> String {
    let a = host.analysis();
    let text = a.text(file).unwrap();
    let mut out = String::new();
    for d in a.diagnostics(file).unwrap() {
        if d.rule != rule {
            continue;
        }
        let line = text[..d.range.start].matches('\n').count() + 1;
        let message: String = d.message.chars().take(60).collect();
        out.push_str(&format!(
            "{line}: {:?} `{}`: {message}\n",
            d.severity,
            &text[d.range.clone()]
        ));
    }
    out
}

fn check(fixture: &str, file: usize, rule: &str, expect: Expect) {
    let (host, ids, _) = host_with(fixture);
    expect.assert_eq(&findings(&host, ids[file], rule));
}

const WAIT_RULE: &str = "async-copy/wait-all-in-pipelined-loop";

const PTX_H: &str = r#"
#pragma once
#define CP_ASYNC_CG(dst, src) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src))
#define CP_ASYNC_COMMIT_GROUP() asm volatile("cp.async.commit_group;\n" ::)
#define CP_ASYNC_WAIT_GROUP(n) asm volatile("cp.async.wait_group %0;\n" ::"n"(n))
"#;

/// A double-buffered loop written with the header's wrappers; `INCLUDE` is replaced.
const PIPELINED: &str = r#"
INCLUDE
__global__ void k(const float4* in, float* out, int n) {
    __shared__ float4 buf[2][256];
    CP_ASYNC_CG(&buf[0][threadIdx.x], in);
    CP_ASYNC_COMMIT_GROUP();
    for (int t = 0; t < n; ++t) {
        CP_ASYNC_CG(&buf[(t + 1) % 2][threadIdx.x], in + t);
        CP_ASYNC_COMMIT_GROUP();
        CP_ASYNC_WAIT_GROUP(0);
        __syncthreads();
        out[t] = buf[t % 2][threadIdx.x].x;
        __syncthreads();
    }
}
"#;

fn pipelined(header_path: &str, include: &str) -> String {
    format!(
        "//- {header_path}\n{PTX_H}\n//- /p/src/k.cu\n{}",
        PIPELINED.replace("INCLUDE", include)
    )
}

#[test]
fn wait_wrapper_macro_from_an_included_header_is_a_wait() {
    let fixture = pipelined("/p/src/ptx.h", "#include \"ptx.h\"");
    check(
        &fixture,
        1,
        WAIT_RULE,
        expect![[r#"
            10: Warning `CP_ASYNC_WAIT_GROUP(0)`: `CP_ASYNC_WAIT_GROUP(0)` waits for every copy, including the
        "#]],
    );
    // The fix writes the count in the macro's argument.
    let (host, ids, _) = host_with(&fixture);
    let a = host.analysis();
    let d = a
        .diagnostics(ids[1])
        .unwrap()
        .into_iter()
        .find(|d| d.rule == WAIT_RULE)
        .unwrap();
    let fixed = apply_edits(a.text(ids[1]).unwrap(), &d.fixes[0].edits);
    assert!(fixed.contains("CP_ASYNC_WAIT_GROUP(1);"), "{fixed}");
}

#[test]
fn header_in_another_directory_resolves_relative_to_the_includer() {
    check(
        &pipelined("/p/common/ptx.h", "#include \"../common/ptx.h\""),
        1,
        WAIT_RULE,
        expect![[r#"
            10: Warning `CP_ASYNC_WAIT_GROUP(0)`: `CP_ASYNC_WAIT_GROUP(0)` waits for every copy, including the
        "#]],
    );
    // The same name relative to the wrong directory resolves to nothing.
    check(
        &pipelined("/p/common/ptx.h", "#include \"common/ptx.h\""),
        1,
        WAIT_RULE,
        expect![""],
    );
}

#[test]
fn header_not_included_or_included_with_angle_brackets_is_not_seen() {
    check(&pipelined("/p/src/ptx.h", ""), 1, WAIT_RULE, expect![""]);
    check(
        &pipelined("/p/src/ptx.h", "#include <ptx.h>"),
        1,
        WAIT_RULE,
        expect![""],
    );
}

#[test]
fn the_files_own_definition_wins_over_the_headers() {
    // The .cu redefines the wait as something else: its own definition is what the
    // preprocessor sees.
    check(
        &pipelined(
            "/p/src/ptx.h",
            "#include \"ptx.h\"\n#undef CP_ASYNC_WAIT_GROUP\n#define CP_ASYNC_WAIT_GROUP(n) record_step(n)",
        ),
        1,
        WAIT_RULE,
        expect![""],
    );
    // And a wrapper defined in the .cu alone is seen as before.
    check(
        &format!(
            "//- /p/src/k.cu\n{}",
            PIPELINED.replace("INCLUDE", PTX_H.trim())
        ),
        0,
        WAIT_RULE,
        expect![[r#"
            14: Warning `CP_ASYNC_WAIT_GROUP(0)`: `CP_ASYNC_WAIT_GROUP(0)` waits for every copy, including the
        "#]],
    );
}

#[test]
fn editing_the_header_updates_the_includers_findings() {
    let (mut host, ids, _) = host_with(&pipelined("/p/src/ptx.h", "#include \"ptx.h\""));
    let with = findings(&host, ids[1], WAIT_RULE);
    assert!(with.contains("CP_ASYNC_WAIT_GROUP(0)"), "{with}");
    // The header's wait becomes a plain call: the .cu's finding goes.
    let header = host.analysis().text(ids[0]).unwrap().to_string();
    let at = header.find("asm volatile(\"cp.async.wait_group").unwrap();
    let end = header[at..].find('\n').unwrap() + at;
    assert!(host.apply_edit("/p/src/ptx.h", at..end, "record_step(n)"));
    assert_eq!(findings(&host, ids[1], WAIT_RULE), "");
    // Back: the finding returns.
    host.set_file("/p/src/ptx.h", &header);
    assert_eq!(findings(&host, ids[1], WAIT_RULE), with);
    // The header removed from the host: silent again.
    let mut change = kernaut_ide::Change::new();
    change.remove_file(ids[0]);
    host.apply_change(change);
    assert_eq!(findings(&host, ids[1], WAIT_RULE), "");
    // The header itself is analysed on its own and has no findings.
    host.set_file("/p/src/ptx.h", &header);
    assert_eq!(findings(&host, ids[0], WAIT_RULE), "");
}

const VECTOR_CU: &str = r#"
__global__ void k(float* out) {
    __shared__ float s[4096];
    int t = threadIdx.x;
    float4 a = FLOAT4(s[4 * t]);
    out[t] = a.x;
}
"#;

#[test]
fn vector_macro_from_a_header_is_one_wide_access() {
    let header = "//- /p/vec.h\n#define FLOAT4(v) (reinterpret_cast<float4 *>(&(v))[0])\n";
    // Included: one 16-byte access per lane, contiguous, conflict-free.
    let fixture = format!("{header}//- /p/k.cu\n#include \"vec.h\"\n{VECTOR_CU}");
    check(&fixture, 1, "bank-conflict", expect![""]);
    let (host, ids, f) = host_with(&fixture);
    let at = f.files[1].text.find("s[4 * t]").unwrap();
    let hover = host.analysis().hover(ids[1], at + 1).unwrap().unwrap();
    assert!(
        hover.markdown.contains("16 B per lane"),
        "{}",
        hover.markdown
    );
    // Not included: `FLOAT4` is a macro the file does not see, which may read the
    // element's address at any width: not modelled as a 4-byte load, silent.
    check(
        &format!("{header}//- /p/k.cu\n{VECTOR_CU}"),
        1,
        "bank-conflict",
        expect![""],
    );
}

const SMEM_CU: &str = r#"
__global__ void k(float* out) {
    __shared__ float a[BM][BK];
    a[threadIdx.x][0] = out[threadIdx.x];
    out[threadIdx.x] = a[0][threadIdx.x];
}
"#;

#[test]
fn constants_from_a_header_size_shared_arrays() {
    let header = "//- /p/tile.h\n#define BM 128\n#define BK 128\n";
    let fixture = format!("{header}//- /p/k.cu\n#include \"tile.h\"\n{SMEM_CU}");
    check(
        &fixture,
        1,
        "smem/over-capacity",
        expect![[r#"
            3: Hint `k`: `k` declares 65536 bytes of static shared memory, over the 4
        "#]],
    );
    // The kernel's hover knows the bytes.
    let (host, ids, f) = host_with(&fixture);
    let at = f.files[1].text.find("void k").unwrap() + 5;
    let hover = host.analysis().hover(ids[1], at).unwrap().unwrap();
    assert!(hover.markdown.contains("65536 bytes"), "{}", hover.markdown);
    // The .cu's own smaller tile wins.
    check(
        &format!("{header}//- /p/k.cu\n#include \"tile.h\"\n#define BK 16\n{SMEM_CU}"),
        1,
        "smem/over-capacity",
        expect![""],
    );
    // Without the include the size is unknown: silent.
    check(
        &format!("{header}//- /p/k.cu\n{SMEM_CU}"),
        1,
        "smem/over-capacity",
        expect![""],
    );
}

const TILE_KERNEL: &str = r#"
__global__ void kern(float* out) {
    __shared__ float tile[16][16];
    out[0] = tile[threadIdx.x][threadIdx.y];
}
"#;

/// The block a kernel's hover reports.
fn kernel_hover(fixture: &str, file: usize) -> String {
    let (host, ids, f) = host_with(fixture);
    let text = &f.files[file].text;
    let at = text.find("void kern").unwrap() + 6;
    let hover = host.analysis().hover(ids[file], at).unwrap().unwrap();
    hover
        .markdown
        .lines()
        .filter(|l| l.contains("block") || l.contains("Launch") || l.contains("launch"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn launch_inside_a_function_like_macro_gives_the_block() {
    let fixture = format!(
        "//- /p/k.cu\n#define LAUNCH(k, g, b) k< < <g, b> > >(out)\n{TILE_KERNEL}\nvoid run(float* out) {{\n    LAUNCH(kern, 1, dim3(16, 16));\n}}\n"
    );
    check(
        &fixture,
        0,
        "bank-conflict",
        expect![[r#"
            5: Warning `tile[threadIdx.x][threadIdx.y]`: 8-way bank conflict: this load from `tile` takes 8 wavefront
        "#]],
    );
    expect![[r#"
        No `__launch_bounds__`.
        Launch sites (1):
        - line 9: `kern<<<1, dim3(16, 16)>>>`: block 16×16×1 = 256 threads
        **Occupancy on sm_90**: block 16×16×1 = 256 threads (from the launch at line 9), 32 registers per thread (assumed: a typical count, not measured), 1024 B static + 0 B dynamic shared memory.
        8 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers."#]].assert_eq(&kernel_hover(&fixture, 0));
}

#[test]
fn launch_macro_from_a_header_with_a_dim3_variable() {
    let fixture = format!(
        "//- /p/launch.h\n#define LAUNCH(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__)\n//- /p/k.cu\n#include \"launch.h\"\n{TILE_KERNEL}\nvoid run(float* out) {{\n    dim3 block(16, 16);\n    LAUNCH(kern, 1, block, out);\n}}\n"
    );
    check(
        &fixture,
        1,
        "bank-conflict",
        expect![[r#"
            5: Warning `tile[threadIdx.x][threadIdx.y]`: 8-way bank conflict: this load from `tile` takes 8 wavefront
        "#]],
    );
}

#[test]
fn a_configuration_written_by_a_macro_gives_the_block() {
    // `kern<<<LAUNCH_2D(n)>>>(out)`: the macro writes grid, block, shared bytes and
    // stream; the block is its second part, here from a header's macro.
    let fixture = format!(
        "//- /p/launch.h\n#define CEIL(a, b) (((a) + (b) - 1) / (b))\n#define LAUNCH_2D(n) CEIL(n, 256), dim3(16, 16), 0, (cudaStream_t)0\n//- /p/k.cu\n#include \"launch.h\"\n{TILE_KERNEL}\nvoid run(float* out, int n) {{\n    kern<<<LAUNCH_2D(n)>>>(out);\n}}\n"
    );
    expect![[r#"
        No `__launch_bounds__`.
        Launch sites (1):
        - line 9: `kern<<<CEIL(n, 256), dim3(16, 16), 0, (cudaStream_t)0>>>`: block 16×16×1 = 256 threads
        **Occupancy on sm_90**: block 16×16×1 = 256 threads (from the launch at line 9), 32 registers per thread (assumed: a typical count, not measured), 1024 B static + 0 B dynamic shared memory.
        8 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers."#]].assert_eq(&kernel_hover(&fixture, 1));
    check(
        &fixture,
        1,
        "bank-conflict",
        expect![[r#"
            5: Warning `tile[threadIdx.x][threadIdx.y]`: 8-way bank conflict: this load from `tile` takes 8 wavefront
        "#]],
    );
    // A macro that writes one part only is no configuration: the block stays unknown.
    let one = format!(
        "//- /p/k.cu\n#define BLOCKS(n) ((n) / 256)\n{TILE_KERNEL}\nvoid run(float* out, int n) {{\n    kern<<<BLOCKS(n), 256>>>(out);\n    kern<<<BLOCKS(n)>>>(out);\n}}\n"
    );
    expect![[r#"
        No `__launch_bounds__`.
        Launch sites (2):
        - line 9: `kern<<<BLOCKS(n), 256>>>`: block 256×1×1 = 256 threads
        - line 10: `kern<<<BLOCKS(n), >>>`: block not known from the file
        **Occupancy on sm_90**: block 256×1×1 = 256 threads (from the launch at line 9), 32 registers per thread (assumed: a typical count, not measured), 1024 B static + 0 B dynamic shared memory.
        8 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers."#]].assert_eq(&kernel_hover(&one, 0));
}

/// A launch written in a macro, its `dim3`s made with `x = 0` and given their `x` on each
/// path before the macro's uses (a comment after an assignment, as written), and the
/// macro defined again in another function for another kernel: each use expands the
/// definition in force there, with the sizes as assigned. No launch has a grid or block
/// of 0; the one that does (no assignment) is still an error.
#[test]
fn a_launch_macro_sees_the_fields_assigned_before_it_and_its_own_definition() {
    let fixture = r#"//- /p/k.cu
__global__ void first(float* y, int n) { y[threadIdx.x] = 1.0f; }
__global__ void second(float* y, int n) { y[threadIdx.x] = 2.0f; }
void run_first(float* y, int n, int ws) {
    dim3 threads(0, 1, 1);
    dim3 blocks(0, 1, 1);
    if (n < 1024) {
        threads.x = n; // at most 1023
        blocks.x = 1;
    } else {
        blocks.x = n / 1024;
        threads.x = 1024;
    }
#define X(W, KERNEL) if (ws == W) { KERNEL<<<blocks, threads>>>(y, n); return; }
    X(2, first);
    X(4, first);
#undef X
}
void run_second(float* y, int n, int ws) {
    int blocks = (n + 255) / 256;
#define X(W) if (ws == W) { second<<<blocks, 256>>>(y, n); return; }
    X(2);
#undef X
}
void run_empty(float* y, int n) {
    dim3 none(0, 1, 1);
#define GO(K) K<<<none, 32>>>(y, n)
    GO(first);
}
"#;
    check(
        fixture,
        0,
        "launch/invalid-configuration",
        expect![[r#"
            27: Error `GO(first)`: launch of `first`: a grid of 0 has no blocks: the launch ret
        "#]],
    );
    let (host, ids, f) = host_with(fixture);
    let text = &f.files[0].text;
    let at = text.find("void second").unwrap() + 6;
    let hover = host.analysis().hover(ids[0], at).unwrap().unwrap().markdown;
    let sites: Vec<&str> = hover.lines().filter(|l| l.starts_with("- line")).collect();
    expect![[r#"
        [
            "- line 21: `second<<<blocks, 256>>>`: block 256×1×1 = 256 threads",
        ]
    "#]]
    .assert_debug_eq(&sites);
}

#[test]
fn macro_that_is_not_a_launch_gives_no_block() {
    // The body passes its parameters to a host function: no launch, the block is
    // unknown, and the kernel's hover says the default is assumed.
    let fixture = format!(
        "//- /p/k.cu\n#define RUN(k, g, b) run_kernel(k, g, b)\n{TILE_KERNEL}\nvoid run(float* out) {{\n    RUN(kern, 1, dim3(16, 16));\n}}\n"
    );
    expect![[r#"
        No `__launch_bounds__`.
        No launch site in the open files.
        **Occupancy on sm_90**: block 256×1×1 = 256 threads (the configured default; no launch was found), 32 registers per thread (assumed: a typical count, not measured), 1024 B static + 0 B dynamic shared memory.
        8 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers."#]].assert_eq(&kernel_hover(&fixture, 0));
    check(
        &fixture,
        0,
        "bank-conflict",
        expect![[r#"
            5: Hint `tile[threadIdx.x][threadIdx.y]`: 8-way bank conflict: this load from `tile` takes 8 wavefront
        "#]],
    );
}

#[test]
fn launch_macro_of_a_template_kernel_folds_the_arguments() {
    // `kern<(K)>` before the chevrons, the block computed from the macro's argument.
    let fixture = "//- /p/k.cu\n#define LAUNCH_T(K) kern<(K)> \\\n    <<<1, dim3((K) / 16, 16)>>>(out)\ntemplate <int N>\n__global__ void kern(float* out) {\n    __shared__ float tile[16][16];\n    out[0] = tile[threadIdx.x][threadIdx.y];\n}\nvoid run(float* out) {\n    LAUNCH_T(256);\n}\n";
    check(
        fixture,
        0,
        "bank-conflict",
        expect![[r#"
            6: Warning `tile[threadIdx.x][threadIdx.y]`: 8-way bank conflict: this load from `tile` takes 8 wavefront
        "#]],
    );
}

#[test]
fn launch_macro_of_a_header_that_is_not_included_is_not_seen() {
    let fixture = format!(
        "//- /p/launch.h\n#define LAUNCH(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__)\n//- /p/k.cu\n{TILE_KERNEL}\nvoid run(float* out) {{\n    LAUNCH(kern, 1, dim3(16, 16), out);\n}}\n"
    );
    check(
        &fixture,
        1,
        "bank-conflict",
        expect![[r#"
            4: Hint `tile[threadIdx.x][threadIdx.y]`: 8-way bank conflict: this load from `tile` takes 8 wavefront
        "#]],
    );
}

const SMEM_RULE: &str = "smem/dynamic-over-48k-without-opt-in";

#[test]
fn dynamic_smem_opt_in_through_a_header_macro_or_another_file() {
    let fixture = r#"
//- /csrc/launch.cuh
#pragma once
#define OPT_IN_SMEM(k, bytes) \
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
//- /csrc/gemm.cu
#include "launch.cuh"
__global__ void gemm(float* out) { extern __shared__ float s[]; out[0] = s[threadIdx.x]; }
__global__ void other(float* out) { extern __shared__ float s[]; out[0] = s[threadIdx.x]; }
__global__ void lonely(float* out) { extern __shared__ float s[]; out[0] = s[threadIdx.x]; }
void run(float* out) {
    OPT_IN_SMEM(gemm, 100 * 1024);
    gemm<<<1, 128, 100 * 1024>>>(out);
    other<<<1, 128, 100 * 1024>>>(out);
    lonely<<<1, 128, 100 * 1024>>>(out);
}
//- /csrc/setup.cu
__global__ void other(float* out);
void setup() {
    cudaFuncSetAttribute(other, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024);
}
"#;
    check(
        fixture,
        1,
        SMEM_RULE,
        expect![[r#"
            9: Error `lonely<<<1, 128, 100 * 1024>>>(out)`: launch of `lonely` asks for 102400 bytes of dynamic shared m
        "#]],
    );
}

/// A subscript handed to a function of the project's headers, whose parameters the file
/// does not show, may be taken by reference and read at another width: the coalescing
/// rule says nothing about it, and still reports the same subscript read in the file.
#[test]
fn an_element_handed_to_a_header_function_is_not_costed() {
    check(
        r#"
//- /p/src/util.h
#pragma once
template <class T, class U, class V>
__device__ void assign_as(U& u, const V& v) { reinterpret_cast<T&>(u) = reinterpret_cast<const T&>(v); }
//- /p/src/k.cu
#include "util.h"
__global__ void k(__half* conics, uint2 v, float* f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assign_as<uint2>(conics[i * 4], v);
    f[i * 32] = 1.0f;
}
"#,
        1,
        "coalescing/strided-global-access",
        expect![[r#"
            5: Warning `f[i * 32]`: uncoalesced store to `f`: each warp request touches 32 secto
        "#]],
    );
}

/// A helper of an included file whose result a `switch` on block-uniform values decides
/// (here `__shared__` values thread 0 wrote before a barrier) is one branch for the
/// block, as the same helper in the file is; passed a thread-varying value where the
/// `switch` reads it, it splits the block.
#[test]
fn a_header_helper_result_decided_by_uniform_arguments_is_one_branch() {
    check(
        r#"
//- /p/src/paths.cuh
#pragma once
__device__ void scale(float* s, int t, float v) { s[t] *= v; }
__device__ int fast_path(float* s, int a, int b, int t) {
    switch (a * 4 + b) {
    case 0: scale(s, t, 2.f); break;
    case 5: scale(s, t, 3.f); break;
    default: return 0;
    }
    return 1;
}
//- /p/src/k.cu
#include "paths.cuh"
__global__ void k(const int* kinds, float* out) {
    __shared__ int a, b;
    __shared__ float s[128];
    int t = threadIdx.x;
    if (t == 0) { a = kinds[2 * blockIdx.x]; b = kinds[2 * blockIdx.x + 1]; }
    __syncthreads();
    s[t] = out[t];
    if (!fast_path(s, a, b, t)) {
        s[t] += 1.f;
        __syncthreads();
    }
    if (!fast_path(s, a, t % 4, t)) {
        __syncthreads();
    }
    out[t] = s[t];
}
void run(const int* kinds, float* out, int n) { k<<<n, 128>>>(kinds, out); }
"#,
        1,
        "sync/barrier-in-divergent-branch",
        expect![[r#"
            14: Warning `__syncthreads()`: `__syncthreads()` inside `if (!fast_path(s, a, t % 4, t))`: 
        "#]],
    );
}

/// Two programs of one project each define a kernel `step` in a header of their own and
/// launch it with their own block. A launch reaches the kernel its translation unit
/// defines: `a/`'s `dim3(32, 4)` makes `ty == 0` one whole warp, and `b/`'s 16-wide
/// block (of its own `step`) says nothing of `a/`'s kernel. A file that sees no
/// definition of the name (a declaration only) may launch either.
#[test]
fn a_launch_reaches_the_kernel_of_its_own_translation_unit() {
    const A_STEP: &str = r#"
//- /p/a/step.cuh
#pragma once
__global__ void step(float* g) {
    __shared__ float s[4][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    s[ty][tx] = g[ty * 32 + tx];
    __syncthreads();
    if (ty == 0) {
        s[0][tx] += s[1][tx];
        __syncwarp();
        g[tx] = s[0][(tx + 1) % 32];
    }
    g[128 + ty * 32 + tx] = s[ty][tx];
}
//- /p/a/main.cu
#include "step.cuh"
void run_a(float* d) { step<<<1, dim3(32, 4)>>>(d); }
//- /p/b/step.cuh
#pragma once
__global__ void step(float* g) { g[threadIdx.y * 16 + threadIdx.x] *= 2.f; }
//- /p/b/main.cu
#include "step.cuh"
void run_b(float* d) { step<<<1, dim3(16, 8)>>>(d); }
"#;
    check(A_STEP, 0, "sync/barrier-in-divergent-branch", expect![""]);
    // A third file that only declares `step` may launch `a/`'s: its 16-wide block splits
    // the warp under `ty == 0`.
    let declared = format!(
        "{A_STEP}//- /p/c/main.cu\n__global__ void step(float* g);\nvoid run_c(float* d) {{ step<<<1, dim3(16, 8)>>>(d); }}\n"
    );
    check(
        &declared,
        0,
        "sync/barrier-in-divergent-branch",
        expect![[r#"
            9: Warning `__syncwarp()`: `__syncwarp()` inside `if (ty == 0)`: threads of the warp th
        "#]],
    );
}

/// Each program's launches fix the parameters of its own kernel: `rows` is 30 in `a/`
/// (lanes 120 bytes apart, a warning with the figure) and 1 in `b/` (coalesced), though
/// both kernels share a name.
#[test]
fn a_kernels_fixed_arguments_come_from_its_own_translation_unit() {
    const TWO: &str = r#"
//- /p/a/main.cu
__global__ void fill(float* out, int rows) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    for (int t = 0; t < rows; ++t) out[k * rows + t] = 0.f;
}
int main() { float* d = 0; fill<<<64, 256>>>(d, 30); return 0; }
//- /p/b/main.cu
__global__ void fill(float* out, int rows) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    for (int t = 0; t < rows; ++t) out[k * rows + t] = 0.f;
}
int main() { float* d = 0; fill<<<64, 256>>>(d, 1); return 0; }
"#;
    check(
        TWO,
        0,
        "coalescing/strided-global-access",
        expect![[r#"
            3: Warning `out[k * rows + t]`: uncoalesced store to `out`: each warp request touches 32 sec
        "#]],
    );
    check(
        TWO,
        1,
        "coalescing/strided-global-access",
        expect![[r#"
        3: Warning `out[k * rows + t]`: uncoalesced store to `out`: each warp request touches 32 sec
    "#]],
    );
}

/// A compatibility header that maps a mask-free warp intrinsic onto the project's own
/// `_sync` wrapper (`#define __shfl_xor …`): the call is the project's, not the
/// intrinsic nvcc would reject. A file that does not include the header calls the real
/// one.
#[test]
fn a_header_macro_named_like_a_legacy_intrinsic_is_the_projects() {
    let fixture = r#"
//- /src/compat_shfl.h
#pragma once
#define __shfl_xor warp_shfl_xor_compat
__device__ inline float warp_shfl_xor_compat(float v, int mask) {
    return __shfl_xor_sync(0xffffffffu, v, mask);
}
//- /src/reduce.cu
#include "compat_shfl.h"
__global__ void warp_sum(const float* in, float* out) {
    float v = in[blockIdx.x * 32 + threadIdx.x];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor(v, m);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
//- /src/plain.cu
__global__ void warp_sum(const float* in, float* out) {
    float v = in[blockIdx.x * 32 + threadIdx.x];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor(v, m);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
"#;
    check(fixture, 1, "warp/legacy-sync-free-intrinsic", expect![[""]]);
    check(
        fixture,
        2,
        "warp/legacy-sync-free-intrinsic",
        expect![[r#"
        3: Hint `__shfl_xor`: `__shfl_xor` has no participation mask and is not declared f
    "#]],
    );
}

/// A `.cu` file of device templates that another file includes: nvcc emits code for a
/// template only where it is instantiated. Reached through the file's macro only under
/// `#if __CUDA_ARCH__ < 200` (no target of sm_90 compiles that definition), the ladder's
/// finding is a hint; a use the including file compiles keeps it a warning.
#[test]
fn a_header_template_reached_only_through_a_macro_no_target_compiles() {
    let util = r#"
#pragma once
template <int N>
__device__ void ladder(int i, volatile int* s, int v) {
    s[i] = v;
    if (N > 16) s[i] = v = v + s[i + 16];
    if (N > 8) s[i] = v = v + s[i + 8];
    if (N > 4) s[i] = v = v + s[i + 4];
    if (N > 2) s[i] = v = v + s[i + 2];
    if (N > 1) s[i] = v = v + s[i + 1];
}
template <int N>
__device__ int tally(int p, int* s) { ladder<N>(threadIdx.x, s, p); return s[0]; }
#if __CUDA_ARCH__ >= 200
#define TALLY(p, s) __popc(__ballot_sync(0xffffffffu, p))
#else
#define TALLY(p, s) tally<32>(p, s)
#endif
"#;
    let kernel = "#include \"util.cu\"\n__global__ void count(const int* in, int* out) {\n    __shared__ int lanes[64];\n    int c = CALL;\n    if (threadIdx.x == 0) out[blockIdx.x] = c;\n}\nvoid run(const int* in, int* out) { count<<<8, 32>>>(in, out); }\n";
    let fixture = |call: &str| {
        format!(
            "//- /p/util.cu\n{util}\n//- /p/k.cu\n{}",
            kernel.replace("CALL", call)
        )
    };
    let severities = |call: &str| -> Vec<String> {
        let (host, ids, _) = host_with(&fixture(call));
        host.analysis()
            .diagnostics(ids[0])
            .unwrap()
            .iter()
            .filter(|d| d.rule == "warp/implicit-warp-synchronous")
            .map(|d| d.severity.as_str().to_string())
            .collect()
    };
    assert_eq!(severities("TALLY(in[threadIdx.x] != 0, lanes)"), ["hint"]);
    assert_eq!(
        severities("tally<32>(in[threadIdx.x] != 0, lanes)"),
        ["warning"]
    );
    // The macro's definition that names the template is the one sm_90 compiles.
    let active = fixture("TALLY(in[threadIdx.x] != 0, lanes)").replace(">= 200", "< 200");
    let (host, ids, _) = host_with(&active);
    let d = host.analysis().diagnostics(ids[0]).unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].severity.as_str(), "warning");
    let (host, ids, _) = host_with(&fixture("TALLY(in[threadIdx.x] != 0, lanes)"));
    let message = host.analysis().diagnostics(ids[0]).unwrap()[0]
        .message
        .clone();
    assert!(
        message.ends_with("(a hint only: no file of the project uses the template `ladder` where it is compiled, and nvcc emits code for a template only where it is instantiated)"),
        "{message}"
    );
}
