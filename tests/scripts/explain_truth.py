#!/usr/bin/env python3
"""--explain tells the truth: every instruction a remark names is in the
generated .cu, and every instruction of these kinds the .cu uses is named by
some remark (the lowering decision behind it is explained).

usage: explain_truth.py TILET PATH...

A PATH is a .tl file or a directory searched for them; files with EXPECT
lines (errors), explain goldens and goldens of another file (SOURCE) are
left out. Each file is translated for its own target and for sm_80 and
sm_100a (where it translates there: the choices differ most between them).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402

# What a remark names (in a decision's choice: what was chosen), and the code
# that instruction is in the .cu. A chosen instruction must be in the kernels;
# an instruction in the kernels must be named by some remark (its choice, why
# or details), unless the program wrote it itself (`user`).
INSTRUCTIONS = [
    # name (a regex in remarks), regex in the kernels, also required the other
    # way (True, or the builtin that writes the instruction by hand: then
    # required unless the program calls it)
    # (the program may fence itself: fence_proxy_async)
    (r"fence\.proxy\.async", r"tilet_fence_proxy_async\(\);", "fence_proxy_async("),
    (r"cp\.async(?!\.bulk)|CPAsync", r"tilet_cp_async_(?:\d|zfill)", True),
    (r"ldmatrix", r"tilet_ldmatrix", True),
    (r"stmatrix|\bSTSM\b", r"tilet_stmatrix", True),
    # (a byte from two f4e2m1 registers, or the high one from a byte)
    (r"\bPackedBytes\b", r"tilet_bitcast<unsigned char, __nv_fp4_e2m1>\([^;\n]*<< 4\)|tilet_bitcast<__nv_fp4_e2m1, unsigned char>\([^;\n]*>> 4\) & 15\)\)", True),
    (r"mma\.sync|\bMMA\b", r"tilet_mma_m", True),
    (r"wgmma|WGMMA", r"tilet_wgmma_m", True),
    (r"\bTMA\b|BulkLoad\b|BulkStore\b", r"tilet_tma_(?:load|store|reduce_add)", True),
    (r"cp\.async\.bulk\b", r"tilet_bulk_(?:load|store)", True),
    (r"tcgen05\.mma", r"tilet_tcgen05_mma_", True),
    (r"\bTS form\b", r"tilet_tcgen05_mma_\w+_ts\(", True),
    (r"tcgen05\.cp\b", r"tilet_tcgen05_cp_", True),
    (r"tcgen05\.ld\b", r"tilet_tmem_load_", True),
    (r"tcgen05\.st\b", r"tilet_tmem_store_", True),
    (r"bar\.arrive", r"tilet_issue_turn_pass\(", True),
    # (the program may set registers itself: set_max_nreg)
    (r"(?<!no )setmaxnreg", r"tilet_setmaxnreg_(?:inc|dec)<", "set_max_nreg("),
]


def kernel_code(cu):
    # The kernels, without the helper definitions (which name every instruction they wrap).
    return cu[cu.find('extern "C" __global__'):] if 'extern "C" __global__' in cu else ""


def inputs(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            # Ported TileLang examples that do not translate yet (docs/tilelang-ports.md).
            dirs[:] = sorted(d for d in dirs if d != "pending")
            for name in sorted(files):
                if not name.endswith(".tl"):
                    continue
                full = os.path.join(root, name)
                with open(full, errors="replace") as f:
                    head = f.read(4000)
                # Error tests, explain goldens, goldens of another file, imported files.
                if re.search(r"// (EXPECT|GOLDEN: explain|SOURCE:)", head) or not re.search(r"^kernel ", head, re.M):
                    continue
                yield full


tilet = os.path.abspath(sys.argv[1])
for tl, arch in ((tl, arch) for tl in inputs(sys.argv[2:]) for arch in (None, "sm_80", "sm_100a")):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.cu")
        p = subprocess.run([tilet, tl, "-o", out, "--explain=json"] + (["--arch", arch] if arch else []), capture_output=True, text=True)
        if p.returncode != 0:
            expect(arch is not None, f"{tl}: tilet failed", p.stderr)   # not every program fits every target
            continue
        with open(tl) as f:
            source = f.read()
        tl = f"{tl} [{arch}]" if arch else tl
        with open(out) as f:
            cu = f.read()
        body = kernel_code(cu)
        decisions = [json.loads(line) for line in p.stderr.splitlines() if line.startswith("{")]
        chosen = "\n".join(d["op"] + ": " + d["choice"] for d in decisions)
        said = "\n".join(" ".join([d["op"], d["choice"], d["why"]] + d["details"]) for d in decisions)
        for words, code, reverse in INSTRUCTIONS:
            used = re.search(code, body) is not None
            expect(not re.search(words, chosen) or used, f"{tl}: a remark chooses {words}, the kernels have no {code}", chosen)
            if reverse is True or (reverse and reverse not in source):
                expect(not used or re.search(words, said), f"{tl}: the kernels use {code}, no remark names {words}")
        # Each barrier a remark names is in the kernels.
        for d in decisions:
            if d["op"] != "barrier":
                continue
            m = re.match(r"bar\.sync (\d+), (\d+)", d["choice"])
            code = (f"tilet_named_barrier({m.group(1)}, {m.group(2)});" if m
                    else "__syncwarp();" if d["choice"].startswith("__syncwarp()")
                    else "__syncthreads();" if d["choice"].startswith("__syncthreads()") else None)
            expect(code is not None, f"{tl}:{d['line']}:{d['column']}: a barrier remark names {d['choice']}, which this check does not know")
            if code is None:
                continue
            expect(code in body, f"{tl}:{d['line']}:{d['column']}: a remark names {d['choice']}, the kernels have no {code}")
finish("explain-truth")
