// Dynamic shared memory carved into an int flag array of 33 entries (a
// float-aligned offset is all the float region needs), then a float4 region
// rounded up to 16 bytes.
#include <cuda_runtime.h>

constexpr int kFlags = 33;
constexpr int kFlagBytes = kFlags * sizeof(int);               // 132
constexpr int kVecOffset = (kFlagBytes + 15) / 16 * 16;        // 144

__global__ void gather_flags(const float4* __restrict__ in, const int* __restrict__ keep,
                             float* __restrict__ out, int n)
{
    extern __shared__ unsigned char smem[];
    int* flags = reinterpret_cast<int*>(smem);
    float* weights = reinterpret_cast<float*>(smem + kFlagBytes);
    float4* vec = reinterpret_cast<float4*>(smem + kVecOffset);

    if (threadIdx.x < kFlags) flags[threadIdx.x] = keep[(blockIdx.x * kFlags + threadIdx.x) % n];
    if (threadIdx.x < 2) weights[threadIdx.x] = 0.5f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    vec[threadIdx.x] = (i < n) ? in[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
    float4 v = vec[threadIdx.x];
    float w = flags[threadIdx.x % kFlags] ? weights[0] : weights[1];
    if (i < n) out[i] = w * (v.x + v.y + v.z + v.w);
}

void gather(const float4* in, const int* keep, float* out, int n)
{
    gather_flags<<<(n + 127) / 128, 128, kVecOffset + 128 * sizeof(float4)>>>(in, keep, out, n);
}
