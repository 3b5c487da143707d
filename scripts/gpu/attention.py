#!/usr/bin/env python3
"""GPU check of the attention example against PyTorch.

usage: attention.py WORK_DIR [EXAMPLE...]

WORK_DIR holds lib<EXAMPLE>.so built by scripts/gpu-check. The kernel is
launched through its generated C launch function (ctypes) on random
[batch, seq, heads, dim] bf16 tensors; the result is compared with
torch.nn.functional.scaled_dot_product_attention in f32 (max absolute
error), and the median time with SDPA on the same data (which picks
FlashAttention or cuDNN on an H100/H200). Prints one RESULT line per
example; exit status 1 if any fails.
"""
import ctypes
import os
import sys

try:
    import torch
except ImportError:
    torch = None

sys.path.insert(0, os.path.dirname(__file__))
from gemm import load_launch, median_ms, run_checks  # noqa: E402  (the same loading, timing and reporting)

# example: (launch function, batch, heads, seq, dim, tolerance)
CASES = {
    "flash_attention_fwd_sm90": ("flash_attention_fwd", 4, 32, 4096, 128, 2e-2),
}


def check(work, name):
    func, B, H, S, D, tolerance = CASES[name]
    launch, failure = load_launch(work, name, func)
    if failure:
        return failure
    torch.manual_seed(0)
    q, k, v = (torch.randn((B, S, H, D), device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    args = [ctypes.c_void_p(t.data_ptr()) for t in (q, k, v, o)] + [ctypes.c_void_p(0)]
    err = launch(*args)
    torch.cuda.synchronize()
    if err != 0:
        return f"RESULT {name} status=FAIL (launch returned cudaError {err})"
    # SDPA takes [batch, heads, seq, dim].
    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
    ref = torch.nn.functional.scaled_dot_product_attention(qt.float(), kt.float(), vt.float()).transpose(1, 2)
    error = (ref - o.float()).abs().max().item()
    ms = median_ms(lambda: launch(*args))
    torch_ms = median_ms(lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt))
    tflops = 4.0 * B * H * S * S * D / (ms * 1e-3) / 1e12
    status = "PASS" if error <= tolerance else "FAIL"
    return (f"RESULT {name} size=B{B}xH{H}xS{S}xD{D} status={status} max_error={error:.3g} tolerance={tolerance:g} time_ms={ms:.3f} "
            f"tflops={tflops:.1f} sdpa_ms={torch_ms:.3f} ratio_to_sdpa={torch_ms / ms:.2f}")


if __name__ == "__main__":
    sys.exit(run_checks(sys.argv, lambda: list(CASES), check, "attention"))
