// LowerFragmentStores.h -- copies of a gemm accumulator into shared memory
// that selected stmatrix (STSM, sm_90).
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// copy(C_local, C_shared) with C_local the accumulator of an mma.sync or
// wgmma gemm and C_shared 16-bit: in each thread of the copy's warps, per
// group of four register pairs (8x8 blocks of the accumulator pattern,
// ir::stmatrixMismatch),
//
//   pack[0..7] = C_local registers, converted to C_shared's dtype
//   stmatrix.x4 [the row lane % 8 of block lane / 8], pack
//
// (x2 or x1 for a remainder). select-copy-inst took STSM only where this
// applies: the whole accumulator, into 16-byte-aligned rows along the
// destination's last dimension, on the threads of its layout. TileLang
// lowers the same copies with tl::ptx_stmatrix (LowerLDSM).
ir::Kernel lowerFragmentStores(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
