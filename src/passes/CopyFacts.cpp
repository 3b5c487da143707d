// CopyFacts.cpp -- see CopyFacts.h.
#include "passes/CopyFacts.h"

#include "ir/Analysis.h"
#include "ir/Layout.h"

#include <algorithm>

#include <numeric>

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
Option tmaStages(const ir::BufferNode &tile, int64_t stages) {
    if (stages < 2) return Option::yes();
    // A swizzled tile's boxes start on its 8-row swizzle atom (tmaBoxes).
    const int64_t align = tile.swizzle != ir::SharedSwizzle::None ? 8 * ir::swizzleBytes(tile.swizzle) : 128;
    std::optional<int64_t> elements = tile.constElements();
    if (!elements)
        return Option::no("the stages of '" + tile.name + "' have a size known only at run time, and TMA needs them on " + std::to_string(align) +
                          "-byte boundaries");
    const int64_t bytes = *elements * dtypeBits(tile.dtype) / 8;
    if (bytes % align != 0)
        return Option::no("the stages of '" + tile.name + "' would not start on " + std::to_string(align) +
                          "-byte boundaries, where TMA reads and writes: each takes " + std::to_string(bytes) + " bytes");
    return Option::yes();
}

Option tmaTensorCopy(const ir::Copy &c, bool load, bool descriptor, const Target &t) {
    if (!t.has(Feature::Tma)) return Option::no(lacks(t, Feature::Tma));
    if (load ? !isGlobalToShared(c) : !isSharedToGlobal(c))
        return Option::no(std::string("descriptor TMA ") + (load ? "loads move global to shared memory" : "stores move shared to global memory") +
                          ", this copy is " + copyDirection(c));
    const ir::Region &global = load ? c.src : c.dst;
    // TMA's one conversion: packed 4- or 6-bit elements into the 8-bit slots
    // of unpacked tiles (CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B / 16U6_ALIGN16B,
    // loads only; the rows of the tensor a multiple of 128 elements, which also
    // makes its strides multiples of 32 bytes).
    const bool unpacks = isUnpacked(c.dst.buffer->dtype);
    if (unpacks || isUnpacked(c.src.buffer->dtype)) {
        const DType slots = unpacks ? c.dst.buffer->dtype : c.src.buffer->dtype;
        const std::string mapType = ir::unpackingTensorMapType(slots), packed(dtypeName(valueType(slots)));
        if (!load || c.src.buffer->dtype != valueType(slots))
            return Option::no("TMA writes " + std::string(dtypeName(slots)) + " tiles from packed " + packed + " in global memory only (" + mapType + ")");
        std::optional<int64_t> row = ir::constInt(global.buffer->shape.back());
        if (row && *row % 128 != 0)
            return Option::no("'" + global.buffer->name + "' has rows of " + std::to_string(*row) + " " + packed +
                              " elements; TMA unpacks rows of a multiple of 128 (" + mapType + ")");
    } else if (c.src.buffer->dtype != c.dst.buffer->dtype)
        return Option::no("TMA copies bytes and cannot convert " + std::string(dtypeName(c.src.buffer->dtype)) + " to " +
                          std::string(dtypeName(c.dst.buffer->dtype)));
    DType dt = global.buffer->dtype;
    if (descriptor) {
        int64_t last = global.extents.back();
        if ((last * dtypeBits(dt)) % 128 != 0)
            return Option::no("the last dimension moves " + std::to_string(last) + " " + std::string(dtypeName(dt)) + " elements = " +
                              bytesOf(last, dt) + ", not a multiple of 16 bytes");
    }
    // Global strides: innermost 1 element (dense tensors); outer strides
    // whole multiples of 16 bytes and below 2^40 (PTX ISA, tensor maps).
    // A dynamic dimension counts with its promise (`dyn m % 4`): a stride
    // not known to be a multiple of 16 bytes would fail the encode at launch.
    const auto &shape = global.buffer->shape;
    // `stride`: the constant factors (saturated past 2^40, where a stride of
    // them alone is refused); `strideDivisor`: what the stride is known a
    // multiple of, modulo 128 (all the 16-byte test needs).
    const int64_t kLimit = int64_t(1) << 40;
    int64_t stride = 1, strideDivisor = 1;
    std::string dynamicFactors;
    for (int d = global.buffer->rank() - 1; d > 0; --d) {
        std::optional<int64_t> dim = ir::constInt(shape[d]);
        if (dim) {
            stride = stride > kLimit / std::max<int64_t>(1, *dim) ? kLimit : stride * *dim;
            strideDivisor = strideDivisor * (*dim % 128) % 128;
        } else {
            const ir::Var *v = ir::as<ir::Var>(shape[d]);
            dynamicFactors += (dynamicFactors.empty() ? "" : " x ") + (v ? v->name : std::string("a dynamic extent"));
            strideDivisor = strideDivisor * (std::max<int64_t>(1, ir::knownDivisor(shape[d])) % 128) % 128;
        }
        int64_t bits = (strideDivisor == 0 ? 128 : strideDivisor) * dtypeBits(dt);
        if (!dynamicFactors.empty() && bits % 128 != 0) {
            // The multiple a lone dynamic factor must be promised to be.
            int64_t need = 128 / std::gcd<int64_t>(128, stride % 128 * dtypeBits(dt));
            bool lone = dynamicFactors.find(" x ") == std::string::npos;
            return Option::no("the stride of dimension " + std::to_string(d - 1) + " of '" + global.buffer->name + "' is " +
                              (stride == 1 ? "" : std::to_string(stride) + " x ") + dynamicFactors + " elements of " + bytesOf(1, dt) +
                              ", not known to be a multiple of 16 bytes" +
                              (lone ? " (promise it with `dyn " + dynamicFactors + " % " + std::to_string(need) + "`)" : ""));
        }
        if (dynamicFactors.empty() && bits % 128 != 0)
            return Option::no("the stride of dimension " + std::to_string(d - 1) + " of '" + global.buffer->name + "' is " +
                              bytesOf(stride, dt) + ", not a multiple of 16 bytes");
        if (dynamicFactors.empty() && (stride >= kLimit || stride * dtypeBits(dt) / 8 >= kLimit))
            return Option::no("a global stride of '" + global.buffer->name + "' reaches 2^40 bytes");
    }
    // The boxes (the 1-D bulk form has none: one contiguous run, checked by its selection).
    if (descriptor) {
        TmaBoxes boxes = tmaBoxes(global, load ? c.dst : c.src, (load ? c.dst : c.src).buffer->swizzle);
        if (!boxes.reason.empty()) return Option::no(boxes.reason);
        if (unpacks && boxes.box.back() != 128)
            return Option::no("TMA unpacks " + std::string(dtypeName(c.src.buffer->dtype)) + " in boxes of exactly 128 elements along a row (" +
                              ir::unpackingTensorMapType(c.dst.buffer->dtype) + "); the region's rows of " + std::to_string(global.extents.back()) +
                              " elements in '" + c.dst.buffer->name + "' do not split so");
    }
    return Option::yes();
}

TmaBoxes tmaBoxes(const ir::Region &global, const ir::Region &shared, ir::SharedSwizzle swizzle) {
    TmaBoxes out;
    const size_t rank = global.extents.size(), sharedRank = shared.extents.size();
    out.box.assign(rank, 1);
    out.sharedDim.assign(rank, -1);
    auto no = [&](std::string why) {
        out.reason = std::move(why);
        return out;
    };
    // The region's dimensions of more than one element correspond in order.
    std::vector<int64_t> globalOf(sharedRank, -1);
    {
        size_t next = 0;
        for (size_t d = 0; d < rank; ++d) {
            if (global.extents[d] == 1) continue;
            while (next < sharedRank && shared.extents[next] == 1) ++next;
            if (next == sharedRank || shared.extents[next] != global.extents[d]) return no("the global and shared regions differ in shape");
            out.sharedDim[d] = static_cast<int64_t>(next);
            globalOf[next++] = static_cast<int64_t>(d);
        }
    }
    std::vector<int64_t> dims(sharedRank);
    for (size_t d = 0; d < sharedRank; ++d) {
        std::optional<int64_t> n = ir::constInt(shared.buffer->shape[d]);
        if (!n) return no("'" + shared.buffer->name + "' has a dimension of run-time size");
        dims[d] = *n;
    }
    // The box's geometry is the shared tile's: an unpacked element takes an
    // 8-bit slot there, and TMA unpacks 128 elements per box row.
    const int64_t bits = dtypeBits(shared.buffer->dtype), swizzleBits = 8 * ir::swizzleBytes(swizzle);
    const int64_t widestInner = isUnpacked(shared.buffer->dtype) ? 128 : 256;
    const int64_t segment = swizzleBits ? swizzleBits / bits : 0;   // elements per swizzle segment
    // A box's shared address must be aligned to this many bits.
    const int64_t alignBits = swizzleBits ? 8 * swizzleBits : 1024;
    // The step in bits from one element of a dimension to the next. A
    // swizzled tile is stored as segments one swizzle wide (ir::bufferOffset):
    // its leading dimensions are rows, each row of a segment one swizzle
    // width, and the segments follow each other, all rows each.
    if (swizzleBits && sharedRank < 2) return no("'" + shared.buffer->name + "' is swizzled but has no rows");
    std::vector<int64_t> stride(sharedRank);
    for (size_t i = sharedRank; i-- > 0;) {
        if (i + 1 == sharedRank) stride[i] = bits;
        else if (i + 2 == sharedRank) stride[i] = swizzleBits ? swizzleBits : bits * dims[i + 1];
        else stride[i] = stride[i + 1] * dims[i + 1];
    }
    if (swizzleBits) stride[sharedRank - 1] = stride[0] * dims[0];   // a segment: every row of the tile
    // The region's start.
    for (size_t i = 0; i < sharedRank; ++i) {
        int64_t divisor = ir::knownDivisor(shared.mins[i]);
        if (divisor == 0) continue;   // starts at 0
        int64_t steps = divisor;
        if (swizzleBits && i + 1 == sharedRank) {
            if (divisor % segment != 0)
                return no("the region of '" + shared.buffer->name + "' cannot be proven to start on a swizzle segment (" + std::to_string(segment) +
                          " elements)");
            steps = divisor / segment;
        }
        if ((steps * stride[i]) % alignBits != 0)
            return no("the region of '" + shared.buffer->name + "' cannot be proven to start on a " + std::to_string(alignBits / 8) +
                      "-byte boundary of shared memory, where TMA reads and writes");
    }
    bool whole = true;   // the box so far spans whole rows (dimensions) of the buffer
    for (size_t i = sharedRank; i-- > 0;) {
        const int64_t g = globalOf[i];
        if (g < 0) {
            if (dims[i] > 1) whole = false;   // a dimension the copy does not span: the runs outside it are apart
            continue;
        }
        const size_t gu = static_cast<size_t>(g);
        const int64_t e = global.extents[gu];
        const bool segmented = swizzleBits && i + 1 == sharedRank;
        int64_t b = 0;
        if (segmented) {
            if (e % segment != 0) return no("the region of '" + shared.buffer->name + "' is not whole swizzle segments of " + std::to_string(segment) + " elements");
            b = segment;
        } else if (!whole) {
            b = 1;
        } else {
            for (int64_t d = std::min<int64_t>(e, i + 1 == sharedRank ? widestInner : 256); d >= 1 && b == 0; --d) {
                if (e % d != 0) continue;
                if (i + 1 == sharedRank && (d * bits) % 128 != 0) continue;   // the innermost box: whole 16-byte units
                if (d < e && (d * stride[i]) % alignBits != 0) continue;        // each box on an aligned address
                b = d;
            }
            if (b == 0)
                return no("no box of at most 256 elements fits dimension " + std::to_string(g) + " of the region (" + std::to_string(e) +
                          " elements) so that every box starts on a " + std::to_string(alignBits / 8) + "-byte boundary");
        }
        if (e / b > 1 && ((segmented ? 1 : b) * stride[i]) % alignBits != 0)
            return no("the boxes along dimension " + std::to_string(g) + " of the region would not start on " + std::to_string(alignBits / 8) +
                      "-byte boundaries of '" + shared.buffer->name + "'");
        out.box[gu] = b;
        out.count *= e / b;
        if (!segmented && b != dims[i]) whole = false;
    }
    if (out.count > kMaxTmaBoxes) {
        std::string shape;
        for (int64_t b : out.box) shape += (shape.empty() ? "" : " x ") + std::to_string(b);
        return no("the region takes " + std::to_string(out.count) + " boxes of " + shape + " (each a contiguous, aligned run of '" +
                  shared.buffer->name + "', at most 256 elements per dimension); at most " + std::to_string(kMaxTmaBoxes) + " per copy");
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
