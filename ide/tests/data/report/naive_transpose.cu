// Known case: a transpose through shared memory whose tile is read down a column.
// The read `tile[threadIdx.x][threadIdx.y]` puts the 32 lanes of a warp on one bank
// (32-way conflict), and the store to `out` walks rows: each lane writes its own sector.
#include <cstdio>
#include <cuda_runtime.h>

#define TILE 32
#define N 2048

__global__ void transpose_naive(float* out, const float* in) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * N + x];
    __syncthreads();
    out[x * N + y] = tile[threadIdx.x][threadIdx.y];
}

int main() {
    float *in, *out;
    cudaMalloc(&in, sizeof(float) * N * N);
    cudaMalloc(&out, sizeof(float) * N * N);
    dim3 grid(N / TILE, N / TILE);
    dim3 block(TILE, TILE);
    transpose_naive<<<grid, block>>>(out, in);
    cudaError_t err = cudaDeviceSynchronize();
    printf("transpose_naive: %s\n", cudaGetErrorString(err));
    cudaFree(in);
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
