"""Translating tile programs with tilet and running them on the CPU emulator
(templates/emu/emu.h), many programs per g++ compile.

Each program is translated on its own (a rejection concerns that program
only), prepared by tests/emu/prepare.py exactly as the emu suite prepares its
kernels, and placed in a namespace of one batch file; a generated main()
runs one program per process (so a crash or a hang is that program's) on
an arena of device memory read from a file and written back after the
launch. g++ compiles several batches at once.
"""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import tldtypes

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EMU_DIR = os.path.join(ROOT, "tests", "emu")
EMU_HEADERS = os.path.join(ROOT, "templates", "emu")   # emu.h and the race detector, which tilet --cpu embeds
PREPARE = os.path.join(EMU_DIR, "prepare.py")
ALIGN = 256      # tensors start 256-byte aligned, like cudaMalloc's
GUARD = 64       # canary bytes after each tensor: a write past the end changes them
CANARY = 0xCD


class Translation:
    """What tilet did with one program: status is ok, reject (exit 1: an
    error in the input), internal (exit 70: a tilet bug) or crash."""

    def __init__(self, status, message="", files=None, ast=""):
        self.status, self.message, self.files, self.ast = status, message, files or {}, ast


def translate(tilet, tl_path, arch, out_base, timeout=60, flags=()):
    """Runs tilet twice: --emit=ast for the interpreter, then the CUDA
    (`flags`, such as -D NAME=VALUE, go to both)."""
    try:
        ast = subprocess.run([tilet, tl_path, "--emit=ast", "--color=never"] + list(flags), capture_output=True, text=True,
                             timeout=timeout)
        if ast.returncode != 0:
            return Translation(_status(ast.returncode), ast.stderr)
        r = subprocess.run([tilet, tl_path, "--arch", arch, "-o", out_base + ".cu", "--color=never"] + list(flags),
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Translation("crash", "tilet timed out")
    if r.returncode != 0:
        return Translation(_status(r.returncode), r.stderr, ast=ast.stdout)
    return Translation("ok", r.stderr, {"cu": out_base + ".cu", "host": out_base + ".host.cpp", "h": out_base + ".h"},
                       ast.stdout)


def _status(rc):
    return "reject" if rc == 1 else "internal" if rc == 70 else "crash"


_DECL = re.compile(r"cudaError_t (\w+)\(([^)]*)\);")


def launch_params(header, kernel):
    """[(C type, name)] of kernel's launch function, from the generated .h."""
    with open(header) as f:
        for m in _DECL.finditer(f.read()):
            if m.group(1) == kernel:
                out = []
                for p in m.group(2).split(","):
                    p = p.strip()
                    ctype, name = p.rsplit(" ", 1)
                    while name.startswith("*"):
                        ctype, name = ctype + "*", name[1:]
                    out.append((ctype.strip(), name))
                return out
    raise KeyError(kernel)


class Layout:
    """Where each tensor of a launch lies in the arena."""

    def __init__(self, tensors):
        # tensors: [(name, dtype, element count)]
        self.offsets, at = {}, 0
        for name, dtype, n in tensors:
            at = (at + ALIGN - 1) // ALIGN * ALIGN
            self.offsets[name] = (at, dtype, n)
            at += tldtypes.bytes_of(dtype, n) + GUARD
        self.size = (at + ALIGN - 1) // ALIGN * ALIGN

    def pack(self, values):
        arena = bytearray([CANARY]) * self.size
        for name, (at, dtype, n) in self.offsets.items():
            data = tldtypes.to_bytes(values[name], dtype)
            arena[at:at + len(data)] = data
        return bytes(arena)

    def unpack(self, arena):
        """Tensor values, and the tensors whose guard bytes changed."""
        out, overrun = {}, []
        for name, (at, dtype, n) in self.offsets.items():
            nbytes = tldtypes.bytes_of(dtype, n)
            out[name] = tldtypes.from_bytes(arena[at:at + nbytes], dtype, n)
            if any(b != CANARY for b in arena[at + nbytes:at + nbytes + GUARD]):
                overrun.append(name)
        return out, overrun


def glue(index, namespace, kernel, params, layout, scalars, dyn):
    """C++ that launches one program on the arena."""
    args = []
    for ctype, name in params:
        if ctype == "cudaStream_t":
            args.append("nullptr")
        elif name in layout.offsets:
            args.append(f"reinterpret_cast<{ctype}>(arena + {layout.offsets[name][0]})")
        elif name in scalars:
            v = scalars[name]
            args.append(f"static_cast<{ctype}>({float(v)!r})" if isinstance(v, float) else f"static_cast<{ctype}>({v})")
        elif name in dyn:
            args.append(str(dyn[name]))
        else:
            raise KeyError(f"launch parameter {name} of {kernel}")
    return (f"static int run{index}(unsigned char *arena) {{\n"
            f"    return static_cast<int>({namespace}::{kernel}({', '.join(args)}));\n}}\n")


MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
// usage: BATCH INDEX IN OUT -- runs program INDEX on the arena in IN, writes it to OUT.
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int which = std::atoi(argv[1]);
    FILE *in = std::fopen(argv[2], "rb");
    if (!in) return 2;
    std::vector<unsigned char> bytes;
    unsigned char chunk[65536];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, in)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
    std::fclose(in);
    void *mem = nullptr;
    if (posix_memalign(&mem, 256, bytes.size() + 256) != 0) return 2;
    unsigned char *arena = static_cast<unsigned char *>(mem);
    std::copy(bytes.begin(), bytes.end(), arena);
    if (which < 0 || which >= int(sizeof(programs) / sizeof(programs[0]))) return 2;
    int rc = programs[which](arena);
    FILE *out = std::fopen(argv[3], "wb");
    std::fwrite(arena, 1, bytes.size(), out);
    std::fclose(out);
    return rc == 0 ? 0 : 3;
}
"""


def prepare(files, out):
    subprocess.run([sys.executable, PREPARE, files["cu"], files["host"], out], check=True)
    with open(out) as f:
        return f.read()


def batch_source(entries):
    """entries: [(namespace, prepared text, glue code)] -> one C++ file."""
    parts = ['#include "emu.h"', "#include <atomic>", "#include <cstdarg>", "#include <cstdint>", "#include <cstdio>", "#include <cstring>", "#include <mutex>"]
    global last_ranges
    last_ranges = []
    line = len(parts) + 1
    for ns, text, _ in entries:
        # Headers are already in (emu.h includes the CUDA ones); the launch
        # code's own #include of its .h is dropped, its declarations being
        # the definitions that follow.
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#include"))
        # C linkage would make same-named kernels of two programs one function.
        body = body.replace('extern "C" ', "")
        part = f"namespace {ns} {{\n{body}\n}} // namespace {ns}"
        n = part.count("\n") + 1
        last_ranges.append((ns, line, line + n - 1))
        line += n
        parts.append(part)
    for ns, _, g in entries:
        parts.append(g)
    parts.append("static int (*const programs[])(unsigned char *) = {" + ", ".join(f"run{i}" for i in range(len(entries))) + "};")
    parts.append(MAIN)
    return "\n".join(parts) + "\n"


last_ranges = []   # (namespace, first line, last line) of the last batch_source


def culprits(stderr, ranges):
    """The namespaces whose lines g++'s errors point at."""
    bad = set()
    for m in re.finditer(r"\.cpp:(\d+):\d+: error", stderr):
        at = int(m.group(1))
        for ns, a, b in ranges:
            if a <= at <= b:
                bad.add(ns)
    return bad


def cuda_include():
    for d in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda", "/usr"):
        if d and os.path.exists(os.path.join(d, "include", "cuda_fp16.h")):
            return os.path.join(d, "include"), os.path.join(d, "lib64")
    return None, None


def compile_batch(source_path, exe, timeout=900):
    inc, lib = cuda_include()
    cmd = ["g++", "-std=c++20", "-O1", "-fno-strict-aliasing", "-w", "-I", EMU_DIR, "-I", EMU_HEADERS, "-I", inc, source_path, "-o", exe,
           "-pthread"]
    if lib and os.path.exists(os.path.join(lib, "libcudart.so")):
        cmd += ["-L", lib, "-Wl,-rpath," + lib, "-lcudart"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r.returncode == 0, r.stderr


def run_program(exe, index, arena, workdir, timeout):
    """(status, arena after): status ok, crash (with the exit status) or hang."""
    tag = os.path.basename(exe)
    src = os.path.join(workdir, f"{tag}_in{index}.bin")
    dst = os.path.join(workdir, f"{tag}_out{index}.bin")
    with open(src, "wb") as f:
        f.write(arena)
    try:
        r = subprocess.run([exe, str(index), src, dst], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", None, f"no exit within {timeout} s"
    if r.returncode != 0 or not os.path.exists(dst):
        return "crash", None, f"exit status {r.returncode}\n{r.stderr[-2000:]}"
    with open(dst, "rb") as f:
        out = f.read()
    os.remove(src)
    os.remove(dst)
    return "ok", out, r.stderr[-2000:]


def parallel_map(fn, items, jobs):
    if jobs <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return list(ex.map(fn, items))
