// Warp-specialised kernel: warps 0-3 produce into shared memory, warps 4-7
// consume; each half synchronises among itself with a named barrier that
// counts only its own 128 threads, and both halves meet at __syncthreads.
#include <cuda_runtime.h>

__device__ __forceinline__ void named_sync(int id, int nthreads)
{
    asm volatile("bar.sync %0, %1;\n" :: "r"(id), "r"(nthreads) : "memory");
}

__global__ void produce_consume(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float stage[128];
    __shared__ float result[128];
    const int warp = threadIdx.x / 32;
    const int t = threadIdx.x % 128;

    if (warp < 4) {
        int i = blockIdx.x * 128 + t;
        stage[t] = (i < n) ? in[i] * 2.0f : 0.0f;
        named_sync(1, 128);
        stage[t] += stage[(t + 1) % 128];
    }
    __syncthreads();
    if (warp >= 4) {
        result[t] = stage[t] * stage[127 - t];
        named_sync(2, 128);
        int i = blockIdx.x * 128 + t;
        if (i < n) out[i] = result[t] + result[(t + 64) % 128];
    }
}

void run(const float* in, float* out, int n)
{
    produce_consume<<<(n + 127) / 128, 256>>>(in, out, n);
}
