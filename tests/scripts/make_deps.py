#!/usr/bin/env python3
"""GNU make with tilet's dependency files, through examples/Makefile: its
pattern rule translates each .tl file with -MD -MP, nvcc and g++ build a
shared library, and the .d files are included.

usage: make_deps.py TILET MAKEFILE

In a scratch directory holding a copy of the Makefile, a.tl (importing
sizes.tl) and b.tl: the first make builds everything; a second does
nothing; touching the imported file rebuilds a's outputs and library only;
removing the import (and the imported file) does not break make, thanks to
the -MP phony rule. With nvcc missing, only the translations are built.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402
import time

TILET = os.path.abspath(sys.argv[1])
MAKEFILE = os.path.abspath(sys.argv[2])
NVCC = os.environ.get("NVCC") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else shutil.which("nvcc"))


KERNEL = """target sm_80;
kernel {name}(X: f32[N]) grid(N / 64) as (bx) threads(64) {{
    for i in parallel(64) {{ X[bx * 64 + i] = X[bx * 64 + i] + 1.0; }}
}}
"""
GOALS = ["out/liba.so", "out/libb.so"] if NVCC else ["out/a.cu", "out/b.cu"]


def make(tmp):
    args = ["make", "-f", "Makefile", f"TILET={TILET}"] + ([f"NVCC={NVCC}"] if NVCC else []) + GOALS
    p = subprocess.run(args, cwd=tmp, capture_output=True, text=True)
    lines = p.stdout.splitlines()
    translated = sorted(l.split()[1].replace(".tl", "") for l in lines if l.startswith(TILET + " "))
    linked = sorted(l.split()[-1] for l in lines if " -shared " in l)
    return p.returncode, translated, linked, p.stdout + p.stderr


def bump(path):
    later = time.time() + 5
    os.utime(path, (later, later))


with tempfile.TemporaryDirectory() as tmp:
    shutil.copy(MAKEFILE, os.path.join(tmp, "Makefile"))
    with open(os.path.join(tmp, "sizes.tl"), "w") as f:
        f.write("const N = 256;\n")
    with open(os.path.join(tmp, "a.tl"), "w") as f:
        f.write('import "sizes.tl";\n' + KERNEL.format(name="a"))
    with open(os.path.join(tmp, "b.tl"), "w") as f:
        f.write("const N = 128;\n" + KERNEL.format(name="b"))
    # sizes.tl is a .tl file too, but it is only built when asked for.

    rc, translated, linked, log = make(tmp)
    expect(rc == 0 and translated == ["a", "b"], "the first make translates both files" + (" and links both libraries" if NVCC else ""), log)
    if NVCC:
        expect(linked == ["out/liba.so", "out/libb.so"], "both libraries are linked", log)
    with open(os.path.join(tmp, "out", "a.d")) as f:
        dep = f.read()
    expect(dep.startswith("out/a.cu out/a.host.cpp out/a.h:") and "sizes.tl" in dep and "\nsizes.tl:\n" in dep,
           "a.d names every output, the import, and a phony rule for it", dep)
    rc, translated, linked, log = make(tmp)
    expect(rc == 0 and translated == [] and linked == [], "a second make does nothing", log)
    p = subprocess.run(["make", "-f", "Makefile", f"TILET={TILET}"] + ([f"NVCC={NVCC}"] if NVCC else ["-n"]), cwd=tmp, capture_output=True, text=True)
    expect(p.returncode == 0 and "sizes" not in p.stdout, "'make' (all) builds the kernels, not the imported file beside them",
           p.stdout + p.stderr)

    bump(os.path.join(tmp, "sizes.tl"))
    rc, translated, linked, log = make(tmp)
    expect(rc == 0 and translated == ["a"] and linked == (["out/liba.so"] if NVCC else []),
           "touching the import rebuilds its importer only", log)

    with open(os.path.join(tmp, "a.tl"), "w") as f:
        f.write("const N = 256;\n" + KERNEL.format(name="a"))
    bump(os.path.join(tmp, "a.tl"))
    os.remove(os.path.join(tmp, "sizes.tl"))
    rc, translated, linked, log = make(tmp)
    expect(rc == 0 and translated == ["a"], "deleting an import does not break make (-MP) and rebuilds the former importer", log)
    with open(os.path.join(tmp, "out", "a.d")) as f:
        expect("sizes.tl" not in f.read(), "the new a.d no longer names the deleted import")

finish("make_deps")
