// Race (race/same-address-write): each block's thread 0 stores its partial sum to out[0].
// Thread 0 of block 1 and thread 0 of block 0 both write out[0].
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
    if (tid == 0) out[0] = s[0]; // race: race/same-address-write
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
