// Emulated vector_add: lengths that are and are not multiples of the tile and
// of the vector width, so both the 16-byte path and the guarded tail run.
#include "harness.h"

#include "emu_vector_add.h"

int main() {
    int failures = 0;
    for (int n : {1024, 1000, 3, 2049}) {
        std::vector<float> a = harness::random(n, -2, 2, 1), b = harness::random(n, -2, 2, 2);
        float *A = harness::alloc<float>(n), *B = harness::alloc<float>(n), *C = harness::alloc<float>(n + 8);
        for (int i = 0; i < n; ++i) { A[i] = a[i]; B[i] = b[i]; }
        for (int i = 0; i < n + 8; ++i) C[i] = 12345.0f;   // canaries past the end
        if (vector_add(A, B, C, n, nullptr) != cudaSuccess) return 1;
        double err = 0;
        for (int i = 0; i < n; ++i) err = std::max(err, std::fabs(double(C[i]) - (double(a[i]) + b[i])));
        for (int i = n; i < n + 8; ++i) err = std::max(err, C[i] == 12345.0f ? 0.0 : 1e9);   // nothing written past n
        char name[64];
        std::snprintf(name, sizeof name, "vector_add n=%d", n);
        failures += harness::report(name, err, 1e-6);
    }
    // A misaligned tensor is refused by the launch function, not crashed on.
    float *A = harness::alloc<float>(64);
    failures += vector_add(A + 1, A, A, 16, nullptr) == cudaErrorMisalignedAddress ? 0 : 1;
    failures += vector_add(A, A, A, -1, nullptr) == cudaErrorInvalidValue ? 0 : 1;
    return failures;
}
