// Race (race/same-address-write): every thread stores its index into one __shared__
// scalar. Thread 1 and thread 0 both write `last`.
#include <cstdio>
__global__ void last_index(int* out) {
    __shared__ int last;
    last = threadIdx.x; // race: race/same-address-write
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
