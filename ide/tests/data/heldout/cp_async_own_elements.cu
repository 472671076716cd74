// Elementwise scale of a float4 stream, staged through shared memory with
// cp.async: each thread reads back exactly the 16 bytes it copied itself,
// so the thread's own wait is all the ordering it needs.
#include <cuda_runtime.h>
#include <stdint.h>

constexpr int kBlock = 128;

__global__ void scale_staged(const float4* __restrict__ in, float4* __restrict__ out, float a, int n4)
{
    __shared__ float4 stage[kBlock];
    int i = blockIdx.x * kBlock + threadIdx.x;
    if (i >= n4) return;

    uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(&stage[threadIdx.x]));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(in + i));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);

    float4 v = stage[threadIdx.x];
    v.x *= a; v.y *= a; v.z *= a; v.w *= a;
    out[i] = v;
}

void scale(const float4* in, float4* out, float a, int n4)
{
    scale_staged<<<(n4 + kBlock - 1) / kBlock, kBlock>>>(in, out, a, n4);
}
