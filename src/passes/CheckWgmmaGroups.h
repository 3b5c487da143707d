// CheckWgmmaGroups.h -- nothing touches what an unfinished wgmma group uses.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// A wgmma reads its operands and reads and writes its accumulator
// asynchronously, until a wgmma.wait_group leaves fewer groups in flight
// than were committed after its own (PTX ISA, "wgmma.wait_group": the
// registers must not be accessed before then). This pass follows, in the
// program order of each warp group, the groups issued, committed and waited
// for, and reports a statement that reads registers an unfinished group
// writes (an accumulator), or writes registers it reads (a register A
// operand). Shared operands are not followed here: which stage of a buffer
// a group reads depends on loop values this walk does not evaluate. Loops are followed until the groups in
// flight at their start stop changing; a branch joins both ways; ws(...)
// roles are followed each on its own.
//
// A kernel whose program places its own waits (wg_wait, wait_wgmma:
// Kernel::waitsForWgmma) gets an error at the statement, naming the gemm;
// in any other kernel the waits are tilet's (lower-gemms, overlap-wgmma,
// overlap-intra-warpgroup, pingpong-consumers) and a finding is an internal
// error.
ir::Kernel checkWgmmaGroups(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
