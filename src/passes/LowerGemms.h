// LowerGemms.h -- gemms that select-gemm-inst gave to mma.sync.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Each MMA gemm becomes, per k-step of its tile: the warp's A and B operand
// registers loaded from shared memory (ldmatrix where the storage allows it,
// element loads otherwise), then one Mma per atom of the warp's part of C,
// accumulating into C's registers (whose layout infer-layouts fixed to the
// accumulator layout). Needs the fragment registers from infer-layouts.
ir::Kernel lowerGemms(const ir::Kernel &kernel, PassContext &ctx);

// What keeps a gemm's chosen instruction from being generated yet, as the
// subject of "... not supported yet" ("" when nothing does): the limits of
// this lowering (and of lower-wgmma's part of it), which reject-unimplemented
// reports before any lowering runs.
std::string gemmNotGeneratedYet(const ir::Gemm &g);

} // namespace tilet
