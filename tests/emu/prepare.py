#!/usr/bin/env python3
"""Makes a generated .cu / .host.cpp pair compilable by g++ against emu.h.

usage: prepare.py KERNEL.cu KERNEL.host.cpp OUT.cpp

The only rewrites: the extern __shared__ declaration becomes a pointer to the
emulated block's shared memory, and cudaLaunchKernelEx becomes emu::launchEx.
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
# The host file includes its header by file name; the header sits beside the .cu.
with open(out, "w") as f:
    f.write('#include "emu.h"\n')
    f.write(device)
    f.write("\n// ---- host launch code\n")
    f.write(launch)
