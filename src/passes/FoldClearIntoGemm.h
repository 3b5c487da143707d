// FoldClearIntoGemm.h -- `clear(C); gemm(A, B, C)` as one gemm that
// overwrites C.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// TileLang's attention and GEMM kernels zero an accumulator and then gemm
// into it (`T.clear(acc_s); T.gemm(Q, K, acc_s)`). Zeroing first costs a
// store per register or tensor-memory column, keeps the zeros live, and on
// wgmma puts the stores next to the fence, where the compiler moves them
// among the in-flight MMAs. The gemm's clear_accum does the same work for
// free: the first k-step overwrites (wgmma's scale-d, tcgen05's
// enable-input-d are 0) and mma.sync starts from zeroed registers.
//
// This pass folds a zero fill of a whole buffer into the next gemm whose C
// is that whole buffer, when both are in one statement list and nothing
// between them reads or writes it (the effects query); a fill in the branch
// of a constant `if` just before counts (TileLang's Python-time `if`,
// `if is_causal ... else T.clear(acc_s)`). Explained per fold.
ir::Kernel foldClearIntoGemm(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
