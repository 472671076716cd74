// All-pairs n-body force accumulation with a shared-memory tile of bodies.
#include <cuda_runtime.h>

#define TILE_BODIES 128

__global__ void nbody_forces(const float4* __restrict__ pos, float3* __restrict__ acc_out, int n, float soft2)
{
    __shared__ float4 tile[TILE_BODIES];
    int i = blockIdx.x * TILE_BODIES + threadIdx.x;
    float4 me = (i < n) ? pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float ax = 0.f, ay = 0.f, az = 0.f;

    for (int t = 0; t < n; t += TILE_BODIES) {
        tile[threadIdx.x] = (t + threadIdx.x < n) ? pos[t + threadIdx.x] : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
#pragma unroll 64
        for (int j = 0; j < TILE_BODIES; ++j) {
            float4 o = tile[j];
            float dx = o.x - me.x;
            float dy = o.y - me.y;
            float dz = o.z - me.z;
            float r2 = dx * dx + dy * dy + dz * dz + soft2;
            float inv = rsqrtf(r2);
            float inv3 = inv * inv * inv;
            float s = o.w * inv3;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
    if (i < n) acc_out[i] = make_float3(ax, ay, az);
}

void forces(const float4* pos, float3* acc, int n)
{
    nbody_forces<<<(n + TILE_BODIES - 1) / TILE_BODIES, TILE_BODIES>>>(pos, acc, n, 1e-3f);
}
