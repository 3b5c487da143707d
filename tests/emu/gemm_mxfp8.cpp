// Emulated MXFP8 block-scaled GEMM (gemm_mxfp8_sm100a.tl: e4m3 x e4m3 with a
// ue8m0 factor per 32 elements of K, f32 accumulation in tensor memory, bf16
// result) at EMU_M x EMU_N x EMU_K against a double-precision reference that
// decodes the formats from their definitions (OCP MX: e4m3, and ue8m0 =
// 2^(b - 127)), written apart from the emulator's model of the instruction.
// The scale words are laid out as the example documents: SFA[k, m] holds
// row m's four factors of k-tile k, byte j for its j-th 32 elements.
#include "harness.h"
#include "references.h"

#include EMU_HEADER

namespace {

// e4m3: sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 is subnormal.
double e4m3(unsigned byte) {
    unsigned exponent = (byte >> 3) & 15, mantissa = byte & 7;
    double magnitude = exponent == 0 ? mantissa / 8.0 * std::ldexp(1.0, -6) : (1.0 + mantissa / 8.0) * std::ldexp(1.0, int(exponent) - 7);
    return byte & 0x80 ? -magnitude : magnitude;
}

} // namespace

int main() {
    const int M = EMU_M, N = EMU_N, K = EMU_K, kTiles = (K + 127) / 128;
    std::mt19937 gen(73);
    auto values = [&](int rows) {   // e4m3 bytes without the NaNs (0x7F, 0xFF)
        std::vector<unsigned char> v(size_t(rows) * K);
        for (auto &b : v) {
            do b = static_cast<unsigned char>(gen());
            while ((b & 0x7F) == 0x7F);
        }
        return v;
    };
    auto factors = [&](int rows) {   // [rows, 4 * kTiles] ue8m0 bytes, 2^-4 to 2^4
        std::vector<unsigned char> v(size_t(rows) * 4 * kTiles);
        for (auto &b : v) b = static_cast<unsigned char>(123 + gen() % 9);
        return v;
    };
    auto words = [&](const std::vector<unsigned char> &f, int rows) {   // [kTiles, rows]
        std::vector<unsigned> w(size_t(kTiles) * rows, 0);
        for (int r = 0; r < rows; ++r)
            for (int s = 0; s < 4 * kTiles; ++s) w[size_t(s / 4) * rows + r] |= unsigned(f[size_t(r) * 4 * kTiles + s]) << (8 * (s % 4));
        return w;
    };
    std::vector<unsigned char> a = values(M), b = values(N), fa = factors(M), fb = factors(N);
    std::vector<unsigned> wa = words(fa, M), wb = words(fb, N);
    unsigned char *A = harness::alloc<unsigned char>(a.size()), *B = harness::alloc<unsigned char>(b.size());
    unsigned *SFA = harness::alloc<unsigned>(wa.size()), *SFB = harness::alloc<unsigned>(wb.size());
    __nv_bfloat16 *C = harness::alloc<__nv_bfloat16>(size_t(M) * N);
    std::memcpy(A, a.data(), a.size());
    std::memcpy(B, b.data(), b.size());
    std::memcpy(SFA, wa.data(), wa.size() * 4);
    std::memcpy(SFB, wb.data(), wb.size() * 4);
    if (gemm_mxfp8(reinterpret_cast<__nv_fp8_e4m3 *>(A), reinterpret_cast<__nv_fp8_e4m3 *>(B), SFA, SFB, C, nullptr) != cudaSuccess) return 1;
    auto element = [&](const std::vector<unsigned char> &v, const std::vector<unsigned char> &f, int row, int k) {
        return e4m3(v[size_t(row) * K + k]) * std::ldexp(1.0, int(f[size_t(row) * 4 * kTiles + k / 32]) - 127);
    };
    double err = reference::gemmError(
        M, N, K, [&](int i, int k) { return element(a, fa, i, k); }, [&](int k, int j) { return element(b, fb, j, k); }, false,
        [&](int i, int j) { return double(__bfloat162float(C[size_t(i) * N + j])); });
    // The result is rounded to bf16 (8 significant bits): up to 2^-8 of it.
    std::printf("%d x %d x %d: ", M, N, K);
    return harness::report("MXFP8 block-scaled gemm (e4m3 x e4m3, ue8m0 factors per 32, bf16 result), relative error", err, 5e-3);
}
