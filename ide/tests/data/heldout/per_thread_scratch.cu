// Each thread builds a private 32-bin histogram of a short window in shared
// memory (one row per thread), then the rows are merged.
#include <cuda_runtime.h>

constexpr int kThreads = 128;
constexpr int kBins = 32;

__global__ void window_hist(const unsigned char* __restrict__ data, unsigned int* __restrict__ out, int window)
{
    __shared__ unsigned int rows[kThreads][kBins];
    const int tid = threadIdx.x;
    for (int b = 0; b < kBins; ++b) rows[tid][b] = 0;

    const unsigned char* w = data + ((size_t)blockIdx.x * kThreads + tid) * window;
    for (int k = 0; k < window; ++k) rows[tid][w[k] & (kBins - 1)] += 1;
    __syncthreads();

    if (tid < kBins) {
        unsigned int total = 0;
        for (int t = 0; t < kThreads; ++t) total += rows[t][tid];
        out[blockIdx.x * kBins + tid] = total;
    }
}

void hist(const unsigned char* data, unsigned int* out, int blocks, int window)
{
    window_hist<<<blocks, kThreads>>>(data, out, window);
}
