// PipelineLoops.h -- software pipelining of `pipelined(n, stages = S)` loops
// whose loads select cp.async.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// The loop's global->shared copies (the producers) run S - 1 iterations ahead
// of the rest of the body (the consumers), into S versions of their shared
// buffers (dimension 0 of each buffer selects the version; S = 1 keeps one
// buffer and loads one iteration ahead, after the consumers):
//
//   prologue:  for s < S - 1: issue the copies of iteration s; commit
//   loop k:    cp.async.wait_group(S - 2); barrier
//              issue the copies of iteration k + S - 1 (if it exists); commit
//              the consumers of iteration k
//
// One barrier per iteration suffices: it both publishes iteration k's data
// and ends every thread's reads of the version the new copies overwrite
// (read in iteration k - 1). TileLang issues first and waits for S - 1
// groups, which needs a second barrier before the issue.
ir::Kernel pipelineLoops(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
