// What the runtime answers to launches outside the device's limits: the error of each
// launch (cudaGetLastError right after it), on the device the probe runs on.
#include <cstdio>

__global__ void plain(int* out) {
  if (out) out[0] = 1;
}
__global__ void __launch_bounds__(128) bounded(int* out) {
  if (out) out[0] = 1;
}

static void report(const char* what) {
  cudaError_t launch = cudaGetLastError();
  cudaError_t sync = cudaDeviceSynchronize();
  printf("%-44s launch: %-32s %s | sync: %s\n", what, cudaGetErrorName(launch),
         cudaGetErrorString(launch), cudaGetErrorName(sync));
}

int main() {
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  printf("%s, CC %d.%d: maxThreadsPerBlock %d, maxThreadsDim %d %d %d, maxGridSize %d %d %d\n",
         p.name, p.major, p.minor, p.maxThreadsPerBlock, p.maxThreadsDim[0], p.maxThreadsDim[1],
         p.maxThreadsDim[2], p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
  plain<<<1, 1024>>>(nullptr);                report("block 1024");
  plain<<<1, 1025>>>(nullptr);                report("block 1025");
  plain<<<1, dim3(64, 64)>>>(nullptr);        report("block 64x64");
  plain<<<1, dim3(32, 32)>>>(nullptr);        report("block 32x32");
  plain<<<1, dim3(1, 1, 64)>>>(nullptr);      report("block 1x1x64");
  plain<<<1, dim3(1, 1, 65)>>>(nullptr);      report("block 1x1x65");
  plain<<<1, dim3(1, 1025)>>>(nullptr);       report("block 1x1025");
  plain<<<1, 0>>>(nullptr);                   report("block 0");
  plain<<<0, 32>>>(nullptr);                  report("grid 0");
  plain<<<dim3(1, 65535), 32>>>(nullptr);     report("grid 1x65535");
  plain<<<dim3(1, 65536), 32>>>(nullptr);     report("grid 1x65536");
  plain<<<dim3(1, 1, 65536), 32>>>(nullptr);  report("grid 1x1x65536");
  plain<<<dim3(2147483647u), 32>>>(nullptr);  report("grid 2147483647");
  bounded<<<1, 128>>>(nullptr);               report("__launch_bounds__(128), block 128");
  bounded<<<1, 256>>>(nullptr);               report("__launch_bounds__(128), block 256");
  bounded<<<1, dim3(16, 16)>>>(nullptr);      report("__launch_bounds__(128), block 16x16");
  return 0;
}
