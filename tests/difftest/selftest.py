#!/usr/bin/env python3
"""Checks of the reference interpreter against values worked out by hand
from docs/language.md, so that the difftest's oracle is itself tested.

usage: selftest.py TILET
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tldtypes  # noqa: E402
import tlinterp  # noqa: E402

TILET = sys.argv[1] if len(sys.argv) > 1 else "build/tilet"
failures = []


def run(src, kernel, tensors, scalars=None, dyn=None):
    with tempfile.NamedTemporaryFile("w", suffix=".tl", delete=False) as f:
        f.write(src)
        path = f.name
    try:
        r = subprocess.run([TILET, path, "--emit=ast"], capture_output=True, text=True, check=True)
    finally:
        os.unlink(path)
    it = tlinterp.Interpreter(r.stdout, src)
    it.run(kernel, tensors, scalars or {}, dyn or {})
    return tensors


def check(name, got, want):
    if got != want:
        failures.append(f"{name}: got {got!r}, want {want!r}")


def expect_invalid(name, src, kernel, tensors, reason=None):
    """The program is reported as invalid (for `reason`, a part of the
    message, when given: so that it fails for the error under test)."""
    try:
        run(src, kernel, tensors)
    except tldtypes.InvalidProgram as e:
        if reason is not None and reason not in str(e):
            failures.append(f"{name}: reported as invalid for another reason: {e}")
        return
    failures.append(f"{name}: not reported as invalid")


# C's integer promotion: int8 + int8 is computed in int32 (section 3), and
# division truncates towards zero.
t = run("""kernel k(A: int8[2], B: int32[5]) grid(1) threads(32) {
    for i in parallel(1) {
        B[0] = A[0] + A[1];
        B[1] = -7 / 2;
        B[2] = -7 % 2;
        B[3] = cast(-2.75, int32);
        B[4] = ceildiv(72, 32);
    }
}""", "k", {"A": [100, 100], "B": [0] * 5})
check("integer promotion and truncation", t["B"], [200, -3, -1, -2, 3])

# Narrow floats are computed in f32 and rounded at the store; an untyped
# constant takes the type of the value next to it.
t = run("""kernel k(A: f16[2], B: f16[2], C: bf16[1], D: f32[1]) grid(1) threads(32) {
    for i in parallel(1) {
        B[0] = A[0] * A[1];
        B[1] = A[0] + 0.0001;
        C[0] = A[0] * 3.0;
        D[0] = A[0] / 3.0;
    }
}""", "k", {"A": [1.5, 1.0009765625], "B": [0.0, 0.0], "C": [0.0], "D": [0.0]})
check("f16 product rounded once", t["B"], [tldtypes.f16(1.5 * 1.0009765625), 1.5])
check("bf16 store", t["C"], [4.5])
check("f32 division", t["D"], [tldtypes.f32(0.5)])

# Global reads outside a tensor give 0 and writes there do nothing
# (section 8); a corner takes the other operand's extents (section 9).
t = run("""kernel k(X: f32[4, 4], Y: f32[4, 4]) grid(1) threads(32) {
    let s = alloc_shared([2, 4], f32);
    copy(X[3, 2], s);
    copy(s, Y[2, 0]);
}""", "k", {"X": [float(i) for i in range(16)], "Y": [-1.0] * 16})
check("edges and corners", t["Y"], [-1.0] * 8 + [14.0, 15.0, 0.0, 0.0] + [0.0] * 4)

# Reductions: clear = false combines with the destination; abssum sums |x|.
t = run("""kernel k(X: f32[2, 3], Y: f32[2], Z: f32[3]) grid(1) threads(32) {
    let x = alloc_fragment([2, 3], f32);
    let r = alloc_fragment([2], f32);
    let c = alloc_fragment([3], f32);
    copy(X, x);
    reduce_max(x, r);
    reduce_abssum(x, r, clear = false);
    reduce_min(x, c, dim = 0);
    copy(r, Y);
    copy(c, Z);
}""", "k", {"X": [1.0, -5.0, 2.0, -1.0, -2.0, -3.0], "Y": [0.0] * 2, "Z": [0.0] * 3})
check("reductions", (t["Y"], t["Z"]), ([10.0, 5.0], [-1.0, -5.0, -3.0]))

# A var declared inside a parallel loop is each iteration's own (TileLang's T.alloc_var there).
t = run("""kernel k(X: f32[4], Y: f32[4]) grid(1) threads(32) {
    for i in parallel(4) {
        var r: f32;
        if (X[i] > 0.0) {
            r = 1.0;
        } else {
            r = 0.0;
        }
        Y[i] = X[i] * r;
    }
}""", "k", {"X": [1.0, -2.0, 3.0, -4.0], "Y": [0.0] * 4})
check("var in a parallel loop", t["Y"], [1.0, 0.0, 3.0, 0.0])

# A parenthesized float literal is read from its own spelling (the AST places it at the parenthesis).
t = run("""kernel k(Y: f32[4]) grid(1) threads(32) {
    for i in parallel(4) {
        Y[i] = (0.25) * 2.0 + ((1.5));
    }
}""", "k", {"Y": [0.0] * 4})
check("parenthesized float literals", t["Y"], [2.0] * 4)

# gemm: C += A * B^T.
t = run("""kernel k(A: f16[2, 2], B: f16[2, 2], C: f32[2, 2]) grid(1) threads(32) {
    let a = alloc_shared([2, 2], f16);
    let b = alloc_shared([2, 2], f16);
    let c = alloc_fragment([2, 2], f32);
    copy(A, a);
    copy(B, b);
    fill(c, 1.0);
    gemm(a, b, c, transpose_B = true);
    copy(c, C);
}""", "k", {"A": [1.0, 2.0, 3.0, 4.0], "B": [1.0, 0.0, 1.0, 1.0], "C": [0.0] * 4})
check("gemm", t["C"], [2.0, 4.0, 4.0, 8.0])

# An f32 gemm on tensor cores (difftest's tf32.truncate) reads its operands
# as tf32: 1 + 2^-11 loses its last bit (the low 13 of 23), 1 + 2^-10 keeps it.
TF32_GEMM = """kernel k(A: f32[2, 2], B: f32[2, 2], C: f32[2, 2]) grid(1) threads(32) {
    let a = alloc_shared([2, 2], f32);
    let b = alloc_shared([2, 2], f32);
    let c = alloc_fragment([2, 2], f32);
    copy(A, a);
    copy(B, b);
    clear(c);
    gemm(a, b, c);
    copy(c, C);
}"""
for truncate, want in ((False, 2.0 + 2 ** -11 + 2 ** -10), (True, 2.0 + 2 ** -10)):
    r = subprocess.run([TILET, "-", "--emit=ast"], input=TF32_GEMM, capture_output=True, text=True, check=True)
    it = tlinterp.Interpreter(r.stdout, TF32_GEMM)
    it.tf32_truncate = truncate
    tensors = {"A": [1.0 + 2 ** -11, 1.0 + 2 ** -10, 0.0, 0.0], "B": [1.0, 0.0, 1.0, 0.0], "C": [0.0] * 4}
    it.run("k", tensors, {}, {})
    check(f"f32 gemm, tf32_truncate = {truncate}", tensors["C"], [want, 0.0, 0.0, 0.0])
check("tf32 of 1 + 2^-11 + 2^-23", tldtypes.tf32_truncated(1.0 + 2 ** -11 + 2 ** -23), 1.0)

# Undefined behaviour is reported, never given a value.
expect_invalid("uninitialised read", """kernel k(Y: f32[4]) grid(1) threads(32) {
    let s = alloc_shared([4], f32);
    for i in parallel(4) {
        Y[i] = s[i];
    }
}""", "k", {"Y": [0.0] * 4})
expect_invalid("blocks racing", """kernel k(Y: f32[4]) grid(2) as (bx) threads(32) {
    for i in parallel(4) {
        Y[i] = cast(bx, f32);
    }
}""", "k", {"Y": [0.0] * 4})

expect_invalid("dependent iterations", """kernel k(Y: f32[4, 4]) grid(1) threads(32) {
    let s = alloc_shared([4, 4], f32);
    fill(s, 1.0);
    for i, j in parallel(4, 4) {
        s[i, j] = s[j, i] + 1.0;
    }
    copy(s, Y);
}""", "k", {"Y": [0.0] * 16})
# ... while reading the iteration's own element, and elements nobody writes, is fine.
t = run("""kernel k(Y: f32[2, 2]) grid(1) threads(32) {
    let s = alloc_shared([2, 2], f32);
    let r = alloc_shared([2, 2], f32);
    fill(s, 1.0);
    fill(r, 2.0);
    for i, j in parallel(2, 2) {
        s[i, j] = s[i, j] + r[j, i] + r[0, 0];
    }
    copy(s, Y);
}""", "k", {"Y": [0.0] * 4})
check("independent iterations", t["Y"], [5.0] * 4)

# im2col and a tensor view as a convolution (TileLang's example_convolution
# shape of the program), against the convolution's definition as a sum:
# out[n, oh, ow, f] = sum over kh, kw, c of data[n, oh*S + kh*D - P, ow*S + kw*D - P, c] * w[kh, kw, c, f],
# zero outside the image. Stride 2, dilation 2, a channel count that splits
# a 4-column tile over two taps, and a last tile past the im2col matrix.
Nn, H, W, C, F, K, S, D, P = 1, 5, 6, 2, 3, 2, 2, 2, 1
OH, OW = (H + 2 * P - D * (K - 1) - 1) // S + 1, (W + 2 * P - D * (K - 1) - 1) // S + 1
data = [float((i * 7) % 5 - 2) for i in range(Nn * H * W * C)]
weight = [float((i * 3) % 4 - 1) for i in range(K * K * C * F)]
t = run(f"""kernel k(X: f32[{Nn}, {H}, {W}, {C}], Wt: f32[{K}, {K}, {C}, {F}], Y: f32[{Nn}, {OH}, {OW}, {F}]) grid({(Nn * OH * OW + 3) // 4}) as (b) threads(32) {{
    let a = alloc_shared([4, 4], f32);
    let w = alloc_shared([4, {F}], f32);
    let acc = alloc_fragment([4, {F}], f32);
    let w_flat = Tensor([{K * K * C}, {F}], f32, Wt);
    let y_flat = Tensor([{Nn * OH * OW}, {F}], f32, Y);
    clear(acc);
    for kk in serial(ceildiv({K * K * C}, 4)) {{
        im2col(X, a, b, kk, {K}, {S}, {D}, {P});
        copy(w_flat[kk * 4, 0], w);
        gemm(a, w, acc);
    }}
    copy(acc, y_flat[b * 4, 0]);
}}""", "k", {"X": data, "Wt": weight, "Y": [0.0] * (Nn * OH * OW * F)})
want = []
for n in range(Nn):
    for oh in range(OH):
        for ow in range(OW):
            for f in range(F):
                total = 0.0
                for kh in range(K):
                    for kw in range(K):
                        h, w = oh * S + kh * D - P, ow * S + kw * D - P
                        if 0 <= h < H and 0 <= w < W:
                            for c in range(C):
                                total += data[((n * H + h) * W + w) * C + c] * weight[((kh * K + kw) * C + c) * F + f]
                want.append(total)
check("im2col convolution", t["Y"], want)

# Thread-level code: every thread that runs barrier_arrive arrives once (64
# arrivals complete one phase of a barrier of 64).
t = run("""kernel k(Y: f32[4]) grid(1) threads(64) as (tx) {
    let b = alloc_barrier(arrive_count = 64);
    let s = alloc_shared([4], f32);
    barrier_arrive(b);
    barrier_wait(b, 0);
    fill(s, 1.0);
    copy(s, Y);
}""", "k", {"Y": [0.0] * 4})
check("thread-level barrier_arrive", t["Y"], [1.0] * 4)

# A 2-CTA gemm (cluster of 2, tcgen05 cta_group::2): each block loads its
# rows of A and its half of B's columns, the loads' bytes and both blocks'
# producer warps (barrier_arrive(b, 0)) count on the leader's cluster
# barrier, the leader's MMA warp (a role branch on the rank and tx) computes
# C(block h) = A(block h) . [B(block 0) | B(block 1)], and its completion
# arrives on `done` of both blocks, for which every thread of each block
# waits: C is the whole A . B.
GEMM_2CTA = """kernel k(A: bf16[8, 2], B: bf16[2, 4], C: f32[8, 4]) grid(2) as (bx) threads(64) as (tx) cluster(2) {
    let A_s = alloc_shared([4, 2], bf16);
    let B_s = alloc_shared([2, B_COLS], bf16);
    let C_t = alloc_tmem([4, 4], f32);
    let loaded = alloc_cluster_barrier(arrive_count = ARRIVALS);
    let done = alloc_barrier(arrive_count = 1);
    let rank = block_rank_in_cluster();
    if (tx < 32) {
        tma_copy(A[bx * 4:(bx + 1) * 4, 0:2], A_s, barrier = loaded);
        tma_copy(B[0:2, rank * 2:rank * 2 + B_COLS], B_s, barrier = loaded);
        barrier_arrive(loaded, 0);
    } else if (rank == LEADER && tx < 64) {
        barrier_wait(loaded, 0);
        gemm(A_s, B_s, C_t, clear_accum = true, inst = tcgen05, use_2cta = true, mbar = done);
    }
    barrier_wait(done, 0);
    copy(C_t, C[bx * 4, 0]);
}"""
A2 = [float(i % 5 - 2) for i in range(16)]
B2 = [float(i % 3 - 1) for i in range(8)]
t = run(GEMM_2CTA.replace("B_COLS", "2").replace("ARRIVALS", "64").replace("LEADER", "0"), "k",
        {"A": list(A2), "B": list(B2), "C": [0.0] * 32})
check("2-CTA gemm", t["C"], [sum(A2[i * 2 + k] * B2[k * 4 + j] for k in range(2)) for i in range(8) for j in range(4)])
# Undefined 2-CTA programs: B's columns not half of C's; the MMA issued by
# block 1; the leader's barrier expecting arrivals nobody makes (a deadlock
# across the two blocks).
expect_invalid("2-CTA gemm, B not half of C", GEMM_2CTA.replace("B_COLS", "4").replace("ARRIVALS", "64").replace("LEADER", "0"),
               "k", {"A": list(A2), "B": list(B2), "C": [0.0] * 32})
expect_invalid("2-CTA gemm issued by block 1", GEMM_2CTA.replace("B_COLS", "2").replace("ARRIVALS", "64")
               .replace("barrier = loaded", "barrier = stage").replace("barrier_arrive(loaded, 0)", "barrier_arrive(stage)")
               .replace("barrier_wait(loaded, 0)", "barrier_wait(stage, 0)")
               .replace("let done", "let stage = alloc_barrier(arrive_count = 32);\n    let done").replace("LEADER", "1"),
               "k", {"A": list(A2), "B": list(B2), "C": [0.0] * 32})
expect_invalid("2-CTA deadlock", GEMM_2CTA.replace("B_COLS", "2").replace("ARRIVALS", "96").replace("LEADER", "0"),
               "k", {"A": list(A2), "B": list(B2), "C": [0.0] * 32})

# The CTA pair's block-scaled MMA (TileLang's mxfp8_blockscaled_gemm_2cta in
# examples/blockscaled_gemm_sm100/gemm_mxfp8_blockscaled_1d1d.py, small):
# each block loads its 128 rows of A, its half of B's columns and its own
# factor words -- SFA for its rows and SFB for all N columns of C, different
# in the two blocks -- one warp of each reorders the words and arrives on the
# leader's cluster barrier, and the leader's MMA warp copies the words into
# tensor memory of both blocks (tcgen05_cp_warpx4 use_2cta) and issues
#     C(h)[m, n] = sum_k A(h)[m, k] SFA(h)(m, k) . [B(0) | B(1)][k, n] SFB(h)(n, k).
# N = 64, so SFB takes ceil(64 / 32) = 2 columns a word set (a model reading
# it with B's N / 2 would take 1), and [128, 4] holds 2 word sets; with
# k_start = 128 the gemm reads word set 1 and bytes 0 and 1, with k_start = 64
# word set 0 and bytes 2 and 3. UE8M0 factors of 2^-2 .. 2^2 and small
# integers keep every product and sum exact.
GEMM_BS_2CTA = """target sm_100a;
kernel k(A: f8e4m3[256, 64], B: f8e4m3[B_SHAPE], SFA: uint32[256], SFB: uint32[256], C: f32[256, 64])
    grid(2) as (bx) threads(128) as (tx) cluster(2) {
    let A_s = alloc_shared([128, 64], f8e4m3);
    let B_s = alloc_shared([B_TILE], f8e4m3);
    let SFA_s = alloc_shared([128], uint32);
    let SFB_s = alloc_shared([128], uint32);
    let C_t = alloc_tmem([128, 64], f32);
    let SFA_t = alloc_tmem([128, 4], uint32);
    let SFB_t = alloc_tmem([128, 4], uint32);
    let loaded = alloc_barrier(arrive_count = 32);
    let with_sf_full = alloc_cluster_barrier(arrive_count = 64);
    let done = alloc_barrier(arrive_count = 1);
    let rank = block_rank_in_cluster();
    if (tx < 32) {
        tma_copy(A[bx * 128:(bx + 1) * 128, 0:64], A_s, barrier = loaded);
        tma_copy(B_HALF, B_s, barrier = loaded);
        tma_copy(SFA[bx * 128:(bx + 1) * 128], SFA_s, barrier = loaded);
        tma_copy(SFB[bx * 128:(bx + 1) * 128], SFB_s, barrier = loaded);
        barrier_arrive(loaded);
    } else if (rank == 0 && tx < 64) {
        barrier_wait(with_sf_full, 0);
        tcgen05_cp_warpx4(SFA_s, SFA_t, use_2cta = true);
        tcgen05_cp_warpx4(SFB_s, SFB_t, use_2cta = true);
        gemm_blockscaled(A_s, B_s, C_t, SFA_t, SFB_t, transpose_B = TRANSPOSE_B, mbar = done, clear_accum = true, k_start = K_START,
                         sf_a_granularity_k = 32, sf_b_granularity_k = 32, use_2cta = true);
    } else if (tx >= 64 && tx < 96) {
        barrier_wait(loaded, 0);
        tcgen05_sf_warp_transpose(SFA_s);
        tcgen05_sf_warp_transpose(SFB_s);
        fence_proxy_async();
        barrier_arrive(with_sf_full, 0);
    }
    barrier_wait(done, 0);
    copy(C_t, C[bx * 128, 0]);
}"""


def gemm_bs_2cta_src(transpose_b, k_start, half=32):
    """GEMM_BS_2CTA with B [K, N] (block h its columns h*32 ..) or, with
    transpose_b, [N, K] (its rows); `half` is B_s's share of N."""
    if transpose_b:
        tile, part = f"{half}, 64", f"B[rank * 32:rank * 32 + {half}, 0:64]"
    else:
        tile, part = f"64, {half}", f"B[0:64, rank * 32:rank * 32 + {half}]"
    return (GEMM_BS_2CTA.replace("B_SHAPE", "64, 64").replace("B_TILE", tile).replace("B_HALF", part)
            .replace("TRANSPOSE_B", "true" if transpose_b else "false").replace("K_START", str(k_start)))


def factor_word(seed):
    """A word of four UE8M0 factors 2^-2 .. 2^2 (bytes 125 .. 129)."""
    return sum((125 + (seed * 7 + 3 * j + seed // 5) % 5) << (8 * j) for j in range(4))


A_BS = [float((i * 5 + i // 64) % 5 - 2) for i in range(256 * 64)]
B_BS = [float((i * 3 + i // 64) % 5 - 2) for i in range(64 * 64)]
SFA_BS = [factor_word(i) for i in range(256)]
SFB_BS = [factor_word(1000 + 3 * i) for i in range(256)]   # block 1's words differ from block 0's


def ue8m0_byte(word, k, g):
    return 2.0 ** (((word >> (8 * ((k // g) % 4))) & 0xFF) - 127)


def tmem_word(words, block, row, rows, k, g, columns=4):
    """Independently of the interpreter: the word tcgen05.mma reads for row
    `row` (of `rows`) at K position k in a [128, columns] buffer filled by
    tcgen05_cp_warpx4 from the block's 128 transposed words (docs/language.md:
    word set w at columns w * ceil(rows / 32) + row / 32, lane row % 128;
    lane L of column 4 c + j holds word 128 c + 32 j + L % 32 as loaded)."""
    cpw = -(-rows // 32)
    col = ((k // (4 * g)) % (columns // cpw)) * cpw + row // 32
    return words[block * 128 + 128 * (col // 4) + 32 * (col % 4) + (row % 128) % 32]


def gemm_bs_2cta_want(transpose_b, k_start, sfb_block=lambda h, n: h):
    """C of both blocks by the formula; sfb_block(h, n) is the block whose
    SFB words serve block h's column n (h itself: each block its own)."""
    out = []
    for h in range(2):
        # Column n of [B(0) | B(1)] times its factors, along K.
        b_cols = []
        for n in range(64):
            words = [tmem_word(SFB_BS, sfb_block(h, n), n, 64, k_start + k, 32) for k in range(64)]
            b_cols.append([(B_BS[n * 64 + k] if transpose_b else B_BS[k * 64 + n]) * ue8m0_byte(w, k_start + k, 32)
                           for k, w in enumerate(words)])
        for m in range(128):
            a_row = [A_BS[(h * 128 + m) * 64 + k] * ue8m0_byte(tmem_word(SFA_BS, h, m, 128, k_start + k, 32), k_start + k, 32)
                     for k in range(64)]
            out += [sum(x * y for x, y in zip(a_row, col)) for col in b_cols]
    return out


def gemm_bs_2cta_tensors():
    return {"A": list(A_BS), "B": list(B_BS), "SFA": list(SFA_BS), "SFB": list(SFB_BS), "C": [0.0] * (256 * 64)}


for transpose_b, k_start in ((False, 0), (True, 64), (False, 128)):
    want = gemm_bs_2cta_want(transpose_b, k_start)
    # The check must tell a wrong model apart: the leader's SFB for both
    # blocks, or SFB split by halves of N between the blocks.
    for wrong, model in (("the leader's SFB", lambda h, n: 0), ("SFB split by halves", lambda h, n: n // 32)):
        if gemm_bs_2cta_want(transpose_b, k_start, model) == want:
            failures.append(f"2-CTA block-scaled gemm check (transpose_B {transpose_b}, k_start {k_start}) "
                            f"does not tell {wrong} apart")
    t = run(gemm_bs_2cta_src(transpose_b, k_start), "k", gemm_bs_2cta_tensors())
    check(f"2-CTA block-scaled gemm (transpose_B {transpose_b}, k_start {k_start})", t["C"], want)
# B holding all of C's N in each block (the 1-CTA shape) is not the pair's.
expect_invalid("2-CTA block-scaled gemm, B not half of C", gemm_bs_2cta_src(False, 0, half=64), "k", gemm_bs_2cta_tensors(),
               "each block's B holds half of C's N")
expect_invalid("2-CTA block-scaled gemm, transposed B not half of C", gemm_bs_2cta_src(True, 0, half=64), "k",
               gemm_bs_2cta_tensors(), "each block's B holds half of C's N")

# tcgen05_cp_warpx4 with use_2cta (tcgen05.cp.cta_group::2): the leader's one
# copy fills tensor memory of both blocks, each from its own shared words
# (transposed by its own warp), here at column offset 4 of [128, 8].
CP_2CTA = """target sm_100a;
kernel k(W: uint32[256], Y: uint32[256, 4]) grid(2) as (bx) threads(128) as (tx) CLUSTER {
    let W_s = alloc_shared([128], uint32);
    let W_t = alloc_tmem([128, 8], uint32);
    let loaded = alloc_barrier(arrive_count = 32);
    let ready = alloc_cluster_barrier(arrive_count = 64);
    let done = alloc_barrier(arrive_count = 1);
    let rank = block_rank_in_cluster();
    if (tx < 32) {
        tma_copy(W[bx * 128:(bx + 1) * 128], W_s, barrier = loaded);
        barrier_arrive(loaded);
    } else if (rank == ISSUER && tx < 64) {
        barrier_wait(ready, 0);
        tcgen05_cp_warpx4(W_s, W_t, 4, use_2cta = true);
        tcgen05_mma_arrive(done, arrive_2cta = true);
    } else if (tx >= 64 && tx < 96) {
        barrier_wait(loaded, 0);
        tcgen05_sf_warp_transpose(W_s);
        barrier_arrive(ready, ISSUER);
    }
    barrier_wait(done, 0);
    copy(W_t[0:128, 4:8], Y[bx * 128, 0]);
}"""
W_CP = [(i * 2654435761) % 2 ** 32 for i in range(256)]
t = run(CP_2CTA.replace("CLUSTER", "cluster(2)").replace("ISSUER", "0"), "k", {"W": list(W_CP), "Y": [0] * 1024})
check("2-CTA tcgen05_cp_warpx4", t["Y"], [W_CP[128 * h + 32 * j + lane % 32] for h in range(2) for lane in range(128) for j in range(4)])
# Issued by the pair's odd block (both blocks' warps arrive on its barrier),
# or in a cluster that is not a pair.
expect_invalid("2-CTA tcgen05_cp_warpx4 issued by block 1", CP_2CTA.replace("CLUSTER", "cluster(2)").replace("ISSUER", "1"), "k",
               {"W": list(W_CP), "Y": [0] * 1024}, "leader of the pair")
expect_invalid("2-CTA tcgen05_cp_warpx4 outside a cluster", """target sm_100a;
kernel k(W: uint32[128]) grid(1) threads(128) as (tx) {
    let W_s = alloc_shared([128], uint32);
    let W_t = alloc_tmem([128, 4], uint32);
    copy(W, W_s);
    if (tx < 32) {
        tcgen05_cp_warpx4(W_s, W_t, use_2cta = true);
    }
}""", "k", {"W": list(W_CP[:128])}, "cluster of 2")
expect_invalid("2-CTA tcgen05_cp_warpx4 in a cluster of 4", CP_2CTA.replace("CLUSTER", "cluster(4)").replace("grid(2)", "grid(4)")
               .replace("ISSUER", "0"), "k", {"W": list(W_CP) * 2, "Y": [0] * 2048}, "cluster of 2")

for f in failures:
    print("FAILED:", f)
# break leaves the innermost loop, continue skips the rest of an iteration
# (section 4): sums worked out by hand.
t = run("""kernel k(B: int32[3]) grid(1) threads(32) as (tx) {
    var s: int32 = 0;
    var w: int32 = 0;
    var n: int32 = 0;
    for i in serial(10) {
        if (i == 6) {
            break;
        }
        if (i % 2 == 1) {
            continue;
        }
        s = s + i;
        for j in serial(5) {
            if (j == 2) {
                break;
            }
            n = n + 1;
        }
    }
    while (w < 100) {
        w = w + 7;
        if (w > 20) {
            break;
        }
    }
    if (tx == 0) {
        B[0] = s;
        B[1] = w;
        B[2] = n;
    }
}""", "k", {"B": [0] * 3})
check("break and continue", t["B"], [0 + 2 + 4, 21, 6])

# atomic_add(..., return_prev = true) (section 9): each thread receives the
# element's value before its own add; which thread gets which is the order
# they run in, so the places are compared as a set.
t = run("""kernel k(B: int32[64], C: int32[1]) grid(1) threads(64) as (tx) {
    var pos: int32;
    pos = atomic_add(C[0], 2, return_prev = true);
    B[tx] = pos;
}""", "k", {"B": [0] * 64, "C": [5]})
check("fetch-add places", sorted(t["B"]), [5 + 2 * i for i in range(64)])
check("fetch-add total", t["C"], [5 + 128])

# A branch on the thread index holding a named barrier of its threads is a
# role (section 10): its threads run in step, so an inclusive scan of 1..32
# by the first warp gives the triangular numbers; the other warp's elements
# stay as they were.
t = run("""kernel k(B: int32[64]) grid(1) threads(64) as (tx) {
    let S = alloc_shared([64], int32);
    var v: int32;
    S[tx] = tx + 1;
    if (tx < 32) {
        for i in serial(5) {
            let offset = 1 << i;
            sync_threads(1, 32);
            if (tx >= offset) {
                v = S[tx] + S[tx - offset];
            }
            sync_threads(1, 32);
            if (tx >= offset) {
                S[tx] = v;
            }
        }
    }
    B[tx] = S[tx];
}""", "k", {"B": [0] * 64})
check("scan in a role of thread-level code", t["B"], [(k + 1) * (k + 2) // 2 for k in range(32)] + list(range(33, 65)))

# The same scan under a branch every thread takes alike, its step count a
# let of a tensor value: the role's threads stay in step through both (found
# in review: they ran one after another under the branch).
t = run("""kernel k(A: int32[2], B: int32[64]) grid(1) threads(64) as (tx) {
    let S = alloc_shared([64], int32);
    var v: int32;
    S[tx] = tx + 1;
    if (tx < 32) {
        let rounds = A[1];
        if (A[0] > 0) {
            for i in serial(rounds) {
                let offset = 1 << i;
                sync_threads(1, 32);
                if (tx >= offset) {
                    v = S[tx] + S[tx - offset];
                }
                sync_threads(1, 32);
                if (tx >= offset) {
                    S[tx] = v;
                }
            }
        }
    }
    B[tx] = S[tx];
}""", "k", {"A": [1, 5], "B": [0] * 64})
check("scan in a role, under a branch alike in every thread", t["B"], [(k + 1) * (k + 2) // 2 for k in range(32)] + list(range(33, 65)))

# An element atomic_add is each thread's own: a branch on a var around it
# needs no thread to take it alike (found in review).
t = run("""kernel k(A: int32[64], C: int32[1]) grid(1) threads(64) as (tx) {
    let H = alloc_shared([1], int32);
    var v: int32;
    fill(H, 0);
    v = A[tx];
    if (v > 0) {
        atomic_add(H[0], 1);
    }
    sync_threads();
    if (tx == 0) {
        C[0] = H[0];
    }
}""", "k", {"A": [1] * 40 + [0] * 24, "C": [0]})
check("element atomic_add under a var branch", t["C"], [40])

# A branch on a var around work of the whole block is allowed when every
# thread takes it alike (section 10), and invalid when they do not.
ALIKE = """kernel k(A: int32[64], B: int32[64]) grid(1) threads(64) as (tx) {
    let S = alloc_shared([64], int32);
    var go: int32;
    go = VALUE;
    fill(S, 3);
    if (go > 0) {
        fill(S, 7);
    }
    B[tx] = S[tx];
}"""
t = run(ALIKE.replace("VALUE", "A[0]"), "k", {"A": [1] * 64, "B": [0] * 64})
check("branch on a var every thread takes alike", t["B"], [7] * 64)
expect_invalid("branch on a var threads take apart", ALIKE.replace("VALUE", "A[tx]"), "k",
               {"A": [1] * 32 + [0] * 32, "B": [0] * 64}, "differently")

# Registers are per thread: a var the block set before its roles starts
# each role at that value, and a role's updates reach its own threads only
# (the roles run one after another here, on behalf of their threads).
ROLE_VARS = """kernel k(B: int32[2, 4]) grid(1) threads(256) as (tx) {
    var t: int32 = 5;
    if (tx < 128) {
        t = t + 1;
        for i in parallel(4) { B[0, i] = t; }
    } else {
        t = t * 2;
        for i in parallel(4) { B[1, i] = t; }
    }
    TAIL
}"""
t = run(ROLE_VARS.replace("TAIL", ""), "k", {"B": [0] * 8})
check("each role's own copy of the block's vars", t["B"], [6] * 4 + [10] * 4)
try:
    run(ROLE_VARS.replace("TAIL", "for i in parallel(4) { B[0, i] = t; }"), "k", {"B": [0] * 8})
    failures.append("the block's read of a var its roles set: not reported as unsupported")
except tlinterp.Unsupported as e:
    if "roles set" not in str(e):
        failures.append(f"the block's read of a var its roles set: unsupported for another reason: {e}")

# An alloc_local array of the block that a role writes would need a copy per
# role's threads, which the interpreter does not make: unsupported, not a
# wrong reference.
try:
    run("""kernel k(B: int32[2, 4]) grid(1) threads(256) as (tx) {
    let t = alloc_local([1], int32);
    t[0] = 5;
    if (tx < 128) {
        t[0] = t[0] + 1;
        for i in parallel(4) { B[0, i] = t[0]; }
    } else {
        for i in parallel(4) { B[1, i] = t[0]; }
    }
}""", "k", {"B": [0] * 8})
    failures.append("a role's write of the block's alloc_local array: not reported as unsupported")
except tlinterp.Unsupported as e:
    if "alloc_local" not in str(e):
        failures.append(f"a role's write of the block's alloc_local array: unsupported for another reason: {e}")

# Cluster launch control: clusters run in launch order, and each request
# takes the next one not yet run (which then never runs); block 0 takes
# blocks 1 to 3 and records their indices, its fifth request finds none.
t = run("""target sm_100a;
kernel k(B: int32[4, 2]) grid(4) as (bx) threads(32) as (tx) {
    let answer = alloc_shared([4], uint32);
    let arrived = alloc_barrier(arrive_count = [1]);
    if (tx == 0) {
        B[bx, 0] = bx;
        for i in serial(4) {
            barrier_arrive_expect_tx(arrived, 16);
            clc_try_cancel(answer, arrived);
            barrier_wait(arrived, i % 2);
            if (clc_is_canceled(answer) == 0) {
                break;
            }
            let taken = cast(clc_get_first_ctaid_x(answer), int32);
            B[taken, 0] = bx;
            B[taken, 1] = i + 1;
        }
    }
}""", "k", {"B": [-1] * 8})
check("cluster launch control", t["B"], [0, -1, 0, 1, 0, 2, 0, 3])

# Philox4x32-10 against the known-answer vectors of its authors' Random123
# (kat_vectors: philox4x32 10 rounds).
check("philox4x32-10 zeros", tlinterp.philox4x32_10([0, 0, 0, 0], [0, 0]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8])
check("philox4x32-10 ones", tlinterp.philox4x32_10([0xffffffff] * 4, [0xffffffff] * 2), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd])
check("philox4x32-10 pi", tlinterp.philox4x32_10([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]),
      [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1])

# rng_init(seed, seq, off) as cuRAND's curand_init: the counter is seq in
# its upper 64 bits plus off / 4, its numbers taken from off % 4 on; each
# thread has its own. Thread 1 skips 5 numbers: counter 1, from its second.
t = run("""kernel k(B: uint32[3, 32], U: f32[32]) grid(1) threads(32) as (tx) {
    rng_init(0, tx % 2 == 0 ? 0 : 1, tx == 1 ? 5 : 0);
    var a: uint32 = rng_rand();
    var b: uint32 = rng_rand();
    B[0, tx] = a;
    B[1, tx] = b;
    B[2, tx] = rng_rand() + rng_rand() * 0 + rng_rand();
    U[tx] = rng_rand_float();
}""", "k", {"B": [0] * 96, "U": [0.0] * 32})
z, z1 = tlinterp.philox4x32_10([0, 0, 0, 0], [0, 0]), tlinterp.philox4x32_10([1, 0, 0, 0], [0, 0])
skip5 = tlinterp.philox4x32_10([1, 0, 1, 0], [0, 0])   # subsequence 1: the counter's third word
check("rng_rand in thread 0", [t["B"][0], t["B"][32], t["B"][64]], [z[0], z[1], (z[2] + z1[0]) & 0xffffffff])
check("rng_rand with a subsequence and an offset", [t["B"][1], t["B"][33]], [skip5[1], skip5[2]])
check("rng_rand_float", t["U"][0], tldtypes.f32(tldtypes.f32(float(z1[1])) * 2.0**-32 + 2.0**-33))

print(f"interpreter self-test: {len(failures)} failures")
for f in failures:
    print(f)
sys.exit(1 if failures else 0)
