"""What the Python GPU checks share: reading the generated header, loading a
launch function, timing with CUDA events, and the RESULT line.

Nothing here touches CUDA at import time: scripts/gpu-check --dry-run
imports these scripts on a machine without a GPU (and with or without
PyTorch) to check their case tables against the generated headers, and
runs them on tilet's CPU emulator (--cpu libraries) at small shapes.

A RESULT line is `RESULT {json}`, one per check, with the keys that
scripts/gpu/report.py reads: check, shape, status (PASS, FAIL or SKIP),
max_error, tolerance, time_ms, tflops or gbps, baseline, baseline_ms,
baseline_tflops or baseline_gbps, ratio (the baseline's time over the
kernel's: above 1 the kernel is faster), note.
"""
import ctypes
import json
import math
import os
import re
import sys

try:
    import torch
except ImportError:  # the dry run checks the case tables without PyTorch
    torch = None

# tilet's element types: bytes, and the name of the torch dtype (a string, so
# that the tables parse with any torch, or none: Debian's 1.13 has no float8).
DTYPES = {
    "f64": (8, "float64"), "f32": (4, "float32"), "f16": (2, "float16"), "bf16": (2, "bfloat16"),
    "f8e4m3": (1, "float8_e4m3fn"), "f8e5m2": (1, "float8_e5m2"),
    "int8": (1, "int8"), "uint8": (1, "uint8"), "int16": (2, "int16"), "int32": (4, "int32"),
    "int64": (8, "int64"), "uint32": (4, "uint32"), "bool": (1, "bool"),
    "f4e2m1": (0.5, "uint8"),   # packed, two to a byte: torch holds the bytes
}


class Param:
    """One parameter of a launch function, as the generated header declares
    it: the C++ type, and for a tensor its element type, dimensions (ints,
    or the names of dynamic dimensions) and access."""

    def __init__(self, name, ctype):
        self.name, self.ctype = name, ctype
        self.dtype, self.dims, self.access, self.dynamic = None, None, None, False

    @property
    def is_tensor(self):
        return "*" in self.ctype

    def __repr__(self):
        return f"{self.name}: {self.dtype} {self.dims}" if self.is_tensor else f"{self.name}: {self.ctype}"


def parse_header(path):
    """{launch function: [Param]} and the init function's name, from a
    header tilet wrote (`NAME.h`). The C++ prototype is taken (the C one
    after #else spells 16-bit floats as unsigned short); each tensor's
    dtype and dimensions come from the comment above it:
        //   A: bf16 [8192, 8192], read, 16-byte aligned
        //   n: dynamic dimension, at least 0
    Raises ValueError on anything it does not understand, so a change of
    the header's format fails the dry run rather than the GPU run."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    functions, init, comments = {}, None, {}
    for line in lines:
        m = re.match(r"^//   (\w+): (\w+) \[([^\]]*)\], (\w+)", line)
        if m:
            dims = [d.strip() for d in m.group(3).split(",")] if m.group(3).strip() else []
            comments[m.group(1)] = (m.group(2), [int(d) if re.fullmatch(r"\d+", d) else d for d in dims], m.group(4))
            continue
        m = re.match(r"^//   (\w+): dynamic dimension", line)
        if m:
            comments[m.group(1)] = ("dynamic", None, None)
            continue
        m = re.match(r"^cudaError_t (\w+)\((.*)\);$", line)
        if not m:
            continue
        name, args = m.group(1), m.group(2)
        if args == "void":
            if name.endswith("_init"):
                init = name
            continue
        if name in functions:  # the C prototype of a function already read
            continue
        params = []
        for arg in args.split(", "):
            am = re.match(r"^(.*?)(\w+)$", arg.strip())
            if not am:
                raise ValueError(f"{path}: cannot read parameter '{arg}' of {name}")
            p = Param(am.group(2), am.group(1).strip())
            if p.ctype == "cudaStream_t":
                p.dtype = "stream"
            elif p.name in comments:
                kind, dims, access = comments[p.name]
                if kind == "dynamic":
                    p.dynamic = True
                else:
                    if kind not in DTYPES:
                        raise ValueError(f"{path}: unknown element type '{kind}' of {name}'s {p.name}")
                    p.dtype, p.dims, p.access = kind, dims, access
            if p.is_tensor and p.dtype is None:
                raise ValueError(f"{path}: no shape comment for tensor {p.name} of {name}")
            params.append(p)
        if not params or params[-1].dtype != "stream":
            raise ValueError(f"{path}: {name} does not end with a cudaStream_t")
        functions[name] = params
        comments = {}
    if not functions or init is None:
        raise ValueError(f"{path}: no launch function or no init function")
    return functions, init


def launch_params(header, func):
    """The tensors of launch function `func` in `header`, by name, with a
    check that the header has it; raises ValueError otherwise."""
    functions, init = parse_header(header)
    if func not in functions:
        raise ValueError(f"{header} has no launch function {func} (it has {', '.join(functions)})")
    return {p.name: p for p in functions[func] if p.is_tensor}, [p.name for p in functions[func] if p.is_tensor], init


def expect(cond, message):
    if not cond:
        raise ValueError(message)


def torch_dtype(name):
    """The torch dtype of a tilet element type, or None when this torch has
    none (float8 before torch 2.1)."""
    return getattr(torch, DTYPES[name][1], None)


def load_launch(lib_path, init, func):
    """The launch function `func` of the library at lib_path after its init
    function ran (ctypes, every argument a pointer). Raises RuntimeError when
    the init fails."""
    lib = ctypes.CDLL(os.path.abspath(lib_path))
    init_fn = getattr(lib, init)
    init_fn.restype = ctypes.c_int
    err = init_fn()
    if err != 0:
        raise RuntimeError(f"{init}() returned cudaError {err}")
    launch = getattr(lib, func)
    launch.restype = ctypes.c_int
    last_error = getattr(lib, init[: -len("_init")] + "_last_error", None)
    if last_error is not None:
        last_error.restype = ctypes.c_char_p
    return launch, last_error


def call(launch, last_error, tensors):
    """Launches once on the default stream with the tensors' pointers; raises
    RuntimeError with the library's own message when the launch refuses."""
    err = launch(*[ctypes.c_void_p(t.data_ptr()) for t in tensors], ctypes.c_void_p(0))
    if err != 0:
        why = last_error().decode() if last_error is not None else ""
        raise RuntimeError(f"launch returned cudaError {err}{': ' + why if why else ''}")


_flush = None


def time_ms(fn, budget_ms=300.0):
    """Median time of fn() in milliseconds, by CUDA events around each call
    after warm-up. Before each call 256 MiB are zeroed (more than the H200's
    60 MB of L2), so no call finds its inputs in L2 from the one before;
    the host enqueues the zeroing, the start event and then calls fn(), so
    fn's host work (the launch function's argument checks and, for TMA
    kernels, the tensor maps it encodes on every call) overlaps the zeroing
    and stays outside the timed region, which holds the kernel alone. Enough
    calls to fill about budget_ms, at least 5 and at most 100."""
    global _flush
    if _flush is None:
        _flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()

    def timed(n):
        events = []
        for _ in range(n):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            _flush.zero_()
            start.record()
            fn()
            stop.record()
            events.append((start, stop))
        torch.cuda.synchronize()
        return sorted(s.elapsed_time(e) for s, e in events)

    estimate = timed(3)[1]
    times = timed(max(5, min(100, int(budget_ms / max(estimate, 1e-3)))))
    return times[len(times) // 2]


def relative_error(ref, out):
    """The largest |ref - out| / (|ref| + rms(ref)) over the elements, NaN if
    any output is: relative where the result is large, relative to the
    result's typical size where it is near zero (where reduced-precision
    accumulation and output rounding leave absolute, not relative, errors). A
    wrong element, or a wrong scale, is off by about 1."""
    rms = ref.pow(2).mean().sqrt()
    return ((ref - out.to(ref.dtype)).abs() / (ref.abs() + rms)).max().item()


def worst(first, after):
    """The larger of the errors of the first launch and of the last timed one
    (NaN if either is), and a note when they differ."""
    if first != first or after != after:
        worst_error = float("nan")
    else:
        worst_error = max(first, after)
    same = first == after or (first != first and after != after)
    return worst_error, None if same else f"max error {first:.3g} after the first launch, {after:.3g} after the timed ones"


_suffix = ""   # ":emulator" for a --cpu run, so that its lines are not taken for the GPU's


def result(check, status, **fields):
    """Prints one RESULT line (JSON; NaN and infinities as strings) and
    returns whether it did not fail."""
    record = {"check": check + _suffix, "status": status}
    for key, value in fields.items():
        if isinstance(value, float) and not math.isfinite(value):
            value = str(value)
        if value is not None:
            record[key] = value
    print("RESULT " + json.dumps(record, sort_keys=False), flush=True)
    return status != "FAIL"


def main(argv, cases, check, doc):
    """The command line the Python checks share:

      SCRIPT --list                      the case table's checks, one a line
      SCRIPT --check-tables SRC CHECK... each case against SRC/CHECK.h (no GPU, no torch)
      SCRIPT [--cpu] --lib LIB --header H CHECK
                                         runs one check: LIB is libCHECK.so built by
                                         scripts/gpu-check (--cpu: a tilet --cpu library,
                                         small shapes, no timing)

    Exit status 1 when a check fails or a case disagrees with its header."""
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(doc)
        return 0 if args else 2
    if args[0] == "--list":
        print("\n".join(cases))
        return 0
    if args[0] == "--check-tables":
        src, names, bad = args[1], args[2:], 0
        for name in names:
            try:
                expect(name in cases, f"{name}: no case in {os.path.basename(argv[0])}")
                check(name, None, os.path.join(src, name + ".h"), device=None)
                print(f"tables: {name}: ok")
            except Exception as e:  # a disagreement is reported, and the rest still checked
                print(f"tables: {name}: FAIL: {e}")
                bad = 1
        return bad
    global _suffix
    device = "cuda"
    if args[0] == "--cpu":
        device, args, _suffix = "cpu", args[1:], ":emulator"
    if len(args) != 5 or args[0] != "--lib" or args[2] != "--header":
        print(doc, file=sys.stderr)
        return 2
    lib, header, name = args[1], args[3], args[4]
    if torch is None or (device == "cuda" and not torch.cuda.is_available()):
        result(name, "FAIL", note=f"PyTorch{' with CUDA' if device == 'cuda' else ''} is needed for the reference")
        return 1
    try:
        ok = check(name, lib, header, device=device)
    except Exception as e:  # a missing library, a refused launch, a torch without the baseline op
        ok = result(name, "FAIL", note=f"{type(e).__name__}: {e}")
    return 0 if ok else 1


# ---- block-scaled GEMMs (nvfp4.py, mxfp8.py)

def block_scaled_operands(header, func, operand):
    """(M, N, K, init, SFA, SFB) of a block-scaled GEMM's launch function
    func(A, B, SFA, SFB, C): A [M, K] and B [N, K] of `operand`, uint32 scale
    words (whose shape the runner checks against its layout), C [M, N] bf16."""
    params, order, init = launch_params(header, func)
    expect(order == ["A", "B", "SFA", "SFB", "C"], f"{func} takes tensors {order}, the case expects A, B, SFA, SFB, C")
    a, b, sfa, sfb, c = (params[n] for n in order)
    for p in (a, b, sfa, sfb, c):
        expect(len(p.dims) == 2 and all(isinstance(d, int) for d in p.dims), f"{func}: {p} is not a fixed 2-d shape")
    expect((a.dtype, b.dtype, sfa.dtype, sfb.dtype, c.dtype) == (operand, operand, "uint32", "uint32", "bf16"),
           f"{func}: A, B, SFA, SFB, C hold {a.dtype}, {b.dtype}, {sfa.dtype}, {sfb.dtype}, {c.dtype}")
    (M, K), N = a.dims, c.dims[1]
    expect(b.dims == [N, K] and c.dims[0] == M, f"{func}: B is {b.dims} and C {c.dims}; the case expects [N, K] and [M, N]")
    return M, N, K, init, sfa, sfb


def run_block_scaled(name, lib, init, func, device, tensors, K, ref, tolerance, baselines):
    """Launches func(A, B, SFA, SFB, C) on `tensors` (C filled with NaN),
    compares C with `ref` ([M, N] f32, the dequantized product), and on CUDA
    times it against the first of `baselines` that runs: (name, function,
    whether its result is comparable with ref)."""
    c = tensors[-1]
    M, N = c.shape
    launch, last_error = load_launch(lib, init, func)
    call(launch, last_error, tensors)
    if device == "cuda":
        torch.cuda.synchronize()
    error = relative_error(ref, c)
    flops = 2.0 * M * N * K
    fields = dict(shape=f"{M}x{N}x{K}", tolerance=tolerance, flops=flops)
    if device == "cpu":
        return result(name, "PASS" if error <= tolerance else "FAIL", max_error=error, note="tilet --cpu emulator, no timing", **fields)
    ms = time_ms(lambda: call(launch, last_error, tensors))
    error, note = worst(error, relative_error(ref, c))  # and after the last timed launch
    for baseline, base, comparable in baselines:
        try:
            out = base()
            break
        except (RuntimeError, TypeError, AttributeError):
            continue
    if comparable:
        fields["baseline_max_error"] = relative_error(ref, out)
    base_ms = time_ms(base)
    return result(name, "PASS" if error <= tolerance else "FAIL", max_error=error, time_ms=ms, tflops=flops / ms / 1e9,
                  baseline=baseline, baseline_ms=base_ms, baseline_tflops=flops / base_ms / 1e9, ratio=base_ms / ms, note=note, **fields)
