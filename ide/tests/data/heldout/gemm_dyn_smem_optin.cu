// Same SGEMM tile, launched with the opt-in for more than 48 KB of dynamic
// shared memory done once before the first launch.
#include <cuda_runtime.h>

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 2;
constexpr size_t kSmemBytes = STAGES * BK * (BM + BN) * sizeof(float);

__global__ void sgemm_tile(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int M, int N, int K)
{
    extern __shared__ float smem[];
    float* As = smem;
    float* Bs = smem + STAGES * BK * BM;
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    float acc[8][8] = {};
    for (int k0 = 0, s = 0; k0 < K; k0 += BK, s ^= 1) {
        for (int i = threadIdx.x; i < BM * BK; i += 256) {
            int r = i / BK, c = i % BK;
            As[s * BK * BM + c * BM + r] = A[(size_t)(blockIdx.y * BM + r) * K + k0 + c];
        }
        for (int i = threadIdx.x; i < BK * BN; i += 256) {
            int r = i / BN, c = i % BN;
            Bs[s * BK * BN + r * BN + c] = B[(size_t)(k0 + r) * N + blockIdx.x * BN + c];
        }
        __syncthreads();
        for (int k = 0; k < BK; ++k)
            for (int i = 0; i < 8; ++i)
                for (int j = 0; j < 8; ++j)
                    acc[i][j] += As[s * BK * BM + k * BM + ty * 8 + i] * Bs[s * BK * BN + k * BN + tx * 8 + j];
        __syncthreads();
    }
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j)
            C[(size_t)(blockIdx.y * BM + ty * 8 + i) * N + blockIdx.x * BN + tx * 8 + j] = acc[i][j];
}

#define CUDA_CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) return e_; } while (0)

cudaError_t sgemm(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream)
{
    CUDA_CHECK(cudaFuncSetAttribute(sgemm_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmemBytes));
    dim3 grid(N / BN, M / BM);
    sgemm_tile<<<grid, 256, kSmemBytes, stream>>>(A, B, C, M, N, K);
    return cudaGetLastError();
}
