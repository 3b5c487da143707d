// The program's own CUDA for call_extern.tl (brought in by import_source).
#include <cuda_fp16.h>

// y[i] = x[i] * s for n halves, two at a time: y must be 4-byte aligned.
__device__ void scale_halves(const __half *x, __half *y, float s, int n) {
    const __half2 s2 = __float2half2_rn(s);
    for (int i = 0; i < n; i += 2) {
        __half2 v = __halves2half2(x[i], x[i + 1]);
        *reinterpret_cast<__half2 *>(&y[i]) = __hmul2(v, s2);
    }
}

// Sums n floats into *total (one thread does it).
__device__ void sum_into(const float *x, float *total, int n) {
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) acc += x[i];
    *total = acc;
}
