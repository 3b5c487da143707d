#!/usr/bin/env python3
"""No input may crash tilet or make it slow: the shapes that used to.

1. Deep nesting. The parser, the parse-tree walk, Sema and the IR passes
   recurse once per level, and these inputs overflowed the stack (SIGSEGV):
   6,000 parentheses, 9,000 unary minus, a flat '+' chain of 9,000 terms,
   'max(' 5,000 deep, 8,000 nested ternaries, 10,000 nested ifs, 5,000
   nested fors, an 'else if' chain and a block of thousands of lets. Each
   must now stop with exit status 1 and the one located nesting error, at the
   token where the depth passes --max-nesting (default 256); just under the
   limit the same shapes must translate.

2. Imports nest at most 200 files deep (loading recurses once per file).

3. Error recovery. Unclosed brackets made ANTLR's recovery quadratic (3,000
   unclosed '(' took 8-17 s). Unclosed brackets, up to 100 kB of them, and
   100 kB of random tokens must each be answered within a generous hang
   guard (scripts/bench-recovery measures the real times).

Every run must also write nothing and never report an internal error.

usage: robustness.py TILET
"""
import os
import random
import re
import subprocess
import sys
import tempfile
import time

LIMIT = 256
HANG_GUARD_S = 5.0
K = b"kernel k(A: f32[128], B: f32[128]) grid(1) threads(128) {\n"


def nth(text, token, n, offset=0):
    """(line, column) of the n-th (1-based) occurrence of `token` in text, plus `offset` bytes."""
    pos = -1
    for _ in range(n):
        pos = text.index(token, pos + 1)
    pos += offset
    line = text.count(b"\n", 0, pos) + 1
    col = pos - (text.rfind(b"\n", 0, pos) + 1) + 1
    return line, col


def deep_cases(depth):
    """name -> (text, expected error or None): the error is (message, token, n, offset), the first place where the
    depth passes the limit being the n-th occurrence of `token` (plus `offset` bytes)."""
    over = depth > LIMIT
    cases = {
        "sum": (K + b"A[0] = " + b" + ".join([b"1.0"] * depth) + b";\n}\n",
                ("expression nesting level", b"+", LIMIT, 0)),   # the kernel body is level 1
        "const_sum": (b"const X = " + b"+".join([b"1"] * depth) + b";\n" + K + b"}\n",
                      ("expression nesting level", b"+", LIMIT + 1, 0)),
        "paren": (b"const X = " + b"(" * depth + b"1" + b")" * depth + b";\n" + K + b"}\n",
                  ("bracket nesting level", b"(", LIMIT + 1, 0)),
        "unary": (b"const X = " + b"-" * depth + b"1;\n" + K + b"}\n",
                  ("expression nesting level", b"-", LIMIT + 1, 0)),
        "ternary": (b"const X = " + b"true ? " * depth + b"1" + b" : 2" * depth + b";\n" + K + b"}\n",
                    ("expression nesting level", b"?", LIMIT + 1, 0)),
        "if": (K + b"if (true) {" * depth + b"}" * depth + b"\n}\n",
               # the body is level 1, the k-th if's '(' and '{' level k + 1: its '(' passes first
               ("bracket nesting level", b"if (", LIMIT, 3)),
        "for": (K + b"".join(b"for i%d in serial(1) {" % k for k in range(depth)) + b"}" * depth + b"\n}\n",
                ("bracket nesting level", b"serial(", LIMIT, 6)),
        "max": (b"const X = " + b"max(" * depth + b"1" + b", 1)" * depth + b";\n" + K + b"}\n",
                ("bracket nesting level", b"max(", LIMIT + 1, 3)),
        "else_if": (K + b"if (true) {}" + b" else if (true) {}" * depth + b"\n}\n",
                    # the k-th else is level k + 1 and its '(' one more
                    ("bracket nesting level", b"else if (", LIMIT - 1, 8)),
        "lets": (K + b"".join(b"let v%d = %d;\n" % (k, k) for k in range(depth)) + b"A[0] = 1.0;\n}\n",
                 ("statement nesting level", b"let", LIMIT, 0)),
    }
    return {name: (text, expected if over else None) for name, (text, expected) in cases.items()}


def run(tilet, text, args=()):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "deep.tl")
        with open(path, "wb") as f:
            f.write(text)
        start = time.monotonic()
        try:
            p = subprocess.run([tilet, "deep.tl", "-o", "out.cu", "--color=never", *args], cwd=tmp, capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            return None, "", 60.0, []
        seconds = time.monotonic() - start
        left = sorted(set(os.listdir(tmp)) - {"deep.tl"})
    return p.returncode, p.stderr.decode("utf-8", "replace"), seconds, left


def errors_of(stderr):
    return re.findall(r"^deep\.tl:(\d+):(\d+): error: (.*)$", stderr, re.M)


def check_deep(tilet, failures):
    for depth in (LIMIT - 10, LIMIT + 2, 6000, 10000):
        for name, (text, expected) in deep_cases(depth).items():
            status, stderr, _, left = run(tilet, text)
            what = f"{name} at depth {depth}"
            if status is None:
                failures.append(f"{what}: timed out")
                continue
            if status not in (0, 1) or "internal compiler error" in stderr:
                failures.append(f"{what}: exit status {status}\n{stderr[-2000:]}")
                continue
            if expected is None:
                if status != 0:
                    failures.append(f"{what}: expected a translation under the limit, got exit {status}\n{stderr[-2000:]}")
                continue
            message, token, n, offset = expected
            line, col = nth(text, token, n, offset)
            want = [(str(line), str(col), f"{message} exceeded maximum of {LIMIT}")]
            got = errors_of(stderr)
            if status != 1 or got != want or left:
                failures.append(f"{what}: expected exit 1 and {want}, nothing written; got exit {status}, {got}, wrote {left}\n"
                                f"{stderr[-2000:]}")
    # The limit moves with --max-nesting.
    text = deep_cases(LIMIT + 50)["paren"][0]
    status, stderr, _, _ = run(tilet, text, ["--max-nesting=400"])
    if status != 0:
        failures.append(f"paren at depth {LIMIT + 50} with --max-nesting=400: exit {status}\n{stderr[-2000:]}")


def check_recovery(tilet, failures):
    rng = random.Random(20261129)
    words = [b"(", b")", b"[", b"]", b"{", b"}", b";", b",", b"=", b"+", b"*", b"?", b":", b"let", b"for", b"if", b"else",
             b"kernel", b"copy", b"parallel", b"A", b"x", b"1", b"2.5", b"f32", b"grid", b"threads", b"alloc_shared"]
    garbage = b" ".join(rng.choice(words) for _ in range(40000))[:100000]
    cases = {
        "unclosed_parens_3000": (b"const X = " + b"(" * 3000 + b"\n", []),
        "unclosed_brackets_3000": (b"const X = " + b"[" * 3000 + b"\n", []),
        "unclosed_ifs_2500": (K + b"if (true) {" * 2500 + b"\n", []),
        "unclosed_parens_4000_deep_limit": (b"const X = " + b"(" * 4000 + b"\n", ["--max-nesting=4096"]),
        "unclosed_parens_100kB": (b"const X = " + b"(" * 100000 + b"\n", []),
        "garbage_100kB": (garbage, []),
        "garbage_100kB_all_errors": (garbage, ["--max-errors=0"]),
    }
    for name, (text, args) in cases.items():
        status, stderr, seconds, left = run(tilet, text, args)
        if status is None or seconds > HANG_GUARD_S:
            failures.append(f"{name}: took {seconds:.1f} s (the guard is {HANG_GUARD_S} s)")
        elif status != 1 or "internal compiler error" in stderr or left or not errors_of(stderr):
            failures.append(f"{name}: expected exit 1 with located errors and nothing written; got exit {status}, wrote {left}\n"
                            f"{stderr[-2000:]}")
        else:
            print(f"{name}: {seconds:.2f} s")


def check_imports(tilet, failures):
    """A chain of 250 files, each importing the next: loading recurses once per file."""
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(1, 251):
            with open(os.path.join(tmp, f"f{k}.tl"), "w") as f:
                f.write(f'import "f{k + 1}.tl";\nconst C{k} = {k};\n' if k < 250 else "const C250 = 250;\n")
        with open(os.path.join(tmp, "main.tl"), "w") as f:
            f.write('import "f1.tl";\n' + K.decode() + "    A[0] = cast(C1, f32);\n}\n")
        p = subprocess.run([tilet, "main.tl", "-o", "out.cu", "--color=never"], cwd=tmp, capture_output=True, timeout=60)
        got = re.findall(r"^(\S+):(\d+):(\d+): error: (.*)$", p.stderr.decode("utf-8", "replace"), re.M)
        want = [("f199.tl", "1", "8", "imports nested too deeply (more than 200 files)")]
        if p.returncode != 1 or got != want or os.path.exists(os.path.join(tmp, "out.cu")):
            failures.append(f"import chain: expected exit 1 and {want}; got exit {p.returncode}, {got}")


def main():
    tilet = os.path.abspath(sys.argv[1])
    failures = []
    check_deep(tilet, failures)
    check_imports(tilet, failures)
    check_recovery(tilet, failures)
    for f in failures:
        print("FAIL " + f)
    print(f"robustness: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
