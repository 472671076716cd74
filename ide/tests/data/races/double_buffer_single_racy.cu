// Race (race/shared-missing-barrier): a "double-buffered" loop that prefetches the next
// tile into the buffer being read (`buf[t % 2]` where `buf[(t + 1) % 2]` is meant). In
// iteration t = 0, thread 1 writes buf[0][1] (the prefetch) and thread 0 reads buf[0][1]
// (`buf[t % 2][k]`, k = 1) in the same barrier interval.
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
        if (t + 1 < STEPS) buf[t % 2][tid] = x[(t + 1) * TILE + tid];
        for (int k = 0; k < TILE; ++k) acc += buf[t % 2][k] * w[k]; // race: race/shared-missing-barrier
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
