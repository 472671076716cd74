// Known case: a kernel that keeps a large per-thread array indexed at run time, under a
// launch bound that leaves few registers: ptxas places the array in local memory and
// spills. With a toolkit, `-Xptxas -v` reports the spill bytes the report ranks first.
#include <cstdio>
#include <cuda_runtime.h>

#define K 64

__global__ void __launch_bounds__(1024, 2) spill_heavy(float* out, const float* in, int n) {
    float v[K];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int i = 0; i < K; ++i) {
        v[i] = in[t + i * n];
    }
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i) {
        for (int j = 0; j < K; ++j) {
            acc += v[i] * v[(i * 7 + j) % K];
        }
    }
    out[t] = acc;
}

int main() {
    const int n = 1 << 16;
    float *in, *out;
    cudaMalloc(&in, sizeof(float) * n * K);
    cudaMalloc(&out, sizeof(float) * n);
    spill_heavy<<<n / 1024, 1024>>>(out, in, n);
    cudaError_t err = cudaDeviceSynchronize();
    printf("spill_heavy: %s\n", cudaGetErrorString(err));
    cudaFree(in);
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
