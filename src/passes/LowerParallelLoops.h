// LowerParallelLoops.h -- parallel loop nests become per-thread loops.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Gives every thread its share of each parallel nest according to the nest's
// layout: the coordinates are a thread part (from threadIdx.x) plus unrolled
// per-thread steps, the innermost of which is Vectorized when the layout
// moves several consecutive elements. Fragment accesses become accesses of
// the thread's register array; global accesses that cannot be proven inside
// their tensor are guarded; replicated layouts let one replica write memory.
// Fragment allocations become register arrays.
ir::Kernel lowerParallelLoops(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
