// SGEMM with a 128x128 block tile, BK = 32, two shared-memory stages held
// in dynamic shared memory.  256 threads, 8x8 outputs per thread.
#include <cuda_runtime.h>

#define BM 128
#define BN 128
#define BK 32
#define STAGES 2

__global__ void sgemm_128x128(const float* __restrict__ A, const float* __restrict__ B,
                              float* __restrict__ C, int M, int N, int K)
{
    extern __shared__ float smem[];
    float* As = smem;                        // STAGES * BK * BM
    float* Bs = smem + STAGES * BK * BM;     // STAGES * BK * BN

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

void sgemm(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream)
{
    size_t smem_bytes = STAGES * BK * (BM + BN) * sizeof(float);
    dim3 grid(N / BN, M / BM);
    sgemm_128x128<<<grid, 256, smem_bytes, stream>>>(A, B, C, M, N, K);
}
