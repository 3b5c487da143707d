// Emulated examples/gemm_tma_ws_sm90.tl (automatic warp specialization: a TMA
// producer warp group, two wgmma consumer warp groups, full/empty mbarriers
// per stage) at EMU_M x EMU_N x EMU_K, against a double-precision reference;
// also gemm_cluster_multicast_sm90.tl (the same with 2 x 1 clusters sharing
// A by multicast), whose launch function EMU_KERNEL names.
#include "harness.h"
#include "references.h"

#include EMU_HEADER

// The launch function: gemm_tma_ws, or the example's own (EMU_KERNEL).
#ifndef EMU_KERNEL
#define EMU_KERNEL gemm_tma_ws
#endif
#define EMU_STRING(x) #x
#define EMU_NAME_OF(x) EMU_STRING(x)
#define EMU_NAME EMU_NAME_OF(EMU_KERNEL)

int main() {
    const int M = EMU_M, N = EMU_N, K = EMU_K;
    std::vector<float> a = harness::random(size_t(M) * K, -1, 1, 51), b = harness::random(size_t(K) * N, -1, 1, 52);
    __nv_bfloat16 *A = harness::alloc<__nv_bfloat16>(a.size()), *B = harness::alloc<__nv_bfloat16>(b.size());
    __nv_bfloat16 *C = harness::alloc<__nv_bfloat16>(size_t(M) * N);
    for (size_t i = 0; i < a.size(); ++i) A[i] = __float2bfloat16(a[i]);
    for (size_t i = 0; i < b.size(); ++i) B[i] = __float2bfloat16(b[i]);
    if (EMU_KERNEL(A, B, C, nullptr) != cudaSuccess) return 1;
    double err = reference::gemmError(
        M, N, K, [&](int i, int k) { return double(__bfloat162float(A[size_t(i) * K + k])); },
        [&](int k, int j) { return double(__bfloat162float(B[size_t(k) * N + j])); }, false,
        [&](int i, int j) { return double(__bfloat162float(C[size_t(i) * N + j])); });
    // The result is rounded to bf16: half an ulp is 2^-8 of it (3.9e-3).
    std::printf("%d x %d x %d: ", M, N, K);
    return harness::report(EMU_NAME " (TMA producer, 2 wgmma consumers), relative error", err, 4e-3);
}
