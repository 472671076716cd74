// Race (race/shared-missing-barrier): thread 0 publishes a block-wide scale in a __shared__
// scalar, and the other threads read it with no barrier. Thread 0 writes `scale`; thread 1
// reads `scale` (read after write).
#include <cstdio>
__global__ void normalise(float* out, const float* in, const float* norms) {
    __shared__ float scale;
    if (threadIdx.x == 0) scale = 1.0f / norms[blockIdx.x];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i] * scale; // race: race/shared-missing-barrier
}
int main() {
    float *in, *out, *norms;
    cudaMalloc(&in, 64 * 256 * sizeof(float));
    cudaMalloc(&out, 64 * 256 * sizeof(float));
    cudaMalloc(&norms, 64 * sizeof(float));
    cudaMemset(in, 0, 64 * 256 * sizeof(float));
    cudaMemset(norms, 0, 64 * sizeof(float));
    normalise<<<64, 256>>>(out, in, norms);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
