#!/usr/bin/env bash
# examples/pytorch/build.sh [--cpu] -- the two kernels of model.py as libraries
# with their Python bindings, in build/ (GPU) or build-cpu/ (--cpu: the
# emulator, small shapes, no GPU needed). TILET, ARCH and OUT (the directory)
# may be set.
set -euo pipefail
cd "$(dirname "$0")"
tilet=${TILET:-../../build/tilet}
if [ "${1:-}" = "--cpu" ]; then
  out=${OUT:-build-cpu}
  mkdir -p "$out"
  # Shapes small enough for the emulator (one CPU thread per CUDA thread).
  "$tilet" ../softmax.tl --cpu --arch "${ARCH:-sm_80}" -D M=64 -D N=256 -o "$out/libsoftmax.so" --python "$out/softmax_ops.py"
  "$tilet" ../gemm_relu.tl --cpu --arch "${ARCH:-sm_80}" -D M=256 -D N=256 -D K=128 -o "$out/libgemm.so" --python "$out/gemm_ops.py"
else
  out=${OUT:-build}
  mkdir -p "$out"
  "$tilet" ../softmax.tl --arch "${ARCH:-sm_90a}" -o "$out/libsoftmax.so" --python "$out/softmax_ops.py"
  "$tilet" ../gemm_relu.tl --arch "${ARCH:-sm_90a}" -o "$out/libgemm.so" --python "$out/gemm_ops.py"
fi
echo "built $out/libsoftmax.so $out/libgemm.so with their bindings"
