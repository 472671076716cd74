// Simple SGEMM where each thread owns one row of C and walks it; written
// for a quick port, not as a baseline.
#include <cuda_runtime.h>

__global__ void sgemm_rowwise(const float* __restrict__ A, const float* __restrict__ B,
                              float* __restrict__ C, int M, int N, int K)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y;
    if (row >= M) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}

void sgemm(const float* A, const float* B, float* C, int M, int N, int K)
{
    dim3 grid((M + 127) / 128, N);
    sgemm_rowwise<<<grid, 128>>>(A, B, C, M, N, K);
}
