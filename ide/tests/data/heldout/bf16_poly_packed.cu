// Evaluate a degree-8 polynomial on bf16 pairs with Horner's scheme: each
// loaded pair feeds eight packed FMAs held in registers.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

typedef __nv_bfloat162 bf2;

__constant__ float c_coef[9];

__global__ void poly8_bf16x2(const bf2* __restrict__ x, bf2* __restrict__ y, int n2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    bf2 v = x[i];
    bf2 r = __float2bfloat162_rn(c_coef[8]);
#pragma unroll
    for (int k = 7; k >= 0; --k)
        r = __hfma2(r, v, __float2bfloat162_rn(c_coef[k]));
    y[i] = r;
}

void poly(const bf2* x, bf2* y, int n2)
{
    poly8_bf16x2<<<(n2 + 255) / 256, 256>>>(x, y, n2);
}
