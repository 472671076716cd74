// y = a * x + y over bf16 vectors, two values at a time.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void axpy_bf16x2(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y,
                            __nv_bfloat16 a, int n)
{
    const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(x);
    __nv_bfloat162* y2 = reinterpret_cast<__nv_bfloat162*>(y);
    __nv_bfloat162 a2 = __bfloat162bfloat162(a);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) y2[i] = __hfma2(a2, x2[i], y2[i]);
}

void axpy(const __nv_bfloat16* x, __nv_bfloat16* y, __nv_bfloat16 a, int n)
{
    axpy_bf16x2<<<(n / 2 + 255) / 256, 256>>>(x, y, a, n);
}
