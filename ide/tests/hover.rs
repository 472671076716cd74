//! Snapshot tests of hover content. `check_hover` is the only code that calls the API;
//! update the snapshots with `UPDATE_EXPECT=1 cargo test -p kernaut-ide --test hover`.
//!
//! The wiki here is `ide/tests/wiki/`: a few small pages shaped like the built-in ones,
//! so that these snapshots change only when hover does. `tests/acceptance.rs` runs
//! realistic positions against the built-in wiki.

use std::sync::{Arc, OnceLock};

use expect_test::{expect, Expect};
use kernaut_ide::gpu::Arch;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};
use kernaut_test_utils::Fixture;

fn knowledge() -> Arc<Knowledge> {
    static K: OnceLock<Arc<Knowledge>> = OnceLock::new();
    K.get_or_init(|| {
        let config = WikiConfig {
            no_builtin: true,
            dirs: vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wiki")],
        };
        let k = Knowledge::load(&config).expect("the test wiki loads");
        assert_eq!(k.wiki.pages().len(), 10, "{:?}", k.wiki.diagnostics);
        Arc::new(k)
    })
    .clone()
}

/// Markdown that every client renders as meant (issue 28): Neovim 0.7 garbles bold
/// around a code span (`**`__hfma2`**` shows as "`_hfma2`**") and reads a bare `__` as
/// emphasis, so neither appears outside code spans and code blocks.
fn assert_renders_everywhere(md: &str) {
    assert!(
        !md.contains("**`") && !md.contains("`**"),
        "bold around a code span:\n{md}"
    );
    let mut in_block = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        for (i, part) in line.split('`').enumerate() {
            assert!(
                i % 2 == 1 || !part.contains("__"),
                "a bare `__` outside code in `{line}`:\n{md}"
            );
        }
    }
}

/// Hovers at the fixture's `$0` and compares the kind, symbol, hovered text and Markdown.
/// `arch:` and `block:` in the cursor file's header set the target and the default block.
fn check_hover(fixture: &str, expect: Expect) {
    let f = Fixture::parse(fixture);
    let cursor_file = f
        .files
        .iter()
        .find(|f| f.cursor.is_some())
        .expect("the fixture has a $0 cursor");
    let mut config = AnalysisConfig::default();
    if let Some(a) = cursor_file.meta.get("arch") {
        config.arch = Arch::parse(a).expect("a valid arch in the fixture");
    }
    if let Some(b) = cursor_file.block() {
        config.default_block = b;
    }
    let mut host = AnalysisHost::new(config);
    host.set_knowledge(knowledge());
    for file in &f.files {
        host.set_file(&file.path, &file.text);
    }
    let analysis = host.analysis();
    let offset = cursor_file.cursor.unwrap_or(0);
    let id = analysis
        .file_id(&cursor_file.path)
        .expect("the cursor file is open");
    let hover = analysis.hover(id, offset).expect("the hover query answers");
    if let Some(h) = &hover {
        assert_renders_everywhere(&h.markdown);
    }
    let actual = match hover {
        None => "no hover\n".to_string(),
        Some(h) => format!(
            "{} `{}` at `{}`\n---\n{}",
            h.kind.as_str(),
            h.symbol,
            cursor_file.text.get(h.range.clone()).unwrap_or("?"),
            h.markdown
        ),
    };
    expect.assert_eq(&actual);
}

// Intrinsics.

#[test]
fn intrinsic_shows_its_own_signature_arch_summary_and_pitfalls() {
    check_hover(
        r#"
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor$0_sync(0xffffffffu, v, o);
    return v;
}
"#,
        expect![[r#"
            symbol `__shfl_xor_sync` at `__shfl_xor_sync`
            ---
            `__shfl_xor_sync` · Warp shuffle intrinsics · `api-warp-shuffle`

            ```cuda
            T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize);
            ```

            header: `built-in` · requires sm_30; target sm_90 has it

            Reads a register of another lane in the same warp, without shared memory.

            **Pitfalls**
            - `pitfall-warp-primitives#P1`: Full mask when not every lane arrives
        "#]],
    );
}

#[test]
fn builtin_macro_syncthreads() {
    check_hover(
        r#"
__global__ void k() {
    __syncthreads$0();
}
"#,
        expect![[r#"
            symbol `__syncthreads` at `__syncthreads`
            ---
            `__syncthreads` · Block-wide barriers · `api-block-sync`

            ```cuda
            void __syncthreads();
            ```

            header: `built-in` · requires sm_20; target sm_90 has it

            Waits until every thread of the block reaches the barrier.
        "#]],
    );
}

#[test]
fn fp16_intrinsic_with_measured_figures() {
    check_hover(
        r#"
#include <cuda_fp16.h>
__device__ __half2 f(__half2 a, __half2 b, __half2 c) { return __hf$0ma2(a, b, c); }
"#,
        expect![[r#"
            symbol `__hfma2` at `__hfma2`
            ---
            `__hfma2` · Half-precision arithmetic · `api-fp16-arithmetic`

            ```cuda
            __half2 __hfma2(const __half2 a, const __half2 b, const __half2 c);
            ```

            header: `cuda_fp16.h` · requires sm_53; target sm_90 has it

            Fused multiply-add on both halves of a `__half2`, rounded to nearest even once.

            **Measured** (NVIDIA H200 (CC 9.0)): On an H200 one `HFMA2` retires two fp16 FMAs per lane per cycle: 2x the fp32 rate.
        "#]],
    );
}

#[test]
fn too_old_target_is_said_plainly() {
    check_hover(
        r#"
//- /old.cu arch:sm_50
__device__ __half2 f(__half2 a, __half2 b, __half2 c) { return __hfma2$0(a, b, c); }
"#,
        expect![[r#"
            symbol `__hfma2` at `__hfma2`
            ---
            `__hfma2` · Half-precision arithmetic · `api-fp16-arithmetic`

            ```cuda
            __half2 __hfma2(const __half2 a, const __half2 b, const __half2 c);
            ```

            header: `cuda_fp16.h` · **requires sm_53, target is sm_50**: not available on the target

            Fused multiply-add on both halves of a `__half2`, rounded to nearest even once.

            **Measured** (NVIDIA H200 (CC 9.0)): On an H200 one `HFMA2` retires two fp16 FMAs per lane per cycle: 2x the fp32 rate.
        "#]],
    );
}

// Library and member calls.

#[test]
fn library_call_through_namespace() {
    check_hover(
        r#"
#include <cuda/pipeline>
__global__ void k(float* dst, const float* src) {
    auto pipe = cuda::make_pipeline();
    cuda::memcpy$0_async(dst, src, 16, pipe);
}
"#,
        expect![[r#"
            symbol `cuda::memcpy_async` at `cuda::memcpy_async`
            ---
            `cuda::memcpy_async` · cuda::memcpy_async and cuda::pipeline · `api-cuda-memcpy-async-pipeline`

            ```cuda
            void cuda::memcpy_async(void* dst, const void* src, Shape size, cuda::pipeline<Scope>& pipe);
            ```

            header: `cuda/pipeline` · requires sm_70; target sm_90 has it

            Copies from global to shared memory asynchronously; the pipeline orders the stages.

            **Pitfalls**
            - `pitfall-async-copy#P1`: Reading the tile before the wait
            - `pitfall-async-copy#P9`
        "#]],
    );
}

#[test]
fn member_call_resolved_through_the_receiver_type() {
    check_hover(
        r#"
#include <cuda/pipeline>
__global__ void k() {
    auto pipe = cuda::make_pipeline();
    pipe.producer_co$0mmit();
}
"#,
        expect![[r#"
            symbol `cuda::pipeline::producer_commit` at `pipe.producer_commit`
            ---
            `pipe.producer_commit` → `cuda::pipeline::producer_commit` · cuda::memcpy_async and cuda::pipeline · `api-cuda-memcpy-async-pipeline`

            ```cuda
            void cuda::pipeline<Scope>::producer_commit();
            ```

            header: `cuda/pipeline` · requires sm_70; target sm_90 has it

            Copies from global to shared memory asynchronously; the pipeline orders the stages.

            **Pitfalls**
            - `pitfall-async-copy#P1`: Reading the tile before the wait
            - `pitfall-async-copy#P9`
        "#]],
    );
}

#[test]
fn template_function_with_arguments() {
    check_hover(
        r#"
#include <cuda/pipeline>
template <int N>
__global__ void k() {
    auto pipe = cuda::make_pipeline();
    cuda::pipeline_consumer_wait_prior$0<N - 1>(pipe);
}
"#,
        expect![[r#"
            symbol `cuda::pipeline_consumer_wait_prior` at `cuda::pipeline_consumer_wait_prior`
            ---
            `cuda::pipeline_consumer_wait_prior` · cuda::memcpy_async and cuda::pipeline · `api-cuda-memcpy-async-pipeline`

            ```cuda
            template <uint8_t Prior> void cuda::pipeline_consumer_wait_prior(cuda::pipeline<cuda::thread_scope_thread>& pipe);
            ```

            header: `cuda/pipeline` · requires sm_70; target sm_90 has it

            Copies from global to shared memory asynchronously; the pipeline orders the stages.

            **Pitfalls**
            - `pitfall-async-copy#P1`: Reading the tile before the wait
            - `pitfall-async-copy#P9`
        "#]],
    );
}

// Cooperative groups.

#[test]
fn cooperative_groups_member_sync_through_alias() {
    check_hover(
        r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k() {
    cg::thread_block block = cg::this_thread_block();
    block.sy$0nc();
}
"#,
        expect![[r#"
            symbol `cooperative_groups::thread_block::sync` at `block.sync`
            ---
            `block.sync` → `cooperative_groups::thread_block::sync` · Cooperative groups thread_block · `api-cg-groups`

            ```cuda
            void thread_block::sync() const;
            ```

            header: `cooperative_groups.h` · requires sm_50; target sm_90 has it

            The block as a group object; `sync()` is `__syncthreads()`.
        "#]],
    );
}

#[test]
fn cooperative_groups_tiled_partition() {
    check_hover(
        r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k() {
    auto tile = cg::tiled_part$0ition<32>(cg::this_thread_block());
}
"#,
        expect![[r#"
            symbol `cooperative_groups::tiled_partition` at `cg::tiled_partition`
            ---
            `cg::tiled_partition` → `cooperative_groups::tiled_partition` · Cooperative groups thread_block · `api-cg-groups`

            ```cuda
            template <unsigned Size> thread_block_tile<Size> cooperative_groups::tiled_partition(const thread_block& parent);
            ```

            header: `cooperative_groups.h` · requires sm_50; target sm_90 has it

            The block as a group object; `sync()` is `__syncthreads()`.
        "#]],
    );
}

// PTX in asm strings.

#[test]
fn ptx_mnemonic_in_asm_string() {
    check_hover(
        r#"
__device__ void wait() {
    asm volatile("cp.async.wait_$0group %0;\n" :: "n"(0));
}
"#,
        expect![[r#"
            symbol `cp.async.wait_group` at `cp.async.wait_group`
            ---
            `cp.async.wait_group` · PTX cp.async · `api-ptx-cp-async`

            ```ptx
            cp.async.wait_group N;
            ```

            header: `ptx` · requires sm_80; target sm_90 has it

            Starts a copy from global to shared memory that does not block the thread.

            **Pitfalls**
            - `pitfall-async-copy#P1`: Reading the tile before the wait
        "#]],
    );
}

#[test]
fn ptx_with_modifiers_in_a_multiline_asm() {
    check_hover(
        r#"
//- /copy.cu arch:sm_75
__device__ void copy(unsigned dst, const void* src) {
    asm volatile(
        "cp.async.cg.shared.global [%0], [%1], 16;\n"
        "cp.async.com$0mit_group;\n"
        :: "r"(dst), "l"(src));
}
"#,
        expect![[r#"
            symbol `cp.async.commit_group` at `cp.async.commit_group`
            ---
            `cp.async.commit_group` · PTX cp.async · `api-ptx-cp-async`

            ```ptx
            cp.async.commit_group;
            ```

            header: `ptx` · **requires sm_80, target is sm_75**: not available on the target

            Starts a copy from global to shared memory that does not block the thread.

            **Pitfalls**
            - `pitfall-async-copy#P1`: Reading the tile before the wait
        "#]],
    );
}

#[test]
fn ptx_symbol_with_its_own_minimum_architecture() {
    check_hover(
        r#"
//- /bar.cu arch:sm_60
__device__ void b() { asm volatile("barrier.sy$0nc 0;"); }
"#,
        expect![[r#"
            symbol `barrier.sync` at `barrier.sync`
            ---
            `barrier.sync` · Block-wide barriers · `api-block-sync`

            ```ptx
            barrier.sync{.aligned} a{, b};
            ```

            header: `built-in` · **requires sm_70, target is sm_60**: not available on the target

            Waits until every thread of the block reaches the barrier.
        "#]],
    );
}

// wmma.

#[test]
fn wmma_through_using_namespace() {
    check_hover(
        r#"
#include <mma.h>
using namespace nvcuda;
__global__ void k(const half* a, const half* b, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::mma_$0sync(fc, fa, fb, fc);
}
"#,
        expect![[r#"
            symbol `wmma::mma_sync` at `wmma::mma_sync`
            ---
            `wmma::mma_sync` (wiki: `nvcuda::wmma::mma_sync`) · Warp matrix functions (wmma) · `api-wmma`

            ```cuda
            void mma_sync(fragment<accumulator, m, n, k, Tc>& d, const fragment<matrix_a, m, n, k, Ta, La>& a, const fragment<matrix_b, m, n, k, Tb, Lb>& b, const fragment<accumulator, m, n, k, Tc>& c);
            ```

            header: `mma.h` · requires sm_70; target sm_90 has it

            A warp-wide matrix multiply-accumulate on tensor cores.

            See also: `skill-tensor-cores` (Tensor cores)
        "#]],
    );
}

// Kernels.

#[test]
fn kernel_with_launch_bounds_and_a_launch() {
    check_hover(
        r#"
#define TILE 32
__global__ void __launch_bounds__(256, 2) trans$0pose(float* out, const float* in) {
    __shared__ float tile[TILE][TILE + 1];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    out[0] = tile[threadIdx.x][threadIdx.y];
}
void run(float* out, const float* in, int n) {
    dim3 block(32, 8);
    transpose<<<dim3(n / 32, n / 32), block>>>(out, in);
}
"#,
        expect![[r#"
            kernel `transpose` at `transpose`
            ---
            **kernel** `transpose`

            ```cuda
            __global__ void transpose(float* out, const float* in)
            ```

            `__launch_bounds__(256, 2)`: at most 256 threads per block and at least 2 blocks per SM, so the compiler keeps to at most 128 registers per thread on sm_90.

            Launch sites (1):
            - line 9: `transpose<<<dim3(n / 32, n / 32), block>>>`: block 32×8×1 = 256 threads

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 32×8×1 = 256 threads (from the launch at line 9), 32 registers per thread (assumed: a typical count, not measured), 4224 B static + 0 B dynamic shared memory.

            8 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers.

            Registers: 32 per thread is an assumption, a typical count (`__launch_bounds__` allows up to 128); set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

#[test]
fn kernel_without_a_launch_uses_the_default_block() {
    check_hover(
        r#"
//- /k.cu block:128
__global__ void sc$0ale(float* x, float a) { x[threadIdx.x] *= a; }
"#,
        expect![[r#"
            kernel `scale` at `scale`
            ---
            **kernel** `scale`

            ```cuda
            __global__ void scale(float* x, float a)
            ```

            No `__launch_bounds__`.

            No launch site in the open files.

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 128×1×1 = 128 threads (the configured default; no launch was found), 32 registers per thread (assumed: a typical count, not measured), 0 B static + 0 B dynamic shared memory.

            16 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers.

            Registers: 32 per thread is an assumption, a typical count; set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

#[test]
fn kernel_hovered_at_a_launch_in_another_file() {
    check_hover(
        r#"
//- /kernels.cuh
template <typename T, int BLOCK = 128>
__global__ void reduce(const T* in, T* out) {
    extern __shared__ char smem[];
    out[0] = in[threadIdx.x];
}
//- /main.cu
void run(const float* in, float* out) {
    red$0uce<float, 128><<<64, 128, 128 * sizeof(float)>>>(in, out);
}
"#,
        expect![[r#"
            kernel `reduce` at `reduce`
            ---
            **kernel** `reduce`

            ```cuda
            template <typename T, int BLOCK = 128> __global__ void reduce(const T* in, T* out)
            ```

            No `__launch_bounds__`.

            Launch sites (1):
            - line 2: `reduce<<<64, 128, 128 * sizeof(float)>>>`: block 128×1×1 = 128 threads

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 128×1×1 = 128 threads (from the launch at line 2), 32 registers per thread (assumed: a typical count, not measured), 0 B static + 512 B dynamic shared memory.

            16 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers.

            The template parameter `BLOCK` is unbound (no launch in the file instantiates `reduce`); the default `BLOCK = 128` assumed.

            Registers: 32 per thread is an assumption, a typical count; set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

#[test]
fn kernel_launched_past_its_launch_bounds() {
    check_hover(
        r#"
__global__ void __launch_bounds__(128) k$0(float* x) { x[threadIdx.x] = 0; }
void run(float* x) { k<<<1, 256>>>(x); }
"#,
        expect![[r#"
            kernel `k` at `k`
            ---
            **kernel** `k`

            ```cuda
            __global__ void k(float* x)
            ```

            `__launch_bounds__(128)`: at most 128 threads per block and at least 1 block per SM, so the compiler keeps to at most 248 registers per thread on sm_90.

            Launch sites (1):
            - line 2: `k<<<1, 256>>>`: block 256×1×1 = 256 threads

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 256×1×1 = 256 threads (from the launch at line 2), 32 registers per thread (assumed: a typical count, not measured), 0 B static + 0 B dynamic shared memory.

            The configuration cannot launch: 256 threads per block is over the kernel's `__launch_bounds__` of 128; the launch would fail.

            Registers: 32 per thread is an assumption, a typical count (`__launch_bounds__` allows up to 248); set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

// __shared__ declarations.

#[test]
fn shared_declaration_bytes_and_occupancy() {
    check_hover(
        r#"
#define TILE_DIM 32
__global__ void k(float* out) {
    __shared__ float ti$0le[TILE_DIM][TILE_DIM + 1];
    out[0] = tile[0][threadIdx.x];
}
"#,
        expect![[r#"
            shared-declaration `tile` at `tile`
            ---
            `__shared__ float tile[TILE_DIM][TILE_DIM + 1]` in `k`

            32 × 33 × 4 B = **4224 bytes** (4.1 KiB).

            **Occupancy on sm_90** at 256×1×1 = 256 threads (the configured default; no launch was found); 228 KiB of shared memory per SM, 1024 B reserved per block:
            - this buffer alone allows 32 blocks/SM (the per-SM block limit; shared memory alone would fit 44)
            - with all 4224 B of `k`'s shared memory: 32 blocks/SM (the per-SM block limit; shared memory alone would fit 44)
            - warps allow 8 blocks/SM at this block size, so shared memory is not the limit
        "#]],
    );
}

#[test]
fn large_shared_declaration_limits_occupancy() {
    check_hover(
        r#"
//- /big.cu block:128
__global__ void k(float* out) {
    $0__shared__ double buf[4096];
    __shared__ float other[1024];
    out[0] = buf[threadIdx.x] + other[threadIdx.x];
}
"#,
        expect![[r#"
            shared-declaration `buf` at `buf`
            ---
            `__shared__ double buf[4096]` in `k`

            4096 × 8 B = **32768 bytes** (32.0 KiB).

            **Occupancy on sm_90** at 128×1×1 = 128 threads (the configured default; no launch was found); 228 KiB of shared memory per SM, 1024 B reserved per block:
            - this buffer alone allows 6 blocks/SM
            - with all 36864 B of `k`'s shared memory: 6 blocks/SM
            - warps allow 16 blocks/SM at this block size, so shared memory is the limit
        "#]],
    );
}

#[test]
fn extern_shared_sized_at_the_launch() {
    check_hover(
        r#"
__global__ void k(float* out) {
    extern __shared__ float dyn$0[];
    out[0] = dyn[threadIdx.x];
}
void run(float* out) { k<<<8, 256, 256 * sizeof(float)>>>(out); }
"#,
        expect![[r#"
            shared-declaration `dyn` at `dyn`
            ---
            `extern __shared__ float dyn[]` in `k`

            Dynamic shared memory of `float` (4 B each), sized at launch: 1024 B at the launch found.

            **Occupancy on sm_90** at 256×1×1 = 256 threads (from the launch at line 5); 228 KiB of shared memory per SM, 1024 B reserved per block:
            - this buffer alone allows 32 blocks/SM (the per-SM block limit; shared memory alone would fit 114)
            - with all 1024 B of `k`'s shared memory: 32 blocks/SM (the per-SM block limit; shared memory alone would fit 114)
            - warps allow 8 blocks/SM at this block size, so shared memory is not the limit
        "#]],
    );
}

// __shared__ accesses.

#[test]
fn access_in_the_launched_instantiation() {
    check_hover(
        r#"
//- /t.cu
template <int OFFSET = 0>
__global__ void k(float* out) {
    __shared__ float tile[32][32 + OFFSET];
    out[threadIdx.x] = tile[threadIdx.x][0$0];
}
void launch(float* out) { k<1><<<1, 32>>>(out); }
"#,
        expect![[r#"
            shared-access `tile[threadIdx.x][0]` at `tile[threadIdx.x][0]`
            ---
            **shared load** `tile[threadIdx.x][0]` · 4 B per lane · warp 0 of a 32×1×1 block (from the launch at line 6)

            In the instantiation the file launches: `OFFSET = 1`. There `tile` is 32 × 33 × 4 B = 4224 bytes.

            Byte offset: `threadIdx.x * 33 * 4`

            **conflict-free**: 1 wavefront per request (32 active lanes, 32 distinct words).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            ```
        "#]],
    );
}

#[test]
fn template_defaults_assumed_without_a_launch() {
    check_hover(
        r#"
//- /t.cu
template <int OFFSET = 0>
__global__ void k(float* out) {
    __shared__ float tile[32][32 + OFFSET];
    out[threadIdx.x] = tile[threadIdx.x][0$0];
}
"#,
        expect![[r#"
            shared-access `tile[threadIdx.x][0]` at `tile[threadIdx.x][0]`
            ---
            **hint** `bank-conflict`: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (with the template defaults `OFFSET = 0`: no launch in the file instantiates `k`) (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block); the lanes' stride comes from `threadIdx.x` in the row index (a hint only: no code this file compiles launches or instantiates the template `k`, and nvcc emits code for a kernel template only where it is instantiated)

            Fix: Pad the rows of `tile` to 33 elements (128 more bytes)

            Wiki: `pitfall-bank-conflict#P1`

            ---

            **shared load** `tile[threadIdx.x][0]` · 4 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Template defaults assumed: `OFFSET = 0` (no launch in the file instantiates the kernel).

            Byte offset: `threadIdx.x * 32 * 4`

            **32-way bank conflict**: 32 wavefronts per request (32 active lanes, 32 distinct words).

            The lanes' stride comes from `threadIdx.x` in the row index (line 4).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words  32  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            ```
        "#]],
    );
}

#[test]
fn store_through_a_vector_macro() {
    check_hover(
        r#"
//- /t.cu
#define FLOAT4(v) (reinterpret_cast<float4 *>(&(v))[0])
__global__ void k(const float* in) {
    __shared__ float s[1024];
    FLOAT4(s[4 * threadIdx.x$0]) = FLOAT4(in[4 * threadIdx.x]);
}
void launch(const float* in) { k<<<1, 128>>>(in); }
"#,
        expect![[r#"
            shared-access `s[4 * threadIdx.x]` at `s[4 * threadIdx.x]`
            ---
            **shared store** `s[4 * threadIdx.x]` · 16 B per lane · warp 0 of a 128×1×1 block (from the launch at line 6)

            Byte offset: `4 * threadIdx.x * 4`

            **conflict-free**: 4 wavefronts per request (32 active lanes, 128 distinct words, resolved in groups of 8 lanes); 4 is the minimum for 16-byte accesses.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   4  4  4  4  4  4  4  4  4  4  4  4  4  4  4  4
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   4  4  4  4  4  4  4  4  4  4  4  4  4  4  4  4
            ```
        "#]],
    );
}

#[test]
fn naive_transpose_column_read_is_a_32_way_conflict() {
    check_hover(
        r#"
//- /t.cu block:32x8
__global__ void k(float* out) {
    __shared__ float tile[32][32];
    out[0] = tile[threadIdx.x][threadIdx.y$0];
}
"#,
        expect![[r#"
            shared-access `tile[threadIdx.x][threadIdx.y]` at `tile[threadIdx.x][threadIdx.y]`
            ---
            **warning** `bank-conflict`: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block; with a 4×8×1 block, whose warps span rows, it is 4-way); the lanes' stride comes from `threadIdx.x` in the row index

            Fix: Pad the rows of `tile` to 33 elements (128 more bytes)

            Wiki: `pitfall-bank-conflict#P1`

            ---

            **shared load** `tile[threadIdx.x][threadIdx.y]` · 4 B per lane · warp 0 of a 32×8×1 block (the configured default; no launch was found)

            Byte offset: `(threadIdx.x * 32 + threadIdx.y) * 4`

            **32-way bank conflict**: 32 wavefronts per request (32 active lanes, 32 distinct words).

            The lanes' stride comes from `threadIdx.x` in the row index (line 3).

            The block is not certain (no launch of the kernel was found): 32-way with the block assumed; 16-way at 16×2×1, 8-way at 8×4×1, 4-way at 4×8×1.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words  32  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            ```
        "#]],
    );
}

#[test]
fn padded_transpose_column_read_is_conflict_free() {
    check_hover(
        r#"
//- /t.cu block:32x8
__global__ void k(float* out) {
    __shared__ float tile[32][33];
    out[0] = ti$0le[threadIdx.x][threadIdx.y];
}
"#,
        expect![[r#"
            shared-access `tile[threadIdx.x][threadIdx.y]` at `tile[threadIdx.x][threadIdx.y]`
            ---
            **shared load** `tile[threadIdx.x][threadIdx.y]` · 4 B per lane · warp 0 of a 32×8×1 block (the configured default; no launch was found)

            Byte offset: `(threadIdx.x * 33 + threadIdx.y) * 4`

            **conflict-free**: 1 wavefront per request (32 active lanes, 32 distinct words).

            The block is not certain (no launch of the kernel was found): conflict-free with the block assumed; 2-way at 16×2×1, 4-way at 8×4×1, 4-way at 4×8×1.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            ```
        "#]],
    );
}

#[test]
fn loop_variable_is_held_at_its_start() {
    check_hover(
        r#"
//- /gemm.cu block:16x16
#define TILE 16
__global__ void gemm(float* c) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0;
    for (int k = 0; k < TILE; ++k)
        acc += As[ty][k] * B$0s[k][tx];
    c[0] = acc;
}
"#,
        expect![[r#"
            shared-access `Bs[k][tx]` at `Bs[k][tx]`
            ---
            **shared load** `Bs[k][tx]` · 4 B per lane · warp 0 of a 16×16×1 block (the configured default; no launch was found)

            Byte offset: `(0 * 16 + threadIdx.x) * 4`

            Loop variable `k` held at its start value `0` (the first iteration).

            **conflict-free**: 1 wavefront per request (32 active lanes, 16 distinct words).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            ```
        "#]],
    );
}

#[test]
fn vectorised_float4_access() {
    check_hover(
        r#"
__global__ void k(float4* out) {
    __shared__ float buf[1024];
    out[0] = reinterpret_cast<float4*>(&buf[threadIdx.x * 4])$0[0];
}
"#,
        expect![[r#"
            shared-access `reinterpret_cast<float4*>(&buf[threadIdx.x * 4])[0]` at `reinterpret_cast<float4*>(&buf[threadIdx.x * 4])[0]`
            ---
            **shared load** `reinterpret_cast<float4*>(&buf[threadIdx.x * 4])[0]` · 16 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `threadIdx.x * 4 * 4`

            **conflict-free**: 4 wavefronts per request (32 active lanes, 128 distinct words, resolved in groups of 8 lanes); 4 is the minimum for 16-byte accesses.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   4  4  4  4  4  4  4  4  4  4  4  4  4  4  4  4
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   4  4  4  4  4  4  4  4  4  4  4  4  4  4  4  4
            ```
        "#]],
    );
}

#[test]
fn data_dependent_index_cannot_be_modelled() {
    check_hover(
        r#"
__global__ void k(const int* idx, float* out) {
    __shared__ float buf[256];
    out[0] = buf[idx[threadIdx.x]$0];
}
"#,
        expect![[r#"
            shared-access `buf[idx[threadIdx.x]]` at `buf[idx[threadIdx.x]]`
            ---
            **shared load** `buf[idx[threadIdx.x]]` · 4 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            **Cannot be modelled**: `idx[threadIdx.x]` is loaded from memory.
        "#]],
    );
}

#[test]
fn a_guard_on_loaded_data_is_said_to_be_assumed() {
    check_hover(
        r#"
__global__ void k(const int* n, float* out) {
    __shared__ float acc[128 * 4];
    int c = n[threadIdx.x];
    if (c) acc[threadIdx.x * 4$0] = 1.0f;
}
void run(const int* n, float* out) { k<<<1, 128>>>(n, out); }
"#,
        expect![[r#"
            shared-access `acc[threadIdx.x * 4]` at `acc[threadIdx.x * 4]`
            ---
            **hint** `bank-conflict`: 4-way bank conflict: this store to `acc` takes 4 wavefronts instead of 1, because lanes of a warp hit 4 different words of one bank (a hint only: assuming every lane of the warp passes `c`, which depends on data loaded at run time); the lanes' stride comes from `threadIdx.x * 4`

            Wiki: `pitfall-bank-conflict#P1`

            ---

            **shared store** `acc[threadIdx.x * 4]` · 4 B per lane · warp 0 of a 128×1×1 block (from the launch at line 6)

            Byte offset: `threadIdx.x * 4 * 4`

            **4-way bank conflict**: 4 wavefronts per request (32 active lanes, 32 distinct words).

            The lanes' stride comes from `threadIdx.x * 4` (line 4).

            Only the lanes for which `c` holds run this access, and which ones depends on data loaded at run time: the full warp modelled here is an assumption, so the `bank-conflict` rule gives at most a hint.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   4  .  .  .  4  .  .  .  4  .  .  .  4  .  .  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   4  .  .  .  4  .  .  .  4  .  .  .  4  .  .  .
            ```
        "#]],
    );
}

#[test]
fn stride_from_a_parameter_changes_the_answer() {
    check_hover(
        r#"
__global__ void k(float* out, int stride) {
    __shared__ float buf[4096];
    out[0] = buf[threadIdx.x * stri$0de];
}
"#,
        expect![[r#"
            shared-access `buf[threadIdx.x * stride]` at `buf[threadIdx.x * stride]`
            ---
            **shared load** `buf[threadIdx.x * stride]` · 4 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `threadIdx.x * stride * 4`

            **Cannot be modelled**: the conflicts depend on `stride`, which every lane shares but the file does not fix (1-way at 0, 2-way at 2).
        "#]],
    );
}

#[test]
fn block_offset_does_not_change_the_answer() {
    check_hover(
        r#"
__global__ void k(float* out) {
    __shared__ float buf[4096];
    out[0] = buf[blockIdx.x * 32 + threadIdx.x$0];
}
"#,
        expect![[r#"
            shared-access `buf[blockIdx.x * 32 + threadIdx.x]` at `buf[blockIdx.x * 32 + threadIdx.x]`
            ---
            **shared load** `buf[blockIdx.x * 32 + threadIdx.x]` · 4 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `(blockIdx.x * 32 + threadIdx.x) * 4`

            `blockIdx.x` is the same for every lane; the result does not depend on its value.

            **conflict-free**: 1 wavefront per request (32 active lanes, 32 distinct words).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            ```
        "#]],
    );
}

// Nothing to say, and broken code.

#[test]
fn whitespace_and_comments_have_no_hover() {
    check_hover(
        r#"
__global__ void k() {
  $0  // a comment
}
"#,
        expect![[r#"
            no hover
        "#]],
    );
}

#[test]
fn broken_code_still_hovers_the_parts_that_parse() {
    check_hover(
        r#"
__global__ void k(float* x {
    x[0] = 1.0f +;
    __syncthre$0ads();
    for (int i = 0; i <
}
"#,
        expect![[r#"
            symbol `__syncthreads` at `__syncthreads`
            ---
            `__syncthreads` · Block-wide barriers · `api-block-sync`

            ```cuda
            void __syncthreads();
            ```

            header: `built-in` · requires sm_20; target sm_90 has it

            Waits until every thread of the block reaches the barrier.
        "#]],
    );
}

// The code's own names.

#[test]
fn device_function_of_the_file() {
    check_hover(
        r#"
template <typename T>
__device__ __forceinline__ T warp_sum(T v) { return v; }
__global__ void k(float* o) { o[0] = warp_s$0um(o[1]); }
"#,
        expect![[r#"
            device-function `warp_sum` at `warp_sum`
            ---
            **device function** `warp_sum`

            ```cuda
            template <typename T> __device__ __forceinline__ T warp_sum(T v)
            ```

            Defined at line 2; the wiki has no entry for it.
        "#]],
    );
}

#[test]
fn constant_folded_from_defines() {
    check_hover(
        r#"
#define TILE_DIM 32
#define PAD (TILE_DIM + 1)
__global__ void k(float* o) {
    __shared__ float t[TILE_DIM][P$0AD];
    o[0] = t[0][threadIdx.x];
}
"#,
        expect![[r#"
            constant `PAD` at `PAD`
            ---
            `PAD` = **33**

            ```cuda
            #define PAD (TILE_DIM + 1)
            ```
        "#]],
    );
}

#[test]
fn pointer_carved_from_dynamic_shared_memory() {
    check_hover(
        r#"
//- /carve.cu block:128
__global__ void k(float* o) {
    extern __shared__ char smem[];
    float* a = reinterpret_cast<float*>(smem);
    float* b = reinterpret_cast<float*>(smem + 128 * sizeof(float));
    o[0] = b$0[threadIdx.x * 2] + a[threadIdx.x];
}
"#,
        expect![[r#"
            shared-access `b[threadIdx.x * 2]` at `b[threadIdx.x * 2]`
            ---
            **hint** `bank-conflict`: 2-way bank conflict: this load from `b` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block); the lanes' stride comes from `threadIdx.x * 2`

            Wiki: `pitfall-bank-conflict#P5`

            ---

            **shared load** `b[threadIdx.x * 2]` · 4 B per lane · warp 0 of a 128×1×1 block (the configured default; no launch was found)

            Byte offset: `512 + threadIdx.x * 2 * 4`

            **2-way bank conflict**: 2 wavefronts per request (32 active lanes, 32 distinct words).

            The lanes' stride comes from `threadIdx.x * 2` (line 5).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   2  .  2  .  2  .  2  .  2  .  2  .  2  .  2  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   2  .  2  .  2  .  2  .  2  .  2  .  2  .  2  .
            ```
        "#]],
    );
}

#[test]
fn double_elements_read_by_consecutive_lanes() {
    check_hover(
        r#"
__global__ void k(double* o) {
    __shared__ double d[512];
    o[threadIdx.x] = d[threadIdx.x$0];
}
"#,
        expect![[r#"
            shared-access `d[threadIdx.x]` at `d[threadIdx.x]`
            ---
            **shared load** `d[threadIdx.x]` · 8 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `threadIdx.x * 8`

            **conflict-free**: 2 wavefronts per request (32 active lanes, 64 distinct words, resolved in groups of 16 lanes); 2 is the minimum for 8-byte accesses.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   2  2  2  2  2  2  2  2  2  2  2  2  2  2  2  2
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   2  2  2  2  2  2  2  2  2  2  2  2  2  2  2  2
            ```
        "#]],
    );
}

// The rules' findings come first on a flagged line.

#[test]
fn finding_first_on_a_flagged_line() {
    check_hover(
        r#"
#include <cuda_pipeline.h>
__global__ void k(const float* g, float* out, int n) {
    __shared__ float buf[2][256];
    __pipeline_memcpy_async(&buf[0][threadIdx.x], &g[threadIdx.x], 4);
    __pipeline_commit();
    for (int t = 0; t < n; ++t) {
        __pipeline_memcpy_async(&buf[(t + 1) & 1][threadIdx.x], &g[(t + 1) * 256 + threadIdx.x], 4);
        __pipeline_commit();
        __pipeline_wait$0_prior(0);
        __syncthreads();
        out[t * 256 + threadIdx.x] = buf[t & 1][threadIdx.x];
        __syncthreads();
    }
}
"#,
        expect![[r#"
            finding `async-copy/wait-all-in-pipelined-loop` at `__pipeline_wait_prior(0)`
            ---
            **warning** `async-copy/wait-all-in-pipelined-loop`: `__pipeline_wait_prior(0)` waits for every copy, including the next tile's group committed earlier in this iteration, so the prefetch no longer overlaps the compute; leave 1 group pending

            Fix: Wait for all but the 1 most recent group (stages - 1)

            Wiki: `pitfall-async-copy#P8`
        "#]],
    );
}

#[test]
fn no_finding_on_the_line_after() {
    check_hover(
        r#"
#include <cuda_pipeline.h>
__global__ void k(const float* g, float* out, int n) {
    __shared__ float buf[2][256];
    __pipeline_memcpy_async(&buf[0][threadIdx.x], &g[threadIdx.x], 4);
    __pipeline_commit();
    for (int t = 0; t < n; ++t) {
        __pipeline_memcpy_async(&buf[(t + 1) & 1][threadIdx.x], &g[(t + 1) * 256 + threadIdx.x], 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncth$0reads();
        out[t * 256 + threadIdx.x] = buf[t & 1][threadIdx.x];
        __syncthreads();
    }
}
"#,
        expect![[r#"
            symbol `__syncthreads` at `__syncthreads`
            ---
            `__syncthreads` · Block-wide barriers · `api-block-sync`

            ```cuda
            void __syncthreads();
            ```

            header: `built-in` · requires sm_20; target sm_90 has it

            Waits until every thread of the block reaches the barrier.
        "#]],
    );
}

// Names of the user's own are not library symbols.

#[test]
fn local_named_like_a_fragment_member_is_not_the_member() {
    check_hover(
        r#"
#include <mma.h>
__device__ float f(float* p) {
    int x$0 = 3;
    return p[x];
}
"#,
        expect![[r#"
            no hover
        "#]],
    );
}

#[test]
fn fragment_member_through_a_fragment_is_the_member() {
    check_hover(
        r#"
#include <mma.h>
using namespace nvcuda;
__device__ void f(float* p) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    for (int i = 0; i < acc.num_elements; ++i) acc.x$0[i] = p[i];
}
"#,
        expect![[r#"
            symbol `wmma::fragment::x` at `acc.x`
            ---
            `acc.x` → `wmma::fragment::x` (wiki: `nvcuda::wmma::fragment::x`) · Warp matrix functions (wmma) · `api-wmma`

            ```cuda
            element_type fragment::x[num_elements];
            ```

            header: `mma.h` · requires sm_70; target sm_90 has it

            A warp-wide matrix multiply-accumulate on tensor cores.
        "#]],
    );
}

#[test]
fn field_of_the_users_own_type_is_not_the_member() {
    check_hover(
        r#"
struct Point { float x, y; };
__device__ float f(Point p) {
    return p.x$0 + p.y;
}
"#,
        expect![[r#"
            no hover
        "#]],
    );
}

#[test]
fn parameter_named_size_is_not_the_group_member() {
    check_hover(
        r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ float f(const float* p, int size) {
    float s = 0.f;
    for (int i = 0; i < si$0ze; ++i) s += p[i];
    return s;
}
"#,
        expect![[r#"
            no hover
        "#]],
    );
}

#[test]
fn size_through_a_thread_block_is_the_group_member() {
    check_hover(
        r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float* out) {
    cg::thread_block block = cg::this_thread_block();
    out[0] = block.si$0ze();
}
"#,
        expect![[r#"
            symbol `cooperative_groups::thread_block::size` at `block.size`
            ---
            `block.size` → `cooperative_groups::thread_block::size` · Cooperative groups thread_block · `api-cg-groups`

            ```cuda
            unsigned long long thread_block::size() const;
            ```

            header: `cooperative_groups.h` · requires sm_50; target sm_90 has it

            The block as a group object; `sync()` is `__syncthreads()`.
        "#]],
    );
}

// Registers: a typical count is assumed and said to be assumed; the user can set it.

#[test]
fn launch_bounds_alone_do_not_headline_the_register_maximum() {
    check_hover(
        r#"
__global__ void __launch_bounds__(256) sc$0ale(float* a) {
    a[threadIdx.x] *= 2.f;
}
"#,
        expect![[r#"
            kernel `scale` at `scale`
            ---
            **kernel** `scale`

            ```cuda
            __global__ void scale(float* a)
            ```

            `__launch_bounds__(256)`: at most 256 threads per block and at least 1 block per SM, so the compiler keeps to at most 248 registers per thread on sm_90.

            No launch site in the open files.

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 256×1×1 = 256 threads (the `__launch_bounds__` maximum; no launch with a known block was found), 32 registers per thread (assumed: a typical count, not measured), 0 B static + 0 B dynamic shared memory.

            8 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers.

            Registers: 32 per thread is an assumption, a typical count (`__launch_bounds__` allows up to 248); set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

#[test]
fn registers_set_by_a_comment_above_the_kernel() {
    check_hover(
        r#"
// kernaut: registers=128
__global__ void __launch_bounds__(256) sc$0ale(float* a) {
    a[threadIdx.x] *= 2.f;
}
"#,
        expect![[r#"
            kernel `scale` at `scale`
            ---
            **kernel** `scale`

            ```cuda
            __global__ void scale(float* a)
            ```

            `__launch_bounds__(256)`: at most 256 threads per block and at least 1 block per SM, so the compiler keeps to at most 248 registers per thread on sm_90.

            No launch site in the open files.

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 256×1×1 = 256 threads (the `__launch_bounds__` maximum; no launch with a known block was found), 128 registers per thread (assumed: the `kernaut: registers=` comment), 0 B static + 0 B dynamic shared memory.

            2 blocks/SM · 16 of 64 warps active (25%) · limited by registers.

            Registers: 128 per thread, as the `// kernaut: registers=` comment above the kernel sets (`__launch_bounds__` allows up to 248); ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

// One model: what the hover says where the rule is more careful, and merged accesses.

#[test]
fn unknown_block_shape_is_said_with_the_degrees_under_other_shapes() {
    // No launch and the kernel reads `threadIdx.y`: 8-way with the default 256×1×1 block,
    // but blocks with rows of 4 threads keep the accesses apart, so the `bank-conflict`
    // rule stays silent and the hover says why.
    check_hover(
        r#"
__global__ void k(float* out) {
    __shared__ float sub[32][8];
    out[0] = sub[threadIdx.x][threadIdx.y]$0;
}
"#,
        expect![[r#"
            shared-access `sub[threadIdx.x][threadIdx.y]` at `sub[threadIdx.x][threadIdx.y]`
            ---
            **shared load** `sub[threadIdx.x][threadIdx.y]` · 4 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `(threadIdx.x * 8 + threadIdx.y) * 4`

            **8-way bank conflict**: 8 wavefronts per request (32 active lanes, 32 distinct words).

            The lanes' stride comes from `threadIdx.x` in the row index (line 3).

            The block is not certain (no launch of the kernel was found): 8-way with the block assumed; 4-way at 16×2×1, 2-way at 8×4×1, conflict-free at 4×8×1. The `bank-conflict` rule reports a conflict only when it holds for every one of these blocks, so it does not report this access.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   8  .  .  .  .  .  .  .  8  .  .  .  .  .  .  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   8  .  .  .  .  .  .  .  8  .  .  .  .  .  .  .
            ```
        "#]],
    );
}

#[test]
fn adjacent_scalars_that_ptxas_merges_are_one_wide_access() {
    // `s[2 * t]` and `s[2 * t + 1]` become one `LDS.64` (nvcc 13.5, sm_90): the hover on
    // either shows the 8-byte access, conflict-free.
    check_hover(
        r#"
__global__ void k(float* out) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    float a = s[2 * t];
    float b = s[2 * t + 1]$0;
    out[t] = a + b;
}
"#,
        expect![[r#"
            shared-access `s[2 * t + 1]` at `s[2 * t + 1]`
            ---
            **shared load** `s[2 * t + 1]` · 8 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `threadIdx.x * 2 * 4`

            **conflict-free**: 2 wavefronts per request (32 active lanes, 64 distinct words, resolved in groups of 16 lanes); 2 is the minimum for 8-byte accesses.

            Modelled as one 8-byte access: ptxas merges the 2 adjacent 4-byte accesses of this thread to the array into one `LDS.64`.

            The `bank-conflict` rule reports the wide access once, at its first part (line 4), so it does not report this access.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   2  2  2  2  2  2  2  2  2  2  2  2  2  2  2  2
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   2  2  2  2  2  2  2  2  2  2  2  2  2  2  2  2
            ```
        "#]],
    );
}

#[test]
fn adjacent_scalars_through_an_unaligned_pointer_stay_scalar() {
    // Through `p = s + 1` the pair starts 4 bytes past an 8-byte boundary: ptxas keeps two
    // `LDS` (nvcc 13.5, sm_90: `LDS R6, [R4+0x4]`, `LDS R7, [R4+0x8]`), each 2-way.
    check_hover(
        r#"
__global__ void k(float* out) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    float* p = s + 1;
    float a = p[2 * t];
    float b = p[2 * t + 1]$0;
    out[t] = a + b;
}
"#,
        expect![[r#"
            shared-access `p[2 * t + 1]` at `p[2 * t + 1]`
            ---
            **hint** `bank-conflict`: 2-way bank conflict: this load from `p` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block); the lanes' stride comes from `2 * t`

            Wiki: `pitfall-bank-conflict#P5`

            ---

            **shared load** `p[2 * t + 1]` · 4 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `4 + (2 * threadIdx.x + 1) * 4`

            **2-way bank conflict**: 2 wavefronts per request (32 active lanes, 32 distinct words).

            The lanes' stride comes from `2 * t` (line 6).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   2  .  2  .  2  .  2  .  2  .  2  .  2  .  2  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   2  .  2  .  2  .  2  .  2  .  2  .  2  .  2  .
            ```
        "#]],
    );
}

#[test]
fn adjacent_half_stores_and_doubles_are_one_wide_access() {
    // nvcc 13.5, sm_90: two `__half` stores are one 32-bit `STS [R4], R6`; two doubles
    // one `LDS.128 R8, [R10]`.
    check_hover(
        r#"
#include <cuda_fp16.h>
__global__ void k(const __half* in) {
    __shared__ __half s[2048];
    int t = threadIdx.x;
    s[2 * t] = in[t];
    s[2 * t + 1]$0 = in[t + 1];
}
"#,
        expect![[r#"
            shared-access `s[2 * t + 1]` at `s[2 * t + 1]`
            ---
            **shared store** `s[2 * t + 1]` · 4 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `threadIdx.x * 2 * 2`

            **conflict-free**: 1 wavefront per request (32 active lanes, 32 distinct words).

            Modelled as one 4-byte access: ptxas merges the 2 adjacent 2-byte accesses of this thread to the array into one `STS`.

            The `bank-conflict` rule reports the wide access once, at its first part (line 5), so it does not report this access.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            ```
        "#]],
    );
    check_hover(
        r#"
__global__ void k(double* out) {
    __shared__ double s[1024];
    int t = threadIdx.x;
    double a = s[2 * t]$0;
    double b = s[2 * t + 1];
    out[t] = a + b;
}
"#,
        expect![[r#"
            shared-access `s[2 * t]` at `s[2 * t]`
            ---
            **shared load** `s[2 * t]` · 16 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `threadIdx.x * 2 * 8`

            **conflict-free**: 4 wavefronts per request (32 active lanes, 128 distinct words, resolved in groups of 8 lanes); 4 is the minimum for 16-byte accesses.

            Modelled as one 16-byte access: ptxas merges the 2 adjacent 8-byte accesses of this thread to the array into one `LDS.128`.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   4  4  4  4  4  4  4  4  4  4  4  4  4  4  4  4
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   4  4  4  4  4  4  4  4  4  4  4  4  4  4  4  4
            ```
        "#]],
    );
}

#[test]
fn adjacent_half_loads_stay_two_accesses() {
    // nvcc 13.5, sm_90: two `__half` loads of a default-aligned array stay
    // `LDS.U16 R6, [R4]` and `LDS.U16 R7, [R4+0x2]`.
    check_hover(
        r#"
#include <cuda_fp16.h>
__global__ void k(__half* out) {
    __shared__ __half s[2048];
    int t = threadIdx.x;
    __half a = s[2 * t]$0;
    __half b = s[2 * t + 1];
    out[t] = __hadd(a, b);
}
"#,
        expect![[r#"
            shared-access `s[2 * t]` at `s[2 * t]`
            ---
            **shared load** `s[2 * t]` · 2 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `2 * threadIdx.x * 2`

            **conflict-free**: 1 wavefront per request (32 active lanes, 32 distinct words).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            ```
        "#]],
    );
}

#[test]
fn pointer_at_an_unknown_uniform_offset_is_modelled_from_the_buffer() {
    // `p = s + off` with `off` a kernel parameter: the offset is a symbol every lane
    // shares; the pair stays two `LDS` (nvcc 13.5, sm_90: `LDS R4, [R0]`,
    // `LDS R5, [R0+0x4]`), each 2-way whatever `off` is.
    check_hover(
        r#"
__global__ void k(float* out, int off) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    float* p = s + off;
    float a = p[2 * t]$0;
    float b = p[2 * t + 1];
    out[t] = a + b;
}
"#,
        expect![[r#"
            shared-access `p[2 * t]` at `p[2 * t]`
            ---
            **hint** `bank-conflict`: 2-way bank conflict: this load from `p` takes 2 wavefronts instead of 1, because lanes of a warp hit 2 different words of one bank (assuming `threadIdx.x` runs over the warp, as for any `blockDim.x` that is a multiple of 32: no launch of `k` gives its block); the lanes' stride comes from `2 * t`

            Wiki: `pitfall-bank-conflict#P5`

            ---

            **shared load** `p[2 * t]` · 4 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `off * 4 + 2 * threadIdx.x * 4`

            `p` points into `s` at an offset the file does not fix (`float* p = s + off;`); it is modelled as a symbol.

            `off` is the same for every lane; the result does not depend on its value.

            **2-way bank conflict**: 2 wavefronts per request (32 active lanes, 32 distinct words).

            The lanes' stride comes from `2 * t` (line 5).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   2  .  2  .  2  .  2  .  2  .  2  .  2  .  2  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   2  .  2  .  2  .  2  .  2  .  2  .  2  .  2  .
            ```
        "#]],
    );
}

#[test]
fn pointer_at_an_aligned_computed_offset_still_merges() {
    // `off = blockIdx.x * 64` keeps the pair 8-byte aligned: one `LDS.64 R4, [R0]`
    // (nvcc 13.5, sm_90), conflict-free.
    check_hover(
        r#"
__global__ void k(float* out) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    int off = blockIdx.x * 64;
    float* p = s + off;
    float a = p[2 * t]$0;
    float b = p[2 * t + 1];
    out[t] = a + b;
}
"#,
        expect![[r#"
            shared-access `p[2 * t]` at `p[2 * t]`
            ---
            **shared load** `p[2 * t]` · 8 B per lane · warp 0 of a 256×1×1 block (the configured default; no launch was found)

            Byte offset: `blockIdx.x * 64 * 4 + threadIdx.x * 2 * 4`

            `p` points into `s` at an offset the file does not fix (`float* p = s + off;`); it is modelled as a symbol.

            `blockIdx.x` is the same for every lane; the result does not depend on its value.

            **conflict-free**: 2 wavefronts per request (32 active lanes, 64 distinct words, resolved in groups of 16 lanes); 2 is the minimum for 8-byte accesses.

            Modelled as one 8-byte access: ptxas merges the 2 adjacent 4-byte accesses of this thread to the array into one `LDS.64`.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   2  2  2  2  2  2  2  2  2  2  2  2  2  2  2  2
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   2  2  2  2  2  2  2  2  2  2  2  2  2  2  2  2
            ```
        "#]],
    );
}

// Template kernels: sizes, launch bounds and bank models in the instantiation launched.

#[test]
fn shared_declaration_in_a_launched_template_shows_the_bound_size() {
    check_hover(
        r#"
template <int BM, int BN>
__global__ void tk(const float* in, float* out) {
    __shared__ float t$0[BM][BN];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
void run(const float* in, float* out) {
    tk<32, 32><<<1, 64>>>(in, out);
}
"#,
        expect![[r#"
            shared-declaration `t` at `t`
            ---
            `__shared__ float t[BM][BN]` in `tk`

            32 × 32 × 4 B = **4096 bytes** (4.0 KiB).

            Template arguments: `BM = 32, BN = 32`, the instantiation the file launches.

            **Occupancy on sm_90** at 64×1×1 = 64 threads (from the launch at line 9); 228 KiB of shared memory per SM, 1024 B reserved per block:
            - this buffer alone allows 32 blocks/SM (the per-SM block limit; shared memory alone would fit 45)
            - with all 4096 B of `tk`'s shared memory: 32 blocks/SM (the per-SM block limit; shared memory alone would fit 45)
            - warps allow 32 blocks/SM at this block size, so shared memory is not the limit
        "#]],
    );
}

#[test]
fn shared_declaration_with_several_instantiations_names_each() {
    check_hover(
        r#"
template <int BM, int BN>
__global__ void tk(const float* in, float* out) {
    __shared__ float t$0[BM][BN];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
void run(const float* in, float* out) {
    tk<32, 32><<<1, 64>>>(in, out);
    tk<64, 128><<<1, 64>>>(in, out);
}
"#,
        expect![[r#"
            shared-declaration `t` at `t`
            ---
            `__shared__ float t[BM][BN]` in `tk`

            64 × 128 × 4 B = **32768 bytes** (32.0 KiB).

            Template arguments: `BM = 64, BN = 128`, the one with the most shared memory of the 2 instantiations the file launches.
            - `BM = 32, BN = 32`: 32 × 32 = 4096 bytes
            - `BM = 64, BN = 128`: 64 × 128 = 32768 bytes

            **Occupancy on sm_90** at 64×1×1 = 64 threads (from the launch at line 9); 228 KiB of shared memory per SM, 1024 B reserved per block:
            - this buffer alone allows 6 blocks/SM
            - with all 32768 B of `tk`'s shared memory: 6 blocks/SM
            - warps allow 32 blocks/SM at this block size, so shared memory is the limit
        "#]],
    );
}

#[test]
fn shared_declaration_of_a_template_never_launched_says_what_is_unbound() {
    check_hover(
        r#"
template <int BM, int BN = 16>
__global__ void tk(const float* in, float* out) {
    __shared__ float t$0[BM][BN];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
"#,
        expect![[r#"
            shared-declaration `t` at `t`
            ---
            `__shared__ float t[BM][BN]` in `tk`

            Size not known from the file (dimensions ? × 16, element 4 B).

            The template parameters `BM`, `BN` are unbound (no launch in the file instantiates `tk`); the default `BN = 16` assumed; `BM` has no default, so what depends on it is not known.

            **Occupancy on sm_90** at 256×1×1 = 256 threads (the configured default; no launch was found); 228 KiB of shared memory per SM, 1024 B reserved per block:
        "#]],
    );
}

#[test]
fn shared_declaration_of_a_template_sized_by_a_define_says_nothing_of_templates() {
    check_hover(
        r#"
#define TILE 32
template <typename T>
__global__ void tk(const T* in, T* out) {
    __shared__ float t$0[TILE][TILE];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
void run(const float* in, float* out) {
    tk<float><<<1, 64>>>(in, out);
}
"#,
        expect![[r#"
            shared-declaration `t` at `t`
            ---
            `__shared__ float t[TILE][TILE]` in `tk`

            32 × 32 × 4 B = **4096 bytes** (4.0 KiB).

            **Occupancy on sm_90** at 64×1×1 = 64 threads (from the launch at line 9); 228 KiB of shared memory per SM, 1024 B reserved per block:
            - this buffer alone allows 32 blocks/SM (the per-SM block limit; shared memory alone would fit 45)
            - with all 4096 B of `tk`'s shared memory: 32 blocks/SM (the per-SM block limit; shared memory alone would fit 45)
            - warps allow 32 blocks/SM at this block size, so shared memory is not the limit
        "#]],
    );
}

#[test]
fn template_kernel_hover_uses_the_bound_launch_bounds_and_shared_memory() {
    check_hover(
        r#"
template <int BM, int BN>
__global__ void __launch_bounds__(BM * BN / 4) t$0k(const float* in, float* out) {
    __shared__ float t[BM][BN];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
void run(const float* in, float* out) {
    tk<64, 64><<<1, dim3(32, 8)>>>(in, out);
}
"#,
        expect![[r#"
            kernel `tk` at `tk`
            ---
            **kernel** `tk`

            ```cuda
            template <int BM, int BN> __global__ void tk(const float* in, float* out)
            ```

            `__launch_bounds__(BM * BN / 4)` with `BM = 64, BN = 64`: at most 1024 threads per block and at least 1 block per SM, so the compiler keeps to at most 64 registers per thread on sm_90.

            Launch sites (1):
            - line 9: `tk<<<1, dim3(32, 8)>>>`: block 32×8×1 = 256 threads

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 32×8×1 = 256 threads (from the launch at line 9), 32 registers per thread (assumed: a typical count, not measured), 16384 B static + 0 B dynamic shared memory.

            8 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers.

            Template arguments: `BM = 64, BN = 64`, the instantiation the file launches.

            Registers: 32 per thread is an assumption, a typical count (`__launch_bounds__` allows up to 64); set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

#[test]
fn launch_bounds_from_a_template_parameter_without_a_launch_block() {
    check_hover(
        r#"
template <int THREADS>
__global__ void __launch_bounds__(THREADS) t$0k(float* out) {
    out[threadIdx.x] = 0.f;
}
void run(float* out, dim3 block) {
    tk<512><<<1, block>>>(out);
}
"#,
        expect![[r#"
            kernel `tk` at `tk`
            ---
            **kernel** `tk`

            ```cuda
            template <int THREADS> __global__ void tk(float* out)
            ```

            `__launch_bounds__(THREADS)` with `THREADS = 512`: at most 512 threads per block and at least 1 block per SM, so the compiler keeps to at most 128 registers per thread on sm_90.

            Launch sites (1):
            - line 6: `tk<<<1, block>>>`: block not known from the file

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 512×1×1 = 512 threads (the `__launch_bounds__` maximum; no launch with a known block was found), 32 registers per thread (assumed: a typical count, not measured), 0 B static + 0 B dynamic shared memory.

            4 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers.

            Template arguments: `THREADS = 512`, the instantiation the file launches.

            The block `block` of the launch is not known from the file.

            Registers: 32 per thread is an assumption, a typical count (`__launch_bounds__` allows up to 128); set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

#[test]
fn access_in_a_launched_template_gets_the_bound_rows() {
    check_hover(
        r#"
template <int BM, int BN>
__global__ void tk(const float* in, float* out) {
    __shared__ float t[BM][BN];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = t[threadIdx.$0x][threadIdx.y];
}
void run(const float* in, float* out) {
    dim3 block(32, 8);
    tk<32, 32><<<1, block>>>(in, out);
}
"#,
        expect![[r#"
            shared-access `t[threadIdx.x][threadIdx.y]` at `t[threadIdx.x][threadIdx.y]`
            ---
            **shared load** `t[threadIdx.x][threadIdx.y]` · 4 B per lane · warp 0 of a 32×8×1 block (from the launch at line 10)

            In the instantiation the file launches: `BM = 32, BN = 32`. There `t` is 32 × 32 × 4 B = 4096 bytes.

            Byte offset: `(threadIdx.x * 32 + threadIdx.y) * 4`

            **32-way bank conflict**: 32 wavefronts per request (32 active lanes, 32 distinct words).

            The lanes' stride comes from `threadIdx.x` in the row index (line 6).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words  32  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            ```
        "#]],
    );
}

#[test]
fn access_in_a_launched_padded_template_is_conflict_free() {
    check_hover(
        r#"
template <int BM, int BN>
__global__ void tk(const float* in, float* out) {
    __shared__ float t[BM][BN];
    t[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = t[threadIdx.$0x][threadIdx.y];
}
void run(const float* in, float* out) {
    dim3 block(32, 8);
    tk<32, 33><<<1, block>>>(in, out);
}
"#,
        expect![[r#"
            shared-access `t[threadIdx.x][threadIdx.y]` at `t[threadIdx.x][threadIdx.y]`
            ---
            **shared load** `t[threadIdx.x][threadIdx.y]` · 4 B per lane · warp 0 of a 32×8×1 block (from the launch at line 10)

            In the instantiation the file launches: `BM = 32, BN = 33`. There `t` is 32 × 33 × 4 B = 4224 bytes.

            Byte offset: `(threadIdx.x * 33 + threadIdx.y) * 4`

            **conflict-free**: 1 wavefront per request (32 active lanes, 32 distinct words).

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
            ```
        "#]],
    );
}

// A finding over several lines shows on each of them.

#[test]
fn finding_shows_on_every_line_it_spans() {
    check_hover(
        r#"
#include <cuda_pipeline.h>
__global__ void k(const float* g, float* out, int n) {
    __shared__ float buf[2][256];
    __pipeline_memcpy_async(&buf[0][threadIdx.x], &g[threadIdx.x], 4);
    __pipeline_commit();
    for (int t = 0; t < n; ++t) {
        __pipeline_memcpy_async(&buf[(t + 1) & 1][threadIdx.x], &g[(t + 1) * 256 + threadIdx.x], 4);
        __pipeline_commit();
        __pipeline_wait_prior(
            0); __sync$0threads();
        out[t * 256 + threadIdx.x] = buf[t & 1][threadIdx.x];
        __syncthreads();
    }
}
"#,
        expect![[r#"
            symbol `__syncthreads` at `__syncthreads`
            ---
            **warning** `async-copy/wait-all-in-pipelined-loop`: `__pipeline_wait_prior( 0)` waits for every copy, including the next tile's group committed earlier in this iteration, so the prefetch no longer overlaps the compute; leave 1 group pending

            Fix: Wait for all but the 1 most recent group (stages - 1)

            Wiki: `pitfall-async-copy#P8`

            ---

            `__syncthreads` · Block-wide barriers · `api-block-sync`

            ```cuda
            void __syncthreads();
            ```

            header: `built-in` · requires sm_20; target sm_90 has it

            Waits until every thread of the block reaches the barrier.
        "#]],
    );
}

#[test]
fn finding_over_several_lines_is_not_on_the_line_after() {
    check_hover(
        r#"
#include <cuda_pipeline.h>
__global__ void k(const float* g, float* out, int n) {
    __shared__ float buf[2][256];
    __pipeline_memcpy_async(&buf[0][threadIdx.x], &g[threadIdx.x], 4);
    __pipeline_commit();
    for (int t = 0; t < n; ++t) {
        __pipeline_memcpy_async(&buf[(t + 1) & 1][threadIdx.x], &g[(t + 1) * 256 + threadIdx.x], 4);
        __pipeline_commit();
        __pipeline_wait_prior(
            0);
        __sync$0threads();
        out[t * 256 + threadIdx.x] = buf[t & 1][threadIdx.x];
        __syncthreads();
    }
}
"#,
        expect![[r#"
            symbol `__syncthreads` at `__syncthreads`
            ---
            `__syncthreads` · Block-wide barriers · `api-block-sync`

            ```cuda
            void __syncthreads();
            ```

            header: `built-in` · requires sm_20; target sm_90 has it

            Waits until every thread of the block reaches the barrier.
        "#]],
    );
}

#[test]
fn launch_inside_a_host_template_uses_the_arguments_of_its_call() {
    check_hover(
        r#"
template <int BM, int BN>
__global__ void ge$0mm(const float* a, float* c) {
    __shared__ float as[BM][8];
    as[threadIdx.y][threadIdx.x % 8] = a[threadIdx.x];
    __syncthreads();
    c[threadIdx.x] = as[threadIdx.x % BM][0];
}
template <int BM, int BN, int TM, int TN>
void launch_gemm(const float* a, float* c, int m, int n) {
    dim3 block(BN / TN, BM / TM);
    dim3 grid(n / BN, m / BM);
    gemm<BM, BN><<<grid, block>>>(a, c);
}
void run(const float* a, float* c, int m, int n) {
    launch_gemm<128, 64, 8, 4>(a, c, m, n);
}
"#,
        expect![[r#"
            kernel `gemm` at `gemm`
            ---
            **kernel** `gemm`

            ```cuda
            template <int BM, int BN> __global__ void gemm(const float* a, float* c)
            ```

            No `__launch_bounds__`.

            Launch sites (1):
            - line 12: `gemm<<<grid, block>>>`: block 16×16×1 = 256 threads (with `BM = 128, BN = 64, TM = 8, TN = 4` as the file's call of `launch_gemm` binds them)

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 16×16×1 = 256 threads (from the launch at line 12), 32 registers per thread (assumed: a typical count, not measured), 4096 B static + 0 B dynamic shared memory.

            8 blocks/SM · 64 of 64 warps active (100%) · limited by warps and registers.

            Template arguments: `BM = 128, BN = 64`, the instantiation the file launches.

            Registers: 32 per thread is an assumption, a typical count; set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

// A static member of the user's own type is not the library member of that name.

#[test]
fn static_member_of_the_users_type_is_not_the_group_member() {
    check_hover(
        r#"
template <class T> struct Packed128 {
    static constexpr int size = 16 / sizeof(T);
    T v[size];
};
typedef Packed128<float> x128;
__global__ void k(float* out) {
    int c = threadIdx.x * x128::si$0ze;
    out[c] = 0.f;
}
"#,
        expect![[r#"
            no hover
        "#]],
    );
}

#[test]
fn member_of_a_group_type_through_a_namespace_alias_is_the_group_member() {
    check_hover(
        r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float* out) {
    auto n = &cg::thread_block::si$0ze;
    out[threadIdx.x] = 0.f;
}
"#,
        expect![[r#"
            symbol `cooperative_groups::thread_block::size` at `cg::thread_block::size`
            ---
            `cg::thread_block::size` → `cooperative_groups::thread_block::size` · Cooperative groups thread_block · `api-cg-groups`

            ```cuda
            unsigned long long thread_block::size() const;
            ```

            header: `cooperative_groups.h` · requires sm_50; target sm_90 has it

            The block as a group object; `sync()` is `__syncthreads()`.
        "#]],
    );
}

// Issue 28: a block whose registers do not fit showed "0 blocks/SM"; the launch fails.
#[test]
fn kernel_whose_block_cannot_launch_says_so() {
    check_hover(
        r#"
//- /k.cu block:1024
// kernaut: registers=65
__global__ void bi$0g(float* x) { x[threadIdx.x] = 0.0f; }
"#,
        expect![[r#"
            kernel `big` at `big`
            ---
            **kernel** `big`

            ```cuda
            __global__ void big(float* x)
            ```

            No `__launch_bounds__`.

            No launch site in the open files.

            Targets: sm_90 (assumed: no setting or build file names them; set `arch` in `.kernaut.toml`).

            **Occupancy on sm_90**: block 1024×1×1 = 1024 threads (the configured default; no launch was found), 65 registers per thread (assumed: the `kernaut: registers=` comment), 0 B static + 0 B dynamic shared memory.

            The configuration cannot launch: too many resources requested for launch: 1024 threads × 65 registers = 66,560 registers per block (73,728 as allocated) > 65,536.

            Registers: 65 per thread, as the `// kernaut: registers=` comment above the kernel sets; ptxas (`-Xptxas -v`) reports the real count.
        "#]],
    );
}

#[test]
fn half_row_in_a_loop_without_pragma_is_one_lds64_per_four_halves() {
    // nvcc 13.5 `-arch=sm_90 -cubin`: the 64-trip loop with no pragma is unrolled in full
    // and its halves read as 16 `LDS.64` (CUDA-PointPillars' `pillarscatter`): 16-way,
    // 32 wavefronts instead of 2, as `check` says on the same access.
    check_hover(
        r#"
#include <cuda_fp16.h>
__global__ void rows_h(const half* in, half* out, const unsigned* pos) {
  __shared__ half t[64][64];
  for (int r = 0; r < 64; r++) t[r][threadIdx.x] = in[r * 64 + threadIdx.x];
  __syncthreads();
  unsigned p = pos[threadIdx.x];
  for (int c = 0; c < 64; c++) out[p * 64 + c] = t[threadIdx.x]$0[c];
}
void run(const half* a, half* b, const unsigned* p) { rows_h<<<1, 64>>>(a, b, p); }
"#,
        expect![[r#"
            shared-access `t[threadIdx.x][c]` at `t[threadIdx.x][c]`
            ---
            **warning** `bank-conflict`: 16-way bank conflict: this load from `t` takes 32 wavefronts instead of 2, because lanes of a warp hit 16 different words of one bank; the lanes' stride comes from `threadIdx.x` in the row index

            Wiki: `pitfall-bank-conflict#P4`

            ---

            **shared load** `t[threadIdx.x][c]` · 8 B per lane · warp 0 of a 64×1×1 block (from the launch at line 9)

            Byte offset: `threadIdx.x * 64 * 2`

            **16-way bank conflict**: 32 wavefronts per request (32 active lanes, 64 distinct words, resolved in groups of 16 lanes).

            The lanes' stride comes from `threadIdx.x` in the row index (line 7).

            Modelled as one 8-byte access: nvcc unrolls the loop over `c`, and ptxas merges each 4 consecutive 2-byte accesses of this thread into one `LDS.64`.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words  32 32  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            ```
        "#]],
    );
}

#[test]
fn pairs_in_an_unrolled_loop_are_one_sts128() {
    // nvcc 13.5 `-arch=sm_90 -cubin`: the float pair stored in `for (i < 2)` is one
    // `STS.128` per `n`: 8-way, 32 wavefronts instead of 4.
    check_hover(
        r#"
__global__ void pairs(const float* in, float* out) {
  __shared__ float s[128 * 32];
  float v[8];
  for (int j = 0; j < 8; j++) v[j] = in[j * 128 + threadIdx.x];
  for (int n = 0; n < 2; n++) {
    for (int i = 0; i < 2; i++) {
      s[threadIdx.x * 32 + n * 4 + i * 2]$0 = v[n * 4 + i * 2];
      s[threadIdx.x * 32 + n * 4 + i * 2 + 1] = v[n * 4 + i * 2 + 1];
    }
  }
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}
void run(const float* in, float* out) { pairs<<<1, 128>>>(in, out); }
"#,
        expect![[r#"
            shared-access `s[threadIdx.x * 32 + n * 4 + i * 2]` at `s[threadIdx.x * 32 + n * 4 + i * 2]`
            ---
            **warning** `bank-conflict`: 8-way bank conflict: this store to `s` takes 32 wavefronts instead of 4 (one 16-byte access with the part at line 8, as nvcc merges them), because lanes of a warp hit 8 different words of one bank; the lanes' stride comes from `threadIdx.x * 32`

            Wiki: `pitfall-bank-conflict#P4`

            ---

            **shared store** `s[threadIdx.x * 32 + n * 4 + i * 2]` · 16 B per lane · warp 0 of a 128×1×1 block (from the launch at line 14)

            Byte offset: `(threadIdx.x * 32 + 0 * 4) * 4`

            Loop variable `n` held at its start value `0` (the first iteration).

            **8-way bank conflict**: 32 wavefronts per request (32 active lanes, 128 distinct words, resolved in groups of 8 lanes).

            The lanes' stride comes from `threadIdx.x * 32` (line 7).

            Modelled as one 16-byte access: nvcc unrolls the loop over `i`, and ptxas merges the 2 adjacent 4-byte accesses of this thread in each of 2 consecutive iterations into one `STS.128`.

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words  32 32 32 32  .  .  .  .  .  .  .  .  .  .  .  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            ```
        "#]],
    );
}

/// A tree loop's access: each step modelled with the lanes its guard leaves, the worst
/// step's figure on top and every step in a table.
#[test]
fn tree_loop_access_shows_every_step() {
    check_hover(
        r#"
#define N 512
__global__ void scan(unsigned* io) {
  __shared__ unsigned a[2 * N];
  a[threadIdx.x] = io[threadIdx.x];
  a[threadIdx.x + N] = io[threadIdx.x + N];
  __syncthreads();
  for (int s = N >> 1; s > 0; s >>= 1) {
    int i = (threadIdx.x + 1) * s * 2 - 1;
    if (i + s < 2 * N) a[i + s] += a$0[i];
    __syncthreads();
  }
  io[threadIdx.x] = a[threadIdx.x];
}
void run(unsigned* io) { scan<<<1, N>>>(io); }
"#,
        expect![[r#"
            shared-access `a[i]` at `a[i]`
            ---
            **warning** `bank-conflict`: 31-way bank conflict: this load from `a` takes 31 wavefronts instead of 1 at the step where `s` = 16, because lanes of a warp hit 31 different words of one bank; over the 9 steps of the loop over `s` (`s >>= 1`) warp 0 takes 87 wavefronts instead of 9 (conflict-free at the first step); the lanes' stride comes from `(threadIdx.x + 1) * s * 2`

            Wiki: `pitfall-bank-conflict#P7`

            ---

            **shared load** `a[i]` · 4 B per lane · warp 0 of a 512×1×1 block (from the launch at line 14)

            Byte offset: `((threadIdx.x + 1) * (N >> 1) * 2 - 1) * 4`

            **31-way bank conflict**: 31 wavefronts per request (31 active lanes, 31 distinct words).

            The lanes' stride comes from `(threadIdx.x + 1) * s * 2` (line 8).

            Each of the 9 steps of the loop over `s` (`s >>= 1`) modelled with the lanes of warp 0 its guards leave then; the figure above is the worst step's (`s` = 16). All steps: 87 wavefronts, 9 without conflicts.

            | step | values | lanes | degree | wavefronts |
            | --- | --- | --- | --- | --- |
            | 1 | s = 256 | 1 | conflict-free | 1 |
            | 2 | s = 128 | 3 | 3-way | 3 |
            | 3 | s = 64 | 7 | 7-way | 7 |
            | 4 | s = 32 | 15 | 15-way | 15 |
            | 5 | s = 16 | 31 | 31-way | 31 |
            | 6 | s = 8 | 32 | 16-way | 16 |
            | 7 | s = 4 | 32 | 8-way | 8 |
            | 8 | s = 2 | 32 | 4-way | 4 |
            | 9 | s = 1 | 32 | 2-way | 2 |

            ```text
            bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
            words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
            bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  . 31
            ```
        "#]],
    );
}
