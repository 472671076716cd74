// Histogram of 16-bit keys with a private per-block table in static shared
// memory.  65536 bins of 4 bytes is 256 KB: more than a block may declare.
#include <cuda_runtime.h>
#include <stdint.h>

#define BINS 65536

__global__ void hist16(const uint16_t* __restrict__ keys, unsigned int* __restrict__ global_hist, int n)
{
    __shared__ unsigned int local_hist[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local_hist[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local_hist[keys[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local_hist[b]) atomicAdd(&global_hist[b], local_hist[b]);
}

void histogram(const uint16_t* keys, unsigned int* hist, int n)
{
    hist16<<<132, 1024>>>(keys, hist, n);
}
