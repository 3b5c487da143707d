// Emulated checks of tests/emu/tma_kernels.tl: descriptor TMA loads and
// stores encoded by the generated host code.
#include "harness.h"
#include "references.h"

#include "emu_tma_kernels.h"

#include <algorithm>

int main() {
    int failed = 0;
    {
        const int m = 100, n = 256;   // the second row block has 36 rows inside the tensor
        std::vector<float> a = harness::random(size_t(m) * n, -1, 1, 81);
        __half *A = harness::alloc<__half>(a.size()), *B = harness::alloc<__half>(a.size() + 64 * n);
        for (size_t i = 0; i < a.size(); ++i) A[i] = __float2half(a[i]);
        for (size_t i = 0; i < a.size() + 64 * n; ++i) B[i] = __float2half(-7.0f);   // beyond row m: must stay untouched
        if (scale(A, B, m, nullptr) != cudaSuccess) return 1;
        double err = 0;
        for (size_t i = 0; i < a.size(); ++i) err = std::max(err, std::fabs(double(__half2float(A[i])) * 2 + 1 - __half2float(B[i])));
        for (size_t i = a.size(); i < a.size() + 64 * n; ++i) err = std::max(err, std::fabs(-7.0 - __half2float(B[i])));
        failed += harness::report("TMA load and store of 64 x 128 tiles, 100 rows (zeros and clipped writes past the edge)", err, 1e-2);
    }
    {
        std::vector<float> a = harness::random(32 * 64, -1, 1, 82), b = harness::random(64 * 128, -1, 1, 83);
        __half *A = harness::alloc<__half>(a.size()), *B = harness::alloc<__half>(b.size());
        float *C = harness::alloc<float>(32 * 128);
        for (size_t i = 0; i < a.size(); ++i) A[i] = __float2half(a[i]);
        for (size_t i = 0; i < b.size(); ++i) B[i] = __float2half(b[i]);
        if (tma_gemm(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            32, 128, 64, [&](int i, int k) { return double(__half2float(A[i * 64 + k])); },
            [&](int k, int j) { return double(__half2float(B[k * 128 + j])); }, false, [&](int i, int j) { return double(C[i * 128 + j]); });
        failed += harness::report("TMA into 128B-swizzled gemm operands (2 boxes for B), read by ldmatrix", err, 1e-4);
    }
    {
        std::vector<float> a = harness::random(16 * 64, -1, 1, 84);
        float *A = harness::alloc<float>(a.size()), *B = harness::alloc<float>(a.size());
        std::copy(a.begin(), a.end(), A);
        if (bulk(A, B, nullptr) != cudaSuccess) return 1;
        double err = 0;
        for (size_t i = 0; i < a.size(); ++i) err = std::max(err, std::fabs(double(a[i]) + 3 - B[i]));
        failed += harness::report("1D bulk load and store of a contiguous 16 x 64 tile", err, 1e-6);
    }
    {
        std::vector<float> a = harness::random(64 * 64, -1, 1, 85);
        __half *A = harness::alloc<__half>(a.size()), *C = harness::alloc<__half>(4 * a.size());
        for (size_t i = 0; i < a.size(); ++i) A[i] = __float2half(a[i]);
        if (multicast(A, C, nullptr) != cudaSuccess) return 1;
        double err = 0;
        for (size_t b = 0; b < 4; ++b)
            for (size_t i = 0; i < a.size(); ++i) err = std::max(err, std::fabs(double(__half2float(A[i])) - __half2float(C[b * a.size() + i])));
        failed += harness::report("TMA multicast of one tile to both blocks of each 2-block cluster", err, 0);
    }
    for (int withBarrier = 0; withBarrier < 2; ++withBarrier) {
        std::vector<float> a = harness::random(128 * 64, -1, 1, 86);
        __half *A = harness::alloc<__half>(a.size()), *C = harness::alloc<__half>(a.size());
        for (size_t i = 0; i < a.size(); ++i) A[i] = __float2half(a[i]);
        if ((withBarrier ? handoff(A, C, nullptr) : exchange(A, C, nullptr)) != cudaSuccess) return 1;
        double err = 0;   // block b's rows of C hold block (1 - b)'s rows of A
        for (size_t i = 0; i < a.size(); ++i) err = std::max(err, std::fabs(double(__half2float(A[(i + 64 * 64) % a.size()])) - __half2float(C[i])));
        failed += harness::report(withBarrier ? "tiles swapped between the blocks of a cluster, handed over by a remote mbarrier arrival"
                                              : "tiles swapped between the blocks of a cluster (dst_block), then cluster_sync",
                                  err, 0);
    }
    return failed;
}
