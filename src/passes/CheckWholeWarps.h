// CheckWholeWarps.h -- a block with a partial warp uses no warp-wide instruction.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// A block of a thread count that is not a multiple of 32 (TileLang's
// `threads = 1` of examples/rand) ends in a partial warp, whose missing
// lanes cannot take part in an instruction that needs every lane of the
// warp (PTX ISA: the .sync.aligned forms, shfl.sync with a full member
// mask, bar.sync with a thread count). Such a kernel is translated when its
// lowered code has none (`ir::warpWideInstruction`); otherwise each one is
// an error at the statement it came from. Makes no change.
ir::Kernel checkWholeWarps(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
