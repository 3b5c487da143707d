// Emulated examples/gemm_tcgen05_sm100a.tl and gemm_bf16_sm100a.tl (tensor-memory accumulator,
// tcgen05.mma issued by one thread and committed to an mbarrier, tcgen05.ld
// epilogue, under automatic warp specialization) at EMU_M x EMU_N x EMU_K,
// against a double-precision reference of C = A · B^T.
#include "harness.h"
#include "references.h"

#include EMU_HEADER

// The launch function: gemm_tcgen05, or the example's own (EMU_KERNEL).
#ifndef EMU_KERNEL
#define EMU_KERNEL gemm_tcgen05
#endif

int main() {
    const int M = EMU_M, N = EMU_N, K = EMU_K;
    std::vector<float> a = harness::random(size_t(M) * K, -1, 1, 61), b = harness::random(size_t(N) * K, -1, 1, 62);
    __nv_bfloat16 *A = harness::alloc<__nv_bfloat16>(a.size()), *B = harness::alloc<__nv_bfloat16>(b.size());
    __nv_bfloat16 *C = harness::alloc<__nv_bfloat16>(size_t(M) * N);
    for (size_t i = 0; i < a.size(); ++i) A[i] = __float2bfloat16(a[i]);
    for (size_t i = 0; i < b.size(); ++i) B[i] = __float2bfloat16(b[i]);
    if (EMU_KERNEL(A, B, C, nullptr) != cudaSuccess) return 1;
    double err = reference::gemmError(
        M, N, K, [&](int i, int k) { return double(__bfloat162float(A[size_t(i) * K + k])); },
        [&](int k, int j) { return double(__bfloat162float(B[size_t(j) * K + k])); }, false,
        [&](int i, int j) { return double(__bfloat162float(C[size_t(i) * N + j])); });
    // The result is rounded to bf16: half an ulp is 2^-8 of it (3.9e-3).
    std::printf("%d x %d x %d: ", M, N, K);
    return harness::report("gemm_tcgen05 (TMEM accumulator, tcgen05.mma + commit, tcgen05.ld), relative error", err, 4e-3);
}
