// Clean twin of block_sum_same_slot.cu: each block stores to its own slot.
#include <cstdio>
__global__ void block_sum(float* out, const float* in) {
    __shared__ float s[128];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 128 + tid];
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
int main() {
    float *in, *out;
    cudaMalloc(&in, 32 * 128 * sizeof(float));
    cudaMalloc(&out, 32 * sizeof(float));
    cudaMemset(in, 0, 32 * 128 * sizeof(float));
    block_sum<<<32, 128>>>(out, in);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
