// fp16 softmax over the last dimension, one block per row.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int kThreads = 256;

__global__ void softmax_fp16(const __half* __restrict__ x, __half* __restrict__ y, int cols)
{
    __shared__ float red[kThreads / 32];
    const __half* row = x + (size_t)blockIdx.x * cols;
    __half* out = y + (size_t)blockIdx.x * cols;
    int tid = threadIdx.x;

    __half mx = __float2half(-65504.0f);
    for (int c = tid; c < cols; c += kThreads) mx = __hmax(mx, row[c]);
    float m = __half2float(mx);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    if ((tid & 31) == 0) red[tid / 32] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < kThreads / 32; ++w) m = fmaxf(m, red[w]);
    __syncthreads();

    __half sum = __float2half(0.0f);
    for (int c = tid; c < cols; c += kThreads) {
        __half e = hexp(__hsub(row[c], __float2half(m)));
        sum = __hadd(sum, e);
    }
    float s = __half2float(sum);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    if ((tid & 31) == 0) red[tid / 32] = s;
    __syncthreads();
    s = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) s += red[w];

    float inv = 1.0f / s;
    for (int c = tid; c < cols; c += kThreads)
        out[c] = __float2half(__expf(__half2float(row[c]) - m) * inv);
}

void softmax(const __half* x, __half* y, int rows, int cols)
{
    softmax_fp16<<<rows, kThreads>>>(x, y, cols);
}
