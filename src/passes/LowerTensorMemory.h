// LowerTensorMemory.h -- copies out of tensor memory (TMemLoad, sm_100a).
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// copy(C_tmem, C_local) with C_tmem a [128, cols] or [64, cols] tcgen05.mma
// accumulator of 32-bit elements becomes, in each thread of the copy's warp
// groups (ir/MmaLayout.h, TmemTiling):
//
//   tcgen05.fence::after_thread_sync       (after the wait that saw the MMAs complete)
//   tcgen05.ld.<shape>.x<n> regs[..] <- lane 32 * (warp % 4), column g * cols / groups + c
//   tcgen05.wait::ld; tcgen05.fence::before_thread_sync
//
// with shape 32x32b for 128 rows (a row per thread) and 16x256b for 64 (PTX
// data-path layout F: 16 rows per warp, the m16n8 accumulator layout). The
// fragment has the layout infer-layouts gave it from the same TmemTiling.
// What this lowering cannot do yet (other row counts, 16-bit packing, stores
// into tensor memory) it reports as not supported.
ir::Kernel lowerTensorMemory(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
