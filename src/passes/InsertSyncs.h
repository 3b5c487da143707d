// InsertSyncs.h -- block-wide barriers between dependent shared-memory accesses.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Inserts __syncthreads() where one statement may read or write shared bytes,
// or a global tensor, that another thread wrote (or read, before a write)
// since the last barrier, including across loop iterations. Uses the shared-memory plan, so buffers
// that share bytes are ordered too. Statements whose iterations stay within
// one thread (For::threadLocal) and branches are never split.
ir::Kernel insertSyncs(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
