// Attention score tile: Q tile and K tile for a 64-wide head in dynamic
// shared memory.  The opt-in was written when the K tile was 128 rows
// (64 KB in all) and never updated when it grew to 192 rows (80 KB).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int kHead = 64;
constexpr int kRowsQ = 128;
constexpr int kRowsK = 192;

__global__ void qk_scores(const __half* __restrict__ Q, const __half* __restrict__ Kmat,
                          float* __restrict__ S, int seq)
{
    extern __shared__ float sh[];
    float* q = sh;
    float* k = sh + kRowsQ * kHead;
    for (int i = threadIdx.x; i < kRowsQ * kHead; i += blockDim.x)
        q[i] = __half2float(Q[(size_t)blockIdx.y * kRowsQ * kHead + i]);
    for (int i = threadIdx.x; i < kRowsK * kHead; i += blockDim.x)
        k[i] = __half2float(Kmat[(size_t)blockIdx.x * kRowsK * kHead + i]);
    __syncthreads();
    for (int e = threadIdx.x; e < kRowsQ * kRowsK; e += blockDim.x) {
        int r = e / kRowsK, c = e % kRowsK;
        float dot = 0.0f;
        for (int d = 0; d < kHead; ++d) dot += q[r * kHead + d] * k[c * kHead + d];
        S[(size_t)(blockIdx.y * kRowsQ + r) * seq + blockIdx.x * kRowsK + c] = dot;
    }
}

void scores(const __half* Q, const __half* K, float* S, int seq)
{
    const int smem = (kRowsQ + kRowsK) * kHead * sizeof(float);
    cudaFuncSetAttribute(qk_scores, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    dim3 grid(seq / kRowsK, seq / kRowsQ);
    qk_scores<<<grid, 256, smem>>>(Q, K, S, seq);
}
