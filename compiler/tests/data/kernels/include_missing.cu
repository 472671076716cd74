#include "does_not_exist.cuh"
__global__ void k(float* p) { p[0] = 1.0f; }
