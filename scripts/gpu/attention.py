#!/usr/bin/env python3
"""GPU check of the attention example against FlashAttention-3 (or cuDNN).

usage: attention.py --list
       attention.py --check-tables SRC_DIR CHECK...
       attention.py [--cpu] --lib LIB --header HEADER CHECK

The sizes come from the generated header (Q, K, V, O: bf16 [batch, seq,
heads, dim]). The kernel runs through its C launch function (ctypes) on
random normal data, O filled with NaN first; the result is compared with
softmax(Q Kᵀ / √dim) V computed in f32 with TF32 off, one batch at a time
(common.relative_error: the outputs are averages of many values, mostly far
below 1, so an absolute error would pass anything), again after the timed
launches. The baseline, timed in
the same process on the same tensors, is the fastest attention this machine
has, in this order: FlashAttention-3 (`flash_attn_interface`),
scaled_dot_product_attention on cuDNN's backend (FA3-class on Hopper),
FlashAttention-2 (`flash_attn`), SDPA's default choice, and plain PyTorch
(torch < 2.0); the RESULT line
names it and says why the ones before it were not used. --cpu runs a
`tilet --cpu` library (the emulator; small shapes), no timing.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import expect, result, torch  # noqa: E402

# check: (launch function, tolerance, causal)
CASES = {
    "flash_attention_fwd_sm90": ("flash_attention_fwd", 2e-2, False),
    # The same without the warp groups' turns: what ping-pong buys.
    "flash_attention_fwd_sm90_in_step": ("flash_attention_fwd", 2e-2, False),
    # The same with each GEMM waited for before the softmax: what the
    # intra-warpgroup overlap buys.
    "flash_attention_fwd_sm90_no_overlap": ("flash_attention_fwd", 2e-2, False),
    "flash_attention_fwd_causal_sm90": ("flash_attention_fwd_causal", 2e-2, True),
    "flash_attention_fwd_sm100a": ("flash_attention_fwd", 2e-2, False),
}


def shapes(name, header):
    """(batch, seq, heads, dim, init function) of the translation, after
    checking the header agrees with the case."""
    func = CASES[name][0]
    params, order, init = common.launch_params(header, func)
    expect(order == ["Q", "K", "V", "O"], f"{func} takes tensors {order}, the case expects Q, K, V, O")
    q = params["Q"]
    expect(len(q.dims) == 4 and all(isinstance(d, int) for d in q.dims), f"{func}: {q} is not a fixed 4-d shape")
    for p in params.values():
        expect(p.dtype == "bf16" and p.dims == q.dims, f"{func}: {p}; the case expects bf16 {q.dims} for each")
    return (*q.dims, init)


def reference(q, k, v, causal):
    """softmax(Q Kᵀ / √D) V in f32 for [B, S, H, D] tensors, a batch at a time;
    causal: query row r sees keys 0 .. r."""
    torch.set_float32_matmul_precision("highest")
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    scale = q.shape[-1] ** -0.5
    for i in range(q.shape[0]):
        qb, kb, vb = (t[i].float().transpose(0, 1) for t in (q, k, v))  # [H, S, D]
        s = (qb @ kb.transpose(1, 2)) * scale
        if causal:
            s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
        p = torch.softmax(s, dim=-1)
        out[i] = (p @ vb).transpose(0, 1)
    return out


def baseline(q, k, v, causal):
    """(name, function, note, bhsd) of the fastest attention available here;
    bhsd: the function returns [B, H, S, D] (SDPA's layout), not [B, S, H, D]."""
    skipped = []
    try:
        import flash_attn_interface  # FlashAttention-3 (hopper/ of the flash-attention repository)

        def fa3():
            out = flash_attn_interface.flash_attn_func(q, k, v, causal=causal)
            return out[0] if isinstance(out, tuple) else out  # some versions also return the LSE
        fa3()
        return "FlashAttention-3", fa3, None, False
    except Exception as e:  # not installed, or no Hopper build
        skipped.append(f"FA3: {type(e).__name__}")
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)  # torch >= 2.0
    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))  # SDPA takes [B, H, S, D]; these are views
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        def cudnn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return sdpa(qt, kt, vt, is_causal=causal)
        cudnn()
        torch.cuda.synchronize()
        return "SDPA cuDNN backend", cudnn, "; ".join(skipped) or None, True
    except Exception as e:  # an older torch, or cuDNN refuses these shapes
        skipped.append(f"SDPA cuDNN: {type(e).__name__}: {str(e)[:120]}")
    try:
        import flash_attn

        def fa2():
            return flash_attn.flash_attn_func(q, k, v, causal=causal)
        fa2()
        return "FlashAttention-2", fa2, "; ".join(skipped), False
    except Exception as e:
        skipped.append(f"FA2: {type(e).__name__}")
    if sdpa is not None:
        return "SDPA default backend", lambda: sdpa(qt, kt, vt, is_causal=causal), "; ".join(skipped), True
    skipped.append(f"no SDPA in torch {torch.__version__}")
    if causal:
        return "PyTorch eager (masked softmax(QKᵀ)V)", lambda: reference(q, k, v, True), "; ".join(skipped), False
    scale = q.shape[-1] ** -0.5
    return ("PyTorch eager (softmax(QKᵀ)V)", lambda: torch.softmax((qt @ kt.transpose(2, 3)) * scale, dim=-1) @ vt,
            "; ".join(skipped), True)


def max_error(ref, out):
    return common.relative_error(ref, out)


def check(name, lib, header, device):
    func, tolerance, causal = CASES[name]
    B, S, H, D, init = shapes(name, header)
    if lib is None:
        return True
    shape = f"B{B}xS{S}xH{H}xD{D}"
    torch.manual_seed(0)
    q, k, v = (torch.randn((B, S, H, D), device=device).to(torch.bfloat16) for _ in range(3))
    o = torch.full((B, S, H, D), float("nan"), device=device, dtype=torch.bfloat16)
    launch, last_error = common.load_launch(lib, init, func)
    common.call(launch, last_error, [q, k, v, o])
    if device == "cuda":
        torch.cuda.synchronize()
    ref = reference(q, k, v, causal)
    error = max_error(ref, o)
    flops = 4.0 * B * H * S * S * D / (2 if causal else 1)   # causal: the half of the scores below the diagonal
    fields = dict(shape=shape, tolerance=tolerance, flops=flops)
    if device == "cpu":
        return result(name, "PASS" if error <= tolerance else "FAIL", max_error=error,
                      note="tilet --cpu emulator, no timing", **fields)

    ms = common.time_ms(lambda: common.call(launch, last_error, [q, k, v, o]))
    error, note = common.worst(error, max_error(ref, o))
    base_name, base_fn, base_note, bhsd = baseline(q, k, v, causal)
    base_out = base_fn()
    base_error = max_error(ref, base_out.transpose(1, 2) if bhsd else base_out)
    base_ms = common.time_ms(base_fn)
    note = "; ".join(n for n in (note, base_note) if n) or None
    return result(name, "PASS" if error <= tolerance else "FAIL", max_error=error, time_ms=ms, tflops=flops / ms / 1e9,
                  baseline=base_name, baseline_ms=base_ms, baseline_tflops=flops / base_ms / 1e9,
                  baseline_max_error=base_error, ratio=base_ms / ms, note=note, **fields)


if __name__ == "__main__":
    sys.exit(common.main(sys.argv, CASES, check, __doc__))
