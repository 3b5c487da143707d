// ThreadRoles.h -- branches on the thread index that hand tile work to whole
// warps become ws(...) roles.
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <set>

namespace tilet {

// TileLang's hand-specialized Blackwell kernels split the block with
// branches on the thread index -- `if tx < 32:` (TMA loads) `elif tx < 64:`
// (tcgen05 MMAs) -- and a tile operation inside runs on the threads the
// condition leaves (TileLang bounds the thread variable under the branch).
// Such a chain of conditions on the linear thread index (`tx < c`,
// `tx >= c`, `tx / 32 == w`, their `&&`), at a place every thread reaches
// alike, becomes one role per branch over the warps of its thread range (one
// range of the threads no earlier condition took),
// when one of its branches holds work spread over threads (a tile operation
// or a parallel loop) or a named barrier of its own threads (`sync_threads(id,
// n)` with n the branch's threads: they synchronise as a role); a branch
// whose range is not whole warps is an error then. Chains that hold only thread-level code stay branches, and so do
// branches sema itself wrote (those not in `programBranches`).
ir::Stmt formThreadRoles(const ir::Stmt &body, const ir::Kernel &kernel, const std::set<const ir::StmtNode *> &programBranches,
                         DiagnosticEngine &diags);

} // namespace tilet
