// Row-sum of a tall matrix with a configurable prefetch depth chosen by the
// host at run time (tuned per GPU).
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#define COLS 512
#define MAX_STAGES 4

__global__ void rowsum_prefetch(const float* __restrict__ m, float* __restrict__ sums, int rows, int depth)
{
    __shared__ __align__(16) float rowbuf[MAX_STAGES][COLS];
    int tid = threadIdx.x;

    for (int s = 0; s < depth - 1; ++s) {
        if (s < rows) __pipeline_memcpy_async(&rowbuf[s][tid * 4], &m[(size_t)s * COLS + tid * 4], 16);
        __pipeline_commit();
    }
    for (int r = 0; r < rows; ++r) {
        int nxt = r + depth - 1;
        if (nxt < rows)
            __pipeline_memcpy_async(&rowbuf[nxt % depth][tid * 4], &m[(size_t)nxt * COLS + tid * 4], 16);
        __pipeline_commit();
        __pipeline_wait_prior(depth - 1);
        __syncthreads();
        float v = 0.0f;
        for (int c = tid; c < COLS; c += blockDim.x) v += rowbuf[r % depth][c];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if ((tid & 31) == 0) atomicAdd(&sums[r], v);
        __syncthreads();
    }
}

void rowsum(const float* m, float* sums, int rows, int depth)
{
    rowsum_prefetch<<<1, COLS / 4>>>(m, sums, rows, depth);
}
