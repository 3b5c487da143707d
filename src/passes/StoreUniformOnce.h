// StoreUniformOnce.h -- a store every thread would make alike is made by one thread.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Outside parallel loops each statement runs in every thread of the block
// (or of the warp-specialized role). A plain store to shared or global memory
// whose indices and value are the same in every thread, under control flow
// every thread follows alike (TileLang's `A_shared[tk] = A[k]` in a naive
// GEMV), would be the same write from every thread: a write-write race in
// the PTX memory model, and as many memory transactions as threads. The
// first thread of the block or role makes it; insert-syncs orders it before
// the other threads' reads. Compound and atomic stores keep TileLang's
// meaning (each thread's own).
ir::Kernel storeUniformOnce(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
