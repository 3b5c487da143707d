// LowerTensorMemory.h -- copies out of tensor memory (TMemLoad, sm_100a).
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// copy(C_tmem, C_local) with C_tmem [128, cols] of 32-bit elements becomes,
// in each thread of the copy's warp groups (ir/MmaLayout.h, TmemTiling):
//
//   tcgen05.fence::after_thread_sync       (after the wait that saw the MMAs complete)
//   tcgen05.ld.32x32b.x<n> regs[c ..] <- lane 32 * (warp % 4), column g * cols / groups + c
//   tcgen05.wait::ld; tcgen05.fence::before_thread_sync
//
// The fragment has the row-per-thread layout infer-layouts gave it. What this
// lowering cannot do yet (other shapes, 16-bit packing, stores into tensor
// memory) it reports as not supported.
ir::Kernel lowerTensorMemory(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
