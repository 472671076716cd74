#include "tile.cuh"

__global__ void transpose(float* out, const float* in, int n) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

int main() {
    const int n = 4096;
    float *in, *out;
    cudaMalloc(&in, n * n * sizeof(float));
    cudaMalloc(&out, n * n * sizeof(float));
    dim3 grid(n / TILE, n / TILE), block(TILE, ROWS);
    transpose<<<grid, block>>>(out, in, n);
    cudaDeviceSynchronize();
    return 0;
}
