// Emulated examples/gemm_ws_manual_sm90.tl (TileLang's warp-specialized GEMM:
// TMA producer, wgmma consumer, two mbarriers) at 128 x 256 x 256.
#include "emu.h"
#include "harness.h"
#include "references.h"

#include "emu_gemm_ws.h"

int main() {
    const int M = 128, N = 256, K = 256;
    std::vector<float> a = harness::random(size_t(M) * K, -1, 1, 101), b = harness::random(size_t(K) * N, -1, 1, 102);
    __half *A = harness::alloc<__half>(a.size()), *B = harness::alloc<__half>(b.size()), *C = harness::alloc<__half>(size_t(M) * N);
    for (size_t i = 0; i < a.size(); ++i) A[i] = __float2half(a[i]);
    for (size_t i = 0; i < b.size(); ++i) B[i] = __float2half(b[i]);
    // The launch's own checks, before anything runs: the device (an sm_80 one
    // cannot run sm_90a code), then a null tensor; each says why.
    emu::deviceCapability = {8, 0};
    if (!harness::expectError(gemm_ws(A, B, C, nullptr), cudaErrorNoKernelImageForDevice, emu_gemm_ws_last_error(),
                              "gemm_ws: compiled for sm_90a (compute capability 9.0); device 0 has 8.0"))
        return 1;
    emu::deviceCapability = {-1, -1};
    if (!harness::expectError(gemm_ws(A, nullptr, C, nullptr), cudaErrorInvalidValue, emu_gemm_ws_last_error(),
                              "gemm_ws: tensor 'B' (f16 [256, 256]) is a null pointer"))
        return 1;
    if (gemm_ws(A, B, C, nullptr) != cudaSuccess || emu_gemm_ws_last_error()[0] != '\0') return 1;
    double err = reference::gemmError(
        M, N, K, [&](int i, int k) { return double(__half2float(A[size_t(i) * K + k])); },
        [&](int k, int j) { return double(__half2float(B[size_t(k) * N + j])); }, false,
        [&](int i, int j) { return double(__half2float(C[size_t(i) * N + j])); });
    return harness::report("seed 3.3 warp-specialized gemm (TMA producer, wgmma consumer), relative error", err, 6e-4);
}
