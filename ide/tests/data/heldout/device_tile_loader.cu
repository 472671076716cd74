// A 2-D tile helper shared by several kernels: load a tile of `rows` rows
// (the last tile of a matrix can be shorter) and wait for it.
#include <cuda_runtime.h>

#define TW 32
#define TH 32

__device__ void load_tile_rows(float (*tile)[TW + 1], const float* __restrict__ src, int ld, int rows)
{
    if (threadIdx.y < rows) {
        for (int r = threadIdx.y; r < rows; r += blockDim.y)
            tile[r][threadIdx.x] = src[r * ld + threadIdx.x];
        __syncthreads();
    }
}

__global__ void add_transposed(const float* __restrict__ a, float* __restrict__ b, int n)
{
    __shared__ float tile[TH][TW + 1];
    int rows = min(TH, n - (int)blockIdx.y * TH);
    load_tile_rows(tile, a + (size_t)blockIdx.y * TH * n + blockIdx.x * TW, n, rows);
    for (int r = threadIdx.y; r < TW; r += blockDim.y) {
        int gr = blockIdx.x * TW + r;
        int gc = blockIdx.y * TH + threadIdx.x;
        if (gr < n && gc < n && threadIdx.x < rows) b[(size_t)gr * n + gc] += tile[threadIdx.x][r];
    }
}

void add_t(const float* a, float* b, int n)
{
    dim3 block(TW, 8);
    dim3 grid((n + TW - 1) / TW, (n + TH - 1) / TH);
    add_transposed<<<grid, block>>>(a, b, n);
}
