#!/usr/bin/env python3
"""GPU check of the NVFP4 block-scaled GEMM examples (gemm_nvfp4_sm120a.tl,
gemm_nvfp4_sm100a.tl) against PyTorch.

usage: nvfp4.py --list
       nvfp4.py --check-tables SRC_DIR CHECK...
       nvfp4.py [--cpu] --lib LIB --header HEADER CHECK

The sizes come from the generated header (HEADER). A and B are random e2m1
bytes (two values each, element 0 in the low nibble); every 16 elements of a
row along K share a ue4m3 factor between 0.5 and 2.25, four to a uint32 word
in the example's layout: sm120a's chunked one (TileLang's
blockscaled_chunk_kmajor: one 128 x 4-word chunk per 128-row tile and
256-deep k-tile, word w of row r at w * 128 + (r % 32) * 4 + r / 32), or
sm100a's SF[w, r], row r's factors for K positions 64w .. 64w + 63. The reference decodes both formats from
their definitions and multiplies in f32 with TF32 off; the error of each
element is relative to |reference| + the reference's RMS (common.relative_
error); C is filled with NaN first. The baseline is cuBLAS's bf16 GEMM of the
dequantized operands (torch.matmul), timed in the same process: PyTorch's
own NVFP4 GEMM is not assumed to exist. --cpu runs a `tilet --cpu` library
(the emulator; small shapes) with the same reference and no timing.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import expect, torch  # noqa: E402

# check: (launch function, tolerance, scale-word layout). The output is bf16 (8 significant bits).
CASES = {
    "gemm_nvfp4_sm120a": ("gemm_nvfp4", 2e-2, "chunks"),
    "gemm_nvfp4_sm100a": ("gemm_nvfp4", 2e-2, "by_k"),
}

TILE_ROWS, TILE_K = 128, 256


def ceil_div(a, b):
    return (a + b - 1) // b


def shapes(name, header):
    """(M, N, K, init function) of check `name`'s translation, after checking
    the header agrees with the case."""
    func, _, layout = CASES[name]
    M, N, K, init, sfa, sfb = common.block_scaled_operands(header, func, "f4e2m1")
    expect(K % 16 == 0, f"{func}: K = {K} is not whole 16-element scale blocks")
    for p, rows in ((sfa, M), (sfb, N)):
        want = [ceil_div(rows, TILE_ROWS) * ceil_div(K, TILE_K) * TILE_ROWS, 4] if layout == "chunks" else [ceil_div(K, 64), rows]
        expect(p.dims == want, f"{func}: {p.name} is {p.dims}; the {layout} layout of {rows} rows needs {want}")
    return M, N, K, init


def chunk_words(factors, K):
    """The scale words of `factors` ([rows, K / 16] bytes, int64) in the
    chunked layout, as int32 (the bytes are at most 0x40: no sign)."""
    rows = factors.shape[0]
    k_tiles = ceil_div(K, TILE_K)
    padded = torch.full((ceil_div(rows, TILE_ROWS) * TILE_ROWS, k_tiles * TILE_K // 16), 0x38, dtype=torch.int64, device=factors.device)
    padded[:rows, :K // 16] = factors
    # [tile, r / 32, r % 32, k-tile, word, byte] -> words [tile, k-tile, word, r % 32, r / 32]
    f = padded.view(-1, 4, 32, k_tiles, 4, 4)
    words = f[..., 0] | f[..., 1] << 8 | f[..., 2] << 16 | f[..., 3] << 24
    return words.permute(0, 3, 4, 2, 1).reshape(-1, 4).to(torch.int32).contiguous()


def words_by_k(factors, K):
    """The scale words of `factors` ([rows, K / 16] bytes, int64) as SF[w, r]:
    row r's four factors for K positions 64w .. 64w + 63, as int32."""
    rows = factors.shape[0]
    padded = torch.full((rows, ceil_div(K, 64) * 4), 0x38, dtype=torch.int64, device=factors.device)
    padded[:, :K // 16] = factors
    f = padded.view(rows, -1, 4)
    words = f[..., 0] | f[..., 1] << 8 | f[..., 2] << 16 | f[..., 3] << 24
    return words.t().to(torch.int32).contiguous()


def dequantized(packed, factors, K):
    """e2m1 values ([rows, K / 2] bytes) times their factors, in f32."""
    e2m1 = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], device=packed.device)
    codes = torch.stack([packed.long() & 0xF, packed.long() >> 4], dim=-1).reshape(packed.shape[0], K)
    # ue4m3: 4 exponent bits (bias 7), 3 mantissa bits, no sign; the factors here are normal numbers.
    scale = (1 + (factors & 7).float() / 8) * torch.pow(2.0, ((factors >> 3) - 7).float())
    return e2m1[codes] * scale.repeat_interleave(16, dim=1)


def check(name, lib, header, device):
    func, tolerance, layout = CASES[name]
    M, N, K, init = shapes(name, header)
    if lib is None:
        return True
    torch.manual_seed(0)
    a = torch.randint(0, 256, (M, K // 2), device=device, dtype=torch.uint8)
    b = torch.randint(0, 256, (N, K // 2), device=device, dtype=torch.uint8)
    fa = torch.randint(0x30, 0x41, (M, K // 16), device=device, dtype=torch.int64)
    fb = torch.randint(0x30, 0x41, (N, K // 16), device=device, dtype=torch.int64)
    words = chunk_words if layout == "chunks" else words_by_k
    sfa, sfb = words(fa, K), words(fb, K)
    c = torch.full((M, N), float("nan"), device=device, dtype=torch.bfloat16)
    torch.set_float32_matmul_precision("highest")
    da, db = dequantized(a, fa, K), dequantized(b, fb, K)
    a16, b16 = da.to(torch.bfloat16), db.to(torch.bfloat16).t()
    baselines = [("cuBLAS bf16 of the dequantized operands (torch.matmul)", lambda: torch.matmul(a16, b16), True)]
    return common.run_block_scaled(name, lib, init, func, device, [a, b, sfa, sfb, c], K, da @ db.t(), tolerance, baselines)


if __name__ == "__main__":
    sys.exit(common.main(sys.argv, CASES, check, __doc__))
