// GPU check of examples/softmax.tl (M = 4096, N = 1024, as translated).
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
    CHECK(cudaMemset(Y, 0xff, y.size() * 4));   // NaN: an element never written fails
    auto error = [&] {
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(y.data(), Y, y.size() * 4, cudaMemcpyDeviceToHost));
        auto out = [&](size_t i) { return double(y[i]); };
        return unlessNonFinite(reference::softmaxError(x, M, N, out), y.size(), out);
    };
    CHECK(softmax_init());
    CHECK(softmax(X, Y, nullptr));
    double first = error();
    double ms = timeIt([&] { CHECK(softmax(X, Y, nullptr)); });
    double after = error();
    report(kName, "4096x1024", first, after, 1e-6, ms, 2.0 * M * N * 4, 0);
    return exitStatus();
}
