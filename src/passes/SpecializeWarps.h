// SpecializeWarps.h -- automatic warp specialization of a pipelined loop
// whose loads can use TMA (TileLang's ProducerConsumerWarpSpecialized).
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// On a TMA target, `for k in pipelined(n, stages = S) { loads; compute }`
// in a block of T threads becomes T + 128 threads in two roles, written as
// the ws(...) regions a kernel author would write by hand:
//
//   ws(0) {                       // producer warp group: setmaxnreg.dec 24
//     for k: elect thread 0 {
//              wait(empty[k % S], phase ^ 1)
//              TMA loads into version k % S, completing on full[k % S]
//              arrive(full[k % S])
//            }
//   }
//   ws(1 ...) {                   // consumer warp groups: setmaxnreg.inc 240/160
//     statements before the loop
//     for k: wait(full[k % S], phase); compute on version k % S; arrive(empty[k % S])
//     statements after the loop
//   }
//
// with phase = (k / S) % 2. Inside other loops and branches (a persistent
// loop over the block's tiles) the producer role repeats them, and each
// role counts the iterations of the loop's earlier runs in a register of
// its own (`base`), so that iteration k of a run uses stage (base + k) % S
// in phase ((base + k) / S) % 2: the ring goes on across tiles, and the
// producer fills the next tile's stages during this tile's epilogue. full[s] counts the producer thread's one
// arrival plus the TMA bytes; empty[s] counts the consumers' T arrivals
// (overlap-wgmma makes them one per warp group when only wgmma reads the
// stages). Because the
// result is ordinary ws(...) code, check-barriers verifies it like a
// hand-written protocol and the later passes lower it the same way.
//
// A loop that does not qualify keeps its cp.async pipeline, with the reason
// in --explain; `warp_specialize = true` turns that reason into an error,
// `warp_specialize = false` keeps the cp.async pipeline.
ir::Kernel specializeWarps(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
