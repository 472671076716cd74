// A kernel written to spill: a big per-thread array indexed dynamically,
// and a launch bound that caps registers.
__global__ void __launch_bounds__(1024, 2) spills(float* out, const float* in, int k) {
    float acc[40];
#pragma unroll
    for (int j = 0; j < 40; ++j) acc[j] = in[threadIdx.x + j * 1024];
    float s = 0.f;
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int j = 0; j < 40; ++j) s += acc[j] * acc[(j + r) % 40];
    out[threadIdx.x] = s + acc[k % 40];
}

__device__ __noinline__ float helper(float* p, int k) {
    float local[32];
    for (int j = 0; j < 32; ++j) local[j] = p[j] * j;
    return local[k & 31];
}

__global__ void calls_helper(float* p, int k) {
    p[threadIdx.x] = helper(p, k + threadIdx.x);
}
