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
// simulated, or with a cluster the blocks of one cluster together (agents
// are a block's rank and group; block_rank_in_cluster() is known in each):
// barriers and shared memory are each block's own; barrier_arrive(b, r) and
// copy_cluster(dst_block = r, remote_barrier = b) arrive on block r's b; the
// CTA pair's gemm (use_2cta) reads both blocks' operands and its commit (as
// tcgen05_mma_arrive(b, arrive_2cta = true)) arrives on b of both; a
// tma_copy on a cluster barrier counts its bytes on the pair leader's
// barrier, a multicast on the barrier of every block it writes; there a TMA
// load's write is ordered before other agents' accesses only through the
// phase its bytes complete; a block barrier meets one block's agents, cluster_sync()
// every agent of the cluster. The grid's blocks (clusters) that go
// different ways at branches on the block index are run one of each class.
ir::Kernel checkBarriers(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
