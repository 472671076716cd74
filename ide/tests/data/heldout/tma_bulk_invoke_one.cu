// Hopper bulk copy issued by exactly one thread chosen with invoke_one, so
// the compiler knows a single lane runs it.
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;
using barrier_t = cuda::barrier<cuda::thread_scope_block>;

#define ELEMS 2048

__global__ void copy_bulk(const float4* __restrict__ in, float4* __restrict__ out)
{
    __shared__ alignas(128) float4 buf[ELEMS / 4];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ barrier_t bar;
    auto block = cg::this_thread_block();

    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();

    if (threadIdx.x < 32) {
        cg::invoke_one(cg::coalesced_threads(), [&] {
            cuda::memcpy_async(buf, in + (size_t)blockIdx.x * (ELEMS / 4),
                               cuda::aligned_size_t<16>(sizeof(buf)), bar);
        });
    }
    bar.arrive_and_wait();

    for (int i = block.thread_rank(); i < ELEMS / 4; i += block.size())
        out[(size_t)blockIdx.x * (ELEMS / 4) + i] = buf[i];
}

void copy(const float4* in, float4* out, int blocks)
{
    copy_bulk<<<blocks, 128>>>(in, out);
}
