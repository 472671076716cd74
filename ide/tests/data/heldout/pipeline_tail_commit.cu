// Tiled 1-D convolution with a filter of K taps; the input tiles are
// double-buffered with the pipeline primitives.  The last block has fewer
// valid elements, so the copy is guarded by the element index.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#define T 256
#define K 9

__constant__ float c_filter[K];

__global__ void conv1d_tiles(const float* __restrict__ in, float* __restrict__ out, int n, int tiles_per_block)
{
    __shared__ float buf[2][T + K - 1];
    int tid = threadIdx.x;
    int first = blockIdx.x * tiles_per_block;

    for (int t = 0; t < tiles_per_block; ++t) {
        int g = (first + t) * T + tid;
        if (g < n) {
            __pipeline_memcpy_async(&buf[t & 1][tid], &in[g], sizeof(float));
            if (tid < K - 1)
                __pipeline_memcpy_async(&buf[t & 1][T + tid], &in[g + T], sizeof(float));
            __pipeline_commit();
        }
        __pipeline_wait_prior(0);
        __syncthreads();
        if (g < n) {
            float acc = 0.0f;
#pragma unroll
            for (int k = 0; k < K; ++k) acc += c_filter[k] * buf[t & 1][tid + k];
            out[g] = acc;
        }
        __syncthreads();
    }
}

void conv1d(const float* in, float* out, int n)
{
    int tiles = (n + T - 1) / T;
    conv1d_tiles<<<(tiles + 3) / 4, T>>>(in, out, n, 4);
}
