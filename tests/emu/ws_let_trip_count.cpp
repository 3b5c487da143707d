// Emulated tests/golden/hopper/ws_let_trip_count.tl: an automatically
// warp-specialized loop from k0 = kt / 2 to kt = K / 64, both bindings made
// after the kernel's first statement (the producer role binds its own
// copies). With K = 576 the loop runs k = 4 .. 8: five iterations that start
// at a run-time value and wrap around the three stages.
#include "harness.h"
#include "references.h"

#include "emu_ws_let_trip_count.h"

int main() {
    const int M = 256, N = 256, K = 576, kt = K / 64, k0 = kt / 2;
    std::vector<float> a = harness::random(size_t(M) * K, -1, 1, 61), b = harness::random(size_t(K) * N, -1, 1, 62);
    __half *A = harness::alloc<__half>(a.size()), *B = harness::alloc<__half>(b.size());
    float *C = harness::alloc<float>(size_t(M) * N);
    for (size_t i = 0; i < a.size(); ++i) A[i] = __float2half(a[i]);
    for (size_t i = 0; i < b.size(); ++i) B[i] = __float2half(b[i]);
    if (gemm_kt(A, B, C, K, nullptr) != cudaSuccess) return 1;
    // Only the columns k0 * 64 .. kt * 64 of A (rows of B) take part.
    const int first = k0 * 64, count = (kt - k0) * 64;
    double err = reference::gemmError(
        M, N, count, [&](int i, int k) { return double(__half2float(A[size_t(i) * K + first + k])); },
        [&](int k, int j) { return double(__half2float(B[size_t(first + k) * N + j])); }, false,
        [&](int i, int j) { return double(C[size_t(i) * N + j]); });
    return harness::report("gemm_kt (k from kt / 2 to kt, bound after the first statement), relative error", err, 1e-5);
}
