// Two-stage double buffering written the other correct way: wait for the
// current tile *before* issuing the copy of the next one, so wait 0 drains
// only the tile that is about to be used.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#define TILE 1024
#define THREADS 256

__global__ void saxpy_tiles(const float4* __restrict__ x, float4* __restrict__ y, float a, int ntiles)
{
    __shared__ float4 xs[2][TILE / 4];
    int tid = threadIdx.x;

    __pipeline_memcpy_async(&xs[0][tid], &x[tid], sizeof(float4));
    __pipeline_commit();

    for (int t = 0; t < ntiles; ++t) {
        __pipeline_wait_prior(0);
        __syncthreads();
        if (t + 1 < ntiles)
            __pipeline_memcpy_async(&xs[(t + 1) & 1][tid], &x[(t + 1) * (TILE / 4) + tid], sizeof(float4));
        __pipeline_commit();
        float4 v = xs[t & 1][(tid + 1) % (TILE / 4)];
        float4 w = y[t * (TILE / 4) + tid];
        w.x += a * v.x; w.y += a * v.y; w.z += a * v.z; w.w += a * v.w;
        y[t * (TILE / 4) + tid] = w;
        __syncthreads();
    }
}

void saxpy(const float4* x, float4* y, float a, int ntiles)
{
    saxpy_tiles<<<1, THREADS>>>(x, y, a, ntiles);
}
