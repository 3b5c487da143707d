// Emulated softmax against a double-precision reference.
#include "harness.h"

#include "emu_softmax.h"

int main() {
    const int M = EMU_M, N = 1024;
    std::vector<float> x = harness::random(size_t(M) * N, -8, 8, 3);
    float *X = harness::alloc<float>(size_t(M) * N), *Y = harness::alloc<float>(size_t(M) * N);
    for (size_t i = 0; i < x.size(); ++i) X[i] = x[i];
    if (softmax(X, Y, nullptr) != cudaSuccess) return 1;
    double err = 0;
    for (int r = 0; r < M; ++r) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < N; ++c) mx = std::max(mx, double(x[size_t(r) * N + c]));
        for (int c = 0; c < N; ++c) sum += std::exp(double(x[size_t(r) * N + c]) - mx);
        for (int c = 0; c < N; ++c) {
            double ref = std::exp(double(x[size_t(r) * N + c]) - mx) / sum;
            err = std::max(err, std::fabs(ref - Y[size_t(r) * N + c]));
        }
    }
    return harness::report("softmax", err, 1e-6);
}
