// A tile loader that uses cp.async unconditionally, built for a Turing
// target (sm_75) where the instruction does not exist.
#include <cuda_runtime.h>
#include <stdint.h>

__device__ __forceinline__ void load16(void* dst, const void* src)
{
    uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(d), "l"(src));
}

__global__ void tile_copy(const float4* __restrict__ in, float4* __restrict__ out)
{
    __shared__ float4 tile[256];
    load16(&tile[threadIdx.x], &in[blockIdx.x * 256 + threadIdx.x]);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = tile[255 - threadIdx.x];
}

void copy(const float4* in, float4* out, int blocks)
{
    tile_copy<<<blocks, 256>>>(in, out);
}
