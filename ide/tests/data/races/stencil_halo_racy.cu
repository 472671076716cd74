// Race (race/shared-missing-barrier): 1-D stencil whose halo is loaded by the first
// RADIUS threads, and whose stencil reads the neighbours' elements with no barrier.
// Thread 1 writes s[4] (`s[tid] = ...`); thread 0 reads s[4] (`s[tid + k]`, k = 1) with
// no barrier between (read after write); likewise thread 0 writes the halo s[0] and
// thread 0..2 read it.
#include <cstdio>
#define RADIUS 3
#define BLOCK 128
#define N (BLOCK * 64)
__global__ void stencil(float* out, const float* in) {
    __shared__ float s[BLOCK + 2 * RADIUS];
    int g = blockIdx.x * BLOCK + threadIdx.x;
    int tid = threadIdx.x + RADIUS;
    s[tid] = in[g + RADIUS];
    if (threadIdx.x < RADIUS) {
        s[threadIdx.x] = in[g];
        s[tid + BLOCK] = in[g + BLOCK + RADIUS];
    }
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k) sum += s[tid + k]; // race: race/shared-missing-barrier
    out[g] = sum;
}
int main() {
    float *in, *out;
    cudaMalloc(&in, (N + 2 * RADIUS) * sizeof(float));
    cudaMalloc(&out, N * sizeof(float));
    cudaMemset(in, 0, (N + 2 * RADIUS) * sizeof(float));
    stencil<<<N / BLOCK, BLOCK>>>(out, in);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
