#!/usr/bin/env python3
"""nvcc tier: every expected .cu compiles for its architecture without
register spills, and every .host.cpp compiles with g++ and links with its
kernel object and cudart.

The architecture comes from the file's own "// Build: nvcc -gencode ..." line.
Architectures this CUDA toolkit no longer supports (sm_70 in CUDA 13) are
reported and skipped. Exit 77 (meson: skipped) when nvcc is not installed.

usage: nvcc_check.py DIR [DIR...]
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")


def find_nvcc():
    env = os.environ.get("NVCC")
    if env:
        return env
    candidate = os.path.join(CUDA, "bin", "nvcc")
    if os.access(candidate, os.X_OK):
        return candidate
    return shutil.which("nvcc")


def supported_arches(nvcc):
    out = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True).stdout
    return set(re.findall(r"compute_(\w+)", out))


def compile_cu(nvcc, arches, cu_path, obj, extra=(), device_only=False):
    """Compiles a generated .cu for the architectures of its own "// Build:"
    line (every -gencode of a multi-architecture file) with ptxas -v. Returns
    (status, detail, spill_stores): status "ok" (detail: the log), "skip" (the
    toolkit lacks an architecture) or "fail".

    device_only compiles a one-architecture file to a cubin: the device code
    and ptxas' report without the host pass (cudafe++ and the host compiler),
    which is about two thirds of nvcc's time. The host pass sees only the
    printer's kernel stubs, which the full compiles of the goldens and the
    examples check."""
    with open(cu_path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^// Build: nvcc (.*) -c \S+$", text, re.M)
    gencodes = re.findall(r"-gencode (\S+)", m.group(1)) if m else []
    if not gencodes:
        return "fail", "no '// Build:' line", 0
    flags = []
    for gencode in gencodes:
        arch = re.search(r"arch=compute_(\w+),", gencode).group(1)
        if re.sub(r"[a-z]+$", "", arch) not in arches:   # the list names compute_90, not compute_90a
            return "skip", f"this CUDA toolkit does not support compute_{arch}", 0
        flags += ["-gencode", gencode]
    mode = "-cubin" if device_only and len(gencodes) == 1 else "-c"
    proc = subprocess.run([nvcc, *flags, mode, cu_path, "-o", obj, "-Xptxas", "-v"] + list(extra),
                          capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        return "fail", "nvcc failed\n" + log, 0
    # A ptxas warning is a silent loss: "setmaxnreg ignored; unable to
    # determine register count at entry", wgmma serialized, and the like.
    # So is ptxas' C7519 remark (an "info" line): it found registers of an
    # in-flight wgmma touched and serialized the wgmmas with an injected
    # warpgroup.arrive (pin-wgmma-registers is what prevents it).
    warnings = re.findall(r"^ptxas (?:warning.*|info.*\(C7519\).*)$", log, re.M)
    if warnings:
        return "fail", "ptxas warned\n" + "\n".join(warnings), 0
    spills = [int(s) for s in re.findall(r"(\d+) bytes spill stores, \d+ bytes spill loads", log)]
    return "ok", log, max(spills, default=0)


def local_memory_kernels(log):
    """Kernels of a ptxas -v log whose stack frame holds more than their
    spills: a register array indexed by a value the compiler cannot resolve
    at compile time lives in local memory (off-chip, cached), as slow as a
    spill. Returns {kernel: bytes beyond the spills}."""
    out, kernel = {}, None
    for line in log.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?(\w+)'?", line)
        if m:
            kernel = m.group(1)
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)
        if not m or not kernel:
            continue
        frame, spilled = int(m.group(1)), int(m.group(2))
        # A frame with spills is rounded up to 16 bytes.
        if frame > (spilled + 15) // 16 * 16:
            out[kernel] = frame - spilled
    return out


def check(nvcc, arches, cu_path, tmp):
    base = os.path.join(tmp, re.sub(r"[^A-Za-z0-9_.]", "_", os.path.abspath(cu_path))[:-3])
    obj = base + ".cu.o"
    status, detail, spilled = compile_cu(nvcc, arches, cu_path, obj, ["-Werror", "all-warnings", "-Xcompiler", "-fPIC"])
    if status == "skip":
        return [], [f"skip {cu_path}: {detail}"]
    if status == "fail":
        return [f"FAIL {cu_path}: {detail}"], []
    problems = []
    if spilled:
        problems.append(f"FAIL {cu_path}: register spills ({spilled} bytes stored)\n{detail}")
    for kernel, extra in sorted(local_memory_kernels(detail).items()):
        problems.append(f"FAIL {cu_path}: {kernel} keeps {extra} bytes of registers in local memory (an index not known at compile time)")
    header = cu_path[:-3] + ".h"
    if os.path.exists(header):
        # The launch header is C as well as C++.
        c_src = base + ".include.c"
        with open(c_src, "w") as f:
            f.write(f'#include "{os.path.abspath(header)}"\n')
        p = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", os.path.join(CUDA, "include"), c_src],
                           capture_output=True, text=True)
        if p.returncode != 0:
            problems.append(f"FAIL {header}: not valid C (gcc -std=c99)\n{p.stdout}{p.stderr}")
    host = cu_path[:-3] + ".host.cpp"
    if os.path.exists(host):
        hobj = base + ".host.o"
        p = subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fPIC", "-I", os.path.join(CUDA, "include"),
                            "-I", os.path.dirname(cu_path) or ".", "-c", host, "-o", hobj], capture_output=True, text=True)
        if p.returncode != 0:
            problems.append(f"FAIL {host}: g++ failed\n{p.stdout}{p.stderr}")
        else:
            main_src = base + ".main.cpp"
            with open(main_src, "w") as f:
                f.write("int main() { return 0; }\n")
            exe = base + ".exe"
            p = subprocess.run(["g++", main_src, hobj, obj, "-L", os.path.join(CUDA, "lib64"), "-lcudart", "-o", exe],
                               capture_output=True, text=True)
            if p.returncode != 0:
                problems.append(f"FAIL {host}: link with cudart failed\n{p.stdout}{p.stderr}")
    return problems, []


def run_all(task, items):
    """Runs task(item, scratch_dir) -> (problems, notes) for every item on all
    cores, in order, and prints the notes, then the problems."""
    problems, notes = [], []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for p, n in pool.map(lambda item: task(item, tmp), items):
            problems += p
            notes += n
    for n in notes:
        print(n)
    for p in problems:
        print(p)
    return problems, notes


def main():
    nvcc = find_nvcc()
    if not nvcc:
        print("nvcc not found: skipping the nvcc tier")
        return 77
    arches = supported_arches(nvcc)
    files = []
    for d in sys.argv[1:]:
        for root, _, names in os.walk(d):
            files += [os.path.join(root, n) for n in names if n.endswith(".cu")]
    files.sort()
    problems, notes = run_all(lambda f, tmp: check(nvcc, arches, f, tmp), files)
    print(f"nvcc: {len(files)} file(s), {len(problems)} problem(s), {len(notes)} skipped")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
