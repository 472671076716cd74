// Block-wide inclusive scan with cooperative groups: warp scans with
// tile-level syncs inside the warp-0 branch, block syncs outside branches.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void block_scan_cg(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int warp_sums[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);

    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = (i < n) ? in[i] : 0;
    for (int d = 1; d < 32; d <<= 1) {
        int up = warp.shfl_up(v, d);
        if (warp.thread_rank() >= d) v += up;
    }
    if (warp.thread_rank() == 31) warp_sums[warp.meta_group_rank()] = v;
    block.sync();

    if (warp.meta_group_rank() == 0) {
        int w = (warp.thread_rank() < warp.meta_group_size()) ? warp_sums[warp.thread_rank()] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            int up = warp.shfl_up(w, d);
            if (warp.thread_rank() >= d) w += up;
        }
        warp.sync();
        warp_sums[warp.thread_rank()] = w;
    }
    block.sync();

    if (warp.meta_group_rank() > 0) v += warp_sums[warp.meta_group_rank() - 1];
    if (i < n) out[i] = v;
}

void scan(const int* in, int* out, int n)
{
    block_scan_cg<<<(n + 1023) / 1024, 1024>>>(in, out, n);
}
