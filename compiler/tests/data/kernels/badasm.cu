__global__ void bad_asm(int* p) {
    int v;
    asm volatile("mov.u32 %0, %%nonexistent_reg;" : "=r"(v));
    p[threadIdx.x] = v;
}
