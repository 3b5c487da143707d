// LowerTma.h -- copies that select descriptor TMA (BulkLoad, BulkStore).
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Each such copy becomes TMA operations issued by one thread, on a tensor
// map the host encodes (Kernel::tmaDescriptors, one per tensor and box):
//
//   load, plain copy:    if (elected) { arrive.expect_tx(bar, bytes); tma_load... }
//                        wait(bar, phase); phase ^= 1       (an mbarrier of tilet's)
//   load, tma_copy(..., barrier = b):
//                        if (elected) { expect_tx(b, bytes); tma_load... }   (no wait)
//   store:               fence.proxy.async; [barrier]; if (elected) { tma_store...; wait reads }
//
// A swizzled shared tile is stored as column segments of its swizzle width
// (ir/Layout.h); each segment is one box, whose 128/64/32-byte swizzle TMA
// applies itself. Out-of-bounds elements of a load read as zeros and of a
// store are not written, so tiles at tensor edges need no guards.
ir::Kernel lowerTma(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
