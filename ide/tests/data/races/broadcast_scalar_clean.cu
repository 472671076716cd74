// Clean twin of broadcast_scalar_racy.cu: __syncthreads() after thread 0 stores the scale.
#include <cstdio>
__global__ void normalise(float* out, const float* in, const float* norms) {
    __shared__ float scale;
    if (threadIdx.x == 0) scale = 1.0f / norms[blockIdx.x];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i] * scale;
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
