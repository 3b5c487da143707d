// RejectUnimplemented.h -- decisions whose code generation tilet lacks yet.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// After every decision is made (and recorded for --explain), reports each
// construct this version cannot generate code for yet -- naming the construct,
// the decision and the target -- so a kernel is translated completely or not
// at all. The one place that knows what code generation covers.
ir::Kernel rejectUnimplemented(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
