// Emulated layernorm (f16 in and out, f32 statistics) against a double reference.
#include "harness.h"
#include "references.h"

#include "emu_layernorm.h"

int main() {
    const int M = EMU_M, N = 1024;
    std::vector<float> x = harness::random(size_t(M) * N, -3, 5, 4), g = harness::random(N, 0.5, 1.5, 5), b = harness::random(N, -1, 1, 6);
    __half *X = harness::alloc<__half>(size_t(M) * N), *Y = harness::alloc<__half>(size_t(M) * N);
    float *G = harness::alloc<float>(N), *B = harness::alloc<float>(N);
    for (size_t i = 0; i < x.size(); ++i) {
        X[i] = __float2half(x[i]);
        x[i] = __half2float(X[i]);   // the reference sees the rounded input
    }
    for (int i = 0; i < N; ++i) { G[i] = g[i]; B[i] = b[i]; }
    if (layernorm(X, G, B, Y, nullptr) != cudaSuccess) return 1;
    double err = reference::layernormError(x, g, b, M, N, [&](size_t i) { return double(__half2float(Y[i])); });
    return harness::report("layernorm", err, 2e-2);   // f16 output: ~3 significant digits
}
