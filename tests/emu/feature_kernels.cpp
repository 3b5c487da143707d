// Emulated checks of tests/emu/feature_kernels.tl, one kernel per feature.
#include "harness.h"

#include "emu_feature_kernels.h"

#include <algorithm>
#include <cstring>

namespace {

int checkReductions() {
    const int R = 8, C = 64;
    std::vector<float> x = harness::random(R * C, -5, 5, 11);
    float *X = harness::alloc<float>(R * C);
    std::copy(x.begin(), x.end(), X);
    float *out[6];
    for (float *&o : out) o = harness::alloc<float>(C);
    if (reductions(X, out[0], out[1], out[2], out[3], out[4], out[5], nullptr) != cudaSuccess) return 1;
    double err = 0;
    for (int r = 0; r < R; ++r) {
        double mx = -1e30, mn = 1e30, sum = 0, abssum = 0, absmax = 0;
        for (int c = 0; c < C; ++c) {
            double v = x[r * C + c];
            mx = std::max(mx, v);
            mn = std::min(mn, v);
            sum += v;
            abssum += std::fabs(v);
            absmax = std::max(absmax, std::fabs(v));
        }
        double refs[5] = {mx, mn, sum, abssum, absmax};
        for (int k = 0; k < 5; ++k) err = std::max(err, std::fabs(refs[k] - out[k][r]));
    }
    for (int c = 0; c < C; ++c) {
        double s = 0;
        for (int r = 0; r < R; ++r) s += x[r * C + c];
        err = std::max(err, std::fabs(s - out[5][c]));
    }
    return harness::report("reductions (max, min, sum, abssum, absmax; rows and columns)", err, 1e-4);
}

int checkTranspose() {
    std::vector<float> x = harness::random(64 * 32, -1, 1, 12);
    float *X = harness::alloc<float>(64 * 32), *Y = harness::alloc<float>(32 * 64);
    std::copy(x.begin(), x.end(), X);
    if (transpose(X, Y, nullptr) != cudaSuccess) return 1;
    double err = 0;
    for (int i = 0; i < 32; ++i)
        for (int j = 0; j < 64; ++j) err = std::max(err, double(std::fabs(Y[i * 64 + j] - x[j * 32 + i])));
    return harness::report("transpose through shared memory", err, 0);
}

int checkAccumulate() {
    std::vector<float> x = harness::random(4 * 64, -1, 1, 13);
    float *X = harness::alloc<float>(4 * 64), *total = harness::alloc<float>(64);
    int *count = harness::alloc<int>(1);
    std::copy(x.begin(), x.end(), X);
    std::fill(total, total + 64, 1.0f);
    count[0] = 5;
    if (accumulate(X, total, count, nullptr) != cudaSuccess) return 1;
    double err = count[0] == 6 ? 0 : 1e9;
    for (int c = 0; c < 64; ++c) {
        double s = 1.0;
        for (int b = 0; b < 4; ++b) s += x[b * 64 + c];
        err = std::max(err, std::fabs(s - total[c]));
    }
    return harness::report("atomic_add of tiles and elements", err, 1e-5);
}

int checkScalars() {
    int failures = 0;
    for (int n : {10, 11, 2}) {
        int *out = harness::alloc<int>(16);
        float *fout = harness::alloc<float>(8);
        std::fill(out, out + 16, -999);
        if (scalars(out, fout, n, nullptr) != cudaSuccess) return 1;
        int acc = 12;
        for (int u = 0; u < 4; ++u) acc = acc * 2 + u;
        int expect[11] = {acc, -3, -1, (n + 3) / 4, std::min(n, 3) + std::max(n, 3), 7, n > 5 ? 1 : 0, (n & 6) | 16, 7, -2,
                          n == 10 ? 100 : n == 11 ? 200 : 300};
        double err = 0;
        for (int k = 0; k < 11; ++k) {
            if (out[k] != expect[k]) {
                std::printf("  out[%d] = %d, expected %d\n", k, out[k], expect[k]);
                err = 1;
            }
        }
        double fexpect[8] = {8.0, std::sqrt(double(n)), std::sqrt(2.0), 0.5, -2.0 + 2.0, INFINITY, -INFINITY, std::tanh(0.5)};
        for (int k = 0; k < 8; ++k) {
            double d = std::isinf(fexpect[k]) ? (fout[k] == fexpect[k] ? 0 : 1) : std::fabs(fexpect[k] - fout[k]);
            err = std::max(err, d);
        }
        char name[64];
        std::snprintf(name, sizeof name, "scalars and control flow (n = %d)", n);
        failures += harness::report(name, err, 1e-6);
    }
    return failures;
}

int checkRows() {
    int failures = 0;
    for (int m : {32, 37, 5}) {
        std::vector<float> x = harness::random(size_t(m) * 64, -1, 1, 14);
        float *X = harness::alloc<float>(size_t(m) * 64), *Y = harness::alloc<float>(size_t(m) * 64 + 64);
        std::copy(x.begin(), x.end(), X);
        for (int i = 0; i < m * 64 + 64; ++i) Y[i] = -777.0f;
        if (rows(X, Y, m, nullptr) != cudaSuccess) return 1;
        double err = 0;
        for (int i = 0; i < m * 64; ++i) err = std::max(err, std::fabs(double(Y[i]) - (x[i] * 2.0 + 1.0)));
        for (int i = m * 64; i < m * 64 + 64; ++i) err = std::max(err, Y[i] == -777.0f ? 0.0 : 1e9);
        char name[64];
        std::snprintf(name, sizeof name, "dynamic rows (m = %d)", m);
        failures += harness::report(name, err, 1e-6);
    }
    return failures;
}

int checkSmallTile() {
    float *X = harness::alloc<float>(4), *Y = harness::alloc<float>(4);
    int *hits = harness::alloc<int>(4);
    for (int i = 0; i < 4; ++i) { X[i] = float(i); Y[i] = 0; hits[i] = 0; }
    if (small_tile(X, Y, hits, nullptr) != cudaSuccess) return 1;
    double err = 0;
    for (int i = 0; i < 4; ++i) {
        err = std::max(err, std::fabs(double(Y[i]) - (i + 1.0)));
        if (hits[i] != 1) err = 1e9;   // one replica writes, however many hold the element
    }
    return harness::report("replicated small tile", err, 0);
}

int checkConversions() {
    std::vector<float> x = harness::random(128, -100, 100, 15);
    float *X = harness::alloc<float>(128), *Z = harness::alloc<float>(128), *F = harness::alloc<float>(64);
    __nv_bfloat16 *B = harness::alloc<__nv_bfloat16>(128);
    __half *H = harness::alloc<__half>(128);
    std::copy(x.begin(), x.end(), X);
    if (conversions(X, B, H, Z, F, nullptr) != cudaSuccess) return 1;
    double err = 0;
    for (int i = 0; i < 128; ++i) {
        float ref = __half2float(__float2half(__bfloat162float(__float2bfloat16(x[i]))));
        err = std::max(err, double(std::fabs(ref - Z[i])));
    }
    for (int i = 0; i < 64; ++i) err = std::max(err, std::fabs(double(F[i]) - (i < 32 ? 0.0 : 2.5)));
    return harness::report("conversions, fill and clear", err, 0);
}

} // namespace

int main() {
    return checkReductions() + checkTranspose() + checkAccumulate() + checkScalars() + checkRows() + checkSmallTile() +
           checkConversions();
}
