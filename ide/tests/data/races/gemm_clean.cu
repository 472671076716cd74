// Clean twin of gemm_missing_second_barrier.cu: the second barrier keeps the next tile's
// writes after every thread's reads of this one.
#include <cstdio>
#define T 16
#define N 512
__global__ void matmul(float* C, const float* A, const float* B, int n) {
    __shared__ float a[T][T];
    __shared__ float b[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int t = 0; t < n; t += T) {
        a[ty][tx] = A[row * n + t + tx];
        b[ty][tx] = B[(t + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += a[ty][k] * b[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
int main() {
    float *a, *b, *c;
    cudaMalloc(&a, N * N * sizeof(float));
    cudaMalloc(&b, N * N * sizeof(float));
    cudaMalloc(&c, N * N * sizeof(float));
    cudaMemset(a, 0, N * N * sizeof(float));
    cudaMemset(b, 0, N * N * sizeof(float));
    matmul<<<dim3(N / T, N / T), dim3(T, T)>>>(c, a, b, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
