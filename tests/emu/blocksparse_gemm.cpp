// Emulated examples/blocksparse_gemm.tl at EMU_M x EMU_N x EMU_K: about half
// of the k-tiles masked out, against a double-precision reference that sums
// only the kept ones. The copies and the gemm of a kept k-tile sit in a
// data-dependent branch inside the pipelined loop; without barriers inside
// the branch the gemm reads tiles other threads are still writing.
#include "harness.h"

#include <algorithm>

#include EMU_HEADER

int main() {
    const int M = EMU_M, N = EMU_N, K = EMU_K, BM = 128, BN = 128, BK = 32;
    const int tilesM = M / BM, tilesN = N / BN, tilesK = K / BK;
    std::vector<float> a = harness::random(size_t(M) * K, -1, 1, 71), b = harness::random(size_t(K) * N, -1, 1, 72);
    std::vector<float> keep = harness::random(size_t(tilesM) * tilesN * tilesK, 0, 1, 73);
    __half *A = harness::alloc<__half>(a.size()), *B = harness::alloc<__half>(b.size()), *C = harness::alloc<__half>(size_t(M) * N);
    bool *mask = harness::alloc<bool>(keep.size());
    for (size_t i = 0; i < a.size(); ++i) A[i] = __float2half(a[i]);
    for (size_t i = 0; i < b.size(); ++i) B[i] = __float2half(b[i]);
    for (size_t i = 0; i < keep.size(); ++i) mask[i] = keep[i] > 0.5f;   // TileLang's example: rand > sparsity
    if (blocksparse_matmul(A, B, mask, C, nullptr) != cudaSuccess) return 1;
    double err = 0;
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int kt = 0; kt < tilesK; ++kt) {
                if (!mask[(size_t(i / BM) * tilesN + j / BN) * tilesK + kt]) continue;
                for (int k = kt * BK; k < (kt + 1) * BK; ++k)
                    s += double(__half2float(A[size_t(i) * K + k])) * double(__half2float(B[size_t(k) * N + j]));
            }
            err = std::max(err, std::fabs(s - double(__half2float(C[size_t(i) * N + j]))) / std::max(1.0, std::fabs(s)));
        }
    }
    std::printf("%d x %d x %d, %d of %d k-tiles kept: ", M, N, K, int(std::count(mask, mask + keep.size(), true)), int(keep.size()));
    // The result is rounded to f16: half an ulp is 2^-11 of it (4.9e-4).
    return harness::report("blocksparse_matmul, relative error", err, 1e-3);
}
