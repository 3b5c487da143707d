// Emulated examples/gemm_fp8_sm90.tl (e4m3, warp-specialized: TMA producer,
// two consumer warp groups with wgmma m64n256k32) at 128 x 256 x 384.
#include "harness.h"
#include "references.h"

#include "emu_gemm_fp8_sm90.h"

int main() {
    const int M = 128, N = 256, K = 384;
    std::vector<float> a = harness::random(size_t(M) * K, -1, 1, 61), b = harness::random(size_t(N) * K, -1, 1, 62);
    __nv_fp8_e4m3 *A = harness::alloc<__nv_fp8_e4m3>(a.size()), *B = harness::alloc<__nv_fp8_e4m3>(b.size());
    __nv_bfloat16 *C = harness::alloc<__nv_bfloat16>(size_t(M) * N);
    for (size_t i = 0; i < a.size(); ++i) A[i] = __nv_fp8_e4m3(a[i]);
    for (size_t i = 0; i < b.size(); ++i) B[i] = __nv_fp8_e4m3(b[i]);
    if (gemm_fp8(A, B, C, nullptr) != cudaSuccess) return 1;
    double err = reference::gemmError(
        M, N, K, [&](int i, int k) { return double(float(A[size_t(i) * K + k])); }, [&](int k, int j) { return double(float(B[size_t(j) * K + k])); },
        false, [&](int i, int j) { return double(__bfloat162float(C[size_t(i) * N + j])); });
    // The result is rounded to bf16: half an ulp is 2^-8 of it (3.9e-3).
    return harness::report("gemm_fp8_sm90 (e4m3 wgmma, warp-specialized), relative error", err, 4e-3);
}
