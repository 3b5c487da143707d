#!/usr/bin/env python3
"""Multi-architecture libraries built for real, with nvcc (no GPU needed):
- a GEMM translated for sm_80, sm_90a and sm_100a (mma.sync on one, wgmma on
  another: different PTX helpers per variant) compiles with the three
  -gencodes of its build line, without register spills, and its launch code
  with g++ -Wall -Werror; each variant's kernel is compiled for real only in
  its own pass (more than a trap's few registers);
- that translation and two prefixed translations of another file link into
  one shared library, which exports each launch function once and no
  variant's launch;
- `tilet --arch sm_80,sm_90a -o libk.so` and `--validate` use every -gencode;
- the make recipe (examples/Makefile, ARCH=sm_80,sm_90a), the Meson recipe of
  docs/build-integration.md (a custom_target and the CUDA language) and the
  CMake package (ARCHS, in cmake_project.py) each build a two-architecture
  library.
Exit 77 without nvcc.

usage: multi_arch_build.py TILET EXAMPLES
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402
from nvcc_check import CUDA, compile_cu, find_nvcc, supported_arches  # noqa: E402

TILET = os.path.abspath(sys.argv[1])
EXAMPLES = os.path.abspath(sys.argv[2])
NVCC = find_nvcc()
if not NVCC:
    print("multi_arch_build: nvcc not found, skipped")
    sys.exit(77)
NVCC = os.path.abspath(shutil.which(NVCC) or NVCC)


def run(args, cwd=None, env=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)


def registers_by_kernel(log):
    """{(kernel, sm_XY): registers} from a ptxas -v log."""
    out, current = {}, None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)' for '(sm_\w+)'", line)
        if m:
            current = m.groups()
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            out[current] = int(m.group(1))
    return out


MESON_BUILD = """project('uses_tilet', 'cpp', 'cuda')
tilet = find_program(get_option('tilet'))
archs = ['sm_80', 'sm_90a']
gencodes = []
foreach a : archs
  gencodes += ['-gencode', 'arch=' + a.replace('sm_', 'compute_') + ',code=' + a]
endforeach
scale = custom_target('scale',
  input : 'scale.tl',
  output : ['scale.cu', 'scale.host.cpp', 'scale.h'],
  depfile : 'scale.d',
  command : [tilet, '@INPUT@', '-o', '@OUTPUT0@', '-MD', '-MF', '@DEPFILE@', '--arch', ','.join(archs)])
shared_library('scale', scale[0], scale[1], cuda_args : gencodes, dependencies : dependency('cuda', modules : ['cudart']))
"""
SCALE = """kernel scale(X: f32[1024]) grid(8) as (bx) threads(128) {
    for i in parallel(128) { X[bx * 128 + i] = X[bx * 128 + i] * 2.0; }
}
"""

with tempfile.TemporaryDirectory() as tmp:
    # The GEMM, three variants.
    p = run([TILET, os.path.join(EXAMPLES, "gemm_bf16.tl"), "--arch", "sm_80,sm_90a,sm_100a", "-o", "gemm.cu"], tmp)
    expect(p.returncode == 0, "gemm_bf16 translates for three targets", p.stderr)
    cu = open(os.path.join(tmp, "gemm.cu")).read()
    expect("mma.sync" in cu and "wgmma.mma_async" in cu, "its variants use different instructions (mma.sync, wgmma)", cu[:1000])
    status, log, spills = compile_cu(NVCC, supported_arches(NVCC), os.path.join(tmp, "gemm.cu"), os.path.join(tmp, "gemm.o"))
    expect(status == "ok" and spills == 0, "nvcc compiles it with the three -gencodes of its build line, without spills", log[-3000:])
    used = registers_by_kernel(log)
    for arch in ["sm_80", "sm_90a", "sm_100a"]:
        own = used.get((f"gemm_bf16_kernel_{arch}", arch), 0)
        others = [r for (k, a), r in used.items() if a == arch and k != f"gemm_bf16_kernel_{arch}"]
        expect(own > 32 and others and max(others) <= 16, f"the {arch} pass compiles the {arch} variant, and only traps for the others", str(used))
    p = run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fPIC", "-I", os.path.join(CUDA, "include"), "-c", "gemm.host.cpp", "-o", "gemm.host.o"], tmp)
    expect(p.returncode == 0, "its launch code compiles with g++ -Wall -Wextra -Werror", p.stderr)

    # Two prefixed translations of one file and the multi-architecture GEMM in one library.
    objects = ["gemm.o", "gemm.host.o"]
    for prefix, arch in [("a100_", "sm_80"), ("h100_", "sm_90a")]:
        name = prefix + "softmax"
        p = run([TILET, os.path.join(EXAMPLES, "softmax.tl"), "--arch", arch, "--symbol-prefix", prefix, "-o", name + ".cu"], tmp)
        expect(p.returncode == 0, f"softmax translates for {arch} with --symbol-prefix {prefix}", p.stderr)
        status, log, _ = compile_cu(NVCC, supported_arches(NVCC), os.path.join(tmp, name + ".cu"), os.path.join(tmp, name + ".o"))
        expect(status == "ok", f"the {prefix} translation compiles", log[-2000:])
        p = run(["g++", "-std=c++17", "-fPIC", "-I", os.path.join(CUDA, "include"), "-c", name + ".host.cpp", "-o", name + ".host.o"], tmp)
        expect(p.returncode == 0, f"the {prefix} launch code compiles", p.stderr)
        objects += [name + ".o", name + ".host.o"]
    p = run(["g++", "-shared", *objects, "-L", os.path.join(CUDA, "lib64"), "-lcudart", "-o", "libkernels.so"], tmp)
    expect(p.returncode == 0, "the three translations link into one shared library", p.stderr)
    exported = run(["nm", "-D", "--defined-only", os.path.join(tmp, "libkernels.so")]).stdout
    names = set(re.findall(r" T (\w+)$", exported, re.M))
    expect({"gemm_bf16", "a100_softmax", "h100_softmax", "gemm_init", "a100_a100_softmax_init", "h100_h100_softmax_init"} <= names and
           not any(n.startswith("tilet_launch") for n in names), "it exports each launch function once, and no variant's launch", exported)

    # One command to a two-architecture library, and --validate.
    p = run([TILET, os.path.join(EXAMPLES, "softmax.tl"), "--arch", "sm_80,sm_90a", "-o", "libsoftmax2.so"], tmp, env=dict(os.environ, NVCC=NVCC))
    symbols = run(["nm", "-D", "--defined-only", os.path.join(tmp, "libsoftmax2.so")]).stdout if p.returncode == 0 else ""
    expect(p.returncode == 0 and " T softmax\n" in symbols and os.path.exists(os.path.join(tmp, "softmax2.h")),
           "tilet --arch sm_80,sm_90a -o libsoftmax2.so builds the library", p.stderr)
    p = run([TILET, os.path.join(EXAMPLES, "softmax.tl"), "--arch", "sm_80,sm_90a", "--validate", "-o", "checked.cu"], tmp, env=dict(os.environ, NVCC=NVCC))
    expect(p.returncode == 0, "--validate compiles a multi-architecture .cu", p.stderr)

    # make: examples/Makefile with ARCH.
    out = os.path.join(tmp, "make-out")
    p = run(["make", "-C", EXAMPLES, f"TILET={TILET}", f"NVCC={NVCC}", f"CUDA_HOME={CUDA}", f"OUT={out}", "ARCH=sm_80,sm_90a", os.path.join(out, "libsoftmax.so")])
    log = p.stdout + p.stderr
    expect(p.returncode == 0 and os.path.exists(os.path.join(out, "libsoftmax.so")) and
           "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a" in log, "make ARCH=sm_80,sm_90a builds a two-architecture library", log)

    # Meson: the custom_target of docs/build-integration.md, built with the CUDA language.
    if shutil.which("meson") and shutil.which("ninja"):
        src, build = os.path.join(tmp, "meson-src"), os.path.join(tmp, "meson-build")
        os.makedirs(src)
        for name, text in [("meson.build", MESON_BUILD), ("meson_options.txt", "option('tilet', type : 'string', value : 'tilet')\n"), ("scale.tl", SCALE)]:
            with open(os.path.join(src, name), "w") as f:
                f.write(text)
        env = dict(os.environ, NVCC=NVCC, CUDA_PATH=CUDA)
        p = run(["meson", "setup", build, src, f"-Dtilet={TILET}"], tmp, env=env)
        expect(p.returncode == 0, "the Meson project with the CUDA language configures", p.stdout + p.stderr)
        p = run(["ninja", "-C", build], tmp, env=env)
        commands = open(os.path.join(build, "compile_commands.json")).read() if os.path.exists(os.path.join(build, "compile_commands.json")) else ""
        expect(p.returncode == 0 and os.path.exists(os.path.join(build, "libscale.so")) and "arch=compute_90a,code=sm_90a" in commands,
               "Meson builds a two-architecture library", p.stdout + p.stderr)

finish("multi_arch_build")
