// Race (race/global-neighbour): an in-place transpose of a square matrix in global memory.
// Thread (1,0) reads m[1 * 32 + 0] (`m[x * n + y]`) while thread (0,1) writes m[1 * 32 + 0]
// (`m[y * n + x]`), and the other way round.
#include <cstdio>
#define N 32
__global__ void transpose_inplace(float* m, int n) {
    int x = threadIdx.x;
    int y = threadIdx.y;
    float v = m[x * n + y];
    m[y * n + x] = v; // race: race/global-neighbour
}
int main() {
    float* m;
    cudaMalloc(&m, N * N * sizeof(float));
    cudaMemset(m, 0, N * N * sizeof(float));
    transpose_inplace<<<1, dim3(N, N)>>>(m, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
