#!/usr/bin/env python3
"""Golden tests: translate each .tl and compare the outputs with the files beside it.

A test is DIR/NAME.tl with the expected NAME.cu, NAME.host.cpp and NAME.h next
to it (files under directories named "inputs" are imported helpers, not tests).
Header lines at the top of the .tl steer the test:

  // ARGS: ...          extra tilet flags
  // SOURCE: path       translate that file (relative to the test's directory)
                        instead of this one: several goldens of one program
  // GOLDEN: explain    compare `--explain` output instead of the files: the
                        expected NAME.explain holds tilet's stderr followed by
                        a line "exit status: N" (decisions are explained even
                        when code generation for them reports an error)

A missing expected file is a failure. On a mismatch the unified diff is printed and the actual
output is kept under ACTUAL_DIR.

usage: golden.py TILET DIR [DIR...] [--actual-dir PATH] [--update] [--filter SUBSTRING]

--update (or TILET_UPDATE_GOLDEN=1) rewrites the expected files instead of
comparing; scripts/update-golden calls it. CI never sets it.
"""
import argparse
import difflib
import os
import shlex
import subprocess
import sys
import tempfile

OUTPUTS = (".cu", ".host.cpp", ".h")


def header_of(tl_path):
    """The (extra flags, golden kind) the .tl's leading header comments give."""
    args, kind, source = [], "files", None
    with open(tl_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("// ARGS:"):
                args = shlex.split(line[len("// ARGS:"):])
            elif line.startswith("// SOURCE:"):
                source = line[len("// SOURCE:"):].strip()
            elif line.startswith("// GOLDEN:"):
                kind = line[len("// GOLDEN:"):].strip()
            else:
                break
    if kind not in ("files", "explain"):
        raise SystemExit(f"{tl_path}: unknown golden kind '{kind}' (files or explain)")
    return args, kind, source


def compare(expected_path, actual, update, tl_path, name_ext, shown, directory, test_root, actual_root):
    """Compares one expected file with the actual text (or rewrites it); returns problems."""
    if update:
        old = None
        if os.path.exists(expected_path):
            with open(expected_path, encoding="utf-8") as f:
                old = f.read()
        if old != actual:
            with open(expected_path, "w", encoding="utf-8") as f:
                f.write(actual)
            print(f"updated: {expected_path}")
        return []
    if not os.path.exists(expected_path):
        return [f"FAIL {tl_path}: missing expected file {expected_path} (run scripts/update-golden)"]
    with open(expected_path, encoding="utf-8") as f:
        expected = f.read()
    if expected == actual:
        return []
    keep = os.path.join(actual_root, os.path.basename(os.path.abspath(test_root)),
                        os.path.relpath(directory, test_root), name_ext)
    os.makedirs(os.path.dirname(keep), exist_ok=True)
    with open(keep, "w", encoding="utf-8") as f:
        f.write(actual)
    diff = list(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                     fromfile=expected_path, tofile=keep))
    shown_diff = "".join(diff[:80])
    if len(diff) > 80:
        shown_diff += f"... ({len(diff) - 80} more diff lines)\n"
    name = name_ext.split(".")[0]
    return [f"FAIL {tl_path}: {name_ext} differs\n  cd {directory} && {shown}\n{shown_diff}"
            f"  actual output kept at {keep}; if the change is intended: scripts/update-golden {name}"]


def run_one(tilet, tl_path, test_root, actual_root, update):
    directory, filename = os.path.split(tl_path)
    name = filename[:-3]
    args, kind, source = header_of(tl_path)
    with tempfile.TemporaryDirectory() as tmp:
        out_cu = os.path.join(tmp, name + ".cu")
        cmd = [tilet, source or filename, "-o", out_cu, "--color=never"] + args
        if kind == "explain":
            cmd.append("--explain")
        proc = subprocess.run(cmd, cwd=directory or ".", capture_output=True, text=True)
        shown = " ".join(shlex.quote(c) for c in cmd)
        context = (shown, directory, test_root, actual_root)
        if kind == "explain":
            actual = proc.stderr + f"exit status: {proc.returncode}\n"
            return compare(os.path.join(directory, name + ".explain"), actual, update, tl_path, name + ".explain", *context)
        if proc.returncode != 0:
            return [f"FAIL {tl_path}: tilet exited {proc.returncode}\n  cd {directory} && {shown}\n{proc.stderr}"]
        problems = []
        for ext in OUTPUTS:
            with open(os.path.join(tmp, name + ext), encoding="utf-8") as f:
                actual = f.read()
            problems += compare(os.path.join(directory, name + ext), actual, update, tl_path, name + ext, *context)
        return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tilet")
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--actual-dir", default="golden-actual")
    parser.add_argument("--update", action="store_true")
    parser.add_argument("--filter", default="")
    opts = parser.parse_args()
    update = opts.update or os.environ.get("TILET_UPDATE_GOLDEN") == "1"
    if update and os.environ.get("CI") == "true":
        print("golden: refusing to update expected files under CI", file=sys.stderr)
        return 1
    tilet = os.path.abspath(opts.tilet)
    actual_root = os.path.abspath(opts.actual_dir)
    tests = []
    for d in opts.dirs:
        for root, dirs, files in os.walk(d):
            dirs[:] = [x for x in dirs if x != "inputs"]   # imported helpers, not tests
            for fname in files:
                if fname.endswith(".tl") and opts.filter in os.path.join(root, fname):
                    tests.append((os.path.join(root, fname), d))
    tests.sort()
    if not tests:
        print("golden: no tests found", file=sys.stderr)
        return 1
    failures = []
    for t, root in tests:
        failures.extend(run_one(tilet, t, root, actual_root, update))
    for f in failures:
        print(f)
    print(f"golden: {len(tests)} test(s), {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
