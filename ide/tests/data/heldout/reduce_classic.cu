// Block sum reduction, the way many older code bases still write it.
#include <cuda_runtime.h>

template <unsigned int blockSize>
__global__ void reduce_sum(const float* __restrict__ in, float* __restrict__ partial, unsigned int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    unsigned int gridSize = blockSize * 2 * gridDim.x;

    float sum = 0.0f;
    while (i < n) {
        sum += in[i];
        if (i + blockSize < n) sum += in[i + blockSize];
        i += gridSize;
    }
    sdata[tid] = sum;
    __syncthreads();

    for (unsigned int s = blockSize / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
            __syncthreads();
        }
    }

    if (tid < 32) {
        volatile float* vs = sdata;
        if (blockSize >= 64) vs[tid] += vs[tid + 32];
        if (blockSize >= 32) vs[tid] += vs[tid + 16];
        if (blockSize >= 16) vs[tid] += vs[tid + 8];
        if (blockSize >= 8) vs[tid] += vs[tid + 4];
        if (blockSize >= 4) vs[tid] += vs[tid + 2];
        if (blockSize >= 2) vs[tid] += vs[tid + 1];
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

void block_sums(const float* in, float* partial, unsigned int n, int blocks)
{
    reduce_sum<256><<<blocks, 256, 256 * sizeof(float)>>>(in, partial, n);
}
