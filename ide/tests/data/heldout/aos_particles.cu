// Particle update over an array of structures: x, y, z, vx, vy, vz, mass,
// charge per particle.  Position update only touches x, y, z and vx, vy, vz
// (all six read and written), the energy kernel reads only the mass.
#include <cuda_runtime.h>

#define FIELDS 8

__global__ void advance(float* __restrict__ p, int n, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float* q = p + i * FIELDS;
    q[0] += dt * q[3];
    q[1] += dt * q[4];
    q[2] += dt * q[5];
}

__global__ void total_mass(const float* __restrict__ p, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float m = (i < n) ? p[i * FIELDS + 6] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) m += __shfl_down_sync(0xffffffffu, m, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, m);
}

void step(float* p, float* mass, int n, float dt)
{
    advance<<<(n + 127) / 128, 128>>>(p, n, dt);
    total_mass<<<(n + 127) / 128, 128>>>(p, mass, n);
}
