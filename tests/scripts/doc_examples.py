#!/usr/bin/env python3
"""Every ```tl block of the given Markdown files is a complete program that
tilet checks without errors (--emit=ir: parsing and semantic checks, no code
generation, so constructs of later milestones are checked too).

usage: doc_examples.py TILET FILE.md...
"""
import os
import re
import subprocess
import sys
import tempfile

tilet = os.path.abspath(sys.argv[1])
failures = blocks = 0
for doc in sys.argv[2:]:
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    for m in re.finditer(r"^```tl\n(.*?)^```", text, re.M | re.S):
        blocks += 1
        line = text.count("\n", 0, m.start()) + 2
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "example.tl")
            with open(path, "w", encoding="utf-8") as f:
                f.write(m.group(1))
            p = subprocess.run([tilet, path, "--emit=ir", "--color=never"], capture_output=True, text=True)
        if p.returncode != 0:
            failures += 1
            print(f"FAIL {doc}:{line}: the example does not check\n{p.stderr}")
print(f"doc examples: {blocks} block(s), {failures} failure(s)")
sys.exit(1 if failures or not blocks else 0)
