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
    ir::Expr mutateLoad(const ir::Expr &self, const ir::Load &n) override {
        ir::Expr base = ir::Mutator::mutateLoad(self, n);
        const ir::Load &l = *ir::as<ir::Load>(base);
        if (!needsFlat(*l.buffer, l.indices)) return base;
        return std::make_shared<ir::Load>(l.buffer, flat(*l.buffer, l.indices), l.span);
    }
    ir::Stmt mutateStore(const ir::Stmt &self, const ir::Store &n) override {
        ir::Stmt base = ir::Mutator::mutateStore(self, n);
        const ir::Store &s = *ir::as<ir::Store>(base);
        if (!needsFlat(*s.buffer, s.indices)) return base;
        return std::make_shared<ir::Store>(s.buffer, flat(*s.buffer, s.indices), s.value, s.op, s.span);
    }
    ir::Stmt mutateVectorCopy(const ir::Stmt &self, const ir::VectorCopy &n) override {
        ir::Stmt base = ir::Mutator::mutateVectorCopy(self, n);
        const ir::VectorCopy &v = *ir::as<ir::VectorCopy>(base);
        return std::make_shared<ir::VectorCopy>(v.dst, flat(*v.dst, v.dstIndices), v.src, flat(*v.src, v.srcIndices), v.bytes, v.span, v.async,
                                                v.srcValid);
    }
    ir::Stmt mutateTmaLoad(const ir::Stmt &self, const ir::TmaLoad &n) override {
        ir::Stmt base = ir::Mutator::mutateTmaLoad(self, n);
        const ir::TmaLoad &t = *ir::as<ir::TmaLoad>(base);
        return std::make_shared<ir::TmaLoad>(t.desc, t.dst, flat(*t.dst, t.dstIndices), t.coords, t.barrier, t.barrierIndex, t.multicastMask, t.span);
    }
    ir::Stmt mutateTmaStore(const ir::Stmt &self, const ir::TmaStore &n) override {
        ir::Stmt base = ir::Mutator::mutateTmaStore(self, n);
        const ir::TmaStore &t = *ir::as<ir::TmaStore>(base);
        return std::make_shared<ir::TmaStore>(t.desc, t.src, flat(*t.src, t.srcIndices), t.coords, t.span);
    }
    ir::Stmt mutateBulkCopy(const ir::Stmt &self, const ir::BulkCopy &n) override {
        ir::Stmt base = ir::Mutator::mutateBulkCopy(self, n);
        const ir::BulkCopy &b = *ir::as<ir::BulkCopy>(base);
        return std::make_shared<ir::BulkCopy>(b.dst, flat(*b.dst, b.dstIndices), b.src, flat(*b.src, b.srcIndices), b.bytes, b.barrier, b.barrierIndex,
                                              b.span);
    }
    ir::Stmt mutateWgmma(const ir::Stmt &self, const ir::Wgmma &n) override {
        ir::Stmt base = ir::Mutator::mutateWgmma(self, n);
        const ir::Wgmma &w = *ir::as<ir::Wgmma>(base);
        ir::WgmmaOperand a = w.a, b = w.b;
        a.indices = flat(*a.buffer, a.indices);
        b.indices = flat(*b.buffer, b.indices);
        return std::make_shared<ir::Wgmma>(w.m, w.n, w.k, w.d, w.dOffset, a, b, w.scaleD, w.span);
    }
    ir::Stmt mutateLdMatrix(const ir::Stmt &self, const ir::LdMatrix &n) override {
        ir::Stmt base = ir::Mutator::mutateLdMatrix(self, n);
        const ir::LdMatrix &l = *ir::as<ir::LdMatrix>(base);
        return std::make_shared<ir::LdMatrix>(l.dst, l.dstOffset, l.src, flat(*l.src, l.srcIndices), l.count, l.trans, l.span);
    }
};

} // namespace

ir::Kernel flattenBuffers(const ir::Kernel &kernel, PassContext &) {
    ir::Kernel out = kernel;
    out.body = Flattener().mutate(kernel.body);
    return out;
}

} // namespace tilet
