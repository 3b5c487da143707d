// OverlapIntraWarpgroup.h -- the softmax of one key tile overlaps the P V
// GEMM of the previous one (FlashAttention-3's intra-warpgroup overlap).
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// A warp-specialized consumer loop that issues two wgmma groups per
// iteration, the first at its start and the second at its end with work
// between them (attention: S = Q Kᵀ, the softmax, O += P V), waits for each
// group right after issuing it, so the tensor cores idle during the softmax
// and the warp group idles during the GEMMs. The loop is rotated so that
// iteration k issues the first group of k and then the second group of
// k - 1, and each wait moves to where its results are needed:
//
//   G1(min); wait 0; release1; middle(min)                   (prologue)
//   for k in min + 1 ..:
//       G1(k); G2(k - 1); wgmma.wait_group 1; release1(k)
//       middle(k) up to its first access of G2's operands
//       wgmma.wait_group 0; release2(k - 1); the rest of middle(k)
//   G2(last); wait 0; release2(last)                         (epilogue)
//
// so the softmax of tile k runs while P V of tile k - 1 is on the tensor
// cores. Each statement keeps its order relative to those it shares memory
// with: G2 of k - 1 touches nothing G1 of k does (checked with the effects
// query), and the middle's statements that touch G2's buffers run after its
// wait. The producer's stage ring is released one softmax later, which it
// absorbs (it waits for a stage released an iteration before it loads it).
// `pipelined(..., overlap = false)` keeps the loop as written.
ir::Kernel overlapIntraWarpgroup(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
