#include "ir/Layout.h"

#include <numeric>

namespace tilet::ir {

TileLayout canonicalLayout(const std::vector<int64_t> &shape, int64_t threads, int64_t vector) {
    TileLayout l;
    l.shape = shape;
    l.threads = threads;
    int rank = static_cast<int>(shape.size());
    std::vector<int64_t> remaining = shape, stride(rank, 1);
    if (rank > 0 && vector > 1 && shape[rank - 1] % vector == 0) {
        l.localModes.push_back({vector, rank - 1, 1});
        remaining[rank - 1] /= vector;
        stride[rank - 1] = vector;
    }
    int64_t freeThreads = threads;
    for (int d = rank - 1; d >= 0; --d) {
        int64_t g = std::gcd(freeThreads, remaining[d]);
        if (g > 1) {
            l.threadModes.push_back({g, d, stride[d]});
            stride[d] *= g;
            remaining[d] /= g;
            freeThreads /= g;
        }
    }
    for (int d = rank - 1; d >= 0; --d) {
        if (remaining[d] > 1) {
            l.localModes.push_back({remaining[d], d, stride[d]});
            stride[d] *= remaining[d];
        }
    }
    if (freeThreads > 1) l.threadModes.push_back({freeThreads, LayoutMode::kReplicate, 0});
    return l;
}

TileLayout projectLayout(const TileLayout &loop, const std::vector<int> &dims) {
    TileLayout out;
    out.threads = loop.threads;
    for (int d : dims) out.shape.push_back(loop.shape[d]);
    auto newDim = [&](int loopDim) {
        for (size_t d = 0; d < dims.size(); ++d) {
            if (dims[d] == loopDim) return static_cast<int>(d);
        }
        return LayoutMode::kReplicate;
    };
    for (const LayoutMode &m : loop.threadModes) {
        int nd = m.dim == LayoutMode::kReplicate ? LayoutMode::kReplicate : newDim(m.dim);
        out.threadModes.push_back(nd == LayoutMode::kReplicate ? LayoutMode{m.extent, LayoutMode::kReplicate, 0}
                                                               : LayoutMode{m.extent, nd, m.coordStride});
    }
    for (const LayoutMode &m : loop.localModes) {
        int nd = newDim(m.dim);
        if (nd != LayoutMode::kReplicate) out.localModes.push_back({m.extent, nd, m.coordStride});
    }
    return out;
}

TileLayout reduceLayout(const TileLayout &layout, int dim) {
    std::vector<int> dims;
    for (int d = 0; d < static_cast<int>(layout.shape.size()); ++d) {
        if (d != dim) dims.push_back(d);
    }
    TileLayout out = projectLayout(layout, dims);
    if (out.shape.empty()) out.shape.push_back(1);   // a 1-D reduction produces a [1] buffer
    return out;
}

std::optional<std::vector<int>> matchLocalModes(const TileLayout &full, const TileLayout &sub, const std::vector<int> &dims) {
    std::vector<int> positions;
    size_t next = 0;
    for (size_t k = 0; k < full.localModes.size() && next < sub.localModes.size(); ++k) {
        const LayoutMode &f = full.localModes[k], &s = sub.localModes[next];
        if (s.dim < 0 || s.dim >= static_cast<int>(dims.size())) return std::nullopt;
        if (dims[s.dim] == f.dim && f.extent == s.extent && f.coordStride == s.coordStride) {
            positions.push_back(static_cast<int>(k));
            ++next;
        }
    }
    if (next != sub.localModes.size()) return std::nullopt;
    return positions;
}

int64_t localStride(const TileLayout &l, size_t k) {
    int64_t s = 1;
    for (size_t i = 0; i < k; ++i) s *= l.localModes[i].extent;
    return s;
}

int64_t threadStride(const TileLayout &l, size_t k) {
    int64_t s = 1;
    for (size_t i = 0; i < k; ++i) s *= l.threadModes[i].extent;
    return s;
}

Expr threadDigit(const TileLayout &l, size_t k, const Expr &t) {
    int64_t stride = threadStride(l, k), extent = l.threadModes[k].extent;
    Expr e = stride == 1 ? t : div(t, intImm(stride));
    // The last digit needs no remainder: t < threads = stride * extent.
    if (stride * extent < l.threads) e = mod(e, intImm(extent));
    return e;
}

} // namespace tilet::ir
