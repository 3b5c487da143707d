// SelectCopyInst.h -- decides the instruction every copy becomes.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Implements TileLang's copy decision chain (its CopyNode::Lower): cluster_mask, then
// tma_copy, then async_copy and pipeline-managed copies, then prefer hints,
// then the default path (only shared->global stores try TMA), then the
// synchronous fallback (LDSM > STSM > TMemLoad > TMemStore > Normal). A hint
// or an explicit form that cannot be honoured is an error naming the failed
// constraint; every decision is recorded for --explain with the stronger
// options rejected.
ir::Kernel selectCopyInst(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
