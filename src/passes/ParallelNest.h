// ParallelNest.h -- a parallel loop nest seen as one multi-dimensional loop.
//
// Sema writes `for i, j in parallel(M, N)` as For(i, Parallel){ For(j,
// Parallel){ body } }. Passes that distribute iterations over threads look at
// the whole nest at once.
#pragma once

#include "ir/IR.h"

#include <functional>
#include <optional>
#include <vector>

namespace tilet {

struct ParallelNest {
    const ir::For *outer = nullptr;
    std::vector<ir::VarRef> vars;       // outermost first
    std::vector<int64_t> extents;
    ir::Stmt body;                      // the innermost loop's body
    std::vector<int64_t> shape() const { return extents; }
};

// The nest rooted at `outer` (which must be a Parallel For with constant bounds).
ParallelNest parallelNest(const ir::For &outer);

// Builds a nest of parallel loops over `shape` (outermost first) around the
// body `makeBody(vars)`. Loop variables are named i, j, k, l, ...
ir::Stmt makeParallelNest(const std::vector<int64_t> &shape, SourceRange span,
                          const std::function<ir::Stmt(const std::vector<ir::Expr> &)> &makeBody);

} // namespace tilet
