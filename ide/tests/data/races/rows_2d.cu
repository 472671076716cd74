// Race (race/same-address-write): a 2-D block whose output index uses threadIdx.x only.
// Thread (0,1) and thread (0,0) both write out[0] (and so on for every row).
#include <cstdio>
__global__ void scale(float* out, const float* in, float f) {
    int x = threadIdx.x;
    out[blockIdx.x * 32 + x] = f * in[(blockIdx.x * 8 + threadIdx.y) * 32 + x]; // race: race/same-address-write
}
int main() {
    float *in, *out;
    cudaMalloc(&in, 16 * 256 * sizeof(float));
    cudaMalloc(&out, 16 * 256 * sizeof(float));
    cudaMemset(in, 0, 16 * 256 * sizeof(float));
    scale<<<16, dim3(32, 8)>>>(out, in, 2.0f);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
