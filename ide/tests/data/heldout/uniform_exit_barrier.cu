// Tiled column sums: blocks past the end leave before any barrier (the test
// is on blockIdx only), loops run a block-uniform number of times, and the
// thread-dependent work sits between barriers, not around them.
#include <cuda_runtime.h>

constexpr int kCols = 32;
constexpr int kRows = 8;

__global__ void column_sums(const float* __restrict__ m, float* __restrict__ sums, int rows, int cols, int tiles)
{
    __shared__ float part[kRows][kCols + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    if (blockIdx.x * kCols >= cols) return;
    const int c = blockIdx.x * kCols + tx;

    float acc = 0.0f;
    for (int t = 0; t < tiles; ++t) {
        int r = t * kRows + ty;
        if (r < rows && c < cols) acc += m[(size_t)r * cols + c];
    }
    part[ty][tx] = acc;
    __syncthreads();

    for (int s = kRows / 2; s > 0; s >>= 1) {
        if (ty < s) part[ty][tx] += part[ty + s][tx];
        __syncthreads();
    }
    if (tiles > 1) {
        __syncthreads();
    }
    if (ty == 0 && c < cols) sums[c] = part[0][tx];
}

void colsums(const float* m, float* sums, int rows, int cols)
{
    dim3 block(kCols, kRows);
    column_sums<<<(cols + kCols - 1) / kCols + 1, block>>>(m, sums, rows, cols, (rows + kRows - 1) / kRows);
}
