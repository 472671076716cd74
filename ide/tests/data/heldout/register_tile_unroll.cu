// Inner product of a register-blocked micro-kernel: each thread keeps a
// 4x4 accumulator and the k loop is fully unrolled; its body is tiny.
#include <cuda_runtime.h>

constexpr int KT = 32;

__global__ void micro_gemm(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int ldc)
{
    __shared__ float a_s[KT][64];
    __shared__ float b_s[KT][64];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (int i = threadIdx.x; i < KT * 64; i += 256) {
        a_s[i / 64][i % 64] = A[i];
        b_s[i / 64][i % 64] = B[i];
    }
    __syncthreads();

    float c[4][4] = {};
#pragma unroll 32
    for (int k = 0; k < KT; ++k) {
        float4 a = *reinterpret_cast<const float4*>(&a_s[k][ty * 4]);
        float4 b = *reinterpret_cast<const float4*>(&b_s[k][tx * 4]);
        c[0][0] += a.x * b.x; c[0][1] += a.x * b.y; c[0][2] += a.x * b.z; c[0][3] += a.x * b.w;
        c[1][0] += a.y * b.x; c[1][1] += a.y * b.y; c[1][2] += a.y * b.z; c[1][3] += a.y * b.w;
        c[2][0] += a.z * b.x; c[2][1] += a.z * b.y; c[2][2] += a.z * b.z; c[2][3] += a.z * b.w;
        c[3][0] += a.w * b.x; c[3][1] += a.w * b.y; c[3][2] += a.w * b.z; c[3][3] += a.w * b.w;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            C[(ty * 4 + i) * ldc + tx * 4 + j] = c[i][j];
}

void run(const float* A, const float* B, float* C)
{
    micro_gemm<<<1, 256>>>(A, B, C, 64);
}
