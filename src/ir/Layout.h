// Layout.h -- building and transforming TileLayouts (see IR.h).
#pragma once

#include "ir/IR.h"

#include <optional>
#include <vector>

namespace tilet::ir {

// The default distribution of a tile over `threads` threads: `vector`
// consecutive elements of the last dimension per thread and step (one 16-byte
// access when vector * element size is 16), then threads spread from the last
// dimension outwards, then the rest kept as per-thread steps. Threads left
// over when the tile is too small hold replicas.
TileLayout canonicalLayout(const std::vector<int64_t> &shape, int64_t threads, int64_t vector);

// The layout of a buffer indexed, inside a loop with layout `loop`, by the
// loop's dimensions `dims` (dims[d] = the loop dimension indexing buffer
// dimension d). Loop dimensions not used become replication (thread modes)
// or are dropped (local modes).
TileLayout projectLayout(const TileLayout &loop, const std::vector<int> &dims);

// The layout of the result of reducing dimension `dim` away.
TileLayout reduceLayout(const TileLayout &layout, int dim);

// Positions of `sub`'s local modes among `full`'s local modes, when `sub` was
// made from `full` by projectLayout/reduceLayout with dimension map `dims`
// (sub dim d = full dim dims[d]); nullopt if they do not correspond.
std::optional<std::vector<int>> matchLocalModes(const TileLayout &full, const TileLayout &sub, const std::vector<int> &dims);

// Stride of local mode k in the local index (product of earlier extents).
int64_t localStride(const TileLayout &l, size_t k);
// Stride of thread mode k in threadIdx.x.
int64_t threadStride(const TileLayout &l, size_t k);

// The digit of thread mode k for thread `t`: (t / stride) % extent.
Expr threadDigit(const TileLayout &l, size_t k, const Expr &t);

// The element offset of `indices` in a row-major buffer. A swizzled shared
// buffer (leading dimensions folded into rows of `cols` elements) is stored
// as column segments of W = 32, 64 or 128 bytes, each segment a contiguous
// [rows, W] block in which the 16-byte chunk c of row r sits at chunk
// c ^ ((r * W / 128) % (W / 16)): the TMA swizzle modes (CUTLASS's
// Swizzle<3,4,3>, <2,4,3>, <1,4,3> within the block), so that 8 consecutive
// rows read at one chunk column hit 8 different bank groups.
Expr bufferOffset(const BufferNode &b, const std::vector<Expr> &indices, DType indexType);

// Bytes of one swizzle segment (32, 64, 128), 0 for None.
int64_t swizzleBytes(SharedSwizzle s);

} // namespace tilet::ir
