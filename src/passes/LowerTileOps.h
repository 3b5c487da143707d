// LowerTileOps.h -- tile operations that are plain element-wise loops.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Rewrites SIMT copies (CopyInst::Normal), fills and atomic adds into
// parallel loop nests over their tile, so that layout inference sees every
// fragment access as a loop. Copies that chose another instruction are
// reported as not supported yet, naming the instruction and the target.
ir::Kernel lowerTileOps(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
