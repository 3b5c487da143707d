#!/usr/bin/env python3
"""A Meson project that translates a kernel with a custom_target using
tilet's dependency file, as docs/build-integration.md shows: it builds, a
second build does nothing, and touching the imported file retranslates.

usage: meson_project.py TILET
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


# The snippet of docs/build-integration.md, with the tilet binary passed in.
MESON_BUILD = """project('uses_tilet', 'cpp')
tilet = find_program(get_option('tilet'))
scale = custom_target('scale',
  input : 'scale.tl',
  output : ['scale.cu', 'scale.host.cpp', 'scale.h'],
  depfile : 'scale.d',
  command : [tilet, '@INPUT@', '-o', '@OUTPUT0@', '-MD', '-MF', '@DEPFILE@'],
  build_by_default : true)
"""
OPTIONS = "option('tilet', type : 'string', value : 'tilet')\n"
SCALE = """import "sizes.tl";
kernel scale(X: f32[N]) grid(N / 128) as (bx) threads(128) {
    for i in parallel(128) { X[bx * 128 + i] = X[bx * 128 + i] * 2.0; }
}
"""


def run(args, cwd):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    src, build = os.path.join(tmp, "src"), os.path.join(tmp, "build")
    os.makedirs(src)
    for name, text in [("meson.build", MESON_BUILD), ("meson_options.txt", OPTIONS), ("scale.tl", SCALE), ("sizes.tl", "const N = 1024;\n")]:
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    p = run(["meson", "setup", build, src, f"-Dtilet={TILET}"], tmp)
    expect(p.returncode == 0, "the project configures", p.stdout + p.stderr)
    p = run(["ninja", "-C", build], tmp)
    expect(p.returncode == 0 and os.path.exists(os.path.join(build, "scale.cu")), "custom_target translates the kernel", p.stdout + p.stderr)
    p = run(["ninja", "-C", build], tmp)
    expect(p.returncode == 0 and "no work to do" in p.stdout, "a second build does nothing", p.stdout)
    later = time.time() + 5
    os.utime(os.path.join(src, "sizes.tl"), (later, later))
    p = run(["ninja", "-C", build], tmp)
    expect(p.returncode == 0 and "no work to do" not in p.stdout and "scale" in p.stdout, "touching the import retranslates (depfile:)", p.stdout)

finish("meson_project")
