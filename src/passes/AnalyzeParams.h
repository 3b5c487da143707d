// AnalyzeParams.h -- facts about a kernel's parameters.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Marks tensors that are never written as read-only (printed `const`), and
// records whether the kernel uses programmatic dependent launch.
ir::Kernel analyzeParams(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
