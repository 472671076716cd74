#include <cstdint>

__constant__ float coeffs[64];

// A kernel that does not spill.
__global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] * coeffs[i & 63];
}

// A template with two instantiations and static shared memory.
template <int TILE, typename T>
__global__ void transpose(T* out, const T* in, int n) {
    __shared__ T tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[x * n + y] = tile[threadIdx.x][threadIdx.y];
}

template __global__ void transpose<32, float>(float*, const float*, int);
template __global__ void transpose<16, double>(double*, const double*, int);

namespace ops {
struct Params { int n; float scale; };
__global__ void scale(Params p, float* data) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) data[i] *= p.scale;
}
}
