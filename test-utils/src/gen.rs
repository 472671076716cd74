//! Generated CUDA files for tests and benchmarks: kernels of about 50 lines that
//! exercise every rule, and the same constructs written correctly.

/// One kernel of about 50 lines that exercises every rule.
pub fn kernel(i: usize) -> String {
    format!(
        r#"#define TILE_{i} 32
__global__ void kernel_{i}(float* out, const float* in, int n) {{
    __shared__ float tile[TILE_{i}][TILE_{i}];
    __shared__ __half acc_h[256];
    int tx = threadIdx.x, ty = threadIdx.y;
    tile[ty][tx] = in[ty * n + tx];
    __syncthreads();
    __half acc = __float2half(0.0f);
    for (int k = 0; k < 32; ++k) {{
        acc = __hadd(acc, __float2half(tile[k][tx]));
    }}
    if (tx < 16) {{
        __syncthreads();
    }}
    float v = __shfl_down(tile[tx][ty], 1);
    #pragma unroll 32
    for (int k = 0; k < 64; ++k) {{
        v += tile[tx][k % 32] * 2.0f;
        v += tile[k % 32][tx] * 3.0f;
        v += tile[ty][k % 32] * 4.0f;
        v += tile[(k + 1) % 32][tx] * 5.0f;
        v += tile[(k + 2) % 32][tx] * 6.0f;
        v += tile[(k + 3) % 32][tx] * 7.0f;
    }}
    for (int s = 0; s < n; ++s) {{
        __pipeline_memcpy_async(&tile[ty][tx], &in[s * 32 + tx], 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        v += tile[ty][(tx + 1) % 32];
    }}
    acc_h[tx] = acc;
    out[ty * n + tx] = v + __half2float(acc_h[tx]);
}}

void launch_{i}(float* out, const float* in, int n) {{
    dim3 block(32, 8);
    kernel_{i}<<<n, block, 64 * 1024>>>(out, in, n);
}}

"#
    )
}

/// The same constructs written correctly: what most of a real file looks like.
pub fn clean_kernel(i: usize) -> String {
    format!(
        r#"#define TILE_{i} 32
__global__ void clean_{i}(float* out, const float* in, int n) {{
    __shared__ float tile[TILE_{i}][TILE_{i} + 1];
    __shared__ float buf[2][256];
    int tx = threadIdx.x, ty = threadIdx.y;
    tile[ty][tx] = in[ty * n + tx];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < 32; ++k) {{
        acc += tile[k][tx];
    }}
    if (tx < 16) {{
        acc *= 2.0f;
    }}
    __syncthreads();
    float v = __shfl_down_sync(0xffffffff, tile[tx][ty], 1);
    #pragma unroll 4
    for (int k = 0; k < 64; ++k) {{
        v += tile[tx][k % 32] * 2.0f;
        v += tile[k % 32][tx] * 3.0f;
    }}
    __pipeline_memcpy_async(&buf[0][tx], &in[tx], 4);
    __pipeline_commit();
    for (int s = 0; s < n; ++s) {{
        __pipeline_wait_prior(0);
        __syncthreads();
        __pipeline_memcpy_async(&buf[(s + 1) % 2][tx], &in[(s + 1) * 32 + tx], 4);
        __pipeline_commit();
        v += buf[s % 2][(tx + 1) % 256];
    }}
    out[ty * n + tx] = v + acc;
}}

void launch_clean_{i}(float* out, const float* in, int n) {{
    dim3 block(32, 8);
    clean_{i}<<<n, block, 32 * 1024>>>(out, in, n);
}}

"#
    )
}

/// A file of at least `lines` lines of [`kernel`]s.
pub fn generated(lines: usize) -> String {
    generated_with(lines, kernel)
}

/// A file of at least `lines` lines made by `make`.
pub fn generated_with(lines: usize, make: fn(usize) -> String) -> String {
    let mut text = String::from("#include <cuda_fp16.h>\n");
    let mut i = 0;
    while text.lines().count() < lines {
        text.push_str(&make(i));
        i += 1;
    }
    text
}
