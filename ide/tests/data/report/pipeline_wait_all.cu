// Known case: a double-buffered cp.async pipeline whose loop waits for every group
// (`__pipeline_wait_prior(0)`) right after committing the next tile's copy, so the
// prefetch never overlaps the compute.
#include <cstdio>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#define TILE 256
#define TILES 64

__global__ void pipelined_sum(float* out, const float* in) {
    __shared__ float buf[2][TILE];
    float acc = 0.0f;
    __pipeline_memcpy_async(&buf[0][threadIdx.x], &in[threadIdx.x], 4);
    __pipeline_commit();
    for (int t = 0; t < TILES; ++t) {
        if (t + 1 < TILES) {
            __pipeline_memcpy_async(&buf[(t + 1) % 2][threadIdx.x],
                                    &in[(t + 1) * TILE + threadIdx.x], 4);
        }
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        acc += buf[t % 2][threadIdx.x] * 2.0f;
        __syncthreads();
    }
    out[blockIdx.x * TILE + threadIdx.x] = acc;
}

int main() {
    float *in, *out;
    cudaMalloc(&in, sizeof(float) * TILE * TILES);
    cudaMalloc(&out, sizeof(float) * TILE * 8);
    pipelined_sum<<<8, TILE>>>(out, in);
    cudaError_t err = cudaDeviceSynchronize();
    printf("pipelined_sum: %s\n", cudaGetErrorString(err));
    cudaFree(in);
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
