// Block-collective asynchronous copy with cooperative groups; cg::wait on
// the block is itself a block-wide synchronisation, so reading elements
// that other threads brought in is safe right after it.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int kTile = 512;

__global__ void neighbour_diff(const float* __restrict__ in, float* __restrict__ out, int ntiles)
{
    __shared__ __align__(16) float tile[kTile];
    cg::thread_block block = cg::this_thread_block();
    for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
        cg::memcpy_async(block, tile, in + (size_t)t * kTile, cuda::aligned_size_t<16>(sizeof(float) * kTile));
        cg::wait(block);
        for (int i = block.thread_rank(); i < kTile; i += block.size())
            out[(size_t)t * kTile + i] = tile[(i + 1) % kTile] - tile[i];
        block.sync();
    }
}

void diff(const float* in, float* out, int ntiles)
{
    neighbour_diff<<<132, 256>>>(in, out, ntiles);
}
