// Race (race/shared-missing-barrier): Hillis-Steele scan updated in place. In step
// off = 1, thread 2 reads s[1] (`s[tid - off]`) while thread 1 writes s[1]
// (`s[tid] += ...`) in the same step, with no barrier between the read of one thread and
// the write of the other.
#include <cstdio>
__global__ void scan(int* out, const int* in) {
    __shared__ int s[256];
    int tid = threadIdx.x;
    s[tid] = in[tid];
    __syncthreads();
    for (int off = 1; off < 256; off *= 2) {
        if (tid >= off) s[tid] += s[tid - off]; // race: race/shared-missing-barrier
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
