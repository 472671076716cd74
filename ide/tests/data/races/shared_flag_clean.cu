// Clean twin of shared_flag.cu: one thread stores the scalar.
#include <cstdio>
__global__ void last_index(int* out) {
    __shared__ int last;
    if (threadIdx.x == blockDim.x - 1) last = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = last;
}
int main() {
    int* out;
    cudaMalloc(&out, 16 * sizeof(int));
    last_index<<<16, 64>>>(out);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
