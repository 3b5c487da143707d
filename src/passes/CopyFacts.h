// CopyFacts.h -- facts about a copy that more than one decision needs: its
// direction and whether a descriptor TMA can move it (CheckBulkLoad /
// TileLang's CheckBulkStore), with the constraint that rules TMA out.
#pragma once

#include "ir/IR.h"
#include "passes/Explain.h"
#include "target/Target.h"

#include <string>
#include <vector>

namespace tilet {

bool isGlobalToShared(const ir::Copy &c);
bool isSharedToGlobal(const ir::Copy &c);
std::string copyDirection(const ir::Copy &c);   // "global->shared"
std::string bytesOf(int64_t elements, DType t);  // "128 bytes", or bits when not whole bytes

// Whether a descriptor TMA load (`load`) or store can move `c` on `t`;
// `checkLastDim` also asks for a last dimension of whole 16-byte units.
Option tmaTensorCopy(const ir::Copy &c, bool load, bool checkLastDim, const Target &t);

// How a descriptor TMA copy of a region with `extents` (outermost first) is
// cut into boxes. A box holds at most 256 elements per dimension (PTX ISA,
// tensor-map box size) and lands in shared memory densely, innermost
// dimension fastest: a box narrower than the region in one dimension is
// one element deep in every dimension outside it, so that each box is one
// contiguous run of the tile. A swizzled tile is stored in segments of
// `segment` elements of its innermost dimension (0: linear), each its own
// sub-tile, so its boxes are one segment wide. Each box dimension is the
// largest divisor of the region's extent that fits (no box runs past the tile).
struct TmaBoxes {
    std::vector<int64_t> box;   // per dimension, outermost first
    int64_t count = 1;          // boxes per copy
};
TmaBoxes tmaBoxes(const std::vector<int64_t> &extents, int64_t segment);
// More boxes than this make a copy a poor fit for TMA (one instruction each).
constexpr int64_t kMaxTmaBoxes = 64;

// Whether TMA's im2col mode can gather `g` on `t` (TileLang's lowering of
// im2col on sm_90): each column tile one filter tap's run of channels, and
// the geometry within the tensor map's ranges (cuTensorMapEncodeIm2col).
Option tmaIm2col(const ir::Im2Col &g, const Target &t);

// The im2col tensor map's pixel box for `g` (whose tmaIm2col holds), with
// `channelsPerPixel` channels per box.
ir::Im2colBox im2colBox(const ir::Im2Col &g, int64_t channelsPerPixel);

} // namespace tilet
