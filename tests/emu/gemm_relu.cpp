// Emulated examples/gemm_relu.tl (sm_80: cp.async pipeline, ldmatrix, mma.sync)
// at EMU_M x EMU_N x EMU_K, against a double-precision reference.
#include "harness.h"
#include "references.h"

// The same harness checks the sm_80 (mma.sync) and the sm_90a (wgmma)
// translations; EMU_HEADER names the header of the one being checked.
#ifdef EMU_HEADER
#include EMU_HEADER
#else
#include "emu_gemm_relu.h"
#endif

int main() {
    const int M = EMU_M, N = EMU_N, K = EMU_K;
    std::vector<float> a = harness::random(size_t(M) * K, -1, 1, 41), b = harness::random(size_t(K) * N, -1, 1, 42);
    __half *A = harness::alloc<__half>(a.size()), *B = harness::alloc<__half>(b.size()), *C = harness::alloc<__half>(size_t(M) * N);
    for (size_t i = 0; i < a.size(); ++i) A[i] = __float2half(a[i]);
    for (size_t i = 0; i < b.size(); ++i) B[i] = __float2half(b[i]);
    if (gemm_relu(A, B, C, nullptr) != cudaSuccess) return 1;
    double err = reference::gemmError(
        M, N, K, [&](int i, int k) { return double(__half2float(A[size_t(i) * K + k])); },
        [&](int k, int j) { return double(__half2float(B[size_t(k) * N + j])); }, true,
        [&](int i, int j) { return double(__half2float(C[size_t(i) * N + j])); });
    // The result is rounded to f16: half an ulp is 2^-11 of it (4.9e-4).
    std::printf("%d x %d x %d: ", M, N, K);
    return harness::report("gemm_relu (3-stage pipeline, tails in M, N and K), relative error", err, 6e-4);
}
