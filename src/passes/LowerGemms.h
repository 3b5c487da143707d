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

} // namespace tilet
