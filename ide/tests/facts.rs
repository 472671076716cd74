//! Facts, occupancy and bank reports on real-looking kernels, one test per kernel, with
//! the answers checked by hand in the comments. `check_facts` is the only code that
//! calls the API; update with `UPDATE_EXPECT=1 cargo test -p kernaut-ide --test facts`.

use expect_test::{expect, Expect};
use kernaut_ide::gpu::Arch;
use kernaut_ide::{AnalysisConfig, AnalysisHost};
use kernaut_test_utils::Fixture;

/// Renders every kernel (launch bounds, launches, shared memory, occupancy) and every
/// shared-memory access (lowered byte offset, bank result) of the fixture's first file.
fn check_facts(fixture: &str, expect: Expect) {
    let f = Fixture::parse(fixture);
    let first = &f.files[0];
    let mut config = AnalysisConfig::default();
    if let Some(a) = first.meta.get("arch") {
        config.arch = Arch::parse(a).expect("a valid arch");
    }
    if let Some(b) = first.block() {
        config.default_block = b;
    }
    let mut host = AnalysisHost::new(config);
    for file in &f.files {
        host.set_file(&file.path, &file.text);
    }
    let a = host.analysis();
    let path = a.file_id(&first.path).expect("the first file is open");
    let mut out = String::new();
    assert!(
        a.syntax_errors(path).unwrap().is_empty(),
        "{:?}",
        a.syntax_errors(path)
    );
    for k in a.kernel_facts(path).unwrap() {
        let f = &k.function;
        out.push_str(&format!("kernel {}", f.name));
        if let Some(lb) = &f.launch_bounds {
            out.push_str(&format!(
                " launch_bounds({:?}, {:?})",
                lb.max_threads, lb.min_blocks
            ));
        }
        if let Some(c) = f.cluster_dims {
            out.push_str(&format!(" cluster_dims{c:?}"));
        }
        if !f.template_params.is_empty() {
            let t: Vec<String> = f
                .template_params
                .iter()
                .map(|t| format!("{}={:?}", t.name, t.default_value))
                .collect();
            out.push_str(&format!(" template<{}>", t.join(", ")));
        }
        out.push('\n');
        for (file, l) in &k.launches {
            let file = a.path(*file).unwrap_or("?");
            out.push_str(&format!(
                "  launch {file}: grid `{}` block {:?} smem {:?}\n",
                l.grid.text, l.block.value, l.shared_bytes
            ));
        }
        for d in &k.shared {
            out.push_str(&format!(
                "  shared {}{} {}{:?} = {:?} B\n",
                if d.is_extern { "extern " } else { "" },
                d.element_type,
                d.name,
                d.dims,
                d.static_bytes
            ));
        }
        for (attr, v) in &k.attributes {
            out.push_str(&format!("  attribute {attr} = {v:?}\n"));
        }
        if let Some(o) = a.occupancy(path, &f.name).unwrap() {
            out.push_str(&format!(
                "  occupancy {}: block {:?}, {} regs, {} B static + {} B dynamic -> ",
                o.arch, o.block, o.regs_per_thread, o.static_smem, o.dynamic_smem
            ));
            match &o.result {
                Ok(r) => out.push_str(&format!(
                    "{} blocks/SM, {} warps, limited by {}\n",
                    r.blocks_per_sm,
                    r.active_warps,
                    o.limiter_names().join(" and ")
                )),
                Err(e) => out.push_str(&format!("error: {e}\n")),
            }
        }
    }
    for acc in a.shared_accesses(path).unwrap() {
        let text = first.text.get(acc.range.clone()).unwrap_or("?");
        out.push_str(&format!("access `{text}` {:?}", acc.kind));
        let Some(b) = a.bank(path, acc).unwrap() else {
            out.push_str(" no report\n");
            continue;
        };
        if let Some(l) = &b.lowered {
            out.push_str(&format!(" at `{l}`"));
        }
        if let Some(c) = &b.copy {
            out.push_str(&format!(" via {c} ({} B)", b.width.unwrap_or(0)));
        }
        for (n, s) in &b.held_loops {
            out.push_str(&format!(" [{n}={s}]"));
        }
        match &b.result {
            Ok(r) => out.push_str(&format!(
                " -> {}-way, {} wavefronts\n",
                r.conflict_degree, r.wavefronts
            )),
            Err(e) => out.push_str(&format!(" -> not modelled: {e}\n")),
        }
    }
    expect.assert_eq(&out);
}

/// The classic naive transpose: the store along a row is conflict-free, the read down a
/// column of `float tile[32][32]` puts all 32 lanes of warp 0 in bank 0 (32-way).
/// Occupancy: 256 threads, 32 registers, 4 KiB: the warp limit (8 blocks) binds, along
/// with registers (65536 / (32 * 256) = 8).
#[test]
fn naive_transpose() {
    check_facts(
        r#"
#define TILE_DIM 32
#define BLOCK_ROWS 8
__global__ void transpose_naive(float* odata, const float* idata, int width) {
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}
void launch(float* o, const float* i, int n) {
    dim3 grid(n / TILE_DIM, n / TILE_DIM), block(TILE_DIM, BLOCK_ROWS);
    transpose_naive<<<grid, block>>>(o, i, n);
}
"#,
        expect![[r#"
            kernel transpose_naive
              launch /main.cu: grid `grid` block Some([32, 8, 1]) smem None
              shared float tile[Some(32), Some(32)] = Some(4096) B
              occupancy sm_90: block [32, 8, 1], 32 regs, 4096 B static + 0 B dynamic -> 8 blocks/SM, 64 warps, limited by warps and registers
            access `tile[threadIdx.y + j][threadIdx.x]` Store at `((threadIdx.y + 0) * 32 + threadIdx.x) * 4` [j=0] -> 1-way, 1 wavefronts
            access `tile[threadIdx.x][threadIdx.y + j]` Load at `(threadIdx.x * 32 + (threadIdx.y + 0)) * 4` [j=0] -> 32-way, 32 wavefronts
        "#]],
    );
}

/// The padded transpose: `tile[32][33]` shifts each row by one bank, so the column read
/// is conflict-free; 32 * 33 * 4 = 4224 bytes.
#[test]
fn padded_transpose() {
    check_facts(
        r#"
#define TILE_DIM 32
#define BLOCK_ROWS 8
__global__ void __launch_bounds__(TILE_DIM * BLOCK_ROWS) transpose_padded(float* odata, const float* idata, int width) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}
void launch(float* o, const float* i, int n) {
    transpose_padded<<<dim3(n / TILE_DIM, n / TILE_DIM), dim3(TILE_DIM, BLOCK_ROWS)>>>(o, i, n);
}
"#,
        expect![[r#"
            kernel transpose_padded launch_bounds(Some(256), None)
              launch /main.cu: grid `dim3(n / TILE_DIM, n / TILE_DIM)` block Some([32, 8, 1]) smem None
              shared float tile[Some(32), Some(33)] = Some(4224) B
              occupancy sm_90: block [32, 8, 1], 32 regs, 4224 B static + 0 B dynamic -> 8 blocks/SM, 64 warps, limited by warps and registers
            access `tile[threadIdx.y + j][threadIdx.x]` Store at `((threadIdx.y + 0) * 33 + threadIdx.x) * 4` [j=0] -> 1-way, 1 wavefronts
            access `tile[threadIdx.x][threadIdx.y + j]` Load at `(threadIdx.x * 33 + (threadIdx.y + 0)) * 4` [j=0] -> 1-way, 1 wavefronts
        "#]],
    );
}

/// A 64x64 tiled GEMM with a two-stage cp.async pipeline through the
/// `__pipeline_memcpy_async` primitives. Shared memory: 2 * 64 * 16 * 4 * 2 = 16 KiB.
/// `__launch_bounds__(256, 2)` caps registers at 65536 / 512 = 128.
/// The copies into the tiles are 16-byte cp.async writes: lane `tid` writes bytes
/// `16 * tid`, the 4 wavefronts a 16-byte access needs at least (conflict-free).
/// In the inner product, `As[stage][ty * TM + m][k]` reads rows 0 and 4 (lanes 0-15 and
/// 16-31), 4 * 16 * 4 = 256 bytes apart: the same bank, a 2-way conflict;
/// `Bs[stage][k][tx]` reads 16 consecutive floats twice (broadcast, conflict-free).
#[test]
fn tiled_gemm_with_cp_async_double_buffering() {
    check_facts(
        r#"
#include <cuda_pipeline.h>
#define BM 64
#define BN 64
#define BK 16
#define TM 4
__global__ void __launch_bounds__(256, 2) sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ __align__(16) float As[2][BM][BK];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tx = threadIdx.x % 16;
    const int ty = threadIdx.x / 16;
    const int tid = threadIdx.x;
    float acc[TM] = {0.f};
    int stage = 0;
    __pipeline_memcpy_async(&As[0][tid / 4][(tid % 4) * 4], &A[tid], 16);
    __pipeline_memcpy_async(&Bs[0][tid / 16][(tid % 16) * 4], &B[tid], 16);
    __pipeline_commit();
    for (int kt = 0; kt < K / BK; ++kt) {
        int next = stage ^ 1;
        __pipeline_memcpy_async(&As[next][tid / 4][(tid % 4) * 4], &A[kt * BK + tid], 16);
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            float b = Bs[stage][k][tx];
            for (int m = 0; m < TM; ++m)
                acc[m] += As[stage][ty * TM + m][k] * b;
        }
        __syncthreads();
        stage = next;
    }
    C[tid] = acc[0];
}
void run(const float* A, const float* B, float* C, int M, int N, int K) {
    sgemm<<<dim3(N / BN, M / BM), 256>>>(A, B, C, M, N, K);
}
"#,
        expect![[r#"
            kernel sgemm launch_bounds(Some(256), Some(2))
              launch /main.cu: grid `dim3(N / BN, M / BM)` block Some([256, 1, 1]) smem None
              shared float As[Some(2), Some(64), Some(16)] = Some(8192) B
              shared float Bs[Some(2), Some(16), Some(64)] = Some(8192) B
              occupancy sm_90: block [256, 1, 1], 32 regs, 16384 B static + 0 B dynamic -> 8 blocks/SM, 64 warps, limited by warps and registers
            access `As[0][tid / 4][(tid % 4) * 4]` AddressOf at `(threadIdx.x / 4 * 16 + threadIdx.x % 4 * 4) * 4` via __pipeline_memcpy_async (16 B) -> 1-way, 4 wavefronts
            access `Bs[0][tid / 16][(tid % 16) * 4]` AddressOf at `(threadIdx.x / 16 * 64 + threadIdx.x % 16 * 4) * 4` via __pipeline_memcpy_async (16 B) -> 1-way, 4 wavefronts
            access `As[next][tid / 4][(tid % 4) * 4]` AddressOf at `((64 + threadIdx.x / 4) * 16 + threadIdx.x % 4 * 4) * 4` via __pipeline_memcpy_async (16 B) -> 1-way, 4 wavefronts
            access `Bs[stage][k][tx]` Load at `(0 * 64 + threadIdx.x % 16) * 4` [k=0] -> 1-way, 1 wavefronts
            access `As[stage][ty * TM + m][k]` Load at `((threadIdx.x / 16 * TM + 0) * 16 + 0) * 4` [m=0] [k=0] -> 2-way, 2 wavefronts
        "#]],
    );
}

/// An fp16 block reduction: `__half sdata[256]` (512 B), halving strides, then warp
/// shuffles. `sdata[tid + s]` with `s` held at `blockDim.x / 2` = 128 is conflict-free
/// (2-byte accesses, 16 words).
#[test]
fn fp16_reduction() {
    check_facts(
        r#"
//- /reduce.cu block:256
#include <cuda_fp16.h>
__global__ void reduce_half(const __half* in, __half* out, int n) {
    __shared__ __half sdata[256];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : __float2half(0.f);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = __hadd(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    __half v = sdata[tid];
    for (int o = 16; o > 0; o >>= 1) v = __hadd(v, __shfl_down_sync(0xffffffffu, v, o));
    if (tid == 0) out[blockIdx.x] = v;
}
"#,
        expect![[r#"
            kernel reduce_half
              shared __half sdata[Some(256)] = Some(512) B
              occupancy sm_90: block [256, 1, 1], 32 regs, 512 B static + 0 B dynamic -> 8 blocks/SM, 64 warps, limited by warps and registers
            access `sdata[tid]` Store at `threadIdx.x * 2` -> 1-way, 1 wavefronts
            access `sdata[tid]` Store at `threadIdx.x * 2` -> 1-way, 1 wavefronts
            access `sdata[tid]` Load at `threadIdx.x * 2` -> 1-way, 1 wavefronts
            access `sdata[tid + s]` Load at `(threadIdx.x + blockDim.x / 2) * 2` [s=blockDim.x / 2] -> 1-way, 1 wavefronts
            access `sdata[tid]` Load at `threadIdx.x * 2` -> 1-way, 1 wavefronts
        "#]],
    );
}

/// A Hopper TMA producer: one thread arms an mbarrier and issues a 2D bulk tensor copy
/// into a 128-byte aligned tile; 64 * 128 * 2 = 16 KiB of `__half`, plus an 8-byte
/// barrier, plus 32 KiB of dynamic shared memory raised with `cudaFuncSetAttribute`.
#[test]
fn tma_producer() {
    check_facts(
        r#"
//- /tma.cu arch:sm_90
#include <cuda.h>
#include <cuda_fp16.h>
#include <cstdint>
constexpr int TILE_M = 64;
constexpr int TILE_K = 128;
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1) tma_load(const __grid_constant__ CUtensorMap map, __half* out) {
    __shared__ alignas(128) __half tile[TILE_M * TILE_K];
    __shared__ uint64_t bar;
    extern __shared__ float stage_buf[];
    if (threadIdx.x == 0) {
        unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
        unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(tile));
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(1));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(TILE_M * TILE_K * 2));
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];"
            :: "r"(dst), "l"(&map), "r"(0), "r"(blockIdx.x * TILE_M), "r"(b) : "memory");
    }
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x * 2];
    stage_buf[threadIdx.x] = 0.f;
}
void run(CUtensorMap map, __half* out) {
    cudaFuncSetAttribute(tma_load, cudaFuncAttributeMaxDynamicSharedMemorySize, 32768);
    tma_load<<<132, 128, 32768>>>(map, out);
}
"#,
        expect![[r#"
            kernel tma_load launch_bounds(Some(128), Some(1)) cluster_dims[Some(2), Some(1), Some(1)]
              launch /tma.cu: grid `132` block Some([128, 1, 1]) smem Some(32768)
              shared __half tile[Some(8192)] = Some(16384) B
              shared uint64_t bar[] = Some(8) B
              shared extern float stage_buf[None] = None B
              attribute cudaFuncAttributeMaxDynamicSharedMemorySize = Some(32768)
              occupancy sm_90: block [128, 1, 1], 32 regs, 16392 B static + 32768 B dynamic -> 4 blocks/SM, 16 warps, limited by shared_memory
            access `tile[threadIdx.x * 2]` Load at `threadIdx.x * 2 * 2` -> 1-way, 1 wavefronts
            access `stage_buf[threadIdx.x]` Store at `threadIdx.x * 4` -> 1-way, 1 wavefronts
        "#]],
    );
}

/// Chevrons with blanks in them, as Visual Studio's formatter writes a launch
/// (`k << <grid, block, smem >> > (…)`), are the same launch to nvcc.
#[test]
fn launches_with_spaced_chevrons() {
    check_facts(
        r#"
__global__ void scale(float* x, float s) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x] * s;
    x[blockIdx.x * blockDim.x + threadIdx.x] = buf[threadIdx.x];
}
__global__ void fill(float* x) { x[threadIdx.x] = 0.0f; }
void run(float* x, int n) {
    dim3 block(128);
    scale << <n / 128, block, 128 * sizeof(float) >> > (x, 2.0f);
    fill< < <1,	64> > >(x);
}
"#,
        expect![[r#"
            kernel scale
              launch /main.cu: grid `n / 128` block Some([128, 1, 1]) smem Some(512)
              shared extern float buf[None] = None B
              occupancy sm_90: block [128, 1, 1], 32 regs, 0 B static + 512 B dynamic -> 16 blocks/SM, 64 warps, limited by warps and registers
            kernel fill
              launch /main.cu: grid `1` block Some([64, 1, 1]) smem None
              occupancy sm_90: block [64, 1, 1], 32 regs, 0 B static + 0 B dynamic -> 32 blocks/SM, 64 warps, limited by warps and registers and blocks
            access `buf[threadIdx.x]` Store at `threadIdx.x * 4` -> 1-way, 1 wavefronts
            access `buf[threadIdx.x]` Load no report
        "#]],
    );
}
