// Emulated softmax against a double-precision reference.
#include "harness.h"
#include "references.h"

#include "emu_softmax.h"

int main() {
    const int M = EMU_M, N = 1024;
    std::vector<float> x = harness::random(size_t(M) * N, -8, 8, 3);
    float *X = harness::alloc<float>(size_t(M) * N), *Y = harness::alloc<float>(size_t(M) * N);
    for (size_t i = 0; i < x.size(); ++i) X[i] = x[i];
    if (softmax(X, Y, nullptr) != cudaSuccess) return 1;
    double err = reference::softmaxError(x, M, N, [&](size_t i) { return double(Y[i]); });
    return harness::report("softmax", err, 1e-6);
}
