#!/usr/bin/env python3
"""tilet-golden as a user project uses it: --update writes the goldens, a
check passes, an edited golden fails with a unified diff and the actual
output kept, and --update rewrites it.

usage: golden_user.py TILET TILET_GOLDEN
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402

TILET, TOOL = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


env = {k: v for k, v in os.environ.items() if k != "CI"}   # a developer's machine, where --update is allowed

with tempfile.TemporaryDirectory() as tmp:
    kernels = os.path.join(tmp, "kernels")
    os.makedirs(kernels)
    with open(os.path.join(kernels, "scale.tl"), "w") as f:
        f.write("// ARGS: --arch sm_80\nkernel scale(X: f32[256]) grid(1) threads(128) {\n"
                "    for i in parallel(256) { X[i] = X[i] * 2.0; }\n}\n")

    def tool(*args, extra_env=None):
        return subprocess.run([sys.executable, TOOL, "--tilet", TILET, *args], capture_output=True, text=True, cwd=tmp,
                              env={**env, **(extra_env or {})})

    p = tool(kernels)
    expect(p.returncode == 1 and "missing expected file" in p.stdout, "without goldens the check fails and says so", p.stdout)
    p = tool(kernels, "--update")
    expect(p.returncode == 0 and all(os.path.exists(os.path.join(kernels, "scale" + e)) for e in (".cu", ".host.cpp", ".h")),
           "--update writes NAME.cu, NAME.host.cpp and NAME.h beside the .tl", p.stdout + p.stderr)
    p = tool(kernels)
    expect(p.returncode == 0 and "1 test(s), 0 problem(s)" in p.stdout, "the check passes against fresh goldens", p.stdout)
    cu = os.path.join(kernels, "scale.cu")
    with open(cu) as f:
        text = f.read()
    with open(cu, "w") as f:
        f.write(text.replace("* 2.0f", "* 3.0f"))
    p = tool(kernels, "--actual-dir", os.path.join(tmp, "actual"))
    expect(p.returncode == 1 and "--- " in p.stdout and "+++ " in p.stdout and "@@" in p.stdout and "* 3.0f" in p.stdout
           and os.path.exists(os.path.join(tmp, "actual")), "a changed output fails with a unified diff; the actual output is kept", p.stdout)
    p = tool(kernels, "--update", extra_env={"CI": "true"})
    expect(p.returncode == 1 and "refusing" in p.stderr, "--update is refused under CI", p.stderr)
    p = tool(kernels, "--update")
    p2 = tool(kernels)
    expect(p.returncode == 0 and p2.returncode == 0, "--update rewrites the golden and the check passes again", p.stdout + p2.stdout)

finish("golden_user")
