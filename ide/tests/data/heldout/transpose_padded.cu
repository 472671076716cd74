// Transpose with a padded tile: the column read walks 33 words per row,
// so the 32 lanes land in 32 different banks.
#include <cuda_runtime.h>

constexpr int kTile = 32;
constexpr int kRows = 8;

template <typename T>
__global__ void transpose_padded(T* __restrict__ dst, const T* __restrict__ src, int n)
{
    __shared__ T buf[kTile][kTile + 1];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    int col = blockIdx.x * kTile + tx;
    int row = blockIdx.y * kTile + ty;

#pragma unroll
    for (int r = 0; r < kTile; r += kRows)
        if (col < n && row + r < n) buf[ty + r][tx] = src[(row + r) * n + col];
    __syncthreads();

    col = blockIdx.y * kTile + tx;
    row = blockIdx.x * kTile + ty;
#pragma unroll
    for (int r = 0; r < kTile; r += kRows)
        if (col < n && row + r < n) dst[(row + r) * n + col] = buf[tx][ty + r];
}

void transpose(float* dst, const float* src, int n)
{
    dim3 block(kTile, kRows);
    dim3 grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
    transpose_padded<float><<<grid, block>>>(dst, src, n);
}
