// A copy kernel written for Hopper's bulk copy engine, built here for an
// Ampere target.
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void bulk_stage(const float* __restrict__ src, float* __restrict__ dst, int bytes)
{
    __shared__ alignas(16) float buf[2048];
    __shared__ alignas(8) uint64_t mbar;
    uint32_t s_buf = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
    uint32_t s_bar = static_cast<uint32_t>(__cvta_generic_to_shared(&mbar));

    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;\n" :: "r"(s_bar));
        asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;\n" :: "r"(s_bar), "r"(bytes));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                     :: "r"(s_buf), "l"(src + blockIdx.x * 2048), "r"(bytes), "r"(s_bar) : "memory");
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 2048; i += blockDim.x) dst[blockIdx.x * 2048 + i] = buf[i];
}

void stage(const float* src, float* dst, int blocks)
{
    bulk_stage<<<blocks, 256>>>(src, dst, 2048 * 4);
}
