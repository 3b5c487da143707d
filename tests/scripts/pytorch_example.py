#!/usr/bin/env python3
"""examples/pytorch as its README says to run it without a GPU: build.sh
--cpu builds the two kernels' CPU libraries and bindings (into a scratch
directory), model.py --cpu uses them as PyTorch ops and checks them against
PyTorch. Exit 77 without a python3 that has torch, or without the CUDA
toolkit's headers.

usage: pytorch_example.py TILET EXAMPLES_PYTORCH_DIR
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402

tilet, example = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
py = next((c for c in (sys.executable, "/usr/bin/python3")
           if c and os.path.exists(c) and subprocess.run([c, "-c", "import torch"], capture_output=True).returncode == 0), None)
if not py:
    print("skipped: no python3 with torch (scripts/setup installs Debian's python3-torch)")
    sys.exit(77)
with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.run([os.path.join(example, "build.sh"), "--cpu"], capture_output=True, text=True, env=dict(os.environ, TILET=tilet, OUT=tmp))
    if p.returncode != 0 and "CUDA toolkit's headers" in p.stderr:
        print("skipped: " + p.stderr.strip())
        sys.exit(77)
    expect(p.returncode == 0, "build.sh --cpu builds both libraries", p.stdout + p.stderr)
    r = subprocess.run([py, os.path.join(example, "model.py"), "--cpu", "--build", tmp], capture_output=True, text=True, timeout=600)
    expect(r.returncode == 0 and r.stdout.strip().endswith("ok"), "model.py --cpu: the kernels as PyTorch ops match PyTorch", r.stdout + r.stderr)
    print(r.stdout.strip())
    version = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True).stdout.strip()
    custom_op = subprocess.run([py, "-c", "import torch, sys; sys.exit(0 if hasattr(torch.library, 'custom_op') else 1)"], capture_output=True)
    if custom_op.returncode == 0:
        r = subprocess.run([py, os.path.join(example, "model.py"), "--cpu", "--build", tmp, "--compile"], capture_output=True, text=True, timeout=900)
        expect(r.returncode == 0 and r.stdout.strip().endswith("ok"), "model.py --cpu --compile: the ops under torch.compile", r.stdout + r.stderr)
    else:
        print(f"torch.compile part skipped: torch {version} has no torch.library.custom_op (it needs torch >= 2.4; Debian 12 ships 1.13)")
finish("pytorch_example")
