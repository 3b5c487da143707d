#!/usr/bin/env python3
"""Translating the same input twice, from two working directories, gives
byte-identical outputs.

usage: determinism.py TILET FILE.tl...
"""
import os
import shutil
import subprocess
import sys
import tempfile

tilet = os.path.abspath(sys.argv[1])
failures = 0
for tl in sys.argv[2:]:
    tl = os.path.abspath(tl)
    outputs = []
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(2):
            work = os.path.join(tmp, f"run{attempt}", "deeper" * attempt)
            os.makedirs(work)
            shutil.copy(tl, os.path.join(work, os.path.basename(tl)))
            p = subprocess.run([tilet, os.path.basename(tl), "-o", "k.cu", "--explain=json"], cwd=work, capture_output=True)
            if p.returncode != 0:
                print(f"FAIL {tl}: tilet failed\n{p.stderr.decode()}")
                failures += 1
                break
            files = {}
            for name in ("k.cu", "k.host.cpp", "k.h"):
                with open(os.path.join(work, name), "rb") as f:
                    files[name] = f.read()
            files["explain"] = p.stderr
            outputs.append(files)
    if len(outputs) == 2 and outputs[0] != outputs[1]:
        diff = [k for k in outputs[0] if outputs[0][k] != outputs[1][k]]
        print(f"FAIL {tl}: outputs differ between runs: {diff}")
        failures += 1
print(f"determinism: {len(sys.argv) - 2} file(s), {failures} failure(s)")
sys.exit(1 if failures else 0)
