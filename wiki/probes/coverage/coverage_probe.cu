// Probe behind the figures of pitfall-cuda-graphs, pitfall-out-of-memory and pitfall-fp8:
// what the runtime returns for calls that break a stream capture, what an allocation
// larger than the device returns, and how float values convert to e4m3/e5m2 on the host
// and on the device. Prints one line per case.
#include <cuda_fp8.h>
#include <cstdio>

#define SHOW(label, call)                                                                   \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        printf("%-44s %s (%d): %s\n", label, cudaGetErrorName(e_), int(e_),                 \
               cudaGetErrorString(e_));                                                     \
    } while (0)

__global__ void step(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void to_fp8(const float* x, unsigned char* q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        q[4 * i + 0] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E4M3);
        q[4 * i + 1] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);
        q[4 * i + 2] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E5M2);
        q[4 * i + 3] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E5M2);
    }
}

static float widen(unsigned char v, __nv_fp8_interpretation_t k) {
    return float(__half(__nv_cvt_fp8_to_halfraw(v, k)));
}

int main() {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    printf("device: %s (CC %d.%d), driver API %d, runtime %d\n", prop.name, prop.major,
           prop.minor, drv, rt);

    const int n = 1 << 20;
    float* d = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemset(d, 0, n * sizeof(float));
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaGraph_t g = nullptr;

    printf("\n## capture: cudaDeviceSynchronize inside\n");
    SHOW("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    step<<<n / 256, 256, 0, s>>>(d, n);
    SHOW("launch on the capturing stream", cudaGetLastError());
    SHOW("cudaDeviceSynchronize", cudaDeviceSynchronize());
    step<<<n / 256, 256, 0, s>>>(d, n);
    SHOW("next launch", cudaGetLastError());
    SHOW("cudaStreamEndCapture", cudaStreamEndCapture(s, &g));
    printf("%-44s %s\n", "graph returned", g ? "yes" : "no");
    SHOW("cudaGetLastError after", cudaGetLastError());

    printf("\n## capture: cudaStreamSynchronize inside\n");
    g = nullptr;
    SHOW("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    SHOW("cudaStreamSynchronize", cudaStreamSynchronize(s));
    SHOW("cudaStreamEndCapture", cudaStreamEndCapture(s, &g));
    cudaGetLastError();

    printf("\n## capture: cudaMemcpy (synchronous) inside\n");
    float h = 0.0f;
    SHOW("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    SHOW("cudaMemcpy device to host", cudaMemcpy(&h, d, sizeof(float), cudaMemcpyDeviceToHost));
    SHOW("cudaStreamEndCapture", cudaStreamEndCapture(s, &g));
    cudaGetLastError();

    printf("\n## capture: cudaMalloc inside (global mode)\n");
    float* tmp = nullptr;
    SHOW("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    SHOW("cudaMalloc", cudaMalloc(&tmp, n * sizeof(float)));
    SHOW("cudaStreamEndCapture", cudaStreamEndCapture(s, &g));
    cudaGetLastError();
    if (tmp) cudaFree(tmp);

    printf("\n## capture: cudaMalloc inside (relaxed mode)\n");
    tmp = nullptr;
    SHOW("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    SHOW("cudaMalloc", cudaMalloc(&tmp, n * sizeof(float)));
    SHOW("cudaStreamEndCapture", cudaStreamEndCapture(s, &g));
    cudaGetLastError();
    if (tmp) cudaFree(tmp);

    printf("\n## capture: launch on the legacy default stream inside\n");
    cudaStream_t blocking;
    cudaStreamCreate(&blocking);
    SHOW("cudaStreamBeginCapture (blocking stream)", cudaStreamBeginCapture(blocking, cudaStreamCaptureModeGlobal));
    step<<<n / 256, 256>>>(d, n);
    SHOW("launch on stream 0", cudaGetLastError());
    SHOW("cudaStreamEndCapture", cudaStreamEndCapture(blocking, &g));
    cudaGetLastError();
    SHOW("cudaStreamBeginCapture(cudaStreamLegacy)", cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal));
    cudaGetLastError();

    printf("\n## capture: cudaMallocAsync inside\n");
    g = nullptr;
    void* pa = nullptr;
    SHOW("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    SHOW("cudaMallocAsync", cudaMallocAsync(&pa, n * sizeof(float), s));
    SHOW("cudaFreeAsync", cudaFreeAsync(pa, s));
    SHOW("cudaStreamEndCapture", cudaStreamEndCapture(s, &g));
    if (g) cudaGraphDestroy(g);

    printf("\n## graph replay keeps the captured arguments\n");
    cudaMemset(d, 0, n * sizeof(float));
    step<<<n / 256, 256, 0, s>>>(d, n);  // x = 1
    float a = 2.0f;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    scale<<<n / 256, 256, 0, s>>>(d, a, n);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&exec, g, 0);
    a = 3.0f;
    cudaGraphLaunch(exec, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(&h, d, sizeof(float), cudaMemcpyDeviceToHost);
    printf("x = 1, captured with a = 2, a set to 3, one replay: x[0] = %g\n", h);

    printf("\n## out of memory\n");
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    printf("cudaMemGetInfo: free %zu MiB of %zu MiB\n", fr >> 20, tot >> 20);
    void* big = nullptr;
    SHOW("cudaMalloc(total + 1 GiB)", cudaMalloc(&big, tot + (size_t(1) << 30)));
    SHOW("cudaGetLastError after it", cudaGetLastError());
    SHOW("cudaMalloc(1 MiB) after it", cudaMalloc(&big, 1 << 20));
    cudaFree(big);

    printf("\n## fp8: value | e4m3 nosat, e4m3 satfinite | e5m2 nosat, e5m2 satfinite (host, then device)\n");
    float xs[] = {448.f, 464.f, 465.f, 480.f, 500.f, 1e6f, 57344.f, 61439.f, 61440.f,
                  1.0f / 512.0f, 1.0f / 1024.0f, 1.5f / 1024.0f, 1.0f / 65536.0f, 1.0f / 131072.0f};
    const int m = sizeof(xs) / sizeof(xs[0]);
    float* dx;
    unsigned char* dq;
    unsigned char q[4 * m];
    cudaMalloc(&dx, sizeof(xs));
    cudaMalloc(&dq, sizeof(q));
    cudaMemcpy(dx, xs, sizeof(xs), cudaMemcpyHostToDevice);
    to_fp8<<<1, 32>>>(dx, dq, m);
    cudaMemcpy(q, dq, sizeof(q), cudaMemcpyDeviceToHost);
    for (int i = 0; i < m; ++i) {
        float x = xs[i];
        unsigned char h0 = __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3);
        unsigned char h1 = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
        unsigned char h2 = __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2);
        unsigned char h3 = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
        printf("%-12g host: %g, %g | %g, %g   device: %g, %g | %g, %g   __nv_fp8_e4m3(x): %g\n", x,
               widen(h0, __NV_E4M3), widen(h1, __NV_E4M3), widen(h2, __NV_E5M2), widen(h3, __NV_E5M2),
               widen(q[4 * i], __NV_E4M3), widen(q[4 * i + 1], __NV_E4M3),
               widen(q[4 * i + 2], __NV_E5M2), widen(q[4 * i + 3], __NV_E5M2),
               float(__nv_fp8_e4m3(x)));
    }
    return 0;
}
