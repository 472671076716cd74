// Producer/consumer split: warp 0 issues the copies of the next tile and
// commits them, the whole block consumes after a barrier.  The branch is on
// the warp index, so every lane of a warp commits the same number of groups.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

constexpr int kTile = 1024;

__global__ void sum_tiles(const float4* __restrict__ in, float* __restrict__ out, int ntiles)
{
    __shared__ __align__(16) float4 tile[2][kTile / 4];
    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;

    if (warp == 0) {
        for (int k = lane; k < kTile / 4; k += 32)
            __pipeline_memcpy_async(&tile[0][k], &in[k], 16);
        __pipeline_commit();
    }

    float acc = 0.0f;
    for (int t = 0; t < ntiles; ++t) {
        if (warp == 0) {
            if (t + 1 < ntiles)
                for (int k = lane; k < kTile / 4; k += 32)
                    __pipeline_memcpy_async(&tile[(t + 1) & 1][k], &in[(t + 1) * (kTile / 4) + k], 16);
            __pipeline_commit();
            __pipeline_wait_prior(1);
        }
        __syncthreads();
        float4 v = tile[t & 1][tid % (kTile / 4)];
        acc += v.x + v.y + v.z + v.w;
        __syncthreads();
    }
    atomicAdd(out, acc);
}

void run(const float4* in, float* out, int ntiles)
{
    sum_tiles<<<1, 256>>>(in, out, ntiles);
}
