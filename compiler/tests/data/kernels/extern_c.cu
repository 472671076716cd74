namespace {
__global__ void hidden(int* p) { p[0] = 1; }
}
extern "C" __global__ void c_kernel(int* p) { p[0] = 2; }
__device__ int counter;
__device__ float table[256];
struct S { template <class T> __device__ static T twice(T v) { return v + v; } };
template <class F> __global__ void apply(F f, float* p) { p[threadIdx.x] = f(p[threadIdx.x]); }
void launch(float* p, int* q) {
    hidden<<<1, 1>>>(q);
    apply<<<1, 32>>>([] __device__ (float x) { return S::twice(x); }, p);
}
