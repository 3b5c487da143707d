#!/usr/bin/env python3
"""GPU check of the GEMM examples against PyTorch (cuBLAS / cuBLASLt).

usage: gemm.py --list
       gemm.py --check-tables SRC_DIR CHECK...
       gemm.py [--cpu] --lib LIB --header HEADER CHECK

The sizes come from the generated header (HEADER, the translation's CHECK.h),
so one case serves every translation of an example (-D M=...); the case's
element types and B's layout are checked against it first. The kernel runs
through its C launch function (ctypes) on random data, C filled with NaN
first so that an element it never writes fails; the result is compared with
a reference computed by PyTorch on the same device: in f64 for int8, which is
exact here (|a|, |b| <= 8 and K <= 2^20 keep every partial sum below 2^53;
CUDA has no int64 matmul), the error absolute and the tolerance 0; else in f32
with TF32 off, the error of each element relative to |reference| + the
reference's RMS (relative where the result is large, and for the results
near zero relative to their typical size, which is what reduced-precision
accumulation -- fp8 tensor cores -- and output rounding perturb; a wrong
element is off by about 1). The f32 inputs of the TF32 GEMM are made TF32
numbers (their low 13 mantissa bits cleared), so products are exact and
only the order of the f32 sums differs; otherwise the tensor core's
truncation of each input would account for errors growing with sqrt(K). The comparison is repeated after the timed launches, which catches
a result that changes from run to run. Times: the median of CUDA-event
timings after warm-up (common.time_ms), the kernel and its baseline in the
same process, side by side. --cpu runs a `tilet --cpu` library (the
emulator; small shapes) with the same references and no timing: the dry
run's test of this script.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import expect, result, torch  # noqa: E402

# check: (launch function, A and B element type, B stored [N, K] (else
# [K, N]), C element type, epilogue, tolerance). Epilogues: None, "relu",
# "block_mask" (only the k-tiles a BlockMask[M/bm, N/bn, K/bk] keeps count).
CASES = {
    "gemm_relu": ("gemm_relu", "f16", False, "f16", "relu", 2e-3),
    "gemm_bf16": ("gemm_bf16", "bf16", True, "bf16", None, 8e-3),
    "gemm_tf32": ("gemm_tf32", "f32", False, "f32", None, 2e-3),
    "gemm_int8": ("gemm_int8", "int8", True, "int32", None, 0.0),
    "gemm_fp8_sm89": ("gemm_fp8", "f8e4m3", True, "bf16", None, 2e-2),
    "gemm_ws_manual_sm90": ("gemm_ws", "f16", False, "f16", None, 2e-3),
    "gemm_fp8_sm90": ("gemm_fp8", "f8e4m3", True, "bf16", None, 2e-2),
    "gemm_cluster_multicast_sm90": ("gemm_multicast", "bf16", False, "bf16", None, 8e-3),
    "gemm_tma_ws_sm90": ("gemm_tma_ws", "bf16", False, "bf16", None, 8e-3),
    "gemm_tma_ws_sm90_4096": ("gemm_tma_ws", "bf16", False, "bf16", None, 8e-3),
    "gemm_persistent_sm90": ("gemm_persistent", "bf16", False, "bf16", None, 8e-3),
    "gemm_tcgen05_sm100a": ("gemm_tcgen05", "bf16", True, "bf16", None, 8e-3),
    "gemm_fp8_sm100a": ("gemm_fp8", "f8e4m3", True, "bf16", None, 2e-2),
    "gemm_bf16_sm100a": ("gemm_bf16_sm100a", "bf16", True, "bf16", None, 8e-3),
    "gemm_2cta_sm100a": ("gemm_2cta_sm100a", "bf16", True, "bf16", None, 8e-3),
    "gemm_fp8_sm120a": ("gemm_fp8", "f8e4m3", True, "bf16", None, 2e-2),
    "blocksparse_gemm": ("blocksparse_matmul", "f16", False, "f16", "block_mask", 2e-3),
}


def shapes(name, header):
    """(M, N, K, init function, BlockMask dims or None) of check `name`'s
    translation, after checking the header agrees with the case."""
    func, ab, b_nk, c_type, epilogue, _ = CASES[name]
    params, order, init = common.launch_params(header, func)
    expected = ["A", "B", "BlockMask", "C"] if epilogue == "block_mask" else ["A", "B", "C"]
    expect(order == expected, f"{func} takes tensors {order}, the case expects {expected}")
    a, b, c = params["A"], params["B"], params["C"]
    for p in (a, b, c):
        expect(len(p.dims) == 2 and all(isinstance(d, int) for d in p.dims), f"{func}: {p} is not a fixed 2-d shape")
    expect((a.dtype, b.dtype, c.dtype) == (ab, ab, c_type),
           f"{func}: A, B, C hold {a.dtype}, {b.dtype}, {c.dtype}; the case says {ab}, {ab}, {c_type}")
    (M, K), N = a.dims, c.dims[1]
    expect(c.dims[0] == M, f"{func}: C {c.dims} has not A's {M} rows")
    expect(b.dims == ([N, K] if b_nk else [K, N]),
           f"{func}: B is {b.dims}; the case says B is stored {'[N, K]' if b_nk else '[K, N]'} = {[N, K] if b_nk else [K, N]}")
    mask = None
    if epilogue == "block_mask":
        mask = params["BlockMask"].dims
        expect(params["BlockMask"].dtype == "bool" and len(mask) == 3, f"{func}: BlockMask is {params['BlockMask']}")
        expect(M % mask[0] == 0 and N % mask[1] == 0 and K % mask[2] == 0, f"{func}: BlockMask {mask} does not tile {M}x{N}x{K}")
    return M, N, K, init, mask


def reference(a, b_kn, relu, mask, exact):
    """A @ B in f64 (exact, for integers) or f32 with TF32 off; with a block
    mask, only the k-tiles it keeps."""
    wide = torch.float64 if exact else torch.float32
    a, b_kn = a.to(wide), b_kn.to(wide)
    torch.set_float32_matmul_precision("highest")
    if mask is None:
        ref = a @ b_kn
    else:
        (M, K), N = a.shape, b_kn.shape[1]
        bm, bn, bk = M // mask.shape[0], N // mask.shape[1], K // mask.shape[2]
        ref = torch.zeros((M, N), dtype=wide, device=a.device)
        for kb in range(mask.shape[2]):
            keep = mask[:, :, kb].repeat_interleave(bm, 0).repeat_interleave(bn, 1)
            ref += (a[:, kb * bk:(kb + 1) * bk] @ b_kn[kb * bk:(kb + 1) * bk, :]) * keep.to(wide)
    return torch.relu(ref) if relu else ref


def max_error(ref, out, exact):
    """Exact: the largest absolute difference. Else: the largest
    |ref - out| / (|ref| + rms(ref)) (NaN if any output is NaN)."""
    if exact:
        return (ref - out.to(torch.float64)).abs().max().item()
    return common.relative_error(ref, out)


def tf32_numbers(x):
    """x with the low 13 mantissa bits of each f32 cleared: TF32 numbers,
    which a tensor core multiplies exactly."""
    return (x.view(torch.int32) & ~0x1FFF).view(torch.float32)


def baseline(ab, c_type, a, b_kn):
    """(name, function) of the library call PyTorch makes for the same GEMM
    on the same tensors (b_kn: B as a [K, N] view, column-major when B is
    stored [N, K])."""
    if ab == "int8":
        return "cuBLASLt int8 (torch._int_mm)", lambda: torch._int_mm(a, b_kn)
    if ab.startswith("f8"):
        one = torch.ones((), device="cuda", dtype=torch.float32)
        out = common.torch_dtype(c_type)
        return ("cuBLASLt fp8, fast accumulation (torch._scaled_mm)",
                lambda: torch._scaled_mm(a, b_kn, scale_a=one, scale_b=one, out_dtype=out, use_fast_accum=True))
    if ab == "f32":
        def tf32():
            torch.set_float32_matmul_precision("high")  # TF32 tensor cores, as the kernel
            return torch.matmul(a, b_kn)
        return "cuBLAS TF32 (torch.matmul)", tf32
    return "cuBLAS (torch.matmul)", lambda: torch.matmul(a, b_kn)


def check(name, lib, header, device):
    func, ab, b_nk, c_type, epilogue, tolerance = CASES[name]
    M, N, K, init, mask_dims = shapes(name, header)
    if lib is None:
        return True
    shape = f"{M}x{N}x{K}"
    dt, ct = common.torch_dtype(ab), common.torch_dtype(c_type)
    if dt is None or ct is None:
        # Debian's torch 1.13 (the dry run's) has no float8; the GPU machine's does.
        return result(name, "SKIP" if device == "cpu" else "FAIL", shape=shape, note=f"torch {torch.__version__} has no {ab}")
    exact = ab == "int8"
    torch.manual_seed(0)
    if exact:
        a = torch.randint(-8, 8, (M, K), device=device, dtype=torch.int8)
        b = torch.randint(-8, 8, (N, K) if b_nk else (K, N), device=device, dtype=torch.int8)
        c = torch.full((M, N), -(1 << 30), device=device, dtype=ct)
    else:
        a = (torch.rand((M, K), device=device) * 2 - 1).to(dt)
        b = (torch.rand((N, K) if b_nk else (K, N), device=device) * 2 - 1).to(dt)
        if ab == "f32":
            a, b = tf32_numbers(a), tf32_numbers(b)
        c = torch.full((M, N), float("nan"), device=device, dtype=ct)
    b_kn = b.t() if b_nk else b
    tensors = [a, b, c]
    flops = 2.0 * M * N * K
    mask = None
    if mask_dims is not None:
        mask = torch.rand(mask_dims, device=device) < 0.5
        tensors = [a, b, mask, c]
        flops = 2.0 * (M // mask_dims[0]) * (N // mask_dims[1]) * (K // mask_dims[2]) * mask.sum().item()

    launch, last_error = common.load_launch(lib, init, func)
    common.call(launch, last_error, tensors)
    if device == "cuda":
        torch.cuda.synchronize()
    ref = reference(a, b_kn, epilogue == "relu", mask, exact)
    error = max_error(ref, c, exact)
    fields = dict(shape=shape, tolerance=tolerance, flops=flops)
    if device == "cpu":
        ok = error <= tolerance
        return result(name, "PASS" if ok else "FAIL", max_error=error, note="tilet --cpu emulator, no timing", **fields)

    ms = common.time_ms(lambda: common.call(launch, last_error, tensors))
    error, note = common.worst(error, max_error(ref, c, exact))  # and after the last timed launch
    base_name, base_fn = baseline(ab, c_type, a, b_kn)
    base_out = base_fn()
    base_out = base_out[0] if isinstance(base_out, tuple) else base_out  # _scaled_mm returned (out, amax) before torch 2.5
    base_ms = common.time_ms(base_fn)
    base_error = max_error(reference(a, b_kn, False, None, exact), base_out, exact)
    ok = error <= tolerance
    return result(name, "PASS" if ok else "FAIL", max_error=error, time_ms=ms, tflops=flops / ms / 1e9,
                  baseline=base_name + (" (dense)" if mask is not None else ""), baseline_ms=base_ms,
                  baseline_tflops=2.0 * M * N * K / base_ms / 1e9, baseline_max_error=base_error, ratio=base_ms / ms,
                  note=note, **fields)


if __name__ == "__main__":
    sys.exit(common.main(sys.argv, CASES, check, __doc__))
