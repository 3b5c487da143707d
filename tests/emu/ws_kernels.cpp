// Emulated checks of tests/emu/ws_kernels.tl: warp-specialized producer and
// consumer roles synchronised by hand-written mbarrier protocols.
#include "harness.h"

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
    return failed;
}
