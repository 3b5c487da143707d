// RejectUnsupported.h -- target legality, and constructs whose code
// generation tilet does not have yet.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Reports (1) constructs the target cannot run at all (an mbarrier below
// sm_90, a cluster larger than the target allows, ...) and (2) constructs whose
// lowering is not implemented yet, each naming the construct and the target.
ir::Kernel rejectUnsupported(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
