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

// Whether TMA can move `c` on `t` as a load (`load`) or a store: the
// tensor-map form (`descriptor`: a last dimension of whole 16-byte units,
// and boxes as tmaBoxes cuts them), or the checks the 1-D bulk form shares.
Option tmaTensorCopy(const ir::Copy &c, bool load, bool descriptor, const Target &t);

// Whether TMA can move the stages of `tile` once a pipelined loop versions it
// into `stages` copies: stage i starts i tiles in, and TMA reads and writes
// shared memory from 128-byte boundaries only (PTX ISA, cp.async.bulk.tensor).
Option tmaStages(const ir::BufferNode &tile, int64_t stages);

// How a descriptor TMA copy between `global`'s region and `shared`'s (a tile
// stored with `swizzle`) is cut into boxes. A box holds at most 256 elements
// per dimension, its innermost a multiple of 16 bytes (cuTensorMapEncodeTiled),
// and lands in shared memory densely, innermost dimension fastest, from an
// address aligned to 128 bytes (a swizzled tile: to the swizzle's 8-row
// atom). So a box is one contiguous run of the tile: one narrower than the
// tile's buffer in a dimension is one element deep in every dimension outside
// it. A swizzled tile is stored in segments one swizzle wide, each a sub-tile
// of its own, so its boxes are one segment wide. Each box dimension is the
// largest divisor of the region's extent that meets these rules (no box runs
// past the tile); `reason` says why none does.
struct TmaBoxes {
    std::vector<int64_t> box;         // per dimension of the global region, outermost first
    std::vector<int64_t> sharedDim;   // the shared dimension each global one moves to (-1: a unit dimension)
    int64_t count = 1;                // boxes per copy
    std::string reason;               // empty: the boxes above
};
TmaBoxes tmaBoxes(const ir::Region &global, const ir::Region &shared, ir::SharedSwizzle swizzle);
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
