// GPU check of examples/layernorm.tl (M = 4096, N = 1024, f16 in and out, as translated).
static const char *kName = "layernorm";
#include "common.h"
#include "references.h"
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
    CHECK(cudaMemset(Y, 0xff, yh.size() * 2));   // NaN: an element never written fails
    auto error = [&] {
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(yh.data(), Y, yh.size() * 2, cudaMemcpyDeviceToHost));
        auto out = [&](size_t i) { return double(__half2float(yh[i])); };
        return unlessNonFinite(reference::layernormError(x, g, b, M, N, out), yh.size(), out);
    };
    CHECK(layernorm_init());
    CHECK(layernorm(X, G, B, Y, nullptr));
    double first = error();
    double ms = timeIt([&] { CHECK(layernorm(X, G, B, Y, nullptr)); });
    double after = error();
    report(kName, "4096x1024 f16", first, after, 2e-2, ms, 2.0 * M * N * 2 + 2.0 * N * 4, 0);
    return exitStatus();
}
