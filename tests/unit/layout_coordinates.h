// layout_coordinates.h -- a TileLayout evaluated directly from its definition
// (IR.h), independently of the passes' code, for the layout tests.
#pragma once

#include "ir/IR.h"

#include <vector>

namespace tilet::test {

// The coordinate thread `t` holds at local index `local`.
inline std::vector<int64_t> coordinate(const ir::TileLayout &l, int64_t t, int64_t local) {
    std::vector<int64_t> c(l.shape.size(), 0);
    int64_t stride = 1;
    for (const ir::LayoutMode &m : l.threadModes) {
        int64_t digit = (t / stride) % m.extent;
        if (m.dim != ir::LayoutMode::kReplicate) c[m.dim] += digit * m.coordStride;
        stride *= m.extent;
    }
    stride = 1;
    for (const ir::LayoutMode &m : l.localModes) {
        c[m.dim] += ((local / stride) % m.extent) * m.coordStride;
        stride *= m.extent;
    }
    return c;
}

} // namespace tilet::test
