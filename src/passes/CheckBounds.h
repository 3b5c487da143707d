// CheckBounds.h -- element accesses that provably run past a buffer's end.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Reports an element access of a shared, fragment or local buffer whose
// index, in some iteration the kernel certainly runs, falls outside the
// buffer (`h[i * 100 + j]` over i < 3, j < 100 into 257 elements), naming
// the loop values that reach it. Global tensors are not checked: lowering
// guards their accesses. Only what is certain is reported: an index that is
// not a sum of constant multiples of loop variables, thread and block
// indices, or one under a branch that might exclude the offending values, is
// left alone.
ir::Kernel checkBounds(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
