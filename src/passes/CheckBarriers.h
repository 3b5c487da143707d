// CheckBarriers.h -- the static check of mbarrier protocols.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Runs the kernel's barrier protocol on an abstract machine before any code
// is generated: each warp group is one agent that executes the statements it
// runs (ws(...) regions only in their roles; loops with constant bounds
// unrolled, loops with run-time bounds tried with 1, 2 and 5 iterations),
// recording its mbarrier arrivals and waits and its shared-memory accesses.
// The agents are then interleaved in several orders (each group running
// ahead of the others, and one event at a time round robin). Errors:
//   - a deadlock: a wait whose phase never completes (a wrong parity, an
//     arrive count larger than the arrivals, nobody arriving);
//   - more arrivals in one phase than the barrier's arrive count;
//   - a race: two warp groups access the same shared bytes, one of them
//     writing, with no barrier phase ordering them (vector clocks: an
//     arrival releases, the wait that sees its phase complete acquires).
// A kernel without barriers or ws(...) regions is left alone. One block is
// simulated: the blocks of a cluster run the same program, so an arrival on
// the barrier of block r of the cluster stands for the arrival block r makes
// on this block's barrier, and is counted here.
ir::Kernel checkBarriers(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
