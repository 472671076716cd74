// Clean twin of scan_inplace_racy.cu: each step reads into a register, synchronises, then
// writes, so no read and write of one element share a barrier interval.
#include <cstdio>
__global__ void scan(int* out, const int* in) {
    __shared__ int s[256];
    int tid = threadIdx.x;
    s[tid] = in[tid];
    __syncthreads();
    for (int off = 1; off < 256; off *= 2) {
        int add = 0;
        if (tid >= off) add = s[tid - off];
        __syncthreads();
        s[tid] += add;
        __syncthreads();
    }
    out[tid] = s[tid];
}
int main() {
    int *in, *out;
    cudaMalloc(&in, 256 * sizeof(int));
    cudaMalloc(&out, 256 * sizeof(int));
    cudaMemset(in, 0, 256 * sizeof(int));
    scan<<<1, 256>>>(out, in);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
