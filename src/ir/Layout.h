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
// Dimensions listed in `wholeDims` are not spread over threads: each thread
// holds them whole (a fragment indexed there by something other than a loop
// variable somewhere).
TileLayout canonicalLayout(const std::vector<int64_t> &shape, int64_t threads, int64_t vector, const std::vector<int> &wholeDims = {});

// The distribution of a loop nest over memory only (no fragment) that the
// canonical layout would leave partly idle because the threads do not divide
// its extents (257 iterations on 256 threads: thread 0 ran them all). Each
// dimension is padded up to what its threads divide (257 -> 2 steps of 256),
// as TileLang's loop partition spreads the flattened nest and guards the
// iterations past its end. The layout's shape is the padded one: lowering
// skips the iterations beyond the nest's extents.
TileLayout paddedLayout(const std::vector<int64_t> &shape, int64_t threads, int64_t vector);

// The layout of a loop whose variable v indexes dimension dims[v] of a
// fragment laid out as `held`, so that each iteration runs on a thread holding
// its element; the fragment's other dimensions must not be spread over threads
// (nullopt otherwise). The inverse of withWholeDimensions. With factors[v] =
// c > 1, v runs c times the dimension and indexes it as v / c: the c
// iterations of an element run, consecutively, on each thread holding it.
// With windows[v] = E > 0, v indexes a window of E elements of its dimension
// that an offset moves (`x[i, jj * 4 + j]`): the layout is the window's at
// offset 0, when the fragment's modes of that dimension part at E -- those
// below run the window, those above (where the window is) must be local
// modes, so that every place of the window is held by the same threads.
std::optional<TileLayout> loopLayoutFrom(const TileLayout &held, const std::vector<int> &dims, const std::vector<int64_t> &factors = {},
                                         const std::vector<int64_t> &windows = {});

// The layout of a loop over the pairs of elements (..., 2p) and (..., 2p + 1)
// of a fragment laid out as `held` (its last dimension indexed by p), each
// pair run by the threads that hold both: nullopt unless the mode giving the
// last coordinate's unit step is a local mode of even extent, so that the two
// elements of every pair are in a thread's registers (f4e2m1 registers
// packed into a byte, lower-packed-copies).
std::optional<TileLayout> pairedLayout(const TileLayout &held);

// The layout of a buffer indexed, inside a loop with layout `loop`, by the
// loop's dimensions `dims` (dims[d] = the loop dimension indexing buffer
// dimension d). Loop dimensions not used become replication (thread modes)
// or are dropped (local modes).
TileLayout projectLayout(const TileLayout &loop, const std::vector<int> &dims);

// Every thread holds every element: the layout of a fragment that statements
// outside parallel loops read and write (TileLang's "floating" fragments, which
// it makes fully replicated for the same reason). Elements are in row-major
// order in each thread's registers.
TileLayout fullyReplicatedLayout(const std::vector<int64_t> &shape, int64_t threads);

// `layout` with dimensions added that every thread holds whole (as its
// slowest local modes): a fragment indexed, inside a parallel loop, by
// something other than a loop variable in those dimensions. dims[d] is the
// layout dimension buffer dimension d comes from, or -1 for a new one of
// extent shape[d].
TileLayout withWholeDimensions(const TileLayout &layout, const std::vector<int> &dims, const std::vector<int64_t> &shape);

// Whether two layouts put every element in the same registers of the same
// threads, however their thread modes are written (two replication modes or
// one, say).
bool sameDistribution(const TileLayout &a, const TileLayout &b);

// The coordinates of the element that local index `local` of thread `thread`
// holds (for a loop layout: the iteration it runs).
std::vector<int64_t> elementAt(const TileLayout &l, int64_t thread, int64_t local);
// The same into `coords` (no allocation in a loop over every element).
void elementAt(const TileLayout &l, int64_t thread, int64_t local, std::vector<int64_t> &coords);

// The same with the thread and the local index as expressions.
std::vector<Expr> elementAt(const TileLayout &l, const Expr &thread, const Expr &local);

// Whether `thread` holds the element at `coords` (some coordinates may be
// unknown: std::nullopt, any value). An unknown coordinate is held only if no
// thread mode splits its dimension.
bool holds(const TileLayout &l, int64_t thread, const std::vector<std::optional<int64_t>> &coords);

// The register (local index) holding the element at `coords`, for a thread
// that holds it: each local mode's digit taken from its coordinate.
Expr localIndexOf(const TileLayout &l, const std::vector<Expr> &coords);

// The same distribution of the same elements seen with another row-major
// shape of as many elements (TileLang's T.reshape of a fragment): each mode
// moves to the dimension its stride falls in, split where it would cross
// one; nullopt where a mode cannot be split so (its extent or stride does
// not divide along the new dimensions). Modes keep their order, so threads
// and registers hold the same elements as before.
std::optional<TileLayout> reshapeLayout(const TileLayout &layout, const std::vector<int64_t> &shape);

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
