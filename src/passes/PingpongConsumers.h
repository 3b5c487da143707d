// PingpongConsumers.h -- two consumer warp groups take turns at the tensor
// cores (FlashAttention-3's ping-pong scheduling).
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// A loop run by a role of two warp groups that issues two or more wgmma
// groups per iteration with other work between them (attention: Q Kᵀ, the
// softmax, P V) keeps both warp groups in step, so their softmaxes run at
// the same time and the tensor cores idle meanwhile. This pass makes the
// warp groups take turns: a warp group waits for its turn before the
// iteration's last wgmma group (P V) and hands the turn on after its next
// first group (Q Kᵀ of the next iteration) is issued, so one warp group's
// softmax runs while the other's GEMMs do:
//
//   for k:   fence; Q Kᵀ; commit; [pass unless warp group 1 and k = min] ...
//            softmax ...; take; fence; P V; commit ...
//   after:   [warp group 1: pass]
//
// Warp group w takes its turn on named barrier id0 + w and passes it on
// id0 + 1 - w (both warp groups' 256 threads: 128 wait, 128 arrive).
// Warp group 0 passes first; warp group 1 passes once more after the loop,
// so every bar.sync meets exactly one bar.arrive. The turns order only when
// work is issued, never memory. The pass runs after insert-syncs, and
// only where nothing in the loop makes one warp group wait for the other
// (a barrier of the role or the block, a cluster barrier, an mbarrier the
// role itself arrives on, hand-written device code), both run the loop
// alike (its bounds are the same in every thread, it is under no branch
// within the role), and the loop is the consumers' loop of automatic warp
// specialization with two or more stages: otherwise a turn could wait for
// an arrival that waits for it (with one stage, through the producer: the
// other warp group's next wait needs a load that needs this warp group's
// release after its turn). Where there is no work between the wgmma groups
// the turns would only stall them. `pipelined(..., pingpong = false)` turns
// the pass off for a loop, `pingpong = true` makes its reason an error.
ir::Kernel pingpongConsumers(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
