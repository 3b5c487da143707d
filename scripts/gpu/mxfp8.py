#!/usr/bin/env python3
"""GPU check of the MXFP8 block-scaled GEMM example (gemm_mxfp8_sm100a.tl)
against PyTorch.

usage: mxfp8.py --list
       mxfp8.py --check-tables SRC_DIR CHECK...
       mxfp8.py [--cpu] --lib LIB --header HEADER CHECK

The sizes come from the generated header (HEADER). A [M, K] and B [N, K] are
random e4m3 values (no NaN bytes); every 32 elements of a row along K share a
ue8m0 factor 2^(b - 127) between 2^-4 and 2^4, four to a uint32 word, one
word per row and 128-deep k-tile: SF[k, row] (the example's layout). The
reference multiplies the dequantized operands in f32 with TF32 off; the error
of each element is relative to |reference| + the reference's RMS
(common.relative_error); C is filled with NaN first. The baseline is
torch._scaled_mm with fast accumulation on the same e4m3 operands (per-tensor
scales of 1, so it does less work than the block-scaled kernel), timed in the
same process, else cuBLAS's bf16 GEMM of the dequantized operands. --cpu runs
a `tilet --cpu` library (the emulator; small shapes) with the same reference
and no timing.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import expect, torch  # noqa: E402

# check: (launch function, tolerance). The output is bf16 (8 significant bits).
CASES = {
    "gemm_mxfp8_sm100a": ("gemm_mxfp8", 2e-2),
}

K_TILE = 128   # the K positions of one scale word


def ceil_div(a, b):
    return (a + b - 1) // b


def shapes(name, header):
    """(M, N, K, init function) of check `name`'s translation, after checking
    the header agrees with the case."""
    func, _ = CASES[name]
    M, N, K, init, sfa, sfb = common.block_scaled_operands(header, func, "f8e4m3")
    expect(K % 32 == 0, f"{func}: K = {K} is not whole 32-element scale blocks")
    for p, rows in ((sfa, M), (sfb, N)):
        want = [ceil_div(K, K_TILE), rows]
        expect(p.dims == want, f"{func}: {p.name} is {p.dims}; one word per row and k-tile of {rows} rows needs {want}")
    return M, N, K, init


def words(factors):
    """The scale words of `factors` ([rows, K / 32] bytes, int64): [K / 128, rows], int32."""
    rows, blocks = factors.shape
    padded = torch.full((rows, ceil_div(blocks, 4) * 4), 127, dtype=torch.int64, device=factors.device)
    padded[:, :blocks] = factors
    f = padded.view(rows, -1, 4)
    w = f[..., 0] | f[..., 1] << 8 | f[..., 2] << 16 | f[..., 3] << 24
    w = torch.where(w >= 2**31, w - 2**32, w)   # as int32 bits
    return w.t().to(torch.int32).contiguous()


def check(name, lib, header, device):
    func, tolerance = CASES[name]
    M, N, K, init = shapes(name, header)
    if lib is None:
        return True
    torch.manual_seed(0)

    def values(rows):   # e4m3 bytes (torch 1.13, the dry run's, has no float8: the bytes are passed)
        raw = torch.randint(0, 256, (rows, K), device=device, dtype=torch.uint8)
        return torch.where((raw & 0x7F) == 0x7F, raw ^ 1, raw)   # no NaN

    a, b = values(M), values(N)
    fa = torch.randint(123, 132, (M, K // 32), device=device, dtype=torch.int64)
    fb = torch.randint(123, 132, (N, K // 32), device=device, dtype=torch.int64)
    sfa, sfb = words(fa), words(fb)
    c = torch.full((M, N), float("nan"), device=device, dtype=torch.bfloat16)

    def e4m3(v):   # sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 subnormal
        v = v.long()
        exponent, mantissa = (v >> 3) & 15, (v & 7).float()
        magnitude = torch.where(exponent == 0, mantissa / 8 * 2.0 ** -6, (1 + mantissa / 8) * torch.pow(2.0, (exponent - 7).float()))
        return torch.where(v >= 128, -magnitude, magnitude)

    def dequantized(v, f):
        return e4m3(v) * torch.pow(2.0, (f - 127).float()).repeat_interleave(32, dim=1)

    torch.set_float32_matmul_precision("highest")
    da, db = dequantized(a, fa), dequantized(b, fb)
    one = torch.ones((), device=device)

    def scaled_mm():
        a8, b8 = a.view(torch.float8_e4m3fn), b.view(torch.float8_e4m3fn)
        return torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)

    a16, b16 = da.to(torch.bfloat16), db.to(torch.bfloat16).t()
    baselines = [("torch._scaled_mm e4m3, fast accumulation, per-tensor scales", scaled_mm, False),
                 ("cuBLAS bf16 of the dequantized operands (torch.matmul)", lambda: torch.matmul(a16, b16), True)]
    return common.run_block_scaled(name, lib, init, func, device, [a, b, sfa, sfb, c], K, da @ db.t(), tolerance, baselines)


if __name__ == "__main__":
    sys.exit(common.main(sys.argv, CASES, check, __doc__))
