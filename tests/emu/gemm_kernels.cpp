// Emulated checks of tests/emu/gemm_kernels.tl: each mma.sync variant against
// a double-precision product of the same (rounded) inputs.
#include "harness.h"
#include "tf32.h"

#include "emu_gemm_kernels.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace {

constexpr int M = 64, N = 64, K = 64;

// Element-typed device-like copies of `values`, and the values the kernel
// actually sees (after rounding to the element type) as doubles.
template <class T> struct Operand {
    T *data;
    std::vector<double> seen;
    Operand(const std::vector<float> &values, const std::function<T(float)> &to, const std::function<double(T)> &from)
        : data(harness::alloc<T>(values.size())), seen(values.size()) {
        for (size_t i = 0; i < values.size(); ++i) {
            data[i] = to(values[i]);
            seen[i] = from(data[i]);
        }
    }
};

Operand<__half> halves(size_t n, unsigned seed) {
    return {harness::random(n, -1, 1, seed), [](float x) { return __float2half(x); }, [](__half x) { return double(__half2float(x)); }};
}

// ref[i][j] = sum_k a(i, k) * b(k, j), with the operands given as accessors.
std::vector<double> product(int m, int n, int k, const std::function<double(int, int)> &a, const std::function<double(int, int)> &b) {
    std::vector<double> c(size_t(m) * n, 0.0);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0;
            for (int x = 0; x < k; ++x) s += a(i, x) * b(x, j);
            c[size_t(i) * n + j] = s;
        }
    return c;
}

template <class T, class F> double maxError(const std::vector<double> &ref, const T *out, F toDouble) {
    double err = 0;
    for (size_t i = 0; i < ref.size(); ++i) err = std::max(err, std::fabs(ref[i] - toDouble(out[i])));
    return err;
}

int checkF16() {
    Operand<__half> a = halves(M * K, 21), b = halves(K * N, 22);
    float *c = harness::alloc<float>(M * N);
    if (gemm_f16(a.data, b.data, c, nullptr) != cudaSuccess) return 1;
    std::vector<double> ref = product(M, N, K, [&](int i, int k) { return a.seen[i * K + k]; }, [&](int k, int j) { return b.seen[k * N + j]; });
    for (double &r : ref) r = std::max(r, 0.0);
    return harness::report("gemm f16 -> f32, two k-tiles, ReLU epilogue (ldmatrix, ldmatrix.trans, mma m16n8k16)", maxError(ref, c, [](float x) { return double(x); }),
                           1e-4);
}

int checkF16Transposed() {
    Operand<__half> at = halves(K * M, 23), bt = halves(N * K, 24);
    __half *c = harness::alloc<__half>(M * N);
    if (gemm_f16_tn(at.data, bt.data, c, nullptr) != cudaSuccess) return 1;
    std::vector<double> ref = product(M, N, K, [&](int i, int k) { return at.seen[k * M + i]; }, [&](int k, int j) { return bt.seen[j * K + k]; });
    // An f16 accumulator rounds after every k-step.
    return harness::report("gemm f16 -> f16, A and B transposed, clear_accum on the first tile",
                           maxError(ref, c, [](__half x) { return double(__half2float(x)); }), 2e-2);
}

int checkBf16() {
    const int m = 32, n = 40;
    Operand<__nv_bfloat16> a(harness::random(m * K, -1, 1, 25), [](float x) { return __float2bfloat16(x); },
                             [](__nv_bfloat16 x) { return double(__bfloat162float(x)); });
    Operand<__nv_bfloat16> b(harness::random(K * n, -1, 1, 26), [](float x) { return __float2bfloat16(x); },
                             [](__nv_bfloat16 x) { return double(__bfloat162float(x)); });
    float *c = harness::alloc<float>(m * n);
    if (gemm_bf16(a.data, b.data, c, nullptr) != cudaSuccess) return 1;
    std::vector<double> ref = product(m, n, K, [&](int i, int k) { return a.seen[i * K + k]; }, [&](int k, int j) { return b.seen[k * n + j]; });
    return harness::report("gemm bf16 -> f32, 32x40 on two warps (ldmatrix .x4 and .x2)", maxError(ref, c, [](float x) { return double(x); }), 1e-4);
}

double tf32(float x) { return tf32Truncated(x); }

int checkTf32() {
    const int k = 32;
    Operand<float> a(harness::random(M * k, -1, 1, 27), [](float x) { return x; }, tf32);
    Operand<float> b(harness::random(k * N, -1, 1, 28), [](float x) { return x; }, tf32);
    float *c = harness::alloc<float>(M * N);
    if (gemm_tf32(a.data, b.data, c, nullptr) != cudaSuccess) return 1;
    std::vector<double> ref = product(M, N, k, [&](int i, int x) { return a.seen[i * k + x]; }, [&](int x, int j) { return b.seen[x * N + j]; });
    return harness::report("gemm tf32 -> f32 (A by ldmatrix, B element by element)", maxError(ref, c, [](float x) { return double(x); }), 1e-4);
}

Operand<signed char> bytes(size_t n, unsigned seed) {
    return {harness::random(n, -8, 8, seed), [](float x) { return static_cast<signed char>(std::lround(x)); },
            [](signed char x) { return double(x); }};
}

int checkInt8() {
    Operand<signed char> a = bytes(M * K, 29), bt = bytes(N * K, 30), b = bytes(K * N, 31);
    int *c = harness::alloc<int>(M * N), *c2 = harness::alloc<int>(M * N);
    if (gemm_int8(a.data, bt.data, c, nullptr) != cudaSuccess) return 1;
    if (gemm_int8_nn(a.data, b.data, c2, nullptr) != cudaSuccess) return 1;
    std::vector<double> ref = product(M, N, K, [&](int i, int k) { return a.seen[i * K + k]; }, [&](int k, int j) { return bt.seen[j * K + k]; });
    std::vector<double> ref2 = product(M, N, K, [&](int i, int k) { return a.seen[i * K + k]; }, [&](int k, int j) { return b.seen[k * N + j]; });
    int failed = harness::report("gemm int8 -> int32, B stored [N, K] (mma m16n8k32)", maxError(ref, c, [](int x) { return double(x); }), 0);
    failed += harness::report("gemm int8 -> int32, B stored [K, N] (element loads)", maxError(ref2, c2, [](int x) { return double(x); }), 0);
    return failed;
}

int checkRegisterA() {
    Operand<__half> a = halves(M * K, 32), b = halves(K * N, 33);
    float *c = harness::alloc<float>(M * N), *c2 = harness::alloc<float>(M * N);
    if (gemm_rs(a.data, b.data, c, nullptr) != cudaSuccess) return 1;
    if (gemm_rs_ldsm(a.data, b.data, c2, nullptr) != cudaSuccess) return 1;
    std::vector<double> ref = product(M, N, K, [&](int i, int k) { return a.seen[i * K + k]; }, [&](int k, int j) { return b.seen[k * N + j]; });
    int failed = harness::report("gemm with A in a register fragment", maxError(ref, c, [](float x) { return double(x); }), 1e-4);
    failed += harness::report("gemm with A loaded into registers by copy (ldmatrix)", maxError(ref, c2, [](float x) { return double(x); }), 1e-4);
    return failed;
}

int checkFma() {
    const int n = 32, k = 32;
    Operand<__half> a = halves(n * k, 34), b = halves(k * n, 35);
    float *c = harness::alloc<float>(n * n);
    if (gemm_fma(a.data, b.data, c, nullptr) != cudaSuccess) return 1;
    std::vector<double> ref = product(n, n, k, [&](int i, int x) { return a.seen[i * k + x]; }, [&](int x, int j) { return b.seen[x * n + j]; });
    return harness::report("gemm with FMA", maxError(ref, c, [](float x) { return double(x); }), 1e-4);
}

int checkRows() {
    Operand<__half> a = halves(M * K, 36), b = halves(K * N, 37);
    float *c = harness::alloc<float>(M * N), *sums = harness::alloc<float>(M);
    if (gemm_rows(a.data, b.data, c, sums, nullptr) != cudaSuccess) return 1;
    std::vector<double> ref = product(M, N, K, [&](int i, int k) { return a.seen[i * K + k]; }, [&](int k, int j) { return b.seen[k * N + j]; });
    double err = 0;
    for (int i = 0; i < M; ++i) {
        double mx = -1e300, sum = 0;
        for (int j = 0; j < N; ++j) mx = std::max(mx, ref[i * N + j]);
        for (int j = 0; j < N; ++j) {
            err = std::max(err, std::fabs(ref[i * N + j] - mx - c[i * N + j]));
            sum += ref[i * N + j] - mx;
        }
        err = std::max(err, std::fabs(sum - sums[i]) / 64);
    }
    return harness::report("row max, broadcast and row sum over an mma accumulator", err, 1e-4);
}

} // namespace

int main() {
    int failed = 0;
    failed += checkF16();
    failed += checkF16Transposed();
    failed += checkBf16();
    failed += checkTf32();
    failed += checkInt8();
    failed += checkRegisterA();
    failed += checkFma();
    failed += checkRows();
    return failed ? 1 : 0;
}
