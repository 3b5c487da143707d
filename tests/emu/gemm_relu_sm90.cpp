// Emulated examples/gemm_relu.tl translated for sm_90a (automatic warp
// specialization: TMA producer warp group, wgmma consumer warp group), with
// the sm_80 harness.
#define EMU_HEADER "emu_gemm_relu_sm90.h"
#include "gemm_relu.cpp"
