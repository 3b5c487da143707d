// CopyFacts.cpp -- see CopyFacts.h.
#include "passes/CopyFacts.h"

#include "ir/Analysis.h"

#include <algorithm>

namespace tilet {

std::string bytesOf(int64_t elements, DType t) {
    int64_t bits = elements * dtypeBits(t);
    if (bits % 8) return std::to_string(bits) + " bits";
    return std::to_string(bits / 8) + " bytes";
}

bool isGlobalToShared(const ir::Copy &c) { return c.src.buffer->scope == ir::MemScope::Global && c.dst.buffer->scope == ir::MemScope::Shared; }
bool isSharedToGlobal(const ir::Copy &c) { return c.src.buffer->scope == ir::MemScope::Shared && c.dst.buffer->scope == ir::MemScope::Global; }

std::string copyDirection(const ir::Copy &c) {
    return std::string(ir::memScopeName(c.src.buffer->scope)) + "->" + ir::memScopeName(c.dst.buffer->scope);
}

// CheckBulkLoad / CheckBulkStore: descriptor-based TMA.
Option tmaTensorCopy(const ir::Copy &c, bool load, bool checkLastDim, const Target &t) {
    if (!t.has(Feature::Tma)) return Option::no(lacks(t, Feature::Tma));
    if (load ? !isGlobalToShared(c) : !isSharedToGlobal(c))
        return Option::no(std::string("descriptor TMA ") + (load ? "loads move global to shared memory" : "stores move shared to global memory") +
                          ", this copy is " + copyDirection(c));
    const ir::Region &global = load ? c.src : c.dst;
    if (c.src.buffer->dtype != c.dst.buffer->dtype)
        return Option::no("TMA copies bytes and cannot convert " + std::string(dtypeName(c.src.buffer->dtype)) + " to " +
                          std::string(dtypeName(c.dst.buffer->dtype)));
    DType dt = global.buffer->dtype;
    if (checkLastDim) {
        int64_t last = global.extents.back();
        if ((last * dtypeBits(dt)) % 128 != 0)
            return Option::no("the last dimension moves " + std::to_string(last) + " " + std::string(dtypeName(dt)) + " elements = " +
                              bytesOf(last, dt) + ", not a multiple of 16 bytes");
    }
    // Global strides: innermost 1 element (dense tensors); outer strides
    // whole multiples of 16 bytes and below 2^40. Dynamic strides cannot be
    // disproven here and are validated by the host before encoding.
    const auto &shape = global.buffer->shape;
    int64_t stride = 1;
    bool known = true;
    for (int d = global.buffer->rank() - 1; d > 0; --d) {
        std::optional<int64_t> dim = ir::constInt(shape[d]);
        if (!dim) { known = false; break; }
        stride *= *dim;
        int64_t bits = stride * dtypeBits(dt);
        if (bits % 128 != 0)
            return Option::no("the stride of dimension " + std::to_string(d - 1) + " of '" + global.buffer->name + "' is " +
                              bytesOf(stride, dt) + ", not a multiple of 16 bytes");
        if (bits / 8 >= (int64_t(1) << 40)) return Option::no("a global stride of '" + global.buffer->name + "' reaches 2^40 bytes");
    }
    (void)known;
    // Boxes: at most 256 elements per dimension, so a wider region takes
    // several (tmaBoxes; a linear tile's count, which a swizzle's segments
    // only change within the 256-element limit of its innermost dimension).
    TmaBoxes boxes = tmaBoxes(global.extents, 0);
    if (boxes.count > kMaxTmaBoxes) {
        std::string shape;
        for (int64_t b : boxes.box) shape += (shape.empty() ? "" : " x ") + std::to_string(b);
        return Option::no("the region takes " + std::to_string(boxes.count) + " boxes of " + shape +
                          " (a TMA box holds at most 256 elements per dimension and lands in shared memory as one contiguous run); at most " +
                          std::to_string(kMaxTmaBoxes) + " per copy");
    }
    return Option::yes();
}

TmaBoxes tmaBoxes(const std::vector<int64_t> &extents, int64_t segment) {
    TmaBoxes out;
    out.box.assign(extents.size(), 1);
    bool whole = true;   // every dimension inside this one is whole in the box
    for (size_t i = extents.size(); i-- > 0;) {
        const int64_t e = extents[i];
        const bool segmented = segment > 0 && i + 1 == extents.size();
        int64_t b = 1;
        if (segmented) {
            b = segment;   // the swizzle's width (the tile's rows are whole segments: lower-tma checks)
        } else if (whole) {
            for (int64_t d = std::min<int64_t>(e, 256); d >= 1; --d)
                if (e % d == 0) {
                    b = d;
                    break;
                }
        }
        out.box[i] = b;
        out.count *= e / b;
        // A swizzle segment is a sub-tile of its own: the dimensions outside
        // it stay whole in its boxes.
        if (b < e && !segmented) whole = false;
    }
    return out;
}

Option tmaIm2col(const ir::Im2Col &g, const Target &t) {
    if (!t.has(Feature::Tma)) return Option::no(lacks(t, Feature::Tma));
    DType dt = g.image->dtype;
    if (dtypeBits(dt) < 8 || dtypeBits(dt) > 32) return Option::no("TMA's im2col mode moves 1-, 2- or 4-byte elements, not " + std::string(dtypeName(dt)));
    const int64_t channels = *ir::constInt(g.image->shape[3]), rows = g.dst.extents[g.dst.extents.size() - 2], cols = g.dst.extents.back();
    if (channels % cols != 0)
        return Option::no("a column tile of " + std::to_string(cols) + " spans several filter taps of the image's " + std::to_string(channels) +
                          " channels; TMA loads one tap's run of channels (C must be a multiple of the tile's columns)");
    if ((cols * dtypeBits(dt)) % 128 != 0 || (channels * dtypeBits(dt)) % 128 != 0)
        return Option::no("a pixel's channels (" + bytesOf(cols, dt) + " of " + bytesOf(channels, dt) + ") are not whole 16-byte units");
    if (cols > 256) return Option::no("a tile of " + std::to_string(cols) + " channels; TMA's im2col mode loads at most 256 per pixel");
    if (rows > 1024) return Option::no("a tile of " + std::to_string(rows) + " pixels; TMA's im2col mode loads at most 1024 per operation");
    // The bounding box of filter-window corners takes corners in [-128, 127]
    // for a 4-D tensor; the traversal stride is at most 8.
    const ir::Im2colBox box = im2colBox(g, cols);
    const int64_t lower = box.lowerW, upper = box.upperW;
    if (lower < -128 || upper < -128 || upper > 127)
        return Option::no("the bounding box of the filter windows (corners " + std::to_string(lower) + " and " + std::to_string(upper) +
                          ") lies outside the [-128, 127] a 4-D im2col tensor map allows");
    if (g.stride > 8) return Option::no("stride " + std::to_string(g.stride) + " is above the traversal stride of 8 TMA allows");
    // A 4-D load's im2col offsets (the filter tap times the dilation) are 8-bit.
    if ((g.kernel - 1) * g.dilation > 255)
        return Option::no("the last filter tap lies " + std::to_string((g.kernel - 1) * g.dilation) + " pixels from the first; a 4-D im2col load's offsets reach 255");
    return Option::yes();
}

// The corners bound the filter windows' top-left positions: [-pad, size - 1 +
// pad - (kernel - 1) dilation] in H and W (CUTLASS's and the CUDA driver
// API's convention; TileLang's upper corner -pad agrees only for "same" padding).
ir::Im2colBox im2colBox(const ir::Im2Col &g, int64_t channelsPerPixel) {
    ir::Im2colBox box;
    box.lowerW = box.lowerH = -g.pad;
    box.upperW = box.upperH = g.pad - (g.kernel - 1) * g.dilation;
    box.stride = g.stride;
    box.channelsPerPixel = channelsPerPixel;
    box.pixelsPerColumn = g.dst.extents[g.dst.extents.size() - 2];   // (a versioned tile has a stage index first)
    return box;
}

} // namespace tilet
