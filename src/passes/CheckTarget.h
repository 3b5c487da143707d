// CheckTarget.h -- what the target GPU cannot do at all.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Reports constructs the target cannot run whatever tilet does: an mbarrier
// or a cluster before sm_90, tensor memory before sm_100, more threads or a
// larger cluster than the target allows, and the like. Runs first, so no
// decision is explained for a kernel the target could never run.
ir::Kernel checkTarget(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
