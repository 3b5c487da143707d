// CopyFacts.h -- facts about a copy that more than one decision needs: its
// direction and whether a descriptor TMA can move it (CheckBulkLoad /
// TileLang's CheckBulkStore), with the constraint that rules TMA out.
#pragma once

#include "ir/IR.h"
#include "passes/Explain.h"
#include "target/Target.h"

#include <string>

namespace tilet {

bool isGlobalToShared(const ir::Copy &c);
bool isSharedToGlobal(const ir::Copy &c);
std::string copyDirection(const ir::Copy &c);   // "global->shared"
std::string bytesOf(int64_t elements, DType t);  // "128 bytes", or bits when not whole bytes

// Whether a descriptor TMA load (`load`) or store can move `c` on `t`;
// `checkLastDim` also asks for a last dimension of whole 16-byte units.
Option tmaTensorCopy(const ir::Copy &c, bool load, bool checkLastDim, const Target &t);

// Whether TMA's im2col mode can gather `g` on `t` (TileLang's lowering of
// im2col on sm_90): each column tile one filter tap's run of channels, and
// the geometry within the tensor map's ranges (cuTensorMapEncodeIm2col).
Option tmaIm2col(const ir::Im2Col &g, const Target &t);

// The im2col tensor map's pixel box for `g` (whose tmaIm2col holds), with
// `channelsPerPixel` channels per box.
ir::Im2colBox im2colBox(const ir::Im2Col &g, int64_t channelsPerPixel);

} // namespace tilet
