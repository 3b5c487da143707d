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
from common import expect, result, torch  # noqa: E402

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
    params, order, init = common.launch_params(header, func)
    expect(order == ["A", "B", "SFA", "SFB", "C"], f"{func} takes tensors {order}, the case expects A, B, SFA, SFB, C")
    a, b, sfa, sfb, c = (params[n] for n in order)
    for p in (a, b, sfa, sfb, c):
        expect(len(p.dims) == 2 and all(isinstance(d, int) for d in p.dims), f"{func}: {p} is not a fixed 2-d shape")
    expect((a.dtype, b.dtype, sfa.dtype, sfb.dtype, c.dtype) == ("f8e4m3", "f8e4m3", "uint32", "uint32", "bf16"),
           f"{func}: A, B, SFA, SFB, C hold {a.dtype}, {b.dtype}, {sfa.dtype}, {sfb.dtype}, {c.dtype}")
    (M, K), N = a.dims, c.dims[1]
    expect(b.dims == [N, K] and c.dims[0] == M, f"{func}: B is {b.dims} and C {c.dims}; the case expects [N, K] and [M, N]")
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
    shape = f"{M}x{N}x{K}"
    torch.manual_seed(0)

    def values(rows):   # e4m3 bytes (torch 1.13, the dry run's, has no float8: the bytes are passed)
        raw = torch.randint(0, 256, (rows, K), device=device, dtype=torch.uint8)
        return torch.where((raw & 0x7F) == 0x7F, raw ^ 1, raw)   # no NaN

    a, b = values(M), values(N)
    fa = torch.randint(123, 132, (M, K // 32), device=device, dtype=torch.int64)
    fb = torch.randint(123, 132, (N, K // 32), device=device, dtype=torch.int64)
    sfa, sfb = words(fa), words(fb)
    c = torch.full((M, N), float("nan"), device=device, dtype=torch.bfloat16)
    tensors = [a, b, sfa, sfb, c]
    launch, last_error = common.load_launch(lib, init, func)
    common.call(launch, last_error, tensors)
    if device == "cuda":
        torch.cuda.synchronize()
    torch.set_float32_matmul_precision("highest")

    def e4m3(v):   # sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 subnormal
        v = v.long()
        exponent, mantissa = (v >> 3) & 15, (v & 7).float()
        magnitude = torch.where(exponent == 0, mantissa / 8 * 2.0 ** -6, (1 + mantissa / 8) * torch.pow(2.0, (exponent - 7).float()))
        return torch.where(v >= 128, -magnitude, magnitude)

    def dequantized(v, f):
        return e4m3(v) * torch.pow(2.0, (f - 127).float()).repeat_interleave(32, dim=1)

    da, db = dequantized(a, fa), dequantized(b, fb)
    ref = da @ db.t()
    error = common.relative_error(ref, c)
    flops = 2.0 * M * N * K
    fields = dict(shape=shape, tolerance=tolerance, flops=flops)
    if device == "cpu":
        return result(name, "PASS" if error <= tolerance else "FAIL", max_error=error, note="tilet --cpu emulator, no timing", **fields)
    ms = common.time_ms(lambda: common.call(launch, last_error, tensors))
    error, note = common.worst(error, common.relative_error(ref, c))  # and after the last timed launch
    one = torch.ones((), device=device)
    try:
        a8, b8 = a.view(torch.float8_e4m3fn), b.view(torch.float8_e4m3fn)
        base = lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)  # noqa: E731
        base()
        baseline = "torch._scaled_mm e4m3, fast accumulation, per-tensor scales"
    except (RuntimeError, TypeError, AttributeError):
        a16, b16 = da.to(torch.bfloat16), db.to(torch.bfloat16).t()
        base = lambda: torch.matmul(a16, b16)  # noqa: E731
        baseline = "cuBLAS bf16 of the dequantized operands (torch.matmul)"
    base_ms = common.time_ms(base)
    return result(name, "PASS" if error <= tolerance else "FAIL", max_error=error, time_ms=ms, tflops=flops / ms / 1e9,
                  baseline=baseline, baseline_ms=base_ms, baseline_tflops=flops / base_ms / 1e9, ratio=base_ms / ms, note=note, **fields)


if __name__ == "__main__":
    sys.exit(common.main(sys.argv, CASES, check, __doc__))
