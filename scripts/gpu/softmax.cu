// GPU check of examples/softmax.tl (M = 4096, N = 1024).
#include <algorithm>
static const char *kName = "softmax";
#include "common.h"
#include "references.h"
#include "softmax.h"

int main() {
    const int M = 4096, N = 1024;
    std::vector<float> x = randomVector(size_t(M) * N, -8, 8, 3), y(size_t(M) * N);
    float *X, *Y;
    CHECK(cudaMalloc(&X, x.size() * 4));
    CHECK(cudaMalloc(&Y, y.size() * 4));
    CHECK(cudaMemcpy(X, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
    CHECK(softmax_init());
    CHECK(softmax(X, Y, nullptr));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(y.data(), Y, y.size() * 4, cudaMemcpyDeviceToHost));
    double err = reference::softmaxError(x, M, N, [&](size_t i) { return double(y[i]); });
    double ms = timeIt([&] { softmax(X, Y, nullptr); });
    report("softmax(4096x1024)", err, 1e-6, ms, 2.0 * M * N * 4, 0);
}
