// Race (race/shared-missing-barrier): tiled transpose that reads the tile transposed
// without waiting for the other threads' writes. Thread (1,0) writes tile[0][1]; thread
// (0,1) reads tile[0][1] (`tile[threadIdx.x][threadIdx.y]`) with no barrier between
// (read after write).
#include <cstdio>
#define TILE 32
#define N 1024
__global__ void transpose(float* out, const float* in) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * N + x];
    int tx = blockIdx.y * TILE + threadIdx.x;
    int ty = blockIdx.x * TILE + threadIdx.y;
    out[ty * N + tx] = tile[threadIdx.x][threadIdx.y]; // race: race/shared-missing-barrier
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
