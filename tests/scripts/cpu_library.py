#!/usr/bin/env python3
"""--cpu libraries, used as a user would: `tilet k.tl --cpu -o libk.so
--python k.py`, then the kernels called from C++ (linking the library) and
from Python with NumPy arrays and PyTorch CPU tensors, against NumPy/PyTorch
references -- a scaling kernel with a dynamic dimension, and TileLang's GEMM +
ReLU on sm_80 (mma.sync, cp.async) and sm_90a (wgmma, TMA) at small sizes.
Errors: --cpu without a library name, and a C++ compiler that cannot run,
write nothing. Exit 77 without the CUDA toolkit's headers (the emulator's
types); the Python part needs a python3 with numpy and torch (Debian's).

usage: cpu_library.py TILET EXAMPLES_DIR
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402

TILET, EXAMPLES = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])

SCALE = """target sm_80;
kernel scale(X: f32[dyn n, 64], Y: f32[n, 64], s: f32) grid(ceildiv(n, 16)) as (bx) threads(128) {
    for i, j in parallel(16, 64) {
        Y[bx * 16 + i, j] = X[bx * 16 + i, j] * s;
    }
}
"""

MAIN = r"""#include "ops.h"
#include <cstdio>
#include <cmath>
int main() {
    static float x[40 * 64], y[40 * 64];
    for (int i = 0; i < 40 * 64; ++i) x[i] = 0.25f * (i % 17) - 2.0f;
    cudaError_t e = scale(x, y, -3.0f, 40, 0);   // tensors and scalars in order, then the dynamic dimensions
    double worst = 0;
    for (int i = 0; i < 40 * 64; ++i) worst = std::fmax(worst, std::fabs(y[i] + 3.0f * x[i]));
    e = e != cudaSuccess ? e : scale(x, nullptr, 1.0f, 40, 0);
    std::printf("%d|%g|%s\n", static_cast<int>(e), worst, ops_last_error());
}
"""

CALLS = r"""
import sys, numpy as np, torch
import ops, gemm80, gemm90
ops_lib = ops.load("./libops.so")
x = np.random.default_rng(1).standard_normal((48, 64)).astype(np.float32)
y = np.zeros((48, 64), np.float32)
ops_lib.scale(x, y, 2.5)
print("numpy scale|%g" % np.abs(y - 2.5 * x).max())
tx, ty = torch.rand(32, 64), torch.zeros(32, 64)
ops_lib.scale(tx, ty, -1.0)
print("torch scale|%g" % (ty + tx).abs().max().item())
class Device:   # something in GPU memory, as CuPy arrays say
    __cuda_array_interface__ = {"shape": (32, 64), "typestr": "<f4", "data": (4096, False), "version": 3}
try:
    ops_lib.scale(Device(), ty, 1.0)
    print("gpu array|accepted")
except TypeError as e:
    print("gpu array|" + str(e))
for name, module in (("gemm sm_80", gemm80), ("gemm sm_90a", gemm90)):
    lib = module.load("./lib" + module.__name__ + ".so")
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(256, 128, generator=g).half(), torch.randn(128, 256, generator=g).half()
    c = torch.zeros(256, 256).half()
    lib.gemm_relu(a, b, c)
    ref = torch.relu(a.float() @ b.float())
    print(name + "|%g" % ((c.float() - ref).abs().max().item() / ref.abs().max().item()))
"""


def python_with_torch():
    for candidate in (sys.executable, "/usr/bin/python3"):
        if candidate and os.path.exists(candidate) and subprocess.run([candidate, "-c", "import numpy, torch"], capture_output=True).returncode == 0:
            return candidate
    return None


with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "ops.tl"), "w") as f:
        f.write(SCALE)
    p = subprocess.run([TILET, "ops.tl", "--cpu", "-o", "libops.so", "--python", "ops.py"], cwd=tmp, capture_output=True, text=True)
    if p.returncode != 0 and "CUDA toolkit's headers" in p.stderr:
        print("skipped: " + p.stderr.strip())
        sys.exit(77)
    expect(p.returncode == 0 and all(os.path.exists(os.path.join(tmp, f)) for f in ("libops.so", "ops.h", "ops.py")),
           "--cpu -o libops.so --python ops.py writes the library, its header and the binding", p.stderr)
    with open(os.path.join(tmp, "main.cpp"), "w") as f:
        f.write(MAIN)
    p = subprocess.run(["g++", "-std=c++17", "-I", "/usr/local/cuda/include", "main.cpp", "-L.", "-lops", "-Wl,-rpath," + tmp, "-o", "main"],
                       cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 0, "a C++ program links the CPU library with its header", p.stderr)
    if p.returncode == 0:
        r = subprocess.run(["./main"], cwd=tmp, capture_output=True, text=True, timeout=120)
        fields = r.stdout.strip().split("|")
        expect(len(fields) == 3 and fields[0] == "1" and float(fields[1]) == 0.0 and fields[2] == "scale: tensor 'Y' (f32 [n, 64]) is a null pointer",
               "from C++: the kernel computes exactly, and the launch checks refuse a null tensor with the message", r.stdout + r.stderr)
    for arch, module in (("sm_80", "gemm80"), ("sm_90a", "gemm90")):
        p = subprocess.run([TILET, os.path.join(EXAMPLES, "gemm_relu.tl"), "--cpu", "--arch", arch, "-D", "M=256", "-D", "N=256", "-D", "K=128",
                            "-o", f"lib{module}.so", "--python", f"{module}.py"], cwd=tmp, capture_output=True, text=True)
        expect(p.returncode == 0, f"gemm_relu.tl at {arch} builds for the CPU", p.stderr)
    py = python_with_torch()
    if py:
        with open(os.path.join(tmp, "calls.py"), "w") as f:
            f.write(CALLS)
        r = subprocess.run([py, "calls.py"], cwd=tmp, capture_output=True, text=True, timeout=600)
        rows = dict(l.split("|", 1) for l in r.stdout.splitlines() if "|" in l)
        log = r.stdout + r.stderr[-2000:]
        expect(rows.get("numpy scale") == "0" and rows.get("torch scale") == "0", "from Python: NumPy arrays and PyTorch CPU tensors, exact", log)
        expect(rows.get("gpu array") == "scale: parameter 'X' must be in host (CPU) memory; got a tensor in GPU memory",
               "a CPU library refuses an array in GPU memory, naming the parameter", log)
        for name in ("gemm sm_80", "gemm sm_90a"):
            err = float(rows.get(name, "inf"))
            expect(err < 2e-3, f"{name} (mma.sync / wgmma and TMA, emulated) matches PyTorch within f16 rounding: {err:.2g}", log)
    else:
        print("python part skipped: no python3 with numpy and torch (scripts/setup installs Debian's)")
    p = subprocess.run([TILET, "ops.tl", "--cpu", "-o", "ops.cu"], cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 1 and "--cpu builds a library: name it with -o libNAME.so" in p.stderr, "--cpu without a library name is an error", p.stderr)
    p = subprocess.run([TILET, "ops.tl", "--cpu", "-o", "libnone.so"], cwd=tmp, capture_output=True, text=True, env=dict(os.environ, CXX="/nonexistent/c++"))
    expect(p.returncode == 1 and "could not run /nonexistent/c++ (set CXX)" in p.stderr and not os.path.exists(os.path.join(tmp, "libnone.so")),
           "a C++ compiler that cannot run: exit 1, nothing written", p.stderr)
finish("cpu_library")
