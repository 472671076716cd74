// Block-wise prefix sums: each block stages 256 floats with one 4-byte
// asynchronous copy per thread, then scans them in shared memory.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#define N_PER_BLOCK 256

__global__ void block_scan(const float* __restrict__ g, float* __restrict__ out)
{
    __shared__ __align__(16) float tile[N_PER_BLOCK];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&tile[tid], &g[blockIdx.x * N_PER_BLOCK + tid], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();

    for (int off = 1; off < N_PER_BLOCK; off <<= 1) {
        float v = (tid >= off) ? tile[tid - off] : 0.0f;
        __syncthreads();
        tile[tid] += v;
        __syncthreads();
    }
    out[blockIdx.x * N_PER_BLOCK + tid] = tile[tid];
}

void scan(const float* g, float* out, int blocks)
{
    block_scan<<<blocks, N_PER_BLOCK>>>(g, out);
}
