// PinWgmmaRegisters.h -- the accumulators each wgmma fence and wait orders,
// for the compiler.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// wgmma.fence orders the warp group's earlier register accesses before the
// next wgmma, and wgmma.wait_group the completed wgmmas before later
// accesses -- in the hardware. The C++ compiler sees neither: the
// accumulator fragments are registers, not memory, so it may sink an
// accumulator's zeroing or rescaling past the fence, or hoist a read above
// the wait. ptxas then finds registers of an in-flight wgmma touched and
// serializes the wgmmas with an injected warpgroup.arrive (its C7519
// remark), or the read sees a value not yet written.
//
// This pass records on each WgmmaSync the fragments to pin there (the
// printer makes each an empty asm that reads and writes every register,
// CUTLASS's warpgroup_fence_operand). "Accumulators" below are the wgmmas'
// register operands: C, and A where it is in registers (the cast that
// fills it sinks past the fence as well). On a fence, the accumulators of
// the wgmmas that follow it up to their commit in the same statement list; on a
// wait, those of the nearest statement before it in its list that issues
// wgmmas (the group it waits for); where its list has none, every wgmma
// accumulator in scope. Pins generate no instructions.
ir::Kernel pinWgmmaRegisters(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
