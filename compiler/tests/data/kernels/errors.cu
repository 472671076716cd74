__global__ void broken(float* out) {
    int i = threadIdx.x;
    out[i] = undefined_name * 2.0f;
    int unused_variable;
}

__global__ void also_broken(int* p) {
    p[0] = 1
}
