__global__ void warns(float* out) {
    int i = threadIdx.x;
    int never_used;
    unsigned u = 3;
    if (i < u) out[i] = 1.0f;
}
