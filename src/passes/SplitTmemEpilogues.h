// SplitTmemEpilogues.h -- a tensor-memory accumulator too large for the
// registers, moved out in column chunks.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// TileLang's Blackwell epilogue reads the whole accumulator into a fragment
// and stores that fragment:
//
//   copy(C_tmem, C_local); copy(C_local, C_shared);
//
// A 128 x 256 f32 accumulator on 128 threads makes C_local 256 registers per
// thread, more than a thread has (255; TileLang lets it spill). When the
// fragment is used by these two copies alone, the pair becomes an unrolled
// loop over column chunks, the fragment one chunk wide:
//
//   for j in unrolled(n) { copy(C_tmem[:, j*w:(j+1)*w], C_local); copy(C_local, C_shared[:, j*w:(j+1)*w]); }
//
// which stores the same values and keeps at most 128 of them per thread.
// Explained per pair.
ir::Kernel splitTmemEpilogues(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
