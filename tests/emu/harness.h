// harness.h -- data, references and comparison for the emulated examples.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace harness {

inline std::vector<float> random(size_t n, float lo = -2.0f, float hi = 2.0f, unsigned seed = 1) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float &x : v) x = dist(gen);
    return v;
}

// Aligned host storage standing in for device memory.
template <class T> T *alloc(size_t n) {
    void *p = nullptr;
    if (posix_memalign(&p, 256, n * sizeof(T) + 256) != 0) std::abort();
    return static_cast<T *>(p);
}

inline int report(const char *name, double maxError, double tolerance) {
    bool ok = maxError <= tolerance;
    std::printf("%s: max error %.3g (tolerance %.3g) %s\n", name, maxError, tolerance, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

// A launch function refused its arguments (or the device) with `code` and
// the message `expected` from its <module>_last_error().
template <class Code> bool expectError(Code got, Code code, const char *message, const char *expected) {
    bool ok = got == code && std::strcmp(message, expected) == 0;
    std::printf("launch check: %s -> %d \"%s\" %s\n", expected, static_cast<int>(got), message, ok ? "ok" : "FAILED");
    return ok;
}

} // namespace harness
