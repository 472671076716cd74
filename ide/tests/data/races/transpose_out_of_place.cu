// Clean twin of transpose_inplace_global.cu: the transpose goes to a second matrix.
#include <cstdio>
#define N 32
__global__ void transpose(float* t, const float* m, int n) {
    int x = threadIdx.x;
    int y = threadIdx.y;
    t[y * n + x] = m[x * n + y];
}
int main() {
    float *m, *t;
    cudaMalloc(&m, N * N * sizeof(float));
    cudaMalloc(&t, N * N * sizeof(float));
    cudaMemset(m, 0, N * N * sizeof(float));
    transpose<<<1, dim3(N, N)>>>(t, m, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
