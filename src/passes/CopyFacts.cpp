// CopyFacts.cpp -- see CopyFacts.h.
#include "passes/CopyFacts.h"

#include "ir/Analysis.h"

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
    if (!t.tma) return Option::no("TMA needs sm_90 or newer; " + t.name + " has none");
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
    // Box dimensions: at most 256 elements, except the outermost, which is
    // issued as several boxes.
    int firstNonUnit = -1;
    for (size_t d = 0; d < global.extents.size(); ++d) {
        if (global.extents[d] != 1 && firstNonUnit < 0) firstNonUnit = static_cast<int>(d);
    }
    for (size_t d = 0; d < global.extents.size(); ++d) {
        if (static_cast<int>(d) != firstNonUnit && global.extents[d] > 256)
            return Option::no("box dimension " + std::to_string(d) + " is " + std::to_string(global.extents[d]) + " elements; TMA boxes hold at most 256");
    }
    return Option::yes();
}

} // namespace tilet
