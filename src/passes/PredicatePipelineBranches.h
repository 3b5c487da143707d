// PredicatePipelineBranches.h -- copies under an `if` in a pipelined loop's
// body become producers of the pipeline, each under the condition of the
// iteration it loads for.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// A pipelined loop's producers are statements of its body. Bindings at the
// top of the body (`let kv_start = block_table[...] * block_size;` before
// the copies that use it) are substituted into its global->shared copies,
// which become statements of the body, and kept around the runs of other
// statements -- unless a value the copies use reads what the loop writes
// or is a warp shuffle (which every lane evaluates together). An `if` without
// `else` among them whose branch holds global->shared copies (TileLang's
// block-sparse GEMM: `if (mask[..., k]) { copy; copy; gemm }`) is split into
// one `if` per statement of the branch, under the same condition, so that
// pipeline-loops can issue the copies iterations ahead -- predicated by the
// condition of the iteration they load for -- and run the rest in order
// under the condition of the current one. A branch whose condition reads
// what the loop writes (a copy evaluates a later iteration's condition
// early) or that binds a name from memory stays whole, and `--explain`
// says why its copies are not pipelined.
ir::Kernel predicatePipelineBranches(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
