// Race (race/same-address-write, a hint: the collision depends on the data): a shared
// histogram bumped with ++. Two threads whose inputs are equal (here every input is 7:
// thread 0 and thread 1 both update hist[7]) lose an increment.
#include <cstdio>
#define N 4096
__global__ void histogram(unsigned* out, const unsigned char* in, int n) {
    __shared__ unsigned hist[256];
    hist[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) hist[in[i]]++; // race: race/same-address-write
    __syncthreads();
    atomicAdd(&out[threadIdx.x], hist[threadIdx.x]);
}
int main() {
    unsigned* out; unsigned char* in;
    cudaMalloc(&out, 256 * sizeof(unsigned));
    cudaMalloc(&in, N);
    cudaMemset(in, 7, N);
    cudaMemset(out, 0, 256 * sizeof(unsigned));
    histogram<<<N / 256, 256>>>(out, in, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
