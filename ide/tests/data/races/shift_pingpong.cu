// Clean twin of shift_inplace.cu: read one buffer, write another.
#include <cstdio>
#define N 512
__global__ void shift(float* b, const float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) b[i] = a[i + 1];
}
int main() {
    float *a, *b;
    cudaMalloc(&a, N * sizeof(float));
    cudaMalloc(&b, N * sizeof(float));
    cudaMemset(a, 0, N * sizeof(float));
    shift<<<N / 128, 128>>>(b, a, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
