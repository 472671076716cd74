// Race (race/global-neighbour): an in-place shift. Thread 31 reads a[32] (`a[i + 1]`) and
// thread 32 writes a[32] (`a[i]`), in different warps of block 0; thread 127 of block 0
// reads a[128], which thread 0 of block 1 writes.
#include <cstdio>
#define N 512
__global__ void shift(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) a[i] = a[i + 1]; // race: race/global-neighbour
}
int main() {
    float* a;
    cudaMalloc(&a, N * sizeof(float));
    cudaMemset(a, 0, N * sizeof(float));
    shift<<<N / 128, 128>>>(a, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
