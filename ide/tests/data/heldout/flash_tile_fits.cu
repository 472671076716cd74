// The same block with three stages of a 128x64 K/V pair: 96 KB, opted in.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

constexpr int kStages = 3;
constexpr int kTileRows = 128;
constexpr int kHeadDim = 64;
constexpr int kSmem = kStages * 2 * kTileRows * kHeadDim * (int)sizeof(__nv_bfloat16);

__global__ void attn_block_small(const __nv_bfloat16* __restrict__ K, const __nv_bfloat16* __restrict__ V,
                                 float* __restrict__ O)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __nv_bfloat16* kv = reinterpret_cast<__nv_bfloat16*>(smem_raw);
    const int n = kTileRows * kHeadDim;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        kv[i] = K[(size_t)blockIdx.x * n + i];
        kv[n + i] = V[(size_t)blockIdx.x * n + i];
    }
    __syncthreads();
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc += __bfloat162float(kv[i]) * __bfloat162float(kv[n + i]);
    atomicAdd(&O[blockIdx.x], acc);
}

void attention(const __nv_bfloat16* K, const __nv_bfloat16* V, float* O, int seq)
{
    cudaFuncSetAttribute(attn_block_small, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    attn_block_small<<<seq / kTileRows, 256, kSmem>>>(K, V, O);
}
