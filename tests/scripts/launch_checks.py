#!/usr/bin/env python3
"""The launch functions' own checks, run for real: a kernel with a dynamic
dimension (promised a multiple of 4) and 16-byte vector accesses is translated (with --symbol-prefix),
built with nvcc and g++ against cudart, and called from a C++ program with a
negative dimension, a null tensor, a misaligned tensor and good arguments.
Each refusal must return its cudaError_t and leave a message naming the
kernel and the parameter in <prefix><module>_last_error(); good arguments
reach the device check (on a machine without a GPU: "no CUDA device").
Built with -DTILET_NO_CHECKS, the same bad arguments pass the checks
(nothing is refused before the device). Then the same kernel as a shared
library in one command (`-o libops.so`): the program linked against it
gives the same answers; a missing nvcc and an nvcc error in the program's
own CUDA (import_source) are user errors that write nothing. Exit 77
without nvcc.

usage: launch_checks.py TILET
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402
from nvcc_check import CUDA, find_nvcc  # noqa: E402

TILET = os.path.abspath(sys.argv[1])

KERNEL = """target sm_80;
kernel scale(X: f32[dyn n % 4, 64], Y: f32[n, 64]) grid(ceildiv(n, 16)) as (bx) threads(128) {
    for i, j in parallel(16, 64) {
        Y[bx * 16 + i, j] = X[bx * 16 + i, j] * 2.0;
    }
}
"""

MAIN = r"""#include "ops.h"
#include <cstdio>
int main() {
    alignas(16) static float x[64 * 64], y[64 * 64];
    const struct { const char *what; const float *x; float *y; int n; } calls[] = {
        {"negative", x, y, -4}, {"promise", x, y, 6}, {"null", nullptr, y, 64}, {"empty null", nullptr, nullptr, 0},
        {"misaligned", x + 1, y, 64}, {"good", x, y, 64},
    };
    for (const auto &c : calls) {
        cudaError_t e = my_scale(c.x, c.y, c.n, 0);
        std::printf("%s|%d|%s\n", c.what, static_cast<int>(e), my_ops_last_error());
    }
}
"""


def build_and_run(tmp, nvcc, defines):
    exe = os.path.join(tmp, "main" + ("_nochecks" if defines else ""))
    steps = [[nvcc, "-gencode", "arch=compute_80,code=sm_80", "-c", "ops.cu", "-o", "ops.o"],
             ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror"] + defines + ["-I", os.path.join(CUDA, "include"), "-c", "ops.host.cpp", "-o", "ops.host.o"],
             ["g++", "-std=c++17", "-I", os.path.join(CUDA, "include"), "main.cpp", "ops.host.o", "ops.o", "-L", os.path.join(CUDA, "lib64"),
              "-lcudart", "-o", exe]]
    for cmd in steps:
        p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if p.returncode != 0:
            return None, f"{' '.join(cmd)}\n{p.stdout}{p.stderr}"
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(CUDA, "lib64") + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    p = subprocess.run([exe], cwd=tmp, capture_output=True, text=True, env=env, timeout=60)
    rows = {}
    for line in p.stdout.splitlines():
        what, code, message = line.split("|", 2)
        rows[what] = (int(code), message)
    return rows, p.stdout + p.stderr


nvcc = find_nvcc()
if not nvcc:
    print("nvcc not found: skipped")
    sys.exit(77)
with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "ops.tl"), "w") as f:
        f.write(KERNEL)
    with open(os.path.join(tmp, "main.cpp"), "w") as f:
        f.write(MAIN)
    p = subprocess.run([TILET, "ops.tl", "-o", "ops.cu", "--symbol-prefix", "my_"], cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 0, "the kernel translates", p.stderr)
    header = open(os.path.join(tmp, "ops.h")).read()
    expect("const char *my_ops_last_error(void);" in header and "TILET_NO_CHECKS" in header,
           "the header declares <prefix><module>_last_error() and names TILET_NO_CHECKS", header[-800:])

    rows, log = build_and_run(tmp, nvcc, [])
    expect(rows is not None, "built with nvcc and g++ -Wall -Wextra -Werror, linked with cudart", log)
    rows = rows or {}
    # cudaErrorInvalidValue = 1, cudaErrorMisalignedAddress = 716 (driver_types.h)
    expect(rows.get("negative") == (1, "my_scale: dynamic dimension 'n' is -4; it must be at least 0"),
           "a negative dimension: cudaErrorInvalidValue, named with its value", log)
    expect(rows.get("promise") == (1, "my_scale: dynamic dimension 'n' is 6; the kernel was promised a multiple of 4 (dyn n % 4)"),
           "a dimension that breaks its promise (dyn n % 4): cudaErrorInvalidValue, named with its value", log)
    expect(rows.get("null") == (1, "my_scale: tensor 'X' (f32 [n, 64]) is a null pointer"),
           "a null tensor: cudaErrorInvalidValue, named with its type", log)
    empty = rows.get("empty null", (None, ""))
    expect(empty[0] == 0 and empty[1] == "", "null tensors with no elements (n = 0): an empty grid, cudaSuccess", log)
    mis = rows.get("misaligned", (None, ""))
    expect(mis[0] == 716 and re.fullmatch(r"my_scale: tensor 'X' must be 16-byte aligned \(its vector or TMA accesses\); its address 0x[0-9a-f]+ is not",
                                          mis[1]) is not None, "a misaligned tensor: cudaErrorMisalignedAddress with its address", log)
    good = rows.get("good", (None, ""))
    expect(good[0] != 0 and (good[1].startswith("my_scale: no CUDA device: ") or good[1].startswith("my_scale: compiled for sm_80")
                             or good[1] == ""),
           "good arguments reach the device check (no GPU here: 'no CUDA device', with CUDA's reason)", log)

    rows, log = build_and_run(tmp, nvcc, ["-DTILET_NO_CHECKS"])
    expect(rows is not None, "built with -DTILET_NO_CHECKS (no unused-function warnings)", log)
    rows = rows or {}
    expect(all(message == "" for code, message in rows.values()) and rows.get("null", (1,))[0] != 1,
           "with -DTILET_NO_CHECKS nothing is refused by a check: no messages, a null tensor is not cudaErrorInvalidValue", log)
    # One command to a shared library, and the same checks through it.
    lib = os.path.join(tmp, "lib")
    os.mkdir(lib)
    p = subprocess.run([TILET, "ops.tl", "-o", "lib/libops.so", "--symbol-prefix", "my_", "-MD"], cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 0 and sorted(os.listdir(lib)) == ["libops.d", "libops.so", "ops.h"],
           "-o lib/libops.so builds the library and writes ops.h and the -MD rule beside it", p.stderr + str(os.listdir(lib)))
    rule = open(os.path.join(lib, "libops.d")).read() if os.path.exists(os.path.join(lib, "libops.d")) else ""
    expect(rule.startswith("lib/libops.so lib/ops.h:"), "the dependency rule's targets are the library and its header", rule)
    exe = os.path.join(tmp, "main_lib")
    p = subprocess.run(["g++", "-std=c++17", "-I", lib, "-I", os.path.join(CUDA, "include"), "main.cpp", "-L", lib, "-lops",
                        "-Wl,-rpath," + lib, "-o", exe], cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 0, "a program links against the library (its header beside it)", p.stderr)
    if p.returncode == 0:
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(CUDA, "lib64") + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
        run = subprocess.run([exe], cwd=tmp, capture_output=True, text=True, env=env, timeout=60)
        lines = dict(l.split("|", 1) for l in run.stdout.splitlines())
        expect(lines.get("promise", "").startswith("1|my_scale: dynamic dimension 'n' is 6") and lines.get("null", "").startswith("1|my_scale: tensor 'X'"),
               "the library's launches check as the two-step build's do", run.stdout + run.stderr)
    p = subprocess.run([TILET, "ops.tl", "-o", "lib/libnone.so"], cwd=tmp, capture_output=True, text=True, env=dict(os.environ, NVCC="/nonexistent/nvcc"))
    expect(p.returncode == 1 and "cannot build 'lib/libnone.so': could not run /nonexistent/nvcc" in p.stderr and not os.path.exists(os.path.join(lib, "libnone.so"))
           and not os.path.exists(os.path.join(lib, "none.h")), "an nvcc that cannot run: exit 1, the reason, nothing written", p.stderr)
    with open(os.path.join(tmp, "broken.cuh"), "w") as f:
        f.write("__device__ void twice(float *x) { *x *= 2.0f }\n")   # missing ';'
    with open(os.path.join(tmp, "ext.tl"), "w") as f:
        f.write('target sm_80;\nkernel k(X: f32[32]) grid(1) threads(32) as (t) {\n    import_source("broken.cuh");\n'
                '    call_extern("twice", access_ptr(X[t], "rw"));\n}\n')
    p = subprocess.run([TILET, "ext.tl", "-o", "lib/libext.so"], cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 1 and "import_source" in p.stderr and "internal compiler error" not in p.stderr
           and not os.path.exists(os.path.join(lib, "libext.so")),
           "nvcc rejecting the program's own CUDA is the program's error (exit 1, naming import_source), not tilet's", p.stderr[-1500:])
    expect(re.search(r"broken\.cuh\(1\): error", p.stderr) is not None,
           "nvcc's message names the line of the imported file (#line directives)", p.stderr[-1500:])
    p = subprocess.run([TILET, "ops.tl", "-o", "lib/libast.so", "--emit=ast"], cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 1 and "--emit=ast writes text" in p.stderr, "--emit other than cuda with -o *.so is a command-line error", p.stderr)
finish("launch_checks")
