// Emulated fp8 GEMM examples (e4m3 x e4m3 -> f32, B stored [N, K], bf16
// result) at EMU_M x EMU_N x EMU_K against a double-precision reference:
// gemm_fp8_sm89.tl (mma.sync m16n8k32) and, with EMU_HEADER, gemm_fp8_sm90.tl
// (warp-specialized, wgmma m64n256k32) or gemm_fp8_sm100a.tl (tcgen05.mma
// kind::f8f6f4 into tensor memory).
#include "harness.h"
#include "references.h"

#ifdef EMU_HEADER
#include EMU_HEADER
#else
#include "emu_gemm_fp8.h"
#endif

int main() {
    const int M = EMU_M, N = EMU_N, K = EMU_K;
    std::vector<float> a = harness::random(size_t(M) * K, -2, 2, 61), b = harness::random(size_t(N) * K, -2, 2, 62);
    __nv_fp8_e4m3 *A = harness::alloc<__nv_fp8_e4m3>(a.size()), *B = harness::alloc<__nv_fp8_e4m3>(b.size());
    __nv_bfloat16 *C = harness::alloc<__nv_bfloat16>(size_t(M) * N);
    for (size_t i = 0; i < a.size(); ++i) A[i] = __nv_fp8_e4m3(a[i]);
    for (size_t i = 0; i < b.size(); ++i) B[i] = __nv_fp8_e4m3(b[i]);
    if (gemm_fp8(A, B, C, nullptr) != cudaSuccess) return 1;
    double err = reference::gemmError(
        M, N, K, [&](int i, int k) { return double(float(A[size_t(i) * K + k])); },
        [&](int k, int j) { return double(float(B[size_t(j) * K + k])); }, false,
        [&](int i, int j) { return double(__bfloat162float(C[size_t(i) * N + j])); });
    // The result is rounded to bf16 (8 significant bits): up to 2^-8 of it.
    std::printf("%d x %d x %d: ", M, N, K);
    return harness::report("fp8 gemm (e4m3 x e4m3 -> f32, bf16 result), relative error", err, 5e-3);
}
