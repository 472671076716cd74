// Clean twin of reduce_last_warp_plain.cu: the last warp reduces in registers with
// __shfl_down_sync, so no thread reads shared memory another thread writes.
#include <cstdio>
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[128];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 128 + tid];
    __syncthreads();
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
    if (tid < 32) {
        float v = s[tid] + s[tid + 32];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (tid == 0) out[blockIdx.x] = v;
    }
}
int main() {
    float *in, *out;
    cudaMalloc(&in, 64 * 128 * sizeof(float));
    cudaMalloc(&out, 64 * sizeof(float));
    cudaMemset(in, 0, 64 * 128 * sizeof(float));
    reduce<<<64, 128>>>(out, in);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
