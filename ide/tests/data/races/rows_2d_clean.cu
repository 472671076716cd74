// Clean twin of rows_2d.cu: the output index uses both thread dimensions.
#include <cstdio>
__global__ void scale(float* out, const float* in, float f) {
    int x = threadIdx.x;
    int row = blockIdx.x * 8 + threadIdx.y;
    out[row * 32 + x] = f * in[row * 32 + x];
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
