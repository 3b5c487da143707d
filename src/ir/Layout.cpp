#include "ir/Layout.h"

#include "ir/Simplify.h"
#include "support/InternalError.h"

#include <algorithm>
#include <numeric>

namespace tilet::ir {

namespace {

// `vector` elements of the last dimension per step, then threads from the
// last dimension outwards, each dimension taking `threadsFor(d, its extent
// left, the threads left)` of them (its extent left rounded up to a multiple
// of those: the layout's shape grows where it does not divide), then the
// rest as per-thread steps, and threads left over as replicas.
template <typename ThreadsFor>
TileLayout distribute(const std::vector<int64_t> &shape, int64_t threads, int64_t vector, ThreadsFor threadsFor) {
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
    for (int d = rank - 1; d >= 0 && freeThreads > 1; --d) {
        int64_t take = threadsFor(d, remaining[d], freeThreads);
        if (take <= 1) continue;
        l.threadModes.push_back({take, d, stride[d]});
        remaining[d] = (remaining[d] + take - 1) / take;
        stride[d] *= take;
        freeThreads /= take;
        l.shape[d] = stride[d] * remaining[d];
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

} // namespace

TileLayout canonicalLayout(const std::vector<int64_t> &shape, int64_t threads, int64_t vector, const std::vector<int> &wholeDims) {
    // Each dimension takes the threads that divide it: the shape stays exact.
    return distribute(shape, threads, vector, [&](int d, int64_t extent, int64_t freeThreads) -> int64_t {
        if (std::find(wholeDims.begin(), wholeDims.end(), d) != wholeDims.end()) return 1;
        return std::gcd(freeThreads, extent);
    });
}

TileLayout paddedLayout(const std::vector<int64_t> &shape, int64_t threads, int64_t vector) {
    // A dimension at least as long as the free threads takes them all (its
    // steps rounded up); a shorter one the fewest of them that some divisor
    // of their number covers, leaving the rest to outer dimensions.
    return distribute(shape, threads, vector, [](int, int64_t extent, int64_t freeThreads) -> int64_t {
        if (extent == 1 || extent >= freeThreads) return extent == 1 ? 1 : freeThreads;
        int64_t take = extent;
        while (freeThreads % take != 0) ++take;
        return take;
    });
}

TileLayout projectLayout(const TileLayout &loop, const std::vector<int> &dims) {
    std::vector<int64_t> shape;
    for (int d : dims) shape.push_back(loop.shape[d]);
    return withWholeDimensions(loop, dims, shape);   // no whole dimensions: every dims[d] is a loop dimension
}

TileLayout fullyReplicatedLayout(const std::vector<int64_t> &shape, int64_t threads) {
    TileLayout l;
    l.shape = shape;
    l.threads = threads;
    for (int d = static_cast<int>(shape.size()); d-- > 0;) {
        if (shape[d] > 1) l.localModes.push_back({shape[d], d, 1});
    }
    if (threads > 1) l.threadModes.push_back({threads, LayoutMode::kReplicate, 0});
    return l;
}

TileLayout withWholeDimensions(const TileLayout &layout, const std::vector<int> &dims, const std::vector<int64_t> &shape) {
    TileLayout out;
    out.threads = layout.threads;
    out.shape = shape;
    auto newDim = [&](int layoutDim) {
        for (size_t d = 0; d < dims.size(); ++d) {
            if (dims[d] == layoutDim) return static_cast<int>(d);
        }
        return LayoutMode::kReplicate;
    };
    for (const LayoutMode &m : layout.threadModes) {
        int nd = m.dim == LayoutMode::kReplicate ? LayoutMode::kReplicate : newDim(m.dim);
        out.threadModes.push_back(nd == LayoutMode::kReplicate ? LayoutMode{m.extent, LayoutMode::kReplicate, 0}
                                                               : LayoutMode{m.extent, nd, m.coordStride});
    }
    for (const LayoutMode &m : layout.localModes) {
        int nd = newDim(m.dim);
        if (nd != LayoutMode::kReplicate) out.localModes.push_back({m.extent, nd, m.coordStride});
    }
    for (int d = static_cast<int>(dims.size()); d-- > 0;) {
        if (dims[d] < 0 && shape[d] > 1) out.localModes.push_back({shape[d], d, 1});
    }
    return out;
}

bool sameDistribution(const TileLayout &a, const TileLayout &b) {
    if (a == b) return true;
    if (a.shape != b.shape || a.threads != b.threads) return false;
    // Unit modes dropped, and a mode that continues the one before it on
    // the same dimension merged into it (2@d0 then 4@d0*2 is 8@d0: a
    // reshaped layout splits modes that another may keep whole).
    auto nonUnit = [](const std::vector<LayoutMode> &ms) {
        std::vector<LayoutMode> out;
        for (const LayoutMode &m : ms) {
            if (m.extent <= 1) continue;
            if (!out.empty() && out.back().dim == m.dim && m.dim != LayoutMode::kReplicate &&
                m.coordStride == out.back().coordStride * out.back().extent) {
                out.back().extent *= m.extent;
                continue;
            }
            out.push_back(m);
        }
        return out;
    };
    std::vector<LayoutMode> la = nonUnit(a.localModes), lb = nonUnit(b.localModes);
    if (la.size() != lb.size()) return false;
    for (size_t k = 0; k < la.size(); ++k) {
        if (la[k].extent != lb[k].extent || la[k].dim != lb[k].dim || la[k].coordStride != lb[k].coordStride) return false;
    }
    for (int64_t t = 0; t < a.threads; ++t) {
        if (elementAt(a, t, 0) != elementAt(b, t, 0)) return false;
    }
    return true;
}

std::optional<TileLayout> loopLayoutFrom(const TileLayout &held, const std::vector<int> &dims, const std::vector<int64_t> &factors,
                                         const std::vector<int64_t> &windows) {
    auto factor = [&](int v) { return factors.empty() ? int64_t(1) : factors[static_cast<size_t>(v)]; };
    auto window = [&](int v) { return windows.empty() ? int64_t(0) : windows[static_cast<size_t>(v)]; };
    TileLayout out;
    out.threads = held.threads;
    out.shape.assign(dims.size(), 1);
    for (size_t v = 0; v < dims.size(); ++v)
        out.shape[v] = window(static_cast<int>(v)) > 0 ? window(static_cast<int>(v)) : held.shape[dims[v]] * factor(static_cast<int>(v));
    // The c iterations of one element: the fastest local digits.
    for (size_t v = 0; v < dims.size(); ++v) {
        if (factor(static_cast<int>(v)) > 1) out.localModes.push_back({factor(static_cast<int>(v)), static_cast<int>(v), 1});
    }
    auto loopDim = [&](int heldDim) {
        for (size_t v = 0; v < dims.size(); ++v) {
            if (dims[v] == heldDim) return static_cast<int>(v);
        }
        return -1;
    };
    // Where a mode lies against its dimension's window: inside it, above it
    // (the window's place), or across its edge.
    enum class Side { Inside, Above, Across };
    auto side = [&](const LayoutMode &m, int v) {
        int64_t e = window(v);
        if (e == 0 || m.coordStride * m.extent <= e) return Side::Inside;
        return m.coordStride % e == 0 ? Side::Above : Side::Across;
    };
    for (const LayoutMode &m : held.threadModes) {
        if (m.dim == LayoutMode::kReplicate) {
            out.threadModes.push_back(m);
            continue;
        }
        int v = loopDim(m.dim);
        if (v < 0 || side(m, v) != Side::Inside) return std::nullopt;
        out.threadModes.push_back({m.extent, v, m.coordStride * factor(v)});
    }
    for (const LayoutMode &m : held.localModes) {
        int v = loopDim(m.dim);
        if (v < 0) continue;
        Side s = side(m, v);
        if (s == Side::Across) return std::nullopt;
        if (s == Side::Inside) out.localModes.push_back({m.extent, v, m.coordStride * factor(v)});
    }
    // The modes inside a window must cover it.
    for (size_t v = 0; v < dims.size(); ++v) {
        if (window(static_cast<int>(v)) == 0) continue;
        int64_t covered = 1;
        for (const std::vector<LayoutMode> *modes : {&out.threadModes, &out.localModes})
            for (const LayoutMode &m : *modes)
                if (m.dim == static_cast<int>(v)) covered *= m.extent;
        if (covered != out.shape[v]) return std::nullopt;
    }
    return out;
}

std::optional<TileLayout> pairedLayout(const TileLayout &held) {
    if (held.shape.empty()) return std::nullopt;
    const int last = static_cast<int>(held.shape.size()) - 1;
    TileLayout out = held;
    out.shape.back() /= 2;
    bool paired = false;
    for (std::vector<LayoutMode> *modes : {&out.threadModes, &out.localModes}) {
        for (LayoutMode &m : *modes) {
            if (m.dim != last) continue;
            if (m.coordStride == 1) {
                // The unit step: its even digit is the pair's first element.
                if (modes == &out.threadModes || m.extent % 2 != 0) return std::nullopt;
                m.extent /= 2;
                paired = true;
            } else if (m.coordStride % 2 != 0) {
                return std::nullopt;
            } else {
                m.coordStride /= 2;
            }
        }
    }
    if (!paired) return std::nullopt;
    // A mode left with one value steps nothing.
    out.localModes.erase(std::remove_if(out.localModes.begin(), out.localModes.end(), [](const LayoutMode &m) { return m.extent == 1; }),
                         out.localModes.end());
    return out;
}

std::optional<TileLayout> reshapeLayout(const TileLayout &layout, const std::vector<int64_t> &shape) {
    auto rowStrides = [](const std::vector<int64_t> &dims) {
        std::vector<int64_t> strides(dims.size(), 1);
        for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
        return strides;
    };
    int64_t before = 1, after = 1;
    for (int64_t d : layout.shape) before *= d;
    for (int64_t d : shape) after *= d;
    if (before != after) return std::nullopt;
    const std::vector<int64_t> from = rowStrides(layout.shape), to = rowStrides(shape);
    // A mode's digits step the flat index by `step`: in the new shape, the
    // dimension whose row stride divides it with the step inside its extent.
    auto remap = [&](const LayoutMode &m, std::vector<LayoutMode> &out) {
        if (m.dim == LayoutMode::kReplicate) {
            out.push_back(m);
            return true;
        }
        int64_t step = m.coordStride * from[static_cast<size_t>(m.dim)], extent = m.extent;
        while (extent > 1) {
            int dim = -1;
            for (size_t d = shape.size(); d-- > 0;) {
                if (step < to[d] * shape[d]) {
                    dim = static_cast<int>(d);
                    break;
                }
            }
            if (dim < 0 || step % to[static_cast<size_t>(dim)] != 0) return false;
            const int64_t stride = step / to[static_cast<size_t>(dim)], size = shape[static_cast<size_t>(dim)];
            if (stride * extent <= size) {
                out.push_back({extent, dim, stride});
                break;
            }
            // The mode crosses into the next dimension out: its low digits
            // here, the rest a mode of their own.
            if (size % stride != 0 || extent % (size / stride) != 0) return false;
            const int64_t low = size / stride;
            out.push_back({low, dim, stride});
            extent /= low;
            step *= low;
        }
        return true;
    };
    TileLayout out;
    out.shape = shape;
    out.threads = layout.threads;
    for (const LayoutMode &m : layout.threadModes) {
        if (!remap(m, out.threadModes)) return std::nullopt;
    }
    for (const LayoutMode &m : layout.localModes) {
        if (!remap(m, out.localModes)) return std::nullopt;
    }
    return out;
}

std::vector<int64_t> elementAt(const TileLayout &l, int64_t thread, int64_t local) {
    std::vector<int64_t> coords;
    elementAt(l, thread, local, coords);
    return coords;
}

void elementAt(const TileLayout &l, int64_t thread, int64_t local, std::vector<int64_t> &coords) {
    coords.assign(l.shape.size(), 0);
    for (const LayoutMode &m : l.threadModes) {
        int64_t digit = thread % m.extent;
        thread /= m.extent;
        if (m.dim != LayoutMode::kReplicate) coords[m.dim] += digit * m.coordStride;
    }
    for (const LayoutMode &m : l.localModes) {
        coords[m.dim] += (local % m.extent) * m.coordStride;
        local /= m.extent;
    }
}

std::vector<Expr> elementAt(const TileLayout &l, const Expr &thread, const Expr &local) {
    std::vector<Expr> coords(l.shape.size(), intImm(0));
    for (size_t k = 0; k < l.threadModes.size(); ++k) {
        const LayoutMode &m = l.threadModes[k];
        if (m.dim != LayoutMode::kReplicate) coords[m.dim] = add(coords[m.dim], mul(threadDigit(l, k, thread), intImm(m.coordStride)));
    }
    for (size_t k = 0; k < l.localModes.size(); ++k) {
        const LayoutMode &m = l.localModes[k];
        Expr digit = mod(div(local, intImm(localStride(l, k))), intImm(m.extent));
        coords[m.dim] = add(coords[m.dim], mul(digit, intImm(m.coordStride)));
    }
    for (Expr &c : coords) c = simplify(c);
    return coords;
}

bool holds(const TileLayout &l, int64_t thread, const std::vector<std::optional<int64_t>> &coords) {
    for (const LayoutMode &m : l.threadModes) {
        int64_t digit = thread % m.extent;
        thread /= m.extent;
        if (m.dim == LayoutMode::kReplicate) continue;
        if (!coords[m.dim]) return false;
        if ((*coords[m.dim] / m.coordStride) % m.extent != digit) return false;
    }
    return true;
}

Expr localIndexOf(const TileLayout &l, const std::vector<Expr> &coords) {
    Expr index = intImm(0);
    for (size_t k = 0; k < l.localModes.size(); ++k) {
        const LayoutMode &m = l.localModes[k];
        Expr digit = m.coordStride == 1 ? coords[m.dim] : div(coords[m.dim], intImm(m.coordStride));
        if (m.extent * m.coordStride < l.shape[m.dim]) digit = mod(digit, intImm(m.extent));
        index = add(index, mul(digit, intImm(localStride(l, k))));
    }
    return index;
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

int64_t swizzleBytes(SharedSwizzle s) {
    switch (s) {
    case SharedSwizzle::None: return 0;
    case SharedSwizzle::B32: return 32;
    case SharedSwizzle::B64: return 64;
    case SharedSwizzle::B128: return 128;
    }
    return 0;
}

Expr bufferOffset(const BufferNode &b, const std::vector<Expr> &indices, DType t) {
    if (indices.empty()) return intImm(0, t);
    Expr row = cast(t, indices[0]);
    for (size_t d = 1; d + 1 < indices.size(); ++d) row = add(mul(row, cast(t, b.shape[d])), cast(t, indices[d]));
    if (indices.size() == 1) return row;
    Expr col = cast(t, indices.back());
    int64_t segmentBytes = swizzleBytes(b.swizzle);
    if (b.scope != MemScope::Shared || segmentBytes == 0) return add(mul(row, cast(t, b.shape.back())), col);

    int64_t elementBytes = dtypeBits(b.dtype) / 8;
    TILET_ASSERT(elementBytes > 0, "swizzled access of packed '" << b.name << "' other than through its bytes");
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < b.shape.size(); ++d) rows *= *constInt(b.shape[d]);
    int64_t segment = segmentBytes / elementBytes;   // elements of a row in one segment
    int64_t chunk = 16 / elementBytes;               // elements of a 16-byte chunk
    int64_t rowsPer128 = 128 / segmentBytes;         // rows of one 128-byte line
    int64_t chunkMask = segmentBytes / 16 - 1;
    Expr line = rowsPer128 == 1 ? row : div(row, intImm(rowsPer128, t));
    Expr swizzle = mul(binary(BinaryOp::BitAnd, line, intImm(chunkMask, t)), intImm(chunk, t));
    Expr inRow = binary(BinaryOp::BitXor, mod(col, intImm(segment, t)), swizzle);
    Expr block = mul(div(col, intImm(segment, t)), intImm(rows * segment, t));
    return add(add(block, mul(row, intImm(segment, t))), inRow);
}

} // namespace tilet::ir
