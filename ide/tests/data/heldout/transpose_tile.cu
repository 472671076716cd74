// Out-of-place matrix transpose through a shared-memory tile.
// Launched with 32x8 blocks; each thread moves TILE/ROWS elements.
#include <cuda_runtime.h>

#define TILE 32
#define ROWS 8

__global__ void transpose_tile(float* __restrict__ out, const float* __restrict__ in,
                               int width, int height)
{
    __shared__ float tile[TILE][TILE];

    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }
    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

void launch_transpose(float* out, const float* in, int width, int height, cudaStream_t s)
{
    dim3 block(TILE, ROWS);
    dim3 grid((width + TILE - 1) / TILE, (height + TILE - 1) / TILE);
    transpose_tile<<<grid, block, 0, s>>>(out, in, width, height);
}
