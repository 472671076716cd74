// Per-block scratch for a segmented scan: a float row with one padding
// word, followed by float4 staging.  The float4 region starts right after
// the padded row.
#include <cuda_runtime.h>

#define ROW 32

__global__ void seg_scan(const float4* __restrict__ in, float* __restrict__ out, int n4)
{
    extern __shared__ unsigned char scratch[];
    float* row = reinterpret_cast<float*>(scratch);
    float4* stage = reinterpret_cast<float4*>(scratch + (ROW + 1) * sizeof(float));

    int i = blockIdx.x * blockDim.x + threadIdx.x;
    stage[threadIdx.x] = (i < n4) ? in[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
    float4 v = stage[threadIdx.x];
    float s = v.x + v.y + v.z + v.w;
    if (threadIdx.x < ROW) row[threadIdx.x] = 0.0f;
    __syncthreads();
    atomicAdd(&row[threadIdx.x % ROW], s);
    __syncthreads();
    if (threadIdx.x < ROW) out[blockIdx.x * ROW + threadIdx.x] = row[threadIdx.x];
}

void scan(const float4* in, float* out, int n4)
{
    size_t bytes = (ROW + 1) * sizeof(float) + 256 * sizeof(float4);
    seg_scan<<<(n4 + 255) / 256, 256, bytes>>>(in, out, n4);
}
