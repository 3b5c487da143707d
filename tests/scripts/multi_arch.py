#!/usr/bin/env python3
"""Multi-architecture output (`--arch sm_80,sm_90a,sm_100a`), checked without a
GPU or nvcc:
- the .cu holds one variant of each kernel per target, in ascending order,
  each body compiled only under its own device pass's condition, and its
  banner's build line names every -gencode; the header and the launch code
  agree; the order of --arch does not matter;
- the launch functions choose the variant for the device: the launch code is
  compiled with g++ against a stand-in CUDA runtime (tests/multiarch/
  cuda_runtime.h) whose device the test sets, and each kernel is a host
  function recording that it ran. Checked: the newest variant the device
  runs (8.0 and 8.6 -> sm_80, 9.0 -> sm_90a, 10.0 -> sm_100a), the choice
  cached per device, the opt-in of the chosen variant's kernel, an unknown
  device refused with the targets named, a binary without the variant's code
  refused with the -gencode to add, and -DTILET_NO_CHECKS skipping that probe;
- --arch errors: an unknown target in the list, one named twice, two for one
  compute capability, an empty name, and --cpu / --emit=emulator with several.

usage: multi_arch.py TILET REPO
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402

TILET = os.path.abspath(sys.argv[1])
REPO = os.path.abspath(sys.argv[2])
FAKE_RUNTIME = os.path.join(REPO, "tests", "multiarch")
ARCHS = "sm_90a,sm_80,sm_100a"   # out of order on purpose
VARIANTS = ["sm_80", "sm_90a", "sm_100a"]

KERNELS = """// Two kernels: one small, one that needs the shared-memory opt-in (64 KiB).
kernel scale(X: f32[dyn n % 4, 64], Y: f32[n, 64]) grid(ceildiv(n, 16)) as (bx) threads(128) {
    for i, j in parallel(16, 64) {
        Y[bx * 16 + i, j] = X[bx * 16 + i, j] * 2.0;
    }
}
kernel staged(A: f32[128, 128], B: f32[128, 128]) grid(1) as (bx) threads(128) {
    let s = alloc_shared([128, 128], f32);
    copy(A, s);
    for i, j in parallel(128, 128) { B[i, j] = s[j, i]; }
}
"""

MAIN = r"""#include "ops.h"
#include <cstdio>
#include <cstring>
static const char *ran = "";
extern "C" {
void scale_kernel_sm_80(const float *, float *, int) { ran = "sm_80"; }
void scale_kernel_sm_90a(const float *, float *, int) { ran = "sm_90a"; }
void scale_kernel_sm_100a(const float *, float *, int) { ran = "sm_100a"; }
void staged_kernel_sm_80(const float *, float *) { ran = "staged sm_80"; }
void staged_kernel_sm_90a(const float *, float *) { ran = "staged sm_90a"; }
void staged_kernel_sm_100a(const float *, float *) { ran = "staged sm_100a"; }
}
static const char *name_of(const void *kernel) {
    if (kernel == reinterpret_cast<const void *>(&staged_kernel_sm_80)) return "staged sm_80";
    if (kernel == reinterpret_cast<const void *>(&staged_kernel_sm_90a)) return "staged sm_90a";
    if (kernel == reinterpret_cast<const void *>(&staged_kernel_sm_100a)) return "staged sm_100a";
    return "?";
}
int main() {
    // The binary holds each variant's own code (as nvcc builds it with every -gencode),
    // except where the test says otherwise (PTX architecture 0: no code).
    const void *kernels[] = {reinterpret_cast<const void *>(&scale_kernel_sm_80), reinterpret_cast<const void *>(&scale_kernel_sm_90a),
                             reinterpret_cast<const void *>(&scale_kernel_sm_100a)};
    const int ptx[] = {80, 90, 100};
    for (int i = 0; i < 3; ++i) {
        fake_cuda::kernels[i] = kernels[i];
        fake_cuda::ptx_version[i] = ptx[i];
    }
    fake_cuda::registered = 3;
    alignas(16) static float x[64 * 64], y[64 * 64], a[128 * 128], b[128 * 128];
    // device: compute capability set per device in the stand-in (0: 8.0, 1: 8.6, 2: 9.0, 3: 10.0, 4: 12.0, 5: 9.0)
    for (int device = 0; device < 4; ++device) {
        fake_cuda::device = device;
        ran = "";
        cudaError_t e = scale(x, y, 64, 0);
        std::printf("scale device %d|%d|%s|%s\n", device, static_cast<int>(e), ran, ops_last_error());
        fake_cuda::opt_ins = 0;
        e = staged(a, b, 0);
        std::printf("staged device %d|%d|%s|%s\n", device, static_cast<int>(e), ran, fake_cuda::opt_ins ? name_of(fake_cuda::shared_opt_in[0]) : "no opt-in");
    }
    // Chosen once per device: launching again queries nothing.
    fake_cuda::device = 2;
    int before = fake_cuda::attribute_queries + fake_cuda::function_queries;
    scale(x, y, 64, 0);
    staged(a, b, 0);
    std::printf("queries again|%d\n", fake_cuda::attribute_queries + fake_cuda::function_queries - before);
    // A device no variant runs on (12.0), and one whose variant the binary lacks (9.0 with only
    // sm_80 code for the sm_90a kernels: a .cu built for one -gencode).
    fake_cuda::device = 4;
    ran = "";
    cudaError_t e = scale(x, y, 64, 0);
    std::printf("unknown device|%d|%s|%s\n", static_cast<int>(e), ran, ops_last_error());
    fake_cuda::ptx_version[1] = 80;
    fake_cuda::device = 5;   // 9.0, not chosen for yet
    ran = "";
    e = scale(x, y, 64, 0);
    std::printf("missing code|%d|%s|%s|%d\n", static_cast<int>(e), ran, ops_last_error(), static_cast<int>(cudaGetLastError()));
    // The parameter checks come first, and name the launch function, not a variant.
    e = scale(x + 1, y, 64, 0);
    std::printf("misaligned|%d|%s\n", static_cast<int>(e), ops_last_error());
    fake_cuda::device = 3;
    fake_cuda::opt_ins = 0;
    e = ops_init();
    std::printf("init|%d|%s\n", static_cast<int>(e), fake_cuda::opt_ins == 1 ? name_of(fake_cuda::shared_opt_in[0]) : "not one opt-in");
}
"""


def run(args, cwd=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


def lines_of(output):
    return {line.split("|")[0]: line.split("|")[1:] for line in output.splitlines() if "|" in line}


with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "ops.tl"), "w") as f:
        f.write(KERNELS)
    p = run([TILET, "ops.tl", "--arch", ARCHS, "-o", "ops.cu"], tmp)
    expect(p.returncode == 0, "tilet translates for three targets", p.stderr)
    read = lambda name: open(os.path.join(tmp, name)).read()
    cu, host, header = read("ops.cu"), read("ops.host.cpp"), read("ops.h")
    gencodes = " ".join(f"-gencode arch=compute_{a[3:]},code={a}" for a in VARIANTS)
    expect(f"// Build: nvcc {gencodes} -c ops.cu" in cu, "the banner's build line names every -gencode, oldest first", cu[:600])
    expect(f"nvcc {gencodes} -c ops.cu" in header, "so does the header's", header[:800])
    found = re.findall(r"^(\w+)_kernel_(sm_\w+)\(", cu, re.M)
    expect(found == [(k, a) for a in VARIANTS for k in ("scale", "staged")], "one variant of each kernel per target, in ascending order", str(found))
    conditions = re.findall(r"^#if (.*)$", cu, re.M)
    expect(conditions.count("defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 800") == 2 and
           conditions.count("defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)") == 2 and
           conditions.count("defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 1000 && defined(__CUDA_ARCH_FEAT_SM100_ALL)") == 2,
           "each body is compiled under its own device pass's condition (with the feature macro of an 'a' target)", str(conditions))
    expect(cu.count("__trap();") == 6, "each body traps when built from another architecture's pass", cu[:3000])
    expect("//   sm_80: 128 threads per block" in header and "//   sm_100a: 128 threads per block" in header, "the header gives each variant's resources", header)
    expect(header.count("cudaError_t scale(") == 1 and "_sm_" not in header.split("#ifdef __cplusplus")[1].split("ops_last_error")[0].replace("//   sm_", ""),
           "the header declares one launch function per kernel, no variant", header)
    p2 = run([TILET, "ops.tl", "--arch", "sm_80,sm_100a,sm_90a", "-o", "again.cu"], tmp)
    expect(p2.returncode == 0 and read("again.cu").replace("again", "ops") == cu, "the order of --arch does not change the output", p2.stderr)

    # The choice of variant, against the stand-in runtime.
    with open(os.path.join(tmp, "main.cpp"), "w") as f:
        f.write(MAIN)
    results = {}
    for defines in ([], ["-DTILET_NO_CHECKS"]):
        exe = os.path.join(tmp, "dispatch" + ("_nochecks" if defines else ""))
        p = run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-pthread", *defines, "-I", FAKE_RUNTIME, "-I", tmp,
                 "main.cpp", "ops.host.cpp", "-o", exe], tmp)
        expect(p.returncode == 0, "the launch code compiles against the stand-in runtime " + " ".join(defines), p.stderr)
        if p.returncode == 0:
            r = run([exe], tmp)
            expect(r.returncode == 0, "the dispatch program runs", r.stderr)
            results[bool(defines)] = lines_of(r.stdout)
    got = results.get(False, {})
    for device, variant in enumerate(["sm_80", "sm_80", "sm_90a", "sm_100a"]):
        expect(got.get(f"scale device {device}", [])[:2] == ["0", variant], f"device {device} runs the {variant} variant of scale", str(got))
        expect(got.get(f"staged device {device}", []) == ["0", "staged " + variant, "staged " + variant],
               f"device {device} runs staged's {variant} variant, after opting that kernel in to 64 KiB", str(got))
    expect(got.get("queries again") == ["0"], "the choice is made once per device (no query on later launches)", str(got))
    unknown = got.get("unknown device", ["", "", ""])
    expect(unknown[0] == "209" and unknown[1] == "" and "compiled for sm_80, sm_90a, sm_100a; device 4 has compute capability 12.0, which none of them runs on" in unknown[2],
           "a device no variant runs on gets cudaErrorNoKernelImageForDevice and a message naming the targets", str(unknown))
    missing = got.get("missing code", ["", "", "", ""])
    expect(missing[0] == "209" and missing[1] == "" and "runs the sm_90a variant, but the binary holds no sm_90a code for it; build ops.cu with " + gencodes in missing[2],
           "a binary without the variant's own code is refused, with the -gencode line to build it with", str(missing))
    misaligned = got.get("misaligned", ["", ""])
    expect(misaligned[0] == "716" and "scale: tensor 'X' must be 16-byte aligned" in misaligned[1], "the parameter checks name the launch function", str(misaligned))
    expect(got.get("init") == ["0", "staged sm_100a"], "ops_init opts in the device's variant (sm_100a on 10.0)", str(got))
    unchecked = results.get(True, {})
    expect(unchecked.get("missing code", [""])[0:2] == ["0", "sm_90a"], "-DTILET_NO_CHECKS leaves the probe of the binary out (the variant runs)", str(unchecked))

    # Errors in --arch.
    def error(args, message, what):
        p = run([TILET, "ops.tl", *args, "-o", "bad.cu"], tmp)
        expect(p.returncode == 1 and message in p.stderr and not os.path.exists(os.path.join(tmp, "bad.cu")), what, p.stderr)
    error(["--arch", "sm_80,sm_99"], "tilet: error: unknown target 'sm_99'", "an unknown target in the list is named")
    error(["--arch", "sm_80,sm_80"], "target 'sm_80' is named twice in --arch", "a target named twice")
    with open(os.path.join(tmp, "t.yaml"), "w") as f:
        f.write("sm_90:\n  base: sm_90a\n  gencode: arch=compute_90,code=sm_90\n  exact_capability: false\n  wgmma: false\n  setmaxnreg: false\n")
    error(["--target-file", "t.yaml", "--arch", "sm_90,sm_90a"], "targets 'sm_90' and 'sm_90a' both compile for compute capability 9.0", "two targets of one compute capability")
    error(["--arch", "sm_80,"], "empty target name in --arch 'sm_80,'", "an empty name in the list")
    error(["--arch", "sm_80,sm_90a", "--emit=emulator"], "--emit=emulator runs one target's code in the emulator; --arch names 2", "--emit=emulator with two targets")
    p = run([TILET, "ops.tl", "--arch", "sm_80,sm_90a", "--cpu", "-o", "libops.so"], tmp)
    expect(p.returncode == 1 and "--cpu runs one target's code in the emulator" in p.stderr and not os.path.exists(os.path.join(tmp, "libops.so")),
           "--cpu with two targets", p.stderr)
    # A diagnostic of one target's lowering says which target.
    with open(os.path.join(tmp, "cluster.tl"), "w") as f:
        f.write("kernel k(A: f32[128]) grid(2) as (bx) threads(128) cluster(2) {\n    for i in parallel(64) { A[bx * 64 + i] = 1.0; }\n}\n")
    p = run([TILET, "cluster.tl", "--arch", "sm_80,sm_90a", "-o", "cluster.cu"], tmp)
    expect(p.returncode == 1 and "cluster.tl:1:1: error: thread block clusters need sm_90a or newer; sm_80 has none" in p.stderr and
           "note: when translating for sm_80 (--arch sm_80,sm_90a)" in p.stderr, "an error of one target's lowering names the target", p.stderr)
    p = run([TILET, "ops.tl", "--arch", "sm_80,sm_90a", "--dump-ir-after", "simplify", "-o", "ops2.cu"], tmp)
    expect(p.returncode == 0 and p.stderr.count("// ==== lowering for sm_80 ====") == 1 and p.stderr.count("// ==== lowering for sm_90a ====") == 1,
           "--dump-ir-after says which target each dump is for", p.stderr[:1000])
    with open(os.path.join(tmp, "custom.yaml"), "w") as f:
        f.write("h100-lab:\n  base: sm_90a\n")
    p = run([TILET, "ops.tl", "--target-file", "custom.yaml", "--arch", "sm_80,h100-lab", "-o", "custom.cu"], tmp)
    expect(p.returncode == 0 and "scale_kernel_h100_lab(" in read("custom.cu"), "a target name that is no C identifier gives kernel names that are", p.stderr)
    p = run([TILET, "ops.tl", "--arch", "sm_80,sm_90a", "--explain=json", "-o", "ops2.cu"], tmp)
    targets = set(re.findall(r'^\{"target":"(sm_\w+)"', p.stderr, re.M))
    expect(p.returncode == 0 and targets == {"sm_80", "sm_90a"}, "--explain=json says which target each decision is for", p.stderr[:2000])
    p = run([TILET, "ops.tl", "--arch", "sm_80,sm_90a", "--explain", "-o", "ops2.cu"], tmp)
    expect(p.returncode == 0 and "remark: [sm_80] " in p.stderr and "remark: [sm_90a] " in p.stderr, "--explain's remarks say which target", p.stderr[:2000])

finish("multi_arch")
