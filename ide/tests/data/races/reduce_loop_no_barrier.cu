// Race (race/shared-missing-barrier): tree reduction that lost the barrier inside its loop.
// Thread 64 writes s[64] (`s[tid] += ...`, step k = 128); thread 0 reads s[64]
// (`s[tid + k]`, step k = 64) in the next iteration with no barrier between.
#include <cstdio>
#define N (128 * 256)
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k]; // race: race/shared-missing-barrier
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
