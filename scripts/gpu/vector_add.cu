// GPU check of examples/vector_add.tl.
#include <algorithm>
static const char *kName = "vector_add";
#include "common.h"
#include "vector_add.h"

int main() {
    const int n = 1 << 26;   // not a multiple of the 1024 tile below
    const int sizes[] = {n, n - 3};
    for (int len : sizes) {
        std::vector<float> a = randomVector(len, -1, 1, 1), b = randomVector(len, -1, 1, 2), c(len);
        float *A, *B, *C;
        CHECK(cudaMalloc(&A, len * 4));
        CHECK(cudaMalloc(&B, len * 4));
        CHECK(cudaMalloc(&C, len * 4));
        CHECK(cudaMemcpy(A, a.data(), len * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(B, b.data(), len * 4, cudaMemcpyHostToDevice));
        CHECK(vector_add(A, B, C, len, nullptr));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(c.data(), C, len * 4, cudaMemcpyDeviceToHost));
        double err = 0;
        for (int i = 0; i < len; ++i) err = std::max(err, double(std::fabs(c[i] - (a[i] + b[i]))));
        double ms = timeIt([&] { vector_add(A, B, C, len, nullptr); });
        char name[64];
        std::snprintf(name, sizeof name, "vector_add(n=%d)", len);
        report(name, err, 1e-6, ms, 3.0 * len * 4, len);
        cudaFree(A); cudaFree(B); cudaFree(C);
    }
}
