// SelectGemmInst.h -- decides the instruction, warp partition and operand
// swizzles of every gemm.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// TileLang's chain (Gemm::SelectInst): an explicit instruction, then use_2cta,
// then block-scaled forms, then TCGEN05 (sm_100 family, C in tensor memory,
// the shape whitelist), then WGMMA (sm_90 family, M >= 64, warps a multiple of
// 4, the dtype x transpose x K table), then Volta/Turing checks with an FMA
// fallback, then MMA. Where TileLang would pick an MMA the target or the tile
// cannot run (fp8 before sm_89, K not a multiple of the atom's K), tilet
// falls back to FMA and says why instead of failing later or dropping
// elements. Then the warp partition for the policy (FullRow, FullCol,
// Square), the instruction shape, and the 128B/64B/32B swizzle of each
// shared operand. Records everything for --explain, with each stronger option
// rejected and why; an explicit choice that cannot be honoured is an error.
ir::Kernel selectGemmInst(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
