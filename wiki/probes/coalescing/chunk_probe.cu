// Per-thread contiguous chunks against the coalesced layout, loads and stores.
//
// Every thread t of 2^20 (blocks of 256, every SM full) walks C elements of type T:
//   chunk   in[t * C + k]   (lanes C * sizeof(T) bytes apart at every k)
//   coal    in[k * n + t]   (lanes sizeof(T) bytes apart: the coalesced layout)
// for k = 0 .. C-1, as a load (summed into one float per thread) and as a store. The
// loop has a compile-time trip count, unrolled as a kernel author would write it.
// Nsight Compute gives, per kernel, the time, the L1 sectors, the L2 sectors from L1
// and the DRAM bytes; parse_ncu.py prints the chunked kernel's ratios to the coalesced one.
#include <cstdio>

template <typename T, int C>
__global__ void chunk_ld(const T* in, float* out) {
  long t = blockIdx.x * (long)blockDim.x + threadIdx.x;
  float acc = 0.f;
#pragma unroll 8
  for (int k = 0; k < C; ++k) acc += (float)in[t * C + k];
  out[t] = acc;
}

template <typename T, int C>
__global__ void coal_ld(const T* in, float* out, long n) {
  long t = blockIdx.x * (long)blockDim.x + threadIdx.x;
  float acc = 0.f;
#pragma unroll 8
  for (int k = 0; k < C; ++k) acc += (float)in[k * n + t];
  out[t] = acc;
}

template <typename T, int C>
__global__ void chunk_st(T* out) {
  long t = blockIdx.x * (long)blockDim.x + threadIdx.x;
#pragma unroll 8
  for (int k = 0; k < C; ++k) out[t * C + k] = (T)(t + k);
}

template <typename T, int C>
__global__ void coal_st(T* out, long n) {
  long t = blockIdx.x * (long)blockDim.x + threadIdx.x;
#pragma unroll 8
  for (int k = 0; k < C; ++k) out[k * n + t] = (T)(t + k);
}

template <typename T, int C>
void run(const char* type) {
  const long n = 1L << 20;
  T* buf;
  float* out;
  cudaMalloc(&buf, sizeof(T) * n * C);
  cudaMemset(buf, 1, sizeof(T) * n * C);
  cudaMalloc(&out, sizeof(float) * n);
  chunk_ld<T, C><<<n / 256, 256>>>(buf, out);
  coal_ld<T, C><<<n / 256, 256>>>(buf, out, n);
  chunk_st<T, C><<<n / 256, 256>>>(buf);
  coal_st<T, C><<<n / 256, 256>>>(buf, n);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s C=%d: %s\n", type, C, cudaGetErrorString(e));
  cudaFree(buf);
  cudaFree(out);
}

int main() {
  run<char, 4>("char"); run<char, 8>("char"); run<char, 16>("char");
  run<char, 32>("char"); run<char, 64>("char"); run<char, 256>("char");
  run<short, 4>("short"); run<short, 8>("short"); run<short, 16>("short");
  run<short, 32>("short");
  run<float, 2>("float"); run<float, 4>("float"); run<float, 8>("float");
  run<float, 16>("float"); run<float, 32>("float"); run<float, 64>("float");
  run<float, 256>("float");
  run<double, 2>("double"); run<double, 4>("double"); run<double, 8>("double");
  run<double, 16>("double"); run<double, 64>("double");
  return 0;
}
