// Same streaming GEMV, three stages, waiting only for the oldest group.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

constexpr int kTPB = 128;
constexpr int kChunk = kTPB * 4;
constexpr int kStages = 3;

__global__ void gemv_3stage(const float* __restrict__ A, const float* __restrict__ x,
                            float* __restrict__ y, int cols)
{
    __shared__ __align__(16) float ring[kStages][kChunk];
    const float* arow = A + (size_t)blockIdx.x * cols;
    const int tid = threadIdx.x;
    const int nchunks = cols / kChunk;

    for (int s = 0; s < kStages - 1; ++s) {
        if (s < nchunks)
            __pipeline_memcpy_async(&ring[s][tid * 4], &arow[s * kChunk + tid * 4], 16);
        __pipeline_commit();
    }

    float acc = 0.0f;
    for (int c = 0; c < nchunks; ++c) {
        int pre = c + kStages - 1;
        if (pre < nchunks)
            __pipeline_memcpy_async(&ring[pre % kStages][tid * 4], &arow[pre * kChunk + tid * 4], 16);
        __pipeline_commit();
        __pipeline_wait_prior(kStages - 1);
        __syncthreads();
        const float* buf = ring[c % kStages];
        for (int k = tid; k < kChunk; k += kTPB) acc += buf[k] * x[c * kChunk + k];
        __syncthreads();
    }

    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((tid & 31) == 0) atomicAdd(&y[blockIdx.x], acc);
}

void gemv(const float* A, const float* x, float* y, int rows, int cols)
{
    gemv_3stage<<<rows, kTPB>>>(A, x, y, cols);
}
