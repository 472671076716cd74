// Backs pitfall-bank-conflict#P7 (see README.md, "Tree loops").
// Tree reductions and scans whose stride doubles or halves each step: one block of one
// warp per kernel, so that warp 0, which kernaut models, is every thread. Each kernel
// fills 64 words of shared memory (2 conflict-free stores), runs the loop, and writes
// the 64 words back (2 conflict-free loads): the loop's wavefronts are the counters'
// totals less 2 loads and 2 stores.
//
//   tree_probe   launches each kernel once (run it under ncu, see run_tree.sh)
#include <cuda_runtime.h>
#include <cstdio>

#define N 64

// Up-sweep of a work-efficient scan: the stride `offset` doubles as the active threads halve.
__global__ void upsweep(const float* in, float* out) {
  __shared__ float t[N];
  int tid = threadIdx.x;
  t[tid] = in[tid];
  t[tid + 32] = in[tid + 32];
  int offset = 1;
  for (int d = N >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (tid < d) {
      int ai = offset * (2 * tid + 1) - 1;
      int bi = offset * (2 * tid + 2) - 1;
      t[bi] += t[ai];
    }
    offset *= 2;
  }
  __syncthreads();
  out[tid] = t[tid];
  out[tid + 32] = t[tid + 32];
}

// Down-sweep with the guard on the index: fewer lanes at a wider stride each step.
__global__ void downsweep(const float* in, float* out) {
  __shared__ float a[N];
  a[threadIdx.x] = in[threadIdx.x];
  a[threadIdx.x + 32] = in[threadIdx.x + 32];
  __syncthreads();
  for (int s = N >> 2; s > 0; s >>= 1) {
    int i = (threadIdx.x + 1) * s * 2 - 1;
    if (i + s < N) a[i + s] += a[i];
    __syncthreads();
  }
  out[threadIdx.x] = a[threadIdx.x];
  out[threadIdx.x + 32] = a[threadIdx.x + 32];
}

// Interleaved reduction with a strided index (`index = 2 * s * tid`).
__global__ void interleaved(const float* in, float* out) {
  __shared__ float r[N];
  unsigned tid = threadIdx.x;
  r[tid] = in[tid];
  r[tid + 32] = in[tid + 32];
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < blockDim.x) r[index] += r[index + s];
    __syncthreads();
  }
  out[tid] = r[tid];
  out[tid + 32] = r[tid + 32];
}

// The interleaved reduction's warp 0 over 1024 words: the stride doubles while the guard
// leaves fewer lanes (2-, 4-, 8-, 16-, 32-way, then fewer lanes). Fill: 32 conflict-free
// stores; write-back: 1 conflict-free load.
__global__ void interleaved_wide(const float* in, float* out) {
  __shared__ float w[1024];
  unsigned tid = threadIdx.x;
  for (unsigned k = tid; k < 1024; k += 32) w[k] = in[k % N];
  __syncthreads();
  for (unsigned s = 1; s < 1024; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < 1024) w[index] += w[index + s];
    __syncthreads();
  }
  out[tid] = w[tid];
}

// Sequential addressing: conflict-free at every step (the control).
__global__ void sequential(const float* in, float* out) {
  __shared__ float q[N];
  unsigned tid = threadIdx.x;
  q[tid] = in[tid];
  q[tid + 32] = in[tid + 32];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) q[tid] += q[tid + s];
    __syncthreads();
  }
  out[tid] = q[tid];
  out[tid + 32] = q[tid + 32];
}

int main() {
  float *in, *out;
  cudaMalloc(&in, N * sizeof(float));
  cudaMalloc(&out, N * sizeof(float));
  cudaMemset(in, 0, N * sizeof(float));
  upsweep<<<1, 32>>>(in, out);
  downsweep<<<1, 32>>>(in, out);
  interleaved<<<1, 32>>>(in, out);
  interleaved_wide<<<1, 32>>>(in, out);
  sequential<<<1, 32>>>(in, out);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
