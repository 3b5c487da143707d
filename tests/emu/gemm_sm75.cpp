// Emulated tests/emu/gemm_sm75.tl (mma.sync m16n8k8 into f32 and f16
// accumulators on sm_75) against a double-precision reference.
#include "harness.h"
#include "references.h"

#include "emu_gemm_sm75.h"

int main() {
    const int M = 64, N = 64, K = 64;
    std::vector<float> a = harness::random(size_t(M) * K, -1, 1, 51), b = harness::random(size_t(K) * N, -1, 1, 52);
    __half *A = harness::alloc<__half>(a.size()), *B = harness::alloc<__half>(b.size()), *Ch = harness::alloc<__half>(size_t(M) * N);
    float *C = harness::alloc<float>(size_t(M) * N);
    for (size_t i = 0; i < a.size(); ++i) A[i] = __float2half(a[i]);
    for (size_t i = 0; i < b.size(); ++i) B[i] = __float2half(b[i]);
    if (gemm_sm75(A, B, C, Ch, nullptr) != cudaSuccess) return 1;
    auto at = [&](int i, int k) { return double(__half2float(A[size_t(i) * K + k])); };
    auto bt = [&](int k, int j) { return double(__half2float(B[size_t(k) * N + j])); };
    double err = reference::gemmError(M, N, K, at, bt, false, [&](int i, int j) { return double(C[size_t(i) * N + j]); });
    double errHalf = reference::gemmError(M, N, K, at, bt, false, [&](int i, int j) { return double(__half2float(Ch[size_t(i) * N + j])); });
    int failed = harness::report("sm_75 gemm f16 -> f32 (m16n8k8)", err, 1e-5);
    // An f16 accumulator rounds after each of the 8 k-steps: up to 8 x 2^-11 of the result.
    failed += harness::report("sm_75 gemm f16 -> f16 (m16n8k8), relative error", errHalf, 8e-3);
    return failed;
}
