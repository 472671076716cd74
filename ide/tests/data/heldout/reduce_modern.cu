// Block sum reduction: tree in shared memory down to one warp, then
// either __syncwarp-separated steps or a shuffle ladder.
#include <cuda_runtime.h>

#define BLOCK 256

__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

__global__ void reduce_syncwarp(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float s[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    s[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();

    for (int stride = BLOCK / 2; stride > 32; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }

    if (tid < 32) {
        float v = s[tid] + s[tid + 32];
        __syncwarp();
        s[tid] = v;
        __syncwarp();
        v += s[tid + 16]; __syncwarp(); s[tid] = v; __syncwarp();
        v += s[tid + 8];  __syncwarp(); s[tid] = v; __syncwarp();
        v += s[tid + 4];  __syncwarp(); s[tid] = v; __syncwarp();
        v += s[tid + 2];  __syncwarp(); s[tid] = v; __syncwarp();
        v += s[tid + 1];
        if (tid == 0) out[blockIdx.x] = v;
    }
}

__global__ void reduce_shuffle(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float warp_totals[BLOCK / 32];
    int tid = threadIdx.x;
    int lane = tid & 31;
    int warp = tid >> 5;
    float v = 0.0f;
    for (int i = blockIdx.x * BLOCK + tid; i < n; i += gridDim.x * BLOCK) v += in[i];
    v = warp_sum(v);
    if (lane == 0) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = (lane < BLOCK / 32) ? warp_totals[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) atomicAdd(out, v);
    }
}

void reduce(const float* in, float* out, int n)
{
    int blocks = (n + BLOCK - 1) / BLOCK;
    reduce_syncwarp<<<blocks, BLOCK>>>(in, out, n);
    reduce_shuffle<<<120, BLOCK>>>(in, out, n);
}
