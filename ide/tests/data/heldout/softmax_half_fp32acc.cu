// fp16 in, fp16 out, fp32 inside: the running max stays in half (exact),
// the sum of exponentials is kept in float.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define THREADS 128

__global__ void softmax_fp16_f32acc(const __half* __restrict__ x, __half* __restrict__ y, int cols)
{
    __shared__ float scratch[THREADS / 32];
    const __half* row = x + (size_t)blockIdx.x * cols;
    int tid = threadIdx.x;

    __half hmax = __ushort_as_half((unsigned short)0xFBFFu);
    for (int c = tid; c < cols; c += THREADS) hmax = __hmax(hmax, row[c]);
    float m = __half2float(hmax);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((tid & 31) == 0) scratch[tid >> 5] = m;
    __syncthreads();
    m = fmaxf(fmaxf(scratch[0], scratch[1]), fmaxf(scratch[2], scratch[3]));
    __syncthreads();

    float acc = 0.0f;
    for (int c = tid; c < cols; c += THREADS) acc += __expf(__half2float(row[c]) - m);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((tid & 31) == 0) scratch[tid >> 5] = acc;
    __syncthreads();
    float inv = 1.0f / (scratch[0] + scratch[1] + scratch[2] + scratch[3]);

    for (int c = tid; c < cols; c += THREADS)
        y[(size_t)blockIdx.x * cols + c] = __float2half_rn(__expf(__half2float(row[c]) - m) * inv);
}

void softmax(const __half* x, __half* y, int rows, int cols)
{
    softmax_fp16_f32acc<<<rows, THREADS>>>(x, y, cols);
}
