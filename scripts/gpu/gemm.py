#!/usr/bin/env python3
"""GPU check of the GEMM examples against PyTorch.

usage: gemm.py WORK_DIR [EXAMPLE...]

For each example, WORK_DIR holds lib<EXAMPLE>.so (the generated .cu and
.host.cpp built by scripts/gpu-check). The kernel is launched through its
generated C launch function (ctypes) on random data; the result is compared
with PyTorch in f32 (relative error: |ref - out| / max(1, |ref|)), and the
median time is compared with torch.matmul on the same dtypes. Prints one
RESULT line per example; exit status 1 if any fails.
"""
import ctypes
import os
import sys

try:
    import torch
except ImportError:
    torch = None


def median_ms(fn, warmup=5, iters=30):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def rand(shape, dtype):
    if dtype == torch.int8:
        return torch.randint(-8, 8, shape, device="cuda", dtype=torch.int8)
    x = torch.rand(shape, device="cuda", dtype=torch.float32) * 2 - 1
    return x.to(dtype)


def fp8_scale():
    return torch.ones((), device="cuda", dtype=torch.float32)


# example: (launch function, A and B dtype, B stored [N, K], C dtype, ReLU,
# tolerance, M = N = K it was translated for)
def cases():
    return {
        "gemm_relu": ("gemm_relu", torch.float16, False, torch.float16, True, 2e-3, 4096),
        "gemm_bf16": ("gemm_bf16", torch.bfloat16, True, torch.bfloat16, False, 8e-3, 4096),
        "gemm_tf32": ("gemm_tf32", torch.float32, False, torch.float32, False, 1e-2, 4096),
        "gemm_int8": ("gemm_int8", torch.int8, True, torch.int32, False, 0.0, 4096),
        "gemm_fp8_sm89": ("gemm_fp8", torch.float8_e4m3fn, True, torch.bfloat16, False, 1e-2, 4096),
        "gemm_ws_manual_sm90": ("gemm_ws", torch.float16, False, torch.float16, False, 2e-3, 4096),
        "gemm_fp8_sm90": ("gemm_fp8", torch.float8_e4m3fn, True, torch.bfloat16, False, 1e-2, 8192),
        "gemm_cluster_multicast_sm90": ("gemm_multicast", torch.bfloat16, False, torch.bfloat16, False, 8e-3, 8192),
        "gemm_tma_ws_sm90": ("gemm_tma_ws", torch.bfloat16, False, torch.bfloat16, False, 8e-3, 8192),
        "gemm_tma_ws_sm90_4096": ("gemm_tma_ws", torch.bfloat16, False, torch.bfloat16, False, 8e-3, 4096),
        "gemm_tcgen05_sm100a": ("gemm_tcgen05", torch.bfloat16, True, torch.bfloat16, False, 8e-3, 4096),
    }


def torch_baseline(name, a, b):
    if name == "gemm_tf32":
        torch.backends.cuda.matmul.allow_tf32 = True
        return lambda: torch.matmul(a, b)
    if name == "gemm_int8":
        return lambda: torch._int_mm(a, b.t())
    if name.startswith("gemm_fp8"):
        s = fp8_scale()
        return lambda: torch._scaled_mm(a, b.t(), scale_a=s, scale_b=s, out_dtype=torch.bfloat16)
    if name in ("gemm_bf16", "gemm_tcgen05_sm100a"):
        return lambda: torch.matmul(a, b.t())
    return lambda: torch.matmul(a, b)


def load_launch(work, name, func):
    """The launch function `func` of lib<name>.so after its init function ran,
    or a RESULT line saying why there is none."""
    lib = ctypes.CDLL(os.path.join(work, f"lib{name}.so"))
    init = getattr(lib, f"{name}_init")
    init.restype = ctypes.c_int
    if init() != 0:
        return None, f"RESULT {name} status=FAIL ({name}_init failed)"
    launch = getattr(lib, func)
    launch.restype = ctypes.c_int
    return launch, None


def check(work, name):
    func, dtype, b_nk, c_dtype, relu, tolerance, size = cases()[name]
    M = N = K = size
    launch, failure = load_launch(work, name, func)
    if failure:
        return failure
    torch.manual_seed(0)
    a = rand((M, K), dtype)
    b = rand((N, K) if b_nk else (K, N), dtype)
    c = torch.zeros((M, N), device="cuda", dtype=c_dtype)
    args = [ctypes.c_void_p(a.data_ptr()), ctypes.c_void_p(b.data_ptr()), ctypes.c_void_p(c.data_ptr()), ctypes.c_void_p(0)]
    err = launch(*args)
    torch.cuda.synchronize()
    if err != 0:
        return f"RESULT {name} status=FAIL (launch returned cudaError {err})"
    bf = b.float().t() if b_nk else b.float()
    if name == "gemm_tf32":
        torch.backends.cuda.matmul.allow_tf32 = False
    ref = a.float() @ bf
    if relu:
        ref = torch.relu(ref)
    if dtype == torch.int8:
        ref = (a.to(torch.int64) @ (b.t() if b_nk else b).to(torch.int64)).to(torch.float64)
        error = (ref - c.to(torch.float64)).abs().max().item()
    else:
        error = ((ref - c.float()).abs() / ref.abs().clamp(min=1.0)).max().item()
    ms = median_ms(lambda: launch(*args))
    torch_ms = median_ms(torch_baseline(name, a, b))
    tflops = 2.0 * M * N * K / (ms * 1e-3) / 1e12
    status = "PASS" if error <= tolerance else "FAIL"
    return (f"RESULT {name} size={M}x{N}x{K} status={status} max_error={error:.3g} tolerance={tolerance:g} time_ms={ms:.3f} "
            f"tflops={tflops:.1f} torch_ms={torch_ms:.3f} ratio_to_torch={torch_ms / ms:.2f}")


def run_checks(argv, all_names, check, reference):
    """Runs check(work, name) for the examples named in argv (default: all
    that all_names() gives), printing one RESULT line each; 1 if any did not
    pass."""
    work = argv[1]
    if torch is None or not torch.cuda.is_available():
        for name in argv[2:] or ["all"]:
            print(f"RESULT {name} status=FAIL (PyTorch with CUDA is needed for the {reference} reference)")
        return 1
    failed = False
    for name in argv[2:] or all_names():
        try:
            line = check(work, name)
        except Exception as e:  # a missing library or a torch without the baseline op
            line = f"RESULT {name} status=FAIL ({type(e).__name__}: {e})"
        print(line, flush=True)
        failed = failed or "status=PASS" not in line
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run_checks(sys.argv, lambda: list(cases()), check, "GEMM"))
