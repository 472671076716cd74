// Race (race/same-address-write): a block-local histogram of thread ids folded into 32
// bins with ++. Thread 32 and thread 0 both update bins[0].
#include <cstdio>
__global__ void fold(int* out) {
    __shared__ int bins[32];
    if (threadIdx.x < 32) bins[threadIdx.x] = 0;
    __syncthreads();
    bins[threadIdx.x % 32]++; // race: race/same-address-write
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
