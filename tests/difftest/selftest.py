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


def expect_invalid(name, src, kernel, tensors):
    try:
        run(src, kernel, tensors)
    except tldtypes.InvalidProgram:
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

for f in failures:
    print("FAILED:", f)
print(f"interpreter self-test: {len(failures)} failures")
sys.exit(1 if failures else 0)
