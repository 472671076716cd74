// Clean twin of double_buffer_single_racy.cu: the prefetch goes to the other buffer, and
// one barrier per iteration separates each buffer's writes from its reads.
#include <cstdio>
#define TILE 64
#define STEPS 16
__global__ void dot_tiles(float* out, const float* x, const float* w) {
    __shared__ float buf[2][TILE];
    int tid = threadIdx.x;
    float acc = 0.0f;
    buf[0][tid] = x[tid];
    __syncthreads();
    for (int t = 0; t < STEPS; ++t) {
        if (t + 1 < STEPS) buf[(t + 1) % 2][tid] = x[(t + 1) * TILE + tid];
        for (int k = 0; k < TILE; ++k) acc += buf[t % 2][k] * w[k];
        __syncthreads();
    }
    out[blockIdx.x * TILE + tid] = acc;
}
int main() {
    float *x, *w, *out;
    cudaMalloc(&x, STEPS * TILE * sizeof(float));
    cudaMalloc(&w, TILE * sizeof(float));
    cudaMalloc(&out, 4 * TILE * sizeof(float));
    cudaMemset(x, 0, STEPS * TILE * sizeof(float));
    cudaMemset(w, 0, TILE * sizeof(float));
    dot_tiles<<<4, TILE>>>(out, x, w);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
