// CheckBounds.h -- element accesses that provably run past a buffer's end.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Reports an element access of a shared, fragment or local buffer, certain
// to run (under no branch, while loop, or loop that may run no iteration or
// leave early), whose index falls outside the buffer for some iteration
// (`h[i * 100 + j]` over i < 3, j < 100 into 257 elements), naming the loop
// values that reach it. Global tensors are not checked: lowering guards
// their accesses. Only what is certain is reported: an index that is not a
// sum of constant multiples of loop variables, thread and block indices is
// left alone.
ir::Kernel checkBounds(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
