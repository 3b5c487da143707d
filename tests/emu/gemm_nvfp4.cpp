// Emulated NVFP4 block-scaled GEMM (gemm_nvfp4_sm120a.tl and
// gemm_nvfp4_sm100a.tl: e2m1 x e2m1 with a ue4m3 factor per 16 elements of
// K, f32 accumulation, bf16 result) at EMU_M x EMU_N x EMU_K against a
// double-precision reference that decodes the formats from their definitions
// (OCP MX e2m1; e4m3 without its sign bit), written apart from the
// emulator's model of the instructions. The scale words are laid out as each
// example documents: sm120a's in TileLang's blockscaled_chunk_kmajor (a
// 128 x 4-word chunk per 128-row tile and 256-deep k-tile); with
// EMU_SF_WORDS_BY_K (sm100a's) SF[w, r] holds row r's factors for K
// positions 64w .. 64w + 63.
#include "harness.h"
#include "references.h"

#include EMU_HEADER

namespace {

// e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is subnormal.
double e2m1(unsigned nibble) {
    unsigned exponent = (nibble >> 1) & 3, mantissa = nibble & 1;
    double magnitude = exponent == 0 ? 0.5 * mantissa : (1.0 + 0.5 * mantissa) * std::ldexp(1.0, int(exponent) - 1);
    return nibble & 8 ? -magnitude : magnitude;
}

// ue4m3: 4 exponent bits (bias 7), 3 mantissa bits, no sign.
double ue4m3(unsigned byte) {
    unsigned exponent = byte >> 3, mantissa = byte & 7;
    return exponent == 0 ? mantissa / 8.0 * std::ldexp(1.0, -6) : (1.0 + mantissa / 8.0) * std::ldexp(1.0, int(exponent) - 7);
}

// The chunked word layout of one operand's factors: rows x ceil(K / 16) bytes.
std::vector<unsigned> chunkWords(const std::vector<unsigned char> &factors, int rows, int K) {
    const int tileRows = 128, tileK = 256, kTiles = (K + tileK - 1) / tileK, blocks16 = (K + 15) / 16;
    int rowTiles = (rows + tileRows - 1) / tileRows;
    std::vector<unsigned> words(size_t(rowTiles) * kTiles * tileRows * 4, 0);
    for (int r = 0; r < rowTiles * tileRows; ++r) {
        for (int s = 0; s < kTiles * tileK / 16; ++s) {
            unsigned byte = r < rows && s < blocks16 ? factors[size_t(r) * blocks16 + s] : 0x38;   // padding: 1.0
            int tile = r / tileRows, inTile = r % tileRows, kTile = s / 16, word = s % 16 / 4;
            int flat = word * 128 + inTile % 32 * 4 + inTile / 32;
            words[(size_t(tile) * kTiles + kTile) * tileRows * 4 + size_t(flat)] |= byte << (8 * (s % 4));
        }
    }
    return words;
}

// The word-per-64-elements layout: SF[w, r], ceil(K / 64) x rows words.
std::vector<unsigned> wordsByK(const std::vector<unsigned char> &factors, int rows, int K) {
    const int blocks16 = (K + 15) / 16, wordsPerRow = (K + 63) / 64;
    std::vector<unsigned> words(size_t(wordsPerRow) * rows, 0);
    for (int r = 0; r < rows; ++r)
        for (int s = 0; s < blocks16; ++s) words[size_t(s / 4) * rows + r] |= unsigned(factors[size_t(r) * blocks16 + s]) << (8 * (s % 4));
    return words;
}

} // namespace

int main() {
    const int M = EMU_M, N = EMU_N, K = EMU_K, blocks16 = (K + 15) / 16;
    std::mt19937 gen(71);
    auto nibbles = [&](int rows) {
        std::vector<unsigned char> v(size_t(rows) * K / 2);
        for (auto &b : v) b = static_cast<unsigned char>(gen());
        return v;
    };
    auto factors = [&](int rows) {   // 0.5 to 2.25
        std::vector<unsigned char> v(size_t(rows) * blocks16);
        for (auto &b : v) b = static_cast<unsigned char>(0x30 + gen() % 17);
        return v;
    };
    std::vector<unsigned char> a = nibbles(M), b = nibbles(N), fa = factors(M), fb = factors(N);
#ifdef EMU_SF_WORDS_BY_K
    std::vector<unsigned> wa = wordsByK(fa, M, K), wb = wordsByK(fb, N, K);
#else
    std::vector<unsigned> wa = chunkWords(fa, M, K), wb = chunkWords(fb, N, K);
#endif
    unsigned char *A = harness::alloc<unsigned char>(a.size()), *B = harness::alloc<unsigned char>(b.size());
    unsigned *SFA = harness::alloc<unsigned>(wa.size()), *SFB = harness::alloc<unsigned>(wb.size());
    __nv_bfloat16 *C = harness::alloc<__nv_bfloat16>(size_t(M) * N);
    std::memcpy(A, a.data(), a.size());
    std::memcpy(B, b.data(), b.size());
    std::memcpy(SFA, wa.data(), wa.size() * 4);
    std::memcpy(SFB, wb.data(), wb.size() * 4);
    if (gemm_nvfp4(A, B, SFA, SFB, C, nullptr) != cudaSuccess) return 1;
    auto element = [&](const std::vector<unsigned char> &packed, const std::vector<unsigned char> &f, int row, int k) {
        unsigned nibble = (packed[(size_t(row) * K + k) / 2] >> (4 * (k % 2))) & 0xF;
        return e2m1(nibble) * ue4m3(f[size_t(row) * blocks16 + k / 16]);
    };
    double err = reference::gemmError(
        M, N, K, [&](int i, int k) { return element(a, fa, i, k); }, [&](int k, int j) { return element(b, fb, j, k); }, false,
        [&](int i, int j) { return double(__bfloat162float(C[size_t(i) * N + j])); });
    // The result is rounded to bf16 (8 significant bits): up to 2^-8 of it.
    std::printf("%d x %d x %d: ", M, N, K);
    return harness::report("NVFP4 block-scaled gemm (e2m1 x e2m1, ue4m3 factors, bf16 result), relative error", err, 5e-3);
}
