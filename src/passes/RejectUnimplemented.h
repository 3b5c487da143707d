// RejectUnimplemented.h -- decisions whose code generation tilet lacks yet.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// After every decision is made (and recorded for --explain), reports each
// construct this version cannot generate code for yet -- naming the construct,
// the decision and the target -- so a kernel is translated completely or not
// at all. The one place that knows what code generation covers.
ir::Kernel rejectUnimplemented(const ir::Kernel &kernel, PassContext &ctx);

// What statement `s` is, if it cannot run inside a ws(...) role yet ("a
// multicast copy_cluster"); "" if it can. Automatic warp specialization asks
// it of what would run in the consumer role.
std::string notYetInRole(const ir::Stmt &s);

} // namespace tilet
