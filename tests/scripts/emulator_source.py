#!/usr/bin/env python3
"""tilet --emit=emulator (the C++ rewrite behind --cpu, src/codegen/Emulation.cpp)
and tests/emu/prepare.py (the same rewrite for the tests' sources) agree
byte for byte: every example, emulator test kernel and TileLang port is
translated at sm_80, sm_90a and sm_100a (where it translates) and both
rewrites of the result are compared.

usage: emulator_source.py TILET PREPARE_PY DIR...
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402

tilet, prepare, dirs = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3:]
files = []
for d in dirs:
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        if name.endswith(".tl") and "\nkernel " in "\n" + open(path).read():
            files.append(os.path.abspath(path))
compared = 0
with tempfile.TemporaryDirectory() as tmp:
    for path in files:
        for arch in ("sm_80", "sm_90a", "sm_100a"):
            # Named as `-o -` names its outputs: after the input's stem.
            base = os.path.splitext(os.path.basename(path))[0]
            p = subprocess.run([tilet, path, "--arch", arch, "-o", base + ".cu"], cwd=tmp, capture_output=True, text=True)
            if p.returncode != 0:
                continue   # not every program fits every target
            q = subprocess.run([tilet, path, "--arch", arch, "--emit=emulator", "-o", "-"], cwd=tmp, capture_output=True, text=True)
            r = subprocess.run([sys.executable, prepare, base + ".cu", base + ".host.cpp", "py.cpp"], cwd=tmp, capture_output=True, text=True)
            expected = open(os.path.join(tmp, "py.cpp")).read() if r.returncode == 0 else r.stderr
            same = q.returncode == 0 and q.stdout == expected
            if not same:
                import difflib
                diff = "".join(list(difflib.unified_diff(expected.splitlines(True), q.stdout.splitlines(True), "prepare.py", "--emit=emulator"))[:40])
            expect(same, f"{os.path.relpath(path)} [{arch}]: --emit=emulator equals prepare.py", "" if same else diff + q.stderr)
            compared += 1
expect(compared > 100, f"the rewrites were compared on many translations ({compared})")
finish("emulator-source")
