#!/usr/bin/env python3
"""Makes a generated .cu / .host.cpp pair compilable by g++ against emu.h.

usage: prepare.py KERNEL.cu KERNEL.host.cpp OUT.cpp

The only rewrites: the extern __shared__ declaration becomes a pointer to the
emulated block's shared memory, cudaLaunchKernelEx becomes emu::launchEx, and
the inline-PTX helpers (the block between the "PTX helpers" markers) give way
to emu.h's models of the same instructions, called by the same names.
Everything else is compiled exactly as tilet wrote it.
"""
import re
import sys

cu, host, out = sys.argv[1:4]
with open(cu) as f:
    device = f.read()
with open(host) as f:
    launch = f.read()
device, n = re.subn(r"extern __shared__ __align__\(\d+\) unsigned char tilet_smem\[\];",
                    "unsigned char *tilet_smem = emu::sharedBase();", device)
launch = launch.replace("cudaLaunchKernelEx(", "emu::launchEx(")
device = re.sub(r"// ---- PTX helpers .*?// ---- end of PTX helpers ----\n", "", device, flags=re.S)
OPERAND_TYPES = {"f16": "__half", "bf16": "__nv_bfloat16", "tf32": "float", "s8": "signed char",
                 "u8": "unsigned char", "e4m3": "__nv_fp8_e4m3", "e5m2": "__nv_fp8_e5m2"}
device = re.sub(r"tilet_ldmatrix_x(\d)(_trans)?\(",
                lambda m: f"emu::ldmatrix<{m.group(1)}, {'true' if m.group(2) else 'false'}>(", device)
device = re.sub(r"tilet_mma_m(\d+)n(\d+)k(\d+)_\w+?_(\w+)\(",
                lambda m: f"emu::mma<{m.group(1)}, {m.group(2)}, {m.group(3)}, {OPERAND_TYPES[m.group(4)]}>(", device)
device = re.sub(r"tilet_cp_async_(\d+)\(", r"emu::cpAsync<\1>(", device)
device = device.replace("tilet_cp_async_commit(", "emu::cpAsyncCommit(")
# tilet_wgmma_m64nNkK_ACC_A[_B][_rs]: B's type is named only when it differs
# from A's; _rs: A from registers.
device = re.sub(r"tilet_wgmma_m(\d+)n(\d+)k(\d+)_([a-z0-9]+)_([a-z0-9]+?)(?:_(e4m3|e5m2|s8|u8|f16|bf16|tf32))?(_rs)?<(\d), (\d)>\(",
                lambda m: f"emu::wgmma{'RS' if m.group(7) else ''}<{m.group(1)}, {m.group(2)}, {m.group(3)}, {OPERAND_TYPES[m.group(5)]}, "
                          f"{OPERAND_TYPES[m.group(6) or m.group(5)]}, {m.group(8)}, {m.group(9)}>(", device)
device = device.replace("tilet_wgmma_desc(", "emu::wgmmaDesc(")
device = re.sub(r"tilet_tma_load_\dd\(", "emu::tmaLoad(", device)
device = re.sub(r"tilet_tma_load_\dd_multicast\(", "emu::tmaLoadMulticast(", device)
device = re.sub(r"tilet_tma_store_\dd\(", "emu::tmaStore(", device)
device = device.replace("const __grid_constant__ CUtensorMap", "const CUtensorMap")
launch = launch.replace("cudaGetDriverEntryPointByVersion(", "emu::getDriverEntryPoint(")
device = device.replace("tilet_cp_async_wait<", "emu::cpAsyncWait<")
# The host file includes its header by file name; the header sits beside the .cu.
with open(out, "w") as f:
    f.write('#include "emu.h"\n')
    f.write(device)
    f.write("\n// ---- host launch code\n")
    f.write(launch)
