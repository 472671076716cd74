// Row softmax, one warp per row, ported from a pre-Volta code base.
// (The mask-free intrinsics below do not build for sm_70+ targets.)
#include <cuda_runtime.h>
#include <float.h>

__device__ float warp_max(float v)
{
    for (int o = 16; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor(v, o));
    return v;
}

__device__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= rows) return;
    const float* xr = x + (size_t)warp * cols;
    float* yr = y + (size_t)warp * cols;

    float m = -FLT_MAX;
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
    m = warp_max(m);

    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += __expf(xr[c] - m);
    s = warp_sum(s);

    float inv = 1.0f / s;
    for (int c = lane; c < cols; c += 32) yr[c] = __expf(xr[c] - m) * inv;
}

void softmax(const float* x, float* y, int rows, int cols)
{
    int threads = 128;
    int blocks = (rows * 32 + threads - 1) / threads;
    softmax_rows<<<blocks, threads>>>(x, y, rows, cols);
}
