// LowerReductions.h -- reduce_sum/max/min/abssum/absmax over fragments.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Each thread first reduces the elements it holds, then threads holding the
// same output element combine their partial results: with warp shuffles
// (xor butterflies) across lanes, and through a shared-memory workspace
// across warps. Needs the layouts from inferLayouts.
ir::Kernel lowerReductions(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
