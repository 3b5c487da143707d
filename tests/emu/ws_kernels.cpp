// Emulated checks of tests/emu/ws_kernels.tl: warp-specialized producer and
// consumer roles synchronised by hand-written mbarrier protocols, and an
// automatically warp-specialized gemm over a run-time K.
#include "harness.h"

#include "references.h"

#include "emu_ws_kernels.h"

#include <algorithm>

int main() {
    const int tiles = 8, w = 128;
    std::vector<float> a = harness::random(tiles * w, -1, 1, 71);
    float *A = harness::alloc<float>(a.size()), *B = harness::alloc<float>(a.size());
    std::copy(a.begin(), a.end(), A);
    if (ring(A, B, nullptr) != cudaSuccess) return 1;
    double err = 0;
    for (int k = 0; k < tiles; ++k)
        for (int i = 0; i < w; ++i) err = std::max(err, std::fabs(double(a[k * w + i]) * 2 + k - B[k * w + i]));
    int failed = harness::report("producer/consumer ring of two slots (full/empty mbarriers, 8 rounds)", err, 1e-6);
    for (int n : {1, 5}) {
        std::fill(B, B + a.size(), 0.0f);
        if (ring_dyn(A, B, n, nullptr) != cudaSuccess) return 1;
        double e = 0;
        for (int k = 0; k < n; ++k)
            for (int i = 0; i < w; ++i) e = std::max(e, std::fabs(double(a[k * w + i]) + 1 - B[k * w + i]));
        std::printf("n = %d: ", n);
        failed += harness::report("ring over run-time tiles, two consumer warp groups", e, 1e-6);
    }
    std::fill(B, B + a.size(), 0.0f);
    if (ring_tma(A, B, nullptr) != cudaSuccess) return 1;
    double e = 0;
    for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::fabs(double(a[i]) - 1 - B[i]));
    failed += harness::report("ring filled by tma_copy (transaction bytes plus the producer's arrivals)", e, 1e-6);
    std::fill(B, B + a.size(), 0.0f);
    float *S = harness::alloc<float>(w), *O = harness::alloc<float>(tiles / 2 * w);
    if (ring_split(A, B, S, O, nullptr) != cudaSuccess) return 1;
    e = 0;
    for (int i = 0; i < w; ++i) {
        double sum = 0;
        for (int k = 0; k < tiles; ++k) {
            e = std::max(e, std::fabs(double(a[k * w + i]) * 2 - B[k * w + i]));
            if (k % 2 == 1) e = std::max(e, std::fabs(double(a[k * w + i]) + 1 - O[k / 2 * w + i]));
            sum += a[k * w + i];
        }
        e = std::max(e, std::fabs(sum - S[i]));
    }
    failed += harness::report("roles inside a loop every thread runs, split into one copy per role (setmaxnreg)", e, 1e-5);
    float *C = harness::alloc<float>(w);
    if (roles_in_sequence(A, B, C, nullptr) != cudaSuccess) return 1;
    e = 0;
    for (int i = 0; i < w; ++i) {
        e = std::max(e, std::fabs(double(a[i]) * 2 + 1 - B[i]));
        e = std::max(e, std::fabs(double(a[i]) + 1 - C[i]));
    }
    failed += harness::report("one role's write read by another after a statement every thread runs (a block barrier between)", e, 1e-6);
    for (int go : {1, 0}) {
        if (roles_after_branch(A, B, go, nullptr) != cudaSuccess) return 1;
        e = 0;
        for (int i = 0; i < w; ++i) e = std::max(e, std::fabs(double(a[i]) * (go ? 2 : 3) + 1 - B[i]));
        std::printf("go = %d: ", go);
        failed += harness::report("a role's write under a run-time branch read by a role after it (a block barrier between)", e, 1e-6);
    }
    std::fill(B, B + a.size(), 0.0f);
    if (block_then_role(A, B, nullptr) != cudaSuccess) return 1;
    e = 0;
    for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::fabs(double(a[i]) - B[i]));
    failed += harness::report("the block writes a tile and a role reads it, in each iteration (block barriers)", e, 0);
    std::fill(C, C + w, 0.0f);
    if (phases_across(A, B, C, nullptr) != cudaSuccess) return 1;
    e = 0;
    for (int i = 0; i < w; ++i) {
        double c = 0;
        for (int r = 0; r < 64; ++r) c = float(float(c) * 0.5f + a[i]);
        e = std::max({e, std::fabs(double(a[i]) + 1 - B[i]), std::fabs(c - C[i])});
    }
    failed += harness::report("one mbarrier's phases on both sides of a meeting of the block", e, 1e-6);
    for (int K : {8, 40, 200}) {
        std::vector<float> x = harness::random(size_t(64) * K, -1, 1, 72), y = harness::random(size_t(K) * 64, -1, 1, 73);
        __half *X = harness::alloc<__half>(x.size()), *Y = harness::alloc<__half>(y.size());
        float *Z = harness::alloc<float>(64 * 64);
        for (size_t i = 0; i < x.size(); ++i) X[i] = __float2half(x[i]);
        for (size_t i = 0; i < y.size(); ++i) Y[i] = __float2half(y[i]);
        if (auto_dyn(X, Y, Z, K, nullptr) != cudaSuccess) return 1;
        double e = reference::gemmError(
            64, 64, K, [&](int r, int k) { return double(__half2float(X[size_t(r) * K + k])); },
            [&](int k, int c) { return double(__half2float(Y[size_t(k) * 64 + c])); }, false, [&](int r, int c) { return double(Z[r * 64 + c]); });
        std::printf("K = %d: ", K);
        failed += harness::report("automatically warp-specialized gemm over a run-time K (TMA zero fill past K)", e, 1e-4);
    }
    return failed;
}
