#!/usr/bin/env python3
"""A CMake project that uses cmake/TiletConfig.cmake: tilet_add_kernel()
translates a kernel at build time, nvcc and g++ build it into a library, and
an executable links it. Rebuilding after touching the imported file
retranslates (the DEPFILE works); rebuilding after nothing changed does not.

usage: cmake_project.py TILET PACKAGE_DIR   (where TiletConfig.cmake is)
       cmake_project.py --installed STAGE     (meson install into STAGE first;
                                               the package must find its tilet)

Skipped (exit 77) without cmake or nvcc.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402
import time

if sys.argv[1] == "--installed":
    # A staged install: the package is used as installed, finding the tilet beside it.
    stage = os.path.abspath(sys.argv[2])
    shutil.rmtree(stage, ignore_errors=True)
    subprocess.run(["meson", "install", "--no-rebuild", "--quiet", "--destdir", stage], check=True, capture_output=True)
    found = [os.path.join(d, "TiletConfig.cmake") for d, _, files in os.walk(stage) if "TiletConfig.cmake" in files]
    men = [os.path.join(d, f) for d, _, files in os.walk(stage) for f in files if f == "tilet.1"]
    bins = [os.path.join(d, f) for d, _, files in os.walk(stage) for f in files if f in ("tilet", "tilet-golden") and d.endswith("bin")]
    editors = [os.path.join(d, f) for d, _, files in os.walk(stage) for f in files
               if f in ("tile.tmLanguage.json", "package.json", "tile.vim") and "editors" in d]
    if len(found) != 1 or len(men) != 1 or len(bins) != 2 or len(editors) != 4:
        print(f"FAIL meson install puts tilet, tilet-golden, tilet.1, TiletConfig.cmake and the editor files in the stage: "
              f"{bins} {men} {found} {editors}")
        sys.exit(1)
    with open(men[0]) as f:
        if "diagnostics\\-format" not in f.read():
            print("FAIL the installed man page carries the options of --help")
            sys.exit(1)
    TILET, PACKAGE = None, os.path.dirname(found[0])
else:
    TILET = os.path.abspath(sys.argv[1])
    PACKAGE = os.path.abspath(sys.argv[2])
NVCC = os.environ.get("NVCC") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else shutil.which("nvcc"))
if not shutil.which("cmake") or not NVCC:
    print("cmake_project: cmake or nvcc missing, skipped")
    sys.exit(77)



CMAKELISTS = """cmake_minimum_required(VERSION 3.20)
project(uses_tilet LANGUAGES CXX CUDA)
find_package(Tilet 0.1 REQUIRED)
tilet_add_kernel(scale_kernel kernels/scale.tl ARCH sm_80 DEFINES FACTOR=3)
tilet_add_kernel(scale_kernel_h100 kernels/scale.tl ARCH sm_90a SYMBOL_PREFIX h100_)
tilet_add_kernel(scale_kernel_any kernels/scale.tl ARCHS sm_80 sm_90a SYMBOL_PREFIX any_)
add_executable(app main.cpp)
target_link_libraries(app PRIVATE scale_kernel scale_kernel_h100 scale_kernel_any)
"""
SCALE = """import "sizes.tl";
const FACTOR = 2;
kernel scale(X: f32[N], Y: f32[N]) grid(N / 128) as (bx) threads(128) {
    for i in parallel(128) { Y[bx * 128 + i] = X[bx * 128 + i] * FACTOR; }
}
"""
MAIN = """#include "scale.h"
extern "C" cudaError_t h100_scale_init(void);   // the sm_90a translation of the same file, prefixed
extern "C" cudaError_t any_scale_init(void);    // and the one for both (ARCHS)
int main() { return (scale_init() == cudaSuccess && h100_scale_init() == cudaSuccess && any_scale_init() == cudaSuccess) || true ? 0 : 1; }
"""


def run(args, cwd):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    src, build = os.path.join(tmp, "src"), os.path.join(tmp, "build")
    os.makedirs(os.path.join(src, "kernels"))
    for path, text in [("CMakeLists.txt", CMAKELISTS), ("main.cpp", MAIN), ("kernels/scale.tl", SCALE), ("kernels/sizes.tl", "const N = 1024;\n")]:
        with open(os.path.join(src, path), "w") as f:
            f.write(text)
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    tilet = [f"-DTILET_EXECUTABLE={TILET}"] if TILET else []
    p = run(["cmake", "-S", src, "-B", build, *generator, f"-DTilet_DIR={PACKAGE}", *tilet, f"-DCMAKE_CUDA_COMPILER={NVCC}"], tmp)
    expect(p.returncode == 0, "the project configures with find_package(Tilet)", p.stdout + p.stderr)
    p = run(["cmake", "--build", build], tmp)
    expect(p.returncode == 0 and os.path.exists(os.path.join(build, "app")),
           "it builds: tilet, nvcc and g++, then the executable, with the same .tl translated three times (SYMBOL_PREFIX), once for two architectures (ARCHS)", p.stdout + p.stderr)
    with open(os.path.join(build, "tilet", "scale_kernel", "scale.cu")) as f:
        cu = f.read()
    expect("X_vec[v] * 3.0f" in cu and "* 2.0f" not in cu, "DEFINES reach tilet (-D FACTOR=3 replaces FACTOR = 2)", cu[:2000])
    with open(os.path.join(build, "tilet", "scale_kernel_any", "scale.cu")) as f:
        cu = f.read()
    expect("any_scale_kernel_sm_80(" in cu and "any_scale_kernel_sm_90a(" in cu, "ARCHS sm_80 sm_90a: one library with a variant for each", cu[:2000])
    p = run(["cmake", "--build", build], tmp)
    expect(p.returncode == 0 and "tilet kernels/scale.tl" not in p.stdout, "a second build translates nothing", p.stdout)
    later = time.time() + 5
    os.utime(os.path.join(src, "kernels", "sizes.tl"), (later, later))
    p = run(["cmake", "--build", build], tmp)
    expect(p.returncode == 0 and "tilet kernels/scale.tl" in p.stdout, "touching the imported file retranslates (DEPFILE)", p.stdout + p.stderr)

finish("cmake_project")
