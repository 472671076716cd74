// Race (race/shared-missing-barrier): the "last warp" unrolled on a non-volatile shared
// array with no __syncwarp() between the steps. Thread 16 writes s[16] (`s[tid] += s[tid + 32]`)
// and thread 0 reads s[16] (`s[tid + 16]`) in the next step, both in warp 0; each later
// step races the same way with the one before it (thread 8 and thread 0 on s[8], ...).
#include <cstdio>
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[128];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 128 + tid];
    __syncthreads();
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
    if (tid < 32) {
        s[tid] += s[tid + 32];
        s[tid] += s[tid + 16]; // race: race/shared-missing-barrier
        s[tid] += s[tid + 8]; // race: race/shared-missing-barrier
        s[tid] += s[tid + 4]; // race: race/shared-missing-barrier
        s[tid] += s[tid + 2]; // race: race/shared-missing-barrier
        s[tid] += s[tid + 1]; // race: race/shared-missing-barrier
    }
    if (tid == 0) out[blockIdx.x] = s[0];
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
