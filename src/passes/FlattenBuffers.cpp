#include "passes/FlattenBuffers.h"

#include "ir/Layout.h"
#include "ir/Visitor.h"

namespace tilet {

namespace {

bool needs64Bit(const ir::BufferNode &b) {
    std::optional<int64_t> n = b.constElements();
    return !n || *n > INT32_MAX;
}

class Flattener : public ir::Mutator {
public:
    using ir::Mutator::mutate;

    static bool needsFlat(const ir::BufferNode &b, const std::vector<ir::Expr> &indices) {
        return indices.size() > 1 || (b.scope == ir::MemScope::Shared && b.swizzle != ir::SharedSwizzle::None);
    }
    static std::vector<ir::Expr> flat(const ir::BufferNode &b, const std::vector<ir::Expr> &indices) {
        if (!needsFlat(b, indices)) return indices;
        return {ir::bufferOffset(b, indices, needs64Bit(b) ? DType::Int64 : DType::Int32)};
    }

protected:
    // Every indexed access: one flat (or swizzled) offset.
    std::vector<ir::Expr> mutateIndices(const ir::BufferNode &b, const std::vector<ir::Expr> &indices, bool &changed) override {
        std::vector<ir::Expr> mutated = ir::Mutator::mutateIndices(b, indices, changed);
        if (!needsFlat(b, mutated)) return mutated;
        changed = true;
        return flat(b, mutated);
    }
};

} // namespace

ir::Kernel flattenBuffers(const ir::Kernel &kernel, PassContext &) {
    ir::Kernel out = kernel;
    out.body = Flattener().mutate(kernel.body);
    return out;
}

} // namespace tilet
