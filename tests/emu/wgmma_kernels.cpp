// Emulated checks of tests/emu/wgmma_kernels.tl: wgmma from shared-memory
// descriptors (K- and MN-major operands, 128B and 64B swizzles, one and two
// warp groups, f32, f16 and int32 accumulators; f16, bf16, fp8, int8 and tf32
// operands).
#include "harness.h"
#include "references.h"
#include "tf32.h"

#include "emu_wgmma_kernels.h"

namespace {

template <class T> T *fill(size_t n, unsigned seed, T (*to)(float)) {
    std::vector<float> v = harness::random(n, -1, 1, seed);
    T *p = harness::alloc<T>(n);
    for (size_t i = 0; i < n; ++i) p[i] = to(v[i]);
    return p;
}
__half toHalf(float x) { return __float2half(x); }
__nv_bfloat16 toBf16(float x) { return __float2bfloat16(x); }
__nv_fp8_e4m3 toE4m3(float x) { return __nv_fp8_e4m3(x); }
__nv_fp8_e5m2 toE5m2(float x) { return __nv_fp8_e5m2(x); }
signed char toInt8(float x) { return static_cast<signed char>(x * 100); }
float asIs(float x) { return x; }

} // namespace

int main() {
    int failed = 0;
    {
        __half *A = fill(128 * 64, 91, toHalf), *B = fill(64 * 128, 92, toHalf);
        float *C = harness::alloc<float>(128 * 128);
        if (wg_nn(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            128, 128, 64, [&](int i, int k) { return double(__half2float(A[i * 64 + k])); },
            [&](int k, int j) { return double(__half2float(B[k * 128 + j])); }, false, [&](int i, int j) { return double(C[i * 128 + j]); });
        failed += harness::report("wgmma m64n128k16, A K-major, B N-major (128B swizzles)", err, 1e-4);
    }
    {
        __nv_bfloat16 *At = fill(64 * 128, 93, toBf16), *Bt = fill(128 * 64, 94, toBf16);
        float *C = harness::alloc<float>(128 * 128);
        if (wg_tn(At, Bt, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            128, 128, 64, [&](int i, int k) { return double(__bfloat162float(At[k * 128 + i])); },
            [&](int k, int j) { return double(__bfloat162float(Bt[j * 64 + k])); }, false, [&](int i, int j) { return double(C[i * 128 + j]); });
        failed += harness::report("wgmma bf16, A M-major, B K-major, two warp groups, TMA-loaded tiles", err, 1e-4);
    }
    {
        __half *A = fill(64 * 64, 95, toHalf), *B = fill(64 * 64, 96, toHalf), *C = harness::alloc<__half>(64 * 64);
        if (wg_small(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            64, 64, 64, [&](int i, int k) { return double(__half2float(A[i * 64 + k])); },
            [&](int k, int j) { return double(__half2float(B[k * 64 + j])); }, false,
            [&](int i, int j) { return double(__half2float(C[i * 64 + j])); });
        // An f16 accumulator rounds after each of the 4 k-steps.
        failed += harness::report("wgmma into an f16 accumulator over two k-tiles (64B-swizzled A), relative error", err, 4e-3);
    }
    {
        __nv_fp8_e4m3 *A = fill(128 * 64, 97, toE4m3), *B = fill(128 * 64, 98, toE4m3);
        float *C = harness::alloc<float>(128 * 128);
        if (wg_fp8(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            128, 128, 64, [&](int i, int k) { return double(float(A[i * 64 + k])); }, [&](int k, int j) { return double(float(B[j * 64 + k])); },
            false, [&](int i, int j) { return double(C[i * 128 + j]); });
        failed += harness::report("wgmma m64n128k32 e4m3 x e4m3 -> f32, K-major (64B swizzles)", err, 1e-4);
    }
    {
        __nv_fp8_e4m3 *A = fill(64 * 64, 99, toE4m3);
        __nv_fp8_e5m2 *B = fill(64 * 64, 100, toE5m2);
        __half *C = harness::alloc<__half>(64 * 64);
        if (wg_fp8_mixed(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            64, 64, 64, [&](int i, int k) { return double(float(A[i * 64 + k])); }, [&](int k, int j) { return double(float(B[j * 64 + k])); },
            false, [&](int i, int j) { return double(__half2float(C[i * 64 + j])); });
        failed += harness::report("wgmma e4m3 x e5m2 -> f16, relative error", err, 4e-3);
    }
    {
        signed char *A = fill(64 * 128, 101, toInt8), *B = fill(64 * 128, 102, toInt8);
        int *C = harness::alloc<int>(64 * 64);
        if (wg_int8(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            64, 64, 128, [&](int i, int k) { return double(A[i * 128 + k]); }, [&](int k, int j) { return double(B[j * 128 + k]); }, false,
            [&](int i, int j) { return double(C[i * 64 + j]); });
        failed += harness::report("wgmma int8 -> int32 over two k-tiles (exact)", err, 0);
    }
    {
        float *A = fill(64 * 32, 103, asIs), *B = fill(128 * 32, 104, asIs), *C = harness::alloc<float>(64 * 128);
        if (wg_tf32(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            64, 128, 32, [&](int i, int k) { return double(tf32Truncated(A[i * 32 + k])); },
            [&](int k, int j) { return double(tf32Truncated(B[j * 32 + k])); }, false, [&](int i, int j) { return double(C[i * 128 + j]); });
        failed += harness::report("wgmma m64n128k8 tf32 (f32 operands read as tf32)", err, 1e-5);
    }
    {
        __half *A = fill(128 * 64, 105, toHalf), *B = fill(64 * 128, 106, toHalf);
        float *C = harness::alloc<float>(128 * 128);
        if (wg_rs(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            128, 128, 64, [&](int i, int k) { return double(__half2float(A[i * 64 + k])); },
            [&](int k, int j) { return double(__half2float(B[k * 128 + j])); }, false, [&](int i, int j) { return double(C[i * 128 + j]); });
        failed += harness::report("wgmma with A from registers, two warp groups along M", err, 1e-4);
    }
    {
        __half *A = fill(64 * 64, 107, toHalf), *B = fill(24 * 64, 108, toHalf);
        float *C = harness::alloc<float>(64 * 24);
        if (wg_n24(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            64, 24, 64, [&](int i, int k) { return double(__half2float(A[i * 64 + k])); },
            [&](int k, int j) { return double(__half2float(B[j * 64 + k])); }, false, [&](int i, int j) { return double(C[i * 24 + j]); });
        failed += harness::report("wgmma m64n24k16 (N = 8 mod 16)", err, 1e-4);
    }
    {
        __nv_bfloat16 *A = fill(128 * 64, 105, toBf16), *B = fill(64 * 256, 106, toBf16);
        __nv_bfloat16 *C = harness::alloc<__nv_bfloat16>(128 * 256);
        if (wg_stmatrix(A, B, C, nullptr) != cudaSuccess) return 1;
        double err = reference::gemmError(
            128, 256, 64, [&](int i, int k) { return double(__bfloat162float(A[i * 64 + k])); },
            [&](int k, int j) { return double(__bfloat162float(B[k * 256 + j])); }, false,
            [&](int i, int j) { return double(__bfloat162float(C[i * 256 + j])); });
        // bf16 keeps 8 bits of mantissa: the stored result is within 2^-8 relative.
        failed += harness::report("wgmma f32 accumulator -> bf16 by stmatrix -> TMA store, relative error", err, 8e-3);
    }
    {
        __half *A = fill(64 * 64, 107, toHalf), *B = fill(64 * 64, 108, toHalf);
        __half *C = harness::alloc<__half>(64 * 64), *D = harness::alloc<__half>(64 * 64);
        if (wg_stmatrix_parts(A, B, C, D, nullptr) != cudaSuccess) return 1;
        auto a = [&](int i, int k) { return double(__half2float(A[i * 64 + k])); };
        auto b = [&](int k, int j) { return double(__half2float(B[k * 64 + j])); };
        double err = reference::gemmError(64, 64, 64, a, b, false, [&](int i, int j) { return double(__half2float(C[i * 64 + j])); });
        failed += harness::report("wgmma f16 accumulator by stmatrix into columns 8..71 of a stage, relative error", err, 4e-3);
        err = reference::gemmError(64, 64, 64, a, b, false, [&](int i, int j) { return double(__half2float(D[i * 64 + j])); });
        failed += harness::report("mma.sync f32 accumulator -> f16 by stmatrix into columns 16..79, relative error", err, 4e-3);
    }
    return failed;
}
