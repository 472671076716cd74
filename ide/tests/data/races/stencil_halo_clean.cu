// Clean twin of stencil_halo_racy.cu: __syncthreads() after the tile and its halo are
// loaded.
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
    __syncthreads();
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k) sum += s[tid + k];
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
