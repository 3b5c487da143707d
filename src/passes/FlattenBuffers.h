// FlattenBuffers.h -- multi-dimensional indices become flat offsets.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Rewrites every access of a multi-dimensional buffer to a row-major flat
// index. Offsets into global tensors that may hold 2^31 or more elements
// (dynamic dimensions included) are computed in 64 bits.
ir::Kernel flattenBuffers(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
