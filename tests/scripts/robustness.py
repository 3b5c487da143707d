#!/usr/bin/env python3
"""No input may crash tilet: mutated versions of real programs must end with
exit status 0 or 1 -- never an internal error (70), a signal, or a hang.

Mutations are deterministic (fixed seed): deleting, duplicating and swapping
tokens and lines, truncating, changing numbers to 0, -1 or huge values, and
inserting stray bytes. A failing input is written out for reproduction.

usage: robustness.py TILET OUT_DIR FILE.tl... [--count N]
"""
import os
import random
import re
import subprocess
import sys

TOKEN = re.compile(rb"\s+|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|\S")
NUMBERS = [b"0", b"-1", b"1", b"3", b"65536", b"2147483648", b"99999999999999999999", b"0.5", b"1e40"]
STRAY = [b"{", b"}", b"(", b")", b"[", b"]", b";", b",", b"=", b"@", b"\x00", b"\xff", b"/*", b"\"", b"let", b"for",
         b"parallel", b"copy", b"gemm", b"f16", b"kernel", b"ws(0)", b"import \"x.tl\";", b"::", b"?"]


def mutate(rng, text):
    tokens = TOKEN.findall(text)
    kind = rng.randrange(8)
    if not tokens:
        return text
    i = rng.randrange(len(tokens))
    if kind == 0:
        del tokens[i]
    elif kind == 1:
        tokens.insert(i, tokens[rng.randrange(len(tokens))])
    elif kind == 2:
        j = rng.randrange(len(tokens))
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif kind == 3:
        nums = [k for k, t in enumerate(tokens) if t[:1].isdigit()]
        if nums:
            tokens[rng.choice(nums)] = rng.choice(NUMBERS)
    elif kind == 4:
        return b"".join(tokens)[: rng.randrange(len(text) + 1)]
    elif kind == 5:
        tokens.insert(i, rng.choice(STRAY))
    elif kind == 6:
        lines = b"".join(tokens).split(b"\n")
        j = rng.randrange(len(lines))
        del lines[j]
        return b"\n".join(lines)
    else:
        idents = [k for k, t in enumerate(tokens) if t[:1].isalpha()]
        if idents:
            tokens[rng.choice(idents)] = rng.choice([b"x", b"copy", b"f32", b"N", b"bx", b"shared", b"i"])
    return b"".join(tokens)


def main():
    args = sys.argv[1:]
    count = 400
    if "--count" in args:
        k = args.index("--count")
        count = int(args[k + 1])
        del args[k:k + 2]
    tilet, out_dir, sources = os.path.abspath(args[0]), args[1], args[2:]
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(20261129)
    originals = []
    for s in sources:
        with open(s, "rb") as f:
            originals.append(f.read())
    failures = 0
    work = os.path.join(out_dir, "work")
    os.makedirs(work, exist_ok=True)
    for n in range(count):
        text = rng.choice(originals)
        for _ in range(rng.randrange(1, 4)):
            text = mutate(rng, text)
        path = os.path.join(work, "m.tl")
        with open(path, "wb") as f:
            f.write(text)
        try:
            p = subprocess.run([tilet, "m.tl", "-o", "m.cu", "--color=never", "--explain"], cwd=work, capture_output=True,
                               timeout=20)
            status, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            status, err = "timeout", b""
        if status not in (0, 1) or b"internal compiler error" in err:
            failures += 1
            keep = os.path.join(out_dir, f"crash{n}.tl")
            with open(keep, "wb") as f:
                f.write(text)
            print(f"FAIL mutant {n}: status {status}; input kept at {keep}\n{err.decode(errors='replace')[-1500:]}")
    print(f"robustness: {count} mutant(s), {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
