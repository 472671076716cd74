// Race (race/shared-missing-barrier): tiled GEMM without the barrier at the end of the loop
// body. Thread (0,0) reads a[0][1] (`a[ty][k]`, k = 1) in iteration t; thread (1,0) writes
// a[0][1] (`a[ty][tx]`) in iteration t + T before thread (0,0) is done (write after read
// across the loop's back edge). Likewise thread (0,2) reads b[0][0] (`b[k][tx]`) and thread
// (0,0) writes it in the next iteration (`b[ty][tx]`).
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
        a[ty][tx] = A[row * n + t + tx]; // race: race/shared-missing-barrier
        b[ty][tx] = B[(t + ty) * n + col]; // race: race/shared-missing-barrier
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += a[ty][k] * b[k][tx];
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
