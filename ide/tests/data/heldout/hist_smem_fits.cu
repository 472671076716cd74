// Histogram of 12-bit keys: 4096 bins of 4 bytes = 16 KB of static shared
// memory, plus a 32 KB dynamic staging area: 48 KB in all, no opt-in needed.
#include <cuda_runtime.h>
#include <stdint.h>

#define BINS 4096
#define STAGE_BYTES (32 * 1024)

__global__ void hist12(const uint16_t* __restrict__ keys, unsigned int* __restrict__ out, int n)
{
    __shared__ unsigned int bins[BINS];
    extern __shared__ uint16_t staged[];
    const int per_block = STAGE_BYTES / sizeof(uint16_t);

    for (int b = threadIdx.x; b < BINS; b += blockDim.x) bins[b] = 0;
    int base = blockIdx.x * per_block;
    for (int i = threadIdx.x; i < per_block; i += blockDim.x)
        staged[i] = (base + i < n) ? keys[base + i] : 0;
    __syncthreads();
    for (int i = threadIdx.x; i < per_block && base + i < n; i += blockDim.x)
        atomicAdd(&bins[staged[i] & (BINS - 1)], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (bins[b]) atomicAdd(&out[blockIdx.x * BINS + b], bins[b]);
}

void histogram(const uint16_t* keys, unsigned int* out, int n)
{
    int per_block = STAGE_BYTES / sizeof(uint16_t);
    hist12<<<(n + per_block - 1) / per_block, 512, STAGE_BYTES>>>(keys, out, n);
}
