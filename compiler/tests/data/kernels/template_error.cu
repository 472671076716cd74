template <typename T>
__global__ void fill(T* out, T value) {
    out[threadIdx.x] = value.missing_member;
}

struct Pod { int x; };

void launch(Pod* p) {
    fill<<<1, 32>>>(p, Pod{1});
}
