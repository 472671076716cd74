// Clean twin of jacobi_inplace.cu: the new values go to a second buffer.
#include <cstdio>
#define N 1024
__global__ void jacobi(float* unew, const float* u, const float* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        unew[i] = 0.5f * (u[i - 1] + u[i + 1] - f[i]);
    }
}
int main() {
    float *u, *unew, *f;
    cudaMalloc(&u, N * sizeof(float));
    cudaMalloc(&unew, N * sizeof(float));
    cudaMalloc(&f, N * sizeof(float));
    cudaMemset(u, 0, N * sizeof(float));
    cudaMemset(f, 0, N * sizeof(float));
    jacobi<<<N / 256, 256>>>(unew, u, f, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
