// GPU check of examples/vector_add.tl (n is a dynamic dimension).
static const char *kName = "vector_add";
#include "common.h"
#include "vector_add.h"

int main() {
    const int n = 1 << 26;   // and a length that is not a multiple of the 1024 tile
    const int sizes[] = {n, n - 3};
    for (int len : sizes) {
        std::vector<float> a = randomVector(len, -1, 1, 1), b = randomVector(len, -1, 1, 2), c(len);
        float *A, *B, *C;
        CHECK(cudaMalloc(&A, len * 4));
        CHECK(cudaMalloc(&B, len * 4));
        CHECK(cudaMalloc(&C, len * 4));
        CHECK(cudaMemcpy(A, a.data(), len * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(B, b.data(), len * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemset(C, 0xff, len * 4));   // NaN: an element never written fails
        auto error = [&] {
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(c.data(), C, len * 4, cudaMemcpyDeviceToHost));
            double err = 0;
            for (int i = 0; i < len; ++i) {
                double d = std::fabs(double(c[i]) - double(a[i] + b[i]));
                if (!(d <= err)) err = d;   // keeps a NaN
                if (std::isnan(err)) break;
            }
            return err;
        };
        CHECK(vector_add(A, B, C, len, nullptr));
        double first = error();
        double ms = timeIt([&] { CHECK(vector_add(A, B, C, len, nullptr)); });
        double after = error();
        char shape[64];
        std::snprintf(shape, sizeof shape, "n=%d", len);
        report(kName, shape, first, after, 1e-6, ms, 3.0 * len * 4, len);
        cudaFree(A); cudaFree(B); cudaFree(C);
    }
    return exitStatus();
}
