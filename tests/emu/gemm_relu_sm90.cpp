// Emulated examples/gemm_relu.tl translated for sm_90a (cp.async pipeline,
// wgmma from swizzled shared tiles), with the sm_80 harness.
#define EMU_HEADER "emu_gemm_relu_sm90.h"
#include "gemm_relu.cpp"
