// Matrix-vector product y = A x with the rows of A streamed through a
// two-stage shared-memory buffer using the pipeline primitives.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#define TPB 128
#define CHUNK (TPB * 4)

__global__ void gemv_pipelined(const float* __restrict__ A, const float* __restrict__ x,
                               float* __restrict__ y, int cols)
{
    __shared__ __align__(16) float stage[2][CHUNK];
    const float* arow = A + (size_t)blockIdx.x * cols;
    int tid = threadIdx.x;
    int nchunks = cols / CHUNK;

    __pipeline_memcpy_async(&stage[0][tid * 4], &arow[tid * 4], 16);
    __pipeline_commit();

    float acc = 0.0f;
    for (int c = 0; c < nchunks; ++c) {
        if (c + 1 < nchunks)
            __pipeline_memcpy_async(&stage[(c + 1) & 1][tid * 4], &arow[(c + 1) * CHUNK + tid * 4], 16);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        const float* buf = stage[c & 1];
        for (int k = tid; k < CHUNK; k += TPB) acc += buf[k] * x[c * CHUNK + k];
        __syncthreads();
    }

    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ float sums[TPB / 32];
    if ((tid & 31) == 0) sums[tid / 32] = acc;
    __syncthreads();
    if (tid == 0) y[blockIdx.x] = sums[0] + sums[1] + sums[2] + sums[3];
}

void gemv(const float* A, const float* x, float* y, int rows, int cols)
{
    gemv_pipelined<<<rows, TPB>>>(A, x, y, cols);
}
