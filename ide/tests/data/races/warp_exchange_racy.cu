// Race (race/shared-missing-barrier): warp-level exchange through shared memory without
// __syncwarp(). In warp 0, thread 1 writes s[1] (`s[base + lane]`) and thread 0 reads s[1]
// (`s[base + (lane + 1) % 32]`) with nothing ordering them: both in one warp, so
// __syncwarp() is the fix.
#include <cstdio>
__global__ void rotate(float* out, const float* in) {
    __shared__ float s[128];
    int lane = threadIdx.x % 32;
    int base = (threadIdx.x / 32) * 32;
    s[base + lane] = in[blockIdx.x * 128 + threadIdx.x];
    out[blockIdx.x * 128 + threadIdx.x] = s[base + (lane + 1) % 32]; // race: race/shared-missing-barrier
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
