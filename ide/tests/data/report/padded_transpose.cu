// Known case: the transpose with the tile padded to 33 columns and the store walking
// columns: no bank conflict, every global access coalesced. The report should find
// nothing costly.
#include <cstdio>
#include <cuda_runtime.h>

#define TILE 32
#define N 2048

__global__ void transpose_padded(float* out, const float* in) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * N + x];
    __syncthreads();
    int tx = blockIdx.y * TILE + threadIdx.x;
    int ty = blockIdx.x * TILE + threadIdx.y;
    out[ty * N + tx] = tile[threadIdx.x][threadIdx.y];
}

int main() {
    float *in, *out;
    cudaMalloc(&in, sizeof(float) * N * N);
    cudaMalloc(&out, sizeof(float) * N * N);
    dim3 grid(N / TILE, N / TILE);
    dim3 block(TILE, TILE);
    transpose_padded<<<grid, block>>>(out, in);
    cudaError_t err = cudaDeviceSynchronize();
    printf("transpose_padded: %s\n", cudaGetErrorString(err));
    cudaFree(in);
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
