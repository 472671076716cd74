// Warp-level helpers with a compatibility path for old toolkits/targets.
#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#define SHFL_DOWN(v, d) __shfl_down(v, d)
#define BALLOT(p) __ballot(p)
#else
#define SHFL_DOWN(v, d) __shfl_down_sync(0xffffffffu, v, d)
#define BALLOT(p) __ballot_sync(0xffffffffu, p)
#endif

__device__ int warp_count(bool pred)
{
    return __popc(BALLOT(pred));
}

__device__ float warp_reduce(float v)
{
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) v += SHFL_DOWN(v, d);
    return v;
}

__global__ void histogram_threshold(const float* __restrict__ x, int n, float t,
                                    int* __restrict__ above, float* __restrict__ total)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? x[i] : 0.0f;
    int c = warp_count(v > t);
    float s = warp_reduce(v);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(above, c);
        atomicAdd(total, s);
    }
    unsigned active = __activemask();
    if (i < n && __any_sync(active, v < 0.0f) && (threadIdx.x & 31) == 0)
        atomicAdd(above + 1, 1);
}

void threshold(const float* x, int n, float t, int* above, float* total)
{
    histogram_threshold<<<(n + 255) / 256, 256>>>(x, n, t, above, total);
}
