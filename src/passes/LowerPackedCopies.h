// LowerPackedCopies.h -- copies between an f4e2m1 fragment and packed memory
// (PackedBytes).
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// copy(y_frag, y_shared) with y_frag a fragment of f4e2m1, which holds one
// element to a register, and y_shared (or a global tensor) packed two
// elements to a byte, element 0 in the low nibble: a parallel loop over the
// pairs (..., 2p), (..., 2p + 1) of the fragment, laid out so that the thread
// holding a pair runs it (ir::pairedLayout), that stores
//
//   bytes[..., p] = bits(y_frag[..., 2p]) | bits(y_frag[..., 2p + 1]) << 4
//
// through a uint8 view of the memory; the copy the other way unpacks each
// byte into the two registers. Lower-parallel-loops lowers the loop (its
// bounds guards and replicas).
//
// Not generated yet (reported here): a copy of part of the fragment, and a
// fragment whose layout parts a pair between threads or registers that are
// not the pair's (its last dimension's unit step not a local mode of even
// extent).
ir::Kernel lowerPackedCopies(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
