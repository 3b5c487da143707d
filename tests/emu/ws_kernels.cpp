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
    return harness::report("producer/consumer ring of two slots (full/empty mbarriers, 8 rounds)", err, 1e-6);
}
