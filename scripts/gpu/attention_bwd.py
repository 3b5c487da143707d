#!/usr/bin/env python3
"""GPU check of the attention backward example against FlashAttention-3's
backward (or cuDNN's).

usage: attention_bwd.py --list
       attention_bwd.py --check-tables SRC_DIR CHECK...
       attention_bwd.py [--cpu] --lib LIB --header HEADER CHECK

The translation has four launch functions (examples/flash_attention_bwd_sm90.tl):
flash_fwd(Q, K, V, Output, lse), flash_bwd_prep(O, dO, Delta),
flash_bwd(Q, K, V, dO, lse, Delta, dQ, dK, dV) and flash_bwd_post(dQ, dQ_out);
the sizes and the element type (f16 or bf16; lse, Delta and the dQ
accumulator f32) come from the generated header. They run through ctypes on
random normal Q, K, V and dO: the forward (O and LSE), then the backward --
the preprocess (Delta), the zeroing of the f32 dQ accumulator, the main
kernel and the postprocess (dQ in the input type). Every output is filled
with NaN first (the dQ accumulator with zeros, as the kernel needs). O, dQ,
dK and dV are compared with PyTorch autograd of softmax(Q Kᵀ / √dim) V (causal:
query row r sees keys 0 .. r) computed in f32 from the same rounded inputs,
TF32 off, one batch at a time, each with common.relative_error; the check's
max_error is the largest of the four (the note gives each), again after the
timed launches.

Timing (CUDA events after warm-up, common.time_ms) is of the whole backward
-- preprocess, zeroing, main kernel, postprocess, as FlashAttention's own
backward also computes Delta, zeroes and converts its dQ accumulator --
beside a baseline's backward in the same process on the same tensors, the
fastest this machine has, in this order: FlashAttention-3
(`flash_attn_interface`), scaled_dot_product_attention on cuDNN's backend,
FlashAttention-2 (`flash_attn`), SDPA's default choice, and plain PyTorch
(torch < 2.0); each timed as torch.autograd.grad of its output (the
TileLang example's O.backward(dO)); the RESULT line names it and says why
the ones before it were not used. TFLOP/s count FlashAttention's convention:
the backward is 2.5 times the forward's 4·B·H·S²·D (five S × S × D GEMMs
against two), half of it when causal. --cpu runs a `tilet --cpu` library
(the emulator; small shapes), no timing.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import expect, result, torch  # noqa: E402

# check: (tolerance, causal). The translation's causal flag is a constant
# (-D CAUSAL=true) that the header does not show, so each variant is a case.
CASES = {
    "flash_attention_bwd_sm90": (2e-2, False),
    "flash_attention_bwd_causal_sm90": (2e-2, True),
}

# launch function: its tensors in order, and for each its kind -- "x" the
# input element type, [B, S, H, D]; "acc" f32 [B, S, H, D]; "row" f32 [B, H, S].
FUNCTIONS = {
    "flash_fwd": [("Q", "x"), ("K", "x"), ("V", "x"), ("Output", "x"), ("lse", "row")],
    "flash_bwd_prep": [("O", "x"), ("dO", "x"), ("Delta", "row")],
    "flash_bwd": [("Q", "x"), ("K", "x"), ("V", "x"), ("dO", "x"), ("lse", "row"), ("Delta", "row"),
                  ("dQ", "acc"), ("dK", "x"), ("dV", "x")],
    "flash_bwd_post": [("dQ", "acc"), ("dQ_out", "x")],
}


def shapes(name, header):
    """(batch, seq, heads, dim, element type, init function) of the
    translation, after checking that each launch function's tensors agree
    with FUNCTIONS."""
    dims = dtype = init = None
    for func, tensors in FUNCTIONS.items():
        params, order, init = common.launch_params(header, func)
        expect(order == [n for n, _ in tensors], f"{func} takes tensors {order}, the case expects {[n for n, _ in tensors]}")
        for n, kind in tensors:
            p = params[n]
            expect(len(p.dims) in (3, 4) and all(isinstance(d, int) for d in p.dims), f"{func}: {p} is not a fixed shape")
            if kind == "x":
                expect(p.dtype in ("f16", "bf16"), f"{func}: {p}; the case expects f16 or bf16")
                dtype = dtype or p.dtype
                expect(p.dtype == dtype, f"{func}: {p}; the other tensors hold {dtype}")
            else:
                expect(p.dtype == "f32", f"{func}: {p}; the case expects f32")
            if kind in ("x", "acc"):
                expect(len(p.dims) == 4, f"{func}: {p}; the case expects [batch, seq, heads, dim]")
                dims = dims or p.dims
                expect(p.dims == dims, f"{func}: {p}; the case expects {dims} (BSHD)")
    for func, tensors in FUNCTIONS.items():   # [batch, heads, seq] once the BSHD shape is known
        params = common.launch_params(header, func)[0]
        for n, kind in tensors:
            if kind == "row":
                want = [dims[0], dims[2], dims[1]]
                expect(params[n].dims == want, f"{func}: {params[n]}; the case expects {want} ([batch, heads, seq])")
    B, S, H, D = dims
    return B, S, H, D, dtype, init


def reference(q, k, v, do, causal):
    """(O, dQ, dK, dV) in f32 for [B, S, H, D] tensors: autograd of
    softmax(Q Kᵀ / √D) V from q, k, v as given (rounded to their type),
    a batch at a time; causal: query row r sees keys 0 .. r."""
    torch.set_float32_matmul_precision("highest")
    if q.is_cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    outs = [torch.empty(q.shape, dtype=torch.float32, device=q.device) for _ in range(4)]
    scale = q.shape[-1] ** -0.5
    for i in range(q.shape[0]):
        qb, kb, vb = (t[i].float().transpose(0, 1).contiguous().requires_grad_() for t in (q, k, v))  # [H, S, D]
        with torch.enable_grad():
            s = (qb @ kb.transpose(1, 2)) * scale
            if causal:
                s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
            o = torch.softmax(s, dim=-1) @ vb
            grads = torch.autograd.grad(o, (qb, kb, vb), do[i].float().transpose(0, 1))
        for out, t in zip(outs, (o.detach(), *grads)):
            out[i] = t.transpose(0, 1)
        del s, o, grads
    return outs


def baseline(q, k, v, do, causal):
    """(name, backward function, note) of the fastest attention backward
    available here. The function returns (dQ, dK, dV) as [B, S, H, D]."""
    skipped = []
    qg, kg, vg = (t.detach().clone().requires_grad_() for t in (q, k, v))

    def grads_of(out, dout):
        return lambda: torch.autograd.grad(out, (qg, kg, vg), dout, retain_graph=True)

    try:
        import flash_attn_interface  # FlashAttention-3 (hopper/ of the flash-attention repository)
        out = flash_attn_interface.flash_attn_func(qg, kg, vg, causal=causal)
        out = out[0] if isinstance(out, tuple) else out  # some versions also return the LSE
        fn = grads_of(out, do)
        fn()
        torch.cuda.synchronize()
        return "FlashAttention-3 backward", fn, None
    except Exception as e:  # not installed, or no Hopper build
        skipped.append(f"FA3: {type(e).__name__}")
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)  # torch >= 2.0
    qt, kt, vt, dot = (t.transpose(1, 2) for t in (qg, kg, vg, do))  # SDPA takes [B, H, S, D]; views
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = sdpa(qt, kt, vt, is_causal=causal)
        fn = grads_of(out, dot)
        fn()
        torch.cuda.synchronize()
        return "SDPA cuDNN backend backward", fn, "; ".join(skipped) or None
    except Exception as e:  # an older torch, or cuDNN refuses these shapes
        skipped.append(f"SDPA cuDNN: {type(e).__name__}: {str(e)[:120]}")
    try:
        import flash_attn
        out = flash_attn.flash_attn_func(qg, kg, vg, causal=causal)
        fn = grads_of(out, do)
        fn()
        return "FlashAttention-2 backward", fn, "; ".join(skipped)
    except Exception as e:
        skipped.append(f"FA2: {type(e).__name__}")
    if sdpa is not None:
        out = sdpa(qt, kt, vt, is_causal=causal)
        return "SDPA default backend backward", grads_of(out, dot), "; ".join(skipped)
    skipped.append(f"no SDPA in torch {torch.__version__}")
    s = (qt @ kt.transpose(2, 3)) * q.shape[-1] ** -0.5
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    out = torch.softmax(s.float(), dim=-1).to(q.dtype) @ vt
    return "PyTorch eager backward", grads_of(out, dot), "; ".join(skipped)


def errors(refs, outs):
    """The largest relative error of O, dQ, dK, dV, and each of them."""
    each = [common.relative_error(r, o) for r, o in zip(refs, outs)]
    worst = float("nan") if any(e != e for e in each) else max(each)
    return worst, "O {:.3g}, dQ {:.3g}, dK {:.3g}, dV {:.3g}".format(*each)


def check(name, lib, header, device):
    tolerance, causal = CASES[name]
    B, S, H, D, dtype_name, init = shapes(name, header)
    if lib is None:
        return True
    shape = f"B{B}xS{S}xH{H}xD{D}{' causal' if causal else ''} {dtype_name}"
    dtype = common.torch_dtype(dtype_name)
    torch.manual_seed(0)
    q, k, v, do = (torch.randn((B, S, H, D), device=device).to(dtype) for _ in range(4))

    def nan(shape, dt=dtype):
        return torch.full(shape, float("nan"), device=device, dtype=dt)
    o, dq, dk, dv = (nan((B, S, H, D)) for _ in range(4))
    lse, delta = nan((B, H, S), torch.float32), nan((B, H, S), torch.float32)
    dq_accum = torch.zeros((B, S, H, D), device=device, dtype=torch.float32)
    launch = {f: common.load_launch(lib, init, f) for f in FUNCTIONS}

    def run(f, tensors):
        common.call(*launch[f], tensors)

    def backward():
        run("flash_bwd_prep", [o, do, delta])
        dq_accum.zero_()
        run("flash_bwd", [q, k, v, do, lse, delta, dq_accum, dk, dv])
        run("flash_bwd_post", [dq_accum, dq])

    run("flash_fwd", [q, k, v, o, lse])
    backward()
    if device == "cuda":
        torch.cuda.synchronize()
    refs = reference(q, k, v, do, causal)
    error, each = errors(refs, (o, dq, dk, dv))
    fwd_flops = 4.0 * B * H * S * S * D / (2 if causal else 1)   # causal: the half of the scores below the diagonal
    flops = 2.5 * fwd_flops
    fields = dict(shape=shape, tolerance=tolerance, flops=flops)
    if device == "cpu":
        return result(name, "PASS" if error <= tolerance else "FAIL", max_error=error,
                      note=f"tilet --cpu emulator, no timing; {each}", **fields)

    fwd_ms = common.time_ms(lambda: run("flash_fwd", [q, k, v, o, lse]))
    ms = common.time_ms(backward)
    torch.cuda.synchronize()
    after, each_after = errors(refs, (o, dq, dk, dv))
    error, note = common.worst(error, after)
    base_name, base_fn, base_note = baseline(q, k, v, do, causal)
    base_grads = base_fn()
    torch.cuda.synchronize()
    base_error = max(common.relative_error(r, g) for r, g in zip(refs[1:], base_grads))
    base_ms = common.time_ms(base_fn)
    note = "; ".join(n for n in (each if each == each_after else f"{each}; after the timed launches {each_after}",
                                 f"forward {fwd_ms:.3f} ms ({fwd_flops / fwd_ms / 1e9:.0f} TFLOP/s)", note, base_note) if n)
    return result(name, "PASS" if error <= tolerance else "FAIL", max_error=error, time_ms=ms, tflops=flops / ms / 1e9,
                  baseline=base_name, baseline_ms=base_ms, baseline_tflops=flops / base_ms / 1e9,
                  baseline_max_error=base_error, ratio=base_ms / ms, note=note, **fields)


if __name__ == "__main__":
    sys.exit(common.main(sys.argv, CASES, check, __doc__))
