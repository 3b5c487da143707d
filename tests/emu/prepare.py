#!/usr/bin/env python3
"""Makes a generated .cu / .host.cpp pair compilable by g++ against emu.h.

usage: prepare.py KERNEL.cu KERNEL.host.cpp OUT.cpp

The rewrites: the extern __shared__ declaration and the buffers declared
on it become emu::SharedPtr views (every shared-memory access then goes
through the race detector, racecheck.h), reinterpret_casts of shared
elements become emu::sharedCast, cudaLaunchKernelEx becomes emu::launchEx,
the inline-PTX helpers (the block between the "PTX helpers" markers) give
way to emu.h's models of the same instructions, called by the same names,
the inline asm of the program's own CUDA (import_source blocks) becomes
calls of emu.h's models of its instructions (emu::ptx, one single-instruction
asm statement at a time), and every synchronisation statement is wrapped in
`if (emu::keep(__LINE__))`
so that the mutation test can delete it at run time (EMU_DELETE_LINE).
Every line keeps its number, and #line directives make the compiler (and
the detector's reports) name the lines of the .cu. Everything else is
compiled exactly as tilet wrote it.
"""
import os
import re
import sys

HELPERS = re.compile(r"// ---- PTX helpers .*?// ---- end of PTX helpers ----\n", re.S)
# The statements that order threads or proxies: deleting one of them is
# what the mutation test does (tests/scripts/emu_mutations.py).
SYNC = re.compile(r"^(\s*)((?:__syncthreads\(\)|__syncwarp\(\)|tilet_named_barrier\(.*\)|tilet_mbarrier_wait(?:_cluster)?\(.*\)"
                  r"|tilet_mbarrier_arrive(?:_cluster|_expect_tx)?\(.*\)|tilet_fence_proxy_async(?:_all)?\(\)"
                  r"|tilet_fence_barrier_init\(\)|tilet_cluster_sync\(\)|tilet_wgmma_wait<\d+>\(\)"
                  r"|tilet_cp_async_wait<\d+>\(\)|tilet_tma_store_wait\(\));)\s*$")
OPERAND_TYPES = {"f16": "__half", "bf16": "__nv_bfloat16", "tf32": "float", "s8": "signed char",
                 "u8": "unsigned char", "s4": "emu::S4", "u4": "emu::U4", "e4m3": "__nv_fp8_e4m3", "e5m2": "__nv_fp8_e5m2"}


IMPORTED = re.compile(r"(// ---- imported source .*? \(import_source\) ----\n)(.*?)(// ---- end of imported source .*? ----\n)", re.S)
ASM_START = re.compile(r"\basm\s*(?:volatile\s*)?\(")


def split_top(text, sep):
    """`text` cut at each `sep` outside parentheses and string literals."""
    parts, depth, quote, start, i = [], 0, False, 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quote = False
        elif ch == '"':
            quote = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def asm_call(body):
    """`asm volatile("op.type %0, %1, ...;" : "=r"(d) : "r"(a), ...)` as
    emu::ptx::op_type(d, a, ...): the operands in the template's order (PTX
    puts destinations first; the model takes them by reference)."""
    sections = split_top(body, ":")
    template = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', sections[0])).replace("\\n", "").replace("\\t", " ").strip()
    operands = []
    for section in sections[1:3]:
        for item in split_top(section, ","):
            m = re.match(r'\s*"[^"]*"\s*\((.*)\)\s*$', item, re.S)
            if m:
                operands.append(m.group(1).strip())
    m = re.fullmatch(r"([\w.]+)\s+(.*?);?", template, re.S)
    if not m or ";" in m.group(2):
        raise SystemExit(f"prepare.py: the emulator models one PTX instruction per asm statement, not: {template!r}")
    args = [operands[int(x)] for x in re.findall(r"%(\d+)", m.group(2))]
    return "emu::ptx::" + m.group(1).replace(".", "_") + "(" + ", ".join(args) + ")"


def rewrite_asm(code):
    """Every asm statement of `code` as a call of its instruction's model,
    on as many lines as it had."""
    out, pos = [], 0
    for m in ASM_START.finditer(code):
        if m.start() < pos:
            continue
        depth, i, quote = 1, m.end(), False
        while depth:
            ch = code[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif ch == '"':
                    quote = False
            elif ch == '"':
                quote = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            i += 1
        body = code[m.end():i - 1]
        out.append(code[pos:m.start()] + asm_call(body) + "\n" * body.count("\n"))
        pos = i
    out.append(code[pos:])
    return "".join(out)


LINE_DIRECTIVE = re.compile(r"^#line .*$", re.M)


def blank_helpers(device):
    """The .cu without its PTX helpers and its #line directives into the .tl
    source (the detector and the mutation test count .cu lines), every line
    at its number."""
    device = LINE_DIRECTIVE.sub("", device)
    return HELPERS.sub(lambda m: "\n" * m.group(0).count("\n"), device)


def sync_sites(device):
    """(line number, statement) of every synchronisation statement of a .cu."""
    sites = []
    for number, line in enumerate(blank_helpers(device).split("\n"), 1):
        m = SYNC.match(line)
        if m:
            sites.append((number, m.group(2)))
    return sites


def kernels(device):
    """(line number, name) of every kernel: the line after `extern "C" __global__`."""
    lines = device.split("\n")
    return [(i + 2, re.match(r"\s*(\w+)\(", lines[i + 1]).group(1))
            for i in range(len(lines) - 1)
            if lines[i].startswith('extern "C" __global__') and re.match(r"\s*(\w+)\(", lines[i + 1])]


def source_segments(device, cu):
    """{start, "file", line} per #line directive of the .cu: the line after it
    is `line` of `file` ("" for the .cu's own name: its own lines again)."""
    table = []
    for i, line in enumerate(device.split("\n")):
        m = re.fullmatch(r'#line (\d+) "((?:[^"\\]|\\.)*)"', line)
        if m:
            own = os.path.basename(m.group(2)) == os.path.basename(cu)
            table.append(f'{{{i + 2}, "{"" if own else m.group(2)}", {m.group(1)}}}')
    return ", ".join(table)


def rewrite_device(device):
    device = blank_helpers(device)
    device = IMPORTED.sub(lambda m: m.group(1) + rewrite_asm(m.group(2)) + m.group(3), device)
    device, n = re.subn(r"extern __shared__ __align__\(\d+\) unsigned char tilet_smem\[\];",
                        "emu::SharedPtr<unsigned char> tilet_smem = emu::sharedBase();", device)
    shared = set()

    def declaration(m):
        shared.add(m.group(2))
        return f'emu::SharedPtr<{m.group(1)}> {m.group(2)} = tilet_smem.as<{m.group(1)}>({m.group(3)}, "{m.group(2)}");'
    device = re.sub(r"([A-Za-z_][\w: ]*?)\* (\w+) = reinterpret_cast<\1\*>\(tilet_smem \+ (.+?)\);", declaration, device)

    def remote_view(m):
        shared.add(m.group(1))
        return f"auto {m.group(1)} = tilet_map_shared_rank("
    device = re.sub(r"[A-Za-z_][\w: ]*?\* (\w+) = tilet_map_shared_rank\(", remote_view, device)
    if shared:
        names = "|".join(sorted(shared))
        device = re.sub(r"reinterpret_cast<(?:const )?([\w: ]+?)\*>\(&(" + names + r")\[",
                        r"emu::sharedCast<\1>(&\2[", device)
    lines = device.split("\n")
    for i, line in enumerate(lines):
        m = SYNC.match(line)
        if m:
            lines[i] = f"{m.group(1)}if (emu::keep(__LINE__)) {m.group(2)}"
    device = "\n".join(lines)
    device = re.sub(r"\btilet_dp4a_([su])8_([su])8\(",
                    lambda m: f"emu::dp4a<{'true' if m.group(1) == 's' else 'false'}, {'true' if m.group(2) == 's' else 'false'}>(", device)
    device = re.sub(r"tilet_ldmatrix_x(\d)(_trans)?\(",
                    lambda m: f"emu::ldmatrix<{m.group(1)}, {'true' if m.group(2) else 'false'}>(", device)
    device = re.sub(r"tilet_stmatrix_x(\d)\(", lambda m: f"emu::stmatrix<{m.group(1)}>(", device)
    # Block-scaled kind::mxf4nvf4: e2m1 operands, four factors to a word, one per 16 elements;
    # kind::mxf8f6f4: 8-bit operands (the type in the helper's name), one factor per 32.
    device = re.sub(r"tilet_mma_m(\d+)n(\d+)k(\d+)_f32_mxf4nvf4\(",
                    lambda m: f"emu::mmaBlockScaled<{m.group(1)}, {m.group(2)}, {m.group(3)}, emu::E2M1, 16>(", device)
    device = re.sub(r"tilet_mma_m(\d+)n(\d+)k(\d+)_f32_mxf8f6f4_(e4m3|e5m2)\(",
                    lambda m: f"emu::mmaBlockScaled<{m.group(1)}, {m.group(2)}, {m.group(3)}, {OPERAND_TYPES[m.group(4)]}, 32>(", device)
    device = re.sub(r"tilet_mma_m(\d+)n(\d+)k(\d+)_\w+?_(\w+)\(",
                    lambda m: f"emu::mma<{m.group(1)}, {m.group(2)}, {m.group(3)}, {OPERAND_TYPES[m.group(4)]}>(", device)
    device = re.sub(r"tilet_cp_async_(\d+)\(", r"emu::cpAsync<\1>(", device)
    device = device.replace("tilet_cp_async_commit(", "emu::cpAsyncCommit(")
    # tilet_atomic_add_ORDER_TYPE: atom.add with a memory order (every order
    # is sequentially consistent in the emulator).
    device = re.sub(r"\btilet_atomic_add_(?:relaxed|acquire|release|acq_rel|seq_cst)_(?:f16|bf16|f32|f64|s32|u32|s64|u64)\(",
                    "atomicAdd(", device)
    # tilet_atomic_{load,store}_ORDER_TYPE: ld/st with a memory order (likewise).
    device = re.sub(r"\btilet_atomic_(load|store)_(?:relaxed|acquire|release|seq_cst)_(?:f32|f64|s32|u32|s64|u64)\(",
                    lambda m: "emu::atomicLoad(" if m.group(1) == "load" else "emu::atomicStore(", device)
    # tilet_wgmma_m64nNkK_ACC_A[_B][_rs]: B's type is named only when it differs
    # from A's; _rs: A from registers.
    device = re.sub(r"tilet_wgmma_m(\d+)n(\d+)k(\d+)_([a-z0-9]+)_([a-z0-9]+?)(?:_(e4m3|e5m2|s8|u8|f16|bf16|tf32))?(_rs)?<(\d), (\d)>\(",
                    lambda m: f"emu::wgmma{'RS' if m.group(7) else ''}<{m.group(1)}, {m.group(2)}, {m.group(3)}, {OPERAND_TYPES[m.group(5)]}, "
                              f"{OPERAND_TYPES[m.group(6) or m.group(5)]}, {m.group(8)}, {m.group(9)}>(", device)
    device = device.replace("tilet_wgmma_desc(", "emu::wgmmaDesc(")
    device = re.sub(r"tilet_tmem_(load|store)_(32x32b|16x256b)_x(\d+)\(", r"emu::tmem_\1_\2<\3>(", device)
    device = device.replace("tilet_tma_load_im2col_4d(", "emu::tmaLoadIm2col(")
    device = re.sub(r"tilet_tma_load_\dd\(", "emu::tmaLoad(", device)
    device = re.sub(r"tilet_tma_load_\dd_multicast\(", "emu::tmaLoadMulticast(", device)
    device = re.sub(r"tilet_tma_store_\dd\(", "emu::tmaStore(", device)
    device = re.sub(r"tilet_tma_reduce_add_\dd\(", "emu::tmaReduceAdd(", device)
    device = device.replace("const __grid_constant__ CUtensorMap", "const CUtensorMap")
    device = device.replace("tilet_cp_async_wait<", "emu::cpAsyncWait<")
    return device


def compute_capability(device):
    """The (major, minor) the .cu was translated for, from its banner."""
    m = re.search(r"generated by tilet from .* for sm_(\d+)a?\.", device)
    arch = int(m.group(1)) if m else 80
    return arch // 10, arch % 10


def rewrite_host(launch, device=""):
    # The emulated device is the one the module was translated for.
    major, minor = compute_capability(device)
    launch = launch.replace("cudaDeviceGetAttribute(", f"emu::deviceGetAttribute<{major}, {minor}>(")
    launch = launch.replace("cudaLaunchKernelEx(", "emu::launchEx(")
    launch = launch.replace("cudaFuncSetAttribute(", "emu::funcSetAttribute(").replace("cudaGetDevice(", "emu::getDevice(")
    launch = launch.replace("cudaGetErrorString(", "emu::errorString(")
    return launch.replace("cudaGetDriverEntryPointByVersion(", "emu::getDriverEntryPoint(")


def main():
    cu, host, out = sys.argv[1:4]
    with open(cu) as f:
        device = f.read()
    with open(host) as f:
        launch = f.read()
    table = ", ".join(f'{{{line}, "{name}"}}' for line, name in kernels(device))
    with open(out, "w") as f:
        f.write('#include "emu.h"\n')
        f.write(f'#line 1 "{cu}"\n')
        f.write(rewrite_device(device))
        f.write(f'\nstatic const bool emu_kernels_registered = emu::rc::registerKernels("{cu}", {{{table}}});\n')
        f.write(f'static const bool emu_sources_registered = emu::rc::registerSourceLines({{{source_segments(device, cu)}}});\n')
        # The host file includes its header by file name; the header sits beside the .cu.
        f.write(f'#line 1 "{host}"\n')
        f.write(rewrite_host(launch, device))


if __name__ == "__main__":
    main()
