// MultiVersion.h -- several versions of a shared buffer that a pipelined
// loop's producers fill ahead of its consumers (TileLang's MultiVersionBuffer).
//
// Version v of buffer B is a new buffer with a leading dimension of S; every
// access of B inside the loop selects one version. Used by pipeline-loops
// (cp.async) and specialize-warps (TMA producer warp group).
#pragma once

#include "ir/Effects.h"
#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilet {

// A tile that several pipelined loops of the kernel load ahead, one loop
// after another (TileLang allows it: block_causal_attention_varlen's dkv
// kernel): one versioned buffer, with the versions of the deepest of them;
// each loop selects among its own first versions.
struct SharedTile {
    ir::Buffer versioned;
    std::vector<const ir::StmtNode *> loops;   // the loops that load it, as the kernel holds them
};
using SharedTiles = std::map<const ir::BufferNode *, SharedTile>;

struct VersionedBuffers {
    std::map<const ir::BufferNode *, ir::Buffer> replacement;   // old buffer -> its versioned form
    std::vector<ir::Buffer> order;                               // versioned buffers, in producer order
};

// Versions of the destination buffers of `producers` (copies and im2col
// gathers) of `loop`. A buffer written by one of `consumers`, or used
// anywhere in `kernelBody` outside `loop` (and outside the other loops of
// its entry in `shared`, whose versioned buffer it takes), cannot run
// ahead: that is an error at the use (and nullopt). `producerName` names
// the producer in the message ("pipelined copy").
std::optional<VersionedBuffers> versionBuffers(const ir::Stmt &kernelBody, const ir::For &loop, const std::vector<ir::Stmt> &producers,
                                               const std::vector<ir::Stmt> &consumers, int64_t versions, const std::string &producerName,
                                               DiagnosticEngine &diags, const SharedTiles &shared = {});

// `b` with `versions` versions: a leading dimension that selects one.
ir::Buffer versionedBuffer(const ir::Buffer &b, int64_t versions);

// The tile a producer (a copy, an im2col gather, or a gather loop: a
// parallel loop whose one store copies global elements) fills.
const ir::Buffer &producedTile(const ir::Stmt &producer);

// Why a pipelined loop cannot fill the tile of `producer` ahead ("" when it
// can): another statement of `others` (the loop's) writes the tile, and a
// load issued for a later iteration would overwrite what this iteration
// still reads or rewrites. TileLang's pipeline planner stops on such a loop
// ("Multiple writes to overlapping buffer regions", its issue #3031);
// copy selection runs the copy in order, specialize-warps leaves the loop.
// Likewise when the loop's loads of the tile leave part of it unwritten:
// each version would keep an older iteration's elements there.
// The same when another statement writes global memory the producer loads:
// a load issued ahead would read it before the write.
std::string tileRewrittenInLoop(const ir::Stmt &producer, const std::vector<ir::Stmt> &others, const ir::For &loop);

// A global buffer (by storage) that `producer` loads from and `other` (or a
// statement inside it) writes, and the first such write; none if none.
std::optional<ir::Writer> sourceWrittenBy(const ir::Stmt &producer, const ir::Stmt &other);

// The first of `consumers` from `from` on that surely retires the wgmma
// group a gemm with wg_wait other than 0 committed just before `from`, and
// the wait's place; consumers.size() when none of them does. A wait leaving
// n groups in flight retires it once n or more groups were committed since
// (TileLang's wg_wait and T.wait_wgmma). Before instructions are selected,
// only a gemm with inst = wgmma surely commits a group (and waits for its
// wg_wait); another may be mma.sync, which does neither.
std::pair<size_t, SourceRange> wgmmaGroupRetired(const std::vector<ir::Stmt> &consumers, size_t from);

// Why a loop's stages cannot be handed back within an iteration: a gemm
// among `consumers` that is (or, before selection, may be) a wgmma leaves
// the group reading a tile of `producers` in flight past the end of the
// iteration ("" when none does).
std::string wgmmaGroupPastIteration(const std::vector<ir::Stmt> &producers, const std::vector<ir::Stmt> &consumers);

// `s` with every access of a versioned buffer selecting `version`.
ir::Stmt selectVersion(const VersionedBuffers &buffers, const ir::Expr &version, const ir::Stmt &s);

// `body` with the allocations of replaced buffers allocating their versioned form.
ir::Stmt replaceAllocations(const ir::Stmt &body, const std::map<const ir::BufferNode *, ir::Buffer> &replacement);

// Whether `s` reads or writes `b` (copies, gemms, fills, loads and stores).
bool usesBuffer(const ir::Stmt &s, const ir::BufferNode *b);

// Where `kernelBody` uses `b` outside `loop` (the first place), if anywhere.
std::optional<SourceRange> useOutside(const ir::Stmt &kernelBody, const ir::BufferNode *b, const ir::StmtNode *loop);

} // namespace tilet
