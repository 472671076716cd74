// Race (race/global-neighbour): a 1-D Jacobi step updated in place. Thread 1 writes u[1]
// (`u[i] = ...`) while thread 0 reads u[1] (`u[i + 1]`) and thread 2 reads u[1] (`u[i - 1]`).
#include <cstdio>
#define N 1024
__global__ void jacobi(float* u, const float* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        float left = u[i - 1];
        float right = u[i + 1];
        u[i] = 0.5f * (left + right - f[i]); // race: race/global-neighbour
    }
}
int main() {
    float *u, *f;
    cudaMalloc(&u, N * sizeof(float));
    cudaMalloc(&f, N * sizeof(float));
    cudaMemset(u, 0, N * sizeof(float));
    cudaMemset(f, 0, N * sizeof(float));
    jacobi<<<N / 256, 256>>>(u, f, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
