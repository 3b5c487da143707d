// Verifier.h -- checks the IR invariants passes rely on. A violation is a bug
// in tilet, reported as an internal error naming the pass that broke it.
#pragma once

#include "ir/IR.h"

namespace tilet::ir {

// Which lowered forms must already be gone at this point of the pipeline.
struct VerifyLevel {
    bool noTileOps = false;     // Copy, Gemm, Fill, Reduce, AtomicAdd lowered
    bool noParallel = false;    // parallel loops and fragments lowered
    bool noVectorized = false;  // vectorized loops lowered
    bool flat = false;          // every access has at most one index
};

void verify(const Kernel &k, const VerifyLevel &level, const char *afterPass);

} // namespace tilet::ir
