// references.h -- double-precision references of the examples, shared by the
// CPU emulation tests (tests/emu) and the GPU checks (scripts/gpu).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace reference {

// Largest |softmax(x) - y| over rows of an M x N matrix; y(i) reads output i.
template <class Y> double softmaxError(const std::vector<float> &x, int M, int N, Y y) {
    double err = 0;
    for (int r = 0; r < M; ++r) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < N; ++c) mx = std::max(mx, double(x[size_t(r) * N + c]));
        for (int c = 0; c < N; ++c) sum += std::exp(double(x[size_t(r) * N + c]) - mx);
        for (int c = 0; c < N; ++c) err = std::max(err, std::fabs(std::exp(double(x[size_t(r) * N + c]) - mx) / sum - y(size_t(r) * N + c)));
    }
    return err;
}

// Largest |layernorm(x) * g + b - y| (eps 1e-5) over rows of an M x N matrix.
template <class Y>
double layernormError(const std::vector<float> &x, const std::vector<float> &g, const std::vector<float> &b, int M, int N, Y y) {
    double err = 0;
    for (int r = 0; r < M; ++r) {
        double mean = 0, var = 0;
        for (int c = 0; c < N; ++c) mean += x[size_t(r) * N + c];
        mean /= N;
        for (int c = 0; c < N; ++c) var += (x[size_t(r) * N + c] - mean) * (x[size_t(r) * N + c] - mean);
        var /= N;
        for (int c = 0; c < N; ++c) {
            double ref = (x[size_t(r) * N + c] - mean) / std::sqrt(var + 1e-5) * g[c] + b[c];
            err = std::max(err, std::fabs(ref - y(size_t(r) * N + c)));
        }
    }
    return err;
}

// Largest |op(A · B) - y| / max(1, |op(A · B)|) for A (M x K) and B (K x N)
// given as accessors a(i, k) and b(k, j) of the values the kernel sees, with
// op the identity or ReLU: an absolute error for small results, a relative
// one for large (an f16 result is off by up to 2^-11 of itself).
template <class A, class B, class Y> double gemmError(int M, int N, int K, A a, B b, bool relu, Y y) {
    double err = 0;
    std::vector<double> row(static_cast<size_t>(K));
    for (int i = 0; i < M; ++i) {
        for (int k = 0; k < K; ++k) row[size_t(k)] = a(i, k);
        for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int k = 0; k < K; ++k) s += row[size_t(k)] * b(k, j);
            if (relu) s = std::max(s, 0.0);
            err = std::max(err, std::fabs(s - y(i, j)) / std::max(1.0, std::fabs(s)));
        }
    }
    return err;
}

} // namespace reference
