// LayerNorm forward for bf16 activations, one warp per row.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

using bf16 = __nv_bfloat16;

__global__ void layernorm_fwd_bf16(const bf16* __restrict__ x, const bf16* __restrict__ gamma,
                                   const bf16* __restrict__ beta, bf16* __restrict__ y,
                                   int rows, int dim, float eps)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const bf16* xr = x + (size_t)row * dim;

    bf16 partial = __float2bfloat16(0.0f);
    for (int i = lane; i < dim; i += 32) {
        partial += xr[i];
    }
    float mean = __bfloat162float(partial);
    for (int o = 16; o; o >>= 1) mean += __shfl_xor_sync(0xffffffffu, mean, o);
    mean /= dim;

    float var = 0.0f;
    for (int i = lane; i < dim; i += 32) {
        float d = __bfloat162float(xr[i]) - mean;
        var += d * d;
    }
    for (int o = 16; o; o >>= 1) var += __shfl_xor_sync(0xffffffffu, var, o);
    float rstd = rsqrtf(var / dim + eps);

    for (int i = lane; i < dim; i += 32) {
        float v = (__bfloat162float(xr[i]) - mean) * rstd;
        y[(size_t)row * dim + i] = __float2bfloat16(v * __bfloat162float(gamma[i]) + __bfloat162float(beta[i]));
    }
}

void layernorm(const bf16* x, const bf16* g, const bf16* b, bf16* y, int rows, int dim)
{
    layernorm_fwd_bf16<<<(rows + 3) / 4, 128>>>(x, g, b, y, rows, dim, 1e-5f);
}
