// Copy column `c` of a row-major matrix (leading dimension ld) into a
// contiguous vector, and scale a row-major matrix by per-row factors.
#include <cuda_runtime.h>

__global__ void extract_column(const float* __restrict__ mat, float* __restrict__ col_out,
                               int rows, int ld, int c)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) col_out[r] = mat[(size_t)r * ld + c];
}

__global__ void scale_rows(float* __restrict__ mat, const float* __restrict__ factor, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (c < cols) mat[(size_t)r * cols + c] *= factor[r];
}

void column(const float* mat, float* out, int rows, int ld, int c)
{
    extract_column<<<(rows + 255) / 256, 256>>>(mat, out, rows, ld, c);
}

void scale(float* mat, const float* f, int rows, int cols)
{
    dim3 grid((cols + 255) / 256, rows);
    scale_rows<<<grid, 256>>>(mat, f, rows, cols);
}
