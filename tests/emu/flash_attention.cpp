// Emulated examples/flash_attention_fwd_sm90.tl (warp-specialized: TMA
// producer for K and V, two consumer warp groups with wgmma, online softmax
// in registers, P from registers) and flash_attention_fwd_sm100a.tl
// (tcgen05: S and O in tensor memory, P stored there for the TS form) at
// BATCH = 1, HEADS = 2, SEQ = EMU_SEQ (384 unless the case says: 3
// key/value tiles, so the stages wrap), DIM = 128, against a
// double-precision softmax(Q Kᵀ / √D) V.
#include "harness.h"

#ifndef EMU_HEADER
#define EMU_HEADER "emu_flash_attention.h"
#endif
#include EMU_HEADER

#include <cmath>

#ifndef EMU_SEQ
#define EMU_SEQ 384
#endif

int main() {
    const int B = 1, H = 2, S = EMU_SEQ, D = 128;
    const size_t n = size_t(B) * S * H * D;
    auto at = [&](int b, int s, int h, int d) { return ((size_t(b) * S + s) * H + h) * D + d; };
    __nv_bfloat16 *Q = harness::alloc<__nv_bfloat16>(n), *K = harness::alloc<__nv_bfloat16>(n), *V = harness::alloc<__nv_bfloat16>(n);
    __nv_bfloat16 *O = harness::alloc<__nv_bfloat16>(n);
    std::vector<float> q = harness::random(n, -1, 1, 71), k = harness::random(n, -1, 1, 72), v = harness::random(n, -1, 1, 73);
    for (size_t i = 0; i < n; ++i) {
        Q[i] = __float2bfloat16(q[i]);
        K[i] = __float2bfloat16(k[i]);
        V[i] = __float2bfloat16(v[i]);
    }
    if (flash_attention_fwd(Q, K, V, O, nullptr) != cudaSuccess) return 1;
    double err = 0;
    std::vector<double> p(static_cast<size_t>(S));
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < S; ++i) {
                double m = -INFINITY, sum = 0;
                for (int j = 0; j < S; ++j) {
                    double s = 0;
                    for (int d = 0; d < D; ++d) s += double(__bfloat162float(Q[at(b, i, h, d)])) * double(__bfloat162float(K[at(b, j, h, d)]));
                    p[size_t(j)] = s / std::sqrt(double(D));
                    m = std::max(m, p[size_t(j)]);
                }
                for (int j = 0; j < S; ++j) sum += (p[size_t(j)] = std::exp(p[size_t(j)] - m));
                for (int d = 0; d < D; ++d) {
                    double o = 0;
                    for (int j = 0; j < S; ++j) o += p[size_t(j)] * double(__bfloat162float(V[at(b, j, h, d)]));
                    err = std::max(err, std::fabs(o / sum - double(__bfloat162float(O[at(b, i, h, d)]))));
                }
            }
    // P is rounded to bf16 before P V (relative 2^-9 per weight) and O to
    // bf16 (|O| < 1: 2^-9 absolute).
    return harness::report("flash attention forward (BSHD, D = 128), max abs error", err, 2e-3);
}
