// Clean twin of warp_exchange_racy.cu: __syncwarp() orders the warp's writes before its
// reads.
#include <cstdio>
__global__ void rotate(float* out, const float* in) {
    __shared__ float s[128];
    int lane = threadIdx.x % 32;
    int base = (threadIdx.x / 32) * 32;
    s[base + lane] = in[blockIdx.x * 128 + threadIdx.x];
    __syncwarp();
    out[blockIdx.x * 128 + threadIdx.x] = s[base + (lane + 1) % 32];
}
int main() {
    float *in, *out;
    cudaMalloc(&in, 8 * 128 * sizeof(float));
    cudaMalloc(&out, 8 * 128 * sizeof(float));
    cudaMemset(in, 0, 8 * 128 * sizeof(float));
    rotate<<<8, 128>>>(out, in);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
