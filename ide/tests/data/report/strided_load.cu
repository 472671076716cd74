// Known case: each thread sums one row of a row-major matrix, so neighbouring lanes read
// addresses a row (4 KiB) apart: 32 sectors per warp request where 4 would do. The
// shared-memory reduction after it is conflict-free.
#include <cstdio>
#include <cuda_runtime.h>

#define ROWS 8192
#define COLS 1024

__global__ void row_sums(float* sums, const float* m) {
    __shared__ float partial[256];
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int c = 0; c < COLS; ++c) {
        acc += m[row * COLS + c];
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    sums[row] = partial[threadIdx.x];
}

int main() {
    float *m, *sums;
    cudaMalloc(&m, sizeof(float) * ROWS * COLS);
    cudaMalloc(&sums, sizeof(float) * ROWS);
    row_sums<<<ROWS / 256, 256>>>(sums, m);
    cudaError_t err = cudaDeviceSynchronize();
    printf("row_sums: %s\n", cudaGetErrorString(err));
    cudaFree(m);
    cudaFree(sums);
    return err == cudaSuccess ? 0 : 1;
}
