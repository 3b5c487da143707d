// GPU check of examples/layernorm.tl (M = 4096, N = 1024, f16 in and out).
#include <algorithm>
static const char *kName = "layernorm";
#include "common.h"
#include "layernorm.h"

int main() {
    const int M = 4096, N = 1024;
    std::vector<float> x = randomVector(size_t(M) * N, -3, 5, 4), g = randomVector(N, 0.5f, 1.5f, 5), b = randomVector(N, -1, 1, 6);
    std::vector<__half> xh(x.size()), yh(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        xh[i] = __float2half(x[i]);
        x[i] = __half2float(xh[i]);
    }
    __half *X, *Y;
    float *G, *B;
    CHECK(cudaMalloc(&X, xh.size() * 2));
    CHECK(cudaMalloc(&Y, yh.size() * 2));
    CHECK(cudaMalloc(&G, N * 4));
    CHECK(cudaMalloc(&B, N * 4));
    CHECK(cudaMemcpy(X, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(G, g.data(), N * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(B, b.data(), N * 4, cudaMemcpyHostToDevice));
    CHECK(layernorm_init());
    CHECK(layernorm(X, G, B, Y, nullptr));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(yh.data(), Y, yh.size() * 2, cudaMemcpyDeviceToHost));
    double err = 0;
    for (int r = 0; r < M; ++r) {
        double mean = 0, var = 0;
        for (int c = 0; c < N; ++c) mean += x[size_t(r) * N + c];
        mean /= N;
        for (int c = 0; c < N; ++c) var += (x[size_t(r) * N + c] - mean) * (x[size_t(r) * N + c] - mean);
        var /= N;
        for (int c = 0; c < N; ++c) {
            double ref = (x[size_t(r) * N + c] - mean) / std::sqrt(var + 1e-5) * g[c] + b[c];
            err = std::max(err, std::fabs(ref - double(__half2float(yh[size_t(r) * N + c]))));
        }
    }
    double ms = timeIt([&] { layernorm(X, G, B, Y, nullptr); });
    report("layernorm(4096x1024,f16)", err, 2e-2, ms, 2.0 * M * N * 2 + 2.0 * N * 4, 0);
}
