//! Acceptance: about forty positions in realistic kernels, hovered against the built-in
//! wiki. Each must resolve to the right symbol and carry the facts any correct
//! documentation has: the page, a type from the signature, the minimum architecture
//! checked against the target, the conflict degree, the occupancy. Only structured
//! fields are asserted, so wiki prose can change freely.

use std::sync::{Arc, OnceLock};

use kernaut_ide::gpu::Arch;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, HoverKind, HoverResult, Knowledge};

fn knowledge() -> Arc<Knowledge> {
    static K: OnceLock<Arc<Knowledge>> = OnceLock::new();
    K.get_or_init(|| Arc::new(Knowledge::load(&WikiConfig::builtin()).expect("the wiki loads")))
        .clone()
}

const REDUCE: &str = r#"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__global__ void __launch_bounds__(256) block_sum(const float* __restrict__ in, float* out, int n) {
    __shared__ float partial[32];
    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? __ldg(&in[i]) : 0.f;
    v = cg::reduce(tile, v, cg::plus<float>());
    float w = tile.shfl_down(v, 1);
    unsigned mask = __ballot_sync(0xffffffffu, v > 0.f);
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = v + w + mask;
    block.sync();
    if (threadIdx.x < 32) {
        v = warp_sum(partial[threadIdx.x]);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }
    __threadfence();
}

__global__ void half_axpy(__half2* y, const __half2* x, __half2 a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hfma2(a, x[i], y[i]);
    __half h = __float2half(1.0f);
}

void launch(const float* in, float* out, int n) {
    block_sum<<<(n + 255) / 256, 256>>>(in, out, n);
}
"#;

const GEMM: &str = r#"
#include <cuda/pipeline>
#include <cuda_pipeline.h>
#include <mma.h>
using namespace nvcuda;
#define BM 64
#define BK 16

__global__ void __launch_bounds__(128, 4) gemm(const half* A, const half* B, float* C) {
    __shared__ __align__(16) half As[2][BM][BK];
    __shared__ float Cs[32][32];
    auto pipe = cuda::make_pipeline();
    int tid = threadIdx.x;
    pipe.producer_acquire();
    cuda::memcpy_async(&As[0][tid / 2][(tid % 2) * 8], &A[tid * 8], 16, pipe);
    pipe.producer_commit();
    cuda::pipeline_consumer_wait_prior<0>(pipe);
    __pipeline_memcpy_async(&As[1][tid / 2][(tid % 2) * 8], &A[tid * 8 + 1024], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, &As[0][0][0], BK);
    wmma::load_matrix_sync(fb, B, BK);
    wmma::mma_sync(fc, fa, fb, fc);
    Cs[threadIdx.x % 32][threadIdx.x / 32] = 1.0f;
    C[tid] = Cs[tid / 32][tid % 32];
}
"#;

const PTX: &str = r#"
#include <cstdint>
__device__ void copy16(uint32_t dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(src));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group %0;\n" :: "n"(0));
}

__device__ void wait_phase(uint32_t bar, uint32_t phase) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "LAB_WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        "@!p bra LAB_WAIT;\n"
        "}\n" :: "r"(bar), "r"(phase));
}

__device__ void load_frag(uint32_t addr, uint32_t* r) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ void tma(uint32_t dst, const void* map, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"(map), "r"(0), "r"(0), "r"(bar) : "memory");
}

__device__ void hopper_mma(uint64_t da, uint64_t db, float* d) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0}, %1, %2, 1, 1, 1, 0, 0;" : "+f"(d[0]) : "l"(da), "l"(db));
}

__global__ void transpose(float* out, const float* in) {
    __shared__ float tile[32][32];
    __shared__ float padded[32][33];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    padded[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y] + padded[threadIdx.x][threadIdx.y];
    float4 v = reinterpret_cast<float4*>(&tile[threadIdx.y][0])[threadIdx.x % 8];
    uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
    unsigned m = __activemask();
}

void run(float* out, const float* in) {
    cudaFuncSetAttribute(transpose, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);
    transpose<<<1, dim3(32, 8)>>>(out, in);
}
"#;

/// What a position must show.
enum Want {
    /// A wiki symbol: the name resolved, its api page, a string one of the shown
    /// signatures contains, and the minimum architecture.
    Api(&'static str, &'static str, &'static str, &'static str),
    /// A kernel: blocks per SM at the launch found, and the binding limiter.
    Kernel(u32, &'static str),
    /// A `__shared__` declaration's bytes.
    Decl(u64),
    /// A shared access's conflict degree and wavefronts.
    Access(u32, u32),
}

/// Hovers at the `|` of `needle` in `code` for `arch` and returns the result.
fn hover(code: &str, needle: &str, arch: &str) -> HoverResult {
    let bar = needle
        .find('|')
        .expect("the needle marks the cursor with |");
    let plain = needle.replace('|', "");
    let at = code
        .find(&plain)
        .unwrap_or_else(|| panic!("`{plain}` is in the code"))
        + bar;
    let mut host = AnalysisHost::new(AnalysisConfig {
        arch: Arch::parse(arch).expect("arch"),
        ..AnalysisConfig::default()
    });
    host.set_knowledge(knowledge());
    let f = host.set_file("/k.cu", code);
    host.analysis()
        .hover(f, at)
        .expect("the hover query answers")
        .unwrap_or_else(|| panic!("no hover at `{needle}`"))
}

fn check(code: &str, needle: &str, arch: &str, want: Want) {
    let h = hover(code, needle, arch);
    let ctx = format!("at `{needle}`: {h:#?}");
    match want {
        Want::Api(symbol, page, sig, sm) => {
            assert_eq!(h.kind, HoverKind::Symbol, "{ctx}");
            let w = h.wiki.as_ref().expect("wiki info");
            assert_eq!(w.symbol, symbol, "{ctx}");
            assert_eq!(w.page.as_deref(), Some(page), "{ctx}");
            assert!(
                w.signatures.iter().any(|s| s.contains(sig)),
                "no signature has `{sig}` {ctx}"
            );
            let r = w.requires_sm.as_ref().expect("a minimum architecture");
            assert_eq!(r.required, sm, "{ctx}");
            assert!(h.markdown.contains(&format!("requires {sm}")), "{ctx}");
        }
        Want::Kernel(blocks, limiter) => {
            assert_eq!(h.kind, HoverKind::Kernel, "{ctx}");
            let o = h.occupancy.as_ref().expect("occupancy");
            assert_eq!(
                o.result.as_ref().map(|r| r.blocks_per_sm).ok(),
                Some(blocks),
                "{ctx}"
            );
            assert!(o.limiter_names().contains(&limiter), "{ctx}");
            assert!(h.markdown.contains("ptxas"), "{ctx}");
        }
        Want::Decl(bytes) => {
            assert_eq!(h.kind, HoverKind::SharedDeclaration, "{ctx}");
            let s = h.shared.as_ref().expect("shared info");
            assert_eq!(s.decl.static_bytes, Some(bytes), "{ctx}");
            assert!(s.blocks_per_sm_alone.is_some(), "{ctx}");
        }
        Want::Access(degree, wavefronts) => {
            assert_eq!(h.kind, HoverKind::SharedAccess, "{ctx}");
            let b = h.bank.as_ref().expect("bank");
            let r = b.result.as_ref().expect("modelled");
            assert_eq!(
                (r.conflict_degree, r.wavefronts),
                (degree, wavefronts),
                "{ctx}"
            );
            assert!(h.markdown.contains("bank"), "{ctx}");
        }
    }
}

#[test]
fn intrinsics() {
    use Want::Api;
    check(
        REDUCE,
        "__shfl_x|or_sync",
        "sm_90",
        Api(
            "__shfl_xor_sync",
            "api-warp-shuffle",
            "int laneMask",
            "sm_30",
        ),
    );
    check(
        REDUCE,
        "__l|dg",
        "sm_90",
        Api("__ldg", "api-cache-hints", "__ldg(const", "sm_50"),
    );
    check(
        REDUCE,
        "__ballot|_sync",
        "sm_90",
        Api("__ballot_sync", "api-warp-vote", "unsigned", "sm_30"),
    );
    check(
        REDUCE,
        "atomic|Add(out",
        "sm_90",
        Api("atomicAdd", "api-atomics", "float *address", "sm_50"),
    );
    check(
        REDUCE,
        "__thread|fence",
        "sm_90",
        Api(
            "__threadfence",
            "api-memory-fences",
            "void __threadfence()",
            "sm_20",
        ),
    );
    check(REDUCE, "block.sync();\n    if (threadIdx.x < 32) {\n        v = warp_sum(partial[threadIdx.x]);\n        if (threadIdx.x == 0) atomicAdd(out, v);\n    }\n    __thread|fence", "sm_90", Api("__threadfence", "api-memory-fences", "__threadfence", "sm_20"));
    check(
        REDUCE,
        "__hf|ma2",
        "sm_90",
        Api("__hfma2", "api-fp16-arithmetic", "__half2", "sm_53"),
    );
    check(
        REDUCE,
        "__float2|half",
        "sm_90",
        // Conversions were never guarded: below sm_53 they run in fp32 (issue 16).
        Api("__float2half", "api-fp16-conversion", "float", "sm_50"),
    );
    check(
        GEMM,
        "__sync|threads",
        "sm_90",
        Api(
            "__syncthreads",
            "api-block-sync",
            "void __syncthreads()",
            "sm_20",
        ),
    );
    check(
        PTX,
        "__cvta_generic|_to_shared",
        "sm_90",
        Api(
            "__cvta_generic_to_shared",
            "api-address-space",
            "const void*",
            "sm_20",
        ),
    );
    check(
        PTX,
        "__active|mask",
        "sm_90",
        Api("__activemask", "api-warp-vote", "unsigned", "sm_30"),
    );
    check(
        PTX,
        "float|4 v",
        "sm_90",
        Api("float4", "api-vector-types", "float4", "sm_20"),
    );
}

#[test]
fn library_and_member_calls() {
    use Want::Api;
    check(
        GEMM,
        "cuda::memcpy|_async",
        "sm_90",
        Api(
            "cuda::memcpy_async",
            "api-cuda-memcpy-async-pipeline",
            "void* destination",
            "sm_70",
        ),
    );
    check(
        GEMM,
        "cuda::make_pi|peline",
        "sm_90",
        Api(
            "cuda::make_pipeline",
            "api-cuda-memcpy-async-pipeline",
            "make_pipeline",
            "sm_70",
        ),
    );
    check(
        GEMM,
        "pipe.producer_com|mit",
        "sm_90",
        Api(
            "cuda::pipeline::producer_commit",
            "api-cuda-memcpy-async-pipeline",
            "producer_commit",
            "sm_70",
        ),
    );
    check(
        GEMM,
        "pipe.producer_acq|uire",
        "sm_90",
        Api(
            "cuda::pipeline::producer_acquire",
            "api-cuda-memcpy-async-pipeline",
            "producer_acquire",
            "sm_70",
        ),
    );
    check(
        GEMM,
        "cuda::pipeline_consumer_wait|_prior",
        "sm_90",
        Api(
            "cuda::pipeline_consumer_wait_prior",
            "api-cuda-memcpy-async-pipeline",
            "uint8_t",
            "sm_70",
        ),
    );
    check(
        GEMM,
        "__pipeline_memcpy|_async",
        "sm_75",
        Api(
            "__pipeline_memcpy_async",
            "api-pipeline-primitives",
            "size_t",
            // A synchronous copy below sm_80, with no arch guard (issue 16).
            "sm_50",
        ),
    );
    check(
        GEMM,
        "__pipeline_com|mit",
        "sm_90",
        Api(
            "__pipeline_commit",
            "api-pipeline-primitives",
            "void __pipeline_commit()",
            "sm_50",
        ),
    );
    check(
        GEMM,
        "__pipeline_wait|_prior",
        "sm_90",
        Api(
            "__pipeline_wait_prior",
            "api-pipeline-primitives",
            "size_t",
            "sm_50",
        ),
    );
    check(
        PTX,
        "cudaFuncSet|Attribute",
        "sm_90",
        Api(
            "cudaFuncSetAttribute",
            "api-launch-attributes",
            "cudaFuncAttribute",
            "sm_50",
        ),
    );
    check(
        REDUCE,
        "__launch|_bounds__(256)",
        "sm_90",
        Api(
            "__launch_bounds__",
            "api-launch-attributes",
            "__launch_bounds__",
            "sm_50",
        ),
    );
}

#[test]
fn cooperative_groups() {
    use Want::Api;
    check(
        REDUCE,
        "cg::this_thread|_block()",
        "sm_90",
        Api(
            "cooperative_groups::this_thread_block",
            "api-cg-groups",
            "thread_block",
            "sm_50",
        ),
    );
    check(
        REDUCE,
        "block.sy|nc()",
        "sm_90",
        Api(
            "cooperative_groups::thread_block::sync",
            "api-cg-groups",
            "thread_block::sync",
            "sm_50",
        ),
    );
    check(
        REDUCE,
        "cg::tiled_par|tition",
        "sm_90",
        Api(
            "cooperative_groups::tiled_partition",
            "api-cg-tiles",
            "tiled_partition",
            "sm_50",
        ),
    );
    check(
        REDUCE,
        "cg::red|uce",
        "sm_90",
        Api(
            "cooperative_groups::reduce",
            "api-cg-algorithms",
            "reduce",
            "sm_50",
        ),
    );
    check(
        REDUCE,
        "tile.shfl_d|own",
        "sm_90",
        Api(
            "cooperative_groups::thread_block_tile::shfl_down",
            "api-cg-tiles",
            "shfl_down",
            "sm_50",
        ),
    );
}

#[test]
fn ptx_in_asm_strings() {
    use Want::Api;
    check(
        PTX,
        "cp.async.c|g.shared.global",
        "sm_75",
        Api("cp.async.cg", "api-ptx-cp-async", "cp.async.cg", "sm_80"),
    );
    check(
        PTX,
        "cp.async.commit|_group",
        "sm_90",
        Api(
            "cp.async.commit_group",
            "api-ptx-cp-async",
            "cp.async.commit_group",
            "sm_80",
        ),
    );
    check(
        PTX,
        "cp.async.wait|_group %0",
        "sm_90",
        Api(
            "cp.async.wait_group",
            "api-ptx-cp-async",
            "cp.async.wait_group",
            "sm_80",
        ),
    );
    check(
        PTX,
        "mbarrier.try|_wait",
        "sm_90",
        Api(
            "mbarrier.try_wait",
            "api-ptx-mbarrier",
            "mbarrier.try_wait",
            "sm_90",
        ),
    );
    check(
        PTX,
        "ldmat|rix",
        "sm_90",
        Api("ldmatrix", "api-ptx-mma", "ldmatrix", "sm_75"),
    );
    check(
        PTX,
        "cp.async.bulk.ten|sor",
        "sm_90",
        Api(
            "cp.async.bulk.tensor",
            "api-ptx-cp-async-bulk",
            "cp.async.bulk.tensor",
            "sm_90",
        ),
    );
    check(
        PTX,
        "wgmma.mma|_async",
        "sm_90a",
        Api("wgmma.mma_async", "api-wgmma", "wgmma.mma_async", "sm_90a"),
    );
    let h = hover(PTX, "wgmma.mma|_async", "sm_90");
    assert!(
        h.markdown.contains("requires sm_90a, target is sm_90"),
        "{}",
        h.markdown
    );
}

#[test]
fn wmma() {
    use Want::Api;
    check(
        GEMM,
        "wmma::mma|_sync",
        "sm_90",
        Api(
            "nvcuda::wmma::mma_sync",
            "api-wmma",
            "fragment<accumulator",
            "sm_70",
        ),
    );
    check(
        GEMM,
        "wmma::load_matrix|_sync(fa",
        "sm_90",
        Api(
            "nvcuda::wmma::load_matrix_sync",
            "api-wmma",
            "unsigned ldm",
            "sm_70",
        ),
    );
    check(
        GEMM,
        "wmma::frag|ment<wmma::matrix_a",
        "sm_90",
        Api("nvcuda::wmma::fragment", "api-wmma", "fragment", "sm_70"),
    );
    check(
        GEMM,
        "wmma::fill_frag|ment",
        "sm_90",
        Api(
            "nvcuda::wmma::fill_fragment",
            "api-wmma",
            "fill_fragment",
            "sm_70",
        ),
    );
}

#[test]
fn kernels() {
    use Want::Kernel;
    // 256 threads: __launch_bounds__(256) allows up to 248 registers, but only caps
    // them; the typical 32 are assumed, so warps limit to 8 blocks per SM.
    check(REDUCE, "block_s|um(const", "sm_90", Kernel(8, "warps"));
    check(REDUCE, "block_s|um<<<", "sm_90", Kernel(8, "warps"));
    // 128 threads: (128, 4) caps registers at 65536 / (128 * 4) = 128, above the 32
    // assumed: 16 blocks, 64 warps.
    check(GEMM, "g|emm(const", "sm_90", Kernel(16, "warps"));
    // No __launch_bounds__: the default 32 registers and the launch's 32x8 block.
    check(PTX, "void trans|pose", "sm_90", Kernel(8, "warps"));
}

#[test]
fn shared_declarations_and_accesses() {
    check(REDUCE, "float par|tial[32]", "sm_90", Want::Decl(128));
    check(GEMM, "half A|s[2]", "sm_90", Want::Decl(2 * 64 * 16 * 2));
    check(PTX, "float til|e[32][32]", "sm_90", Want::Decl(4096));
    check(PTX, "float pad|ded[32][33]", "sm_90", Want::Decl(4224));
    // Row writes are conflict-free; the column read of the unpadded tile is 32-way.
    check(
        PTX,
        "ti|le[threadIdx.y][threadIdx.x] =",
        "sm_90",
        Want::Access(1, 1),
    );
    check(
        PTX,
        "ti|le[threadIdx.x][threadIdx.y]",
        "sm_90",
        Want::Access(32, 32),
    );
    check(
        PTX,
        "pad|ded[threadIdx.x][threadIdx.y]",
        "sm_90",
        Want::Access(1, 1),
    );
    // A float4 read: lanes 0-7 cover one 128-byte row, lanes 8-15 the next row: 4
    // quarter-warp wavefronts at least, and no conflict within a quarter.
    check(
        PTX,
        "reinterpret_cast<float4*>(&tile[threadIdx.y][0])[threadIdx.x % |8]",
        "sm_90",
        Want::Access(1, 4),
    );
    check(
        GEMM,
        "C|s[threadIdx.x % 32][threadIdx.x / 32]",
        "sm_90",
        Want::Access(32, 32),
    );
    check(GEMM, "C|s[tid / 32][tid % 32]", "sm_90", Want::Access(1, 1));
}

#[test]
fn diagnostics_come_from_the_rules() {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let f = host.set_file("/k.cu", PTX);
    let diags = host.analysis().diagnostics(f).unwrap();
    assert!(
        diags.iter().any(|d| d.rule == "bank-conflict"),
        "{diags:#?}"
    );
    let mut bare = AnalysisHost::new(AnalysisConfig::default());
    let f = bare.set_file("/k.cu", PTX);
    assert!(bare.analysis().diagnostics(f).unwrap().is_empty());
}

#[test]
fn own_names_are_not_taken_for_ptx_mnemonics() {
    let code = "__device__ int add(int a, int b) { return a + b; }\n__global__ void k(int* o) { int mov = add(o[0], 1); o[1] = mov; }\n";
    let h = hover(code, "= a|dd(o", "sm_90");
    assert_eq!(h.kind, HoverKind::DeviceFunction, "{h:#?}");
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let f = host.set_file("/k.cu", code);
    let at = code.find("o[1] = mov").unwrap() + 8;
    assert!(host.analysis().hover(f, at).unwrap().is_none());
}

/// Hovers at the `|` of `needle`, or `None` where there is nothing to show.
fn try_hover(code: &str, needle: &str) -> Option<HoverResult> {
    let at = code.find(&needle.replace('|', "")).expect("needle") + needle.find('|').unwrap();
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let f = host.set_file("/k.cu", code);
    host.analysis()
        .hover(f, at)
        .expect("the hover query answers")
}

#[test]
fn own_names_are_not_library_members() {
    let code = r#"
#include <mma.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
using namespace nvcuda;
struct Vec { float x, y; int size; };
__device__ float sum(const float* p, int size, Vec v) {
    float s = 0.f;
    int x = 0;
    for (int i = 0; i < size; ++i) s += p[i + x];
    return s + v.x + v.size;
}
__global__ void k(float* out) {
    cg::thread_block block = cg::this_thread_block();
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> frag;
    wmma::fill_fragment(frag, 0.f);
    out[0] = block.size() + frag.x[0];
}
"#;
    // The user's own names: no wiki page.
    for needle in [
        "int size|, Vec",
        "i < si|ze",
        "int x| = 0",
        "p[i + x|]",
        "v.x|",
        "v.si|ze",
        "float x|, y",
        "int si|ze; }",
    ] {
        let h = try_hover(code, needle);
        assert!(
            h.as_ref().is_none_or(|h| h.wiki.is_none()),
            "`{needle}` resolved to {:?}",
            h.and_then(|h| h.wiki).map(|w| w.symbol)
        );
    }
    // Reached through an object of the library's type: the member; a built-in
    // variable's component: the variable.
    let h = try_hover(
        "__global__ void k(int* o) { o[threadIdx.x] = 1; }\n",
        "threadIdx.|x]",
    )
    .expect("a hover");
    assert_eq!(h.wiki.map(|w| w.symbol).as_deref(), Some("threadIdx"));
    // Another library's function of the same name is not this one.
    let h = try_hover(
        "#include <algorithm>\nvoid f(int* p) { std::sort(p, p + 4); }\n",
        "std::so|rt(",
    );
    assert!(h.and_then(|h| h.wiki).is_none());
    let h = try_hover(code, "block.si|ze()").expect("a hover");
    assert_eq!(
        h.wiki.map(|w| w.symbol).as_deref(),
        Some("cooperative_groups::thread_block::size")
    );
    let h = try_hover(code, "frag.|x[0]").expect("a hover");
    assert_eq!(
        h.wiki.map(|w| w.symbol).as_deref(),
        Some("nvcuda::wmma::fragment::x")
    );
}

#[test]
fn the_finding_comes_first_on_a_flagged_line() {
    let code = r#"
#include <cuda_pipeline.h>
__global__ void k(const float* g, float* out, int n) {
    __shared__ float buf[2][256];
    __pipeline_memcpy_async(&buf[0][threadIdx.x], &g[threadIdx.x], 4);
    __pipeline_commit();
    for (int t = 0; t < n; ++t) {
        __pipeline_memcpy_async(&buf[(t + 1) & 1][threadIdx.x], &g[(t + 1) * 256 + threadIdx.x], 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        out[t * 256 + threadIdx.x] = buf[t & 1][threadIdx.x];
        __syncthreads();
    }
}
"#;
    let h = try_hover(code, "__pipeline_wait_pr|ior(0)").expect("a hover");
    assert_eq!(h.kind, HoverKind::Symbol, "{h:#?}");
    assert_eq!(h.findings.len(), 1, "{h:#?}");
    let d = &h.findings[0];
    assert_eq!(d.rule, "async-copy/wait-all-in-pipelined-loop");
    assert!(
        h.markdown
            .starts_with("**warning** `async-copy/wait-all-in-pipelined-loop`:"),
        "{}",
        h.markdown
    );
    assert!(
        h.markdown.contains(&format!("Wiki: `{}`", d.wiki)),
        "{}",
        h.markdown
    );
    assert!(h.markdown.contains("Fix: "), "{}", h.markdown);
    // The API entry follows.
    let rest = h
        .markdown
        .split("---\n")
        .nth(1)
        .expect("the entry after the finding");
    assert!(rest.contains("__pipeline_wait_prior"), "{rest}");
    // The next line is not flagged.
    let h = try_hover(code, "__syncthr|eads();\n        out").expect("a hover");
    assert!(h.findings.is_empty(), "{h:#?}");
}

#[test]
fn registers_are_assumed_plainly_and_can_be_set() {
    let code =
        "__global__ void __launch_bounds__(256) scale(float* a) { a[threadIdx.x] *= 2.f; }\n";
    let h = hover(code, "void __launch_bounds__(256) sc|ale", "sm_90");
    let o = h.occupancy.as_ref().expect("occupancy");
    assert_eq!(o.regs_per_thread, 32, "{h:#?}");
    assert_eq!(o.result.as_ref().map(|r| r.occupancy).ok(), Some(1.0));
    assert!(h.markdown.contains("is an assumption"), "{}", h.markdown);

    let commented = format!("// kernaut: registers=128\n{code}");
    let h = hover(&commented, "void __launch_bounds__(256) sc|ale", "sm_90");
    assert_eq!(h.occupancy.as_ref().map(|o| o.regs_per_thread), Some(128));
    assert_eq!(
        h.occupancy.as_ref().map(|o| o.regs_source),
        Some(kernaut_ide::reports::RegsSource::Comment)
    );

    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let mut change = kernaut_ide::Change::new();
    change.set_dir_config(
        "/proj",
        Some(kernaut_ide::config::parse_config("registers = 64").unwrap()),
    );
    host.apply_change(change);
    let f = host.set_file("/proj/k.cu", code);
    let o = host
        .analysis()
        .occupancy(f, "scale")
        .unwrap()
        .expect("occupancy");
    assert_eq!(o.regs_per_thread, 64);
    assert_eq!(o.regs_source, kernaut_ide::reports::RegsSource::Project);
    // A `__launch_bounds__` limit below the assumption binds.
    let tight =
        "__global__ void __launch_bounds__(1024, 2) scale(float* a) { a[threadIdx.x] *= 2.f; }\n";
    let f = host.set_file("/proj/k.cu", tight);
    let o = host
        .analysis()
        .occupancy(f, "scale")
        .unwrap()
        .expect("occupancy");
    assert_eq!(o.regs_per_thread, 32);
    assert!(matches!(
        o.regs_source,
        kernaut_ide::reports::RegsSource::LaunchBounds { .. }
    ));
}

#[test]
fn a_type_shows_its_declaration_not_every_function_that_takes_it() {
    let code =
        "#include <cuda_fp16.h>\n__global__ void k(__half* a) { a[0] = __float2half(1.f); }\n";
    let h = hover(code, "__ha|lf* a", "sm_90");
    let w = h.wiki.as_ref().expect("wiki info");
    assert_eq!(w.symbol, "__half");
    assert!(
        w.signatures.len() <= kernaut_ide::hover::MAX_SIGNATURES,
        "{w:#?}"
    );
    assert!(
        w.signatures.iter().any(|s| s.contains("struct __half")),
        "{w:#?}"
    );
    assert!(w.signatures_left_out > 0, "{w:#?}");
    assert!(
        h.markdown
            .contains("more signatures on the page `api-fp16-conversion`"),
        "{}",
        h.markdown
    );
    // A function shows the overload its arguments pick (`__hadd` on `__half` is not
    // `__hadd` on `int`), or all of its own when the file does not show their types.
    let h = hover(
        "__global__ void k(__half* a) { a[0] = __hadd(a[1], a[2]); }\n",
        "__ha|dd(",
        "sm_90",
    );
    let w = h.wiki.as_ref().expect("wiki info");
    assert_eq!(
        w.signatures,
        ["__half __hadd(const __half a, const __half b);"]
    );
    let h = hover(
        "__global__ void k(int* a) { a[0] = __hadd(a[1], 3); }\n",
        "__ha|dd(",
        "sm_90",
    );
    let w = h.wiki.as_ref().expect("wiki info");
    assert_eq!(w.signatures, ["int __hadd(int x, int y);"]);
    let h = hover(
        "__global__ void k() { __hadd(f(), g()); }\n",
        "__ha|dd(",
        "sm_90",
    );
    let w = h.wiki.as_ref().expect("wiki info");
    assert!(
        w.signatures.len() > 1 && w.signatures.iter().all(|s| s.contains("__hadd(")),
        "{w:#?}"
    );
    assert_eq!(w.signatures_left_out, 0, "{w:#?}");
}

#[test]
fn overloads_by_argument_type() {
    let code = r#"#include <cuda_fp16.h>
__global__ void k(float* f, float4* f4, double* d, __half2* h2, int n) {
    atomicAdd(f, 1.f);
    atomicAdd(f4, make_float4(1.f, 1.f, 1.f, 1.f));
    atomicAdd(d, 1.0);
    atomicAdd(&h2[1], __float2half2_rn(1.f));
    atomicAdd(f + n, 1.f);
}
"#;
    let wiki = |needle: &str| hover(code, needle, "sm_80").wiki.expect("wiki info");
    let w = wiki("atomic|Add(f4");
    assert_eq!(w.overload.as_deref(), Some("atomicAdd(float4*)"), "{w:#?}");
    let r = w.requires_sm.as_ref().expect("a requirement");
    assert_eq!((r.required.as_str(), r.satisfied), ("sm_90", false));
    assert_eq!(
        w.signatures,
        ["float4 atomicAdd(float4 *address, float4 val);"]
    );
    let w = wiki("atomic|Add(d,");
    assert_eq!(w.overload.as_deref(), Some("atomicAdd(double*)"));
    assert_eq!(
        w.requires_sm.as_ref().map(|r| r.required.as_str()),
        Some("sm_60")
    );
    let w = wiki("atomic|Add(&h2");
    assert_eq!(w.overload.as_deref(), Some("atomicAdd(__half2*)"), "{w:#?}");
    // `float` has no requirement of its own: the page's, and no range once picked.
    for needle in ["atomic|Add(f,", "atomic|Add(f + n"] {
        let w = wiki(needle);
        assert_eq!(w.overload, None);
        assert_eq!(w.requires_range, None, "{w:#?}");
        assert_eq!(
            w.signatures,
            ["float atomicAdd(float *address, float val);"]
        );
    }
    // Argument types the file does not show: every overload and the range.
    let w = hover(
        "__global__ void k() { atomicAdd(get(), 1); }\n",
        "atomic|Add(",
        "sm_80",
    )
    .wiki
    .expect("wiki info");
    assert_eq!(w.overload, None);
    assert_eq!(
        w.requires_range.as_deref(),
        Some("sm_50 to sm_90, by argument type")
    );

    // The rule reports the float4 overload at sm_80, and nothing else.
    let mut host = AnalysisHost::new(AnalysisConfig {
        arch: Arch::parse("sm_80").unwrap(),
        arch_configured: true,
        ..AnalysisConfig::default()
    });
    host.set_knowledge(knowledge());
    let f = host.set_file("/k.cu", code);
    let diags: Vec<_> = host
        .analysis()
        .diagnostics(f)
        .unwrap()
        .into_iter()
        .filter(|d| d.rule == "arch/requires-newer-sm")
        .collect();
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0].range.start, code.find("atomicAdd(f4").unwrap());
    assert!(
        diags[0]
            .message
            .contains("`atomicAdd(float4*)` needs sm_90"),
        "{}",
        diags[0].message
    );
    // At sm_90 it is silent.
    let mut host = AnalysisHost::new(AnalysisConfig {
        arch: Arch::parse("sm_90").unwrap(),
        arch_configured: true,
        ..AnalysisConfig::default()
    });
    host.set_knowledge(knowledge());
    let f = host.set_file("/k.cu", code);
    assert!(!host
        .analysis()
        .diagnostics(f)
        .unwrap()
        .iter()
        .any(|d| d.rule == "arch/requires-newer-sm"));
}

#[test]
fn another_access_on_the_line_keeps_its_own_finding() {
    let code = r#"
__global__ void k(float* out) {
    __shared__ float tile[32][32];
    __shared__ float padded[32][33];
    int x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = 1.f;
    padded[y][x] = 1.f;
    __syncthreads();
    out[x * 32 + y] = tile[x][y] + padded[x][y];
}
"#;
    let h = try_hover(code, "ti|le[x][y] +").expect("a hover");
    assert!(
        h.findings.iter().any(|d| d.rule == "bank-conflict"),
        "{h:#?}"
    );
    let h = try_hover(code, "pad|ded[x][y];").expect("a hover");
    assert!(h.findings.is_empty(), "{:#?}", h.findings);
}

/// A library's own helpers named like library members or PTX instructions, and
/// `mma.sync` shapes with their own minimum architectures.
const LOOKALIKES: &str = r#"
template <typename T>
__device__ T shfl_xor(T v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
struct Mma {
    __device__ static void wgmma(float* d) { d[0] += 1.0f; }
};
__global__ void k(float* d, unsigned a0, unsigned b0) {
    float v = shfl_xor(d[threadIdx.x], 16);
    Mma::wgmma(d);
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a0), "r"(a0), "r"(a0), "r"(b0), "r"(b0));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a0), "r"(b0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%0,%1,%2,%3,%4,%5,%6,%7};" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]) : "r"(a0), "r"(a0), "r"(b0), "r"(b0));
    d[1] = v;
}
"#;

#[test]
fn lookalikes_and_mma_shapes() {
    for needle in ["float v = shfl|_xor(", "Mma::wg|mma(d)"] {
        let h = hover(LOOKALIKES, needle, "sm_90");
        assert!(
            h.wiki.is_none(),
            "at `{needle}` the user's helper got a wiki page: {h:#?}"
        );
    }
    let shapes = [
        (
            "mma.sync.aligned.m16n8k1|6",
            "mma.sync.aligned.m16n8k16",
            "sm_80",
        ),
        (
            "mma.sync.aligned.m16n8k|8",
            "mma.sync.aligned.m16n8k8",
            "sm_75",
        ),
        (
            "mma.sync.aligned.m8n8k|4",
            "mma.sync.aligned.m8n8k4",
            "sm_70",
        ),
    ];
    for (needle, symbol, sm) in shapes {
        check(
            LOOKALIKES,
            needle,
            "sm_90",
            Want::Api(symbol, "api-ptx-mma", "mma.sync.aligned", sm),
        );
    }
}
