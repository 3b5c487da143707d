// InferLayouts.h -- decides how fragments and parallel loops are spread over
// the block's threads.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// In program order: a parallel loop takes the layout of a fragment it
// indexes by its own variables in order, when that fragment already has one;
// otherwise the canonical layout of its shape, vectorized where its global
// and shared accesses allow 16-byte moves. Fragments take the layout their
// first loop or reduction gives them; a later use that would need another
// layout is an error. Sets For::threadLayout and BufferNode::layout.
ir::Kernel inferLayouts(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
