// VectorizeAccesses.h -- wide (4/8/16-byte) memory accesses for vectorized loops.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// In each Vectorized loop, global and shared accesses whose last index
// advances by one per lane from a base proven aligned become one VectorCopy
// into (or out of) a small register array. Bounds checks that depend on the
// lane are lifted: when the whole vector is in bounds the wide path runs,
// otherwise the original per-element loop does. A local array whose address
// goes to a call_extern is aligned for the widest word its size allows.
ir::Kernel vectorizeAccesses(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
