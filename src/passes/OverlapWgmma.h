// OverlapWgmma.h -- wgmma groups left in flight across the iterations of a
// warp-specialized consumer loop.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// A consumer loop lowered from a gemm ends each iteration with
//
//   wgmma.commit_group; wgmma.wait_group 0; arrive(empty[stage(k)])
//
// so its tensor cores idle while the warp group waits. When the wait only
// gates that release (nothing else in the loop touches the accumulators) and
// the stage's buffers have at least two versions, the iteration instead
// waits for the previous group only and releases the previous stage:
//
//   wgmma.commit_group; wgmma.wait_group 1; if (k > min) arrive(empty[stage(k - 1)])
//
// and after the loop: wgmma.wait_group 0; arrive(empty[stage(last)]).
// Each stage is released one iteration later than before; with two or more
// stages the producer is still never starved into a deadlock (the consumer
// waits for iteration k's stage after releasing iteration k - 2's).
ir::Kernel overlapWgmma(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
