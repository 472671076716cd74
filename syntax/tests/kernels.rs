//! Facts, access lowering and control-flow helpers on realistic kernels, checked against
//! hand-computed answers.

use expect_test::{expect, Expect};
use kernaut_syntax::{AccessKind, ConstantKind, EnclosingKind, IndexExpr, SourceFile};

const TRANSPOSE: &str = r#"
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transposeNaive(float* odata, const float* __restrict__ idata) {
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void __launch_bounds__(TILE_DIM * BLOCK_ROWS, 4) transposePadded(float* odata, const float* idata) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    const int tx = threadIdx.x;
    int ty = threadIdx.y;
    // kernaut: allow(bank-conflict)
    #pragma unroll
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[ty + j][tx] = idata[tx];
    __syncthreads();
    odata[tx] = tile[tx][ty];
}

void launch(float* o, const float* i, cudaStream_t s) {
    dim3 grid(1024 / TILE_DIM, 1024 / TILE_DIM);
    dim3 block(TILE_DIM, BLOCK_ROWS);
    transposeNaive<<<grid, block>>>(o, i);
    transposePadded<<<dim3(32, 32), dim3(32, 8), 0, s>>>(o, i);
}
"#;

const GEMM: &str = r#"
#include <cuda_pipeline.h>
constexpr int BM = 64;
constexpr int BN = 64;
constexpr int BK = 16;
enum Stages { kStages = 2, kLast };

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(s), "l"(gmem));
}

template <typename T = float, int THREADS = 256>
__global__ void __launch_bounds__(THREADS, 2) gemm_db(const T* A, const T* B, T* C, int K) {
    __shared__ __align__(16) float As[kStages][BM][BK];
    __shared__ __align__(16) float Bs[kStages][BK][BN];
    const int tid = threadIdx.x;
    const int ty = tid / 16;
    const int tx = tid % 16;
    float acc = 0.f;
    for (int kt = 0; kt < K / BK; ++kt) {
        int stage = kt & 1;
        cp_async16(&As[stage][tid / 4][(tid % 4) * 4], A + kt * BK);
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group %0;\n" :: "n"(1));
        __syncthreads();
        #pragma unroll 4
        for (int k = 0; k < BK; ++k) {
            acc += As[stage][ty][k] * Bs[stage][k][tx];
        }
        float4 v = reinterpret_cast<float4*>(&Bs[stage][ty][tx * 4])[0];
        if (tid < 32) {
            acc += v.x;
        }
    }
    C[tid] = acc;
}

void host(const float* a, const float* b, float* c) {
    cudaFuncSetAttribute(gemm_db<float, 256>, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * BM * BK * sizeof(float));
    gemm_db<float, 256><<<dim3(BN, BM), 256>>>(a, b, c, 1024);
}
"#;

const REDUCE: &str = r#"
#include <cuda_fp16.h>
#define WARP 32

__global__ void reduce_half(const __half* in, __half* out, int n) {
    extern __shared__ __half sdata[];
    unsigned int tid = threadIdx.x;
    const int lane = threadIdx.x & 31;
    const int warp = tid / WARP;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > WARP; s >>= 1) {
        if (tid < s) sdata[tid] = __hadd(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    __half v = sdata[tid];
    for (int offset = 16; offset > 0; offset /= 2) v = __hadd(v, __shfl_down_sync(0xffffffff, v, offset));
    if (lane == 0) sdata[warp] = v;
    sdata[in[tid]] += v;
}

__global__ void carved(int n) {
    extern __shared__ char smem[];
    float* a = (float*)smem;
    float* b = (float*)(smem + 256 * sizeof(float));
    __half2* c = reinterpret_cast<__half2*>(b + 128);
    a[threadIdx.x] = 0.f;
    b[threadIdx.x * 2] = 1.f;
    c[threadIdx.x % 32] = c[0];
}

void host(const __half* in, __half* out, int n, cudaStream_t stream) {
    reduce_half<<<n / 256, 256, 256 * sizeof(__half), stream>>>(in, out, n);
}
"#;

const TMA: &str = r#"
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1, 4) tma_producer(const __grid_constant__ CUtensorMap tm, int x, int y) {
    __shared__ __align__(128) float smem_tile[64][64];
    __shared__ barrier bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) {
        init(&bar, blockDim.x);
        cde::fence_proxy_async_shared_cta();
    }
    block.sync();
    barrier::arrival_token token;
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_global_to_shared(&smem_tile, &tm, x, y, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(smem_tile));
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    smem_tile[threadIdx.x / 2][threadIdx.x % 64] += 1.0f;
}
"#;

fn show_accesses(file: &SourceFile, expect: Expect) {
    let text = file.text();
    let lines: Vec<String> = file
        .shared_accesses()
        .iter()
        .map(|a| {
            format!(
                "{} {:?} w={:?} `{}` -> {:#}",
                a.function.as_deref().unwrap_or("?"),
                a.kind,
                a.width,
                &text[a.range.clone()],
                a.byte_offset
            )
        })
        .collect();
    expect.assert_eq(&lines.join("\n"));
}

#[test]
fn transpose_kernels_and_shared() {
    let file = SourceFile::parse(TRANSPOSE);
    assert!(file.errors().is_empty(), "{:?}", file.errors());
    let facts = file.facts();
    let names: Vec<&str> = facts.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["transposeNaive", "transposePadded"]);
    let naive = &facts.kernels[0];
    assert_eq!(naive.params.len(), 2);
    assert_eq!(naive.params[1].name, "idata");
    assert_eq!(naive.params[1].ty, "const float* __restrict__");
    assert!(naive.launch_bounds.is_none());
    let padded = &facts.kernels[1];
    let lb = padded.launch_bounds.as_ref().unwrap();
    assert_eq!(
        (lb.max_threads, lb.min_blocks, lb.max_cluster),
        (Some(256), Some(4), None)
    );
    assert_eq!(facts.shared.len(), 2);
    assert_eq!(facts.shared[0].static_bytes, Some(32 * 32 * 4));
    assert_eq!(facts.shared[0].dims, [Some(32), Some(32)]);
    assert_eq!(facts.shared[1].static_bytes, Some(32 * 33 * 4));
    assert_eq!(facts.shared[1].dims_text, ["TILE_DIM", "TILE_DIM + 1"]);
    assert_eq!(facts.shared[1].function.as_deref(), Some("transposePadded"));
}

#[test]
fn transpose_launches() {
    let file = SourceFile::parse(TRANSPOSE);
    let l = &file.facts().launches;
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].kernel, "transposeNaive");
    assert_eq!(l[0].grid.value, Some([32, 32, 1]));
    assert_eq!(l[0].block.value, Some([32, 8, 1]));
    assert_eq!(l[0].block.total(), Some(256));
    assert_eq!(l[0].function.as_deref(), Some("launch"));
    assert_eq!(l[1].grid.value, Some([32, 32, 1]));
    assert_eq!(l[1].block.value, Some([32, 8, 1]));
    assert_eq!(l[1].shared_bytes, Some(0));
    assert_eq!(l[1].stream.as_deref(), Some("s"));
}

#[test]
fn transpose_accesses() {
    let file = SourceFile::parse(TRANSPOSE);
    show_accesses(
        &file,
        expect![[r#"
        transposeNaive Store w=Some(4) `tile[threadIdx.y + j][threadIdx.x]` -> ((((threadIdx.y + j@[0..32 step 8]) * 32) + threadIdx.x) * 4)
        transposeNaive Load w=Some(4) `tile[threadIdx.x][threadIdx.y + j]` -> (((threadIdx.x * 32) + (threadIdx.y + j@[0..32 step 8])) * 4)
        transposePadded Store w=Some(4) `tile[ty + j][tx]` -> ((((threadIdx.y + j@[0..32 step 8]) * 33) + threadIdx.x) * 4)
        transposePadded Load w=Some(4) `tile[tx][ty]` -> (((threadIdx.x * 33) + threadIdx.y) * 4)"#]],
    );
    let acc = file.shared_accesses();
    // Naive store: tile[threadIdx.y + j][threadIdx.x] with j = 0 → byte 4·(32·y + x).
    let v = acc[0].byte_offset.eval(&|leaf| match leaf {
        IndexExpr::ThreadIdx(kernaut_syntax::Axis::X) => Some(3),
        IndexExpr::ThreadIdx(kernaut_syntax::Axis::Y) => Some(2),
        IndexExpr::LoopVar { .. } => Some(8),
        _ => None,
    });
    assert_eq!(v, Some(4 * (32 * (2 + 8) + 3)));
    assert_eq!(acc[0].kind, AccessKind::Store);
    assert_eq!(acc[1].kind, AccessKind::Load);
}

#[test]
fn transpose_flow() {
    let file = SourceFile::parse(TRANSPOSE);
    let pragmas = file.unroll_pragmas();
    assert_eq!(pragmas.len(), 1);
    assert_eq!(pragmas[0].factor, None);
    assert!(pragmas[0].loop_range.is_some());
    let allows = file.allow_comments();
    assert_eq!(allows.len(), 1);
    assert_eq!(allows[0].rule_ids, ["bank-conflict"]);
    assert!(!allows[0].trailing);
    let at = TRANSPOSE.find("tile[ty + j]").unwrap();
    let chain = file.enclosing(at);
    assert!(matches!(
        &chain[0].kind,
        EnclosingKind::For { var: Some(v), end: Some(32), step: Some(8), .. } if &**v == "j"
    ));
    assert!(
        matches!(&chain[1].kind, EnclosingKind::Function { name, is_kernel: true } if &**name == "transposePadded")
    );
}

#[test]
fn transpose_constants() {
    let file = SourceFile::parse(TRANSPOSE);
    let facts = file.facts();
    let c: Vec<(&str, ConstantKind, Option<i64>)> = facts
        .constants
        .iter()
        .map(|c| (c.name.as_str(), c.kind, c.value))
        .collect();
    assert_eq!(
        c,
        [
            ("TILE_DIM", ConstantKind::Define, Some(32)),
            ("BLOCK_ROWS", ConstantKind::Define, Some(8))
        ]
    );
    assert_eq!(facts.fold_text("TILE_DIM + 1", 0), Some(33));
    assert_eq!(facts.fold_text("TILE_DIM * BLOCK_ROWS / 4", 0), Some(64));
}

#[test]
fn gemm_facts() {
    let file = SourceFile::parse(GEMM);
    let facts = file.facts();
    let k = facts.kernel("gemm_db").unwrap();
    let tp: Vec<(&str, bool, Option<&str>, Option<i64>)> = k
        .template_params
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.is_type,
                t.default.as_deref(),
                t.default_value,
            )
        })
        .collect();
    assert_eq!(
        tp,
        [
            ("T", true, Some("float"), None),
            ("THREADS", false, Some("256"), Some(256))
        ]
    );
    let lb = k.launch_bounds.as_ref().unwrap();
    assert_eq!((lb.max_threads, lb.min_blocks), (Some(256), Some(2)));
    assert_eq!(facts.device_functions.len(), 1);
    assert!(facts.device_functions[0]
        .qualifiers
        .contains(&"__forceinline__".to_string()));
    let a = &facts.shared[0];
    assert_eq!((a.name.as_str(), a.alignment), ("As", Some(16)));
    assert_eq!(a.dims, [Some(2), Some(64), Some(16)]);
    assert_eq!(a.static_bytes, Some(2 * 64 * 16 * 4));
    assert_eq!(facts.shared[1].static_bytes, Some(2 * 16 * 64 * 4));
    let attr = &facts.func_attributes[0];
    assert_eq!(attr.kernel, "gemm_db");
    assert_eq!(
        attr.attribute,
        "cudaFuncAttributeMaxDynamicSharedMemorySize"
    );
    assert_eq!(attr.value, Some(2 * 64 * 16 * 4));
    let launch = &facts.launches[0];
    assert_eq!(launch.kernel, "gemm_db");
    assert_eq!(launch.template_args.as_deref(), Some("<float, 256>"));
    assert_eq!(launch.grid.value, Some([64, 64, 1]));
    assert_eq!(launch.block.value, Some([256, 1, 1]));
    let consts: Vec<(&str, Option<i64>)> = facts
        .constants
        .iter()
        .map(|c| (c.name.as_str(), c.value))
        .collect();
    assert_eq!(
        consts,
        [
            ("BM", Some(64)),
            ("BN", Some(64)),
            ("BK", Some(16)),
            ("kStages", Some(2)),
            ("kLast", Some(3)),
            ("THREADS", Some(256))
        ]
    );
}

#[test]
fn gemm_accesses() {
    let file = SourceFile::parse(GEMM);
    show_accesses(
        &file,
        expect![[r#"
        gemm_db AddressOf w=Some(4) `As[stage][tid / 4][(tid % 4) * 4]` -> ((((((kt@[0 step 1] & 1) * 64) + (threadIdx.x / 4)) * 16) + ((threadIdx.x % 4) * 4)) * 4)
        gemm_db Load w=Some(4) `As[stage][ty][k]` -> ((((((kt@[0 step 1] & 1) * 64) + (threadIdx.x / 16)) * 16) + k@[0..16 step 1]) * 4)
        gemm_db Load w=Some(4) `Bs[stage][k][tx]` -> ((((((kt@[0 step 1] & 1) * 16) + k@[0..16 step 1]) * 64) + (threadIdx.x % 16)) * 4)
        gemm_db Load w=Some(16) `reinterpret_cast<float4*>(&Bs[stage][ty][tx * 4])[0]` -> ((((((kt@[0 step 1] & 1) * 16) + (threadIdx.x / 16)) * 64) + ((threadIdx.x % 16) * 4)) * 4)"#]],
    );
}

#[test]
fn gemm_calls_and_pragmas() {
    let file = SourceFile::parse(GEMM);
    let p = file.unroll_pragmas();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].factor, Some(4));
    let waits = file.find_calls("cp.async.wait_group");
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].args, ["%0"]);
    assert_eq!(file.find_calls("cp.async").len(), 3);
    assert_eq!(file.find_calls("__syncthreads").len(), 1);
    let at = GEMM.find("acc += v.x").unwrap();
    let calls: Vec<String> = file.calls_in(at).iter().map(|c| c.callee.clone()).collect();
    assert_eq!(
        calls,
        [
            "cp_async16",
            "cp.async.commit_group",
            "cp.async.wait_group",
            "__syncthreads",
            "reinterpret_cast"
        ]
    );
    let chain = file.enclosing(at);
    assert!(matches!(
        &chain[0].kind,
        EnclosingKind::If { condition, thread_dependent: true, in_else: false, .. } if &**condition == "tid < 32"
    ));
}

#[test]
fn reduction_facts_and_accesses() {
    let file = SourceFile::parse(REDUCE);
    let facts = file.facts();
    let s = &facts.shared[0];
    assert!(s.is_extern);
    assert_eq!(
        (s.element_type.as_str(), s.element_size, s.static_bytes),
        ("__half", Some(2), None)
    );
    let l = &facts.launches[0];
    assert_eq!(l.shared_bytes, Some(512));
    assert_eq!(l.block.value, Some([256, 1, 1]));
    assert_eq!(l.grid.value, None);
    let carves: Vec<(&str, &str, Option<i64>)> = facts
        .carves
        .iter()
        .map(|c| (c.name.as_str(), c.base.as_str(), c.offset_bytes))
        .collect();
    assert_eq!(
        carves,
        [
            ("a", "smem", Some(0)),
            ("b", "smem", Some(1024)),
            ("c", "b", Some(1536))
        ]
    );
    show_accesses(
        &file,
        expect![[r#"
            reduce_half Store w=Some(2) `sdata[tid]` -> (threadIdx.x * 2)
            reduce_half Store w=Some(2) `sdata[tid]` -> (threadIdx.x * 2)
            reduce_half Load w=Some(2) `sdata[tid]` -> (threadIdx.x * 2)
            reduce_half Load w=Some(2) `sdata[tid + s]` -> ((threadIdx.x + s@[(blockDim.x / 2); s >>= 1]) * 2)
            reduce_half Load w=Some(2) `sdata[tid]` -> (threadIdx.x * 2)
            reduce_half Store w=Some(2) `sdata[warp]` -> ((threadIdx.x / WARP=32) * 2)
            reduce_half LoadStore w=Some(2) `sdata[in[tid]]` -> unknown(`in[tid]` is loaded from memory)
            carved Store w=Some(4) `a[threadIdx.x]` -> (threadIdx.x * 4)
            carved Store w=Some(4) `b[threadIdx.x * 2]` -> (1024 + ((threadIdx.x * 2) * 4))
            carved Store w=Some(4) `c[threadIdx.x % 32]` -> (1536 + ((threadIdx.x % 32) * 4))
            carved Load w=Some(4) `c[0]` -> 1536"#]],
    );
}

#[test]
fn reduction_divergence() {
    let file = SourceFile::parse(REDUCE);
    let at = REDUCE.find("sdata[warp] = v").unwrap();
    let chain = file.enclosing(at);
    assert!(matches!(
        &chain[0].kind,
        EnclosingKind::If {
            thread_dependent: true,
            ..
        }
    ));
    let at = REDUCE.find("__syncthreads();\n    }").unwrap();
    let chain = file.enclosing(at);
    assert!(matches!(
        &chain[0].kind,
        EnclosingKind::For { var: Some(v), thread_dependent: false, .. } if &**v == "s"
    ));
}

#[test]
fn tma_producer() {
    let file = SourceFile::parse(TMA);
    let facts = file.facts();
    let k = facts.kernel("tma_producer").unwrap();
    assert_eq!(k.cluster_dims, Some([Some(2), Some(1), Some(1)]));
    let lb = k.launch_bounds.as_ref().unwrap();
    assert_eq!(
        (lb.max_threads, lb.min_blocks, lb.max_cluster),
        (Some(128), Some(1), Some(4))
    );
    assert_eq!(lb.args, ["128", "1", "4"]);
    assert!(file.errors().is_empty(), "{:?}", file.errors());
    assert_eq!(k.params[0].name, "tm");
    let tile = &facts.shared[0];
    assert_eq!(
        (tile.alignment, tile.static_bytes),
        (Some(128), Some(64 * 64 * 4))
    );
    let bar = &facts.shared[1];
    assert_eq!(
        (bar.element_type.as_str(), bar.element_size),
        ("barrier", None)
    );
    let at = TMA.find("token = bar.arrive").unwrap();
    let chain = file.enclosing(at);
    assert!(matches!(
        &chain[0].kind,
        EnclosingKind::If {
            in_else: true,
            thread_dependent: true,
            ..
        }
    ));
    let at = TMA.find("init(&bar").unwrap();
    assert!(matches!(
        &file.enclosing(at)[0].kind,
        EnclosingKind::If {
            thread_dependent: true,
            ..
        }
    ));
    let sym = file.symbol_at(TMA.find("sync();").unwrap()).unwrap();
    assert_eq!(sym.name, "cooperative_groups::thread_block::sync");
    let sym = file
        .symbol_at(TMA.find("cp_async_bulk_tensor_2d").unwrap())
        .unwrap();
    assert_eq!(
        sym.name,
        "cuda::device::experimental::cp_async_bulk_tensor_2d_global_to_shared"
    );
    show_accesses(&file, expect!["tma_producer LoadStore w=Some(4) `smem_tile[threadIdx.x / 2][threadIdx.x % 64]` -> ((((threadIdx.x / 2) * 64) + (threadIdx.x % 64)) * 4)"]);
}

#[test]
fn incremental_edit_matches_fresh_parse() {
    let mut file = SourceFile::parse(TRANSPOSE);
    let at = TRANSPOSE.find("TILE_DIM + 1").unwrap();
    file.apply_edit(at..at + "TILE_DIM + 1".len(), "TILE_DIM + 2");
    assert_eq!(file.facts().shared[1].static_bytes, Some(32 * 34 * 4));
    let fresh = SourceFile::parse(file.text());
    assert_eq!(file.debug_tree(), fresh.debug_tree());
    // An edit that creates a masked macro changes bytes outside the edited range.
    let at = file
        .text()
        .find("float tile[TILE_DIM][TILE_DIM + 2]")
        .unwrap();
    file.apply_edit(at..at, "__align__(16) ");
    let fresh = SourceFile::parse(file.text());
    assert_eq!(file.debug_tree(), fresh.debug_tree());
    assert_eq!(file.facts().shared[1].alignment, Some(16));
    // Out-of-range and inverted ranges are clamped.
    let inverted = std::ops::Range {
        start: usize::MAX - 1,
        end: 5,
    };
    file.apply_edit(inverted, "x");
    assert!(file.text().ends_with('x'));
}

#[test]
fn masked_macros_keep_the_tree_clean() {
    let text = r#"
struct __align__(16) Vec4 { float a, b, c, d; };
CUTLASS_HOST_DEVICE int add(int a, int b) { return a + b; }
CUTLASS_DEVICE void dev() {}
CUTLASS_GLOBAL void kern(float* __restrict__ p) { __shared__ __align__(8) double d[4]; }
__device__ __noinline__ int g() { return 1; }
"#;
    let file = SourceFile::parse(text);
    assert!(
        file.errors().is_empty(),
        "{:?}\n{}",
        file.errors(),
        file.debug_tree()
    );
    let facts = file.facts();
    assert_eq!(
        facts
            .kernels
            .iter()
            .map(|k| k.name.as_str())
            .collect::<Vec<_>>(),
        ["kern"]
    );
    let dev: Vec<&str> = facts
        .device_functions
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(dev, ["add", "dev", "g"]);
    assert_eq!(facts.shared[0].alignment, Some(8));
    assert_eq!(facts.shared[0].static_bytes, Some(32));
    let masked: Vec<&str> = file
        .masked_macros()
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(
        masked,
        [
            "__align__",
            "CUTLASS_HOST_DEVICE",
            "CUTLASS_DEVICE",
            "CUTLASS_GLOBAL",
            "__restrict__",
            "__align__",
            "__noinline__"
        ]
    );
    // Offsets are unchanged: the kernel's name range points at the name.
    let k = &facts.kernels[0];
    assert_eq!(&text[k.name_range.clone()], "kern");
}

#[test]
fn grammar_parses_cuda_constructs() {
    let text = "__global__ void __launch_bounds__(256,2) k(int* p) {\n  __shared__ float tile[32][33];\n  extern __shared__ char smem[];\n}\nvoid h() { k<<<g, b, smem, s>>>(p); }\n";
    let file = SourceFile::parse(text);
    assert!(file.errors().is_empty());
    let tree = file.debug_tree();
    assert!(tree.contains("launch_bounds"));
    assert!(tree.contains("kernel_call_syntax"));
    assert!(tree.contains("type_qualifier"));
}

#[test]
fn broken_code_still_has_facts() {
    let text = "#define N 8\n__global__ void k() { __shared__ int s[N]; if (x { s[threadIdx.x] = 1; }\n__global__ void k2( {";
    let file = SourceFile::parse(text);
    assert!(!file.errors().is_empty());
    let facts = file.facts();
    assert_eq!(facts.shared[0].static_bytes, Some(32));
}

#[test]
fn constants_fold_across_kinds() {
    let text = r#"
#define TILE_DIM 32
#define PADDED (TILE_DIM + 1)
#define SHIFT (1u << 4)
#define SQUARE(x) ((x) * (x))
const int BLOCK_DIM = 256;
const int QUARTER = BLOCK_DIM / 4;
constexpr int VEC = sizeof(float4);
constexpr unsigned MASK = 0xFFu;
enum class Mode : int { A = 3, B, C = B * 2 };
template <int N = TILE_DIM / 2> __global__ void k() { const int M = N + 1; __shared__ float s[M][PADDED]; }
"#;
    let file = SourceFile::parse(text);
    let facts = file.facts();
    let c: Vec<(&str, Option<i64>)> = facts
        .constants
        .iter()
        .map(|c| (c.name.as_str(), c.value))
        .collect();
    assert_eq!(
        c,
        [
            ("TILE_DIM", Some(32)),
            ("PADDED", Some(33)),
            ("SHIFT", Some(16)),
            ("BLOCK_DIM", Some(256)),
            ("QUARTER", Some(64)),
            ("VEC", Some(16)),
            ("MASK", Some(255)),
            ("A", Some(3)),
            ("B", Some(4)),
            ("C", Some(8)),
            ("N", Some(16)),
            ("M", Some(17)),
        ]
    );
    assert!(facts.macros.contains(&"SQUARE".to_string()));
    assert_eq!(facts.shared[0].dims, [Some(17), Some(33)]);
    assert_eq!(facts.shared[0].static_bytes, Some(17 * 33 * 4));
    let k = facts.kernel("k").unwrap();
    assert_eq!(k.template_params[0].default_value, Some(16));
}

#[test]
fn find_calls_covers_members_aliases_and_ptx() {
    let text = r#"
namespace cg = cooperative_groups;
__global__ void k() {
    auto block = cg::this_thread_block();
    block.sync();
    cg::sync(block);
    __syncthreads();
    asm volatile("bar.sync 0;\n" ::);
}
"#;
    let file = SourceFile::parse(text);
    let names = |q: &str| -> Vec<String> {
        file.find_calls(q)
            .iter()
            .map(|c| c.callee_text.clone())
            .collect()
    };
    assert_eq!(
        names("cooperative_groups::thread_block::sync"),
        ["block.sync"]
    );
    assert_eq!(names("cooperative_groups::sync"), ["cg::sync"]);
    assert_eq!(names("sync"), ["block.sync", "cg::sync"]);
    assert_eq!(names("bar.sync"), ["bar.sync"]);
    assert_eq!(names("bar"), ["bar.sync"]);
    assert_eq!(names("__syncthreads"), ["__syncthreads"]);
    let all = file.calls_in(text.find("block.sync").unwrap());
    let at = &all[1];
    assert_eq!(at.callee, "cooperative_groups::thread_block::sync");
    assert_eq!(&text[at.callee_range.clone()], "block.sync");
}

/// Code that no compile includes (`#if 0`, the `#else` of `#if 1`, an `#elif 0`) is no
/// kernel; an `#if` the file does not decide keeps both arms. Removing the `0` by an edit
/// brings the kernel back, as a fresh parse has it.
#[test]
fn code_no_compile_includes_is_no_kernel() {
    let text = "#if 0\n__global__ void off(float* p) { p[threadIdx.x] = 0; }\n#if X\n__global__ void nested(float* p) {}\n#endif\n#else\n__global__ void on(float* p) {}\n#endif\n#if 1\n__global__ void one(float* p) {}\n#elif X\n__global__ void elif_after_one(float* p) {}\n#else\n__global__ void else_after_one(float* p) {}\n#endif\n#ifdef USE_X\n__global__ void maybe(float* p) {}\n#elif 0\n__global__ void elif_zero(float* p) {}\n#else\n__global__ void fallback(float* p) {}\n#endif\n/*\n#if 0\n*/\n__global__ void after_comment(float* p) {}\n";
    let names = |f: &SourceFile| {
        f.facts()
            .kernels
            .iter()
            .map(|k| k.name.clone())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut file = SourceFile::parse(text);
    assert_eq!(names(&file), "on one maybe fallback after_comment");
    file.apply_edit(4..5, "1");
    assert_eq!(names(&file), "off nested one maybe fallback after_comment");
    assert_eq!(names(&file), names(&SourceFile::parse(file.text())));
    let chunked = SourceFile::parse_with_target(text, 1);
    assert_eq!(names(&chunked), "on one maybe fallback after_comment");
}

/// A function's parameter or variable named like a file-scope constant is that variable
/// inside the function (the constant is hidden there); a `#define`d name is replaced
/// before declarations are read, so nothing hides it; a function's own `const` wins
/// over nothing; outside the functions the constant stands.
#[test]
fn parameters_and_variables_hide_file_scope_constants() {
    let text = r#"
#define ROWS 8
const int width = 2;
constexpr int depth = 3;
__global__ void step(float* v, std::size_t width) { v[threadIdx.x * width] = 0.f; }
void run(float* v, int n) { int depth = n; step<<<1, 32>>>(v, depth); }
__device__ int twice() { const int width = 4; return 2 * width * depth; }
int rows() { return ROWS; }
"#;
    let file = SourceFile::parse(text);
    let facts = file.facts();
    let at = |s: &str| text.find(s).unwrap();
    assert_eq!(facts.fold_text("width", at("v[threadIdx.x")), None);
    assert_eq!(facts.fold_text("depth", at("step<<<")), None);
    assert_eq!(facts.fold_text("width * depth", at("return 2")), Some(12));
    assert_eq!(facts.fold_text("ROWS", at("return ROWS")), Some(8));
    assert_eq!(facts.fold_text("width + depth", text.len() - 1), Some(5));
}
