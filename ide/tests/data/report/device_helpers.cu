// Known case: the naive transpose written with two device helpers. `column` reads the
// tile down a column (lanes 32 floats apart: a 32-way bank conflict) and `store_strided`
// writes one element per lane a row apart (each lane its own sector). Neither helper
// has a launch of its own: the kernel's block and arguments decide both figures.
#include <cstdio>
#include <cuda_runtime.h>

#define TILE 32
#define N 2048

__device__ float column(const float* tile, int col) {
    return tile[threadIdx.x * TILE + col];
}

__device__ void store_strided(float* out, int row, float v) {
    out[row * N] = v;
}

__global__ void transpose_helpers(float* out, const float* in) {
    __shared__ float tile[TILE * TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y * TILE + threadIdx.x] = in[y * N + x];
    __syncthreads();
    store_strided(out + y, x, column(tile, threadIdx.y));
}

int main() {
    float *in, *out;
    cudaMalloc(&in, sizeof(float) * N * N);
    cudaMalloc(&out, sizeof(float) * N * N);
    dim3 grid(N / TILE, N / TILE);
    dim3 block(TILE, TILE);
    transpose_helpers<<<grid, block>>>(out, in);
    cudaError_t err = cudaDeviceSynchronize();
    printf("transpose_helpers: %s\n", cudaGetErrorString(err));
    cudaFree(in);
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
