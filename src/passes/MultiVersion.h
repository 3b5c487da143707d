// MultiVersion.h -- several versions of a shared buffer that a pipelined
// loop's producers fill ahead of its consumers (TileLang's MultiVersionBuffer).
//
// Version v of buffer B is a new buffer with a leading dimension of S; every
// access of B inside the loop selects one version. Used by pipeline-loops
// (cp.async) and specialize-warps (TMA producer warp group).
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilet {

struct VersionedBuffers {
    std::map<const ir::BufferNode *, ir::Buffer> replacement;   // old buffer -> its versioned form
    std::vector<ir::Buffer> order;                               // versioned buffers, in producer order
};

// Versions of the destination buffers of `producers` (copies and im2col
// gathers) of `loop`. A
// buffer written by one of `consumers`, or used anywhere in `kernelBody`
// outside `loop`, cannot run ahead: that is an error at the use (and nullopt).
// `producerName` names the producer in the message ("pipelined copy").
std::optional<VersionedBuffers> versionBuffers(const ir::Stmt &kernelBody, const ir::For &loop, const std::vector<ir::Stmt> &producers,
                                               const std::vector<ir::Stmt> &consumers, int64_t versions, const std::string &producerName,
                                               DiagnosticEngine &diags);

// `s` with every access of a versioned buffer selecting `version`.
ir::Stmt selectVersion(const VersionedBuffers &buffers, const ir::Expr &version, const ir::Stmt &s);

// `body` with the allocations of replaced buffers allocating their versioned form.
ir::Stmt replaceAllocations(const ir::Stmt &body, const std::map<const ir::BufferNode *, ir::Buffer> &replacement);

// Whether `s` reads or writes `b` (copies, gemms, fills, loads and stores).
bool usesBuffer(const ir::Stmt &s, const ir::BufferNode *b);

} // namespace tilet
