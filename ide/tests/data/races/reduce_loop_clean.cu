// Clean twin of reduce_loop_no_barrier.cu: the barrier inside the loop orders each step's
// writes before the next step's reads.
#include <cstdio>
#define N (128 * 256)
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
int main() {
    float *in, *out;
    cudaMalloc(&in, N * sizeof(float));
    cudaMalloc(&out, 128 * sizeof(float));
    cudaMemset(in, 0, N * sizeof(float));
    reduce<<<128, 256>>>(out, in);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
