#!/usr/bin/env python3
"""The generated Python binding (--python), against a library built in one
command (-o libops.so): it loads with ctypes, binds one method per kernel,
reads dynamic dimensions from the tensors, and refuses wrong arguments with
TypeError/ValueError naming the kernel and the parameter -- numpy arrays and
PyTorch CPU tensors (no GPU here, so every call ends at a check: the last
one, the device). Runs the binding under a Python that has numpy and torch
(Debian's python3-numpy / python3-torch: /usr/bin/python3 when this one lacks
them). Exit 77 without nvcc or without such a Python.

usage: python_binding.py TILET
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402
from nvcc_check import find_nvcc  # noqa: E402

TILET = os.path.abspath(sys.argv[1])

KERNEL = """target sm_80;
kernel scale(X: f32[dyn n, 64], Y: f32[n, 64], s: f32) grid(ceildiv(n, 16)) as (bx) threads(128) {
    for i, j in parallel(16, 64) {
        Y[bx * 16 + i, j] = X[bx * 16 + i, j] * s;
    }
}
kernel pack(P: int4[32, 64], Q: uint8[32, 32]) grid(1) threads(128) {
    let bytes = Tensor([32, 32], uint8, P);
    copy(bytes, Q);
}
"""

CALLS = r"""
import sys, numpy as np, torch
import ops
lib = ops.load(sys.argv[1])
def attempt(what, f):
    try:
        f()
        print(what + "|ok|")
    except Exception as e:
        print(what + "|" + type(e).__name__ + "|" + str(e))
x, y = torch.zeros(48, 64), torch.zeros(48, 64)
attempt("numpy", lambda: lib.scale(np.zeros((48, 64), np.float32), np.zeros((48, 64), np.float32), 2.0))
attempt("dtype", lambda: lib.scale(x.half(), y, 2.0))
attempt("shape", lambda: lib.scale(x, torch.zeros(48, 32), 2.0))
attempt("dyn", lambda: lib.scale(x, torch.zeros(40, 64), 2.0))
attempt("strides", lambda: lib.scale(torch.zeros(64, 48).t(), y, 2.0))
attempt("align", lambda: lib.scale(torch.zeros(48 * 64 + 1)[1:].view(48, 64), y, 2.0))
attempt("device", lambda: lib.scale(x, y, 2.0))
attempt("arity", lambda: lib.scale(x, y))
attempt("scalar", lambda: lib.scale(x, y, "2"))
attempt("object", lambda: lib.scale([1.0], y, 2.0))
attempt("packed", lambda: lib.pack(torch.zeros(32, 64, dtype=torch.int8), torch.zeros(32, 32, dtype=torch.uint8)))
attempt("packed bytes", lambda: lib.pack(torch.zeros(32, 32, dtype=torch.uint8), torch.zeros(32, 32, dtype=torch.uint8)))
print("methods|" + ",".join(sorted(k for k in dir(lib) if not k.startswith("_"))) + "|")
"""


def python_with_torch():
    for candidate in (sys.executable, "/usr/bin/python3"):
        if candidate and os.path.exists(candidate) and subprocess.run([candidate, "-c", "import numpy, torch"], capture_output=True).returncode == 0:
            return candidate
    return None


nvcc, py = find_nvcc(), python_with_torch()
if not nvcc or not py:
    print("skipped: " + ("nvcc not found" if not nvcc else "no python3 with numpy and torch (scripts/setup installs Debian's)"))
    sys.exit(77)
with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "ops.tl"), "w") as f:
        f.write(KERNEL)
    with open(os.path.join(tmp, "calls.py"), "w") as f:
        f.write(CALLS)
    p = subprocess.run([TILET, "ops.tl", "-o", "libops.so", "--python", "ops.py"], cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 0 and os.path.exists(os.path.join(tmp, "ops.py")), "-o libops.so --python ops.py writes the library and the binding", p.stderr)
    p = subprocess.run([py, "-I", "-c", "import ast, sys; ast.parse(open('ops.py').read())"], cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 0, "the binding is valid Python", p.stderr)
    source = open(os.path.join(tmp, "ops.py")).read() if os.path.exists(os.path.join(tmp, "ops.py")) else ""
    imports = sorted({l.split()[1].split(".")[0] for l in source.splitlines() if l.startswith(("import ", "from "))})
    expect(imports == ["ctypes"], "the binding imports the standard library only at module level (ctypes)", str(imports))
    p = subprocess.run([py, "calls.py", os.path.join(tmp, "libops.so")], cwd=tmp, capture_output=True, text=True, timeout=120)
    rows = {}
    for line in p.stdout.splitlines():
        what, kind, message = line.split("|", 2)
        rows[what] = (kind, message)
    log = p.stdout + p.stderr
    expect(rows.get("methods") == ("pack,scale", ""), "one method per kernel", log)
    want = {
        "numpy": ("TypeError", "scale: parameter 'X' must be in GPU memory; got a tensor in host memory"),
        "dtype": ("TypeError", "scale: parameter 'X' must hold f32 (float32), got float16"),
        "shape": ("ValueError", "scale: parameter 'Y' must have shape [n, 64]: dimension 1 is 32, not 64"),
        "dyn": ("ValueError", "scale: parameter 'Y': dimension 0 is n = 48 (from an earlier tensor), got 40"),
        "strides": ("ValueError", "scale: parameter 'X' must be contiguous (row-major, dense); got strides [1, 48]"),
        "device": ("TypeError", "scale: parameter 'X' must be in GPU memory; got a tensor in host memory"),
        "arity": ("TypeError", "scale() takes 3 arguments (X, Y, s), got 2"),
        "scalar": ("TypeError", "scale: parameter 's' is a f32 scalar, got str"),
        "object": ("TypeError", "scale: parameter 'X' must be a tensor (PyTorch, CuPy, __cuda_array_interface__ or __dlpack__), got list"),
        "packed": ("ValueError", "pack: parameter 'P' must have shape [32, 32] (the bytes that hold its int4 elements): dimension 1 is 64, not 32"),
        "packed bytes": ("TypeError", "pack: parameter 'P' must be in GPU memory; got a tensor in host memory"),
    }
    for what, expected in want.items():
        expect(rows.get(what) == expected, f"{what}: {expected[0]}: {expected[1]}", f"got {rows.get(what)}\n{log[-2000:]}")
    align = rows.get("align", ("", ""))
    expect(align[0] == "ValueError" and align[1].startswith("scale: parameter 'X' must be 16-byte aligned; its address 0x"),
           "a misaligned tensor: ValueError with its address", str(align))
finish("python_binding")
