// Stream compaction of positive values inside each warp.
#include <cuda_runtime.h>

__global__ void compact_positive(const int* __restrict__ in, int* __restrict__ out,
                                 int* __restrict__ counter, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = (i < n) ? in[i] : 0;
    bool keep = v > 0;

    unsigned int mask = __ballot(keep);
    int count = __popc(mask);
    int base = 0;
    if (lane == 0 && count) base = atomicAdd(counter, count);
    base = __shfl_sync(0xffffffffu, base, 0);
    if (keep) {
        int rank = __popc(mask & ((1u << lane) - 1));
        out[base + rank] = v;
    }
}

void compact(const int* in, int* out, int* counter, int n)
{
    compact_positive<<<(n + 255) / 256, 256>>>(in, out, counter, n);
}
