// PlanTensorMemory.h -- columns of tensor memory for alloc_tmem buffers (sm_100a).
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Tensor memory is 128 lanes x 512 columns of 32 bits per block, allocated
// in powers of two of at least 32 columns by one warp (PTX ISA, "Tensor
// Memory"). Each alloc_tmem buffer [rows <= 128, cols] takes cols * bits / 32
// columns, rounded up to such a size; buffers are placed widest first (each
// then starts at a multiple of its size), and the block allocates their total
// once -- more than 512 is an error here, not a launch failure. The kernel
// becomes
//
//   if (warp 0) { tcgen05.alloc -> word; relinquish_alloc_permit }
//   fence::before_thread_sync; __syncthreads(); fence::after_thread_sync
//   tmem_base = word
//   <body>      (each buffer's tmemAddress = tmem_base + its first column)
//   fence::before_thread_sync; __syncthreads(); fence::after_thread_sync
//   if (warp 0) tcgen05.dealloc
//
// as TileLang's LowerSharedTmem does (warp 0 allocates, widest first).
ir::Kernel planTensorMemory(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
