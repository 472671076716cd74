// Clean twin of transpose_no_barrier.cu: __syncthreads() between the tile's writes and its
// transposed reads.
#include <cstdio>
#define TILE 32
#define N 1024
__global__ void transpose(float* out, const float* in) {
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
    cudaMalloc(&in, N * N * sizeof(float));
    cudaMalloc(&out, N * N * sizeof(float));
    cudaMemset(in, 0, N * N * sizeof(float));
    transpose<<<dim3(N / TILE, N / TILE), dim3(TILE, TILE)>>>(out, in);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
