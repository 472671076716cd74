// Clean twin of histogram_bins_by_thread.cu: atomicAdd on the shared bins.
#include <cstdio>
__global__ void fold(int* out) {
    __shared__ int bins[32];
    if (threadIdx.x < 32) bins[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&bins[threadIdx.x % 32], 1);
    __syncthreads();
    if (threadIdx.x < 32) out[blockIdx.x * 32 + threadIdx.x] = bins[threadIdx.x];
}
int main() {
    int* out;
    cudaMalloc(&out, 8 * 32 * sizeof(int));
    fold<<<8, 128>>>(out);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
