// CheckCtaPairs.h -- the CTA pair's tcgen05 instructions are issued as the pair needs.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// A kernel with the CTA pair's MMAs (a use_2cta gemm, TileLang's 2-CTA
// tcgen05): its gemms and tcgen05_cp_warpx4 copies are issued by the
// pair's leader alone, one thread for both blocks, so they must sit under a
// condition that holds in the leader only (block_rank_in_cluster() == 0),
// outside a pipelined loop; all its tcgen05 instructions name .cta_group::2
// (PTX ISA), so its copies and arrive_2cta are the pair's, and a kernel
// without a pair gemm has neither. Each violation is an error at its
// statement; checked before the barrier protocol, whose simulation would
// only show the consequence (a race between the two blocks' copies). Makes
// no change.
ir::Kernel checkCtaPairs(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
