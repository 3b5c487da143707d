#!/usr/bin/env python3
"""GNU make with tilet's dependency files: a pattern rule translates .tl files
with -MD -MP and includes the .d files.

usage: make_deps.py TILET

Checks: a first make builds everything; a second does nothing; touching an
imported file rebuilds only the files that import it (and reading the
depfile, every output of that file); deleting the import and the imported
file does not break make (the -MP phony rule).
"""
import os
import subprocess
import sys
import tempfile
import time

TILET = os.path.abspath(sys.argv[1])
failures = []
checks = 0


def expect(cond, what, detail=""):
    global checks
    checks += 1
    if not cond:
        failures.append(what + ("\n  " + detail if detail else ""))


MAKEFILE = """\
TILET ?= tilet
all: out/a.cu out/b.cu
out/%.cu: %.tl
\t@mkdir -p out
\t@echo translate $*
\t$(TILET) $< -o $@ -MD -MP
-include out/a.d out/b.d
"""

KERNEL = """kernel {name}(X: f32[N]) grid(1) threads(64) {{
    for i in parallel(N) {{ X[i] = 1.0; }}
}}
"""


def make(tmp):
    p = subprocess.run(["make", "-s", f"TILET={TILET}"], cwd=tmp, capture_output=True, text=True)
    return p.returncode, sorted(l.split()[1] for l in p.stdout.splitlines() if l.startswith("translate ")), p.stdout + p.stderr


def bump(path):
    # make compares modification times: move the file clearly forward.
    later = time.time() + 5
    os.utime(path, (later, later))


with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "Makefile"), "w") as f:
        f.write(MAKEFILE)
    with open(os.path.join(tmp, "sizes.tl"), "w") as f:
        f.write("const N = 64;\n")
    with open(os.path.join(tmp, "a.tl"), "w") as f:
        f.write('import "sizes.tl";\n' + KERNEL.format(name="a"))
    with open(os.path.join(tmp, "b.tl"), "w") as f:
        f.write("const N = 32;\n" + KERNEL.format(name="b"))

    rc, built, log = make(tmp)
    expect(rc == 0 and built == ["a", "b"], "the first make translates both files", log)
    with open(os.path.join(tmp, "out", "a.d")) as f:
        dep = f.read()
    expect(dep.startswith("out/a.cu out/a.host.cpp out/a.h:") and "sizes.tl" in dep and "\nsizes.tl:\n" in dep,
           "a.d names every output, the import, and a phony rule for it", dep)
    rc, built, log = make(tmp)
    expect(rc == 0 and built == [], "a second make translates nothing", log)

    bump(os.path.join(tmp, "sizes.tl"))
    rc, built, log = make(tmp)
    expect(rc == 0 and built == ["a"], "touching the import rebuilds its importer only", log)

    # Drop the import: a.tl defines N itself and sizes.tl goes away.
    with open(os.path.join(tmp, "a.tl"), "w") as f:
        f.write("const N = 64;\n" + KERNEL.format(name="a"))
    bump(os.path.join(tmp, "a.tl"))
    os.remove(os.path.join(tmp, "sizes.tl"))
    rc, built, log = make(tmp)
    expect(rc == 0 and built == ["a"], "deleting an import does not break make (-MP) and rebuilds the former importer", log)
    with open(os.path.join(tmp, "out", "a.d")) as f:
        expect("sizes.tl" not in f.read(), "the new a.d no longer names the deleted import")

for f in failures:
    print("FAIL " + f)
print(f"make_deps: {checks} check(s), {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
