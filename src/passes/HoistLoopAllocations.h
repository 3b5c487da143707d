// HoistLoopAllocations.h -- shared and fragment buffers and registers
// allocated in a pipelined loop's body are allocated once, around the loop;
// shared and fragment buffers in a ws(...) role, at the kernel's start.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// TileLang allocates every alloc_shared/alloc_fragment of a kernel once for
// the block, wherever the program writes it; an allocation in a pipelined
// loop's body is so allocated once for the whole loop. tilet moves it around
// the loop (outside any parallel loop, which holds only per-thread buffers),
// so the loop's copies are statements of its body that pipelining can
// version and reorder. A pipelined loop that the block runs once (in no
// loop, branch or role) has the allocations on its way, its own among them,
// moved to the start of the kernel, where warp specialization's roles
// begin after them. Those allocated inside a ws(...) role go to the start of
// the kernel too: inside the role only its threads would reach them.
// Explained per buffer.
ir::Kernel hoistLoopAllocations(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
