// Row-sum with the prefetch depth as a template parameter: the host picks
// one of a few instantiations, the device code sees a constant.
#include <cuda/pipeline>
#include <cuda_runtime.h>

constexpr int kCols = 512;

template <int Stages>
__global__ void rowsum_pipe(const float* __restrict__ m, float* __restrict__ sums, int rows)
{
    __shared__ __align__(16) float rowbuf[Stages][kCols];
    const int tid = threadIdx.x;
    auto pipe = cuda::make_pipeline();

    for (int s = 0; s < Stages - 1; ++s) {
        pipe.producer_acquire();
        if (s < rows)
            cuda::memcpy_async(&rowbuf[s][tid * 4], &m[(size_t)s * kCols + tid * 4],
                               cuda::aligned_size_t<16>(16), pipe);
        pipe.producer_commit();
    }
    for (int r = 0; r < rows; ++r) {
        const int nxt = r + Stages - 1;
        pipe.producer_acquire();
        if (nxt < rows)
            cuda::memcpy_async(&rowbuf[nxt % Stages][tid * 4], &m[(size_t)nxt * kCols + tid * 4],
                               cuda::aligned_size_t<16>(16), pipe);
        pipe.producer_commit();
        cuda::pipeline_consumer_wait_prior<Stages - 1>(pipe);
        __syncthreads();
        float v = 0.0f;
        for (int c = tid; c < kCols; c += blockDim.x) v += rowbuf[r % Stages][c];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if ((tid & 31) == 0) atomicAdd(&sums[r], v);
        __syncthreads();
        pipe.consumer_release();
    }
}

void rowsum(const float* m, float* sums, int rows, int depth)
{
    if (depth >= 3) rowsum_pipe<3><<<1, kCols / 4>>>(m, sums, rows);
    else rowsum_pipe<2><<<1, kCols / 4>>>(m, sums, rows);
}
